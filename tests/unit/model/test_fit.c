/* Fitting (fit.c): recovers known parameters from synthetic samples, rejects
 * outliers visibly, is deterministic, refits warm, and rejects bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rubick/fit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MI (1024.0 * 1024.0)

static struct rk_model model(void)
{
	struct rk_model m = {.layers = 24, .hidden = 1024, .heads = 16, .seq_len = 512,
			     .params = 320 * MI, .global_batch = 32, .fwd_ms = 220};
	snprintf(m.name, sizeof(m.name), "%s", "synthetic");
	return m;
}

static const struct rk_perf_params truth = {
	.k_bwd = 1.8, .k_sync = 1.6, .k_opt = 0.08, .k_os_offload = 5.0,
	.k_const = 15.0, .k_off = 1.5, .k_swap = 2.5, .fwd_fixed_ms = 12.0,
};

/* Profiling-style runs: plain DP on 1..8 GPUs, ZeRO-Offload on 1..8 GPUs
 * (4 threads), one ZeRO-DP run; phases from the model itself. */
static int make_samples(const struct rk_model *m, const struct rk_perf_env *env,
			struct rk_perf_sample *s)
{
	static const int gpus[] = {8, 4, 2};
	int n = 0;
	for (int z = 0; z < 2; z++) {
		for (int i = 0; i < 3; i++) {
			int d = gpus[i];
			struct rk_perf_sample x = {0};
			x.plan = (struct rk_plan){.dp = d, .tp = 1, .pp = 1,
						  .mb = m->global_batch / d, .ga = 1};
			if (z)
				x.plan.zero = 2, x.plan.offload = 1;
			x.placement.n_nodes = 1;
			x.placement.gpus[0] = d;
			x.cpus_per_gpu = z ? 4 : 1;
			struct rk_perf_breakdown b;
			assert_int_equal(rk_perf_predict_detail(m, &truth, env, &x.plan,
								&x.placement, x.cpus_per_gpu, &b),
					 0);
			x.fwd_ms = b.fwd_ms, x.sync_ms = b.sync_ms, x.opt_ms = b.opt_ms;
			x.iter_ms = b.iter_ms;
			x.line = n + 2;
			s[n++] = x;
		}
	}
	return n;
}

static double iter_of(const struct rk_model *m, const struct rk_perf_params *k,
		      const struct rk_perf_env *env, const char *pl, struct rk_plan plan)
{
	struct rk_placement p = {0};
	for (; *pl; pl++)
		p.gpus[p.n_nodes++] = *pl - '0';
	double t = 0;
	assert_int_equal(rk_perf_predict(m, k, env, &plan, &p, 4, &t), 0);
	return t;
}

static void test_recovers_parameters(void **state)
{
	(void)state;
	struct rk_model m = model();
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	struct rk_perf_sample s[8];
	int n = make_samples(&m, &env, s);
	struct rk_perf_fit_result r;
	struct rk_error err;
	assert_int_equal(rk_perf_fit(&m, &env, s, n, NULL, &r, &err), 0);
	/* forward recovered exactly (linear in the per-GPU batch) */
	assert_float_equal(r.k.fwd_fixed_ms, truth.fwd_fixed_ms, 1e-6);
	assert_float_equal(r.fwd_ms, 220.0, 1e-6);
	assert_int_equal(r.n_fwd_rejected, 0);
	assert_true(r.objective < 0.02);
	/* the identifiable parameters come back */
	assert_true(fabs(r.k.k_bwd - truth.k_bwd) < 0.1);
	assert_true(fabs(r.k.k_const - truth.k_const) / truth.k_const < 0.25);
	/* and predictions on runs the fit never saw agree with the truth */
	struct rk_model fm = m;
	fm.fwd_ms = r.fwd_ms;
	struct rk_plan held[] = {
		{.dp = 1, .tp = 1, .pp = 1, .mb = 32, .ga = 1},
		{.dp = 8, .tp = 1, .pp = 1, .mb = 4, .ga = 1, .gc = 1},
		{.dp = 1, .tp = 1, .pp = 1, .mb = 32, .ga = 1, .zero = 2, .offload = 1},
	};
	const char *pl[] = {"1", "8", "1"};
	for (int i = 0; i < 3; i++) {
		double want = iter_of(&m, &truth, &env, pl[i], held[i]);
		double got = iter_of(&fm, &r.k, &env, pl[i], held[i]);
		assert_true(fabs(got - want) / want < 0.03);
	}
}

static void test_deterministic_and_bounded(void **state)
{
	(void)state;
	struct rk_model m = model();
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	struct rk_perf_sample s[8];
	int n = make_samples(&m, &env, s);
	struct rk_perf_fit_result a, b;
	assert_int_equal(rk_perf_fit(&m, &env, s, n, NULL, &a, NULL), 0);
	assert_int_equal(rk_perf_fit(&m, &env, s, n, NULL, &b, NULL), 0);
	assert_memory_equal(&a.k, &b.k, sizeof(a.k));
	double lo[7], hi[7], x[7];
	rk_perf_params_bounds(env.overlap, lo, hi);
	rk_perf_params_to_array(&a.k, x);
	for (int i = 0; i < 7; i++)
		assert_true(x[i] >= lo[i] * (1 - 1e-9) && x[i] <= hi[i] * (1 + 1e-9));
	/* a poor warm start still lands on a good fit */
	struct rk_perf_params bad = {.k_bwd = 9, .k_sync = 90, .k_opt = 5, .k_os_offload = 90,
				     .k_const = 5000, .k_off = 90, .k_swap = 90};
	struct rk_perf_fit_result c;
	assert_int_equal(rk_perf_fit(&m, &env, s, n, &bad, &c, NULL), 0);
	assert_true(c.objective < 0.05);
}

