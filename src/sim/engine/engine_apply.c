/*
 * Applying a round's decisions to the simulated jobs (engine.c's rounds and
 * engine_loan.c's reclaim rounds both do): every change priced with the
 * oracle before anything changes, then releases, then the new allocations
 * with their restart delays (docs/references.md §7 "Reconfiguration cost"); and
 * the quotas that drop decisions first. Calls the job primitives
 * (engine_jobs.c), co-location (engine_coloc.c) and the SLA bookkeeping
 * (engine_sla.c); never the loop.
 */
#include "rubick/placement.h"
#include "rubick/plan.h"
#include "sim/engine/engine_internal.h"

#include <math.h>
#include <stdlib.h>

/* Log the plan job `j` was just given (rk_sim_result.plans). */
static int log_plan(struct sim *s, const struct rk_job *j)
{
	if (s->res.n_plans == s->cap_plans) {
		int ncap = s->cap_plans ? s->cap_plans * 2 : 64;
		struct rk_sim_plan_change *v = realloc(s->res.plans, (size_t)ncap * sizeof(*v));
		if (!v)
			return RK_ENOMEM;
		s->res.plans = v;
		s->cap_plans = ncap;
	}
	s->res.plans[s->res.n_plans++] = (struct rk_sim_plan_change){
	    .t_ms = s->now_ms, .job_id = j->id, .gpus = rk_alloc_total_gpus(&j->alloc),
	    .plan = j->plan};
	return 0;
}

/* The GPUs named on `node` (gpu_mask, 0 = none named). */
static uint64_t node_mask(const struct rk_alloc *a, int node)
{
	uint64_t m = 0;
	for (int i = 0; i < a->n; i++)
		if (a->shares[i].node == node)
			m |= a->shares[i].gpu_mask;
	return m;
}

/* 1 when a node's named GPUs differ between `a` and `b` (both named): the
 * job moves to other GPUs of the same node, which is a restart like any
 * move; counts alone cannot see it. */
static int gpus_moved(const struct rk_alloc *a, const struct rk_alloc *b)
{
	for (int i = 0; i < a->n; i++) {
		int node = a->shares[i].node;
		uint64_t x = node_mask(a, node), y = node_mask(b, node);
		if (x && y && x != y)
			return 1;
	}
	return 0;
}

/* Which change a decision makes to its job. */
enum change { CH_NONE, CH_PREEMPT, CH_START, CH_RESUME, CH_RECONF, CH_RESOURCES };

static enum change classify(const struct rk_job *j, const struct rk_decision *d)
{
	int holds = j->alloc.n > 0;
	if (d->alloc.n == 0)
		return holds ? CH_PREEMPT : CH_NONE;
	if (!holds)
		return j->first_start_ms < 0 ? CH_START : CH_RESUME;
	if (!rk_alloc_same_gpus(&j->alloc, &d->alloc) || gpus_moved(&j->alloc, &d->alloc) ||
	    !rk_plan_equal(&j->plan, &d->plan))
		return CH_RECONF;
	return rk_alloc_equal(&j->alloc, &d->alloc) ? CH_NONE : CH_RESOURCES;
}

