/*
 * GET /metrics: the scheduler's counters in the Prometheus text exposition
 * format (version 0.0.4): queue length, running jobs, GPU allocation, the
 * scheduling-round latency histogram and reconfiguration counts.
 */
#include "daemon/sched/sched_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Upper bounds of the round-latency histogram's buckets (sched_round.c fills the counts). */
const double rkd_lat_bounds_ms[N_LAT_BUCKETS] = {0.1, 0.25, 0.5, 1,   2,   5,
                                                 10,  20,   50,  100, 500, 1000};

struct buf {
	char *p;
	size_t len, cap;
	int oom;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = 1;
			return;
		}
		if (b->p && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		size_t ncap = (b->cap ? 2 * b->cap : 4096) + (size_t)n;
		char *np = realloc(b->p, ncap);
		if (!np) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
}

static void gauge(struct buf *b, const char *name, const char *help, double v)
{
	put(b, "# HELP %s %s\n# TYPE %s gauge\n%s %.17g\n", name, help, name, name, v);
}

static void counter(struct buf *b, const char *name, const char *help, uint64_t v)
{
	put(b, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name,
	    (unsigned long long)v);
}

void rkd_metrics_render(struct rkd_sched *s, struct rkd_msg *m)
{
	struct buf b = {0};
	int pending = 0, running = 0, restarting = 0, gpus_alloc = 0, held = 0;
	for (int i = 0; i < s->n_jobs; i++) {
		const struct rk_job *c = &s->jobs[i]->core;
		pending += c->state == RK_JOB_PENDING;
		running += c->state == RK_JOB_RUNNING;
		restarting += c->state == RK_JOB_RESTARTING;
		held += sched_job_held(s->jobs[i]);
		if (!sched_state_terminal(c->state))
			gpus_alloc += rk_alloc_total_gpus(&c->alloc);
	}
	gauge(&b, "rubick_queue_length", "Jobs waiting for resources.", pending);
	gauge(&b, "rubick_jobs_running", "Jobs holding an allocation (running).", running);
	gauge(&b, "rubick_jobs_restarting", "Jobs being reconfigured.", restarting);
	gauge(&b, "rubick_jobs_held", "Pending jobs held (rubick hold), counted in the queue length.",
	      held);
	gauge(&b, "rubick_gpus", "GPUs on nodes that are up.", rk_cluster_total_gpus(&s->cluster));
	gauge(&b, "rubick_gpus_allocated", "GPUs allocated to active jobs.", gpus_alloc);
	gauge(&b, "rubick_runs_alive", "Job runs the engine has alive.", s->engine->running(s->engine_state));
	counter(&b, "rubick_submissions_total", "Jobs accepted since start.", s->submits);
	counter(&b, "rubick_reconfigurations_total", "Resizes and re-plans of running jobs.", s->reconfigs);
	counter(&b, "rubick_preemptions_total", "Running jobs sent back to the queue.", s->preemptions);
	counter(&b, "rubick_launches_total", "Runs started by the engine.", s->launches);
	counter(&b, "rubick_run_exits_total", "Runs that ended.", s->exits);
	counter(&b, "rubick_policy_errors_total", "Rounds whose decisions were rejected.", s->policy_errors);
	counter(&b, "rubick_quota_decisions_dropped_total",
		"Policy decisions dropped because they would break a tenant quota.", s->quota_drops);
	counter(&b, "rubick_rounds_incremental_total",
		"Rounds that sent the policy the change feed instead of a full snapshot.", s->feed_rounds);
	put(&b, "# HELP rubick_round_latency_seconds Scheduling round latency.\n"
		"# TYPE rubick_round_latency_seconds histogram\n");
	uint64_t cum = 0;
	for (int i = 0; i < N_LAT_BUCKETS; i++) {
		cum += s->lat_count[i];
		put(&b, "rubick_round_latency_seconds_bucket{le=\"%g\"} %llu\n",
		    rkd_lat_bounds_ms[i] / 1e3, (unsigned long long)cum);
	}
	cum += s->lat_count[N_LAT_BUCKETS];
	put(&b, "rubick_round_latency_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cum);
	put(&b, "rubick_round_latency_seconds_sum %.9g\n", s->lat_sum_ms / 1e3);
	put(&b, "rubick_round_latency_seconds_count %llu\n", (unsigned long long)cum);
	gauge(&b, "rubick_last_round_seconds", "Latency of the latest round.", s->last_round_ms / 1e3);
	if (b.oom) {
		free(b.p);
		m->status = 503;
		rkd_verr_set(&m->verr, RK_ENOMEM, "", "out of memory");
		return;
	}
	m->body = b.p;
	m->status = 200;
}
