/*
 * Sia in goodput mode (src/policy/sia/sia_goodput.c, sia_seen.c): jobs with
 * a hand-filled goodput model (rk_job.goodput) get the optimiser's batch, the
 * GPUs their statistical efficiency pays for, bootstrapped estimates on GPU
 * types they have not run on, and rows that follow their gradient statistics.
 */
#include "baseline_fixture.h"

#include "policy/sia/sia_internal.h"
#include "rubick/goodput.h"

#include <math.h>

extern const struct rk_policy_ops rk_policy_sia;

/* Two GPU types' throughput models (Pollux PerfParams, s and s/sample): the
 * slow one computes slower but synchronises faster, so it scales otherwise. */
static const struct rk_goodput_perf PERF_FAST = {.alpha_c = 0.02, .beta_c = 0.001,
						 .alpha_n = 0.1, .beta_n = 0.01,
						 .alpha_r = 0.02, .beta_r = 0.002, .gamma = 1.2};
static const struct rk_goodput_perf PERF_SLOW = {.alpha_c = 0.04, .beta_c = 0.003,
						 .alpha_n = 0.2, .beta_n = 0.02,
						 .alpha_r = 0.005, .beta_r = 0.0005, .gamma = 1.5};

/* Gradient noise: phi = M0 var / sqr = 3200 (large batches pay) or 0.32 (they do not). */
static const struct rk_goodput_grad NOISY = {.sqr = 1.0, .var = 100.0};
static const struct rk_goodput_grad QUIET = {.sqr = 1.0, .var = 0.01};

/* An adaptive job's model on "a800" only: batch 32 at the statistics, up to 8192. */
static void gp_init(struct rk_job_goodput *gp, struct rk_goodput_grad grad)
{
	memset(gp, 0, sizeof(*gp));
	gp->limits = (struct rk_goodput_limits){.init_batch = 32, .max_batch = 8192, .min_local = 4,
						.max_local = 256, .accumulation = true};
	gp->grad = grad;
	gp->trace_batch = 32;
	gp->target = 1e9;
	gp->n_types = 1;
	snprintf(gp->gpu_type[0], RK_GPU_TYPE_MAX, "a800");
	gp->perf[0] = PERF_FAST;
}

/* Make j run on g GPUs over n whole or partial nodes from `first` (8 CPUs, 100 GiB a GPU). */
static void run_on(struct rk_job *j, int first, int n, int g)
{
	free(j->alloc.shares);
	j->state = RK_JOB_RUNNING;
	j->alloc.n = n;
	j->alloc.shares = calloc((size_t)n, sizeof(*j->alloc.shares));
	assert_non_null(j->alloc.shares);
	for (int s = 0; s < n; s++)
		j->alloc.shares[s] = (struct rk_share){.node = first + s, .gpus = g / n,
						       .cpus = 8 * (g / n),
						       .mem_mb = (int64_t)(g / n) * 100 * 1024};
	j->plan = fx_dp_plan(32, g, 0);
	j->first_start_ms = j->last_change_ms = 0;
}

static void make_pending(struct rk_job *j)
{
	free(j->alloc.shares);
	j->alloc.shares = NULL;
	j->alloc.n = 0;
	j->state = RK_JOB_PENDING;
}

static void *create(void)
{
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(rk_policy_sia.create(&st, NULL, &err), RK_OK);
	return st;
}

static void round_on(void *st, struct fixture *f, int64_t now_ms, struct rk_decisions *d)
{
	struct rk_error err;
	struct rk_sched_input in = fx_input(f, now_ms);
	rk_decisions_init(d);
	if (rk_policy_sia.schedule(st, &in, d, &err) != RK_OK)
		fail_msg("%s", err.msg);
	fx_check(f, d, "sia");
}

/*
 * Let the policy observe j running on 8 GPUs of node 0, then on 32 GPUs of
 * nodes 0-3: every sync term of "a800" is then measured (Sia's fit is the
 * model's), and up to 64 replicas may be explored. Leaves j pending.
 */
static void observe_scaling(void *st, struct fixture *f, struct rk_job *j)
{
	struct rk_decisions d;
	run_on(j, 0, 1, 8);
	round_on(st, f, 100, &d);
	fx_decisions_free(&d);
	run_on(j, 0, 4, 32);
	round_on(st, f, 200, &d);
	fx_decisions_free(&d);
	make_pending(j);
}

/* Nodes of `a` (all on one type in these cases). */
static int n_nodes(const struct rk_alloc *a)
{
	return a->n;
}

