/*
 * Tiresias 2D-LAS (algorithms.md §5.5): priority by attained service (GPUs x
 * time held, rk_job.attained_gpu_s) discretised into two queues split at 16
 * GPU-hours as in the code the Sia artifact runs; FIFO by arrival inside a
 * queue; preemptive, gang, consolidated placement (yarn, as Tiresias' own
 * simulator). Starvation promotion (an option in the paper) is not modelled.
 * Options: threshold_gpu_h=H (the one split), queues_gpu_s=A:B:... (several
 * queues, e.g. Muri's dlas-gpu 3250:7200 GPU-seconds), placement=MODE.
 */
#include "classic.h"
#include "policy/place_opts.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_THRESHOLD_GPU_H 16.0
#define MAX_QUEUES              8

struct tiresias {
	/* Attained service (GPU-s) at which a job drops to queue q+1, ascending. */
	double limit_gpu_s[MAX_QUEUES - 1];
	int n_limits;
	struct classic_cache cache;
};

static void tiresias_key(const struct rk_job *job, int64_t now_ms, const void *opt,
                         struct classic_key *out)
{
	const struct tiresias *t = opt;
	(void)now_ms;
	int q = 0;
	while (q < t->n_limits && job->attained_gpu_s >= t->limit_gpu_s[q])
		q++;
	out->k1 = q;
	out->k2 = job->submit_ms;
}

static const struct classic_spec spec = {"tiresias", tiresias_key, 1};

static int parse_positive(const char *v, double scale, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || end == v || *end || !(x > 0) || !isfinite(x * scale))
		return -1;
	*out = x * scale;
	return 0;
}

/*
 * threshold_gpu_h=H (one split, GPU-hours) or queues_gpu_s=A:B:... (ascending
 * splits in GPU-seconds, e.g. Muri's dlas-gpu 3250:7200, peer_results.md).
 */
static int tiresias_opt(void *ctx, const char *key, const char *v, struct rk_error *err)
{
	struct tiresias *t = ctx;
	if (!strcmp(key, "threshold_gpu_h")) {
		if (parse_positive(v, 3600.0, &t->limit_gpu_s[0]))
			return rk_error_set(err, RK_EINVAL,
			                    "policy tiresias: option 'threshold_gpu_h=%s': "
			                    "expected threshold_gpu_h=H with H > 0 GPU-hours",
			                    v);
		t->n_limits = 1;
		return 0;
	}
	if (strcmp(key, "queues_gpu_s"))
		return 1;
	int n = 0;
	const char *p = v;
	while (*p) {
		size_t len = strcspn(p, ":");
		char num[32];
		double x;
		if (n == MAX_QUEUES - 1 || len == 0 || len >= sizeof(num))
			goto bad;
		memcpy(num, p, len);
		num[len] = '\0';
		if (parse_positive(num, 1.0, &x) || (n > 0 && x <= t->limit_gpu_s[n - 1]))
			goto bad;
		t->limit_gpu_s[n++] = x;
		p += len + (p[len] == ':');
	}
	if (n == 0)
		goto bad;
	t->n_limits = n;
	return 0;
bad:
	return rk_error_set(err, RK_EINVAL,
	                    "policy tiresias: option 'queues_gpu_s=%s': expected 1 to %d "
	                    "ascending GPU-second splits joined by ':' (e.g. 3250:7200)",
	                    v, MAX_QUEUES - 1);
}

static int tiresias_create(void **state, const char *options, struct rk_error *err)
{
	*state = NULL;
	struct tiresias *t = calloc(1, sizeof(*t));
	if (!t)
		return rk_error_set(err, RK_ENOMEM, "policy tiresias: out of memory");
	t->limit_gpu_s[0] = DEFAULT_THRESHOLD_GPU_H * 3600.0;
	t->n_limits = 1;
	t->cache.mode = CLASSIC_PLACE_DEFAULT;
	int rc = rk_place_opts_parse(options, "tiresias", &t->cache.mode, tiresias_opt, t,
	                             "threshold_gpu_h, queues_gpu_s", err);
	if (rc) {
		free(t);
		return rc;
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

static int tiresias_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
                             struct rk_error *err)
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
		int q = 0;
		while (q < t->n_limits && j->attained_gpu_s >= t->limit_gpu_s[q])
			q++;
		if (g <= 0 || q == t->n_limits)
			continue;
		double ms = ceil((t->limit_gpu_s[q] - j->attained_gpu_s) / g * 1000.0);
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
