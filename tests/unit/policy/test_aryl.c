/*
 * Policy aryl (docs/references.md §2.4, docs/aryl.md) on hand-checked rounds:
 * base demand on training servers and flexible workers on loaned ones, the
 * restart cost that stops a scale-out which does not pay, flexible workers
 * taken back for a waiting job, aryl-noloan ignoring loaned servers, options.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "rubick/aryl.h"

static struct rk_model model = {.name = "toy", .global_batch = 8};
static struct rk_cluster cl;
static struct rk_job jobs[2];
static struct rk_job *ptrs[2];
static struct rk_sched_input in;

static void job(int i, int req, int min, int max, double est_s)
{
	struct rk_job *j = &jobs[i];
	memset(j, 0, sizeof *j);
	j->id = i + 1;
	snprintf(j->name, sizeof j->name, "j%d", i + 1);
	j->model = &model;
	j->global_batch = 8;
	j->req_gpus = req;
	j->min_gpus = min;
	j->max_gpus = max;
	j->req_plan = (struct rk_plan){.dp = req, .tp = 1, .pp = 1, .mb = 8 / req, .ga = 1};
	j->iters_total = 100;
	j->est_duration_s = est_s;
	j->state = RK_JOB_PENDING;
	rk_alloc_init(&j->alloc);
	ptrs[i] = j;
}

static void run_on(int node, int i, int gpus)
{
	rk_alloc_add(&jobs[i].alloc, node, gpus, 0, 0);
	jobs[i].state = RK_JOB_RUNNING;
	assert_int_equal(rk_aryl_plan_for(&jobs[i], rk_alloc_total_gpus(&jobs[i].alloc), &jobs[i].plan), 0);
}

static void setup(int n)
{
	rk_cluster_fini(&cl);
	assert_int_equal(rk_cluster_parse(&cl, "1x4+1x4,pool=loaned", "t", NULL), 0);
	in = (struct rk_sched_input){.now_ms = 0, .cluster = &cl, .jobs = ptrs, .n_jobs = n};
}

static void done(int n)
{
	for (int i = 0; i < n; i++)
		rk_alloc_fini(&jobs[i].alloc);
	rk_cluster_fini(&cl);
}

static void round_of(const char *policy, const char *opts, struct rk_decisions *d)
{
	const struct rk_policy_ops *p = rk_policy_find(policy);
	assert_non_null(p);
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(p->create(&st, opts, &err), 0);
	rk_decisions_init(d);
	if (p->schedule(st, &in, d, &err))
		fail_msg("%s", err.msg);
	p->destroy(st);
	if (rk_decisions_validate(&in, d, policy, &err))
		fail_msg("%s", err.msg);
}

static int gpus_on(const struct rk_alloc *a, int node)
{
	for (int i = 0; i < a->n; i++)
		if (a->shares[i].node == node)
			return a->shares[i].gpus;
	return 0;
}

static void test_start_wide_on_loaned(void **state)
{
	(void)state;
	/* Elastic 2 GPUs (1..4), long: base 1 GPU on the training server; the
	 * MCKP may add k = 1 (w = 2) or k = 3 (w = 4; w = 3 does not divide the
	 * batch 8): k = 3, placed on the loaned server. */
	job(0, 2, 1, 4, 10000);
	setup(1);
	struct rk_decisions d;
	round_of("aryl", NULL, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(rk_alloc_total_gpus(&d.v[0].alloc), 4);
	assert_int_equal(gpus_on(&d.v[0].alloc, 0), 1);
	assert_int_equal(gpus_on(&d.v[0].alloc, 1), 3);
	assert_int_equal(d.v[0].plan.dp, 4);
	rk_decisions_fini(&d);
	/* The baseline: its request, training server only. */
	round_of("aryl-noloan", NULL, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(rk_alloc_total_gpus(&d.v[0].alloc), 2);
	assert_int_equal(gpus_on(&d.v[0].alloc, 1), 0);
	rk_decisions_fini(&d);
	done(1);
}

static void test_restart_cost(void **state)
{
	(void)state;
	/* Running on 2 GPUs: T(2) = 300 s, T(4) = 300 x 0.5^0.8 = 172 s; the
	 * 128 s gain does not repay a 260 s restart: nothing changes. */
	job(0, 2, 1, 4, 300);
	run_on(0, 0, 2);
	setup(1);
	struct rk_decisions d;
	round_of("aryl", NULL, &d);
	assert_int_equal(d.n, 0);
	rk_decisions_fini(&d);
	/* With restart=60 the gain pays: scale to 4. */
	round_of("aryl", "restart=60", &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(rk_alloc_total_gpus(&d.v[0].alloc), 4);
	rk_decisions_fini(&d);
	/* A long job pays even the default restart. */
	jobs[0].est_duration_s = 10000;
	round_of("aryl", NULL, &d);
	assert_int_equal(d.n, 1);
	rk_decisions_fini(&d);
	done(1);
}

static void test_take_back_flexible(void **state)
{
	(void)state;
	/* Loaned server down; elastic job 1 holds all 4 training GPUs (base 1);
	 * inelastic job 2 (3 GPUs) waits: job 1 scales in to 1, job 2 starts. */
	job(0, 2, 1, 4, 10000);
	job(1, 3, 3, 3, 100);
	jobs[1].global_batch = 6;
	jobs[1].req_plan.mb = 2;
	run_on(0, 0, 4);
	setup(2);
	cl.nodes[1].up = 0;
	struct rk_decisions d;
	round_of("aryl", NULL, &d);
	assert_int_equal(d.n, 2);
	for (int i = 0; i < d.n; i++) {
		if (d.v[i].job_id == 1)
			assert_int_equal(rk_alloc_total_gpus(&d.v[i].alloc), 1);
		else
			assert_int_equal(rk_alloc_total_gpus(&d.v[i].alloc), 3);
	}
	rk_decisions_fini(&d);
	done(2);
}

static void test_options(void **state)
{
	(void)state;
	const struct rk_policy_ops *p = rk_policy_find("aryl");
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(p->create(&st, "bogus=1", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "policy aryl: unknown or out-of-range option 'bogus=1'"));
	assert_int_equal(p->create(&st, "scaling=2", &err), RK_EINVAL);
	assert_int_equal(p->create(&st, "restart", &err), RK_EINVAL);
	assert_int_equal(p->create(&st, "restart=10,scaling=0.5", &err), 0);
	p->destroy(st);
	assert_non_null(rk_policy_reclaim_hook(p));
	assert_null(rk_policy_reclaim_hook(rk_policy_find("aryl-noloan")));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_wide_on_loaned),
		cmocka_unit_test(test_restart_cost),
		cmocka_unit_test(test_take_back_flexible),
		cmocka_unit_test(test_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
