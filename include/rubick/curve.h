/*
 * Resource sensitivity curves (docs/references.md §1.6): for one job (model, global
 * batch) and every resource point — GPUs 1..N on a consolidated placement, CPU
 * threads per GPU, inter-node bandwidth — the best feasible plan and its
 * predicted throughput, the minimal resources that reach the best throughput
 * seen so far within 1% (the "1% rule"), and the slope. Built once per job and
 * model update; every lookup afterwards is O(1), so policies call it freely.
 */
#ifndef RUBICK_CURVE_H
#define RUBICK_CURVE_H

#include "rubick/error.h"
#include "rubick/model.h"
#include "rubick/perf.h"
#include "rubick/plan.h"

#include <stdint.h>

/* Most CPU or bandwidth levels of one curve. */
#define RK_CURVE_LEVELS_MAX 8

/* A cell within this factor of a smaller one counts as reached by it (§1.6). */
#define RK_CURVE_MIN_GAIN 1.01

struct rk_curve_opts {
	int max_gpus;        /* GPU axis 1..max_gpus */
	int node_gpus;       /* GPUs per node: g GPUs are placed as full nodes of node_gpus
				plus the remainder on one node (rk_placement_consolidated) */
	int n_cpus;          /* CPU levels, 1..RK_CURVE_LEVELS_MAX */
	int cpus_per_gpu[RK_CURVE_LEVELS_MAX]; /* CPU threads per GPU, ascending, >= 1 */
	int n_bw;            /* bandwidth levels, 1..RK_CURVE_LEVELS_MAX */
	double net_gbps[RK_CURVE_LEVELS_MAX];  /* inter-node NIC bandwidth (GB/s), ascending, > 0;
						  matters only on placements spanning nodes */
	int64_t gpu_mem_mb;  /* memory of one GPU (MiB) */
	int64_t host_mem_mb; /* host memory the job may use per node (MiB), or RK_MEM_UNLIMITED */
	struct rk_plan_space space; /* plans the job supports; zeroed (the default) = every plan */
};

/*
 * Defaults for the A800 testbed of the Rubick traces: 1..64 GPUs, 8 per node,
 * CPU levels 1, 2, 4, 8 threads per GPU (the artifact's CPU axis where
 * ZeRO-Offload is sensitive), one bandwidth level = env->net_gbps, 80 GB GPUs
 * (81920 MiB) and 1600 GB of host memory per node (docs/references.md §1.9).
 */
void rk_curve_opts_default(const struct rk_perf_env *env, struct rk_curve_opts *o /* OUT */);

struct rk_curve_point {
	int feasible;            /* 1 when some plan fits at these resources or fewer */
	/* the best plan at exactly this point (valid when has_plan) */
	int has_plan;
	struct rk_plan plan;
	double iter_ms;          /* its predicted iteration time */
	double tput_sps;         /* its throughput (samples/s), 0 when !has_plan */
	/* after the 1% rule: the fewest resources reaching the best throughput so far */
	int min_gpus;
	int min_cpus_per_gpu;
	double min_net_gbps;
	struct rk_plan min_plan; /* plan to run on those minimal resources */
	double min_tput_sps;     /* its throughput; non-decreasing in GPUs, CPUs, bandwidth */
	double slope_sps;        /* min_tput(g+1) - min_tput(g): samples/s one more GPU brings;
				    0 at the last point */
};

struct rk_curve {
	char model[RK_MODEL_NAME_MAX];
	int global_batch;
	struct rk_curve_opts opts;
	struct rk_curve_point *points; /* owned: max_gpus x n_cpus x n_bw, GPU-major */
	int max_gpu, max_cpu, max_bw;  /* indexes of the max config (fewest resources within 1%) */
	long n_predictions;            /* performance-model calls made to build it */
};

/*
 * Build the curve of `model` (structure, forward time) with performance
 * parameters `k` under cluster constants `env`, for `global_batch`. Every
 * point considers every plan of rk_plan_enumerate on the consolidated placement
 * of its GPUs that fits memory and lies in opts->space. On success fills *out (free with
 * rk_curve_fini) and returns 0; RK_EINVAL names the bad option or input;
 * RK_ERANGE when the performance model rejects its parameters; RK_ENOMEM.
 * *out is untouched on failure.
 */
int rk_curve_build(const struct rk_model *model, const struct rk_perf_params *k,
		   const struct rk_perf_env *env, int global_batch,
		   const struct rk_curve_opts *opts, struct rk_curve *out, struct rk_error *err);

/* Free what the curve owns; NULL is fine. */
void rk_curve_fini(struct rk_curve *c);

/* The point (gpus, CPU level index, bandwidth level index); NULL when out of range. O(1). */
const struct rk_curve_point *rk_curve_at(const struct rk_curve *c, int gpus, int cpu_idx,
					 int bw_idx);

/*
 * The point for actual resources: `gpus` clamped to max_gpus, the highest CPU
 * and bandwidth levels not above cpus_per_gpu and net_gbps (the lowest level
 * when below all). NULL when gpus < 1. O(levels).
 */
const struct rk_curve_point *rk_curve_lookup(const struct rk_curve *c, int gpus,
					     int cpus_per_gpu, double net_gbps);

/* The max config: the point with the highest min_tput_sps, preferring fewer resources. */
const struct rk_curve_point *rk_curve_max(const struct rk_curve *c);

/*
 * Slope of the Rubick artifact's policy (§1.6): |T(g) - T(g + delta)| / |delta|
 * in samples/s per GPU, T = min_tput_sps, g + delta clamped to 1..max_gpus, at
 * CPU/bandwidth level indexes. 0 when delta == 0 or out of range.
 */
double rk_curve_slope(const struct rk_curve *c, int gpus, int delta, int cpu_idx, int bw_idx);

#endif
