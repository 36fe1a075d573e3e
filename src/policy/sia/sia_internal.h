/*
 * Internal to the Sia baseline (src/policy/sia/sia*.c): options, GPU types and
 * the configuration set. See sia.c for the algorithm and its sources.
 */
#ifndef RUBICK_POLICY_SIA_INTERNAL_H
#define RUBICK_POLICY_SIA_INTERNAL_H

#include "rubick/cluster.h"
#include "rubick/goodput.h"
#include "rubick/job.h"
#include "rubick/model.h"
#include "rubick/plan.h"

#include <stddef.h>
#include <stdint.h>

/* Sia's defaults (§5.1, run_experiment.sh). */
#define SIA_P_DEFAULT        (-0.5)
#define SIA_LAMBDA_N_DEFAULT 1.1
#define SIA_GAP_DEFAULT      1e-4
/* Goodput given to restart-penalised configurations at r = 0 (Sia's invalid value). */
#define SIA_MIN_GOODPUT 1e-4
/* Normalised goodputs are clipped here as in the artifact (§5.1). */
#define SIA_MAX_GOODPUT 3000.0
/*
 * Restart penalty P (s). Sia measures it per model (25-250 s); the Rubick
 * setting measures one restart delay of 260 s for every job (§1.8.2 item 7),
 * which is what a deployment of Sia on that cluster would measure.
 */
#define SIA_RESTART_S_DEFAULT 260.0
/*
 * Limits of one round's branch and bound, the incumbent kept when one is hit
 * (Sia's rounds take about 1 s at 2,048 GPUs, §5.1). The node limit is what
 * normally stops a hard round, at the same point on any machine: on the first
 * 5,000 jobs of philly.csv on 256x8 GPUs 18,885 rounds needed the solver,
 * all but 6 under 500 nodes, the largest 1,673 (538 ms). The wall-clock limit
 * is only a safety net (it makes decisions depend on the machine's load).
 */
#define SIA_TIME_LIMIT_MS_DEFAULT 1000.0
#define SIA_MAX_NODES_DEFAULT     1000
#define SIA_MAX_TYPES             16
/* GPUs up to which every whole-node count is a configuration (the artifact's
 * sets end at 64 GPUs); above, powers of two of nodes (sia_build_configs). */
#define SIA_DENSE_GPUS 64
/* Lower bound of every fitted throughput term (s; Pollux's fit_perf_params),
 * where the fit pins a term the data cannot identify (sia_goodput.c). */
#define SIA_FIT_FLOOR 1e-8
/* Most eligible rounds skipped without a quiet-round try after failed ones. */
#define SIA_QUIET_MAX_BACKOFF 64

struct sia_opts {
	double p, lambda_n, restart_s, time_limit_ms, gap;
	int max_nodes; /* branch-and-bound nodes per round; 0 = no limit */
	int range_job; /* 1: GPU counts limited to [min_gpus, max_gpus] */
	int quiet;     /* 1: skip rounds proven to repeat the last (sia_quiet.c) */
};

struct sia_type {
	const char *name; /* borrowed from a node */
	int node_gpus;    /* GPUs per node (the smallest among up nodes of the type) */
	int n_nodes;      /* up nodes */
	int total_gpus;
	int cpus_per_gpu; /* proportional share on the smallest node of the type */
	int64_t mem_mb_per_gpu;
};

struct sia_cfg {
	int type, nodes, gpus;
	int ragged; /* 1: a requested size that is no multiple of n_k: full nodes plus a
		     * remainder (rk_placement_consolidated) instead of `nodes` equal shares */
};

/* Parse "key=value,..." (file comment of sia.c); OUT: *o. */
int sia_parse_opts(struct sia_opts *o, const char *options, struct rk_error *err);

/* GPU types of the up nodes, in order of first appearance; node_type[i] = type or -1. */
int sia_collect_types(const struct rk_cluster *c, struct sia_type *t, int *n_types, int *node_type,
		      struct rk_error *err);

/* Sia's configuration set plus requested sizes (asked[g], g <= max_asked). OUT: *out (free). */
int sia_build_configs(const struct sia_type *t, int n_types, const char *asked, int max_asked,
		      struct sia_cfg **out, int *n_out);

/* The placement a configuration stands for (equal shares, or ragged). */
int sia_cfg_placement(const struct sia_cfg *cf, const struct sia_type *t, struct rk_placement *pl);

