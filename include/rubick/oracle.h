/*
 * The simulator's throughput oracle: the ground truth a simulated job advances
 * with. Policies decide with the fitted model (perf.h); the simulator asks the
 * oracle how long one iteration of a job's plan really takes on its
 * allocation, as the Rubick artifact does (docs/references.md §7 "Throughput oracle
 * interface"). Two back-ends:
 *
 *  - measured: the Rubick A800 plan x placement tables (`placements.csv`,
 *    docs/references.md §6 D1) and the Sia/Pollux DP profiles (`placements-<gpu>.csv`,
 *    `scalability-<gpu>.csv`, §6 D4/D6), with interpolation where a point is
 *    missing and, optionally, the analytic model as the last resort;
 *  - model: the analytic performance model alone (§1.4, rk_perf_predict).
 *
 * The oracle does no I/O: callers hand it table text plus a file name for
 * messages. rk_oracle_load_dir() (src/sim/oracle/oracle_load.c, simulator floor) is
 * the convenience driver that reads a folder.
 *
 * Lookup rules for a Rubick table (each lookup records which rule answered):
 *  1. EXACT: the job's plan is mapped to its artifact family
 *     (rk_oracle_plan_family) and its placement canonicalised (GPUs per node
 *     sorted in descending order: node order does not matter); a row with the
 *     same family and canonical placement answers. A measured iter_time of 0
 *     marks a plan that did not fit (OOM): the lookup fails with RK_EINFEASIBLE.
 *  2. NEAREST: rows of the same family with the same GPU count and node count;
 *     the one at the smallest L1 distance between the sorted per-node vectors
 *     (ties: mean throughput of the tied rows).
 *  3. INTERP: the nearest measured GPU counts below and above with the same
 *     family; log(throughput) is linear in the GPU count between them. At each
 *     count the rows with the node count closest to the query's answer (mean
 *     throughput when several).
 *  4. MODEL_SCALED: the analytic model at the query, times the ratio
 *     measured/model at the nearest measured point (same family first, else
 *     any family; nearest GPU count, then node count) - keeps the model's shape
 *     and the table's level.
 *  5. MODEL: no table for this (model, global batch): the analytic model alone.
 *  6. BATCH_SCALED: no table at this global batch B and no usable model, but
 *     a table of the same model at another batch B0 (the nearest in ratio;
 *     ties: the larger): rules 1-4 on it, iteration time times B/B0 (samples
 *     per second held). Trace jobs known only by their duration at the
 *     request advance by throughput ratios, which this factor cancels out of.
 *
 * GPU types (docs/oracle.md "GPU types"): the Rubick tables are the A800's
 * (RK_GPU_REFERENCE); a Sia/Pollux profile answers for the type it was
 * measured on. On a type with no table or profile of its own, the answer
 * measured on another type is carried over with the GPU table (gpu.h):
 * compute by the peak rates, memory-bound terms by memory bandwidth,
 * intra-node communication by the link bandwidths; the lookup's source is
 * then TYPE_SCALED. The analytic model (rules 4-5) is itself carried to the
 * node's type the same way. Lookups are counted per type (rk_oracle_stats).
 * Rules 4-5 need an analytic back-end (fallback RK_ORACLE_FALLBACK_MODEL, an
 * env and a fitted model). Without one, rule 4 answers with the nearest
 * measured point of the same family unscaled (NEAREST_POINT: same order as
 * rule 4), and a lookup nothing answers fails with RK_ENOTFOUND naming the
 * job.
 *
 * Sia/Pollux profiles (DP only, per GPU type; the Pollux simulator's
 * Application.get_throughput): iteration time of plan (mb, ga) on a placement
 * is step(mb) + (ga - 1) * (step(mb) - sync(mb)), i.e. ga - 1 accumulation
 * steps without synchronisation plus one with it. step/sync come from the
 * canonical placement's rows (EXACT when mb is a measured local batch, else
 * INTERP linearly between the two measured local batches around mb), else the
 * rows with the same (nodes, replicas) from `placements` and `scalability`
 * (NEAREST, linear over local batch), else (INTERP) at the node count nearest
 * the query's: its rows with this replica count, or linear between the
 * nearest replica counts around it. A local batch below the smallest measured
 * uses the smallest (a smaller batch never steps slower); above the largest
 * measured it fails with RK_EINFEASIBLE (profiles stop where memory ends).
 */
