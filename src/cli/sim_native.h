/*
 * Trace-native speeds for `rubick sim` and `rubick trace` (issue 14,
 * docs/oracle.md "Trace-native speeds"): --throughputs auto|gavel|tacc|none|FILE
 * loads a Gavel/Shockwave throughput file into the oracle, Gavel-type jobs
 * then run their trace's steps at the file's speeds, and both commands warn
 * about jobs that still run a stand-in model's steps. Kept apart from
 * cmd_sim.c / cmd_trace.c so that each command gains it through a few calls.
 */
#ifndef RUBICK_CLI_SIM_NATIVE_H
#define RUBICK_CLI_SIM_NATIVE_H

#include "rubick/cluster.h"
#include "rubick/job.h"
#include "rubick/oracle.h"
#include "rubick/trace.h"

#include <stdio.h>

/* The help lines of --throughputs. */
extern const char rk_cli_native_help[];

/*
 * If argv[*i] is --throughputs, store its value in *arg (advancing *i) and
 * return 1; 0 when it is another option; RK_EXIT_USAGE after printing
 * "PROG: --throughputs: ..." for a missing value.
 */
int rk_cli_native_arg(const char *prog, const char **arg, int argc, char **argv, int *i);

/*
 * Resolve `arg` (NULL = auto) for trace `t` and add the file to `o`: auto is
 * Shockwave's tacc file for a Gavel-format trace that gives run times (the
 * 12-field Shockwave layout), Gavel's own file for other Gavel traces, and
 * nothing for other formats; gavel / tacc name the bundled copies
 * (data/interference/); none loads nothing. Prints what it loaded on stderr,
 * and warns about GPU types of `cl` (may be NULL) the file lacks.
 * Returns 0 or RK_EXIT_FAILURE after printing the error.
 */
int rk_cli_native_load(const char *prog, const char *arg, const struct rk_trace *t,
                       const struct rk_cluster *cl, struct rk_oracle *o);

/*
 * The file rk_cli_native_load reads for `arg` and `t`, into path (cap bytes):
 * 1, or 0 when it reads none (none, or auto on a trace that is not Gavel's).
 */
int rk_cli_native_path(const char *arg, const struct rk_trace *t, char *path, size_t cap);

/*
 * Gavel-type jobs (rk_oracle_gavel_knows) get their length in the file's
 * steps: the trace's run time over the reference type's time per step when it
 * gives one (Shockwave), else the trace's own steps (Gavel). Sets iters_total
 * (jobs[k].id - 1 indexes `t`, as rk_sim_jobs_from_trace numbers them).
 * Returns how many jobs it set.
 */
int rk_cli_native_apply(const struct rk_trace *t, struct rk_job *jobs, int n,
                        const struct rk_oracle *o);

/*
 * Hand the policies the speeds the jobs run at: each Gavel-type job gets
 * rk_job.native_sps[1..max_gpus], its steps/s on g GPUs of the file's
 * reference type (the oracle's own rule between measured counts), so a
 * model-driven policy can price scaling from the trace's measurements
 * instead of its stand-in model's. OUT: *store (one block the jobs borrow
 * from; free() it after the runs; NULL when no job is Gavel-type). Returns how
 * many jobs got speeds, or RK_ENOMEM (no job changed).
 */
/* Longest table handed out: no policy sizes a job past it (rubick's curves end at 64). */
#define RK_CLI_NATIVE_MAX_GPUS 512
int rk_cli_native_speeds(struct rk_job *jobs, int n, const struct rk_oracle *o, int max_gpus,
                         double **store);

/*
 * Jobs whose length is steps of a model the zoo lacks (mapped, iterations
 * given, no native throughput): one "PROG: warning: ..." line on `f` naming
 * the counts per source model and stand-in. Returns how many.
 */
size_t rk_cli_native_warn(const char *prog, const struct rk_trace *t, const struct rk_oracle *o,
                          FILE *f);

/* Work at the request, split by where its length comes from. */
struct rk_cli_work {
	double gpu_hours;                              /* total */
	double from_duration, from_gavel, from_oracle; /* GPU-hours of each kind */
	size_t n_duration, n_gavel, n_oracle, n_unpriced;
};

/*
 * GPU-hours if every job of `t` ran alone at its request: run times x GPUs;
 * Gavel-type jobs' steps at the file's reference type; other step counts at
 * the oracle's iteration time on the request's consolidated placement in
 * `cl` (jobs[k] as built by rk_sim_jobs_from_trace; NULL = unpriced).
 */
void rk_cli_native_work(const struct rk_trace *t, const struct rk_job *jobs, int n,
                        struct rk_oracle *o, const struct rk_cluster *cl, struct rk_cli_work *w);

/*
 * `rubick trace`'s work figure: build the jobs of `t` (trace file `file`, zoo
 * `zoo`) on cluster `cluster_arg` (NULL = 8x8, the A800 testbed the measured
 * tables come from), price them with the default measured oracle plus
 * --throughputs `throughputs`, warn about stand-in steps, fill `w`. Returns 0
 * or RK_EXIT_FAILURE after printing the error.
 */
struct rk_zoo;
int rk_cli_native_price(const char *prog, const char *file, const char *cluster_arg,
                        const char *throughputs, const struct rk_trace *t, const struct rk_zoo *zoo,
                        struct rk_cli_work *w);

#endif
