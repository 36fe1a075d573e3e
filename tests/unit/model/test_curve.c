/*
 * Sensitivity curves (curve.h): each point's plan is the best feasible one
 * (checked against a brute-force scan), the 1% rule and its minimal
 * resources, slopes, the CPU and bandwidth axes, lookups and every error.
 */
#include "rubick/curve.h"
#include "rubick/memory.h"
#include "rubick/perf.h"
#include "rubick/plan.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_fixture.h"

/* LLaMA-2-7B with a plausible forward time, and BERT-large as in data/zoo. */
static struct rk_model llama7(void)
{
	return fx_llama7(1000);
}

static struct rk_model bert(void)
{
	return fx_model("bert", 24, 1024, 16, 512, 30522, 336.3e6, 32, 225, 0);
}

/* Physically plausible parameters (p-norm form), not fitted to anything. */
static struct rk_perf_params params(void)
{
	struct rk_perf_params k = {.k_bwd = 2.0, .k_sync = 2.0, .k_opt = 0.05,
				   .k_os_offload = 2.0, .k_const = 10.0, .k_off = 2.0,
				   .k_swap = 2.0, .fwd_fixed_ms = 0};
	return k;
}

struct fixture {
	struct rk_perf_env env;
	struct rk_perf_params k;
	struct rk_curve_opts o;
};

static void setup(struct fixture *f, int max_gpus)
{
	rk_perf_env_a800(&f->env);
	f->k = params();
	rk_curve_opts_default(&f->env, &f->o);
	f->o.max_gpus = max_gpus;
}

/* The best plan of a point by brute force over rk_plan_enumerate. */
static double brute_best_ms(const struct rk_model *m, const struct fixture *f, int batch, int g,
			    int cpus, double net)
{
	struct rk_placement pl;
	assert_int_equal(rk_placement_consolidated(g, f->o.node_gpus, &pl, NULL), 0);
	size_t cap = 8192, n;
	struct rk_plan *v = calloc(cap, sizeof(*v));
	assert_int_equal(rk_plan_enumerate(m, batch, &pl, f->o.gpu_mem_mb, f->o.host_mem_mb, v, cap,
					   &n, NULL),
			 0);
	assert_true(n <= cap);
	struct rk_perf_env e = f->env;
	e.net_gbps = net;
	double best = INFINITY;
	for (size_t i = 0; i < n; i++) {
		double ms;
		assert_int_equal(rk_perf_predict(m, &f->k, &e, &v[i], &pl, cpus, &ms), 0);
		if (ms < best)
			best = ms;
	}
	free(v);
	return best;
}

static void test_points_are_best_and_feasible(void **state)
{
	(void)state;
	struct fixture f;
	setup(&f, 24);
	f.o.n_bw = 2;
	f.o.net_gbps[0] = 5;
	f.o.net_gbps[1] = 25;
	struct rk_model models[2] = {llama7(), bert()};
	for (int mi = 0; mi < 2; mi++) {
		const struct rk_model *m = &models[mi];
		struct rk_curve c;
		struct rk_error err;
		if (rk_curve_build(m, &f.k, &f.env, m->global_batch, &f.o, &c, &err))
			fail_msg("%s", err.msg);
		assert_string_equal(c.model, m->name);
		assert_true(c.n_predictions > 0);
		for (int g = 1; g <= f.o.max_gpus; g++)
			for (int ci = 0; ci < f.o.n_cpus; ci++)
				for (int w = 0; w < f.o.n_bw; w++) {
	const struct rk_curve_point *p = rk_curve_at(&c, g, ci, w);
	assert_non_null(p);
	double best = brute_best_ms(m, &f, m->global_batch, g, f.o.cpus_per_gpu[ci],
				    f.o.net_gbps[w]);
	if (!isfinite(best)) {
		assert_false(p->has_plan);
		assert_true(p->tput_sps == 0);
		continue;
	}
	assert_true(p->has_plan);
	assert_true(fabs(p->iter_ms - best) <= 1e-9 * best);
	assert_true(fabs(p->tput_sps - m->global_batch / (best / 1000)) < 1e-6 * p->tput_sps);
	assert_int_equal(rk_plan_validate(&p->plan, m->global_batch, g, NULL), 0);
	struct rk_placement pl;
	rk_placement_consolidated(g, 8, &pl, NULL);
	assert_int_equal(rk_memory_check(m, &p->plan, &pl, f.o.gpu_mem_mb, f.o.host_mem_mb, NULL,
					 NULL),
			 0);
				}
		rk_curve_fini(&c);
	}
}

