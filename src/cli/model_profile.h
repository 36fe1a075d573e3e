/*
 * `rubick model profile`: run a job's profiling and validation configurations
 * on this machine, as rubickd's local engine launches a run (a plan file, the
 * RUBICK_* environment, a fresh checkpoint folder), and read back the phase
 * times the job library logs to RUBICK_TIMES_FILE (python/rubick_job,
 * docs/job-library.md). docs/perf-model.md, "Profiling your own job".
 */
#ifndef RK_CLI_MODEL_PROFILE_H
#define RK_CLI_MODEL_PROFILE_H

#include "rubick/plan.h"

#include <stddef.h>

#define RK_PROF_ITERS_MAX 1000

/* One configuration to run: a plan on one node with `cpus` CPU threads in all. */
struct rk_prof_run {
	struct rk_plan plan;
	char plan_text[RK_PLAN_TEXT_MAX];
	int procs;    /* dp * tp * pp: one process per "GPU" */
	int cpus;     /* RUBICK_CPUS: threads the run's processes share */
	char dir[512];   /* the run's folder: plan, ckpt/, times, log */
	char log[600];   /* its stdout and stderr */
	/* per logged step, ms; a phase < 0 = not logged ("-") */
	int n;
	double fwd[RK_PROF_ITERS_MAX], sync[RK_PROF_ITERS_MAX], opt[RK_PROF_ITERS_MAX],
	    iter[RK_PROF_ITERS_MAX];
};

struct rk_prof_job {
	const char *cmd;  /* shell command of the job, run by /bin/sh -c */
	int global_batch;
	int iters;        /* RUBICK_ITERS of every run */
	int timeout_s;    /* a run still going after this is killed */
};

/*
 * Run `r` (plan, procs, cpus and dir set; dir is created) once and fill its
 * times. 0, or -1 with `why` (cap bytes) naming the configuration, the problem
 * (exit status, signal, timeout, no times logged) and the run's log path.
 */
int rk_prof_run_exec(const struct rk_prof_job *job, struct rk_prof_run *r, char *why, size_t cap);

/* `rubick model profile` (model_profile.c): the command's exit status. */
int rk_cmd_model_profile(int argc, char **argv);

/* Median of v[from..n-1] (NaN when empty or any value < 0). */
double rk_prof_median(const double *v, int from, int n);

#endif
