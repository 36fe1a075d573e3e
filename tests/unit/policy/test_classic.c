/* The four classic baselines on hand-checked snapshots (expected decisions worked out by hand). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "rubick/policy.h"

#define MAXJ 200

static struct rk_cluster cl;
static struct rk_job jobs[MAXJ];
static struct rk_job *ptrs[MAXJ];
static int nj;

static void cluster(const char *spec)
{
	struct rk_error err;
	rk_cluster_fini(&cl);
	assert_int_equal(rk_cluster_parse(&cl, spec, "t", &err), 0);
}

/* A pending job with `gpus` GPUs, plain DP plan, batch 8 x gpus. */
static struct rk_job *job(int64_t id, int64_t submit_s, int gpus, double est_s)
{
	struct rk_job *j = &jobs[nj];
	memset(j, 0, sizeof(*j));
	j->id = id;
	snprintf(j->name, sizeof(j->name), "j%lld", (long long)id);
	j->submit_ms = submit_s * 1000;
	j->req_gpus = gpus;
	j->global_batch = 8 * gpus;
	j->req_plan = (struct rk_plan){.dp = gpus, .tp = 1, .pp = 1, .mb = 8, .ga = 1};
	j->est_duration_s = est_s;
	j->iters_total = 100;
	j->state = RK_JOB_PENDING;
	j->first_start_ms = -1;
	rk_alloc_init(&j->alloc);
	ptrs[nj++] = j;
	return j;
}

static void run_on(struct rk_job *j, int node, int gpus)
{
	rk_alloc_add(&j->alloc, node, gpus, 0, 0);
	j->plan = j->req_plan;
	j->state = RK_JOB_RUNNING;
}

/* Run policy `name`; render decisions as "id:node/gpus+node/gpus id:- ..." in order. */
static void decide(const char *name, const char *options, char *buf, size_t cap)
{
	const struct rk_policy_ops *p = rk_policy_find(name);
	assert_non_null(p);
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(p->create(&st, options, &err), 0);
	struct rk_sched_input in = {.now_ms = 1000000, .cluster = &cl, .jobs = ptrs, .n_jobs = nj};
	struct rk_decisions ds;
	rk_decisions_init(&ds);
	int rc = p->schedule(st, &in, &ds, &err);
	if (rc)
		fail_msg("%s: %s", name, err.msg);
	/* Every baseline's decisions pass validation. */
	if (rk_decisions_validate(&in, &ds, name, &err))
		fail_msg("%s", err.msg);
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < ds.n; i++) {
		const struct rk_decision *d = &ds.v[i];
		len += (size_t)snprintf(buf + len, cap - len, "%s%lld:", i ? " " : "",
					(long long)d->job_id);
		if (d->alloc.n == 0)
			len += (size_t)snprintf(buf + len, cap - len, "-");
		for (int k = 0; k < d->alloc.n; k++)
			len += (size_t)snprintf(buf + len, cap - len, "%s%d/%d", k ? "+" : "",
						d->alloc.shares[k].node, d->alloc.shares[k].gpus);
	}
	rk_decisions_fini(&ds);
	p->destroy(st);
}

static int reset(void **state)
{
	(void)state;
	for (int i = 0; i < nj; i++)
		rk_alloc_fini(&jobs[i].alloc);
	nj = 0;
	rk_cluster_fini(&cl);
	return 0;
}

static void fifo_vs_sjf(void **state)
{
	(void)state;
	char out[256];
	cluster("1x4");
	job(1, 0, 3, 100);
	job(2, 1, 2, 10);
	job(3, 2, 1, 50);
	/* FIFO: job 1 (3 GPUs), job 2 does not fit in the 1 left and is skipped, job 3 fits. */
	decide("fifo", NULL, out, sizeof(out));
	assert_string_equal(out, "1:0/3 3:0/1");
	/* SJF: job 2 (10 s), job 3 (50 s); job 1 no longer fits. */
	decide("sjf", NULL, out, sizeof(out));
	assert_string_equal(out, "2:0/2 3:0/1");
	/* Without preemption a running job stays, even for a shorter arrival. */
	reset(NULL);
	cluster("1x4");
	run_on(job(1, 0, 4, 1000), 0, 4);
	job(2, 1, 1, 1);
	decide("fifo", NULL, out, sizeof(out));
	assert_string_equal(out, "");
	decide("sjf", NULL, out, sizeof(out));
	assert_string_equal(out, "");
}

