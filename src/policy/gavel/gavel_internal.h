/*
 * Internal to the Gavel baselines (src/policy/gavel/gavel*.c): the
 * allocation LPs over a jobs x GPU-types matrix and the round mechanism
 * that realises an allocation on GPUs (Narayanan et al., OSDI 2020, §3-§4).
 * Matrices are row-major, job j's entry for type t at [j * n_types + t].
 */
#ifndef RUBICK_POLICY_GAVEL_INTERNAL_H
#define RUBICK_POLICY_GAVEL_INTERNAL_H

#include "rubick/error.h"

#include <stdint.h>

#define GAVEL_MAX_TYPES 16
/* Round length (s): Sia's scripts run Gavel with 360 s rounds, Shockwave's with 120 s. */
#define GAVEL_ROUND_S_DEFAULT 360.0
/* Priority of a pair with a positive share that has received no time yet
 * (Gavel multiplies the share by a large constant). */
#define GAVEL_UNSERVED_PRIORITY 1e9
/* Relative tolerance at which the finish-time-fairness bisection stops. */
#define GAVEL_FTF_TOL 1e-3

enum gavel_objective {
	GAVEL_LAS = 0, /* max-min fairness over normalised effective throughput (§4.1) */
	GAVEL_FTF = 1, /* finish-time fairness: minimise the largest rho (§4.1, Themis) */
	GAVEL_TPUT = 2, /* max_sum_throughput_perf: maximise sum_j efftput_j (§4.1) */
	GAVEL_MAKESPAN = 3, /* min_total_duration: minimise max_j R_j / efftput_j (§4.1) */
};

/*
 * The allocation problem of one recomputation. tput[j][t] is job j's
 * throughput (any unit, steps/s or samples/s, the same for all types of one
 * job) on GPU type t; 0 = the job cannot run there (out of memory, or more
 * GPUs than the type has), and such a pair always gets X = 0. scale[j] =
 * GPUs the job runs on (Gavel's scale factor), cap[t] = GPUs of type t.
 * For GAVEL_FTF and GAVEL_MAKESPAN (remaining only): elapsed_s[j] = time since the job arrived, remaining[j] and
 * total[j] = work left and in all, in the unit of tput times seconds.
 */
struct gavel_problem {
	int n_jobs, n_types;
	const double *tput;                          /* n_jobs * n_types */
	const int *scale;                            /* n_jobs */
	const int *cap;                              /* n_types */
	const double *elapsed_s, *remaining, *total; /* n_jobs each, GAVEL_FTF only */
};

/*
 * The throughput of job j under an equal share of the cluster, Gavel's
 * normaliser X^equal: every job gets the same GPU time, min(1, G / (n *
 * scale_j)) of the time where G is the GPUs of the types it can run on,
 * spread over those types in proportion to their GPUs. 0 when the job can
 * run nowhere. OUT: iso[j] for every job.
 */
void gavel_equal_share(const struct gavel_problem *p, double *iso);

/*
 * Solve the allocation LP of `obj` (gavel_lp.c). OUT: x (n_jobs * n_types),
 * rows summing to at most 1, sum_j scale_j x[j][t] <= cap[t], x = 0 where
 * tput = 0; jobs that can run nowhere get a zero row. *lps counts the LPs
 * solved (FTF bisects). Returns 0, RK_EINVAL or RK_ENOMEM / RK_EINTERNAL
 * from the solver.
 */
int gavel_allocate(const struct gavel_problem *p, enum gavel_objective obj, double *x, int *lps,
                   struct rk_error *err);

/*
 * The weighted max-min LP both objectives rest on: maximise z subject to
 * w[j] * sum_t tput[j][t] x[j][t] >= z for every job with w[j] > 0, and the
 * constraints above. OUT: x, *z. Returns 0 or a solver error; a problem with
 * no job that can run leaves x zero and *z = 0.
 */
int gavel_maxmin(const struct gavel_problem *p, const double *w, double *x, double *z,
                 struct rk_error *err);

/*
 * Gavel's max_sum_throughput_perf LP (gavel_lp_sum.c): maximise
 * sum_j sum_t tput[j][t] x[j][t] under the constraints above, in the
 * unit of tput (steps/s, not normalised, as Gavel's ThroughputSumWithPerf).
 * OUT: x. Returns 0 or a solver error.
 */
int gavel_maxsum(const struct gavel_problem *p, double *x, struct rk_error *err);

/*
 * One round of Gavel's mechanism (gavel_round.c): the priority of (j, t) is
 * x[j][t] over the fraction of j's rounds it ran on t (rounds_on[j][t] /
 * rounds[j]; a positive share never served gets GAVEL_UNSERVED_PRIORITY
 * times it), and pairs are taken greedily, highest priority first (ties:
 * lower job index), each job once, while type t has scale[j] GPUs free of
 * free_gpus[t]. Pairs with x = 0 but tput > 0 come last, so that idle GPUs
 * are used. OUT: pick[j] = the type job j runs on this round, or -1.
 * Returns 0 or RK_ENOMEM.
 */
int gavel_round_pick(const struct gavel_problem *p, const double *x, const int *rounds,
                     const int *rounds_on, const int *free_gpus, int *pick);

#endif
