/*
 * The simulator engine (sim.h): a discrete-event loop over integer
 * milliseconds. Events: arrivals (jobs sorted by submit time), restart ends
 * and completions (a binary heap with lazy invalidation by per-job version),
 * and scheduling rounds every interval plus at every instant where a job
 * arrived or finished. The policy sees a snapshot of the active jobs with
 * their progress settled to "now"; its decisions are validated
 * (rk_decisions_validate) and priced by the oracle before anything changes.
 *
 * Progress model: a running job advances at 1 / iter_s iterations per second
 * from the instant it (re)started; its completion instant is fixed when its
 * rate is set (ceil to the next millisecond) and never recomputed, so the
 * result does not depend on how often the state is inspected.
 * Reconfiguration (docs/references.md §7 "Reconfiguration cost"): every change of
 * GPU placement or plan, and every resume after a preemption, holds the new
 * resources for the restart delay without progress. A job's first start is
 * free (its trace duration already includes start-up) unless
 * cfg.first_start_paid; a change of CPUs or memory alone takes effect at once.
 *
 * This file is the loop and its rounds; the job primitives (heap, progress,
 * feed) are in engine_jobs.c, applying decisions in engine_apply.c.
 */
#include "rubick/sim.h"

#include "rubick/oracle.h"
#include "rubick/placement.h"
#include "rubick/plan.h"
#include "sim/engine/engine_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void rk_sim_config_default(struct rk_sim_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->interval_ms = RK_SIM_DEFAULT_INTERVAL_MS;
	cfg->restart_ms = RK_SIM_DEFAULT_RESTART_MS;
}

int rk_sim_oracle_iter(void *ctx, const struct rk_job *job, const struct rk_plan *plan,
		       const struct rk_alloc *alloc, const struct rk_cluster *cluster,
		       double *iter_s, struct rk_error *err)
{
	return rk_oracle_iter_s(ctx, job, plan, alloc, cluster, iter_s, err);
}

void rk_sim_result_fini(struct rk_sim_result *r)
{
	if (!r)
		return;
	free(r->outcomes);
	free(r->samples);
	free(r->plans);
	memset(r, 0, sizeof(*r));
}

/* A finished job leaves the active list (sorted by arrival rank), keeping the order. */
static void act_remove(struct sim *s, const struct sjob *sj)
{
	int lo = 0, hi = s->n_act;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (s->jobs[s->act[mid]].arr_rank < sj->arr_rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= s->n_act || &s->jobs[s->act[lo]] != sj)
		return;
	memmove(&s->act[lo], &s->act[lo + 1], (size_t)(s->n_act - lo - 1) * sizeof(*s->act));
	memmove(&s->snap[lo], &s->snap[lo + 1], (size_t)(s->n_act - lo - 1) * sizeof(*s->snap));
	s->n_act--;
}

/* ---- the event loop --------------------------------------------------------- */

static int handle_heap_events(struct sim *s, int *changed)
{
	int rc = 0;
	for (sim_heap_clean_top(s); s->n_heap > 0 && s->heap[0].t_ms == s->now_ms && !rc;
	     sim_heap_clean_top(s)) {
		struct ev e = s->heap[0];
		sim_heap_pop(s);
		struct sjob *sj = &s->jobs[e.job];
		sj->version++;
		s->dirty = 1;
		if (e.kind == EV_RESTART_END) {
			rc = sim_start_running(s, e.job, s->now_ms);
			continue;
		}
		/* Completion: the job has done all its iterations. */
		sim_settle(s, sj, s->now_ms);
		sim_sla_close(sj, s->now_ms);
		sj->j.iters_done = sj->j.iters_total;
		rc = rk_capacity_give(&s->cap, &sj->j.alloc, NULL);
		rk_alloc_fini(&sj->j.alloc);
		sj->j.state = RK_JOB_DONE;
		sj->finish_ms = s->now_ms;
		sj->iter_ms = 0;
		s->n_holding--;
		s->n_done++;
		sim_hold_del(s, sj);
		act_remove(s, sj);
		*changed = 1;
	}
	return rc;
}

/*
 * The jobs rk_decisions_validate needs, in s->vsnap: every holder (what it
 * keeps counts against capacity) and every active job a decision names (an
 * id of no active job stays unknown, as in the full snapshot). Returns the count.
 */
static int sim_validation_jobs(struct sim *s, const struct rk_decisions *ds)
{
	int m = 0;
	for (int i = 0; i < s->n_hl; i++)
		s->vsnap[m++] = s->hl[i];
	for (int k = 0; k < ds->n; k++) {
		int lo = 0, hi = s->n;
		while (lo < hi) {
			int mid = lo + (hi - lo) / 2;
			if (s->ids[mid].id < ds->v[k].job_id)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo >= s->n || s->ids[lo].id != ds->v[k].job_id)
			continue;
		struct sjob *sj = &s->jobs[s->ids[lo].index];
		int active = sj->arr_rank < s->next_arrival && !sj->rejected &&
			     sj->j.state != RK_JOB_DONE;
		if (active && sj->hl_pos < 0 && m < s->n)
			s->vsnap[m++] = &sj->j;
	}
	return m;
}