/* Per-GPU CPUs and memory a job gets: its request, capped at the proportional share. */
int sia_job_cpus_per_gpu(const struct rk_job *j, const struct sia_type *t);
int64_t sia_job_mem_per_gpu(const struct rk_job *j, const struct sia_type *t);

/* Index of the configuration matching what `j` holds now, or -1. */
int sia_current_config(const struct rk_job *j, const int *node_type, const struct sia_cfg *cfg,
		       int n_cfg);

/*
 * What the row of a job with a goodput model (rk_job.goodput) depends on
 * besides its request (sia_goodput.c): the gradient statistics at its
 * progress, a signature of its limits and per-type throughput models, and
 * what Sia has observed of it (bootstrapping). All zero for a job without one,
 * so its rows and classes are what they were before goodput mode.
 */
/* What Sia has observed of a job, per type: bit i of each mask is the job's gpu_type[i]. */
struct sia_seen_obs {
	uint32_t ran;        /* has run there: Sia has fitted a model of it there */
	uint32_t multi_node; /* with replicas on several nodes: inter-node sync measured */
	uint32_t one_node;   /* with several replicas on one node: intra-node sync measured */
	uint32_t over2;      /* with more than two replicas: sync growth measured */
	int max_replicas;    /* the most replicas it has run with on any type (0 = never run) */
};

struct sia_gp_key {
	double sqr, var;     /* rk_job_goodput.grad, exact: a new value is a new row */
	uint64_t perf_sig;   /* hash of limits, types' names and perf[]; 0 = no goodput */
	struct sia_seen_obs seen; /* what it has run, so what Sia knows of it */
	int max_replicas;    /* the most replicas a configuration may have (exploration) */
};

/*
 * What a job's goodput row depends on (sia_round_job_vars): its model (content,
 * so a refitted copy is another key), request and quota. Zero-filled before
 * use: keys compare and hash bytewise, padding included.
 */
struct sia_row_key {
	struct rk_model model;
	struct rk_plan plan;
	int64_t req_mem_mb;
	int global_batch, req_gpus, req_cpus, min_gpus, max_gpus;
	int gpu_quota; /* the tenant's, -1 = none */
	/* The trace's measured speeds (rk_job.native_sps) when the row is priced
	 * from them (rk_baseline_is_native): a hash of the table and its length;
	 * 0 when the row is the fitted model's. */
	uint64_t native_sig;
	int native_max;
	struct sia_gp_key gp; /* goodput mode (zero without a goodput model) */
};

/* One valid configuration of a row: before the restart factor. */
struct sia_row_var {
	int cfg;
	double g;    /* normalised, clipped goodput */
	double cost; /* objective coefficient without the restart factor */
	struct rk_plan plan;
	int local_bsz, accum_steps; /* goodput mode: the optimiser's batch (0, 0 = trace batch) */
};

struct rk_perf_env;
struct rk_sched_input;
struct sia_seen;
/* The key of job j's row (zero-filled, then its fields; `seen` as sia_gp_key_init). */
void sia_row_key_init(struct sia_row_key *k, const struct sia_opts *o,
		      const struct rk_sched_input *in, const struct sia_seen *seen,
		      const struct rk_job *j);
/* Sia's objective coefficient of normalised goodput g (floored as invalid ones). */
double sia_cost(const struct sia_opts *o, double g);
/*
 * The valid configurations of job `j` (tenant quota gq, -1 = none; goodput
 * key gk, from its row key) with their plans, normalised goodputs and costs
 * before the restart factor, into row (n_cfg + 1 entries, caller's). OUT: *n_out.
 */
void sia_row_build(const struct sia_opts *o, const struct rk_sched_input *in,
		   const struct sia_type *types, int n_types, const struct sia_cfg *cfg,
		   int n_cfg, const struct rk_job *j, int gq, const struct sia_gp_key *gk,
		   struct sia_row_var *row, int *n_out);

/* ---- goodput mode (sia_goodput.c, sia_seen.c) ------------------------------ */

/* 1 when `j` is priced with its goodput model (a model with a GPU type).
 * Inline: every part of the folder asks it. */
static inline int sia_gp_on(const struct rk_job *j)
{
	return j->goodput && j->goodput->n_types > 0;
}
/* What job j's goodput row depends on, with what `seen` recorded of it
 * (seen may be NULL: nothing observed). All zero when !sia_gp_on(j). */