int sim_apply(struct sim *s, const struct rk_decisions *ds, const char *pname, struct rk_error *err)
{
	int64_t now = s->now_ms;
	int n = ds->n, rc = 0;
	if (n == 0)
		return 0;
	double *iter_ms = malloc((size_t)n * sizeof(*iter_ms));
	int *idx = malloc((size_t)n * sizeof(*idx));
	enum change *ch = malloc((size_t)n * sizeof(*ch));
	if (!iter_ms || !idx || !ch) {
		rc = rk_error_set(err, RK_ENOMEM, "simulator: out of memory");
		goto done;
	}
	/* Price every change with the oracle first: nothing changes on failure. */
	for (int i = 0; i < n; i++) {
		const struct rk_decision *d = &ds->v[i];
		idx[i] = sim_job_index(s, d->job_id);
		struct sjob *sj = &s->jobs[idx[i]];
		ch[i] = classify(&sj->j, d);
		iter_ms[i] = 0;
		if (ch[i] == CH_NONE || ch[i] == CH_PREEMPT)
			continue;
		double it_s = 0;
		rc = s->cfg.iter(s->cfg.iter_ctx, &sj->j, &d->plan, &d->alloc, s->cluster, &it_s,
		                 err);
		if (rc == 0 && !(it_s > 0 && isfinite(it_s)))
			rc = rk_error_set(err, RK_EINTERNAL, "oracle returned %g s per iteration",
			                  it_s);
		if (rc) {
			rk_error_prefix(err,
			                "policy %s: job %lld (%s): the oracle cannot run the "
			                "decided plan and allocation",
			                pname, (long long)sj->j.id, sj->j.name);
			goto done;
		}
		iter_ms[i] = it_s * 1000.0;
	}
	/* Release what changes hands, then take the new allocations. */
	for (int i = 0; i < n && !rc; i++) {
		struct sjob *sj = &s->jobs[idx[i]];
		if (ch[i] == CH_NONE || ch[i] == CH_START || ch[i] == CH_RESUME)
			continue;
		sim_settle(s, sj, now);
		rc = rk_capacity_give(&s->cap, &sj->j.alloc, err);
	}
	for (int i = 0; i < n && !rc; i++) {
		struct sjob *sj = &s->jobs[idx[i]];
		struct rk_job *j = &sj->j;
		const struct rk_decision *d = &ds->v[i];
		if (ch[i] == CH_NONE)
			continue;
		s->res.decisions++;
		sj->version++; /* any pending restart-end or completion is stale now */
		if (ch[i] == CH_PREEMPT) {
			rk_alloc_fini(&j->alloc);
			j->state = RK_JOB_PENDING;
			j->last_change_ms = now;
			sj->iter_ms = 0;
			j->observed_sps = 0;
			sj->preemptions++;
			s->res.preemptions++;
			s->n_pending++;
			s->n_holding--;
			sim_hold_del(s, sj);
			sim_sla_close(
			    sj, now); /* what this instant's sweep would do: it sees holders only */
			continue;
		}
		rc = rk_capacity_take(&s->cap, &d->alloc, err);
		if (!rc)
			rc = rk_alloc_copy(&j->alloc, &d->alloc);
		if (rc)
			break;
		if (ch[i] == CH_START || ch[i] == CH_RESUME) {
			s->n_pending--;
			s->n_holding++;
			sj->hold_from_ms = now;
			sim_hold_add(s, sj);
		}
		if (j->first_start_ms < 0)
			j->first_start_ms = now;
		j->plan = d->plan;
		j->last_change_ms = now;
		if (ch[i] != CH_RESOURCES && (rc = log_plan(s, j)))
			break;
		sj->iter_ms = iter_ms[i];
		sj->base_iter_ms = iter_ms[i];
		int free_start = ch[i] == CH_START && !s->cfg.first_start_paid;
		if (free_start || (ch[i] != CH_RESOURCES && sj->restart_ms == 0)) {
			if (ch[i] != CH_START) {
				j->restarts++;
				s->res.reconfigs++;
			}
			rc = sim_start_running(s, idx[i], now);
		} else if (ch[i] == CH_RESOURCES) {
			/* CPUs or memory only: new speed from now, no restart. */
			if (j->state == RK_JOB_RESTARTING)
				rc = sim_heap_push(s, sj->ready_ms, EV_RESTART_END, idx[i]);
			else
				rc = sim_start_running(s, idx[i], now);
		} else {
			if (ch[i] != CH_START) { /* a paid first start is no restart */
				j->restarts++;
				s->res.reconfigs++;
			}
			j->state = RK_JOB_RESTARTING;
			sj->ready_ms = now + sj->restart_ms;
			rc = sim_heap_push(s, sj->ready_ms, EV_RESTART_END, idx[i]);
		}
	}
	if (!rc)
		rc = sim_rerate(s, err); /* co-location: who shares GPUs and NICs changed */
	if (rc && err && err->code != rc)
		rk_error_set(err, rc, "simulator: applying decisions of policy %s: %s", pname,
		             rk_strerror(rc));
done:
	free(iter_ms);
	free(idx);
	free(ch);
	return rc;
}

/*
 * Quotas bound what is held, as in rubickd: decisions that would take a
 * tenant's guaranteed jobs past their quota are dropped, the rest stands.
 */
int sim_apply_quotas(struct sim *s, const struct rk_sched_input *vin, const char *name,
                     struct rk_error *err)
{
	if (!s->cfg.n_quotas || !s->ds.n)
		return 0;
	struct rk_quota_drop *drops = malloc((size_t)s->ds.n * sizeof(*drops));
	if (!drops)
		return rk_error_set(err, RK_ENOMEM, "quotas: out of memory");
	int n = 0;
	int rc = rk_decisions_apply_quotas(vin, &s->ds, name, drops, s->ds.n, &n, err);
	free(drops);
	return rc;
}
