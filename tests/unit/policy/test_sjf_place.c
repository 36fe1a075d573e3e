/*
 * Placement rules of sjf-ff / sjf-bf / sjf-bco / sjf-random on hand-checked
 * snapshots (expected allocations worked out in the comments).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "rubick/policy.h"

static struct rk_model model = {.name = "toy", .params = 2.5e8, .global_batch = 8};
static struct rk_cluster cl;
static struct rk_job jobs[4];
static struct rk_job *ptrs[4];
static struct rk_share run_shares[2];

static void setup(int pending_gpus)
{
	struct rk_error err;
	rk_cluster_fini(&cl);
	assert_int_equal(rk_cluster_parse(&cl, "3x4,net=12.5", "t", &err), 0);
	memset(jobs, 0, sizeof(jobs));
	/* X runs 2 + 1 across nodes 0 and 2: one cross-node job on each. */
	struct rk_job *x = &jobs[0];
	x->id = 1;
	x->model = &model;
	x->req_gpus = 3;
	x->global_batch = 3;
	x->req_plan = (struct rk_plan){.dp = 3, .tp = 1, .pp = 1, .mb = 1, .ga = 1};
	x->plan = x->req_plan;
	x->iters_total = 100;
	x->est_duration_s = 100;
	x->state = RK_JOB_RUNNING;
	run_shares[0] = (struct rk_share){.node = 0, .gpus = 2, .cpus = 24, .mem_mb = 400 * 1024};
	run_shares[1] = (struct rk_share){.node = 2, .gpus = 1, .cpus = 12, .mem_mb = 200 * 1024};
	x->alloc = (struct rk_alloc){2, run_shares};
	struct rk_job *p = &jobs[1];
	p->id = 2;
	p->model = &model;
	p->req_gpus = pending_gpus;
	p->global_batch = pending_gpus;
	p->req_plan = (struct rk_plan){.dp = pending_gpus, .tp = 1, .pp = 1, .mb = 1, .ga = 1};
	p->iters_total = 50;
	p->est_duration_s = 50;
	p->state = RK_JOB_PENDING;
	ptrs[0] = x;
	ptrs[1] = p;
}