/*
 * The batch a decision carries is rk_goodput_optimize's for the allocation it
 * gives, over the type's model, the job's statistics and limits. The policy
 * declares that it needs the goodput model, saying what it runs as without.
 */
static void batch_is_the_optimisers(void **state)
{
	(void)state;
	assert_true(rk_policy_sia.needs & RK_POLICY_NEEDS_GOODPUT);
	assert_non_null(rk_policy_sia.without);
	struct fixture f;
	fx_init(&f, 8);
	struct rk_job_goodput gp;
	gp_init(&gp, NOISY);
	struct rk_job *j = fx_job(&f, 1, 0, 8, 0);
	j->goodput = &gp;
	void *st = create();
	observe_scaling(st, &f, j);
	struct rk_decisions d;
	round_on(st, &f, 1000, &d);
	assert_int_equal(d.n, 1);
	const struct rk_decision *dec = &d.v[0];
	int g = fx_gpus(&dec->alloc);
	assert_true(g >= 1);
	struct rk_goodput_choice want;
	assert_int_equal(rk_goodput_optimize(&gp.perf[0], &gp.grad, &gp.limits,
					     n_nodes(&dec->alloc), g, &want), RK_OK);
	assert_true(want.local_bsz > 0);
	assert_int_equal(dec->local_bsz, want.local_bsz);
	assert_int_equal(dec->accum_steps, want.accum_steps);
	/* Applied, the job runs that batch: the next round leaves it alone. */
	assert_int_equal(rk_alloc_copy(&j->alloc, &dec->alloc), RK_OK);
	j->state = RK_JOB_RUNNING;
	j->plan = dec->plan;
	gp.local_bsz = dec->local_bsz;
	gp.accum_steps = dec->accum_steps;
	fx_decisions_free(&d);
	round_on(st, &f, 1500, &d);
	assert_int_equal(d.n, 0);
	fx_decisions_free(&d);
	rk_policy_sia.destroy(st);
	fx_fini(&f);
}

/* GPUs a lone job that has run on 32 GPUs is given under `lim` and `grad`. */
static int lone_job_gpus(const struct rk_goodput_limits *lim, struct rk_goodput_grad grad)
{
	struct fixture f;
	fx_init(&f, 8);
	struct rk_job_goodput gp;
	gp_init(&gp, grad);
	gp.limits = *lim;
	struct rk_job *j = fx_job(&f, 1, 0, 8, 0);
	j->goodput = &gp;
	void *st = create();
	struct rk_decisions d;
	observe_scaling(st, &f, j); /* then preempted: every configuration is open again */
	round_on(st, &f, 2000, &d);
	assert_int_equal(d.n, 1);
	int g = fx_gpus(&d.v[0].alloc);
	/* Alone, the job takes its best-goodput configuration (p < 0, λ_n > 0). */
	const int sizes[] = {1, 2, 4, 8, 16, 32};
	double best = -1;
	int best_g = 0;
	for (int i = 0; i < 6; i++) {
		struct rk_goodput_choice c;
		int nodes = sizes[i] <= 8 ? 1 : sizes[i] / 8;
		if (rk_goodput_optimize(&gp.perf[0], &gp.grad, &gp.limits, nodes, sizes[i], &c))
			continue;
		if (c.goodput > best) {
			best = c.goodput;
			best_g = sizes[i];
		}
	}
	assert_int_equal(g, best_g);
	fx_decisions_free(&d);
	rk_policy_sia.destroy(st);
	fx_fini(&f);
	return g;
}

/*
 * Large gradient noise makes large batches efficient, so the job is given
 * more GPUs than at efficiency 1 (its batch fixed at the statistics' 32, as
 * a job that does not adapt) and than with little noise.
 */
static void efficiency_buys_gpus(void **state)
{
	(void)state;
	struct rk_goodput_limits adapt = {.init_batch = 32, .max_batch = 8192, .min_local = 4,
					  .max_local = 256, .accumulation = true};
	struct rk_goodput_limits fixed = {.init_batch = 32, .max_batch = 32, .min_local = 1,
					  .max_local = 256, .accumulation = false};
	int noisy = lone_job_gpus(&adapt, NOISY);
	int quiet = lone_job_gpus(&adapt, QUIET);
	int eff1 = lone_job_gpus(&fixed, NOISY);
	assert_true(noisy > eff1);
	assert_true(noisy > quiet);
}

