/*
 * Memory model (memory.h): the formulas on hand-computed cases, ZeRO stages,
 * offload, checkpointing, TP/PP, every documented error, and the check against
 * every measured plan x placement row of the Rubick artifact (A800 80 GB).
 */
#include "rubick/memory.h"
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

#define MIB (1024.0 * 1024.0)
/* An A800 80 GB as nvidia-smi reports it. */
#define A800_MB 81920

static struct rk_plan plan(int dp, int tp, int pp, int mb, int ga, int gc, int zero, int off)
{
	struct rk_plan p = {dp, tp, pp, mb, ga, gc, zero, off};
	return p;
}

static void test_plain_dp_formula(void **state)
{
	(void)state;
	struct rk_model m = fx_tiny();
	struct rk_plan p = plan(1, 1, 1, 2, 4, 0, 0, 0);
	struct rk_mem_usage u;
	assert_int_equal(rk_memory_estimate(&m, &p, &u, NULL), 0);
	assert_true(fabs(u.weights_mb - 2e6 / MIB) < 1e-9);
	assert_true(fabs(u.grads_mb - 2e6 / MIB) < 1e-9);
	assert_true(fabs(u.optim_mb - 12e6 / MIB) < 1e-9);
	/* Korthikanti: s*b*h*(34 + 5*a*s/h) per layer, + fp32 logits 4*s*b*v. */
	double s = 32, b = 2, h = 64, a = 4, v = 100;
	double act = 4 * s * b * h * (34 + 5 * a * s / h) + 4 * s * b * v;
	assert_true(fabs(u.activ_mb - act / MIB) < 1e-9);
	assert_true(fabs(u.reserve_mb - RK_MEM_RESERVE_MB) < 1e-9);
	assert_true(fabs(u.gpu_mb - (u.weights_mb + u.grads_mb + u.optim_mb + u.activ_mb +
				     u.reserve_mb)) < 1e-9);
	assert_true(u.host_mb == 0.0);
}

static void test_zero_stages_partition(void **state)
{
	(void)state;
	struct rk_model m = fx_tiny();
	struct rk_mem_usage z[4];
	for (int s = 0; s < 4; s++) {
		struct rk_plan p = plan(4, 1, 1, 1, 2, 0, s, 0);
		assert_int_equal(rk_memory_estimate(&m, &p, &z[s], NULL), 0);
	}
	double psi = 1e6 / MIB;
	assert_true(fabs(z[0].optim_mb - 12 * psi) < 1e-9);
	assert_true(fabs(z[1].optim_mb - 12 * psi / 4) < 1e-9);
	assert_true(fabs(z[1].grads_mb - 2 * psi) < 1e-9);
	assert_true(fabs(z[2].grads_mb - 2 * psi / 4) < 1e-9);
	assert_true(fabs(z[2].weights_mb - 2 * psi) < 1e-9);
	assert_true(fabs(z[3].weights_mb - 2 * psi / 4) < 1e-9);
	for (int s = 1; s < 4; s++)
		assert_true(z[s].gpu_mb < z[s - 1].gpu_mb);
}

static void test_offload_moves_states_to_host(void **state)
{
	(void)state;
	struct rk_model m = fx_tiny();
	m.params = 7e9;
	struct rk_plan p = plan(2, 1, 1, 1, 4, 0, 2, 1);
	struct rk_mem_usage u;
	assert_int_equal(rk_memory_estimate(&m, &p, &u, NULL), 0);
	assert_true(u.optim_mb == 0.0);
	assert_true(fabs(u.host_mb - 14 * 7e9 / 2 / MIB) < 1e-6);
	assert_true(fabs(u.grads_mb - RK_MEM_OFFLOAD_BUCKET_MB) < 1e-9);
	assert_true(fabs(u.weights_mb - 2 * 7e9 / MIB) < 1e-6);
	/* Host memory is checked per node: 8 GPUs on one node need 8 shares. */
	struct rk_placement one = {1, {8}};
	p.dp = 8;
	p.ga = 1;
	struct rk_error err;
	assert_int_equal(rk_memory_estimate(&m, &p, &u, NULL), 0);
	int64_t need = (int64_t)ceil(u.host_mb * 8);
	assert_int_equal(rk_memory_check(&m, &p, &one, RK_MEM_UNLIMITED, need, NULL, NULL), 0);
	assert_int_equal(rk_memory_check(&m, &p, &one, RK_MEM_UNLIMITED, need - 10, NULL, &err),
			 RK_EINFEASIBLE);
	assert_non_null(strstr(err.msg, "host memory"));
	struct rk_placement spread = {8, {1, 1, 1, 1, 1, 1, 1, 1}};
	assert_int_equal(rk_memory_check(&m, &p, &spread, RK_MEM_UNLIMITED, need / 8 + 1, NULL,
					 NULL),
			 0);
}