#ifndef RUBICK_ORACLE_H
#define RUBICK_ORACLE_H

#include "rubick/cluster.h"
#include "rubick/error.h"
#include "rubick/job.h"
#include "rubick/plan.h"

#include <stddef.h>
#include <stdint.h>

struct rk_perf_env; /* cluster constants of the performance model (perf.h) */
struct rk_oracle;   /* opaque */

/* Which rule answered a lookup (see the header comment). */
enum rk_oracle_source {
	RK_ORACLE_SRC_EXACT = 0,
	RK_ORACLE_SRC_NEAREST,
	RK_ORACLE_SRC_INTERP,
	RK_ORACLE_SRC_MODEL_SCALED,
	RK_ORACLE_SRC_MODEL,
	RK_ORACLE_SRC_NEAREST_POINT, /* rule 4 without a model: the nearest measured point as is */
	RK_ORACLE_SRC_BATCH_SCALED,  /* rule 6: a table of another global batch, time x B/B0 */
	RK_ORACLE_SRC_GAVEL,         /* the trace's own Gavel/Shockwave throughput file */
	RK_ORACLE_SRC_TYPE_SCALED,   /* a table or profile of another GPU type, carried to this one
				      * with the GPU table (docs/oracle.md "GPU types") */
	RK_ORACLE_SRC_COUNT
};

/* What a measured oracle does when no table answers. */
enum rk_oracle_fallback {
	RK_ORACLE_FALLBACK_MODEL = 0, /* rules 4-5: the analytic model (needs an env) */
	RK_ORACLE_FALLBACK_NONE = 1,  /* fail the lookup with RK_ENOTFOUND */
};

/* Which of the two Sia/Pollux profile files a text is. */
enum rk_sia_kind {
	RK_SIA_PLACEMENTS = 0,  /* placement, local_bsz, step_time, sync_time (any column order) */
	RK_SIA_SCALABILITY = 1, /* num_nodes, num_replicas, local_bsz, step_time, sync_time */
};

/* Artifact plan-family names are at most this long (with the NUL). */
#define RK_ORACLE_FAMILY_MAX 24

/* Provenance of one lookup. */
struct rk_oracle_result {
	double iter_s;                       /* seconds per iteration (one global batch) */
	enum rk_oracle_source source;
	char family[RK_ORACLE_FAMILY_MAX];   /* artifact family used, "" for the model */
	char placement[RK_PLACEMENT_MAX_NODES + 1]; /* canonical placement, e.g. "8844" */
};

/* Successful lookups on the GPUs of one type. */
struct rk_oracle_type_stats {
	char gpu_type[RK_GPU_TYPE_MAX];          /* the node's type ("" = untyped) */
	uint64_t lookups;
	uint64_t by_source[RK_ORACLE_SRC_COUNT];
};

/* Types counted separately; lookups on further types are counted only in the totals. */
#define RK_ORACLE_STATS_TYPES 16

/* Lookup counters since creation. */
struct rk_oracle_stats {
	uint64_t lookups;                        /* successful lookups */
	uint64_t by_source[RK_ORACLE_SRC_COUNT]; /* successful lookups per rule */
	uint64_t infeasible;                     /* lookups that hit a measured OOM row */
	uint64_t failed;                         /* other failed lookups */
	int n_types;                             /* entries of `types` used, first seen first */
	struct rk_oracle_type_stats types[RK_ORACLE_STATS_TYPES];
};

/*
 * Analytic oracle: rk_perf_predict with the job's model's fitted parameters
 * and `env` (borrowed; must outlive the oracle). *out is NULL on failure.
 */
int rk_oracle_create_model(struct rk_oracle **out, const struct rk_perf_env *env,
			   struct rk_error *err);

