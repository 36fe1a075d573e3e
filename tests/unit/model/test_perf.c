/* Performance model (perf.c): formulas on hand-checked points, placement
 * effects, and every documented error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rubick/perf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MI (1024.0 * 1024.0)

/* P = 100 Mi parameters, global batch 8, forward 80 ms for the batch on one
 * GPU (10 ms per sample, no fixed part). */
static struct rk_model model(void)
{
	struct rk_model m = {.layers = 4, .hidden = 1024, .heads = 8, .seq_len = 512,
			     .params = 100 * MI, .global_batch = 8, .fwd_ms = 80};
	snprintf(m.name, sizeof(m.name), "%s", "toy");
	return m;
}

static struct rk_perf_params params(void)
{
	return (struct rk_perf_params){.k_bwd = 2, .k_sync = 1, .k_opt = 0.1, .k_os_offload = 2,
				       .k_const = 5, .k_off = 1, .k_swap = 1};
}

static struct rk_perf_env env(void)
{
	struct rk_perf_env e;
	rk_perf_env_a800(&e);
	e.nvlink_gbps = 100, e.net_gbps = 10, e.pcie_gbps = 10, e.host_mem_gbps = 40;
	e.nics_per_node = 4, e.gpus_per_node = 8, e.grad_bytes = 2, e.act_bytes = 2;
	e.tp_eff = 0.8, e.recompute_factor = 1.0, e.overlap = RK_OVERLAP_PNORM;
	return e;
}

static struct rk_placement place(const char *digits)
{
	struct rk_placement p = {0};
	for (; *digits; digits++)
		p.gpus[p.n_nodes++] = *digits - '0';
	return p;
}

static double predict(const struct rk_plan *plan, const char *pl, struct rk_perf_params k,
		      struct rk_perf_env e, int cpus)
{
	struct rk_model m = model();
	struct rk_placement p = place(pl);
	double t = -1;
	assert_int_equal(rk_perf_predict(&m, &k, &e, plan, &p, cpus, &t), 0);
	return t;
}

static void test_dp_single_node(void **state)
{
	(void)state;
	/* t_f 40, bwd 80, V = 2*(1/2)*2 B*100 Mi = 200 MB over 100 GB/s = 2 ms,
	 * additive sync 82, opt 0.1*100 = 10, const 5: 137 ms. */
	struct rk_plan plan = {.dp = 2, .tp = 1, .pp = 1, .mb = 4, .ga = 1};
	assert_float_equal(predict(&plan, "2", params(), env(), 1), 137.0, 1e-9);
	/* p-norm k = 2: sync sqrt(2^2 + 80^2) */
	struct rk_perf_params k = params();
	k.k_sync = 2;
	assert_float_equal(predict(&plan, "2", k, env(), 1), 40 + sqrt(4.0 + 6400.0) + 15,
			   1e-9);
}

static void test_gc_zero_ga(void **state)
{
	(void)state;
	struct rk_plan gc = {.dp = 2, .tp = 1, .pp = 1, .mb = 4, .ga = 1, .gc = 1};
	assert_float_equal(predict(&gc, "2", params(), env(), 1), 137.0 + 40.0, 1e-9);
	/* ZeRO: opt = k_opt P/d + all-gather (half the 2 ms ring) = 5 + 1 */
	struct rk_plan z = {.dp = 2, .tp = 1, .pp = 1, .mb = 4, .ga = 1, .zero = 2};
	assert_float_equal(predict(&z, "2", params(), env(), 1), 40 + 82 + 6 + 5, 1e-9);
	/* GA with k_sync 2: only the last micro-step's backward (40) overlaps */
	struct rk_perf_params k = params();
	k.k_sync = 2;
	struct rk_plan ga = {.dp = 2, .tp = 1, .pp = 1, .mb = 2, .ga = 2};
	assert_float_equal(predict(&ga, "2", k, env(), 1), 40 + 40 + sqrt(4.0 + 1600.0) + 15,
			   1e-9);
}

static void test_offload(void **state)
{
	(void)state;
	/* t_off = 4*(100/2)/10 = 20; opt = 2*100/(2*4) + 16*100/40 = 65;
	 * sync 82 (+) 20 = 102; opt 65 (+) 20 = 85; iter 40+102+85+5 */
	struct rk_plan plan = {.dp = 2, .tp = 1, .pp = 1, .mb = 4, .ga = 1, .zero = 2,
			       .offload = 1};
	assert_float_equal(predict(&plan, "2", params(), env(), 4), 232.0, 1e-9);
	/* more CPU threads per GPU: faster optimizer */
	assert_true(predict(&plan, "2", params(), env(), 8) < 232.0);
	/* additive overlap form: a + k + b */
	struct rk_perf_env e = env();
	e.overlap = RK_OVERLAP_ADDITIVE;
	assert_float_equal(predict(&plan, "2", params(), e, 4), 40 + 103 + 86 + 5, 1e-9);
}