/* A cluster of 4 "a800" and 4 "v100" nodes; the job has models for both. */
static void hetero_init(struct fixture *f, struct rk_job_goodput *gp)
{
	fx_init(f, 8);
	for (int i = 4; i < 8; i++)
		snprintf(f->nodes[i].gpu_type, sizeof(f->nodes[i].gpu_type), "v100");
	gp_init(gp, NOISY);
	gp->n_types = 2;
	snprintf(gp->gpu_type[1], RK_GPU_TYPE_MAX, "v100");
	gp->perf[1] = PERF_SLOW;
}

static double price(const struct rk_job *j, const struct sia_seen *seen, const struct sia_type *t,
		    int n_types, int type, int gpus)
{
	struct sia_gp_key k;
	sia_gp_key_init(&k, seen, j);
	struct sia_cfg cf = {.type = type, .nodes = gpus <= 8 ? 1 : gpus / 8, .gpus = gpus};
	struct rk_goodput_choice c;
	if (sia_gp_price(j, &k, t, n_types, &cf, gpus, &c))
		return -1;
	return c.goodput;
}

static double one_gpu(const struct rk_goodput_perf *p)
{
	double t = 0;
	assert_int_equal(rk_goodput_throughput(p, 1, 1, 256, 0, &t), RK_OK);
	return t;
}

/*
 * Bootstrapping: a job that has not run is offered one GPU of each type,
 * priced by that type's profile; after one GPU of "a800", two, scaling
 * perfectly as far as Sia knows; once it has run on "a800" with 4 replicas,
 * up to 8 are offered, and on "v100" (not run there) 8 GPUs are the "a800"
 * estimate times the one-GPU throughput ratio; once it has run on "v100" the
 * estimate gives way to v100's own model.
 */
