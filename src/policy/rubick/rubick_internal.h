/*
 * Internal to the Rubick policy (src/policy/rubick/rubick*.c): a job's "view" of the
 * GPU axis of its sensitivity curve, and the cache that keeps views across
 * rounds. Not a public header.
 */
#ifndef RUBICK_POLICY_RUBICK_INTERNAL_H
#define RUBICK_POLICY_RUBICK_INTERNAL_H

#include "rubick/cluster.h"
#include "rubick/job.h"
#include "rubick/perf.h"
#include "rubick/plan.h"
#include "rubick/policy.h"

#include <stdint.h>

/* What a variant may reconfigure (the breakdown study). */
enum rubick_mode {
	RUBICK_FULL = 0,      /* plan and resources */
	RUBICK_PLAN_ONLY = 1, /* resources as requested, best plan for them */
	RUBICK_RES_ONLY = 2,  /* user's plan kept (degree scaled), resources chosen */
};

/*
 * Throughput of one job against its GPU count, after the minimal-resource
 * rule of §1.6: entry g says what giving the job g GPUs is worth and how to
 * use them. tput_sps is non-decreasing in g; use_gpus[g] <= g is the fewest
 * GPUs reaching it (the rest would be wasted); plan/cpus_per_gpu are what to
 * run on use_gpus[g] GPUs. Entry 0 and infeasible sizes have tput_sps == 0.
 */
struct rubick_view {
	int max_gpus;
	double *tput_sps;     /* max_gpus + 1 */
	int *use_gpus;        /* max_gpus + 1 */
	int *cpus_per_gpu;    /* max_gpus + 1 */
	struct rk_plan *plan; /* max_gpus + 1 */
};

struct rubick_cache; /* opaque: views by (mode, model, batch, parameters, request) */

/* Restart delay the policy plans with (s): the testbed's measured 260 s (§1.8.2 item 7). */
#define RUBICK_RESTART_S_DEFAULT 260.0

struct rubick_state {
	enum rubick_mode mode;
	double restart_s;
	int order_srtf; /* 1 (default): shortest predicted remaining time first; 0: FIFO */
	/* 0 (default): a guaranteed job runs its requested plan on its requested
	 * GPUs; 1: re-planned and resized on its curve above its baseline (rubick.c) */
	int reconfigure_guaranteed;
	struct rk_tenant_quota *quota; /* option quota= (owned), overriding the driver's */
	int n_quota;
	struct rubick_cache *cache;
	/* Composition with the co-location policies (rubick_share.c and
	 * rubick_place.c): option sharing=on (a pending best-effort job may share
	 * GPUs with a running one when the driver allows it), share_window=N
	 * (pending jobs per round that may try), placement=contention (SJF-BCO's
	 * node choice for jobs on several nodes). */
	int share;
	int share_window;
	int place_contention;
	struct rubick_share_state *share_st; /* owned, NULL unless share */
	/* Quiet rounds (rubick_quiet.c): owned, NULL with option quiet=off. */
	struct rubick_quiet *quiet;
	int no_quiet; /* option quiet=off */
};

struct rubick_quiet;
/* The state quiet rounds keep across rounds. OUT: *out. RK_ENOMEM. */
int rubick_quiet_create(struct rubick_quiet **out);
void rubick_quiet_destroy(struct rubick_quiet *q);

struct rubick_share_state;
/* The state sharing=on keeps across rounds (rubick_share.c). OUT: *out. RK_ENOMEM. */
int rubick_share_state_create(struct rubick_share_state **out);
void rubick_share_state_destroy(struct rubick_share_state *s);

/* Parse `options` and allocate the state of a `mode` policy. OUT: *state. */
int rubick_state_create(void **state, const char *options, struct rk_error *err,
			enum rubick_mode mode);
void rubick_state_destroy(void *state);
/* Guaranteed GPUs `tenant` may hold, or -1 when it has no quota. */
int rubick_quota_of(const struct rubick_state *st, const struct rk_sched_input *in,
		    const char *tenant);

int rubick_cache_create(struct rubick_cache **out);
void rubick_cache_destroy(struct rubick_cache *c);
/* Drop every view when the cache is full, or only the request baselines when
 * those fill it; call between rounds only. */
void rubick_cache_trim(struct rubick_cache *c);

/*
 * The view of `job` under `mode` on nodes of `node_gpus` GPUs with
 * `gpu_mem_mb` per GPU and `host_mem_mb` per node, up to `max_gpus`. Borrowed
 * from the cache (valid until rubick_cache_trim or destroy). Built from the
 * sensitivity curve (rk_curve_build, full and plan-only modes) or from the
 * user's plan scaled with rk_baseline_plan_scale (res-only). A job with
 * trace-native speeds (rk_job.native_sps) gets them as its throughputs in
 * full and res-only modes (rubick_view.c native_view). Returns 0, or the
 * curve's / model's error (the job then cannot be planned by the model).
 */
int rubick_view_get(struct rubick_cache *c, enum rubick_mode mode, const struct rk_job *job,
		    const struct rk_perf_env *env, int node_gpus, int64_t gpu_mem_mb,
		    int64_t host_mem_mb, int max_gpus, const struct rubick_view **out,
		    struct rk_error *err);

/*
 * Throughput (samples/s) of `job`'s request: its requested plan on its
 * requested GPUs laid out consolidated on nodes of `node_gpus`, with its
 * requested threads per GPU (rk_baseline_tput_sps) - the normalisation and
 * guaranteed baseline of §1.7. 0 when the model cannot price it. Remembered
 * in the cache by (model, parameters, batch, request, node size), as views
 * are: a round asks it of every active job.
 */
double rubick_view_baseline(struct rubick_cache *c, const struct rk_job *job,
			    const struct rk_perf_env *env, int node_gpus);

/*
 * Both lookups a round makes for every active job: rubick_view_get (when
 * max_gpus >= 1; OUT: *view, NULL when there is none) and the request's
 * baseline, which it returns. The answer is remembered per job id with
 * everything both depend on, so a job whose inputs did not change since the
 * last round skips hashing and probing the cache's 168-byte keys (a quarter of
 * a rubick simulation's time on philly.csv): the same answers, cheaper.
 */
double rubick_view_job(struct rubick_cache *c, enum rubick_mode mode, const struct rk_job *job,
                       const struct rk_perf_env *env, int node_gpus, int64_t gpu_mem_mb,
                       int64_t host_mem_mb, int max_gpus, const struct rubick_view **view);
/* Room in rubick_view_job's memo for n_jobs active jobs; call between rounds. */
void rubick_cache_reserve_jobs(struct rubick_cache *c, int n_jobs);
/* The place of job `id` in the last round's order as set below, or -1 when
 * the memo does not know it (a hint for sorting: never a decision input). */
int rubick_cache_rank(const struct rubick_cache *c, int64_t id);
/* Remember it (for a job rubick_view_job saw; others are ignored). */
void rubick_cache_set_rank(struct rubick_cache *c, int64_t id, int rank);

#endif