/* Tolerance of the 1% rule applied along up to three axes in turn. */
#define ONE_PCT3 (RK_CURVE_MIN_GAIN * RK_CURVE_MIN_GAIN * RK_CURVE_MIN_GAIN)

static void test_one_percent_rule(void **state)
{
	(void)state;
	struct fixture f;
	setup(&f, 32);
	f.o.n_bw = 2;
	f.o.net_gbps[0] = 5;
	f.o.net_gbps[1] = 25;
	struct rk_model m = llama7();
	struct rk_curve c;
	assert_int_equal(rk_curve_build(&m, &f.k, &f.env, 8, &f.o, &c, NULL), 0);
	int copied = 0;
	for (int g = 1; g <= f.o.max_gpus; g++)
		for (int ci = 0; ci < f.o.n_cpus; ci++)
			for (int w = 0; w < f.o.n_bw; w++) {
	const struct rk_curve_point *p = rk_curve_at(&c, g, ci, w);
	if (!p->feasible) {
		assert_true(p->min_tput_sps == 0);
		continue;
	}
	/* The minimal resources are no more than the point's own ... */
	assert_true(p->min_gpus <= g);
	assert_true(p->min_cpus_per_gpu <= f.o.cpus_per_gpu[ci]);
	assert_true(p->min_net_gbps <= f.o.net_gbps[w]);
	/* ... their plan runs on them and is the raw best there ... */
	assert_int_equal(p->min_plan.dp * p->min_plan.tp * p->min_plan.pp, p->min_gpus);
	int mci = 0, mw = 0;
	while (f.o.cpus_per_gpu[mci] != p->min_cpus_per_gpu)
		mci++;
	while (f.o.net_gbps[mw] != p->min_net_gbps)
		mw++;
	const struct rk_curve_point *src = rk_curve_at(&c, p->min_gpus, mci, mw);
	assert_true(src->has_plan);
	assert_true(rk_plan_equal(&src->plan, &p->min_plan));
	assert_true(src->tput_sps == p->min_tput_sps);
	/* ... and reach the point's own best within the rule's tolerance. */
	assert_true(p->min_tput_sps * ONE_PCT3 >= p->tput_sps);
	if (p->min_gpus < g)
		copied++;
	/* Never noticeably below a point with fewer resources. */
	const struct rk_curve_point *less[3] = {rk_curve_at(&c, g - 1, ci, w),
						rk_curve_at(&c, g, ci - 1, w),
						rk_curve_at(&c, g, ci, w - 1)};
	for (int i = 0; i < 3; i++)
		if (less[i])
			assert_true(p->min_tput_sps * ONE_PCT3 >= less[i]->min_tput_sps);
	/* Slope: what one more GPU brings. */
	const struct rk_curve_point *more = rk_curve_at(&c, g + 1, ci, w);
	double slope = more ? more->min_tput_sps - p->min_tput_sps : 0.0;
	assert_true(fabs(p->slope_sps - slope) < 1e-9);
			}
	/* LLaMA-7B at batch 8: GPU counts that do not divide the batch, or gain
	 * nothing, fall back on fewer GPUs. */
	assert_true(copied > 0);
	/* The max config is the best min throughput within 1% with the fewest GPUs. */
	const struct rk_curve_point *mx = rk_curve_max(&c);
	assert_non_null(mx);
	double top = 0;
	for (int g = 1; g <= f.o.max_gpus; g++)
		for (int ci = 0; ci < f.o.n_cpus; ci++)
			for (int w = 0; w < f.o.n_bw; w++)
				if (rk_curve_at(&c, g, ci, w)->min_tput_sps > top)
					top = rk_curve_at(&c, g, ci, w)->min_tput_sps;
	assert_true(mx->min_tput_sps * RK_CURVE_MIN_GAIN >= top);
	for (int g = 1; g < c.max_gpu; g++)
		for (int ci = 0; ci < f.o.n_cpus; ci++)
			for (int w = 0; w < f.o.n_bw; w++)
				assert_true(rk_curve_at(&c, g, ci, w)->min_tput_sps * RK_CURVE_MIN_GAIN <
					    mx->min_tput_sps);
	rk_curve_fini(&c);
}