static void bootstrap_then_switch(void **state)
{
	(void)state;
	struct fixture f;
	struct rk_job_goodput gp;
	hetero_init(&f, &gp);
	struct rk_job *j = fx_job(&f, 7, 0, 4, 0);
	j->goodput = &gp;
	struct sia_type t[SIA_MAX_TYPES];
	int nt = 0, node_type[8];
	struct rk_error err;
	assert_int_equal(sia_collect_types(&f.cluster, t, &nt, node_type, &err), RK_OK);
	assert_int_equal(nt, 2);
	assert_string_equal(t[1].name, "v100");
	struct sia_seen *seen = NULL;
	assert_int_equal(sia_seen_create(&seen), RK_OK);

	/* Never run: one GPU of each type, at its own profile; no more. */
	struct rk_goodput_choice c;
	for (int k = 0; k < 2; k++) {
		assert_int_equal(rk_goodput_optimize(&gp.perf[k], &gp.grad, &gp.limits, 1, 1, &c),
				 RK_OK);
		assert_true(fabs(price(j, seen, t, nt, k, 1) - c.goodput) <= 1e-9 * c.goodput);
		assert_true(price(j, seen, t, nt, k, 2) < 0);
	}
	/* Its first round: one GPU, on the faster type. */
	void *st = create();
	struct rk_decisions d;
	round_on(st, &f, 1000, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(fx_gpus(&d.v[0].alloc), 1);
	assert_true(d.v[0].alloc.shares[0].node < 4);
	fx_decisions_free(&d);
	rk_policy_sia.destroy(st);

	/* Run on one GPU of a800: two replicas may be explored there, and until
	 * a multi-GPU run has measured its sync, Sia's fit expects perfect scaling. */
	run_on(j, 0, 1, 1);
	struct rk_sched_input in = fx_input(&f, 1500);
	assert_int_equal(sia_seen_update(seen, &in), RK_OK);
	struct rk_goodput_perf ideal = PERF_FAST;
	ideal.alpha_n = ideal.beta_n = ideal.alpha_r = ideal.beta_r = SIA_FIT_FLOOR;
	assert_int_equal(rk_goodput_optimize(&ideal, &gp.grad, &gp.limits, 1, 2, &c), RK_OK);
	assert_true(fabs(price(j, seen, t, nt, 0, 2) - c.goodput) <= 1e-9 * c.goodput);
	struct rk_goodput_choice truth;
	assert_int_equal(rk_goodput_optimize(&PERF_FAST, &gp.grad, &gp.limits, 1, 2, &truth), RK_OK);
	assert_true(c.goodput > 1.01 * truth.goodput);
	assert_true(price(j, seen, t, nt, 0, 4) < 0);

	/* Run on a800 with 4 replicas: its intra-node sync is measured. */
	run_on(j, 0, 1, 4);
	in = fx_input(&f, 2000);
	assert_int_equal(sia_seen_update(seen, &in), RK_OK);
	assert_int_equal(rk_goodput_optimize(&gp.perf[0], &gp.grad, &gp.limits, 1, 8, &c), RK_OK);
	assert_true(fabs(price(j, seen, t, nt, 0, 8) - c.goodput) <= 1e-9 * c.goodput);
	assert_true(price(j, seen, t, nt, 0, 16) < 0); /* twice what it ran, no more */
	double est = c.goodput * one_gpu(&PERF_SLOW) / one_gpu(&PERF_FAST);
	double got = price(j, seen, t, nt, 1, 8);
	assert_true(fabs(got - est) <= 1e-9 * est);
	struct rk_goodput_choice own;
	assert_int_equal(rk_goodput_optimize(&PERF_SLOW, &gp.grad, &gp.limits, 1, 8, &own), RK_OK);
	assert_true(fabs(own.goodput - est) > 0.01 * est); /* the estimate is not the truth */

	/* A type without a model of the job is never offered. */
	gp.n_types = 1;
	assert_true(price(j, seen, t, nt, 1, 1) < 0);
	gp.n_types = 2;

	/* Run on v100: its own model from now on. */
	run_on(j, 4, 1, 8);
	in = fx_input(&f, 3000);
	assert_int_equal(sia_seen_update(seen, &in), RK_OK);
	got = price(j, seen, t, nt, 1, 8);
	assert_true(fabs(got - own.goodput) <= 1e-9 * own.goodput);
	sia_seen_destroy(seen);
	fx_fini(&f);
}

/*
 * The rows follow the statistics: a job preempted between rounds gets, in
 * the second, the batch optimal at its new statistics (a row kept under the
 * old ones would answer with the old batch).
 */
static void grad_change_rebuilds_row(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 8);
	struct rk_job_goodput gp;
	gp_init(&gp, NOISY);
	struct rk_job *j = fx_job(&f, 3, 0, 8, 0);
	j->goodput = &gp;
	void *st = create();
	struct rk_decisions d;
	observe_scaling(st, &f, j);
	const struct rk_goodput_grad grads[2] = {NOISY, QUIET};
	int bsz[2];
	for (int r = 0; r < 2; r++) {
		make_pending(j);
		gp.grad = grads[r];
		round_on(st, &f, 2000 + 1000 * r, &d);
		assert_int_equal(d.n, 1);
		struct rk_goodput_choice want;
		int g = fx_gpus(&d.v[0].alloc);
		assert_int_equal(rk_goodput_optimize(&gp.perf[0], &gp.grad, &gp.limits,
						     n_nodes(&d.v[0].alloc), g, &want), RK_OK);
		bsz[r] = d.v[0].local_bsz * (d.v[0].accum_steps + 1) * g;
		assert_int_equal(d.v[0].local_bsz, want.local_bsz);
		assert_int_equal(d.v[0].accum_steps, want.accum_steps);
		fx_decisions_free(&d);
	}
	assert_true(bsz[0] > bsz[1]); /* noise buys the larger batch */
	rk_policy_sia.destroy(st);
	fx_fini(&f);
}

/*
 * A job whose range starts at 4 GPUs, never run: offered its own size,
 * priced by the arrival profile scaled perfectly, at that profile's batch.
 */
static void rigid_job_runs_its_size(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	struct rk_job_goodput gp;
	gp_init(&gp, NOISY);
	struct rk_job *j = fx_job(&f, 5, 0, 4, 0);
	j->min_gpus = j->max_gpus = 4;
	j->goodput = &gp;
	void *st = create();
	struct rk_decisions d;
	round_on(st, &f, 1000, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(fx_gpus(&d.v[0].alloc), 4);
	struct rk_goodput_perf ideal = PERF_FAST;
	ideal.alpha_n = ideal.beta_n = ideal.alpha_r = ideal.beta_r = SIA_FIT_FLOOR;
	struct rk_goodput_choice want;
	assert_int_equal(rk_goodput_optimize(&ideal, &gp.grad, &gp.limits, 1, 4, &want), RK_OK);
	assert_int_equal(d.v[0].local_bsz, want.local_bsz);
	assert_int_equal(d.v[0].accum_steps, want.accum_steps);
	fx_decisions_free(&d);
	rk_policy_sia.destroy(st);
	fx_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(batch_is_the_optimisers),
		cmocka_unit_test(efficiency_buys_gpus),
		cmocka_unit_test(bootstrap_then_switch),
		cmocka_unit_test(grad_change_rebuilds_row),
		cmocka_unit_test(rigid_job_runs_its_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
