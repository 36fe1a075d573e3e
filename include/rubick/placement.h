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

/*
 * Where a gang goes when no single node has room for it (docs/policies.md,
 * "Placement"). Every mode puts a job on one node when one has room (best fit).
 */
enum rk_place_mode {
	/* Else the fewest nodes with room, largest first (e.g. 3+1): the Sia
	 * artifact's Tiresias port; rubick's own policies. The zero value. */
	RK_PLACE_SPREAD = 0,
	/* Yarn (Tiresias' and Muri's simulators, switch.py ms_yarn_alloc_res): a
	 * job that fits one node's installed GPUs waits for one node; a larger
	 * one takes whole idle nodes plus one node for the remainder. */
	RK_PLACE_CONSOLIDATED,
	/* Synergy (msr-fiddle/synergy cluster.py allocate_synergy_placement):
	 * GPUs from the nodes with the fewest free GPUs first. */
	RK_PLACE_LEAST_FREE,
};

/* "consolidated|spread|least-free": the names rk_place_mode_parse accepts. */
#define RK_PLACE_MODE_NAMES "consolidated, spread, least-free"

/* Mode named `name` into *out; RK_EINVAL (out untouched) when unknown. */
int rk_place_mode_parse(const char *name, enum rk_place_mode *out);

/* The name of `mode` (static string). */
const char *rk_place_mode_name(enum rk_place_mode mode);

struct rk_place_req {
	int gpus;                /* GPUs wanted (gang: all or nothing), >= 1 */
	int cpus_per_gpu;        /* CPUs with each GPU, or RK_SHARE_PROPORTIONAL */
	int64_t mem_mb_per_gpu;  /* host memory with each GPU (MiB), or RK_SHARE_PROPORTIONAL */
	const char *gpu_type;    /* only nodes of this type; NULL = any, one type per job */
	int gpus_multiple;       /* GPUs on every node a multiple of this (tensor-parallel
				  * width stays inside a node); 0 or 1 = any */
	enum rk_place_mode mode; /* when no single node has room; 0 = spread */
};

/*
 * The request of a job as the classic baselines see it: its requested GPUs,
 * ceil(req_cpus / req_gpus) CPUs and ceil(req_mem_mb / req_gpus) MiB per GPU
 * (the node's proportional share when the job asked for none), and the
 * tensor-parallel width of its requested plan as the per-node multiple.
 */
void rk_place_req_from_job(const struct rk_job *job, struct rk_place_req *req);

/*
 * Gang placement: one node when one fits (best fit: the node left with the
 * fewest usable GPUs); otherwise as req->mode says: spread over the fewest
 * nodes, filling the nodes with the most usable GPUs and best-fitting the
 * remainder; consolidated: none when the job fits one node of its type, else
 * whole idle nodes (most GPUs first) and the remainder best fit on one more;
 * least-free: the nodes with the fewest usable GPUs first. Writes `out` (OUT: replaced; caller
 * frees with rk_alloc_fini) and returns 0, or RK_EINFEASIBLE with `out` empty
 * when the free capacity cannot hold the request. Does not change `cap`.
 */
int rk_place_gang(const struct rk_capacity *cap, const struct rk_place_req *req,
		  struct rk_alloc *out);

/* rk_place_gang, then take the result from `cap` when it fits. */
int rk_place_gang_take(struct rk_capacity *cap, const struct rk_place_req *req,
		       struct rk_alloc *out);

#endif
