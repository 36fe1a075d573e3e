/* Synergy-TUNE baseline (docs/references.md §5.2) on hand-checked 2-node snapshots. */
#include "baseline_fixture.h"

#include "policy/common/baseline.h"

extern const struct rk_policy_ops rk_policy_synergy_fifo;
extern const struct rk_policy_ops rk_policy_synergy_srtf;

static void run_round(struct fixture *f, const struct rk_policy_ops *ops, struct rk_decisions *d)
{
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(ops->create(&st, NULL, &err), RK_OK);
	struct rk_sched_input in = fx_input(f, 1000);
	rk_decisions_init(d);
	if (ops->schedule(st, &in, d, &err) != RK_OK)
		fail_msg("%s", err.msg);
	ops->destroy(st);
	fx_check(f, d, ops->name);
}

static double tput(struct fixture *f, struct rk_job *j, int cpg)
{
	struct rk_placement pl = {.n_nodes = 1, .gpus = {j->req_gpus}};
	double t = 0;
	assert_int_equal(rk_baseline_tput_sps(j, &j->req_plan, &pl, cpg, &f->env, &t), RK_OK);
	return t;
}

static struct rk_plan offload_plan(int batch, int g)
{
	struct rk_plan p = fx_dp_plan(batch, g, 2);
	p.offload = 1;
	return p;
}

/*
 * Demand vectors from the model: a plain DP job is not CPU-sensitive and asks
 * 1 thread per GPU; a ZeRO-Offload job asks the knee of its CPU curve (within
 * 1% of the throughput at all 96 threads), which is above the fair share of
 * 12 per GPU, and gets it on an empty node.
 */
static void demand_vectors_from_model(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	struct rk_job *dp = fx_job(&f, 1, 0, 4, 0);
	struct rk_job *off = fx_job(&f, 2, 1, 1, 0);
	off->req_plan = offload_plan(32, 1);
	struct rk_decisions d;
	run_round(&f, &rk_policy_synergy_fifo, &d);
	assert_int_equal(d.n, 2);
	const struct rk_decision *x = fx_decision(&d, 1);
	assert_int_equal(fx_gpus(&x->alloc), 4);
	assert_int_equal(x->alloc.shares[0].cpus, 4);
	assert_true(rk_plan_equal(&x->plan, &dp->req_plan));
	x = fx_decision(&d, 2);
	int c = x->alloc.shares[0].cpus;
	assert_true(c > 12 && c <= 96);
	double top = tput(&f, off, 96);
	assert_true(tput(&f, off, c) >= 0.99 * top);
	assert_true(tput(&f, off, c - 1) < 0.99 * top);
	rk_decisions_fini(&d);
	fx_fini(&f);
}

/*
 * A job with its trace's measured speeds (rk_job.native_sps) is profiled from
 * them: they do not depend on CPU threads (nor does the simulator's run of
 * such a job), so the ZeRO-Offload job that the model makes ask more than
 * the fair share asks 1 thread per GPU.
 */
