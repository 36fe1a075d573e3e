/*
 * Cluster state: nodes with their GPUs, CPUs, host memory and bandwidths, and
 * the allocation a job holds on them. Shared by the simulator, the daemon and
 * every policy.
 */
#ifndef RUBICK_CLUSTER_H
#define RUBICK_CLUSTER_H

#include "rubick/error.h"

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
};

/* A job's allocation: shares on distinct nodes. n == 0 means nothing held. */
struct rk_alloc {
	int n;
	struct rk_share *shares; /* owned, n entries */
};

#endif
