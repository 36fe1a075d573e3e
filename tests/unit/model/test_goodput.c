/*
 * Pollux's goodput model (goodput.c): efficiency and step time against values
 * worked by hand from Pollux §3 eqs. 5-9; the optimiser's choice at the two
 * extremes of the noise scale; the fit recovering known PerfParams; and every
 * documented refusal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "rubick/error.h"
#include "rubick/goodput.h"

#include <math.h>

static const struct rk_goodput_perf P1 = { .alpha_c = 0.1, .beta_c = 0.01, .alpha_n = 0.2,
					   .beta_n = 0.05, .alpha_r = 0.05, .beta_r = 0.01,
					   .gamma = 1.0 };

static void test_efficiency_by_hand(void **state)
{
	(void)state;
	struct rk_goodput_grad g = { .sqr = 1.0, .var = 3.0 };
	double e;
	/* phi = 128 * 3 = 384: (384 + 128) / (384 + 512) = 4/7 */
	assert_int_equal(rk_goodput_efficiency(&g, 128, 512, &e), 0);
	assert_float_equal(e, 4.0 / 7.0, 1e-12);
	assert_int_equal(rk_goodput_efficiency(&g, 128, 128, &e), 0);
	assert_float_equal(e, 1.0, 1e-12);
	/* no signal: every sample counts the same, E = M0 / M */
	g.var = 0.0;
	assert_int_equal(rk_goodput_efficiency(&g, 128, 512, &e), 0);
	assert_float_equal(e, 0.25, 1e-12);
	g.sqr = -1.0;
	assert_int_equal(rk_goodput_efficiency(&g, 128, 512, &e), RK_EINVAL);
	g.sqr = 1.0;
	assert_int_equal(rk_goodput_efficiency(&g, 0, 512, &e), RK_EINVAL);
	assert_int_equal(rk_goodput_efficiency(&g, 128, -1, &e), RK_EINVAL);
}

static void test_step_time_by_hand(void **state)
{
	(void)state;
	double t, sps;
	/* 2 nodes, 4 GPUs, m 10, s 1, gamma 1: T_grad 0.2, T_sync 0.2 + 0.05*2 = 0.3,
	 * T = 1 * 0.2 + (0.2 + 0.3) = 0.7 s; throughput 4*10*2 / 0.7 */
	assert_int_equal(rk_goodput_step_time(&P1, 2, 4, 10, 1, &t), 0);
	assert_float_equal(t, 0.7, 1e-12);
	assert_int_equal(rk_goodput_throughput(&P1, 2, 4, 10, 1, &sps), 0);
	assert_float_equal(sps, 80.0 / 0.7, 1e-9);
	/* one node, 2 GPUs, gamma 2: sqrt(0.2^2 + 0.05^2) */
	struct rk_goodput_perf p = P1;
	p.gamma = 2.0;
	assert_int_equal(rk_goodput_step_time(&p, 1, 2, 10, 0, &t), 0);
	assert_float_equal(t, sqrt(0.04 + 0.0025), 1e-12);
	/* one GPU syncs nothing */
	assert_int_equal(rk_goodput_step_time(&p, 1, 1, 10, 0, &t), 0);
	assert_float_equal(t, 0.2, 1e-12);
	/* goodput = throughput x efficiency: 1 GPU, m 512, M0 128 -> 4/7 */
	struct rk_goodput_grad g = { .sqr = 1.0, .var = 3.0 };
	double gp;
	assert_int_equal(rk_goodput_eval(&P1, &g, 128, 1, 1, 512, 0, &gp), 0);
	assert_float_equal(gp, 512.0 / (0.1 + 5.12) * 4.0 / 7.0, 1e-9);
	/* refusals */
	assert_int_equal(rk_goodput_step_time(&P1, 0, 1, 10, 0, &t), RK_EINVAL);
	assert_int_equal(rk_goodput_step_time(&P1, 2, 1, 10, 0, &t), RK_EINVAL);
	assert_int_equal(rk_goodput_step_time(&P1, 1, 1, 0, 0, &t), RK_EINVAL);
	assert_int_equal(rk_goodput_step_time(&P1, 1, 1, 10, -1, &t), RK_EINVAL);
	p.gamma = 0.5;
	assert_int_equal(rk_goodput_step_time(&p, 1, 1, 10, 0, &t), RK_EINVAL);
}

