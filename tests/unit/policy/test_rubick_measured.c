/*
 * The Rubick policy at trace-native speeds (rk_job.native_sps):
 * the shrink phase compares a newcomer with its victims at the size it would
 * start at (rubick_shrink.c yield_at).
 */
#include "baseline_fixture.h"

extern const struct rk_policy_ops rk_policy_rubick;

static void run_round(struct fixture *f, struct rk_decisions *d)
{
	void *st = NULL;
	struct rk_error err;
	if (rk_policy_rubick.create(&st, NULL, &err) != RK_OK)
		fail_msg("%s", err.msg);
	struct rk_sched_input in = fx_input(f, 1000 * 1000);
	rk_decisions_init(d);
	if (rk_policy_rubick.schedule(st, &in, d, &err) != RK_OK)
		fail_msg("%s", err.msg);
	rk_policy_rubick.destroy(st);
	fx_check(f, d, "rubick");
}

/* Run `j` (asking for more) on one GPU of `node`, as a partial start leaves it. */
static void run_on_one(struct rk_job *j, int node)
{
	fx_run_on(j, node, 0);
	j->alloc.shares[0].gpus = 1;
	j->alloc.shares[0].cpus = 8;
	j->alloc.shares[0].mem_mb = 100 * 1024;
	j->plan = fx_dp_plan(j->global_batch, 1, 0);
}

/*
 * One node of 8 GPUs: a 7-GPU job that may not yield (restart_protected) and
 * victim v, which asks for 2 GPUs and runs on 1 (0.55 of its 2-GPU speed),
 * 4,000 s left there. Pending p asks for 2 GPUs and can only get v's one,
 * where it runs at 0.6 of its request's speed. Its run time at the request,
 * 3,000 s, is more than a restart shorter than v's 4,000 s, but on the one
 * GPU it would start on it runs 5,000 s, longer than v: v is not preempted
 * (compared at their requests, each would preempt the other in turn). A p of
 * 2,000 s at the request runs 3,333 s on one GPU, still more than a restart
 * shorter than v, and takes v's GPU.
 */
static void newcomer_compared_at_start_size(void **state)
{
	(void)state;
	static double pv[9], vv[9];
	for (int g = 1; g <= 8; g++) {
		pv[g] = g == 1 ? 0.6 : g / 2.0;
		vv[g] = g == 1 ? 0.55 : g / 2.0;
	}
	for (int shorter = 0; shorter < 2; shorter++) {
		struct fixture f;
		fx_init(&f, 1);
		struct rk_job *b = fx_job(&f, 1, 0, 7, 0);
		fx_run_on(b, 0, 0);
		b->restarts = 500; /* restart_protected: not a victim */
		struct rk_job *v = fx_job(&f, 2, 0, 2, 0);
		run_on_one(v, 0);
		v->native_sps = vv;
		v->native_max = 8;
		v->est_duration_s = 2200; /* at its request: 4,000 s on its 1 GPU */
		v->iters_total = 100000;
		struct rk_job *p = fx_job(&f, 3, 1000, 2, 0);
		p->native_sps = pv;
		p->native_max = 8;
		p->est_duration_s = shorter ? 2000 : 3000;
		p->iters_total = 100000;
		struct rk_decisions d;
		run_round(&f, &d);
		const struct rk_decision *x = fx_decision(&d, 3), *y = fx_decision(&d, 2);
		if (shorter) {
			assert_non_null(x);
			assert_int_equal(fx_gpus(&x->alloc), 1);
			assert_non_null(y);
			assert_int_equal(y->alloc.n, 0);
		} else {
			assert_null(x);
			assert_null(y);
		}
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(newcomer_compared_at_start_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
