/* Registry lookups, decision lists and every validation error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "rubick/policy.h"

static struct rk_cluster cl;
static struct rk_job jobs[3];
static struct rk_job *ptrs[3];
static struct rk_sched_input in;

static const struct rk_plan dp4 = {.dp = 4, .tp = 1, .pp = 1, .mb = 4, .ga = 1};

static int setup(void **state)
{
	(void)state;
	struct rk_error err;
	assert_int_equal(rk_cluster_parse(&cl, "2x4,cpus=32,mem=100G", "t", &err), 0);
	memset(jobs, 0, sizeof(jobs));
	for (int i = 0; i < 3; i++) {
		jobs[i].id = 10 + i;
		snprintf(jobs[i].name, sizeof(jobs[i].name), "job%d", i);
		jobs[i].global_batch = 16;
		jobs[i].req_gpus = 4;
		jobs[i].req_plan = dp4;
		jobs[i].state = RK_JOB_PENDING;
		rk_alloc_init(&jobs[i].alloc);
		ptrs[i] = &jobs[i];
	}
	/* job 10 runs on node 0 with 4 GPUs, 16 CPUs, 10 GiB. */
	jobs[0].state = RK_JOB_RUNNING;
	rk_alloc_add(&jobs[0].alloc, 0, 4, 16, 10240);
	jobs[0].plan = dp4;
	in = (struct rk_sched_input){.now_ms = 0, .cluster = &cl, .jobs = ptrs, .n_jobs = 3};
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++)
		rk_alloc_fini(&jobs[i].alloc);
	rk_cluster_fini(&cl);
	return 0;
}

static void registry(void **state)
{
	(void)state;
	int n = 0;
	const struct rk_policy_ops *const *all = rk_policy_list(&n);
	assert_true(n >= 4);
	const char *want[] = {"fifo", "sjf", "srtf", "tiresias"};
	for (int k = 0; k < 4; k++) {
		const struct rk_policy_ops *p = rk_policy_find(want[k]);
		assert_non_null(p);
		assert_string_equal(p->name, want[k]);
		assert_non_null(p->summary);
		assert_non_null(p->create);
		assert_non_null(p->destroy);
		assert_non_null(p->schedule);
	}
	for (int i = 0; i < n; i++) {
		/* Every registered policy, a new one included (docs/dev/write-a-policy.md). */
		assert_non_null(all[i]->name);
		assert_non_null(all[i]->summary);
		assert_non_null(all[i]->create);
		assert_non_null(all[i]->destroy);
		assert_non_null(all[i]->schedule);
		assert_ptr_equal(rk_policy_find(all[i]->name), all[i]);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(all[i]->name, all[j]->name);
	}
	assert_null(rk_policy_find("FIFO"));
	assert_null(rk_policy_find(""));
	assert_null(rk_policy_find(NULL));
}

static struct rk_alloc one_share(int node, int gpus, int cpus, int64_t mem)
{
	struct rk_alloc a;
	rk_alloc_init(&a);
	rk_alloc_add(&a, node, gpus, cpus, mem);
	return a;
}

static void expect(const struct rk_decisions *ds, int code, const char *msg)
{
	struct rk_error err;
	rk_error_clear(&err);
	assert_int_equal(rk_decisions_validate(&in, ds, "mine", &err), code);
	if (code && !strstr(err.msg, msg))
		fail_msg("message '%s' lacks '%s'", err.msg, msg);
}

static void valid_lists(void **state)
{
	(void)state;
	struct rk_decisions ds;
	rk_decisions_init(&ds);
	expect(&ds, 0, ""); /* nothing to do is fine */
	struct rk_alloc a = one_share(1, 4, 16, 10240);
	assert_int_equal(rk_decisions_push(&ds, 11, &a, &dp4), 0);
	expect(&ds, 0, "");
	/* Preempt job 10 and start job 12 where it ran: valid together. */
	rk_decisions_clear(&ds);
	assert_int_equal(ds.n, 0);
	struct rk_alloc b = one_share(0, 4, 16, 0);
	assert_int_equal(rk_decisions_push(&ds, 10, NULL, NULL), 0);
	assert_int_equal(rk_decisions_push(&ds, 12, &b, &dp4), 0);
	assert_int_equal(ds.v[0].alloc.n, 0);
	expect(&ds, 0, "");
	/* A job split 2+2 over both nodes with a matching plan. */
	rk_decisions_clear(&ds);
	struct rk_alloc c = one_share(0, 0, 0, 0);
	rk_alloc_fini(&c);
	rk_alloc_add(&c, 1, 2, 0, 0);
	rk_alloc_add(&c, 0, 2, 0, 0);
	assert_int_equal(rk_decisions_push(&ds, 10, &c, &dp4), 0);
	expect(&ds, 0, "");
	rk_alloc_fini(&a);
	rk_alloc_fini(&b);
	rk_alloc_fini(&c);
	rk_decisions_fini(&ds);
	assert_int_equal(ds.n, 0);
	assert_null(ds.v);
}

