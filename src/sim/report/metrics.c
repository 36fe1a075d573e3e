/*
 * Simulation metrics (metrics.h): per-policy summary from per-job outcomes and
 * the sampled cluster state. Definitions are in metrics.h; this file keeps
 * them exact: integrals are accumulated in integer GPU-milliseconds (exact up
 * to 2^63) and converted to seconds once, so the summary does not depend on
 * the order rounding errors would pile up in.
 */
#include "rubick/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double rk_metrics_percentile(const double *sorted, int n, double p)
{
	if (n <= 0 || !sorted)
		return 0.0;
	if (!(p > 0.0)) /* also catches NaN */
		p = 1e-9;
	if (p > 100.0)
		p = 100.0;
	/* Nearest rank: the smallest value with at least p% of the data at or below it. */
	double rank = ceil(p / 100.0 * (double)n);
	long idx = (long)rank - 1;
	if (idx < 0)
		idx = 0;
	if (idx >= n)
		idx = n - 1;
	return sorted[idx];
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int check_outcome(const struct rk_job_outcome *o, int i, struct rk_error *err)
{
	if (o->completed != 0 && o->completed != 1)
		return rk_error_set(err, RK_EINVAL, "outcome %d (job %lld): completed must be 0 or 1, got %d",
				    i, (long long)o->id, o->completed);
	if (o->completed && o->finish_ms < 0)
		return rk_error_set(err, RK_EINVAL, "outcome %d (job %lld): completed without a finish time",
				    i, (long long)o->id);
	if (o->completed && o->finish_ms < o->submit_ms)
		return rk_error_set(err, RK_EINVAL,
				    "outcome %d (job %lld): finish_ms %lld before submit_ms %lld", i,
				    (long long)o->id, (long long)o->finish_ms, (long long)o->submit_ms);
	if (o->completed && o->first_start_ms < 0)
		return rk_error_set(err, RK_EINVAL, "outcome %d (job %lld): completed but never started",
				    i, (long long)o->id);
	if (o->first_start_ms >= 0 && o->first_start_ms < o->submit_ms)
		return rk_error_set(err, RK_EINVAL,
				    "outcome %d (job %lld): first_start_ms %lld before submit_ms %lld", i,
				    (long long)o->id, (long long)o->first_start_ms,
				    (long long)o->submit_ms);
	if (o->completed && o->finish_ms < o->first_start_ms)
		return rk_error_set(err, RK_EINVAL,
				    "outcome %d (job %lld): finish_ms %lld before first_start_ms %lld", i,
				    (long long)o->id, (long long)o->finish_ms,
				    (long long)o->first_start_ms);
	if (o->restarts < 0 || o->preemptions < 0 || o->req_gpus < 0)
		return rk_error_set(err, RK_EINVAL,
				    "outcome %d (job %lld): negative restarts, preemptions or req_gpus", i,
				    (long long)o->id);
	if (!isfinite(o->gpu_s) || o->gpu_s < 0)
		return rk_error_set(err, RK_EINVAL, "outcome %d (job %lld): gpu_s must be finite and >= 0",
				    i, (long long)o->id);
	if (o->rejected && (o->completed || o->first_start_ms >= 0))
		return rk_error_set(err, RK_EINVAL, "outcome %d (job %lld): rejected but started",
				    i, (long long)o->id);
	if (!isfinite(o->sla_below_s) || o->sla_below_s < 0 || !isfinite(o->sla_worst_ratio) ||
	    o->sla_worst_ratio < 0)
		return rk_error_set(err, RK_EINVAL, "outcome %d (job %lld): sla_below_s and "
				    "sla_worst_ratio must be finite and >= 0", i, (long long)o->id);
	return 0;
}

static int check_sample(const struct rk_sim_sample *s, int i, int64_t prev_t, int64_t start_ms,
			int64_t end_ms, struct rk_error *err)
{
	if (s->t_ms < start_ms || s->t_ms > end_ms)
		return rk_error_set(err, RK_EINVAL, "sample %d: t_ms %lld outside the run [%lld, %lld]",
				    i, (long long)s->t_ms, (long long)start_ms, (long long)end_ms);
	if (i > 0 && s->t_ms < prev_t)
		return rk_error_set(err, RK_EINVAL, "sample %d: t_ms %lld before the previous sample's %lld",
				    i, (long long)s->t_ms, (long long)prev_t);
	if (s->gpus_alloc < 0 || s->gpus_total < 0 || s->queue_len < 0 || s->running < 0)
		return rk_error_set(err, RK_EINVAL, "sample %d: negative count", i);
	if (s->gpus_alloc > s->gpus_total)
		return rk_error_set(err, RK_EINVAL, "sample %d: gpus_alloc %d > gpus_total %d", i,
				    s->gpus_alloc, s->gpus_total);
	return 0;
}

/* Time integrals over [start_ms, end_ms] of the piecewise-constant samples. */
static void integrate_samples(const struct rk_sim_sample *s, int ns, int64_t end_ms,
			      struct rk_sim_summary *sum)
{
	/* Integer accumulators: GPU-ms and job-ms are exact (no float rounding). */
	long long alloc_ms = 0, total_ms = 0, queue_ms = 0;
	int max_q = 0;
	for (int i = 0; i < ns; i++) {
		int64_t t1 = i + 1 < ns ? s[i + 1].t_ms : end_ms;
		long long dt = (long long)(t1 - s[i].t_ms);
		alloc_ms += dt * s[i].gpus_alloc;
		total_ms += dt * s[i].gpus_total;
		queue_ms += dt * s[i].queue_len;
		if (s[i].queue_len > max_q)
			max_q = s[i].queue_len;
	}
	sum->gpu_util = total_ms > 0 ? (double)alloc_ms / (double)total_ms : 0.0;
	int64_t covered = ns > 0 ? end_ms - s[0].t_ms : 0;
	sum->avg_queue_len = covered > 0 ? (double)queue_ms / (double)covered : 0.0;
	sum->max_queue_len = max_q;
}

int rk_metrics_summarize(const struct rk_job_outcome *outcomes, int n,
			 const struct rk_sim_sample *samples, int ns, int64_t start_ms,
			 int64_t end_ms, struct rk_sim_summary *out, struct rk_error *err)
{
	if (n < 0 || ns < 0 || (n > 0 && !outcomes) || (ns > 0 && !samples) || !out)
		return rk_error_set(err, RK_EINVAL, "metrics: bad arguments (n=%d, ns=%d)", n, ns);
	if (end_ms < start_ms)
		return rk_error_set(err, RK_EINVAL, "metrics: end_ms %lld before start_ms %lld",
				    (long long)end_ms, (long long)start_ms);
	for (int i = 0; i < n; i++) {
		int rc = check_outcome(&outcomes[i], i, err);
		if (rc)
			return rc;
		if (outcomes[i].completed && outcomes[i].finish_ms > end_ms)
			return rk_error_set(err, RK_EINVAL,
					    "outcome %d (job %lld): finish_ms %lld after end_ms %lld", i,
					    (long long)outcomes[i].id, (long long)outcomes[i].finish_ms,
					    (long long)end_ms);
	}
	for (int i = 0; i < ns; i++) {
		int rc = check_sample(&samples[i], i, i > 0 ? samples[i - 1].t_ms : start_ms, start_ms,
				      end_ms, err);
		if (rc)
			return rc;
	}

	double *jct = NULL;
	if (n > 0) {
		jct = malloc((size_t)n * sizeof(*jct));
		if (!jct)
			return rk_error_set(err, RK_ENOMEM, "metrics: out of memory");
	}
	struct rk_sim_summary s;
	memset(&s, 0, sizeof(s));
	s.jobs = n;
	/* Sums of integer milliseconds stay exact; divide once at the end. */
	long long jct_ms_sum = 0, queue_ms_sum = 0, restarts = 0, preempts = 0;
	int started = 0;
	int64_t last_finish = start_ms;
	double gpu_s = 0.0;
	for (int i = 0; i < n; i++) {
		const struct rk_job_outcome *o = &outcomes[i];
		s.guaranteed += o->guaranteed != 0;
		if (o->rejected) { /* never ran: only counted as rejected */
			s.rejected++;
			continue;
		}
		if (o->guaranteed && o->sla_below_s > 0)
			s.sla_violations++;
		if (o->guaranteed && o->preemptions > 0)
			s.sla_preempted++;
		s.sla_violation_s += o->sla_below_s;
		/* 0 = the job never ran: it says nothing about the worst ratio. */
		if (o->guaranteed && o->sla_worst_ratio > 0 &&
		    (s.sla_worst_ratio == 0 || o->sla_worst_ratio < s.sla_worst_ratio))
			s.sla_worst_ratio = o->sla_worst_ratio;
		if (o->completed) {
			int64_t d = o->finish_ms - o->submit_ms;
			jct[s.completed++] = (double)d / 1000.0;
			jct_ms_sum += d;
			if (o->finish_ms > last_finish)
				last_finish = o->finish_ms;
		} else {
			s.unfinished++;
		}
		if (o->first_start_ms >= 0) {
			queue_ms_sum += o->first_start_ms - o->submit_ms;
			started++;
		} else {
			s.never_started++;
		}
		restarts += o->restarts;
		preempts += o->preemptions;
		gpu_s += o->gpu_s;
	}
	if (s.completed > 0) {
		qsort(jct, (size_t)s.completed, sizeof(*jct), cmp_double);
		s.avg_jct_s = (double)jct_ms_sum / 1000.0 / (double)s.completed;
		s.median_jct_s = rk_metrics_percentile(jct, s.completed, 50.0);
		s.p95_jct_s = rk_metrics_percentile(jct, s.completed, 95.0);
		s.p99_jct_s = rk_metrics_percentile(jct, s.completed, 99.0);
		s.max_jct_s = jct[s.completed - 1];
	}
	free(jct);
	int64_t mk_end = s.unfinished > 0 ? end_ms : last_finish;
	s.makespan_s = (double)(mk_end - start_ms) / 1000.0;
	s.avg_queue_s = started > 0 ? (double)queue_ms_sum / 1000.0 / (double)started : 0.0;
	s.gpu_hours = gpu_s / 3600.0;
	s.reconfigs_per_job = n > 0 ? (double)restarts / (double)n : 0.0;
	s.preemptions_per_job = n > 0 ? (double)preempts / (double)n : 0.0;
	integrate_samples(samples, ns, end_ms, &s);
	*out = s;
	return 0;
}

void rk_job_outcome_from_job(const struct rk_job *job, int64_t finish_ms, int preemptions,
			     double gpu_s, struct rk_job_outcome *out)
{
	memset(out, 0, sizeof(*out));
	out->id = job->id;
	/* Both sources are NUL-terminated arrays of the same size as the targets. */
	memcpy(out->name, job->name, sizeof(out->name));
	out->name[sizeof(out->name) - 1] = '\0';
	if (job->model) {
		memcpy(out->model, job->model->name, sizeof(out->model));
		out->model[sizeof(out->model) - 1] = '\0';
	}
	out->req_gpus = job->req_gpus;
	out->submit_ms = job->submit_ms;
	out->first_start_ms = job->first_start_ms;
	out->completed = job->state == RK_JOB_DONE;
	out->finish_ms = out->completed ? finish_ms : -1;
	out->restarts = job->restarts;
	out->preemptions = preemptions;
	out->gpu_s = gpu_s;
	out->guaranteed = job->guaranteed != 0;
}