/* Run `policy` on the snapshot; expect one decision with GPUs {node: gpus} in `want`. */
static void expect(const char *policy, const int want[3])
{
	const struct rk_policy_ops *ops = rk_policy_find(policy);
	assert_non_null(ops);
	void *st;
	struct rk_error err;
	assert_int_equal(ops->create(&st, NULL, &err), 0);
	struct rk_sched_input in = {.now_ms = 0, .cluster = &cl, .jobs = ptrs, .n_jobs = 2,
				    .seed = 7};
	struct rk_decisions ds;
	rk_decisions_init(&ds);
	if (ops->schedule(st, &in, &ds, &err))
		fail_msg("%s: %s", policy, err.msg);
	if (rk_decisions_validate(&in, &ds, policy, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(ds.n, 1);
	int got[3] = {0, 0, 0};
	for (int i = 0; i < ds.v[0].alloc.n; i++)
		got[ds.v[0].alloc.shares[i].node] = ds.v[0].alloc.shares[i].gpus;
	if (want) {
		for (int n = 0; n < 3; n++)
			if (got[n] != want[n])
				fail_msg("%s: node %d got %d GPUs, want %d", policy, n, got[n], want[n]);
	} else {
		assert_int_equal(got[0] + got[1] + got[2], jobs[1].req_gpus);
	}
	rk_decisions_fini(&ds);
	ops->destroy(st);
}

/*
 * Free GPUs: node 0 has 2, node 1 has 4, node 2 has 3; k = 1 on nodes 0 and 2.
 * A 5-GPU job fits no single node:
 *  - first fit, nodes in id order: 2 on node 0, 3 on node 1;
 *  - best fit, fullest nodes first: 2 on node 0, 3 on node 2;
 *  - SJF-BCO: two nodes are the fewest; no two nodes with k = 0 hold 5 (only
 *    node 1), with k <= 1 the two with most free GPUs are nodes 1 and 2:
 *    4 on node 1, 1 on node 2.
 */
static void five_gpu_job(void **st)
{
	(void)st;
	setup(5);
	expect("sjf-ff", (const int[]){2, 3, 0});
	expect("sjf-bf", (const int[]){2, 0, 3});
	expect("sjf-bco", (const int[]){0, 4, 1});
	expect("sjf-random", NULL);
}

/*
 * A 3-GPU job: first fit spans nodes 0 and 1 (2 + 1); best fit and SJF-BCO
 * take one node, the one left with the fewest GPUs: node 2 (3 free).
 */
static void three_gpu_job(void **st)
{
	(void)st;
	setup(3);
	expect("sjf-ff", (const int[]){2, 1, 0});
	expect("sjf-bf", (const int[]){0, 0, 3});
	expect("sjf-bco", (const int[]){0, 0, 3});
}

/*
 * A 6-GPU job with tensor-parallel width 2 under sjf-bsbf (no sharing): no
 * node holds 6, so it spreads, most free first, in whole tp groups: 4 on
 * node 1, then 2 on node 0 (node 0's 2 and node 2's 3 both hold one group;
 * the first wins). Before, a tp > 1 job never spread and never started.
 */
static void tensor_parallel_job_spreads(void **st)
{
	(void)st;
	setup(6);
	jobs[1].req_plan = (struct rk_plan){.dp = 3, .tp = 2, .pp = 1, .mb = 2, .ga = 1};
	expect("sjf-bsbf", (const int[]){2, 4, 0});
	expect("sjf-ffs", (const int[]){2, 4, 0});
}

/*
 * placement=consolidated (the baselines' yarn rule, for a
 * like-for-like comparison): two 4-GPU nodes, X holds 2 + 2, a 3-GPU job fits
 * the 4 free GPUs but no one node. spread (the default): 2 on node 0, 1 on
 * node 1; consolidated: it waits (sharing is off), on either policy.
 */
static void consolidated_waits_for_one_node(void **st)
{
	(void)st;
	setup(3);
	struct rk_error err;
	rk_cluster_fini(&cl);
	assert_int_equal(rk_cluster_parse(&cl, "2x4", "t", &err), 0);
	jobs[0].req_gpus = 4;
	jobs[0].global_batch = 4;
	jobs[0].req_plan.dp = 4;
	jobs[0].plan = jobs[0].req_plan;
	run_shares[0] = (struct rk_share){.node = 0, .gpus = 2, .cpus = 2, .mem_mb = 1024};
	run_shares[1] = (struct rk_share){.node = 1, .gpus = 2, .cpus = 2, .mem_mb = 1024};
	const char *names[] = {"sjf-bsbf", "sjf-ffs"};
	for (int k = 0; k < 2; k++)
		for (int mode = 0; mode < 2; mode++) {
			const struct rk_policy_ops *ops = rk_policy_find(names[k]);
			void *ps;
			assert_int_equal(
			    ops->create(&ps, mode ? "placement=consolidated" : "placement=spread",
			                &err),
			    0);
			struct rk_sched_input in = {.cluster = &cl, .jobs = ptrs, .n_jobs = 2};
			struct rk_decisions ds;
			rk_decisions_init(&ds);
			if (ops->schedule(ps, &in, &ds, &err))
				fail_msg("%s: %s", names[k], err.msg);
			assert_int_equal(ds.n, mode ? 0 : 1);
			if (!mode) {
				assert_int_equal(ds.v[0].alloc.n, 2);
				assert_int_equal(
				    ds.v[0].alloc.shares[0].gpus + ds.v[0].alloc.shares[1].gpus, 3);
			}
			rk_decisions_fini(&ds);
			ops->destroy(ps);
		}
	void *ps;
	assert_int_equal(rk_policy_find("sjf-ffs")->create(&ps, "placement=yarn", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "placement=spread|consolidated"));
}

/* Bad options are named. */
static void options(void **st)
{
	(void)st;
	void *s;
	struct rk_error err;
	const struct rk_policy_ops *bco = rk_policy_find("sjf-bco");
	assert_int_equal(bco->create(&s, "u_max=0", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "u_max=0"));
	assert_int_equal(bco->create(&s, "u_max=2,lookahead=8,overhead_ms=5", &err), 0);
	bco->destroy(s);
	assert_int_equal(rk_policy_find("sjf-ff")->create(&s, "u_max=2", &err), RK_EINVAL);
	assert_int_equal(rk_policy_find("sjf-bsbf")->create(&s, "order=x", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "order=benefit|tcon"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(five_gpu_job),
	    cmocka_unit_test(three_gpu_job),
	    cmocka_unit_test(tensor_parallel_job_spreads),
	    cmocka_unit_test(options),
	    cmocka_unit_test(consolidated_waits_for_one_node),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rk_cluster_fini(&cl);
	return rc;
}