static void every_error(void **state)
{
	(void)state;
	struct rk_decisions ds;
	rk_decisions_init(&ds);
	struct rk_alloc a = one_share(0, 4, 0, 0);
	struct rk_alloc b = one_share(1, 4, 0, 0);

	/* GPUs over capacity: job 10 keeps node 0. */
	rk_decisions_push(&ds, 11, &a, &dp4);
	expect(&ds, RK_EINFEASIBLE, "policy mine: job 11 (job1): node 0: 4 GPUs asked, 0 free");
	rk_decisions_clear(&ds);
	/* Two jobs on node 1. */
	rk_decisions_push(&ds, 11, &b, &dp4);
	rk_decisions_push(&ds, 12, &b, &dp4);
	expect(&ds, RK_EINFEASIBLE, "policy mine: job 12 (job2): node 1: 4 GPUs asked, 0 free");
	rk_decisions_clear(&ds);
	/* CPUs and memory. */
	struct rk_alloc c = one_share(1, 4, 33, 0);
	rk_decisions_push(&ds, 11, &c, &dp4);
	expect(&ds, RK_EINFEASIBLE, "job 11 (job1): node 1: 33 CPUs asked, 32 free");
	rk_decisions_clear(&ds);
	rk_alloc_fini(&c);
	c = one_share(1, 4, 0, 100 * 1024 + 1);
	rk_decisions_push(&ds, 11, &c, &dp4);
	expect(&ds, RK_EINFEASIBLE, "node 1: 102401 MiB memory asked, 102400 MiB free");
	rk_decisions_clear(&ds);
	/* Twice in one round. */
	rk_decisions_push(&ds, 11, &b, &dp4);
	rk_decisions_push(&ds, 11, NULL, NULL);
	expect(&ds, RK_EINVAL, "policy mine: job 11: decided twice in one round");
	rk_decisions_clear(&ds);
	/* Unknown job. */
	rk_decisions_push(&ds, 99, &b, &dp4);
	expect(&ds, RK_ENOTFOUND, "policy mine: job 99: no such active job");
	rk_decisions_clear(&ds);
	/* Finished job. */
	jobs[2].state = RK_JOB_DONE;
	rk_decisions_push(&ds, 12, &b, &dp4);
	expect(&ds, RK_EINVAL, "job 12 (job2): job is finished");
	jobs[2].state = RK_JOB_PENDING;
	rk_decisions_clear(&ds);
	/* Node down. */
	cl.nodes[1].up = 0;
	rk_decisions_push(&ds, 11, &b, &dp4);
	expect(&ds, RK_EINFEASIBLE, "job 11 (job1): node 1 is down");
	cl.nodes[1].up = 1;
	rk_decisions_clear(&ds);
	/* Unknown node, empty share, repeated node. */
	struct rk_alloc d = one_share(5, 4, 0, 0);
	rk_decisions_push(&ds, 11, &d, &dp4);
	expect(&ds, RK_EINVAL, "job 11 (job1): node 5 does not exist");
	rk_decisions_clear(&ds);
	rk_alloc_fini(&d);
	d = one_share(1, 0, 4, 0);
	rk_alloc_add(&d, 0, 4, 0, 0);
	rk_decisions_push(&ds, 10, &d, &dp4);
	expect(&ds, RK_EINVAL, "share on node 1 has 0 GPUs");
	rk_decisions_clear(&ds);
	rk_alloc_fini(&d);
	d.n = 2;
	d.shares = (struct rk_share[]){{.node = 1, .gpus = 2}, {.node = 1, .gpus = 2}};
	rk_decisions_push(&ds, 11, &d, &dp4);
	expect(&ds, RK_EINVAL, "node 1 appears twice");
	rk_decisions_clear(&ds);
	/* Plan that breaks the global batch or the GPU count. */
	struct rk_plan bad = dp4;
	bad.mb = 3;
	rk_decisions_push(&ds, 11, &b, &bad);
	expect(&ds, RK_EINVAL, "policy mine: job 11 (job1)");
	rk_decisions_clear(&ds);
	bad = dp4;
	bad.dp = 2;
	bad.mb = 8;
	rk_decisions_push(&ds, 11, &b, &bad);
	expect(&ds, RK_EINVAL, "job 11 (job1)");
	rk_decisions_clear(&ds);
	/* Tensor parallel across nodes: tp=4 on 2+2 GPUs. */
	struct rk_plan tp4 = {.dp = 1, .tp = 4, .pp = 1, .mb = 16, .ga = 1};
	d.n = 2;
	d.shares = (struct rk_share[]){{.node = 0, .gpus = 2}, {.node = 1, .gpus = 2}};
	rk_decisions_push(&ds, 10, &d, &tp4);
	expect(&ds, RK_EINFEASIBLE, "job 10 (job0)");
	rk_decisions_clear(&ds);
	/* A job kept on a node that went down. */
	cl.nodes[0].up = 0;
	expect(&ds, RK_EINFEASIBLE, "policy mine: job 10 (job0) keeps its allocation but: node 0 "
				    "is down");
	cl.nodes[0].up = 1;
	rk_alloc_fini(&a);
	rk_alloc_fini(&b);
	rk_alloc_fini(&c);
	rk_decisions_fini(&ds);
}