/*
 * Measured oracle with no tables yet; add them with the rk_oracle_add_*
 * calls. `env` (borrowed, may be NULL) is needed only for the model fallback;
 * with RK_ORACLE_FALLBACK_MODEL and env == NULL, rules 4-5 fail as with NONE.
 */
int rk_oracle_create_measured(struct rk_oracle **out, const struct rk_perf_env *env,
			      enum rk_oracle_fallback fallback, struct rk_error *err);

void rk_oracle_destroy(struct rk_oracle *o);

/*
 * Add one Rubick `placements.csv` table (text of `len` bytes, `filename` for
 * messages) measured for `model_name` at `global_batch` samples per iteration
 * (0 = the model's own default, rk_model.global_batch). Model names match the
 * zoo key case-insensitively, and "llama7b" matches "llama7" (a trailing "b"
 * after the size digits is dropped). Fails with RK_EINVAL and
 * "FILE:LINE:COL: ..." on a malformed row, RK_EEXIST if that (model, batch)
 * already has a table. The oracle is unchanged on failure.
 */
int rk_oracle_add_rubick_table(struct rk_oracle *o, const char *model_name, int global_batch,
			       const char *text, size_t len, const char *filename,
			       struct rk_error *err);

/*
 * Add one Sia/Pollux profile file for `model_name` on GPU type `gpu_type`
 * ("" = untyped, the original Pollux profile). Columns are found by header
 * name. A node's rk_node.gpu_type selects the profile: exact name
 * (case-insensitive), then the aliases t4->aws, v100->azure, a100->dgx-ext,
 * rtx6000->quad, 2080ti->rtx. The untyped profile is the Pollux cluster's
 * (T4). A type with no profile of its own is never answered by another
 * type's profile as is: the profile of the type with the nearest FP32
 * peak is scaled to it (TYPE_SCALED).
 */
int rk_oracle_add_sia_profile(struct rk_oracle *o, const char *model_name, const char *gpu_type,
			      enum rk_sia_kind kind, const char *text, size_t len,
			      const char *filename, struct rk_error *err);

/*
 * Add the validation target of `model_name` at global batch `batch` from a
 * Sia/Pollux `validation-<batch>.csv` (columns found by header name; the last
 * row's `iteration` = iterations of that batch to the target). RK_EEXIST when
 * that (model, batch) has one; "FILE:LINE:COL: ..." on a bad row.
 */
int rk_oracle_add_sia_target(struct rk_oracle *o, const char *model_name, int batch,
			     const char *text, size_t len, const char *filename,
			     struct rk_error *err);

/*
 * Iterations of global batch `batch` that application `app` needs to reach its
 * validation target: a measured batch's, log-log linear between the measured
 * batches around it, the nearest measured one's outside them. OUT: *iters.
 * RK_ENOTFOUND when `app` has no target.
 */
int rk_oracle_target_iters(const struct rk_oracle *o, const char *app, int batch, double *iters);

/*
 * Seconds per iteration of `job` (its model and global batch) running `plan`
 * on `alloc` in `cluster`. OUT: *iter_s. Errors: RK_EINVAL (empty alloc, a
 * share on an unknown node, plan GPU count != allocated GPUs),
 * RK_EINFEASIBLE (the measured table marks this point OOM), RK_ENOTFOUND (no
 * table and no model fallback). Messages name the job id and the model.
 */
int rk_oracle_iter_s(struct rk_oracle *o, const struct rk_job *job, const struct rk_plan *plan,
		     const struct rk_alloc *alloc, const struct rk_cluster *cluster,
		     double *iter_s, struct rk_error *err);

/* As rk_oracle_iter_s, with the provenance. OUT: *res. */
int rk_oracle_lookup(struct rk_oracle *o, const struct rk_job *job, const struct rk_plan *plan,
		     const struct rk_alloc *alloc, const struct rk_cluster *cluster,
		     struct rk_oracle_result *res, struct rk_error *err);

