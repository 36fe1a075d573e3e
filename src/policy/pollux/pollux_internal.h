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
/* GPU types one search handles (a job's goodput model has as many, job.h). */
#define POLLUX_MAX_TYPES 8

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

/* ---- The default search: water-filling over GPU counts (pollux_greedy.c) ---- */

/* One allocation a job may get: `gpus` GPUs of type `type` on the fewest
 * nodes that hold them (`nodes`), and its value, the scaled speedup with the
 * restart factor applied unless it is the allocation the job holds. */
struct pollux_cand {
	int type;     /* index of the GPU type (0 on one type) */
	int gpus;     /* replicas, >= 1 */
	int nodes;    /* nodes it spans, >= 1 */
	double value; /* >= 0 */
};

/* A job's candidates, sorted by (type, gpus) ascending, at most one per pair. */
struct pollux_gjob {
	const struct pollux_cand *c;
	int n;
};

/*
 * The power mean's term of one job, oriented so that a larger sum is a fitter
 * state (Eq. 5): -(v + eps)^p for p < 0, (v + eps)^p for p > 0, log(max(v,
 * eps)) for p = 0. Increasing in v, so the power mean of a state is a
 * monotone function of the sum of its jobs' terms.
 */
double pollux_term(double p, double value);

/*
 * The policy's default search, near-exact: greedy water-filling of each GPU
 * type's `cap` GPUs by the best gain of the power mean's sum per GPU (a job
 * jumps from its candidate to any larger one of its type, or from nothing to
 * any candidate; lazy gains in a heap), then at most `ls_iters` rounds of a
 * local search that frees one job's GPUs (a smaller candidate or none) for
 * the best jump of another when the sum grows. O((G + ls_iters * K * J) * C)
 * for G GPUs, J jobs, C candidates per job, K = POLLUX_LS_DONORS.
 * OUT: choice[j] = index into jobs[j].c, or -1 for none; *objective (may be
 * NULL) the sum of terms. Returns 0 or RK_ENOMEM.
 */
#define POLLUX_LS_DONORS 8
/* Searches at most in pollux_greedy_problem: a count packing spread over
 * more nodes than assumed is priced at those and the search runs again. */
#define POLLUX_PACK_PASSES 3
int pollux_greedy_search(const struct pollux_gjob *jobs, int n_jobs, const int *cap,
			 int n_types, double p, int ls_iters, int *choice, double *objective,
			 struct rk_error *err);

/*
 * The greedy on a pollux_problem (what the GA and the exact search solve),
 * for the tests: candidates are every GPU count in [min_replicas,
 * max_replicas] on ceil(count / largest node) nodes, the count a job holds
 * in base unpenalised, and the counts packed onto nodes as the policy packs
 * (the job's base row kept when its count is, the rest largest first, best
 * fit on one node else the fewest nodes, a misfit taking a smaller count),
 * with up to POLLUX_PACK_PASSES searches re-priced at the nodes packing gave. OUT: state (n_jobs * n_nodes,
 * pollux_feasible), *fitness its pollux_fitness. RK_ENOMEM.
 */
int pollux_greedy_problem(const struct pollux_problem *pr, int ls_iters, int *state,
			  double *fitness, struct rk_error *err);

/* ---- The policy's options (pollux_opts.c; docs/policies.md "pollux") ---- */

/* The artifact's restart penalty (PolluxPolicy restart_penalty = 30 s) and
 * the greedy's local-search moves per round. */
#define POLLUX_RESTART_S_DEFAULT 30.0
#define POLLUX_LS_DEFAULT 16

enum pollux_search { POLLUX_SEARCH_GREEDY = 0, POLLUX_SEARCH_GA };

struct pollux_opts {
	double p;          /* fairness exponent, [-10, 1] */
	double restart_s;  /* restart penalty P (s), >= 0; 0 = moves are free */
	enum pollux_search search;
	int ls;            /* greedy: local-search moves per round */
	int pop, gens;     /* GA: population and generations */
};

void pollux_opts_default(struct pollux_opts *o);
/* Parse "key=value,..." (NULL = defaults) into *out (untouched on error);
 * RK_EINVAL / RK_ERANGE with "pollux: KEY=VALUE: what is allowed". */
int pollux_opts_parse(struct pollux_opts *out, const char *options, struct rk_error *err);

/* ---- Speedup tables of the policy's jobs (pollux_speed.c) ---- */

struct rk_job;
struct rk_perf_env;

/* The round's GPU types: up nodes with GPUs, grouped by type. */
struct pollux_types {
	int n;
	const char *name[POLLUX_MAX_TYPES]; /* borrowed from the cluster */
	int cap[POLLUX_MAX_TYPES];          /* GPUs of the type */
	int node_gpus[POLLUX_MAX_TYPES];    /* GPUs of its largest node */
	int cpus_per_gpu[POLLUX_MAX_TYPES]; /* smallest node CPUs / GPUs, >= 1 */
};

/* One job's table, cached by the policy under its job id (rk_idtab). */
struct pollux_jspeed {
	int64_t id; /* struct rk_idtab_head */
	int used;
	uint64_t key;          /* pollux_speed_key it was built for */
	int64_t seen_round;    /* last round the job was active */
	int n;
	struct pollux_cand *c; /* value = speedup over one GPU (no restart factor, no scale) */
	int *bsz;              /* 2n: local_bsz, accum_steps per candidate (0, 0 without goodput) */
};

uint64_t pollux_types_key(const struct pollux_types *t);
/* What j's table depends on (see pollux_speed.c), never 0. */
uint64_t pollux_speed_key(const struct rk_job *j, uint64_t types_key);
/* Rebuild out->c / out->bsz (freed and replaced) for j. RK_ENOMEM. */
int pollux_speed_build(const struct rk_job *j, const struct pollux_types *ty,
		       const struct rk_perf_env *env, struct pollux_jspeed *out,
		       struct rk_error *err);

/*
 * search=ga in the policy (pollux_ga_policy.c): the artifact's GA over the
 * up nodes of the cluster's one GPU type, seeded with what the jobs hold; a
 * job's speedup at a row is its table's at the row's GPU count (0 where the
 * count is not a candidate). OUT: choice[i] (index into sp[i]->c, -1 =
 * none) and allocs[i] (empty = none). RK_EINVAL naming search=ga on a
 * cluster of several types; RK_ENOMEM.
 */
struct rk_sched_input;
struct rk_alloc;
int pollux_ga_choose(const struct pollux_opts *o, const struct rk_sched_input *in,
		     const struct pollux_types *ty, struct rk_job *const *jobs,
		     struct pollux_jspeed *const *sp, const double *rf, int n, int *choice,
		     struct rk_alloc *allocs, struct rk_error *err);

/* splitmix64 (Steele et al., OOPSLA 2014): the search's seeded generator. */
uint64_t pollux_rand(uint64_t *s);

#endif