static void test_multi_node_nics(void **state)
{
	(void)state;
	struct rk_plan plan = {.dp = 2, .tp = 1, .pp = 1, .mb = 4, .ga = 1};
	/* one GPU per node: 200 MB over one 10 GB/s NIC = 20 ms */
	assert_float_equal(predict(&plan, "11", params(), env(), 1), 40 + 100 + 15, 1e-9);
	struct rk_plan p8 = {.dp = 8, .tp = 1, .pp = 1, .mb = 1, .ga = 1};
	/* V = 2*7/8*200 = 350 MB: 4 GPUs reach 2 NICs (17.5 ms), 2 GPUs one (35 ms) */
	double t44 = predict(&p8, "44", params(), env(), 1);
	double t2222 = predict(&p8, "2222", params(), env(), 1);
	assert_float_equal(t44, 10 + 20 + 17.5 + 10 + 5, 1e-9);
	assert_float_equal(t2222, 10 + 20 + 35 + 10 + 5, 1e-9);
	/* the busiest node with the fewest NICs sets the pace */
	assert_float_equal(predict(&p8, "224", params(), env(), 1), t2222, 1e-9);
	/* one node: NVLink, 3.5 ms */
	assert_float_equal(predict(&p8, "8", params(), env(), 1), 10 + 23.5 + 15, 1e-9);
}

static void test_3d(void **state)
{
	(void)state;
	/* tp 2 on one node, mb 8: eff 2*0.8 = 1.6, f_mb = 10*8/1.6 = 50;
	 * TP: 4 all-reduces x 4 layers x 8 MB x 2(1/2) / 100 = 1.28 ms;
	 * opt 0.1*100/2 = 5. iter = 50 + (100 + 1.28) + 5 + 5. */
	struct rk_plan plan = {.dp = 1, .tp = 2, .pp = 1, .mb = 8, .ga = 1};
	assert_float_equal(predict(&plan, "2", params(), env(), 1), 161.28, 1e-9);
	struct rk_model m = model();
	struct rk_perf_params k = params();
	struct rk_perf_env e = env();
	struct rk_placement p = place("2");
	struct rk_perf_breakdown b;
	assert_int_equal(rk_perf_predict_detail(&m, &k, &e, &plan, &p, 1, &b), 0);
	assert_float_equal(b.fwd_ms, 50, 1e-9);
	assert_float_equal(b.comm_ms, 1.28, 1e-9);
	assert_float_equal(b.opt_ms, 5, 1e-9);
	/* a pipeline of one micro-batch is no faster than one stage doing it all */
	struct rk_plan pp2 = {.dp = 1, .tp = 1, .pp = 2, .mb = 8, .ga = 1};
	struct rk_plan pp2m = {.dp = 1, .tp = 1, .pp = 2, .mb = 1, .ga = 8};
	double t1 = predict(&pp2, "2", params(), env(), 1);
	double t8 = predict(&pp2m, "2", params(), env(), 1);
	assert_true(t8 < t1); /* 8 micro-batches fill the pipeline: bubble 1/8 */
	/* stages across nodes pay the network for activations */
	assert_true(predict(&pp2, "11", params(), env(), 1) > t1);
	/* DP over nodes for a 3D plan: rings cross the NICs */
	struct rk_plan dp3 = {.dp = 2, .tp = 2, .pp = 1, .mb = 4, .ga = 1};
	assert_true(predict(&dp3, "22", params(), env(), 1) > predict(&dp3, "4", params(), env(), 1));
}

static void test_structure_forward(void **state)
{
	(void)state;
	/* no measured forward: FLOPs from the structure at gpu_tflops */
	struct rk_model m = model();
	m.fwd_ms = 0;
	struct rk_perf_params k = params();
	struct rk_perf_env e = env();
	struct rk_placement p = place("1");
	struct rk_plan plan = {.dp = 1, .tp = 1, .pp = 1, .mb = 8, .ga = 1};
	double t, t2;
	assert_int_equal(rk_perf_predict(&m, &k, &e, &plan, &p, 1, &t), 0);
	e.gpu_tflops *= 2;
	assert_int_equal(rk_perf_predict(&m, &k, &e, &plan, &p, 1, &t2), 0);
	assert_true(t2 < t);
}