static void test_cpu_and_bandwidth_axes(void **state)
{
	(void)state;
	struct fixture f;
	setup(&f, 16);
	f.o.n_bw = 2;
	f.o.net_gbps[0] = 2;
	f.o.net_gbps[1] = 50;
	struct rk_model m = llama7();
	struct rk_curve c;
	assert_int_equal(rk_curve_build(&m, &f.k, &f.env, 8, &f.o, &c, NULL), 0);
	/* One GPU: only ZeRO-Offload fits, and its host optimizer gets faster
	 * with more CPU threads. */
	const struct rk_curve_point *p1 = rk_curve_at(&c, 1, 0, 0);
	const struct rk_curve_point *p8 = rk_curve_at(&c, 1, 3, 0);
	assert_true(p1->has_plan && p1->plan.offload);
	assert_true(p8->tput_sps > p1->tput_sps);
	/* Bandwidth does not matter inside a node, only across nodes. */
	for (int g = 1; g <= 8; g++)
		assert_true(rk_curve_at(&c, g, 0, 0)->tput_sps == rk_curve_at(&c, g, 0, 1)->tput_sps);
	assert_true(rk_curve_at(&c, 16, 0, 1)->tput_sps > rk_curve_at(&c, 16, 0, 0)->tput_sps);
	/* Lookups map actual resources onto the levels. */
	assert_ptr_equal(rk_curve_lookup(&c, 1, 3, 2.0), rk_curve_at(&c, 1, 1, 0));
	assert_ptr_equal(rk_curve_lookup(&c, 1, 100, 100.0), rk_curve_at(&c, 1, 3, 1));
	assert_ptr_equal(rk_curve_lookup(&c, 1, 0, 0.5), rk_curve_at(&c, 1, 0, 0));
	assert_ptr_equal(rk_curve_lookup(&c, 99, 1, 2.0), rk_curve_at(&c, 16, 0, 0));
	assert_null(rk_curve_lookup(&c, 0, 1, 2.0));
	assert_null(rk_curve_at(&c, 0, 0, 0));
	assert_null(rk_curve_at(&c, 17, 0, 0));
	assert_null(rk_curve_at(&c, 1, 4, 0));
	assert_null(rk_curve_at(&c, 1, 0, 2));
	assert_null(rk_curve_at(&c, 1, -1, 0));
	/* Slope in the artifact's form. */
	double s = rk_curve_slope(&c, 4, 4, 0, 0);
	double want = fabs(rk_curve_at(&c, 8, 0, 0)->min_tput_sps -
			   rk_curve_at(&c, 4, 0, 0)->min_tput_sps) /
		      4;
	assert_true(fabs(s - want) < 1e-12);
	assert_true(rk_curve_slope(&c, 4, 0, 0, 0) == 0);
	assert_true(rk_curve_slope(&c, 0, 1, 0, 0) == 0);
	s = rk_curve_slope(&c, 15, 10, 0, 0); /* clamped to 16 */
	assert_true(fabs(s - fabs(rk_curve_at(&c, 16, 0, 0)->min_tput_sps -
				  rk_curve_at(&c, 15, 0, 0)->min_tput_sps) /
				     10) < 1e-12);
	s = rk_curve_slope(&c, 2, -5, 0, 0); /* clamped to 1 */
	assert_true(s >= 0);
	rk_curve_fini(&c);
	rk_curve_fini(&c); /* twice is fine */
	rk_curve_fini(NULL);
}

static void test_infeasible_and_deterministic(void **state)
{
	(void)state;
	struct fixture f;
	setup(&f, 8);
	struct rk_model m = llama7();
	/* 24 GB GPUs and 16 GB of host memory: one GPU cannot hold LLaMA-7B's
	 * states even with offload (14 bytes/param on the host), 8 can with ZeRO-3. */
	f.o.gpu_mem_mb = 24576;
	f.o.host_mem_mb = 16384;
	struct rk_curve a, b;
	assert_int_equal(rk_curve_build(&m, &f.k, &f.env, 8, &f.o, &a, NULL), 0);
	assert_false(rk_curve_at(&a, 1, 0, 0)->feasible);
	assert_false(rk_curve_at(&a, 1, 0, 0)->has_plan);
	assert_true(rk_curve_at(&a, 8, 0, 0)->feasible);
	assert_int_equal(rk_curve_build(&m, &f.k, &f.env, 8, &f.o, &b, NULL), 0);
	assert_memory_equal(a.points, b.points,
			    (size_t)f.o.max_gpus * f.o.n_cpus * f.o.n_bw * sizeof(*a.points));
	rk_curve_fini(&a);
	rk_curve_fini(&b);
}

