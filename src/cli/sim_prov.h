/*
 * Provenance of a `rubick sim` report (docs/sim.md "Provenance"): the source
 * the binary was built from, its build type, the sha256 of every input the
 * run read, the UTC time (SOURCE_DATE_EPOCH when set), the host, every
 * repetition's seeds and what the workload seed draws on this trace. Filled
 * by cmd_sim.c, handed to the report writers as part of struct
 * rk_report_meta. Kept apart so that the command gains it through a few calls.
 */
#ifndef RUBICK_CLI_SIM_PROV_H
#define RUBICK_CLI_SIM_PROV_H

#include "rubick/report.h"
#include "rubick/trace.h"

#include <stddef.h>
#include <stdint.h>

#define RK_CLI_PROV_INPUTS 8
#define RK_CLI_PROV_PATH 4096

/* Everything the provenance strings point into; strings owned here. */
struct rk_cli_prov {
	char source[16];      /* "git" or "release" */
	char commit[48];      /* 40 hex digits; "" from a release tarball */
	int dirty;            /* 1 = uncommitted changes to tracked files; -1 = unknown (release) */
	char timestamp[32];   /* 2026-12-02T05:01:02Z */
	char host[256];       /* uname -n */
	struct rk_report_input inputs[RK_CLI_PROV_INPUTS];
	char roles[RK_CLI_PROV_INPUTS][32];
	char paths[RK_CLI_PROV_INPUTS][RK_CLI_PROV_PATH];
	char hex[RK_CLI_PROV_INPUTS][65];
	int n_inputs;
	uint64_t *wseeds, *pseeds; /* one per repetition, owned */
	int n_reps;
	char draws[1024];     /* what the workload seed draws on this trace */
};

/*
 * Fill the source, the clock and the host. The time is SOURCE_DATE_EPOCH's
 * (seconds since 1970, the reproducible-builds convention) when that is set,
 * else now. 0, or RK_EXIT_FAILURE after printing when SOURCE_DATE_EPOCH is
 * not a non-negative integer.
 */
int rk_cli_prov_init(struct rk_cli_prov *p);
void rk_cli_prov_fini(struct rk_cli_prov *p);

/* Room for n repetitions' seeds: 0 or RK_ENOMEM. */
int rk_cli_prov_reps(struct rk_cli_prov *p, int n);

/*
 * Record input `role` at `path`: a regular file's sha256 of its bytes, a
 * folder's the sha256 of its manifest (rk_cli_sha256_dir). 0, or
 * RK_EXIT_FAILURE after printing "rubick sim: ROLE: PATH: why".
 */
int rk_cli_prov_add(struct rk_cli_prov *p, const char *role, const char *path);

/*
 * The folder hash: every name under `dir` that is a regular file after
 * following symbolic links (links to folders are not entered), by its path
 * relative to `dir`, sorted bytewise; the manifest is one line per file,
 * "<sha256 of its bytes in hex>  <relative path>\n" (sha256sum's format),
 * and the hash is the sha256 of the manifest. OUT: hex (65 bytes). 0 or a
 * negative RK_E* code with `err` naming the file.
 */
int rk_cli_sha256_dir(const char *dir, char hex[65], struct rk_error *err);
/* sha256 of a file's bytes. OUT: hex (65 bytes). 0 or RK_EIO with `err`. */
int rk_cli_sha256_file(const char *path, char hex[65], struct rk_error *err);

/* What the workload seed changed in the run (every figure from the run, not the format). */
struct rk_cli_prov_draws {
	const struct rk_trace *trace; /* as parsed and rearranged by --load/--poisson */
	int n_jobs;                   /* jobs replayed */
	const char *poisson;          /* --poisson, NULL = the trace's arrivals */
	double elastic_share;         /* --elastic-share (0 = none) */
	int n_elastic;                /* jobs the share made elastic at the first workload seed */
	uint64_t first_seed;          /* the first repetition's workload seed */
};

/* Write the statement into p->draws: "nothing: ..." when the trace has no seeded part. */
void rk_cli_prov_draws(struct rk_cli_prov *p, const struct rk_cli_prov_draws *d);

/* Point m's provenance fields into p. */
void rk_cli_prov_meta(const struct rk_cli_prov *p, struct rk_report_meta *m);

#endif
