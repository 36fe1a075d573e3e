/*
 * Execution plans and placements: how one job spreads its fixed global batch
 * over GPUs. One canonical text form, "dp=4,tp=2,pp=1,mb=2,ga=1,gc=0,zero=1,offload=0",
 * is parsed and printed identically by the CLI, the API, the logs and the engines.
 */
#ifndef RUBICK_PLAN_H
#define RUBICK_PLAN_H

#include "rubick/error.h"

#include <stddef.h>
#include <stdint.h>

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

struct rk_model; /* model.h */

/* ---- plan text ------------------------------------------------------------ */

/*
 * Parse the canonical text "dp=4,tp=2,pp=1,mb=2,ga=1,gc=0,zero=1,offload=0".
 * Every one of the 8 keys must appear exactly once (any order), each value a
 * decimal integer in range (dp/tp/pp/mb/ga 1..RK_PLAN_DEGREE_MAX, gc/offload
 * 0..1, zero 0..3), no spaces. `name` names the input in messages ("--plan",
 * a file name); errors read "NAME:1:COL: what is wrong" with the 1-based
 * column at fault. Checks the per-plan invariants of rk_plan_validate that do
 * not depend on batch and GPUs (offload needs zero>=1, tp/pp>1 exclude ZeRO).
 * `out` is written only on success. Returns 0, RK_EINVAL or RK_ERANGE.
 */
int rk_plan_parse(const char *text, const char *name, struct rk_plan *out,
		  struct rk_error *err);

/*
 * Print `plan` in canonical form into buf (cap bytes, RK_PLAN_TEXT_MAX is
 * always enough). Returns the length written, or RK_ERANGE when cap is too
 * small (buf then holds a truncated, NUL-terminated prefix).
 */
int rk_plan_format(const struct rk_plan *plan, char *buf, size_t cap);

/*
 * Check the invariants listed above for global batch `global_batch` on `gpus`
 * GPUs. Returns 0, or RK_EINVAL with a message naming the broken invariant.
 */
int rk_plan_validate(const struct rk_plan *plan, int global_batch, int gpus,
		     struct rk_error *err);

/* 1 when a and b are the same plan, field by field. */
int rk_plan_equal(const struct rk_plan *a, const struct rk_plan *b);

/* Largest dp/tp/pp/mb/ga a plan may carry (bounds parsing, not hardware). */
#define RK_PLAN_DEGREE_MAX 65536

/* ---- plan spaces ----------------------------------------------------------------- */

/*
 * The plans a job's script can run: an upper bound per dimension. The zeroed
 * struct (limited == 0) is every plan, so a job that declares nothing keeps
 * every plan the planner emits. dp, mb and ga are never limited: every plan
 * of a job keeps its global batch (mb * ga * dp == B), and data parallelism
 * with accumulation is what every training script can do.
 */
struct rk_plan_space {
	int limited;  /* 0 = every plan (the other fields are then ignored) */
	int tp_max;   /* largest tensor-parallel degree, 1..RK_PLAN_DEGREE_MAX */
	int pp_max;   /* largest pipeline stage count, 1..RK_PLAN_DEGREE_MAX */
	int zero_max; /* largest ZeRO stage, 0..3 */
	int offload;  /* 1 = optimizer offload allowed */
	int gc;       /* 1 = activation checkpointing allowed */
};

#define RK_PLAN_SPACE_TEXT_MAX 80

/*
 * Parse a plan space: "all", or comma-separated items in any order, each at
 * most once:
 *   tp<=N, pp<=N       N in 1..RK_PLAN_DEGREE_MAX; "tp=1"/"pp=1" forbid the dimension
 *   zero<=Z           Z in 0..3; "zero=0" forbids ZeRO
 *   offload=yes|no, gc=yes|no
 *   dp                data parallel only: tp=1,pp=1,zero=0,offload=no (other
 *                     items may refine it, not contradict it)
 * e.g. "tp<=4,pp<=4,zero<=2,offload=no". Dimensions not named are unlimited.
 * Errors read "NAME:1:COL: what is wrong" naming the item. A space limiting
 * nothing reads as "all" (limited = 0). `out` is written only on success.
 * Returns 0, RK_EINVAL or RK_ERANGE.
 */
int rk_plan_space_parse(const char *text, const char *name, struct rk_plan_space *out,
			struct rk_error *err);

/*
 * Print the canonical form: "all", or only the limiting items in the order
 * tp, pp, zero, offload, gc ("tp=1" for a bound of 1, "zero=0" for none,
 * else "tp<=4"); parsing it gives back the same space. Returns the length or
 * RK_ERANGE when cap is too small (RK_PLAN_SPACE_TEXT_MAX always suffices).
 */
int rk_plan_space_format(const struct rk_plan_space *space, char *buf, size_t cap);

/* 1 when `plan` lies in `space` (a NULL space is every plan), else 0. */
int rk_plan_in_space(const struct rk_plan *plan, const struct rk_plan_space *space);

/*
 * The first dimension of `plan` outside `space` ("tp", "pp", "zero",
 * "offload", "gc"), checked in that order, or NULL when the plan lies in it.
 */
const char *rk_plan_space_violation(const struct rk_plan *plan,
				    const struct rk_plan_space *space);

/*
 * 0 when `plan` lies in `space`; else RK_EINFEASIBLE with a message naming
 * the dimension, e.g. "plan has tp=2 but the job's plan space allows tp=1".
 */