static void test_errors(void **state)
{
	(void)state;
	struct fixture f;
	setup(&f, 8);
	struct rk_model m = bert();
	struct rk_curve c = {.max_gpu = 77};
	struct rk_error err;
	assert_int_equal(rk_curve_build(NULL, &f.k, &f.env, 8, &f.o, &c, &err), RK_EINVAL);
	assert_int_equal(rk_curve_build(&m, NULL, &f.env, 8, &f.o, &c, &err), RK_EINVAL);
	assert_int_equal(rk_curve_build(&m, &f.k, NULL, 8, &f.o, &c, &err), RK_EINVAL);
	assert_int_equal(rk_curve_build(&m, &f.k, &f.env, 8, NULL, &c, &err), RK_EINVAL);
	assert_int_equal(rk_curve_build(&m, &f.k, &f.env, 8, &f.o, NULL, &err), RK_EINVAL);
	assert_int_equal(rk_curve_build(&m, &f.k, &f.env, 0, &f.o, &c, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "global batch"));
	struct rk_curve_opts o;
#define BAD(stmt, phrase)                                                                      \
	do {                                                                                   \
		o = f.o;                                                                       \
		stmt;                                                                          \
		assert_int_equal(rk_curve_build(&m, &f.k, &f.env, 32, &o, &c, &err), RK_EINVAL); \
		if (!strstr(err.msg, phrase))                                                  \
			fail_msg("'%s' not in '%s'", phrase, err.msg);                         \
	} while (0)
	BAD(o.node_gpus = 0, "node_gpus");
	BAD(o.max_gpus = 0, "max_gpus");
	BAD(o.max_gpus = 64 * 8 + 1, "max_gpus");
	BAD(o.n_cpus = 0, "n_cpus");
	BAD(o.n_cpus = RK_CURVE_LEVELS_MAX + 1, "n_cpus");
	BAD(o.cpus_per_gpu[0] = 0, "CPU levels");
	BAD(o.cpus_per_gpu[2] = 2, "CPU levels");
	BAD(o.n_bw = 0, "n_bw");
	BAD(o.net_gbps[0] = 0, "bandwidth levels");
	BAD(o.net_gbps[0] = NAN, "bandwidth levels");
	BAD((o.n_bw = 2, o.net_gbps[1] = o.net_gbps[0]), "bandwidth levels");
	BAD(o.gpu_mem_mb = 0, "memory limits");
	BAD(o.host_mem_mb = -1, "memory limits");
#undef BAD
	/* Bad cluster constants and parameters the performance model rejects. */
	struct rk_perf_env e = f.env;
	e.nvlink_gbps = -1;
	assert_true(rk_curve_build(&m, &f.k, &e, 32, &f.o, &c, &err) < 0);
	assert_non_null(strstr(err.msg, "nvlink"));
	struct rk_perf_params k = f.k;
	k.k_sync = 0.5;
	int rc = rk_curve_build(&m, &k, &f.env, 32, &f.o, &c, &err);
	assert_int_equal(rc, RK_ERANGE);
	assert_non_null(strstr(err.msg, "rejects"));
	assert_int_equal(c.max_gpu, 77); /* untouched on failure */
	/* A malformed model is named. */
	struct rk_model bm = m;
	bm.layers = 0;
	assert_int_equal(rk_curve_build(&bm, &f.k, &f.env, 32, &f.o, &c, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "bert"));
	assert_null(rk_curve_max(NULL));
	assert_null(rk_curve_at(NULL, 1, 0, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_points_are_best_and_feasible),
		cmocka_unit_test(test_one_percent_rule),
		cmocka_unit_test(test_cpu_and_bandwidth_axes),
		cmocka_unit_test(test_infeasible_and_deterministic),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