void sia_gp_key_init(struct sia_gp_key *k, const struct sia_seen *seen, const struct rk_job *j);
/*
 * Goodput of job j (key gk) on configuration cf with `replicas` data-parallel
 * replicas, Sia's estimate with bootstrapping (sia_goodput.c): the optimiser's
 * best batch and accumulation over the type's throughput model, projected
 * from a type it has run on where it has not. OUT: *out. Returns 0, or
 * RK_EINFEASIBLE when Sia has no estimate or no valid batch there.
 */
int sia_gp_price(const struct rk_job *j, const struct sia_gp_key *gk,
		 const struct sia_type *types, int n_types, const struct sia_cfg *cf, int replicas,
		 struct rk_goodput_choice *out);

/* What Sia has observed of each job with a goodput model (sia_seen.c). */
int sia_seen_create(struct sia_seen **out);
void sia_seen_destroy(struct sia_seen *s);
/*
 * Record the GPU type and replicas of every job with a goodput model that
 * runs now (past its restart: it is being measured); jobs no longer in the
 * input are forgotten when the table is rebuilt. RK_ENOMEM (nothing
 * recorded) on failure.
 */
int sia_seen_update(struct sia_seen *s, const struct rk_sched_input *in);
/* What has been observed of job `job_id` (all zero: never run). OUT: *obs. */
void sia_seen_get(const struct sia_seen *s, int64_t job_id, struct sia_seen_obs *obs);

/* Rows kept across rounds (sia_cache.c). */
struct sia_cache;
int sia_cache_create(struct sia_cache **out);
void sia_cache_destroy(struct sia_cache *c);
/*
 * Start a round: keep the rows only if the GPU types, configurations and
 * environment are those of the previous round and at most max_rows are kept;
 * else drop them all. RK_ENOMEM (rows dropped) on failure.
 */
int sia_cache_begin(struct sia_cache *c, const struct sia_type *t, int n_types,
		    const struct sia_cfg *cfg, int n_cfg, const struct rk_perf_env *env,
		    size_t max_rows);
/* The row of `key` (borrowed until the next put or begin), *n entries; NULL if none. */
const struct sia_row_var *sia_cache_find(const struct sia_cache *c, const struct sia_row_key *key,
					 int *n);
/* Keep a copy of a row (n >= 0 entries) under `key`, which must be absent. */
int sia_cache_put(struct sia_cache *c, const struct sia_row_key *key, const struct sia_row_var *v,
		  int n);

/* The policy's state: options, the row cache and the quiet rounds' back-off. */
struct sia_state {
	struct sia_opts o;
	struct sia_cache *cache;
	struct sia_seen *seen; /* goodput mode: what each job has run (bootstrapping) */
	/* Eligible rounds left without a quiet-round certificate, and the next
	 * such wait after a failed one (sia_quiet.c: when to try is free, what a
	 * try proves is exact). */
	int quiet_wait, quiet_backoff;
	/* Mean time between rounds with something in the change feed (ms,
	 * exponentially weighted; 0 = unknown) and the last such round: proofs
	 * much past the next event are not worth their DPs. */
	double event_gap_ms;
	int64_t last_event_ms;
};

/* A job class for sia_dp_solve: its variables first..first+n-1, `mult` jobs. */
struct sia_dp_class {
	int first, n, mult;
};

/*
 * Exact optimum of the one-type ILP (sia_dp.c): each of a class's `mult` jobs
 * takes at most one of its variables k (w[k] GPUs, benefit b[k]; those with
 * b <= 0 never), total GPUs <= capacity, maximising the benefit. n <= 65535
 * variables per class. OUT: count[k] = jobs taking k. Returns 0, RK_ERANGE
 * (the table would be too large: use GLPK) or RK_ENOMEM.
 */
int sia_dp_solve(const struct sia_dp_class *cls, int n_cls, const int *w, const double *b,
		 int capacity, int *count);
/* The same, with bounds = 0: the whole table, without the Lagrangian bounds
 * that leave out items and cells (sia_dp.c); the answer is the same, slower. */
int sia_dp_solve_bounded(const struct sia_dp_class *cls, int n_cls, const int *w, const double *b,
			 int capacity, int bounds, int *count);

#endif