static int run_round(struct sim *s, const struct rk_policy_ops *p, void *pstate,
		     struct rk_error *err)
{
	/*
	 * act and snap already hold exactly the active jobs (arrivals append,
	 * completions remove); settling a job that holds nothing changes nothing.
	 */
	int m = s->n_act;
	for (int i = 0; i < s->n_hl; i++)
		sim_settle(s, (struct sjob *)s->hl[i], s->now_ms);
	uint64_t z = s->cfg.seed + 0x9e3779b97f4a7c15ULL * (uint64_t)(s->res.rounds + 1);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL; /* splitmix64 finaliser */
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	struct rk_sched_input in = {
		.now_ms = s->now_ms,
		.cluster = s->cluster,
		.jobs = s->snap,
		.n_jobs = m,
		.env = s->cfg.env,
		.seed = z ^ (z >> 31),
		.gpu_sharing = s->cfg.sharing,
		.xi = s->cfg.xi,
		.quotas = s->cfg.quotas,
		.n_quotas = s->cfg.n_quotas,
		.incremental = 1,
		.holders = s->hl,
		.n_holders = s->n_hl,
		.changed = s->chg,
		.n_changed = s->n_chg,
		.skips_quiet = 1,
	};
	s->res.rounds++;
	rk_decisions_clear(&s->ds);
	sim_refit_swap(s, 1); /* the policy decides with the refitted models */
	int rc = p->schedule(pstate, &in, &s->ds, err);
	sim_refit_swap(s, 0); /* the oracle prices with the jobs' own */
	for (int i = 0; i < s->n_chg; i++)
		((struct sjob *)s->chg[i])->in_chg = 0;
	s->n_chg = 0;
	if (rc)
		return rk_error_prefix(err, "policy %s failed at t=%lld ms", p->name,
				       (long long)s->now_ms);
	/* GPU sharing: counts on two slots per GPU, then the GPU-level rules. */
	struct rk_sched_input vin = in;
	if (s->cfg.sharing)
		vin.cluster = &s->slots;
	/* Only holders and decided jobs bear on validity: validate on them alone. */
	vin.jobs = s->vsnap;
	vin.n_jobs = sim_validation_jobs(s, &s->ds);
	rc = rk_decisions_validate(&vin, &s->ds, p->name, err);
	if (!rc)
		rc = sim_apply_quotas(s, &vin, p->name, err);
	if (!rc && s->cfg.sharing)
		rc = rk_gpu_share_resolve(&in, &s->ds, p->name, err);
	if (rc)
		return rk_error_prefix(err, "t=%lld ms", (long long)s->now_ms);
	s->last_round_decisions = s->ds.n;
	/* A round is idempotent: applying its own decisions gives the next nothing new. */
	s->dirty = 0;
	s->wake_ms = s->ds.wake_ms > s->now_ms ? s->ds.wake_ms : 0;
	s->quiet_until_ms = s->ds.quiet_until_ms > s->now_ms ? s->ds.quiet_until_ms : 0;
	return sim_apply(s, &s->ds, p->name, err);
}

static int push_sample(struct sim *s)
{
	struct rk_sim_sample x = {
		.t_ms = s->now_ms,
		.gpus_alloc = s->cfg.sharing ? s->busy_gpus : s->gpus_total - s->cap.free_gpus_total,
		.gpus_total = s->gpus_total,
		.queue_len = s->n_pending,
		.running = s->n_holding,
	};
	if (s->res.n_samples > 0) {
		struct rk_sim_sample *last = &s->res.samples[s->res.n_samples - 1];
		if (last->gpus_alloc == x.gpus_alloc && last->queue_len == x.queue_len &&
		    last->running == x.running && last->gpus_total == x.gpus_total)
			return 0;
		if (last->t_ms == x.t_ms) {
			*last = x;
			return 0;
		}
	}
	if (s->res.n_samples == s->cap_samples) {
		int ncap = s->cap_samples ? s->cap_samples * 2 : 256;
		struct rk_sim_sample *v = realloc(s->res.samples, (size_t)ncap * sizeof(*v));
		if (!v)
			return RK_ENOMEM;
		s->res.samples = v;
		s->cap_samples = ncap;
	}
	s->res.samples[s->res.n_samples++] = x;
	return 0;
}

