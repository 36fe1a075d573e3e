/*
 * Aryl/Lyra capacity loaning and elastic scaling (issue 5, docs/aryl.md,
 * docs/references.md §2): the plan an elastic job runs on any
 * worker count, and the greedy reclaim of loaned inference servers (§2.3).
 * Pure functions over a scheduling snapshot; no I/O.
 */
#ifndef RUBICK_ARYL_H
#define RUBICK_ARYL_H

#include "rubick/policy.h"

/*
 * 1 when Aryl may scale the job: it accepts a range of worker counts
 * (min_gpus < max_gpus) and its requested plan is data parallel (tp = pp = 1):
 * Aryl's workers are data-parallel replicas (§2.2), and a tensor- or
 * pipeline-parallel job given a range (rubick sim --gpu-range free) runs at
 * its request, as --elastic-share leaves such jobs inelastic.
 */
int rk_aryl_job_elastic(const struct rk_job *job);

/*
 * The plan `job` runs on `gpus` workers: data parallel with the global batch
 * kept (§2.2: per-worker batch B/w), mb from the request when it divides B/w,
 * else mb = B/w with ga = 1; the request's ZeRO/offload/gc kept. Its own
 * request on req_gpus returns req_plan unchanged. RK_EINFEASIBLE when gpus
 * does not divide the global batch (no whole per-worker batch).
 */
int rk_aryl_plan_for(const struct rk_job *job, int gpus, struct rk_plan *out);

/* Per-job cost of a preemption in the reclaim greedy (§2.3 c_j). */
struct rk_reclaim_stats {
	int n_servers;    /* servers chosen, in order */
	int *servers;     /* owned node ids */
	int preemptions;  /* jobs checkpointed and requeued */
	int scale_ins;    /* elastic jobs scaled in (kept >= min) */
	double lost_gpu_s; /* GPU-seconds since the preempted jobs' last change (lost work) */
};

void rk_reclaim_stats_fini(struct rk_reclaim_stats *s);

/*
 * Pick `k` of the up loaned servers (pool RK_POOL_LOANED) of in->cluster to
 * return, greedily by the server preemption cost of §2.3: repeatedly the
 * server whose return preempts fewest jobs, then loses least work (GPUs x time
 * since the job's last start/change, the checkpoint we assume), then has
 * fewest busy GPUs, fewest jobs, lowest id; costs recomputed after each pick
 * because scaling a job in or preempting it changes the cost of the servers it
 * also uses. An elastic job is scaled in by its workers on the server when it
 * keeps >= min_gpus and a plan exists for the rest; otherwise it is preempted
 * (all its workers released). Appends one decision per touched job to `out`
 * (alloc.n == 0 = preempt) and fills *stats (OUT, release with
 * rk_reclaim_stats_fini). RK_ERANGE when fewer than k loaned servers are up.
 */
int rk_aryl_reclaim(const struct rk_sched_input *in, int k, struct rk_decisions *out,
		    struct rk_reclaim_stats *stats, struct rk_error *err);

/*
 * The reclaim hook of a policy (issue 5): choose `k` loaned servers to give
 * back, append decisions moving every job off them, fill *stats.
 */
typedef int (*rk_reclaim_fn)(void *state, const struct rk_sched_input *in, int k,
			     struct rk_decisions *out, struct rk_reclaim_stats *stats,
			     struct rk_error *err);

/*
 * The reclaim hook of `policy` (a side table keyed by the ops, so that
 * rk_policy_ops keeps its layout for existing initialisers), or NULL: the
 * driver then applies the generic §2.3 greedy, rk_aryl_reclaim.
 */
rk_reclaim_fn rk_policy_reclaim_hook(const struct rk_policy_ops *policy);

#endif