/*
 * Trace-native speeds (src/sim/oracle/oracle_gavel.c, docs/oracle.md "Trace-native
 * speeds"): a Gavel/Shockwave throughput file ({gpu_type: {"('JOB TYPE', SF)":
 * {"null": steps/s}}}). A job whose rk_job.job_type the file holds is answered
 * from it before any other rule: 1 / steps/s on the node's GPU type at the GPUs
 * held, whatever the placement, as Gavel's simulator does; counts the file does
 * not measure scale the nearest measured one by GPUs / count; node types the
 * file lacks use `ref_gpu_type` (which must be in the file). One file per
 * oracle: RK_EEXIST for a second. Malformed text fails with "FILE:...".
 */
struct rk_oracle_gavel_stats {
	uint64_t lookups;    /* answered from the file */
	uint64_t scaled;     /* ... at a GPU count the file does not measure */
	uint64_t other_type; /* ... on a node type the file lacks (the reference type's figure) */
};
int rk_oracle_add_gavel_throughputs(struct rk_oracle *o, const char *text, size_t len,
				    const char *filename, const char *ref_gpu_type,
				    struct rk_error *err);
/* 1 when the file holds `job_type` (its length then comes from the trace's steps). */
int rk_oracle_gavel_knows(const struct rk_oracle *o, const char *job_type);
/* Seconds per step of `job_type` on `gpus` GPUs of the reference type; RK_ENOTFOUND if unknown. */
int rk_oracle_gavel_ref_iter_s(const struct rk_oracle *o, const char *job_type, int gpus,
			       double *iter_s);
/* 1 when the file measures GPU type `gpu_type` (case-insensitive). */
int rk_oracle_gavel_has_type(const struct rk_oracle *o, const char *gpu_type);
/* The reference GPU type, or NULL without a file. */
const char *rk_oracle_gavel_ref_type(const struct rk_oracle *o);
/* Counters since the file was added (not reset by rk_oracle_stats_reset). */
void rk_oracle_gavel_stats_get(const struct rk_oracle *o, struct rk_oracle_gavel_stats *out);

/* Counters since creation or the last reset. OUT: *out. */
void rk_oracle_stats_get(const struct rk_oracle *o, struct rk_oracle_stats *out);

/* Zero the counters (e.g. before each policy's run, so each run reports its own). */
void rk_oracle_stats_reset(struct rk_oracle *o);

/* Short name of a rule: "exact", "nearest", "interp", "model-scaled", "model",
 * "nearest-point", "batch-scaled", "gavel", "type-scaled". */
const char *rk_oracle_source_name(enum rk_oracle_source s);

/*
 * The artifact family of a canonical plan (docs/references.md §1.2): tp or pp > 1
 * -> three digits PP,TP,DP ("244"; RK_ERANGE if a degree exceeds 9);
 * offload -> "zero-offload" ("zero-offload+gc" with checkpointing); zero 1-3 ->
 * "zero-dp"; checkpointing -> "gc"; otherwise (plain DP with or without
 * accumulation) -> "ga". OUT: buf (cap >= RK_ORACLE_FAMILY_MAX).
 */
int rk_oracle_plan_family(const struct rk_plan *plan, char *buf, size_t cap);

/*
 * Driver (src/sim/oracle/oracle_load.c; reads files): add every table under `dir`.
 * Each subfolder is one model: `<dir>/<model>/placements.csv` in the Rubick
 * format (header starts "exec_plan"), or Sia/Pollux `placements[-<gpu>].csv`
 * and `scalability[-<gpu>].csv`. A folder named `<model>_bsz<N>` holds a table
 * measured at global batch N. Subfolders and files are read in name order;
 * `validation-<B>.csv` files are job targets (rk_oracle_add_sia_target); other files (README) are
 * ignored. Fails with RK_EIO naming
 * the path, RK_ENOTFOUND when the folder holds no table, RK_EEXIST when a
 * (model, batch) is loaded twice, or the parser's "FILE:LINE:COL: ..." error
 * (FILE is the full path). Tables added before a failure stay added.
 */
int rk_oracle_load_dir(struct rk_oracle *o, const char *dir, struct rk_error *err);

#endif
