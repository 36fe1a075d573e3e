/*
 * Helpers the `rubick` subcommands share: reading whole files, reading a
 * --cluster argument, and finding and loading the model zoo. Only the CLI and
 * drivers do I/O; these turn files into the text buffers the library parses.
 * Errors come back as RK_E* codes with a message naming the file or flag.
 */
#ifndef RUBICK_CLI_UTIL_H
#define RUBICK_CLI_UTIL_H

#include "rubick/cluster.h"
#include "rubick/error.h"
#include "rubick/zoo.h"

#include <stddef.h>

/* Largest file rk_cli_read_file accepts (bytes): inputs are specs and tables, not data dumps. */
#define RK_CLI_FILE_MAX (256u << 20)

/*
 * Read the whole file at `path`. On success OUT: *text is a NUL-terminated
 * buffer the caller must free() and *len its length (without the NUL).
 * RK_EIO ("PATH: strerror") or RK_ENOMEM; *text untouched on failure.
 */
int rk_cli_read_file(const char *path, char **text, size_t *len, struct rk_error *err);

/*
 * Parse a --cluster argument into `cl`: the file at `arg` when a regular file
 * exists there (messages name the file), else `arg` itself as a spec (messages
 * name "--cluster"). 0, or the RK_E* code of rk_cli_read_file/rk_cluster_parse
 * with `err` filled.
 */
int rk_cli_cluster_read(const char *arg, struct rk_cluster *cl, struct rk_error *err);

/*
 * The zoo directory: `flag_value` (from --zoo DIR) if not NULL, else the
 * environment variable RUBICK_ZOO if set and non-empty, else the compiled-in
 * RK_DEFAULT_DATA_DIR "/zoo". Borrowed string.
 */
const char *rk_cli_zoo_dir(const char *flag_value);

/*
 * Add every DIR/<name>.model to `zoo`, in name order. Each file's `name` key
 * must equal its file stem. Errors name the file ("DIR/x.model:3:9: ...");
 * RK_EIO when the directory cannot be read; RK_ENOTFOUND when it holds no
 * .model file. On failure the models added so far stay in the zoo.
 */
int rk_cli_zoo_load(const char *dir, struct rk_zoo *zoo, struct rk_error *err);

/*
 * The 1-based position of the first empty item of the comma-separated
 * `list` ("a,,b" -> 2, "a," -> 2, ",a" -> 1), or 0 when no item is empty
 * or `list` is "" (no item at all: each option says whether it needs one). Every comma list of the command line takes the same rule: an empty
 * item is an error naming the option and this position, wherever it is.
 */
int rk_cli_list_empty_item(const char *list);

/*
 * 0, or RK_EXIT_USAGE after printing "CMD: FLAG: 'LIST': item N is empty
 * (drop the extra ',')" on stderr when `list` has an empty item.
 */
int rk_cli_list_check(const char *cmd, const char *flag, const char *list);

/*
 * Create `path` and every missing folder above it, as `mkdir -p`. 0, or the
 * errno of the first folder that could not be made (or ENOTDIR when a
 * component is a file); OUT: `failed` (cap bytes) then names that folder.
 */
int rk_cli_mkdirs(const char *path, char *failed, size_t cap);

#endif
