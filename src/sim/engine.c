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
 * Reconfiguration (algorithms.md §7 "Reconfiguration cost"): every change of
 * GPU placement or plan, and every resume after a preemption, holds the new
 * resources for the restart delay without progress. A job's first start is
 * free (its trace duration already includes start-up) unless
 * cfg.first_start_paid; a change of CPUs or memory alone takes effect at once.
 */
#include "rubick/sim.h"

#include "rubick/oracle.h"
#include "rubick/placement.h"
#include "rubick/plan.h"
#include "sim/engine_internal.h"

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
	memset(r, 0, sizeof(*r));
}

/* ---- event heap ------------------------------------------------------------ */

static int ev_before(const struct ev *a, const struct ev *b)
{
	if (a->t_ms != b->t_ms)
		return a->t_ms < b->t_ms;
	if (a->kind != b->kind)
		return a->kind < b->kind;
	return a->job < b->job;
}

static int heap_push(struct sim *s, int64_t t_ms, int kind, int job)
{
	if (s->n_heap == s->cap_heap) {
		int ncap = s->cap_heap ? s->cap_heap * 2 : 64;
		struct ev *h = realloc(s->heap, (size_t)ncap * sizeof(*h));
		if (!h)
			return RK_ENOMEM;
		s->heap = h;
		s->cap_heap = ncap;
	}
	struct ev e = {t_ms, kind, job, s->jobs[job].version};
	int i = s->n_heap++;
	while (i > 0) {
		int p = (i - 1) / 2;
		if (!ev_before(&e, &s->heap[p]))
			break;
		s->heap[i] = s->heap[p];
		i = p;
	}
	s->heap[i] = e;
	return 0;
}

static void heap_pop(struct sim *s)
{
	struct ev last = s->heap[--s->n_heap];
	int i = 0, n = s->n_heap;
	for (;;) {
		int c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && ev_before(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!ev_before(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (n > 0)
		s->heap[i] = last;
}

/* Drop events made stale by a later change of their job. */
static void heap_clean_top(struct sim *s)
{
	while (s->n_heap > 0 && s->heap[0].version != s->jobs[s->heap[0].job].version)
		heap_pop(s);
}

/* ---- progress -------------------------------------------------------------- */

/* Bring iters_done and the GPU-seconds held up to `now`. */
void sim_settle(struct sim *s, struct sjob *sj, int64_t now)
{
	struct rk_job *j = &sj->j;
	if (j->alloc.n > 0 && now > sj->hold_from_ms) {
		sj->gpu_s += (double)(now - sj->hold_from_ms) / 1000.0 *
			     rk_alloc_total_gpus(&j->alloc);
		sj->hold_from_ms = now;
	}
	j->attained_gpu_s = sj->gpu_s;
	if (j->state == RK_JOB_RUNNING && sj->iter_ms > 0) {
		double done = sj->iters_at_run + (double)(now - sj->run_from_ms) / sj->iter_ms;
		j->iters_done = done < j->iters_total ? done : j->iters_total;
	}
	(void)s;
}

/* ---- the change feed (rk_sched_input.changed / holders) -------------------- */

void sim_mark(struct sim *s, struct sjob *sj)
{
	if (!sj->in_chg) {
		sj->in_chg = 1;
		s->chg[s->n_chg++] = &sj->j;
	}
}

void sim_hold_add(struct sim *s, struct sjob *sj)
{
	if (sj->hl_pos < 0) {
		sj->hl_pos = s->n_hl;
		s->hl[s->n_hl++] = &sj->j;
	}
	sim_mark(s, sj);
}

void sim_hold_del(struct sim *s, struct sjob *sj)
{
	if (sj->hl_pos >= 0) {
		struct rk_job *last = s->hl[--s->n_hl];
		s->hl[sj->hl_pos] = last;
		((struct sjob *)last)->hl_pos = sj->hl_pos; /* j is sjob's first member */
		sj->hl_pos = -1;
	}
	sim_mark(s, sj);
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

/* Start accruing progress at `now` and schedule the completion. */
int sim_start_running(struct sim *s, int idx, int64_t now)
{
	struct sjob *sj = &s->jobs[idx];
	sj->j.state = RK_JOB_RUNNING;
	sj->run_from_ms = now;
	sj->iters_at_run = sj->j.iters_done;
	double left = sj->j.iters_total - sj->j.iters_done;
	double ms = ceil((left > 0 ? left : 0) * sj->iter_ms);
	int64_t end = now + (ms < 1 ? (left > 0 ? 1 : 0) : (int64_t)ms);
	return heap_push(s, end, EV_COMPLETE, idx);
}

/* ---- applying decisions ---------------------------------------------------- */

/* Which change a decision makes to its job. */
enum change { CH_NONE, CH_PREEMPT, CH_START, CH_RESUME, CH_RECONF, CH_RESOURCES };

static enum change classify(const struct rk_job *j, const struct rk_decision *d)
{
	int holds = j->alloc.n > 0;
	if (d->alloc.n == 0)
		return holds ? CH_PREEMPT : CH_NONE;
	if (!holds)
		return j->first_start_ms < 0 ? CH_START : CH_RESUME;
	if (!rk_alloc_same_gpus(&j->alloc, &d->alloc) || !rk_plan_equal(&j->plan, &d->plan))
		return CH_RECONF;
	return rk_alloc_equal(&j->alloc, &d->alloc) ? CH_NONE : CH_RESOURCES;
}

int sim_apply(struct sim *s, const struct rk_decisions *ds, const char *pname,
	      struct rk_error *err)
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
		rc = s->cfg.iter(s->cfg.iter_ctx, &sj->j, &d->plan, &d->alloc, s->cluster, &it_s, err);
		if (rc == 0 && !(it_s > 0 && isfinite(it_s)))
			rc = rk_error_set(err, RK_EINTERNAL, "oracle returned %g s per iteration",
					  it_s);
		if (rc) {
			rk_error_prefix(err, "policy %s: job %lld (%s): the oracle cannot run the "
					"decided plan and allocation", pname, (long long)sj->j.id,
					sj->j.name);
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
			sim_sla_close(sj, now); /* what this instant's sweep would do: it sees holders only */
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
				rc = heap_push(s, sj->ready_ms, EV_RESTART_END, idx[i]);
			else
				rc = sim_start_running(s, idx[i], now);
		} else {
			if (ch[i] != CH_START) { /* a paid first start is no restart */
				j->restarts++;
				s->res.reconfigs++;
			}
			j->state = RK_JOB_RESTARTING;
			sj->ready_ms = now + sj->restart_ms;
			rc = heap_push(s, sj->ready_ms, EV_RESTART_END, idx[i]);
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

/* ---- the event loop --------------------------------------------------------- */

static int handle_heap_events(struct sim *s, int *changed)
{
	int rc = 0;
	for (heap_clean_top(s); s->n_heap > 0 && s->heap[0].t_ms == s->now_ms && !rc;
	     heap_clean_top(s)) {
		struct ev e = s->heap[0];
		heap_pop(s);
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
	heap_clean_top(s);
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
