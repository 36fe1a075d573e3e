/*
 * What the daemon subcommands (submit, queue, show, cancel, nodes, policy)
 * share: the common flags --url, --token-file and --json, one request to
 * rubickd with its reply parsed, exit codes from the HTTP status, and error
 * messages taken from the API's JSON error body. Under --json every error is
 * the API's error object on stdout (docs/api.md "Errors") with the same exit
 * code: {"error": {"code", "message", "field", "status", "exit"}}.
 */
#ifndef RUBICK_CLI_DAEMON_CLIENT_H
#define RUBICK_CLI_DAEMON_CLIENT_H

#include <jansson.h>
#include <stddef.h>

struct rk_dc {
	const char *cmd;        /* subcommand name, for messages */
	const char *url_flag;   /* --url, or NULL */
	const char *token_file; /* --token-file, or NULL */
	int json;               /* --json: print the reply, and errors, as JSON */
	int scanned;            /* argv was searched for --json (rk_dc_scan_json) */
};

/*
 * Set dc->json when --json is anywhere in argv, so that an error met before
 * it is read prints as JSON too. rk_dc_arg and rk_dc_job_list call it.
 */
void rk_dc_scan_json(struct rk_dc *dc, int argc, char **argv);

/*
 * An error of dc's subcommand: "rubick CMD: MESSAGE" on stderr, or under
 * --json {"error": {"code": CODE, "message": MESSAGE, "field": FIELD or
 * null, "exit": EXIT}} on stdout. CODE is the API's word (docs/api.md
 * "Errors"): "invalid" for a bad command line, "unavailable" when rubickd
 * cannot be reached, ... Returns `exit`.
 */
int rk_dc_fail(const struct rk_dc *dc, int exit, const char *code, const char *field,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * If argv[*i] is one of the common flags, consume it (and its value) and
 * return 1; return -1 with a message when its value is missing; else 0.
 */
int rk_dc_common_flag(struct rk_dc *dc, int argc, char **argv, int *i);

/* What rk_dc_arg returns besides an exit code. */
enum {
	RK_DC_OWN = -1,  /* argv[*i] is the subcommand's own argument */
	RK_DC_NEXT = -2, /* argv[*i] was a common flag, consumed: go on with the next */
};

/*
 * The arguments every daemon subcommand takes, at argv[*i]: --help or -h
 * (prints `help` on stdout and returns RK_EXIT_OK), a common flag
 * (RK_DC_NEXT, or RK_EXIT_USAGE with a message when its value is missing);
 * anything else is RK_DC_OWN.
 */
int rk_dc_arg(struct rk_dc *dc, int argc, char **argv, int *i, const char *help);

/* The most job ids one command line may name (rk_dc_job_list). */
#define RK_DC_MAX_JOBS 256

/*
 * `rubick CMD JOB... [SWITCH]` (cancel, hold, release, requeue): every
 * argument, the common flags into dc, the job ids into ids (OUT: *n, at
 * least 1). `sw` (NULL for none) is the subcommand's one switch, which sets
 * OUT: *sw_set. Returns RK_DC_OWN when ids holds them; else the exit code
 * after --help (`help` on stdout) or a message (`usage` on stderr when no
 * job is named).
 */
int rk_dc_job_list(struct rk_dc *dc, int argc, char **argv, const char *help, const char *usage,
                   const char *sw, int *sw_set, long long *ids, int *n);

/*
 * Send METHOD /v1/jobs/ID`suffix` with `body` for each of the n jobs, and
 * say "`done` job ID`extra`" for each that succeeded (its reply with
 * --json). Returns RK_EXIT_OK, or the exit code of the first that failed.
 */
int rk_dc_job_each(const struct rk_dc *dc, const long long *ids, int n, const char *method,
                   const char *suffix, const char *body, const char *done, const char *extra);

/*
 * A command line that names no job: `usage` on stderr, or under --json the
 * error object with code "invalid" and field "id". Returns RK_EXIT_USAGE.
 */
int rk_dc_usage(const struct rk_dc *dc, const char *usage);

/*
 * Send METHOD PATH with `body` (NULL for none). On a 2xx reply returns
 * RK_EXIT_OK with OUT: *reply (the parsed JSON; caller json_decref's).
 * Otherwise prints "rubick CMD: MESSAGE" (rk_dc_fail: the daemon's error
 * object under --json) and returns the exit code: 3 when
 * the daemon is unreachable or answers 5xx, 4 for 404, 2 for 401, 1 for
 * other errors.
 */
int rk_dc_request(const struct rk_dc *dc, const char *method, const char *path, const char *body,
                  json_t **reply);

/* GET PATH whose 2xx reply is text (a job log): OUT *text (malloc'd); errors as above. */
int rk_dc_request_text(const struct rk_dc *dc, const char *path, char **text);

/* Print `j` as indented JSON on stdout. */
void rk_dc_print_json(const json_t *j);

/* A job id argument: digits only. Returns 0 and *id, or prints and returns RK_EXIT_USAGE. */
int rk_dc_job_id(const struct rk_dc *dc, const char *arg, long long *id);

/* Whether `value` may go into a query string as is: letters, digits, '-', '_' and '.'. */
int rk_dc_url_safe(const char *value);

/* `flag`'s value `v` as an integer in [lo, hi]: 0 and OUT: *out, or a message and RK_EXIT_USAGE. */
int rk_dc_int_arg(const struct rk_dc *dc, const char *flag, const char *v, long long lo,
                  long long hi, long long *out);

/* Field helpers tolerant of null: "" / 0 when absent. */
const char *rk_dc_str(const json_t *o, const char *key);
double rk_dc_num(const json_t *o, const char *key);

/* A time in ms since the epoch as an ISO-8601 UTC date ("-" when <= 0), in buf. */
const char *rk_dc_date(long long t_ms, char *buf, size_t cap);
/* A duration as [D-]HH:MM:SS, like sacct's Elapsed ("-" when negative), in buf. */
const char *rk_dc_duration(long long ms, char *buf, size_t cap);

#endif
