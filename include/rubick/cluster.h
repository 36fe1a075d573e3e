/*
 * Cluster state: nodes with their GPUs, CPUs, host memory and bandwidths, and
 * the allocation a job holds on them. Shared by the simulator, the daemon and
 * every policy.
 */
#ifndef RUBICK_CLUSTER_H
#define RUBICK_CLUSTER_H

#include "rubick/error.h"

#include <stddef.h>
#include <stdint.h>

#define RK_GPU_TYPE_MAX 16

enum rk_pool {
	RK_POOL_TRAINING = 0, /* always available */
	RK_POOL_LOANED = 1,   /* inference server on loan; may be reclaimed (Aryl) */
};

struct rk_node {
	int id;                          /* index in rk_cluster.nodes */
	char gpu_type[RK_GPU_TYPE_MAX];  /* e.g. "a800" */
	int gpus;                        /* GPUs installed */
	int cpus;                        /* CPU threads */
	int64_t mem_mb;                  /* host memory (MiB) */
	double nvlink_gbps;              /* intra-node GPU-GPU bandwidth (GB/s) */
	double net_gbps;                 /* inter-node NIC bandwidth (GB/s) */
	enum rk_pool pool;
	int up;                          /* 0 = down, drained or returned: no capacity */
	int64_t gpu_mem_mb;              /* memory of one GPU (MiB); spec key gpumem */
};

struct rk_cluster {
	int n_nodes;
	struct rk_node *nodes; /* owned */
};

/* The part of a job's allocation on one node. */
struct rk_share {
	int node;       /* node id */
	int gpus;
	int cpus;
	int64_t mem_mb;
	/*
	 * Which GPUs of the node (bit i = GPU i), for GPU sharing (issue 6,
	 * docs/sharing.md): two jobs whose masks overlap share those GPUs. 0 =
	 * not named: any `gpus` GPUs no other job holds (every policy that does
	 * not share). When set, its popcount equals `gpus`.
	 */
	uint64_t gpu_mask;
};

/* A job's allocation: shares on distinct nodes. n == 0 means nothing held. */
struct rk_alloc {
	int n;
	struct rk_share *shares; /* owned, n entries */
};

/* ---- Cluster spec (src/policy/common/cluster.c) ---------------------------
 * Text form, one or more groups joined by '+' or written one per line ('#'
 * starts a comment):
 *
 *   NODESxGPUS[:TYPE][,cpus=N][,mem=SIZE][,nvlink=GBPS][,net=GBPS][,gpumem=SIZE]
 *             [,pool=training|loaned]
 *
 * e.g. "8x8:a800,cpus=96,mem=1600G,nvlink=400,net=100" (the Rubick testbed,
 * docs/references.md §1.9). SIZE takes a K, M, G or T suffix (binary units); a bare
 * number is MiB. Defaults scale the Rubick A800 testbed node (96 CPUs, 1600 GiB,
 * 400 GB/s NVLink, 100 GB/s RDMA for 8 GPUs) per GPU: TYPE "a800", cpus = 12 x
 * GPUS, mem = 200 GiB x GPUS, nvlink = 400, net = 100, pool = training, and
 * gpumem from rk_gpu_type_mem_mb(TYPE). TYPE must be in the GPU table (gpu.h,
 * docs/gpus.md; case-insensitive, aliases resolved to the canonical name):
 * an unknown type is an error that lists the known ones.
 * Node ids run 0.. in the order the groups are written.
 */
#define RK_CLUSTER_MAX_NODES 1000000
#define RK_NODE_MAX_GPUS 64

/* The GPU type nodes get when the spec names none. */
#define RK_CLUSTER_DEFAULT_GPU_TYPE "a800"

/*
 * Parse the spec in `text` (NUL-terminated; `name` labels messages, e.g. the
 * file name or "--cluster") into `out` (OUT: caller's storage, released with
 * rk_cluster_fini). On error `out` is left empty and `err` says
 * "NAME:LINE:COL: what is wrong".
 */
int rk_cluster_parse(struct rk_cluster *out, const char *text, const char *name,
		     struct rk_error *err);

/*
 * Memory of one GPU of a known type (MiB), from the GPU table (gpu.h): e.g.
 * a800 80 GiB, a100 (Sia's dgx-ext A100-40GB) 40 GiB, v100 32 GiB, t4 16 GiB,
 * 2080ti 11 GiB; a type not in the table (the parser rejects those) 80 GiB.
 */
int64_t rk_gpu_type_mem_mb(const char *type);