static void test_checkpointing_tp_pp(void **state)
{
	(void)state;
	struct rk_model m = fx_tiny();
	m.vocab = 0;
	struct rk_mem_usage full, gc, tp2, pp2, pp2ga1;
	struct rk_plan p = plan(1, 1, 1, 4, 1, 0, 0, 0);
	assert_int_equal(rk_memory_estimate(&m, &p, &full, NULL), 0);
	p.gc = 1;
	assert_int_equal(rk_memory_estimate(&m, &p, &gc, NULL), 0);
	double s = 32, b = 4, h = 64, a = 4;
	double layer = s * b * h * (34 + 5 * a * s / h);
	assert_true(fabs(full.activ_mb - 4 * layer / MIB) < 1e-9);
	assert_true(fabs(gc.activ_mb - (4 * 2 * s * b * h + layer) / MIB) < 1e-9);
	p = plan(1, 2, 1, 4, 1, 0, 0, 0);
	assert_int_equal(rk_memory_estimate(&m, &p, &tp2, NULL), 0);
	double layer_t2 = s * b * h * (10 + 24 / 2.0 + 5 * a * s / (h * 2));
	assert_true(fabs(tp2.activ_mb - 4 * layer_t2 / MIB) < 1e-9);
	assert_true(fabs(tp2.weights_mb - full.weights_mb / 2) < 1e-9);
	/* 1F1B: the first of 2 stages keeps 2 micro-batches of its 2 layers. */
	p = plan(1, 1, 2, 4, 4, 0, 0, 0);
	assert_int_equal(rk_memory_estimate(&m, &p, &pp2, NULL), 0);
	assert_true(fabs(pp2.activ_mb - 2 * 2 * layer / MIB) < 1e-9);
	p.ga = 1;
	p.mb = 4;
	assert_int_equal(rk_memory_estimate(&m, &p, &pp2ga1, NULL), 0);
	assert_true(fabs(pp2ga1.activ_mb - 2 * layer / MIB) < 1e-9);
	/* Uneven split: 4 layers over 3 stages -> the worst stage has 2. */
	p = plan(1, 1, 3, 4, 1, 0, 0, 0);
	assert_int_equal(rk_memory_estimate(&m, &p, &pp2ga1, NULL), 0);
	assert_true(fabs(pp2ga1.activ_mb - 2 * layer / MIB) < 1e-9);
}

static void test_pipeline_stage_holds_embedding(void **state)
{
	(void)state;
	/* 8 layers, vocab 1000 x hidden 64 = 64,000 embedding parameters. */
	struct rk_model m = fx_tiny();
	m.layers = 8;
	m.vocab = 1000;
	m.params = 1e6;
	struct rk_mem_usage u1, u4, u3;
	struct rk_plan p = plan(1, 1, 1, 1, 4, 0, 0, 0);
	assert_int_equal(rk_memory_estimate(&m, &p, &u1, NULL), 0);
	assert_true(fabs(u1.weights_mb - 2e6 / MIB) < 1e-9);
	p.pp = 4;
	assert_int_equal(rk_memory_estimate(&m, &p, &u4, NULL), 0);
	double stage = (1e6 - 64000) * 2 / 8 + 64000;
	assert_true(fabs(u4.weights_mb - 2 * stage / MIB) < 1e-9);
	assert_true(fabs(u4.optim_mb - 12 * stage / MIB) < 1e-9);
	/* 8 layers over 3 stages: the busiest has 3. */
	p.pp = 3;
	assert_int_equal(rk_memory_estimate(&m, &p, &u3, NULL), 0);
	stage = (1e6 - 64000) * 3 / 8 + 64000;
	assert_true(fabs(u3.weights_mb - 2 * stage / MIB) < 1e-9);
	/* TP splits the stage further. */
	p.pp = 4;
	p.tp = 2;
	assert_int_equal(rk_memory_estimate(&m, &p, &u3, NULL), 0);
	assert_true(fabs(u3.weights_mb - u4.weights_mb / 2) < 1e-9);
	/* An embedding larger than the count: spread evenly instead. */
	m.params = 1000;
	p = plan(1, 1, 4, 1, 4, 0, 0, 0);
	assert_int_equal(rk_memory_estimate(&m, &p, &u4, NULL), 0);
	assert_true(fabs(u4.weights_mb - 2 * 250 / MIB) < 1e-12);
}