static void srtf_preempts(void **state)
{
	(void)state;
	char out[256];
	cluster("1x4");
	struct rk_job *a = job(1, 0, 4, 1000);
	run_on(a, 0, 4);
	a->iters_done = 50; /* 500 s left */
	job(2, 10, 2, 100);
	/* Job 2 (100 s) beats job 1 (500 s left): job 1 is preempted to make room. */
	decide("srtf", NULL, out, sizeof(out));
	assert_string_equal(out, "2:0/2 1:-");
	/* Job 2 longer than what job 1 has left: nothing changes. */
	jobs[1].est_duration_s = 600;
	decide("srtf", NULL, out, sizeof(out));
	assert_string_equal(out, "");
	assert_int_equal(rk_policy_find("srtf")->create(&(void *){NULL}, "x=1", NULL), RK_EINVAL);
}

static void preempt_only_what_helps(void **state)
{
	(void)state;
	char out[256];
	cluster("2x4");
	/* Job 1 (shortest) holds 2+2 across both nodes; job 3 needs tp=4 inside one node. */
	struct rk_job *a = job(1, 0, 4, 10);
	run_on(a, 0, 2);
	run_on(a, 1, 2);
	struct rk_job *b = job(3, 2, 4, 20);
	b->req_plan = (struct rk_plan){.dp = 1, .tp = 4, .pp = 1, .mb = 32, .ga = 1};
	struct rk_job *c = job(2, 1, 1, 500);
	run_on(c, 1, 1);
	/* Preempting job 2 frees 2+2, not 4 on one node: job 2 must keep running. */
	decide("srtf", NULL, out, sizeof(out));
	assert_string_equal(out, "");
	/* With job 1 on node 0 only, preempting job 2 frees node 1 for job 3. */
	rk_alloc_fini(&a->alloc);
	run_on(a, 0, 4);
	decide("srtf", NULL, out, sizeof(out));
	assert_string_equal(out, "3:1/4 2:-");
}

static void srtf_backfills(void **state)
{
	(void)state;
	char out[256];
	cluster("1x8");
	run_on(job(1, 0, 4, 100), 0, 4);
	job(2, 1, 8, 10); /* shortest, but would need job 1's GPUs... */
	job(3, 2, 2, 1000);
	/* Job 2 (8 GPUs, 10 s) is selected, job 1 (4 GPUs) no longer fits the budget and is
	 * preempted; job 3 cannot fit in what job 2 leaves. */
	decide("srtf", NULL, out, sizeof(out));
	assert_string_equal(out, "2:0/8 1:-");
	/* A job larger than the cluster is never selected; job 3 fits beside job 1. */
	jobs[1].req_gpus = 16; /* larger than the cluster: never selected */
	decide("srtf", NULL, out, sizeof(out));
	assert_string_equal(out, "3:0/2");
}

static void tiresias_queues(void **state)
{
	(void)state;
	char out[256];
	cluster("1x4");
	struct rk_job *a = job(1, 0, 4, 0);
	run_on(a, 0, 4);
	a->attained_gpu_s = 20 * 3600; /* 20 GPU-hours: queue 1 */
	job(2, 100, 4, 0);
	/* Job 2 (queue 0) preempts job 1 (queue 1) though it arrived later. */
	decide("tiresias", NULL, out, sizeof(out));
	assert_string_equal(out, "2:0/4 1:-");
	/* Below the threshold both are in queue 0: FIFO, job 1 keeps running. */
	a->attained_gpu_s = 15 * 3600;
	decide("tiresias", NULL, out, sizeof(out));
	assert_string_equal(out, "");
	/* A lower threshold by option puts job 1 in queue 1 again. */
	decide("tiresias", "threshold_gpu_h=10", out, sizeof(out));
	assert_string_equal(out, "2:0/4 1:-");
	struct rk_error err;
	void *st;
	assert_int_equal(rk_policy_find("tiresias")->create(&st, "threshold_gpu_h=-1", &err),
			 RK_EINVAL);
	assert_non_null(strstr(err.msg, "threshold_gpu_h"));
	assert_int_equal(rk_policy_find("tiresias")->create(&st, "queues=3", &err), RK_EINVAL);
}

