/*
 * Tiresias 2D-LAS (docs/references.md §5.5): priority by attained service (GPUs x
 * time held, rk_job.attained_gpu_s) discretised into two queues split at 16
 * GPU-hours as in the code the Sia artifact runs; FIFO by arrival inside a
 * queue; preemptive, gang, consolidated placement (yarn, as Tiresias' own
 * simulator). Starvation promotion (an option in the paper) is not modelled.
 * Options: threshold_gpu_h=H (the one split), queues_gpu_s=A:B:... (several
 * queues, e.g. Muri's dlas-gpu 3250:7200 GPU-seconds), placement=MODE,
 * queue_order=arrival|running-first.
 *
 * queue_order=running-first is the queue discipline of the Tiresias and Muri
 * simulators (Muri simulator/run_sim.py dlas_sim_jobs): a job enters queue 0
 * at arrival and a lower queue when it is demoted (at the end of it); after
 * every round the waiting jobs of a queue move behind its running ones. So a
 * running job is never preempted for a waiting one of its own queue, and
 * waiting jobs of a queue go in the order they entered it. As a key:
 * (2q + waiting, instant the job entered queue q). The default (arrival)
 * orders every queue by arrival, running or not, as the Sia artifact's port.
 */
#include "policy/classic/classic.h"
#include "policy/common/place_opts.h"
#include "rubick/idtab.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_THRESHOLD_GPU_H 16.0
#define MAX_QUEUES              8

/* The queue a job was last seen in and when it entered it (running-first). */
struct trec {
	struct rk_idtab_head h;
	int q;
	int64_t entered_ms;
};

struct tiresias {
	/* Attained service (GPU-s) at which a job drops to queue q+1, ascending. */
	double limit_gpu_s[MAX_QUEUES - 1];
	int n_limits;
	int running_first; /* queue_order=running-first */
	struct rk_idtab recs; /* struct trec of demoted jobs, by job id */
	struct classic_cache cache;
};

static int queue_of(const struct tiresias *t, const struct rk_job *job)
{
	int q = 0;
	while (q < t->n_limits && job->attained_gpu_s >= t->limit_gpu_s[q])
		q++;
	return q;
}

static void tiresias_key(const struct rk_job *job, int64_t now_ms, const void *opt,
			 struct classic_key *out)
{
	const struct tiresias *t = opt;
	(void)now_ms;
	int q = queue_of(t, job);
	out->k1 = q;
	out->k2 = job->submit_ms;
	if (t->running_first) {
		const struct trec *r = rk_idtab_find(&t->recs, job->id);
		out->k1 = 2 * q + (job->alloc.n > 0 ? 0 : 1);
		if (q > 0 && r && r->q == q)
			out->k2 = r->entered_ms;
	}
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
 * splits in GPU-seconds, e.g. Muri's dlas-gpu 3250:7200, docs/references.md §8).
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
	if (!strcmp(key, "queue_order")) {
		if (!strcmp(v, "arrival"))
			t->running_first = 0;
		else if (!strcmp(v, "running-first"))
			t->running_first = 1;
		else
			return rk_error_set(err, RK_EINVAL, "policy tiresias: queue_order=%s: must be "
					    "'arrival' or 'running-first'", v);
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
	rk_idtab_init(&t->recs, sizeof(struct trec));
	int rc = rk_place_opts_parse(options, "tiresias", &t->cache.mode, tiresias_opt, t,
				     "threshold_gpu_h, queues_gpu_s, queue_order", err);
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
	if (t) {
		classic_cache_fini(&t->cache);
		rk_idtab_fini(&t->recs);
	}
	free(t);
}

static int active(const struct rk_job *j)
{
	return j->state == RK_JOB_PENDING || j->state == RK_JOB_RUNNING ||
	       j->state == RK_JOB_RESTARTING;
}

/*
 * running-first: note when each holder entered a lower queue (attained
 * service only grows while a job holds GPUs, so only holders move) and forget
 * jobs that are gone. Runs before the round, so keys read this round's queue.
 */
static int track_queues(struct tiresias *t, const struct rk_sched_input *in)
{
	struct rk_job *const *look = in->incremental ? in->holders : in->jobs;
	int n_look = in->incremental ? in->n_holders : in->n_jobs;
	for (int i = 0; i < n_look; i++) {
		const struct rk_job *j = look[i];
		struct trec *r = rk_idtab_find(&t->recs, j->id);
		if (!active(j)) {
			if (r)
				rk_idtab_del(&t->recs, r);
			continue;
		}
		int q = queue_of(t, j);
		if (q == 0 || (r && r->q >= q))
			continue;
		if (r) {
			r->q = q;
			r->entered_ms = in->now_ms;
		} else {
			struct trec nr = {.h.id = j->id, .q = q, .entered_ms = in->now_ms};
			int rc = rk_idtab_put(&t->recs, &nr);
			if (rc)
				return rc;
		}
	}
	for (int i = 0; in->incremental && i < in->n_changed; i++) {
		struct trec *r = rk_idtab_find(&t->recs, in->changed[i]->id);
		if (r && !active(in->changed[i]))
			rk_idtab_del(&t->recs, r);
	}
	return 0;
}

static int tiresias_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
                             struct rk_error *err)
{
	struct tiresias *t = state;
	int rc = t->running_first ? track_queues(t, in) : 0;
	if (rc)
		return rk_error_set(err, rc, "policy tiresias: out of memory");
	rc = classic_schedule(&spec, state, &t->cache, in, out, err);
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
		int q = queue_of(t, j);
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
