/*
 * The scheduling-policy interface. A policy reads a snapshot (time, cluster,
 * jobs) and returns the allocation and plan it wants for each job it changes.
 * Policies read no clock, file or network: time and randomness come in through
 * the snapshot, so the simulator, the daemon and the benchmarks drive exactly
 * the same decisions. A policy is a const struct of methods (like a Linux
 * scheduling class); the registry is a plain array.
 */
#ifndef RUBICK_POLICY_H
#define RUBICK_POLICY_H

#include "rubick/cluster.h"
#include "rubick/job.h"

#include <stdint.h>

struct rk_perf_env; /* cluster constants of the performance model (perf.h) */

struct rk_sched_input {
	int64_t now_ms;                   /* current time */
	const struct rk_cluster *cluster; /* nodes, with up/down and pool */
	struct rk_job *const *jobs;       /* active jobs (pending, running, restarting) */
	int n_jobs;
	const struct rk_perf_env *env;    /* for model-based decisions; may be NULL */
	uint64_t seed;                    /* per-round seed for any randomness */
};

/*
 * What a policy wants for one job. alloc.n == 0 stops the job (preempt back to
 * pending); otherwise the job runs `plan` on `alloc`. Jobs a policy does not
 * mention keep what they have.
 */
struct rk_decision {
	int64_t job_id;
	struct rk_alloc alloc; /* owned by the decision list */
	struct rk_plan plan;
};

struct rk_decisions {
	int n, cap;
	struct rk_decision *v; /* owned */
};

struct rk_policy_ops {
	const char *name;    /* registry key, e.g. "fifo" */
	const char *summary; /* one line for `rubick sim --help` */
	/* Allocate private state; `options` is "key=value,..." or NULL. */
	int (*create)(void **state, const char *options, struct rk_error *err);
	void (*destroy)(void *state);
	/* One scheduling round: append decisions to `out`. */
	int (*schedule)(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			struct rk_error *err);
};

#endif
