/* AntMan baseline (docs/references.md §5.3) on hand-checked 2-node snapshots. */
#include "baseline_fixture.h"

extern const struct rk_policy_ops rk_policy_antman;

static void run_round(struct fixture *f, struct rk_decisions *d)
{
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(rk_policy_antman.create(&st, NULL, &err), RK_OK);
	struct rk_sched_input in = fx_input(f, 100000);
	memset(d, 0, sizeof(*d));
	assert_int_equal(rk_policy_antman.schedule(st, &in, d, &err), RK_OK);
	rk_policy_antman.destroy(st);
	fx_check(f, d, "antman");
}

/*
 * Node 0: opportunistic job 1 (6 GPUs). Node 1: opportunistic job 2 (4 GPUs).
 * Guaranteed job 3 (8 GPUs) fits nowhere free, but node 0 frees up by
 * preempting job 1 only (node 1 would need job 2 out too and the tie goes to
 * node 0, the lowest id). Pending opportunistic job 4 (4 GPUs) then takes the
 * 4 idle GPUs of node 1; job 1, preempted this round, waits.
 */
static void guaranteed_preempts_opportunistic(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	fx_run_on(fx_job(&f, 1, 0, 6, 0), 0, 1000);
	fx_run_on(fx_job(&f, 2, 10, 4, 0), 1, 2000);
	fx_job(&f, 3, 50, 8, 1);
	fx_job(&f, 4, 60, 4, 0);
	struct rk_decisions d;
	run_round(&f, &d);
	assert_int_equal(d.n, 3);
	const struct rk_decision *x = fx_decision(&d, 1);
	assert_non_null(x);
	assert_int_equal(x->alloc.n, 0);
	x = fx_decision(&d, 3);
	assert_non_null(x);
	assert_int_equal(x->alloc.n, 1);
	assert_int_equal(x->alloc.shares[0].node, 0);
	assert_int_equal(x->alloc.shares[0].gpus, 8);
	assert_int_equal(x->alloc.shares[0].cpus, 64);
	assert_true(rk_plan_equal(&x->plan, &fx_find(&f, 3)->req_plan));
	x = fx_decision(&d, 4);
	assert_non_null(x);
	assert_int_equal(x->alloc.shares[0].node, 1);
	assert_int_equal(x->alloc.shares[0].gpus, 4);
	assert_null(fx_decision(&d, 2));
	fx_decisions_free(&d);
	fx_fini(&f);
}

/* Guaranteed jobs are never preempted, not even for another guaranteed job. */
static void guaranteed_never_preempted(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	fx_run_on(fx_job(&f, 1, 0, 8, 1), 0, 0);
	fx_run_on(fx_job(&f, 2, 0, 4, 1), 1, 0);
	fx_job(&f, 3, 5, 8, 1); /* waits: needs a whole node */
	fx_job(&f, 4, 6, 2, 0); /* opportunistic, fits in node 1's spare GPUs */
	struct rk_decisions d;
	run_round(&f, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.v[0].job_id, 4);
	assert_int_equal(d.v[0].alloc.shares[0].node, 1);
	fx_decisions_free(&d);
	fx_fini(&f);
}

/*
 * Opportunistic jobs go FIFO onto spare capacity: with 6 idle GPUs, the
 * earlier 4-GPU job starts, the later 4-GPU job cannot, and a 2-GPU job after
 * it backfills. Best fit packs the 4-GPU job onto the fuller node.
 */
static void opportunistic_fifo_and_packing(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	fx_run_on(fx_job(&f, 1, 0, 6, 1), 0, 0);   /* node 0: 2 idle */
	fx_run_on(fx_job(&f, 2, 0, 4, 1), 1, 0);   /* node 1: 4 idle */
	fx_job(&f, 5, 30, 4, 0);
	fx_job(&f, 3, 10, 4, 0);
	fx_job(&f, 4, 20, 2, 0);
	struct rk_decisions d;
	run_round(&f, &d);
	assert_int_equal(d.n, 2);
	const struct rk_decision *x = fx_decision(&d, 3);
	assert_non_null(x);
	assert_int_equal(x->alloc.shares[0].node, 1);
	x = fx_decision(&d, 4);
	assert_non_null(x);
	assert_int_equal(x->alloc.shares[0].node, 0);
	assert_null(fx_decision(&d, 5));
	fx_decisions_free(&d);
	fx_fini(&f);
}

/* A guaranteed job bigger than one node spans two once opportunistic jobs yield. */
static void multi_node_guaranteed(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	fx_run_on(fx_job(&f, 1, 0, 2, 0), 0, 500);
	fx_run_on(fx_job(&f, 2, 0, 1, 0), 1, 900);
	struct rk_job *g = fx_job(&f, 3, 10, 16, 1);
	g->global_batch = 32;
	g->req_plan = fx_dp_plan(32, 16, 1);
	struct rk_decisions d;
	run_round(&f, &d);
	assert_int_equal(d.n, 3);
	assert_int_equal(fx_decision(&d, 1)->alloc.n, 0);
	assert_int_equal(fx_decision(&d, 2)->alloc.n, 0);
	assert_int_equal(fx_gpus(&fx_decision(&d, 3)->alloc), 16);
	assert_int_equal(fx_decision(&d, 3)->alloc.n, 2);
	fx_decisions_free(&d);
	fx_fini(&f);
}

static void rejects_options(void **state)
{
	(void)state;
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(rk_policy_antman.create(&st, "x=1", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "antman"));
	assert_int_equal(rk_policy_antman.create(&st, "", &err), RK_OK);
	rk_policy_antman.destroy(st);
	assert_string_equal(rk_policy_antman.name, "antman");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(guaranteed_preempts_opportunistic),
		cmocka_unit_test(guaranteed_never_preempted),
		cmocka_unit_test(opportunistic_fifo_and_packing),
		cmocka_unit_test(multi_node_guaranteed),
		cmocka_unit_test(rejects_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
