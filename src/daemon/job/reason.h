/*
 * Why a pending job waits, like squeue's %r (issue 13; docs/api.md "Pending
 * reasons"): a pure function of what a scheduling round knows — the
 * cluster's up nodes, the view the round decided on, the jobs holding
 * allocations after its decisions, the tenants' quotas and the decisions
 * dropped over them. No daemon state: sched_reason.c feeds it every round
 * and tests/daemon/test_reason.c checks it alone.
 */
#ifndef RUBICKD_REASON_H
#define RUBICKD_REASON_H

#include "rubick/cluster.h"
#include "rubick/error.h"
#include "rubick/job.h"
#include "rubick/policy.h"

#include <stdint.h>

enum rkd_reason {
	RKD_REASON_NONE = 0,   /* not pending, or not looked at by a round yet */
	RKD_REASON_RESOURCES,  /* fits the cluster, but not in what is free now */
	RKD_REASON_PRIORITY,   /* fits in what is free now: the policy ordered others first */
	RKD_REASON_QUOTA,      /* its tenant's gpu_quota or guaranteed_gpu_quota is held */
	RKD_REASON_HELD,       /* held by its owner or the admin (never computed here) */
	RKD_REASON_INFEASIBLE, /* more than the up nodes have, even all free */
};

/* The name docs/api.md gives `r` ("Resources", ...; static). */
const char *rkd_reason_name(enum rkd_reason r);

struct rkd_reason_input {
	const struct rk_cluster *installed; /* the nodes as the engine reports them (down = gone) */
	const struct rk_cluster *view;      /* what the round decided on (sched_view.c) */
	struct rk_job *const *jobs;         /* every job the policy saw, holders included */
	int n_jobs;
	/* the jobs of `jobs` holding an allocation, any order; NULL = find them in jobs */
	struct rk_job *const *holders;
	int n_holders;
	const struct rk_tenant_quota *quotas; /* may be NULL */
	int n_quotas;
	const unsigned char
	    *quota_dropped; /* per job: a decision was dropped over a quota; NULL = none */
};

/*
 * What every job's reason is measured against, built once per round from
 * `in` (the capacities with the holders' allocations taken, what each
 * quota'd tenant holds): rkd_reason_ctx_init, then rkd_reason_of per job.
 * `sig` digests it: a round whose sig equals the previous round's gives
 * every job it did not change the reason it had (sched_reason.c).
 */
#define RKD_REASON_SHAPES 32
struct rkd_reason_ctx {
	const struct rkd_reason_input *in;
	struct rk_capacity empty, now;
	long long *held, *held_g; /* per in->quotas entry: GPUs held, by guaranteed jobs */
	uint64_t sig;
	struct rkd_reason_shape *shapes; /* placement answers per request shape */
	int n_shapes;
};

/* RK_ENOMEM (nothing to fini) or 0; `in` is borrowed until rkd_reason_ctx_fini. */
int rkd_reason_ctx_init(struct rkd_reason_ctx *c, const struct rkd_reason_input *in,
                        struct rk_error *err);
void rkd_reason_ctx_fini(struct rkd_reason_ctx *c);

/*
 * The reason of `j` (RKD_REASON_NONE when it is not pending), first match
 * wins: Infeasible when its smallest request (min_gpus, with its CPU and
 * memory per GPU) cannot be placed on the up nodes even empty; Quota when
 * `quota_dropped` (a decision for it was dropped over a quota), or its
 * tenant already holds so much that min_gpus more would pass gpu_quota (or
 * guaranteed_gpu_quota for a guaranteed job); Priority when it can be
 * placed in what is free after the round; else Resources.
 */
enum rkd_reason rkd_reason_of(struct rkd_reason_ctx *c, const struct rk_job *j, int quota_dropped);

/* rkd_reason_of for each of in->jobs (OUT: out[i]). RK_ENOMEM (out untouched). */
int rkd_reasons_compute(const struct rkd_reason_input *in, enum rkd_reason *out,
                        struct rk_error *err);

#endif
