/*
 * Execution plans and placements: how one job spreads its fixed global batch
 * over GPUs. One canonical text form, "dp=4,tp=2,pp=1,mb=2,ga=1,gc=0,zero=1,offload=0",
 * is parsed and printed identically by the CLI, the API, the logs and the engines.
 */
#ifndef RUBICK_PLAN_H
#define RUBICK_PLAN_H

#include "rubick/error.h"

#include <stddef.h>

/* Most nodes one placement may span. */
#define RK_PLACEMENT_MAX_NODES 64

/*
 * Invariants of a valid plan for global batch B on G GPUs:
 *   mb * ga * dp == B        (global batch unchanged by any reconfiguration)
 *   dp * tp * pp == G
 *   zero in 0..3; offload implies zero >= 1; tp and pp > 1 exclude zero and offload.
 */
struct rk_plan {
	int dp;      /* data-parallel degree (replicas) */
	int tp;      /* tensor-parallel degree, always inside one node */
	int pp;      /* pipeline stages */
	int mb;      /* micro-batch per replica per step (samples) */
	int ga;      /* gradient-accumulation steps per iteration */
	int gc;      /* 1 = activation (gradient) checkpointing: forward recomputed */
	int zero;    /* ZeRO stage 0..3 (0 = plain data parallel) */
	int offload; /* 1 = optimizer states and update on the host CPU (ZeRO-Offload) */
};

/* GPUs per node of a job, in node order, e.g. "8888" = 4 nodes x 8 GPUs. */
struct rk_placement {
	int n_nodes;                         /* nodes spanned, 0 for none */
	int gpus[RK_PLACEMENT_MAX_NODES];    /* GPUs on each node, each >= 1 */
};

#define RK_PLAN_TEXT_MAX 96

#endif