static void test_forward_outlier(void **state)
{
	(void)state;
	struct rk_model m = model();
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	struct rk_perf_sample s[8];
	int n = make_samples(&m, &env, s);
	s[1].fwd_ms = 4; /* the T5 trap: 4 ms among tens of ms */
	struct rk_perf_fit_result r;
	assert_int_equal(rk_perf_fit(&m, &env, s, n, NULL, &r, NULL), 0);
	assert_int_equal(r.n_fwd_rejected, 1);
	assert_int_equal(r.fwd_rejected[0], 1);
	assert_float_equal(r.fwd_rejected_ms[0], 4, 0);
	assert_true(r.fwd_expected_ms[0] > 40);
	assert_float_equal(r.fwd_ms, 220.0, 1e-6);
}

static void test_implausible_optimizer_phase(void **state)
{
	(void)state;
	struct rk_model m = model();
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	struct rk_perf_sample s[8];
	int n = make_samples(&m, &env, s);
	/* the LLaMA trap: optimizer booked in the sync phase, Topt 0.1 ms for a
	 * 40 Mi-parameter shard (below RK_FIT_MIN_OPT_MS_PER_MI) */
	s[3].sync_ms += s[3].opt_ms - 0.1;
	s[3].opt_ms = 0.1;
	struct rk_perf_fit_result r;
	assert_int_equal(rk_perf_fit(&m, &env, s, n, NULL, &r, NULL), 0);
	assert_int_equal(r.n_phase_ignored, 1);
	assert_int_equal(r.phase_ignored[0], 3);
	assert_true(r.iter_rmse_log < 0.05);
}

static void test_online_refit(void **state)
{
	(void)state;
	struct rk_model m = model();
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	struct rk_perf_sample s[8];
	int n = make_samples(&m, &env, s);
	struct rk_perf_samples set;
	rk_perf_samples_init(&set);
	struct rk_error err;
	for (int i = 0; i < n; i++)
		assert_int_equal(rk_perf_samples_add(&set, &s[i], &err), 0);
	/* first fit: cold */
	assert_int_equal(rk_perf_refit(&m, &env, &set, &err), 0);
	assert_int_equal(m.perf_fitted, 1);
	double before = iter_of(&m, &m.perf, &env, "1",
				(struct rk_plan){.dp = 1, .tp = 1, .pp = 1, .mb = 32, .ga = 1});
	/* observed runs of a slower job (2x backward): the warm refit follows */
	struct rk_perf_params slow = truth;
	slow.k_bwd = 3.6;
	for (int i = 0; i < n; i++) {
		struct rk_perf_sample x = s[i];
		struct rk_perf_breakdown b;
		assert_int_equal(rk_perf_predict_detail(&m, &slow, &env, &x.plan, &x.placement,
							x.cpus_per_gpu, &b),
				 0);
		x.sync_ms = b.sync_ms, x.iter_ms = b.iter_ms, x.opt_ms = b.opt_ms;
		x.fwd_ms = -1; /* an observation without a phase breakdown of the forward */
		assert_int_equal(rk_perf_samples_add(&set, &x, &err), 0);
	}
	assert_int_equal(rk_perf_refit(&m, &env, &set, &err), 0);
	double after = iter_of(&m, &m.perf, &env, "1",
			       (struct rk_plan){.dp = 1, .tp = 1, .pp = 1, .mb = 32, .ga = 1});
	assert_true(after > before);
	rk_perf_samples_fini(&set);
}

static void test_errors(void **state)
{
	(void)state;
	struct rk_model m = model();
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	struct rk_perf_sample s[8];
	int n = make_samples(&m, &env, s);
	struct rk_perf_fit_result r;
	struct rk_error err;
	assert_int_equal(rk_perf_fit(&m, &env, s, 0, NULL, &r, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "no samples"));
	s[2].iter_ms = 0;
	assert_int_equal(rk_perf_fit(&m, &env, s, n, NULL, &r, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "sample 2 (line 4)"));
	assert_non_null(strstr(err.msg, "iter_ms"));
	s[2].iter_ms = 100;
	s[2].plan.dp = 3;
	assert_int_equal(rk_perf_fit(&m, &env, s, n, NULL, &r, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "dp*tp*pp"));
	s[2].plan.dp = 2;
	s[2].cpus_per_gpu = 0;
	assert_int_equal(rk_perf_fit(&m, &env, s, n, NULL, &r, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "cpus_per_gpu"));
	s[2].cpus_per_gpu = 1;
	s[2].placement.n_nodes = 0;
	assert_int_equal(rk_perf_fit(&m, &env, s, n, NULL, &r, &err), RK_EINVAL);
	s[2].placement.n_nodes = 1;
	struct rk_perf_env bad = env;
	bad.net_gbps = 0;
	assert_int_equal(rk_perf_fit(&m, &bad, s, n, NULL, &r, &err), RK_ERANGE);
	assert_non_null(strstr(err.msg, "net_gbps"));
	struct rk_perf_samples set;
	rk_perf_samples_init(&set);
	s[0].fwd_ms = NAN;
	assert_int_equal(rk_perf_samples_add(&set, &s[0], &err), RK_EINVAL);
	assert_int_equal(set.n, 0);
	assert_int_equal(rk_perf_refit(&m, &env, &set, &err), RK_EINVAL);
	assert_int_equal(m.perf_fitted, 0); /* unchanged on failure */
	rk_perf_samples_fini(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recovers_parameters),
		cmocka_unit_test(test_deterministic_and_bounded),
		cmocka_unit_test(test_forward_outlier),
		cmocka_unit_test(test_implausible_optimizer_phase),
		cmocka_unit_test(test_online_refit),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