static void test_optimize_extremes(void **state)
{
	(void)state;
	struct rk_goodput_limits lim = { .init_batch = 128, .max_batch = 4096, .min_local = 8,
					 .max_local = 256, .accumulation = true };
	struct rk_goodput_choice c;
	/* all signal, no noise: E = M0/M, so goodput falls with M; M0 wins */
	struct rk_goodput_grad sig = { .sqr = 1.0, .var = 0.0 };
	assert_int_equal(rk_goodput_optimize(&P1, &sig, &lim, 1, 4, &c), 0);
	assert_float_equal(c.batch, 128, 1e-9);
	assert_int_equal(c.local_bsz, 32);
	assert_int_equal(c.accum_steps, 0);
	/* all noise: E ~ 1 at any batch, so the largest batch (best throughput)
	 * wins, split over accumulation since 4096/4 > max_local */
	struct rk_goodput_grad noise = { .sqr = 1e-12, .var = 1.0 };
	assert_int_equal(rk_goodput_optimize(&P1, &noise, &lim, 1, 4, &c), 0);
	assert_int_equal(c.accum_steps, 3);
	assert_int_equal(c.local_bsz, 256);
	assert_float_equal(c.batch, 4096, 1e-9);
	double gp;
	assert_int_equal(rk_goodput_eval(&P1, &noise, 128, 1, 4, 256, 3, &gp), 0);
	assert_float_equal(c.goodput, gp, 1e-9);
	/* without accumulation the largest batch that fits per GPU */
	lim.accumulation = false;
	assert_int_equal(rk_goodput_optimize(&P1, &noise, &lim, 1, 4, &c), 0);
	assert_int_equal(c.accum_steps, 0);
	assert_true(c.local_bsz <= 256 && c.local_bsz > 200);
	/* nothing fits: M0 = 128 on one GPU holding at most 8, no accumulation */
	lim.max_batch = 128;
	lim.max_local = 8;
	assert_int_equal(rk_goodput_optimize(&P1, &noise, &lim, 1, 1, &c), RK_EINFEASIBLE);
	lim.max_local = 256;
	lim.max_batch = 64; /* below init_batch */
	assert_int_equal(rk_goodput_optimize(&P1, &noise, &lim, 1, 4, &c), RK_EINVAL);
}

static void test_fit_recovers_params(void **state)
{
	(void)state;
	const struct rk_goodput_perf truth = { .alpha_c = 0.02, .beta_c = 0.001, .alpha_n = 0.05,
					       .beta_n = 0.004, .alpha_r = 0.01, .beta_r = 0.002,
					       .gamma = 2.0 };
	struct rk_goodput_obs obs[32];
	size_t n = 0;
	static const int place[][2] = { { 1, 1 }, { 1, 2 }, { 1, 4 }, { 2, 4 }, { 2, 8 }, { 4, 16 } };
	static const double bsz[] = { 16, 32, 64, 128, 256 };
	for (size_t i = 0; i < 6; i++)
		for (size_t j = 0; j < 5; j++) {
			struct rk_goodput_obs *o = &obs[n++];
			*o = (struct rk_goodput_obs){ .nodes = place[i][0], .replicas = place[i][1],
						      .local_bsz = bsz[j] };
			assert_int_equal(rk_goodput_step_time(&truth, o->nodes, o->replicas,
							      o->local_bsz, 0, &o->step_s), 0);
			o->compute_s = truth.alpha_c + truth.beta_c * o->local_bsz;
		}
	struct rk_goodput_perf fit;
	assert_int_equal(rk_goodput_fit(obs, n, &fit), 0);
	/* the fitted model predicts every measured step within 3% */
	for (size_t i = 0; i < n; i++) {
		double t;
		assert_int_equal(rk_goodput_step_time(&fit, obs[i].nodes, obs[i].replicas,
						      obs[i].local_bsz, 0, &t), 0);
		assert_true(fabs(t / obs[i].step_s - 1.0) < 0.03);
	}
	assert_float_equal(fit.beta_c, truth.beta_c, 1e-4);
	/* refusals */
	assert_int_equal(rk_goodput_fit(obs, 0, &fit), RK_EINVAL);
	obs[3].step_s = 0.0;
	assert_int_equal(rk_goodput_fit(obs, n, &fit), RK_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_efficiency_by_hand),
		cmocka_unit_test(test_step_time_by_hand),
		cmocka_unit_test(test_optimize_extremes),
		cmocka_unit_test(test_fit_recovers_params),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
