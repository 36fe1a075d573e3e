/*
 * `rubick sim` seeds, repetitions and the invocation record (docs/sim.md,
 * "Seeds and repetitions"): the --seeds A-B range, the per-seed figures
 * that become the report's intervals, the metadata of summary.json and the
 * report, and the early check of --out. Kept apart from cmd_sim.c so the
 * command gains them through a few calls.
 */
#ifndef RUBICK_CLI_SIM_SEEDS_H
#define RUBICK_CLI_SIM_SEEDS_H

#include "rubick/report.h"
#include "rubick/sim.h"

#include <stdint.h>

/* Most repetitions one invocation runs (each is a whole run of every policy). */
#define RK_CLI_SEEDS_MAX 1000

/* "A-B" with A < B, at most RK_CLI_SEEDS_MAX seeds. 0, or RK_EXIT_USAGE after printing. */
int rk_cli_seeds_parse(const char *v, uint64_t *first, uint64_t *last);

/*
 * Figures of every policy at every seed: what rk_report_run.seeds points into.
 * With `keep`, also every repetition's per-job outcomes (for jobs.csv under
 * --out): one array per policy and seed, taken over from the run's result
 * rather than copied, so a repetition costs its outcomes (about 0.4 KB a job)
 * while its samples, the bulk of a run, are freed as before.
 */
struct rk_cli_seed_values {
	int n_pols, n_seeds;
	double *v;                   /* [policy][figure, then gpu_hours, reconfigs, gpu_util][seed] */
	uint64_t *seed;              /* [seed]: the --seeds value of each repetition */
	struct rk_job_outcome **outc; /* [policy][seed] when kept; [p][0] borrowed (the run's own) */
	int *n_outc;                 /* [policy][seed] */
	struct rk_report_seeds *per; /* one per policy */
};

/* 0 or RK_ENOMEM; fini is safe on a zeroed struct. */
int rk_cli_seed_values_init(struct rk_cli_seed_values *sv, int n_pols, int n_seeds, int keep);
void rk_cli_seed_values_fini(struct rk_cli_seed_values *sv);
/*
 * Record repetition `rep` (seed `seed`) of policy `pol`. With `keep`, its
 * outcomes are kept: borrowed from `res` for rep 0 (the run's own, freed
 * with it), taken over for later ones (res->outcomes is then NULL).
 */
void rk_cli_seed_values_set(struct rk_cli_seed_values *sv, int pol, int rep, uint64_t seed,
                            const struct rk_sim_summary *s, struct rk_sim_result *res);

#define RK_CLI_META_MAX 72

/* The invocation as report.h's rk_report_meta wants it; strings owned here. */
struct rk_cli_meta {
	char command[8192];
	const char *keys[RK_CLI_META_MAX];
	const char *values[RK_CLI_META_MAX];
	char kstore[RK_CLI_META_MAX][160];
	char store[RK_CLI_META_MAX][1024];
	int n;
};

/* "rubick" and argv[0..argc) shell-quoted (a longer line ends with "..."). */
void rk_cli_meta_command(struct rk_cli_meta *m, int argc, char **argv);
/* Append option `key` = printf(fmt, ...) (both copied); dropped past RK_CLI_META_MAX. */
void rk_cli_meta_add(struct rk_cli_meta *m, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * Create `dir` and its missing parents (rk_cli_mkdirs) and prove it writable
 * by creating and removing a probe file, so a bad --out fails before the run
 * instead of after it. 0, or RK_EXIT_FAILURE after printing the path and the
 * reason.
 */
int rk_cli_out_prepare(const char *dir);

#endif
