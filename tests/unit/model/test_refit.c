/*
 * The online refit rubickd and the simulator share (refit.c, rubick/refit.h):
 * observations of a job slower than its model move the model's predictions
 * toward them, the miss before each refit is kept, observations without a
 * throughput, a batch or GPUs are skipped, only the newest
 * RK_REFIT_MAX_SAMPLES are kept, and a bad sample leaves the model unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "rubick/refit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MI (1024.0 * 1024.0)

static struct rk_model model(void)
{
	struct rk_model m = {.layers = 24,
	                     .hidden = 1024,
	                     .heads = 16,
	                     .seq_len = 512,
	                     .params = 320 * MI,
	                     .global_batch = 32,
	                     .fwd_ms = 220};
	snprintf(m.name, sizeof(m.name), "%s", "synthetic");
	m.perf = (struct rk_perf_params){.k_bwd = 1.8,
	                                 .k_sync = 1.6,
	                                 .k_opt = 0.08,
	                                 .k_os_offload = 5.0,
	                                 .k_const = 15.0,
	                                 .k_off = 1.5,
	                                 .k_swap = 2.5,
	                                 .fwd_fixed_ms = 12.0};
	m.perf_fitted = 1;
	return m;
}

static struct rk_plan dp_plan(int d)
{
	return (struct rk_plan){.dp = d, .tp = 1, .pp = 1, .mb = 32 / d, .ga = 1};
}

static struct rk_placement one_node(int g)
{
	struct rk_placement p = {.n_nodes = 1};
	p.gpus[0] = g;
	return p;
}

static double predict(const struct rk_model *m, const struct rk_perf_env *env, int g)
{
	struct rk_plan p = dp_plan(g);
	struct rk_placement pl = one_node(g);
	double t = 0;
	assert_int_equal(rk_perf_predict(m, &m->perf, env, &p, &pl, 4, &t), 0);
	return t;
}

/* The job really runs 1.6x slower than its model says on every configuration. */
#define SLOW 1.6

static double observe(struct rk_refit *f, struct rk_model *m, const struct rk_model *truth,
                      const struct rk_perf_env *env, int g)
{
	double iter_ms = SLOW * predict(truth, env, g);
	struct rk_plan p = dp_plan(g);
	struct rk_placement pl = one_node(g);
	struct rk_error err;
	rk_error_clear(&err);
	/* 32 samples per iteration at iter_ms: the throughput a report carries */
	assert_int_equal(
	    rk_refit_observe(f, m, env, &p, &pl, 4 * g, 32, 32 * 1000.0 / iter_ms, &err), 0);
	return iter_ms;
}

static void test_moves_toward_observations(void **state)
{
	(void)state;
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	const struct rk_model truth = model();
	struct rk_model m = model();
	struct rk_refit f;
	rk_refit_init(&f);
	double seen8 = observe(&f, &m, &truth, &env, 8);
	assert_int_equal(f.n_fits, 1);
	assert_int_equal(f.set.n, 1);
	/* the model's miss before the refit: it predicted 1/1.6 of what ran */
	assert_true(fabs(f.last_pred_err - (1 - 1 / SLOW)) < 1e-6);
	assert_true(fabs(f.max_pred_err - f.last_pred_err) < 1e-12);
	assert_int_equal(f.set.v[0].cpus_per_gpu, 4);
	assert_true(fabs(f.set.v[0].iter_ms - seen8) < 1e-6 * seen8);
	/* the refitted model predicts the observed configuration much closer */
	double before = fabs(predict(&truth, &env, 8) - seen8) / seen8;
	double after = fabs(predict(&m, &env, 8) - seen8) / seen8;
	assert_true(after < 0.5 * before);
	observe(&f, &m, &truth, &env, 4);
	double seen2 = observe(&f, &m, &truth, &env, 2);
	assert_int_equal(f.n_fits, 3);
	/* and, from three configurations, one it did not run as well */
	double seen1 = SLOW * predict(&truth, &env, 1);
	assert_true(fabs(predict(&m, &env, 1) - seen1) <
	            0.5 * fabs(predict(&truth, &env, 1) - seen1));
	assert_true(fabs(predict(&m, &env, 2) - seen2) / seen2 < 0.1);
	assert_true(f.max_pred_err >= f.last_pred_err);
	assert_string_equal(f.last_error, "");
	rk_refit_fini(&f);
}

static void test_sample_rules(void **state)
{
	(void)state;
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	const struct rk_model truth = model();
	struct rk_model m = model();
	struct rk_refit f;
	rk_refit_init(&f);
	struct rk_plan p = dp_plan(4);
	struct rk_placement pl = one_node(4), none = {0};
	struct rk_error err;
	rk_error_clear(&err);
	/* nothing measured: no throughput, no batch, no GPUs */
	assert_int_equal(rk_refit_observe(&f, &m, &env, &p, &pl, 16, 32, 0, &err), 0);
	assert_int_equal(rk_refit_observe(&f, &m, &env, &p, &pl, 16, 0, 10, &err), 0);
	assert_int_equal(rk_refit_observe(&f, &m, &env, &p, &none, 16, 32, 10, &err), 0);
	assert_int_equal(f.set.n, 0);
	assert_int_equal(f.n_fits, 0);
	/* fewer CPUs than GPUs count as one thread per GPU */
	assert_int_equal(rk_refit_observe(&f, &m, &env, &p, &pl, 2, 32, 100, &err), 0);
	assert_int_equal(f.set.v[0].cpus_per_gpu, 1);
	/* a plan that does not match its placement: recorded as the error, model unchanged */
	struct rk_model keep = m;
	struct rk_placement two = one_node(2);
	assert_int_equal(rk_refit_observe(&f, &m, &env, &p, &two, 8, 32, 100, &err), 0);
	assert_non_null(strstr(f.last_error, "dp*tp*pp"));
	assert_memory_equal(&keep.perf, &m.perf, sizeof(m.perf));
	assert_int_equal(f.set.n, 1);
	/* the newest RK_REFIT_MAX_SAMPLES only */
	for (int i = 0; i < RK_REFIT_MAX_SAMPLES + 3; i++)
		observe(&f, &m, &truth, &env, 1 << (i % 4));
	assert_int_equal(f.set.n, RK_REFIT_MAX_SAMPLES);
	assert_int_equal(f.set.v[f.set.n - 1].plan.dp, 1 << ((RK_REFIT_MAX_SAMPLES + 2) % 4));
	/* missing arguments are an error that names the call */
	assert_int_equal(rk_refit_observe(NULL, &m, &env, &p, &pl, 16, 32, 10, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "refit"));
	rk_refit_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_moves_toward_observations),
	    cmocka_unit_test(test_sample_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
