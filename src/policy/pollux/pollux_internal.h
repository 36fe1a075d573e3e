/*
 * Internal to the Pollux baseline (src/policy/pollux/pollux*.c): the
 * cluster-wide search of Pollux (Qiao et al., "Pollux: Co-adaptive Cluster
 * Scheduling for Goodput-Optimized Deep Learning", OSDI 2021, §4.2) over
 * allocation matrices, written over an abstract per-job speedup so that it is
 * testable apart from the goodput model.
 *
 * A state is a jobs x nodes matrix of replicas (one GPU each), row-major:
 * state[j * n_nodes + n] = GPUs of node n that job j holds.
 */
#ifndef RUBICK_POLICY_POLLUX_INTERNAL_H
#define RUBICK_POLICY_POLLUX_INTERNAL_H

#include "rubick/error.h"

#include <stdint.h>

/* Pollux's defaults (§4.2; the OSDI'21 artifact's simulator): fairness
 * exponent p = -1, population 100, 100 generations, 60 s rounds. */
#define POLLUX_P_DEFAULT (-1.0)
#define POLLUX_POP_DEFAULT 100
#define POLLUX_GENS_DEFAULT 100
#define POLLUX_ROUND_S_DEFAULT 60.0
/* A job spans at most this many nodes (the artifact's repair). */
#define POLLUX_MAX_NODES_PER_JOB 16
/* Added to every scaled speedup before the power mean, so that a job with
 * nothing (speedup 0) keeps the mean finite for p < 0 (the artifact's 1e-3). */
#define POLLUX_MEAN_EPS 1e-3

/*
 * speedup(ctx, j, nodes, replicas): job j's speedup on `replicas` GPUs spread
 * over `nodes` nodes (1 <= nodes <= replicas), relative to its fair share
 * (§4.2: goodput at the allocation over goodput at an equal share, each at
 * its goodput-optimal batch size and accumulation). >= 0. Called at most once
 * per (j, nodes, replicas) in one search.
 */
typedef double (*pollux_speedup_fn)(void *ctx, int job, int nodes, int replicas);

struct pollux_problem {
	int n_jobs, n_nodes;
	const int *node_gpus;      /* n_nodes: GPUs of each node Pollux may hand out */
	const int *base;           /* n_jobs * n_nodes: the allocation now held */
	const int *min_replicas;   /* n_jobs: fewer GPUs than this means none (0 = any) */
	const int *max_replicas;   /* n_jobs: at most this many GPUs (>= 0) */
	/* n_jobs: the factor on a job's speedup when its row differs from base
	 * (the restart penalty, pollux_restart_factor); 1 = none. */
	const double *restart_factor;
	double p;                  /* fairness exponent of the power mean (§4.2, Eq. 5) */
	/* The artifact scales every speedup by the job's dominant share times the
	 * node count, so that one node's worth reads 1: n_nodes / GPUs for
	 * one-GPU replicas. > 0. */
	double scale;
	pollux_speedup_fn speedup;
	void *ctx;
};

struct pollux_ga_opts {
	int pop;       /* population kept per generation (>= 2) */
	int gens;      /* generations (>= 0) */
	uint64_t seed; /* the run's seed for this round: same seed, same answer */
};

/*
 * Pollux's restart penalty (the OSDI'21 artifact; Sia keeps it, SOSP'23):
 * a job that has restarted `restarts` times in `age_s` seconds, each costing
 * `delay_s`, keeps max(age - restarts * delay, 0) / (age + delay) of its
 * speedup if it is moved again, so a job re-allocated recently is penalised
 * most and a young job cannot be moved for free. In [0, 1).
 */
double pollux_restart_factor(double age_s, int restarts, double delay_s);

/*
 * The fitness of `state` (§4.2, Eq. 5): the power mean with exponent p of the
 * jobs' scaled speedups, each restart-penalised where its row differs from
 * base; p = 0 is the geometric mean. Speedups come from pr->speedup through
 * the memo `memo` (pollux_memo_create), which may be NULL.
 */
struct pollux_memo;
struct pollux_memo *pollux_memo_create(const struct pollux_problem *pr);
void pollux_memo_destroy(struct pollux_memo *m);
double pollux_fitness(const struct pollux_problem *pr, struct pollux_memo *memo, const int *state);

/*
 * Make `state` feasible as the artifact's repair does: at most one job that
 * spans several nodes on each node (the first in job order keeps it), each
 * job within max_replicas and POLLUX_MAX_NODES_PER_JOB nodes (kept from a
 * random order of its nodes, drawn from *rng), every node within its GPUs
 * (jobs earlier in order keep theirs), and a job below min_replicas gets
 * nothing.
 */
void pollux_repair(const struct pollux_problem *pr, int *state, uint64_t *rng);

/* 1 when `state` meets every constraint pollux_repair enforces. */
int pollux_feasible(const struct pollux_problem *pr, const int *state);

/*
 * Pollux's genetic algorithm (§4.2; the artifact runs NSGA-II through pymoo):
 * the initial population is the n_seeds states of `seeds` (each n_jobs *
 * n_nodes; repaired first), every generation breeds `pop` children by binary
 * tournament, single-point crossover over jobs and the artifact's mutation
 * (reset a job to base, zero some of its GPUs, grow it where GPUs are free),
 * repairs them, and keeps the `pop` fittest of parents and children.
 * OUT: best (n_jobs * n_nodes), the fittest state found; *fitness its
 * fitness; final (may be NULL) receives the last population, pop states, and
 * *n_final their number. Returns 0, RK_EINVAL (n_seeds < 1, bad options) or
 * RK_ENOMEM.
 */
int pollux_ga_search(const struct pollux_problem *pr, const struct pollux_ga_opts *opts,
		     const int *seeds, int n_seeds, int *best, double *fitness, int *final,
		     int *n_final, struct rk_error *err);

/*
 * The exact optimum for small instances: every feasible state (pollux_feasible)
 * is enumerated. OUT: best, *fitness; *visited = states scored. Returns 0, or
 * RK_ERANGE when more than max_states would be scored (nothing written).
 */
int pollux_exact_search(const struct pollux_problem *pr, long long max_states, int *best,
			double *fitness, long long *visited, struct rk_error *err);

/* splitmix64 (Steele et al., OOPSLA 2014): the search's seeded generator. */
uint64_t pollux_rand(uint64_t *s);

#endif