static void test_memory_grows_with_micro_batch(void **state)
{
	(void)state;
	struct rk_model m = fx_tiny();
	double last = 0;
	for (int mb = 1; mb <= 64; mb *= 2) {
		struct rk_plan p = plan(1, 1, 1, mb, 1, 0, 0, 0);
		struct rk_mem_usage u;
		assert_int_equal(rk_memory_estimate(&m, &p, &u, NULL), 0);
		assert_true(u.gpu_mb > last);
		last = u.gpu_mb;
	}
}

static void test_errors(void **state)
{
	(void)state;
	struct rk_error err;
	struct rk_model m = fx_tiny();
	struct rk_plan p = plan(1, 1, 1, 1, 1, 0, 0, 0);
	struct rk_mem_usage u;
	assert_int_equal(rk_memory_estimate(NULL, &p, &u, &err), RK_EINVAL);
	assert_int_equal(rk_memory_estimate(&m, NULL, &u, &err), RK_EINVAL);
	struct rk_model bad = m;
	bad.layers = 0;
	assert_int_equal(rk_memory_estimate(&bad, &p, &u, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "layers"));
	bad = m;
	bad.heads = 0;
	assert_int_equal(rk_memory_estimate(&bad, &p, &u, &err), RK_EINVAL);
	bad = m;
	bad.vocab = -1;
	assert_int_equal(rk_memory_estimate(&bad, &p, &u, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "vocab"));
	bad = m;
	bad.params = 0;
	assert_int_equal(rk_memory_estimate(&bad, &p, &u, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "params"));
	bad.params = NAN;
	assert_int_equal(rk_memory_estimate(&bad, &p, &u, &err), RK_EINVAL);
	struct rk_plan bp = p;
	bp.mb = 0;
	assert_int_equal(rk_memory_estimate(&m, &bp, &u, &err), RK_EINVAL);
	bp = p;
	bp.zero = 4;
	assert_int_equal(rk_memory_estimate(&m, &bp, &u, &err), RK_EINVAL);
	assert_int_equal(rk_memory_check(&m, &p, NULL, 0, RK_MEM_UNLIMITED, &u, &err), RK_EINVAL);
	assert_int_equal(rk_memory_check(&m, &p, NULL, 100, -1, &u, &err), RK_EINVAL);
	/* Too small a GPU: the message gives the breakdown. */
	assert_int_equal(rk_memory_check(&m, &p, NULL, 100, RK_MEM_UNLIMITED, &u, &err),
			 RK_EINFEASIBLE);
	assert_non_null(strstr(err.msg, "per GPU"));
	assert_non_null(strstr(err.msg, "reserve"));
	/* Host check without a placement. */
	bp = plan(1, 1, 1, 1, 1, 0, 2, 1);
	assert_int_equal(rk_memory_check(&m, &bp, NULL, A800_MB, 1000, &u, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "placement"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_dp_formula),
		cmocka_unit_test(test_zero_stages_partition),
		cmocka_unit_test(test_offload_moves_states_to_host),
		cmocka_unit_test(test_checkpointing_tp_pp),
		cmocka_unit_test(test_pipeline_stage_holds_embedding),
		cmocka_unit_test(test_memory_grows_with_micro_batch),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
