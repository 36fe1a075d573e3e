/*
 * Scheduling rounds of the scheduler thread: the snapshot of active jobs
 * handed to the policy, validating its decisions and applying them to the
 * jobs (starts, preemptions, reconfigurations), and the round-latency
 * histogram /metrics reports.
 */
#include "daemon/sched/sched_internal.h"

#include "rubick/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void apply_decision(struct rkd_sched *s, struct sjob *j, const struct rk_decision *d,
			   int64_t now)
{
	if (d->alloc.n == 0) {
		if (j->core.state == RK_JOB_PENDING)
			return;
		s->preemptions++;
		sched_preempt(s, j, now, "preempt");
		sched_dirty(s, j);
		return;
	}
	int same = j->core.alloc.n > 0 && rk_alloc_equal(&j->core.alloc, &d->alloc) &&
		   rk_plan_equal(&j->core.plan, &d->plan);
	if (same && j->core.state != RK_JOB_PENDING)
		return;
	struct rk_alloc copy;
	rk_alloc_init(&copy);
	if (rk_alloc_copy(&copy, &d->alloc))
		return;
	rk_alloc_fini(&j->core.alloc);
	j->core.alloc = copy;
	j->core.plan = d->plan;
	j->core.last_change_ms = now;
	sched_dirty(s, j);
	if (j->core.state == RK_JOB_PENDING) {
		if (j->core.first_start_ms < 0)
			j->core.first_start_ms = now;
		j->core.state = RK_JOB_RUNNING;
		sched_run_next(s, j); /* waits for a draining earlier run, if any */
		sched_history(s, j, now, "start");
		return;
	}
	j->core.restarts++;
	s->reconfigs++;
	sched_history(s, j, now, "reconfigure");
	if (j->live_run) {
		j->core.state = RK_JOB_RESTARTING;
		sched_stop_run(s, j, STOP_RESTART, now);
	}
	/* not live yet: the pending launch simply uses the new target */
}

static void lat_record(struct rkd_sched *s, double ms)
{
	int b = 0;
	while (b < N_LAT_BUCKETS && ms > rkd_lat_bounds_ms[b])
		b++;
	s->lat_count[b]++;
	s->lat_sum_ms += ms;
	s->last_round_ms = ms;
}

static double mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
 * Quotas bound what is held (docs/api.md): a decision that would take its
 * tenant over gpu_quota or guaranteed_gpu_quota is dropped alone, the rest
 * of the round stands. The event naming the job and the quota is written
 * once until a decision for that job is applied, not every round.
 */
static int round_quotas(struct rkd_sched *s, const struct rk_sched_input *vin,
			struct rk_error *err)
{
	if (!s->n_quotas || !s->dec.n)
		return 0;
	int cap = s->dec.n, n = 0;
	struct rk_quota_drop *drops = malloc((size_t)cap * sizeof(*drops));
	if (!drops)
		return rk_error_set(err, RK_ENOMEM, "quotas: out of memory");
	int ret = rk_decisions_apply_quotas(vin, &s->dec, s->policy->name, drops, cap, &n, err);
	for (int i = 0; !ret && i < n && i < cap; i++) {
		struct sjob *j = sched_job_find(s, drops[i].job_id);
		s->quota_drops++;
		if (!j || j->quota_held)
			continue;
		j->quota_held = 1;
		s->reasons_stale = 1; /* its reason is Quota now */
		char msg[300];
		snprintf(msg, sizeof(msg), "job %lld: tenant '%s' %s is %d GPUs; the policy's decision"
			 " (%d GPUs for the job) would have the tenant hold %d: dropped, the job %s",
			 (long long)j->core.id, j->core.tenant,
			 drops[i].guaranteed ? "guaranteed_gpu_quota" : "gpu_quota", drops[i].quota,
			 drops[i].job_gpus, drops[i].tenant_gpus,
			 drops[i].stopped ? "is stopped" : "keeps what it holds");
		sched_event(s, j->core.id, "quota", msg);
	}
	free(drops);
	return ret;
}

int sched_round_run(struct rkd_sched *s, int64_t now, struct rk_error *err)
{
	double t0 = mono_ms();
	const struct rk_cluster *view = sched_view(s); /* before the feed: a new view = full round */
	int incremental = sched_feed_prepare(s);
	struct rk_sched_input in = {
		.now_ms = now,
		.cluster = view,
		.jobs = (struct rk_job *const *)s->act,
		.n_jobs = s->n_act,
		.env = &s->env,
		.seed = 0x9e3779b97f4a7c15ull ^ s->round_seq++,
		.quotas = s->quotas,
		.n_quotas = s->n_quotas,
		.incremental = incremental,
		.holders = incremental ? (struct rk_job *const *)s->hl : NULL,
		.n_holders = incremental ? s->n_hl : 0,
		.changed = incremental ? (struct rk_job *const *)s->chg : NULL,
		.n_changed = incremental ? s->n_chg : 0,
	};
	rk_decisions_clear(&s->dec);
	int ret = s->policy->schedule(s->policy_state, &in, &s->dec, err);
	/* Before the decisions are applied: what they change is the next round's feed. */
	sched_reasons_note_changed(s, in.changed, in.n_changed);
	sched_feed_consumed(s, ret == 0);
	if (!ret) {
		/* Only holders and decided jobs bear on validity: O(holders), not O(queue). */
		struct rk_sched_input vin = in;
		vin.jobs = (struct rk_job *const *)s->vsnap;
		vin.n_jobs = sched_feed_validation_jobs(s, &s->dec);
		/* A decision that fails is dropped alone (its event says why); the rest apply. */
		ret = sched_decisions_filter(s, &vin, &s->dec, err);
		ret = ret > 0 ? 0 : ret;
		if (!ret)
			ret = round_quotas(s, &vin, err);
	}
	if (ret) {
		s->policy_errors++;
		sched_event(s, 0, "policy-error", err->msg);
	} else {
		for (int i = 0; i < s->dec.n; i++) {
			struct sjob *j = sched_job_find(s, s->dec.v[i].job_id);
			if (j) {
				j->quota_held = 0;
				apply_decision(s, j, &s->dec.v[i], now);
			}
		}
	}
	/* What the decisions left free is what the pending jobs wait for (sched_reason.c). */
	sched_reasons_update(s, view, incremental);
	s->rounds++;
	s->feed_rounds += (uint64_t)incremental;
	lat_record(s, mono_ms() - t0);
	return ret;
}

int rkd_sched_round_now(struct rkd_sched *s, double *latency_ms, struct rk_error *err)
{
	int ret = sched_round_run(s, rkd_now_ms(), err);
	sched_flush(s);
	sched_commit(s);
	if (latency_ms)
		*latency_ms = s->last_round_ms;
	return ret;
}