static void native_speeds_profile_the_job(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	struct rk_job *off = fx_job(&f, 1, 0, 1, 0);
	off->req_plan = offload_plan(32, 1);
	struct rk_decisions d;
	run_round(&f, &rk_policy_synergy_srtf, &d);
	assert_int_equal(d.n, 1);
	assert_true(d.v[0].alloc.shares[0].cpus > 12);
	rk_decisions_fini(&d);
	const double sps[3] = {0, 2.0, 3.5};
	off->native_sps = sps;
	off->native_max = 2;
	run_round(&f, &rk_policy_synergy_srtf, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(fx_gpus(&d.v[0].alloc), 1);
	assert_int_equal(d.v[0].alloc.shares[0].cpus, 1);
	assert_true(rk_plan_equal(&d.v[0].plan, &off->req_plan));
	rk_decisions_fini(&d);
	fx_fini(&f);
}

/*
 * Step 3: node 1 has no free GPU; node 0 has 7 free GPUs but only 16 free
 * CPUs because offload job 1 holds 80 on its single GPU. Offload job 3 (4
 * GPUs) fails with its best case and with the fair share (48 CPUs), so job 1 is
 * shrunk to its fair share (12 CPUs, GPUs and plan kept) and job 3 starts with
 * 4 x 12 = 48 CPUs.
 */
static void tune_shrinks_to_fair_share(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	struct rk_job *a = fx_job(&f, 1, 0, 1, 0);
	a->req_plan = offload_plan(32, 1);
	fx_run_on(a, 0, 0);
	a->alloc.shares[0].cpus = 80;
	fx_run_on(fx_job(&f, 2, 0, 8, 0), 1, 0);
	struct rk_job *b = fx_job(&f, 3, 5, 4, 0);
	b->req_plan = offload_plan(32, 4);
	struct rk_decisions d;
	run_round(&f, &rk_policy_synergy_fifo, &d);
	assert_int_equal(d.n, 2);
	const struct rk_decision *x = fx_decision(&d, 1);
	assert_non_null(x);
	assert_int_equal(x->alloc.shares[0].gpus, 1);
	assert_int_equal(x->alloc.shares[0].cpus, 12);
	assert_true(rk_plan_equal(&x->plan, &a->plan));
	x = fx_decision(&d, 3);
	assert_non_null(x);
	assert_int_equal(x->alloc.shares[0].node, 0);
	assert_int_equal(x->alloc.shares[0].gpus, 4);
	assert_int_equal(x->alloc.shares[0].cpus, 48);
	assert_null(fx_decision(&d, 2));
	rk_decisions_fini(&d);
	fx_fini(&f);
}

/*
 * Outer SRTF: the short pending job preempts the running job with the longest
 * remaining time; FIFO (it arrived last) leaves everything as is.
 */
static void srtf_preempts_longest(void **state)
{
	(void)state;
	for (int srtf = 0; srtf < 2; srtf++) {
		struct fixture f;
		fx_init(&f, 2);
		struct rk_job *l1 = fx_job(&f, 1, 0, 8, 0);
		l1->est_duration_s = 10000;
		fx_run_on(l1, 0, 0);
		struct rk_job *l2 = fx_job(&f, 2, 0, 8, 0);
		l2->est_duration_s = 20000;
		fx_run_on(l2, 1, 0);
		fx_job(&f, 3, 50, 8, 0)->est_duration_s = 100;
		struct rk_decisions d;
		run_round(&f, srtf ? &rk_policy_synergy_srtf : &rk_policy_synergy_fifo, &d);
		if (!srtf) {
			assert_int_equal(d.n, 0);
		} else {
			assert_int_equal(d.n, 2);
			assert_int_equal(fx_decision(&d, 2)->alloc.n, 0);
			assert_int_equal(fx_decision(&d, 3)->alloc.shares[0].node, 1);
		}
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
}

/*
 * No preemption for nothing. Node 0: short job 1 (4 GPUs) and long job 2
 * (4 GPUs); node 1: short job 3 (4 GPUs). Pending job 4 (8 GPUs) is selected,
 * job 2 is not. Preempting job 2 frees 4 + 4 GPUs on two nodes: enough for a
 * data-parallel job 4 (it runs across both nodes), not for a tp = 8 one, whose
 * tensor group must sit in one node; then job 2's preemption is undone.
 */
static void srtf_undoes_useless_preemption(void **state)
{
	(void)state;
	for (int tp8 = 0; tp8 < 2; tp8++) {
		struct fixture f;
		fx_init(&f, 2);
		struct rk_job *h = fx_job(&f, 1, 0, 4, 0);
		h->est_duration_s = 1;
		fx_run_on(h, 0, 0);
		struct rk_job *l = fx_job(&f, 2, 0, 4, 0);
		l->est_duration_s = 10000;
		fx_run_on(l, 0, 0);
		struct rk_job *h2 = fx_job(&f, 3, 0, 4, 0);
		h2->est_duration_s = 2;
		fx_run_on(h2, 1, 0);
		struct rk_job *s = fx_job(&f, 4, 10, 8, 0);
		s->est_duration_s = 10;
		if (tp8)
			s->req_plan = (struct rk_plan){.dp = 1, .tp = 8, .pp = 1, .mb = 1, .ga = 32};
		struct rk_decisions d;
		run_round(&f, &rk_policy_synergy_srtf, &d);
		if (tp8) {
			assert_int_equal(d.n, 0);
		} else {
			assert_int_equal(d.n, 2);
			assert_int_equal(fx_decision(&d, 2)->alloc.n, 0);
			assert_int_equal(fx_decision(&d, 4)->alloc.n, 2);
		}
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
}

/* An unfitted model has no CPU curve: the job asks its own request (8 per GPU). */
static void unfitted_model_asks_request(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	f.model.perf = (struct rk_perf_params){0};
	fx_job(&f, 1, 0, 2, 0);
	struct rk_decisions d;
	run_round(&f, &rk_policy_synergy_fifo, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.v[0].alloc.shares[0].cpus, 16);
	rk_decisions_fini(&d);
	fx_fini(&f);
}

static void rejects_options(void **state)
{
	(void)state;
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(rk_policy_synergy_srtf.create(&st, "a=b", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "synergy-srtf"));
	assert_string_equal(rk_policy_synergy_fifo.name, "synergy-fifo");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(demand_vectors_from_model),
		cmocka_unit_test(native_speeds_profile_the_job),
		cmocka_unit_test(tune_shrinks_to_fair_share),
		cmocka_unit_test(srtf_preempts_longest),
		cmocka_unit_test(srtf_undoes_useless_preemption),
		cmocka_unit_test(unfitted_model_asks_request),
		cmocka_unit_test(rejects_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