/* rk_decisions_apply_quotas: what is held stays within gpu_quota and guaranteed_gpus. */
static void quotas(void **state)
{
	(void)state;
	static const struct rk_plan dp2 = {.dp = 2, .tp = 1, .pp = 1, .mb = 8, .ga = 1};
	struct rk_error err;
	struct rk_quota_drop drops[4];
	int n = -1;
	for (int i = 0; i < 3; i++)
		snprintf(jobs[i].tenant, sizeof(jobs[i].tenant), "%s", i < 2 ? "a" : "b");
	struct rk_tenant_quota q[2] = {{.tenant = "a", .guaranteed_gpus = -1, .has_gpu_quota = 1,
					.gpu_quota = 6},
				       {.tenant = "b", .guaranteed_gpus = 0}};
	in.quotas = q;
	in.n_quotas = 2;
	/* a holds 4 (job 10); starting job 11 on 4 more would make 8 > 6: dropped alone */
	struct rk_decisions ds;
	rk_decisions_init(&ds);
	struct rk_alloc a1 = one_share(1, 4, 0, 0);
	assert_int_equal(rk_decisions_push(&ds, 11, &a1, &dp4), 0);
	assert_int_equal(rk_decisions_validate(&in, &ds, "t", &err), 0);
	assert_int_equal(rk_decisions_apply_quotas(&in, &ds, "t", drops, 4, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ds.n, 0);
	assert_true(drops[0].job_id == 11 && !drops[0].guaranteed && drops[0].quota == 6 &&
		    drops[0].job_gpus == 4 && drops[0].tenant_gpus == 8 && !drops[0].stopped);
	/* within the quota (6 >= 2 + 4 after shrinking job 10): both stand */
	rk_decisions_clear(&ds);
	struct rk_alloc a0 = one_share(0, 2, 0, 0);
	assert_int_equal(rk_decisions_push(&ds, 10, &a0, &dp2), 0);
	assert_int_equal(rk_decisions_push(&ds, 11, &a1, &dp4), 0);
	assert_int_equal(rk_decisions_validate(&in, &ds, "t", &err), 0);
	assert_int_equal(rk_decisions_apply_quotas(&in, &ds, "t", drops, 4, &n, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(ds.n, 2);
	/* a guaranteed job of b (guaranteed quota 0) is never started; b's best effort may be */
	rk_decisions_clear(&ds);
	jobs[2].guaranteed = 1;
	assert_int_equal(rk_decisions_push(&ds, 12, &a1, &dp4), 0);
	assert_int_equal(rk_decisions_apply_quotas(&in, &ds, "t", drops, 4, &n, &err), 0);
	assert_true(n == 1 && drops[0].guaranteed && drops[0].quota == 0 && ds.n == 0);
	jobs[2].guaranteed = 0;
	rk_decisions_clear(&ds);
	assert_int_equal(rk_decisions_push(&ds, 12, &a1, &dp4), 0);
	assert_int_equal(rk_decisions_apply_quotas(&in, &ds, "t", drops, 4, &n, &err), 0);
	assert_true(n == 0 && ds.n == 1);
	/*
	 * Job 10 (a, 2 GPUs on node 0) grows to 4 on node 1 over a's quota of 3,
	 * and job 12 (b) takes node 0 whole: keeping job 10 on node 0 would not
	 * fit, so it is stopped instead and job 12's decision stands.
	 */
	q[0].gpu_quota = 3;
	rk_alloc_fini(&jobs[0].alloc);
	rk_alloc_add(&jobs[0].alloc, 0, 2, 8, 5120);
	jobs[0].plan = dp2;
	rk_decisions_clear(&ds);
	struct rk_alloc b0 = one_share(0, 4, 0, 0);
	assert_int_equal(rk_decisions_push(&ds, 10, &a1, &dp4), 0);
	assert_int_equal(rk_decisions_push(&ds, 12, &b0, &dp4), 0);
	assert_int_equal(rk_decisions_validate(&in, &ds, "t", &err), 0);
	assert_int_equal(rk_decisions_apply_quotas(&in, &ds, "t", drops, 4, &n, &err), 0);
	assert_true(n == 1 && drops[0].job_id == 10 && drops[0].stopped);
	assert_int_equal(ds.n, 2);
	assert_true(ds.v[0].job_id == 12 && ds.v[1].job_id == 10 && ds.v[1].alloc.n == 0);
	assert_int_equal(rk_decisions_validate(&in, &ds, "t", &err), 0);
	rk_alloc_fini(&a0);
	rk_alloc_fini(&a1);
	rk_alloc_fini(&b0);
	rk_decisions_fini(&ds);
	in.quotas = NULL;
	in.n_quotas = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(registry),
		cmocka_unit_test_setup_teardown(valid_lists, setup, teardown),
		cmocka_unit_test_setup_teardown(every_error, setup, teardown),
		cmocka_unit_test_setup_teardown(quotas, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
