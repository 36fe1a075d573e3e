/*
 * Tiresias 2D-LAS (algorithms.md §5.5): priority by attained service (GPUs x
 * time held, rk_job.attained_gpu_s) discretised into two queues split at 16
 * GPU-hours as in the code the Sia artifact runs; FIFO by arrival inside a
 * queue; preemptive, gang, consolidated placement. Starvation promotion (an
 * option in the paper) is not modelled. Option: "threshold_gpu_h=H".
 */
#include "classic.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_THRESHOLD_GPU_H 16.0

struct tiresias {
	double threshold_gpu_s; /* attained service at which a job drops to queue 1 */
	struct classic_cache cache;
};

static void tiresias_key(const struct rk_job *job, int64_t now_ms, const void *opt,
			 struct classic_key *out)
{
	const struct tiresias *t = opt;
	(void)now_ms;
	out->k1 = job->attained_gpu_s >= t->threshold_gpu_s ? 1 : 0;
	out->k2 = job->submit_ms;
}

static const struct classic_spec spec = {"tiresias", tiresias_key, 1};

static int tiresias_create(void **state, const char *options, struct rk_error *err)
{
	struct tiresias *t = calloc(1, sizeof(*t));
	if (!t)
		return rk_error_set(err, RK_ENOMEM, "policy tiresias: out of memory");
	t->threshold_gpu_s = DEFAULT_THRESHOLD_GPU_H * 3600.0;
	if (options && *options) {
		const char *key = "threshold_gpu_h=";
		char *end;
		errno = 0;
		double h = strncmp(options, key, strlen(key)) ? NAN
							       : strtod(options + strlen(key), &end);
		if (isnan(h) || errno || *end || !(h > 0) || !isfinite(h)) {
			free(t);
			return rk_error_set(err, RK_EINVAL, "policy tiresias: option '%s': expected "
					    "threshold_gpu_h=H with H > 0 GPU-hours", options);
		}
		t->threshold_gpu_s = h * 3600.0;
	}
	*state = t;
	return 0;
}

static void tiresias_destroy(void *state)
{
	struct tiresias *t = state;
	if (t)
		classic_cache_fini(&t->cache);
	free(t);
}

static int tiresias_schedule(void *state, const struct rk_sched_input *in,
			     struct rk_decisions *out, struct rk_error *err)
{
	struct tiresias *t = state;
	int rc = classic_schedule(&spec, state, &t->cache, in, out, err);
	if (rc)
		return rc;
	/*
	 * Priorities change between arrivals and completions only when a job
	 * holding GPUs crosses the threshold; ask for a round then (and only if
	 * someone waits: otherwise nobody could take its place).
	 */
	int waiting = 0;
	int64_t wake = 0;
	/* With the change feed every active job either waits or is among the holders. */
	struct rk_job *const *look = in->incremental ? in->holders : in->jobs;
	int n_look = in->incremental ? in->n_holders : in->n_jobs;
	if (in->incremental)
		waiting = in->n_jobs > in->n_holders;
	for (int i = 0; i < in->n_jobs && !in->incremental; i++)
		waiting |= in->jobs[i]->state == RK_JOB_PENDING;
	for (int i = 0; i < n_look && waiting; i++) {
		const struct rk_job *j = look[i];
		int g = rk_alloc_total_gpus(&j->alloc);
		if (g <= 0 || j->attained_gpu_s >= t->threshold_gpu_s)
			continue;
		double ms = ceil((t->threshold_gpu_s - j->attained_gpu_s) / g * 1000.0);
		int64_t at = in->now_ms + (ms < 1 ? 1 : (int64_t)ms);
		if (wake == 0 || at < wake)
			wake = at;
	}
	if (wake && (out->wake_ms == 0 || wake < out->wake_ms))
		out->wake_ms = wake;
	return 0;
}

const struct rk_policy_ops rk_policy_tiresias = {
	.name = "tiresias",
	.summary = "Tiresias 2D-LAS: 2 queues split at 16 GPU-hours attained, FIFO inside; preemptive",
	.create = tiresias_create,
	.destroy = tiresias_destroy,
	.schedule = tiresias_schedule,
	/* With nobody waiting every holder fits the budget: nothing to preempt for. */
	.flags = RK_POLICY_IDLE_NOOP | RK_POLICY_EVENT_DRIVEN,
};
