/*
 * Internal to the throughput oracle (src/sim/oracle): the tables it holds and
 * the helpers its back-ends share. See oracle.h for the lookup rules.
 *
 * Calls go one way, from the core down to its parts; no part calls a file
 * above it (scripts/callgraph.py over the folder's objects: test
 * layout_calls):
 *
 *   driver  oracle_load.c    -> oracle sia target (reads files; the rest does not)
 *   core    oracle.c         -> cache gavel gpu rubick sia key model
 *   parts   oracle_sia.c     -> cache gpu key
 *           oracle_rubick.c  -> key model
 *           oracle_gavel.c   -> cache interference
 *           oracle_gpu.c     -> model
 *           oracle_cache.c   -> key
 *           oracle_target.c  -> key
 *   leaves  oracle_key.c, oracle_model.c, interference.c
 */
#ifndef RK_SIM_ORACLE_INTERNAL_H
#define RK_SIM_ORACLE_INTERNAL_H

#include "rubick/cluster.h"
#include "rubick/model.h"
#include "rubick/oracle.h"
#include "rubick/plan.h"

#include <stdint.h>

/* One measured row of a Rubick table, placement canonicalised. */
struct rubick_row {
	char family[RK_ORACLE_FAMILY_MAX]; /* lower case, as in the file */
	struct rk_placement pl;            /* GPUs per node, sorted descending */
	int gpus;                          /* total GPUs */
	int cpu_threads;                   /* per GPU; 0 = not recorded */
	double iter_s;                     /* 0 = failed run (OOM) */
	int line;                          /* source line, for messages */
};

struct rubick_table {
	char model[RK_MODEL_NAME_MAX]; /* normalised (see model_key) */
	int global_batch;              /* 0 = the model's default */
	char file[128];                /* file name, for messages */
	int has_cpu_threads;
	int n;
	struct rubick_row *rows;
};

/* One Sia/Pollux profile point: (nodes, replicas, local batch) -> times. */
struct sia_row {
	struct rk_placement pl; /* sorted descending; n_nodes == 0 for scalability rows */
	int nodes, replicas;
	double local_bsz;
	double step_s, sync_s;
};

struct sia_profile {
	char model[RK_MODEL_NAME_MAX];   /* normalised */
	char gpu_type[RK_GPU_TYPE_MAX];  /* lower case; "" = untyped */
	int n_place, n_scale;
	struct sia_row *place;           /* from placements[-gpu].csv */
	struct sia_row *scale;           /* from scalability[-gpu].csv */
};

/* Iterations of one application at one global batch to its validation target (oracle_target.c). */
struct sia_target {
	char model[RK_MODEL_NAME_MAX]; /* normalised */
	int batch;
	double iters;
};

/* Everything an answer depends on besides the tables (oracle_cache.c). */
struct oracle_ckey {
	const struct rk_model *model;
	char model_name[RK_MODEL_NAME_MAX];
	char app[RK_MODEL_NAME_MAX]; /* the trace's application, normalised (a profile may answer it) */
	int app_batch;               /* its global batch (rk_job.app_batch) */
	int model_batch, perf_fitted;
	struct rk_perf_params perf;
	int batch;
	struct rk_plan plan;
	int cpus;
	char gpu_type[RK_GPU_TYPE_MAX];
	int n_nodes;
	int gpus[RK_PLACEMENT_MAX_NODES]; /* canonical placement; only n_nodes entries are keyed */
};

struct oracle_centry;
struct oracle_cache {
	int n, cap; /* cap is 0 or a power of two */
	struct oracle_centry *slots;
};

void oracle_ckey_init(struct oracle_ckey *k, const struct rk_job *job, const struct rk_plan *plan,
		      const struct rk_placement *pl, int cpus_per_gpu, const char *gpu_type);
/* 1 and *out on a hit, 0 on a miss. */
int oracle_cache_get(const struct oracle_cache *c, const struct oracle_ckey *k,
		     struct rk_oracle_result *out);
void oracle_cache_put(struct oracle_cache *c, const struct oracle_ckey *k,
		      const struct rk_oracle_result *r);
void oracle_cache_clear(struct oracle_cache *c);

struct rk_oracle {
	int measured;                       /* 0 = analytic model only */
	enum rk_oracle_fallback fallback;
	const struct rk_perf_env *env;      /* borrowed; may be NULL */
	int n_tables;
	struct rubick_table *tables;
	int n_profiles;
	struct sia_profile *profiles;
	int n_targets;
	struct sia_target *targets;         /* Sia/Pollux validation targets */
	struct rk_oracle_stats stats;
	struct oracle_cache cache;          /* answered lookups; cleared when tables change */
	struct gavel_table *gavel;          /* trace-native throughputs (oracle_gavel.c); NULL = none */
};