static void test_errors(void **state)
{
	(void)state;
	struct rk_model m = model();
	struct rk_perf_params k = params();
	struct rk_perf_env e = env();
	struct rk_placement p = place("2");
	struct rk_plan plan = {.dp = 2, .tp = 1, .pp = 1, .mb = 4, .ga = 1};
	double t;
	struct rk_plan bad = plan;
	bad.dp = 4; /* 4 GPUs of work on a 2-GPU placement */
	assert_int_equal(rk_perf_predict(&m, &k, &e, &bad, &p, 1, &t), RK_EINVAL);
	bad = plan;
	bad.mb = 0;
	assert_int_equal(rk_perf_predict(&m, &k, &e, &bad, &p, 1, &t), RK_EINVAL);
	assert_int_equal(rk_perf_predict(&m, &k, &e, &plan, &p, 0, &t), RK_EINVAL);
	assert_int_equal(rk_perf_predict(NULL, &k, &e, &plan, &p, 1, &t), RK_EINVAL);
	struct rk_placement empty = {0};
	assert_int_equal(rk_perf_predict(&m, &k, &e, &plan, &empty, 1, &t), RK_EINVAL);
	struct rk_perf_params kb = k;
	kb.k_bwd = -1;
	assert_int_equal(rk_perf_predict(&m, &kb, &e, &plan, &p, 1, &t), RK_ERANGE);
	kb = k;
	kb.k_sync = 0.5;
	assert_int_equal(rk_perf_predict(&m, &kb, &e, &plan, &p, 1, &t), RK_ERANGE);
	kb = k;
	kb.k_off = NAN;
	assert_int_equal(rk_perf_predict(&m, &kb, &e, &plan, &p, 1, &t), RK_ERANGE);
	struct rk_model mb = m;
	mb.params = 0;
	assert_int_equal(rk_perf_predict(&mb, &k, &e, &plan, &p, 1, &t), RK_EINVAL);
	mb = m;
	mb.fwd_ms = -1;
	assert_int_equal(rk_perf_predict(&mb, &k, &e, &plan, &p, 1, &t), RK_EINVAL);
	mb = m;
	mb.global_batch = 0; /* a forward time of no batch */
	assert_int_equal(rk_perf_predict(&mb, &k, &e, &plan, &p, 1, &t), RK_EINVAL);

	struct rk_error err;
	struct rk_perf_env ee = e;
	assert_int_equal(rk_perf_env_check(&ee, &err), 0);
	const char *fields[] = {"nvlink_gbps", "pcie_gbps", "host_mem_gbps", "net_gbps",
				"nics_per_node", "gpus_per_node", "gpu_tflops",
				"recompute_factor", "tp_eff", "grad_bytes", "act_bytes", "overlap"};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		ee = e;
		switch (i) {
		case 0: ee.nvlink_gbps = 0; break;
		case 1: ee.pcie_gbps = -1; break;
		case 2: ee.host_mem_gbps = INFINITY; break;
		case 3: ee.net_gbps = 0; break;
		case 4: ee.nics_per_node = 0; break;
		case 5: ee.gpus_per_node = 0; break;
		case 6: ee.gpu_tflops = 0; break;
		case 7: ee.recompute_factor = -1; break;
		case 8: ee.tp_eff = 1.5; break;
		case 9: ee.grad_bytes = 0; break;
		case 10: ee.act_bytes = 32; break;
		default: ee.overlap = (enum rk_overlap_form)7; break;
		}
		assert_true(rk_perf_env_check(&ee, &err) < 0);
		assert_non_null(strstr(err.msg, fields[i]));
	}
}

static void test_params_array(void **state)
{
	(void)state;
	struct rk_perf_params k = params(), k2 = {0};
	double x[7];
	rk_perf_params_to_array(&k, x);
	rk_perf_params_from_array(x, &k2);
	assert_memory_equal(&k, &k2, sizeof(k));
	double lo[7], hi[7];
	rk_perf_params_bounds(RK_OVERLAP_PNORM, lo, hi);
	assert_float_equal(lo[1], 1.0, 0); /* k_sync >= 1 (§1.5) */
	assert_float_equal(lo[5], 1.0, 0);
	rk_perf_params_bounds(RK_OVERLAP_ADDITIVE, lo, hi);
	assert_true(lo[5] < 1e-3 && lo[6] < 1e-3);
	for (int i = 0; i < 7; i++)
		assert_true(lo[i] > 0 && hi[i] > lo[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dp_single_node), cmocka_unit_test(test_gc_zero_ga),
		cmocka_unit_test(test_offload),        cmocka_unit_test(test_multi_node_nics),
		cmocka_unit_test(test_3d),             cmocka_unit_test(test_structure_forward),
		cmocka_unit_test(test_errors),         cmocka_unit_test(test_params_array),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
