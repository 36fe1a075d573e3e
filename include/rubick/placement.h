/*
 * Placement helpers every policy shares: consolidated gang placement of a
 * job's GPUs on the free capacity, with per-GPU CPU and memory shares.
 * Deterministic: ties always go to the lowest node id.
 */
#ifndef RUBICK_PLACEMENT_H
#define RUBICK_PLACEMENT_H

#include "rubick/cluster.h"
#include "rubick/job.h"

#include <stdint.h>

/* Per-GPU share meaning "the node's GPU-proportional share" (cpus / gpus). */
#define RK_SHARE_PROPORTIONAL (-1)

struct rk_place_req {
	int gpus;                /* GPUs wanted (gang: all or nothing), >= 1 */
	int cpus_per_gpu;        /* CPUs with each GPU, or RK_SHARE_PROPORTIONAL */
	int64_t mem_mb_per_gpu;  /* host memory with each GPU (MiB), or RK_SHARE_PROPORTIONAL */
	const char *gpu_type;    /* only nodes of this type; NULL = any, one type per job */
	int gpus_multiple;       /* GPUs on every node a multiple of this (tensor-parallel
				  * width stays inside a node); 0 or 1 = any */
};

/*
 * The request of a job as the classic baselines see it: its requested GPUs,
 * ceil(req_cpus / req_gpus) CPUs and ceil(req_mem_mb / req_gpus) MiB per GPU
 * (the node's proportional share when the job asked for none), and the
 * tensor-parallel width of its requested plan as the per-node multiple.
 */
void rk_place_req_from_job(const struct rk_job *job, struct rk_place_req *req);

/*
 * Consolidated gang placement (Tiresias' consolidate-by-default, algorithms.md
 * §5.5): one node when one fits (best fit: the node left with the fewest usable
 * GPUs); otherwise the fewest nodes, filling the nodes with the most usable
 * GPUs and best-fitting the remainder. Writes `out` (OUT: replaced; caller
 * frees with rk_alloc_fini) and returns 0, or RK_EINFEASIBLE with `out` empty
 * when the free capacity cannot hold the request. Does not change `cap`.
 */
int rk_place_gang(const struct rk_capacity *cap, const struct rk_place_req *req,
		  struct rk_alloc *out);

/* rk_place_gang, then take the result from `cap` when it fits. */
int rk_place_gang_take(struct rk_capacity *cap, const struct rk_place_req *req,
		       struct rk_alloc *out);

#endif