/* ---- canonical keys (oracle_key.c) ---- */

/* Normalised model key: lower case, a "b" after the size digits dropped ("llama7b" -> "llama7"). */
void oracle_model_key(const char *name, char *out, size_t cap);

/* Sort a placement's nodes by GPUs, descending (node order does not matter). */
void oracle_placement_canon(struct rk_placement *pl);

/* ---- the analytic model (oracle_model.c) ---- */

/* 1 when rules 4-5 may use the analytic model for `m`. */
int oracle_model_usable(const struct rk_oracle *o, const struct rk_model *m);

/* Analytic iteration time (s) of `plan` on `pl` (perf.h). */
int oracle_model_iter_s(const struct rk_oracle *o, const struct rk_model *m,
			const struct rk_plan *plan, const struct rk_placement *pl, int cpus_per_gpu,
			double *iter_s, struct rk_error *err);

/* ---- GPU types (oracle_gpu.c) ---- */

/* Time multipliers that carry an answer from one GPU type to another (t_to = t_from x ratio). */
struct oracle_gpu_scale {
	int same;       /* 1 = the same type: nothing to scale */
	double compute; /* peak rate from / to (FP16 training peak, or FP32) */
	double mem;     /* memory bandwidth from / to */
	double link;    /* intra-node link from / to */
	double pcie;    /* host link from / to */
};

/* Ratios from `from` to `to` (GPU table names), compute at FP32 peaks when fp32 is 1, else at
 * the training (FP16) peaks; RK_ENOTFOUND naming a type not in the table. */
int oracle_gpu_scale(const char *from, const char *to, int fp32, struct oracle_gpu_scale *s,
		     struct rk_error *err);

/* The GPU table name of a Sia/Pollux profile type ("aws" -> "t4", "" -> "t4"), or NULL. */
const char *oracle_gpu_of_profile(const char *profile_type);

/* The analytic model on GPUs of `gpu_type` ("" = the reference): oracle_model_iter_s with the
 * model's reference-type times carried over by oracle_gpu_scale. */
int oracle_model_iter_typed(const struct rk_oracle *o, const struct rk_model *m,
			    const struct rk_plan *plan, const struct rk_placement *pl,
			    int cpus_per_gpu, const char *gpu_type, double *iter_s,
			    struct rk_error *err);

/* Rules 1-4 on one Rubick table (oracle_rubick.c). */
int oracle_rubick_lookup(const struct rk_oracle *o, const struct rubick_table *t,
			 const struct rk_job *job, const struct rk_plan *plan,
			 const struct rk_placement *pl, int cpus_per_gpu,
			 struct rk_oracle_result *res, struct rk_error *err);

/*
 * Sia/Pollux lookup for a DP plan (oracle_sia.c). oracle_sia_find: the
 * profile measured on `gpu_type` (exact name or its Sia alias), else NULL;
 * oracle_sia_find_other: the profile of the model on the type with the
 * FP32 peak nearest `gpu_type`'s (for scaling), else NULL.
 * oracle_sia_lookup with `scale` non-NULL carries the answer to another type:
 * compute (step - sync) x scale->compute, a one-node sync x scale->link.
 */
const struct sia_profile *oracle_sia_find(const struct rk_oracle *o, const char *model_key,
					  const char *gpu_type);
const struct sia_profile *oracle_sia_find_other(const struct rk_oracle *o, const char *model_key,
						const char *gpu_type);
int oracle_sia_lookup(const struct sia_profile *p, const struct rk_job *job,
		      const struct rk_plan *plan, const struct rk_placement *pl,
		      const struct oracle_gpu_scale *scale, struct rk_oracle_result *res,
		      struct rk_error *err);
void oracle_sia_free(struct sia_profile *p);
/* Smallest and largest local batch measured in `p` (both files). OUT: *lo, *hi. */
void oracle_sia_batch_range(const struct sia_profile *p, double *lo, double *hi);

/* Trace-native Gavel/Shockwave throughputs (oracle_gavel.c): RK_ENOTFOUND when the
 * file does not hold the job's type, so the other rules answer. Not cached (the
 * cache key has no job type). */
struct gavel_table;
int oracle_gavel_lookup(struct gavel_table *t, const struct rk_job *job,
			const struct rk_alloc *alloc, const struct rk_cluster *cluster,
			const struct rk_placement *pl, struct rk_oracle_result *res,
			struct rk_error *err);
void oracle_gavel_free(struct gavel_table *t);

#endif