int rk_plan_space_check(const struct rk_plan *plan, const struct rk_plan_space *space,
			struct rk_error *err);

/* 1 when a and b admit the same plans. */
int rk_plan_space_equal(const struct rk_plan_space *a, const struct rk_plan_space *b);

/* ---- placements ------------------------------------------------------------ */

/*
 * Parse GPUs per node: a digit string "8888" (each digit 1..9 is one node) or
 * a comma list "16,16" (needed for nodes with more than 9 GPUs; each entry
 * 1..RK_PLACEMENT_NODE_GPUS_MAX). At most RK_PLACEMENT_MAX_NODES nodes.
 * Errors name `name` and the column. `out` is written only on success.
 */
int rk_placement_parse(const char *text, const char *name, struct rk_placement *out,
		       struct rk_error *err);

/*
 * Print a placement: the digit form when every node has <= 9 GPUs, else the
 * comma form. Returns the length, or RK_ERANGE if cap is too small (buf holds a
 * truncated prefix) or RK_EINVAL for an invalid placement.
 */
int rk_placement_format(const struct rk_placement *pl, char *buf, size_t cap);

/* Total GPUs of a placement (sum over nodes); 0 for an empty one. */
int rk_placement_total(const struct rk_placement *pl);

/*
 * The consolidated placement of `gpus` GPUs on nodes of `node_gpus` GPUs each:
 * full nodes first, the remainder on one last node (e.g. 20 GPUs, 8 per node ->
 * "884"). Returns RK_EINVAL when gpus < 1 or node_gpus < 1, RK_ERANGE when it
 * would need more than RK_PLACEMENT_MAX_NODES nodes.
 */
int rk_placement_consolidated(int gpus, int node_gpus, struct rk_placement *out,
			      struct rk_error *err);

#define RK_PLACEMENT_NODE_GPUS_MAX 1024
#define RK_PLACEMENT_TEXT_MAX (RK_PLACEMENT_MAX_NODES * 5 + 1)

/*
 * Whether `plan` can be laid out on `pl` with Megatron's rank order (tensor
 * rank fastest, then data, then pipeline): every tensor-parallel group of tp
 * consecutive ranks must sit inside one node, i.e. tp divides the GPU count of
 * every node. Also requires dp*tp*pp == total GPUs. Returns 0 or RK_EINFEASIBLE
 * with the reason.
 */
int rk_plan_check_placement(const struct rk_plan *plan, const struct rk_placement *pl,
			    struct rk_error *err);

/* ---- the Rubick artifact's plan names ---------------------------------------- */

/*
 * Read one `exec_plan` value of the Rubick artifact (traces/rubick) into a
 * canonical plan for `model` with `global_batch` on placement `pl`:
 *   "ga"            plain DP, gradient accumulation: largest mb that fits
 *   "gc"            plain DP, checkpointing, mb = B/dp, ga = 1
 *   "zero-dp"       ZeRO stage 2, largest mb that fits
 *   "zero-offload"  ZeRO-2 + optimizer offload, largest mb that fits
 *   "zero-offload+gc" the same with checkpointing
 *   "tp+ga"         tensor parallel over all GPUs of one node (tp = GPUs),
 *                   dp = pp = 1, largest mb that fits
 *   "PTD"           3 digits: pp, tp, dp (e.g. "244" = pp2,tp4,dp4); mb = 1,
 *                   ga = B/dp (Megatron's micro-batch 1: most micro-batches in
 *                   flight, smallest pipeline bubble)
 * "Largest mb that fits" is the largest divisor of B/dp whose memory estimate
 * fits `gpu_mem_mb` (the artifact's max_dp_atom_bsz tables are the same rule,
 * measured); when none fits, mb = 1 and the caller's memory check reports it.
 * Returns 0, RK_EINVAL (unknown name, batch not divisible, digits do not
 * multiply to the GPUs of pl).
 */
int rk_plan_from_artifact(const char *text, const char *name, const struct rk_model *model,
			  int global_batch, const struct rk_placement *pl, int64_t gpu_mem_mb,
			  struct rk_plan *out, struct rk_error *err);

/* ---- enumeration -------------------------------------------------------------- */

/*
 * Every plan `model` can run with `global_batch` on placement `pl` that fits
 * `gpu_mem_mb` per GPU and `host_mem_mb` of host memory per node (memory.h;
 * pass RK_MEM_UNLIMITED to skip a check). DP family (tp = pp = 1; zero 0..3
 * without offload, zero 2..3 with offload; every mb*ga split of B/dp; gc 0/1)
 * then, when model->allow_3d, 3D plans (pp*tp*dp = GPUs, tp groups inside a
 * node, pp divides layers, tp divides heads, zero = offload = 0, every mb*ga
 * split, gc 0/1). Order is deterministic: family (DP then 3D), then zero,
 * offload, pp, tp, gc, mb ascending. Writes at most `cap` plans to out and
 * the number found to *count (which may exceed cap: call again with a larger
 * array). Returns 0 or RK_EINVAL for bad arguments.
 */
int rk_plan_enumerate(const struct rk_model *model, int global_batch,
		      const struct rk_placement *pl, int64_t gpu_mem_mb, int64_t host_mem_mb,
		      struct rk_plan *out, size_t cap, size_t *count, struct rk_error *err);

#endif