/* Release the nodes of `c` and leave it empty; NULL and empty clusters are fine. */
void rk_cluster_fini(struct rk_cluster *c);

/* Deep copy of `src` into `dst` (OUT: caller's storage). */
int rk_cluster_copy(struct rk_cluster *dst, const struct rk_cluster *src);

/* GPUs installed on nodes that are up. */
int rk_cluster_total_gpus(const struct rk_cluster *c);

/*
 * Canonical spec text of `c` into buf (one group per run of identical nodes,
 * '+'-joined, every key written). Returns the length it needed, as snprintf.
 */
int rk_cluster_format(const struct rk_cluster *c, char *buf, size_t size);

/* ---- Allocations (src/policy/common/alloc.c) ----------------------------- */

void rk_alloc_init(struct rk_alloc *a);           /* empty, nothing held */
void rk_alloc_fini(struct rk_alloc *a);           /* free shares, leave empty */
int rk_alloc_copy(struct rk_alloc *dst, const struct rk_alloc *src); /* dst replaced */
/*
 * Add GPUs/CPUs/memory on `node`, merging with an existing share on that node
 * and keeping shares sorted by node id (the canonical order).
 */
int rk_alloc_add(struct rk_alloc *a, int node, int gpus, int cpus, int64_t mem_mb);
int rk_alloc_total_gpus(const struct rk_alloc *a);
int rk_alloc_total_cpus(const struct rk_alloc *a);
int64_t rk_alloc_total_mem_mb(const struct rk_alloc *a);
/* 1 when both hold the same resources on the same nodes (share order ignored). */
int rk_alloc_equal(const struct rk_alloc *a, const struct rk_alloc *b);
/* 1 when both use the same GPUs per node (CPUs and memory ignored). */
int rk_alloc_same_gpus(const struct rk_alloc *a, const struct rk_alloc *b);

struct rk_placement;
/*
 * GPUs per node of `a`, nodes in node-id order, shares with no GPU skipped.
 * RK_ERANGE when it spans more than RK_PLACEMENT_MAX_NODES nodes.
 */
int rk_alloc_to_placement(const struct rk_alloc *a, struct rk_placement *out);
/*
 * The same, counts sorted ascending: the canonical key of the Rubick measured
 * tables (placements.csv writes "233", "1124"; docs/references.md §6 D1 and §7).
 */
int rk_alloc_to_placement_sorted(const struct rk_alloc *a, struct rk_placement *out);

/* ---- Capacity view (src/policy/common/alloc.c) ---------------------------
 * Free GPUs, CPUs and memory per node. Down nodes have no capacity. take and
 * give are all-or-nothing and never let a count go negative or above what the
 * node has installed.
 */
struct rk_capacity {
	const struct rk_cluster *cluster; /* borrowed */
	int n_nodes;
	int *free_gpus;       /* owned, n_nodes entries */
	int *free_cpus;       /* owned */
	int64_t *free_mem_mb; /* owned */
	int free_gpus_total;  /* sum of free_gpus, kept by take/give */
	int one_gpu_type;     /* 1 = every node has the same GPU type, 0 = not, -1 = not known
			       * yet (a cache filled by the first placement) */
};

/* Everything on up nodes free. */
int rk_capacity_init(struct rk_capacity *cap, const struct rk_cluster *c);
void rk_capacity_fini(struct rk_capacity *cap);
int rk_capacity_copy(struct rk_capacity *dst, const struct rk_capacity *src);
/*
 * Capacity left after the allocations of `jobs` (n entries); RK_EINFEASIBLE
 * naming the job and node when they over-commit a node.
 */
struct rk_job;
int rk_capacity_from_jobs(struct rk_capacity *cap, const struct rk_cluster *c,
			  struct rk_job *const *jobs, int n, struct rk_error *err);
/* Take `a`; RK_EINFEASIBLE (nothing taken) when a node lacks room or is unknown. */
int rk_capacity_take(struct rk_capacity *cap, const struct rk_alloc *a, struct rk_error *err);
/* Give `a` back; RK_EINTERNAL (nothing given) if that would exceed what is installed. */
int rk_capacity_give(struct rk_capacity *cap, const struct rk_alloc *a, struct rk_error *err);
/* 1 when `a` fits in the free capacity. */
int rk_capacity_fits(const struct rk_capacity *cap, const struct rk_alloc *a);
int rk_capacity_free_gpus(const struct rk_capacity *cap); /* sum over nodes */

#endif