/* Earliest next instant, or INT64_MAX when nothing can happen any more. */
static int64_t next_instant(struct sim *s, const struct rk_policy_ops *p)
{
	int64_t t = INT64_MAX;
	sim_heap_clean_top(s);
	if (s->n_heap > 0)
		t = s->heap[0].t_ms;
	if (s->next_arrival < s->n && s->jobs[s->order[s->next_arrival]].j.submit_ms < t)
		t = s->jobs[s->order[s->next_arrival]].j.submit_ms;
	if (sim_loan_next(s) < t) /* capacity loaning (engine_loan.c) */
		t = sim_loan_next(s);
	int want_round = s->n_pending > 0 || (s->n_holding > 0 && !(p->flags & RK_POLICY_IDLE_NOOP));
	/* A round that decided nothing with nothing else to come would repeat forever. */
	if (want_round && t == INT64_MAX && s->last_round_decisions == 0 && !s->wake_ms)
		want_round = 0;
	int64_t round = s->next_round_ms;
	/* Event-driven policies would repeat the last round's answer, unless they asked. */
	if ((p->flags & RK_POLICY_EVENT_DRIVEN) && !s->dirty) {
		if (!s->wake_ms)
			want_round = 0;
		else if (s->wake_ms > round) /* first round of the grid at or after the wake-up */
			round = s->res.start_ms + (s->wake_ms - s->res.start_ms + s->cfg.interval_ms - 1) /
							  s->cfg.interval_ms * s->cfg.interval_ms;
	}
	if (want_round && round < t)
		t = round;
	return t;
}

/*
 * The grid rounds before t that the policy said would repeat its last one
 * (rk_decisions.quiet_until_ms) count as run: the next grid round is the
 * first after the last of them, as it would be had they run.
 */
static void skip_quiet_rounds(struct sim *s, int64_t t)
{
	int64_t lim = t < s->quiet_until_ms ? t : s->quiet_until_ms;
	if (s->next_round_ms >= lim)
		return;
	int64_t last = s->res.start_ms +
		       (lim - 1 - s->res.start_ms) / s->cfg.interval_ms * s->cfg.interval_ms;
	if (last >= s->next_round_ms)
		s->next_round_ms = last + s->cfg.interval_ms;
}

int sim_loop(struct sim *s, const struct rk_policy_ops *p, void *pstate, struct rk_error *err)
{
	int rc = 0;
	int64_t prev = s->now_ms;
	for (;;) {
		int64_t t = next_instant(s, p);
		if (t == INT64_MAX)
			break;
		if (s->cfg.horizon_ms > 0 && t > s->cfg.horizon_ms) {
			s->now_ms = s->cfg.horizon_ms;
			break;
		}
		s->now_ms = t;
		int changed = 0;
		rc = handle_heap_events(s, &changed);
		if (!rc && changed)
			rc = sim_rerate(s, err); /* a completion frees GPUs and NICs */
		if (!rc)
			rc = sim_loan_step(s, p, pstate, &changed, err); /* servers lent or returned */
		while (!rc && s->next_arrival < s->n &&
		       s->jobs[s->order[s->next_arrival]].j.submit_ms == t) {
			int idx = s->order[s->next_arrival++];
			if (sim_quota_reject(s, idx))
				continue; /* over its tenant's guaranteed quota: never runs */
			s->snap[s->n_act] = &s->jobs[idx].j;
			s->act[s->n_act++] = idx;
			sim_mark(s, &s->jobs[idx]);
			s->n_pending++;
			changed = 1;
			s->dirty = 1;
		}
		skip_quiet_rounds(s, t);
		if (!rc && (changed || t >= s->next_round_ms) &&
		    (changed || !(p->flags & RK_POLICY_EVENT_DRIVEN) || s->dirty ||
		     (s->wake_ms && t >= s->wake_ms))) {
			rc = run_round(s, p, pstate, err);
			if (t >= s->next_round_ms)
				s->next_round_ms = s->res.start_ms +
						   ((t - s->res.start_ms) / s->cfg.interval_ms + 1) *
							   s->cfg.interval_ms;
			if (!rc && s->cfg.progress)
				s->cfg.progress(s->cfg.progress_ctx, t, s->n_done, s->n);
		}
		if (!rc)
			rc = sim_refit_sweep(s, err); /* observe what runs, before the SLA sweep */
		if (!rc)
			sim_sla_sweep(s); /* rates and states hold until the next instant */
		if (!rc)
			rc = push_sample(s);
		if (!rc && s->cfg.check)
			rc = sim_check(s, prev, err);
		if (rc) {
			if (err && err->code != rc)
				rk_error_set(err, rc, "simulator at t=%lld ms: %s", (long long)t,
					     rk_strerror(rc));
			return rc;
		}
		prev = t;
	}
	return 0;
}