static void ties_by_id(void **state)
{
	(void)state;
	char out[256];
	cluster("1x2");
	job(7, 5, 2, 10);
	job(3, 5, 2, 10);
	/* Same submit time and length: the lower id wins under every policy. */
	const char *names[] = {"fifo", "sjf", "srtf", "tiresias"};
	for (int i = 0; i < 4; i++) {
		decide(names[i], NULL, out, sizeof(out));
		assert_string_equal(out, "3:0/2");
	}
}

/* Render decisions of `p` with state `st` on the current snapshot. */
static void decide_with(const struct rk_policy_ops *p, void *st, char *buf, size_t cap)
{
	struct rk_error err;
	struct rk_sched_input in = {.now_ms = 1000000, .cluster = &cl, .jobs = ptrs, .n_jobs = nj};
	struct rk_decisions ds;
	rk_decisions_init(&ds);
	if (p->schedule(st, &in, &ds, &err))
		fail_msg("%s", err.msg);
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < ds.n && len < cap; i++) {
		const struct rk_decision *d = &ds.v[i];
		len += (size_t)snprintf(buf + len, cap - len, "%lld:%d;", (long long)d->job_id,
					d->alloc.n ? d->alloc.shares[0].node : -1);
	}
	rk_decisions_fini(&ds);
}

/*
 * The preemptive policies keep last round's order to re-sort cheaply; over
 * rounds where running jobs progress and jobs arrive, a long-lived state must
 * decide exactly what a fresh one decides.
 */
static void cached_order_is_exact(void **state)
{
	(void)state;
	const char *names[] = {"srtf", "tiresias"};
	for (int k = 0; k < 2; k++) {
		reset(NULL);
		cluster("4x8");
		uint64_t x = 12345;
		for (int i = 0; i < 150; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			int g = 1 << (int)((x >> 33) % 4); /* 1, 2, 4 or 8 GPUs */
			struct rk_job *j = job(i + 1, (int64_t)((x >> 20) % 1000), g,
					       10.0 + (double)((x >> 40) % 5000));
			j->attained_gpu_s = (double)((x >> 28) % 100000);
		}
		const struct rk_policy_ops *p = rk_policy_find(names[k]);
		void *kept = NULL;
		struct rk_error err;
		assert_int_equal(p->create(&kept, NULL, &err), 0);
		char a[8192], b[8192];
		for (int round = 0; round < 8; round++) {
			void *fresh = NULL;
			assert_int_equal(p->create(&fresh, NULL, &err), 0);
			decide_with(p, kept, a, sizeof(a));
			decide_with(p, fresh, b, sizeof(b));
			assert_string_equal(a, b);
			p->destroy(fresh);
			/* Running jobs progress (and climb in SRTF order, drop queues in Tiresias). */
			for (int i = 0; i < nj; i++) {
				struct rk_job *j = &jobs[i];
				if (j->alloc.n > 0) {
					j->iters_done += (double)((i * 37 + round * 11) % 90);
					if (j->iters_done > j->iters_total)
						j->iters_done = j->iters_total;
					j->attained_gpu_s += 3600.0 * (double)((i + round) % 5) * 4;
				}
			}
			/* Short arrivals: they must jump the queue (cached order puts them last). */
			for (int q = 0; q < 5; q++)
				job(1000 + round * 10 + q, 2000 + round, 4, 1.0 + q)->attained_gpu_s = 0;
			/* Start the first few pending jobs by hand where they fit the count. */
			int started = 0;
			for (int i = 0; i < nj && started < 3; i++)
				if (jobs[i].alloc.n == 0 && jobs[i].req_gpus <= 8 && round % 2 == 0) {
					run_on(&jobs[i], (round + i) % 4, 1);
					jobs[i].req_gpus = 1;
					jobs[i].global_batch = 8;
					jobs[i].req_plan.dp = 1;
					jobs[i].plan = jobs[i].req_plan;
					started++;
				}
		}
		p->destroy(kept);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(fifo_vs_sjf, reset),
		cmocka_unit_test_teardown(srtf_preempts, reset),
		cmocka_unit_test_teardown(preempt_only_what_helps, reset),
		cmocka_unit_test_teardown(srtf_backfills, reset),
		cmocka_unit_test_teardown(tiresias_queues, reset),
		cmocka_unit_test_teardown(ties_by_id, reset),
		cmocka_unit_test_teardown(cached_order_is_exact, reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
