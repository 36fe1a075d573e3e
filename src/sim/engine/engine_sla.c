/*
 * Guaranteed jobs in the simulator (docs/references.md §1.7, metrics.h): each
 * guaranteed job's performance baseline, the tenant quota check at
 * submission, and the time guaranteed jobs run below their baseline.
 *
 * Baseline: the oracle's iteration time for the requested plan on the
 * request's consolidated placement on the empty cluster
 * (rk_sim_iter_at_request, the same price duration scaling uses). The global
 * batch never changes, so throughput ratios are iteration-time ratios:
 * current / baseline = base_iter_ms / iter_ms, with iter_ms the rate the job
 * really advances at (co-location slowdowns included).
 */
#include "sim/engine/engine_internal.h"

#include <stdio.h>
#include <string.h>

/*
 * Below the baseline when the ratio is under 1 - SLA_TOL. Both sides are
 * answers of the same oracle, so a job at its request gives exactly 1; the
 * tolerance only absorbs rounding (e.g. an iteration time multiplied back by
 * 1000), never a real slowdown.
 */
#define SLA_TOL 1e-9

int sim_sla_init(struct sim *s, struct rk_error *err)
{
	for (int i = 0; i < s->n; i++) {
		struct sjob *sj = &s->jobs[i];
		sj->below_from_ms = -1;
		if (!sj->j.guaranteed)
			continue;
		double it_s;
		int rc = rk_sim_iter_at_request(s->cluster, &sj->j, s->cfg.iter, s->cfg.iter_ctx,
						&it_s, err);
		if (rc)
			return rk_error_prefix(err, "guaranteed baseline");
		sj->sla_base_ms = it_s * 1000.0;
		sj->j.baseline_sps = (double)sj->j.global_batch / it_s;
		s->n_guaranteed++;
	}
	return 0;
}

static const struct rk_tenant_quota *quota_of(const struct sim *s, const char *tenant)
{
	for (int i = 0; i < s->cfg.n_quotas; i++)
		if (!strcmp(s->cfg.quotas[i].tenant, tenant) && s->cfg.quotas[i].guaranteed_gpus >= 0)
			return &s->cfg.quotas[i];
	return NULL;
}

int sim_quota_reject(struct sim *s, int idx)
{
	struct sjob *sj = &s->jobs[idx];
	const struct rk_job *j = &sj->j;
	const struct rk_tenant_quota *q = j->guaranteed ? quota_of(s, j->tenant) : NULL;
	if (!q)
		return 0;
	/* Requests of the tenant's active guaranteed jobs: arrived, not finished
	 * (rejected jobs never enter the active list). */
	long long held = 0;
	for (int i = 0; i < s->n_act; i++) {
		const struct rk_job *o = &s->jobs[s->act[i]].j;
		if (o->guaranteed && o->state != RK_JOB_DONE && !strcmp(o->tenant, j->tenant))
			held += o->req_gpus;
	}
	if (held + j->req_gpus <= q->guaranteed_gpus)
		return 0;
	sj->rejected = 1;
	sj->j.state = RK_JOB_CANCELLED;
	snprintf(sj->reason, sizeof(sj->reason),
		 "tenant '%s' guaranteed quota is %d GPUs; %lld held by active guaranteed jobs, "
		 "%d requested", j->tenant, q->guaranteed_gpus, held, j->req_gpus);
	s->n_rejected++;
	s->res.rejected++;
	return 1;
}

void sim_sla_close(struct sjob *sj, int64_t now)
{
	if (sj->below_from_ms >= 0 && now > sj->below_from_ms)
		sj->below_ms += now - sj->below_from_ms;
	sj->below_from_ms = -1;
}

void sim_sla_sweep(struct sim *s)
{
	if (s->n_guaranteed == 0)
		return;
	/*
	 * Holders only: a job that stops holding is closed then (completion,
	 * preemption in sim_apply) and stays closed while it waits.
	 */
	for (int i = 0; i < s->n_hl; i++) {
		struct sjob *sj = (struct sjob *)s->hl[i];
		if (!(sj->sla_base_ms > 0))
			continue;
		/* Close the interval up to now, then open one if still below. */
		sim_sla_close(sj, s->now_ms);
		if (sj->j.state != RK_JOB_RUNNING || !(sj->iter_ms > 0))
			continue;
		double ratio = sj->sla_base_ms / sj->iter_ms;
		if (sj->worst_ratio == 0 || ratio < sj->worst_ratio)
			sj->worst_ratio = ratio;
		if (ratio < 1.0 - SLA_TOL)
			sj->below_from_ms = s->now_ms;
	}
}
