/* Performance model (perf.c): formulas on hand-checked points, placement
 * effects, and every documented error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rubick/fit.h"
#include "rubick/perf.h"
#include "rubick/zoo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

/*
 * Reference: rk_perf_predict's arithmetic as it was before the O(GPUs) rank
 * walks of the all-reduce and pipeline terms became node-run walks and eff_tp
 * skipped log2 (perf.c at 579c4f2, comments dropped). The faster code must
 * give the same bits on every plan and placement (test_same_as_reference).
 */

static double ref_ov_pnorm(double a, double b, double k)
{
	double hi = a > b ? a : b, lo = a > b ? b : a;
	if (lo <= 0)
		return hi > 0 ? hi : 0;
	return hi * pow(1.0 + pow(lo / hi, k), 1.0 / k);
}

static double ref_ov_param(const struct rk_perf_env *env, double a, double b, double k)
{
	if (b <= 0)
		return a;
	if (env->overlap == RK_OVERLAP_ADDITIVE)
		return a + k + b;
	return ref_ov_pnorm(a, b, k);
}

static int ref_usable_nics(const struct rk_perf_env *env, int g)
{
	int n = (g * env->nics_per_node + env->gpus_per_node - 1) / env->gpus_per_node;
	if (n < 1)
		n = 1;
	if (n > env->nics_per_node)
		n = env->nics_per_node;
	return n;
}

static double ref_allreduce_ms(const struct rk_perf_env *env, const struct rk_placement *pl,
			   int dp, int tp, int pp, double shard_mb)
{
	if (dp <= 1)
		return 0;
	double ring_mb = 2.0 * (dp - 1) / dp * shard_mb;
	if (pl->n_nodes <= 1)
		return ring_mb / env->nvlink_gbps;
	int node_of_start[RK_PLACEMENT_MAX_NODES + 1];
	int acc = 0;
	for (int i = 0; i < pl->n_nodes; i++) {
		node_of_start[i] = acc;
		acc += pl->gpus[i];
	}
	node_of_start[pl->n_nodes] = acc;
	int crossing[RK_PLACEMENT_MAX_NODES] = {0};
	int any_cross = 0;
	for (int s = 0; s < pp; s++) {
		for (int t = 0; t < tp; t++) {
			int first = -1, multi = 0;
			unsigned char seen[RK_PLACEMENT_MAX_NODES] = {0};
			int node = 0;
			for (int j = 0; j < dp; j++) {
				int r = s * dp * tp + j * tp + t;
				while (node < pl->n_nodes - 1 && r >= node_of_start[node + 1])
					node++;
				seen[node] = 1;
				if (first < 0)
					first = node;
				else if (node != first)
					multi = 1;
			}
			if (!multi)
				continue;
			any_cross = 1;
			for (int i = 0; i < pl->n_nodes; i++)
				crossing[i] += seen[i];
		}
	}
	if (!any_cross)
		return ring_mb / env->nvlink_gbps;
	double worst = 0;
	for (int i = 0; i < pl->n_nodes; i++) {
		if (!crossing[i])
			continue;
		double t = crossing[i] * ring_mb / (ref_usable_nics(env, pl->gpus[i]) * env->net_gbps);
		if (t > worst)
			worst = t;
	}
	return worst;
}

static double ref_fwd_rate_ms(const struct rk_model *m, const struct rk_perf_params *k,
			  const struct rk_perf_env *env)
{
	if (m->fwd_ms > 0 && m->global_batch > 0) {
		double var = m->fwd_ms - k->fwd_fixed_ms;
		return (var > 0 ? var : m->fwd_ms) / m->global_batch;
	}
	return rk_perf_fwd_flops(m) / (env->gpu_tflops * 1e12) * 1e3;
}

static void ref_predict_dp(const struct rk_model *m, const struct rk_perf_params *k,
		       const struct rk_perf_env *env, const struct rk_plan *plan,
		       const struct rk_placement *pl, int cpus_per_gpu,
		       struct rk_perf_breakdown *o)
{
	int d = plan->dp;
	double P = m->params / MI;
	double b = (double)plan->mb * plan->ga;
	double t_f = k->fwd_fixed_ms + ref_fwd_rate_ms(m, k, env) * b;
	double t_re = plan->gc ? env->recompute_factor * t_f : 0;
	double t_bwd = k->k_bwd * t_f;

	double t_comm = ref_allreduce_ms(env, pl, d, 1, 1, env->grad_bytes * P);

	double last = t_bwd / plan->ga;
	double t_sync = (t_bwd - last) + ref_ov_pnorm(t_comm, last, k->k_sync);
	double t_off = 0, t_opt;
	if (plan->offload) {
		t_off = 4.0 * (P / d) / env->pcie_gbps;

		t_opt = k->k_os_offload * P / ((double)d * cpus_per_gpu) +
			16.0 * P / env->host_mem_gbps;
	} else if (plan->zero >= 1) {
		t_opt = k->k_opt * P / d + 0.5 * t_comm;
	} else {
		t_opt = k->k_opt * P;
	}
	double t_so = ref_ov_param(env, t_sync, t_off, k->k_off);
	double t_sw = ref_ov_param(env, t_opt, t_off, k->k_swap);
	o->fwd_ms = t_f;
	o->sync_ms = t_re + t_so;
	o->opt_ms = t_sw;
	o->comm_ms = 0;
	o->iter_ms = o->fwd_ms + o->sync_ms + o->opt_ms + k->k_const;
}

static int ref_node_of(const struct rk_placement *pl, int r)
{
	for (int i = 0; i < pl->n_nodes; i++) {
		if (r < pl->gpus[i])
			return i;
		r -= pl->gpus[i];
	}
	return pl->n_nodes - 1;
}

static double ref_p2p_ms(const struct rk_perf_env *env, const struct rk_placement *pl, int dp,
		     int tp, int pp, double act_mb)
{
	double msg = act_mb / tp, worst = 0;
	int per_stage = dp * tp;
	for (int s = 0; s + 1 < pp; s++) {
		int cross[RK_PLACEMENT_MAX_NODES] = {0};
		int any = 0;
		for (int j = 0; j < per_stage; j++) {
			int a = ref_node_of(pl, s * per_stage + j);
			int b = ref_node_of(pl, (s + 1) * per_stage + j);
			if (a != b)
				cross[a]++, any = 1;
		}
		double t = msg / env->nvlink_gbps;
		for (int i = 0; any && i < pl->n_nodes; i++) {
			double ti = cross[i] * msg / (ref_usable_nics(env, pl->gpus[i]) * env->net_gbps);
			if (ti > t)
				t = ti;
		}
		if (t > worst)
			worst = t;
	}
	return 2.0 * worst;
}

static void ref_predict_3d(const struct rk_model *m, const struct rk_perf_params *k,
		       const struct rk_perf_env *env, const struct rk_plan *plan,
		       const struct rk_placement *pl, struct rk_perf_breakdown *o)
{
	int tp = plan->tp, pp = plan->pp, dp = plan->dp, nmb = plan->ga;
	double P = m->params / MI;
	double eff_tp = tp * pow(env->tp_eff, log2((double)tp));
	double f_mb = k->fwd_fixed_ms / pp + ref_fwd_rate_ms(m, k, env) * plan->mb / (pp * eff_tp);
	double re = plan->gc ? env->recompute_factor : 0;
	double act_mb = (double)plan->mb * m->seq_len * m->hidden * env->act_bytes / MI;
	double tp_mb = 0;
	if (tp > 1)
		tp_mb = (4.0 + 2.0 * plan->gc) * ((double)m->layers / pp) * act_mb * 2.0 *
			(tp - 1) / tp / env->nvlink_gbps;
	double pp_mb = pp > 1 ? ref_p2p_ms(env, pl, dp, tp, pp, act_mb) : 0;
	double slots = nmb + pp - 1;
	double t_dp = ref_allreduce_ms(env, pl, dp, tp, pp, env->grad_bytes * P / ((double)tp * pp));
	double last_bwd = f_mb * k->k_bwd;
	double t_sync = ref_ov_pnorm(t_dp, last_bwd, k->k_sync) - last_bwd;
	double t_opt = k->k_opt * P / ((double)tp * pp);
	o->fwd_ms = slots * f_mb * (1.0 + re);
	o->comm_ms = slots * (tp_mb + pp_mb) + t_sync;
	o->sync_ms = slots * (f_mb * k->k_bwd + tp_mb + pp_mb) + t_sync;
	o->opt_ms = t_opt;
	o->iter_ms = o->fwd_ms + o->sync_ms + o->opt_ms + k->k_const;
}

static void ref_predict(const struct rk_model *m, const struct rk_perf_params *k,
			const struct rk_perf_env *env, const struct rk_plan *plan,
			const struct rk_placement *pl, int cpus, struct rk_perf_breakdown *o)
{
	if (plan->tp > 1 || plan->pp > 1)
		ref_predict_3d(m, k, env, plan, pl, o);
	else
		ref_predict_dp(m, k, env, plan, pl, cpus, o);
}

/* Every field of the breakdown equal to the reference's, bit for bit; returns
 * 1 when the plan was predicted (0 when both refuse it). */
static int same_as_reference(const struct rk_model *m, const struct rk_perf_params *k,
			     const struct rk_perf_env *e, const struct rk_plan *plan,
			     const struct rk_placement *pl, int cpus)
{
	struct rk_perf_breakdown got, want;
	int rc = rk_perf_predict_detail(m, k, e, plan, pl, cpus, &got);
	if (rc == RK_EINVAL)
		return 0; /* input checks: unchanged code, covered by test_errors */
	ref_predict(m, k, e, plan, pl, cpus, &want);
	if (rc == RK_ERANGE) {
		assert_false(isfinite(want.iter_ms) && want.iter_ms > 0);
		return 0;
	}
	assert_int_equal(rc, 0);
	const double g[5] = {got.fwd_ms, got.sync_ms, got.opt_ms, got.comm_ms, got.iter_ms};
	const double w[5] = {want.fwd_ms, want.sync_ms, want.opt_ms, want.comm_ms, want.iter_ms};
	if (memcmp(g, w, sizeof(g))) {
		fprintf(stderr, "dp%d tp%d pp%d mb%d ga%d gc%d zero%d off%d on %d nodes:"
				" iter %.17g, reference %.17g\n",
			plan->dp, plan->tp, plan->pp, plan->mb, plan->ga, plan->gc, plan->zero,
			plan->offload, pl->n_nodes, got.iter_ms, want.iter_ms);
		fail();
	}
	return 1;
}

/* data/zoo/NAME.model, parsed; the parameters `rubick plan` uses (fitted, or
 * the documented defaults). */
static int zoo_model(const char *name, struct rk_model *m, struct rk_perf_params *k)
{
	const char *dir = getenv("RK_DATA_DIR");
	char path[512];
	snprintf(path, sizeof(path), "%s/zoo/%s.model", dir ? dir : "data", name);
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	static char text[16384];
	size_t len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = 0;
	struct rk_error err;
	if (rk_model_parse(text, len, path, m, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	if (m->perf_fitted)
		*k = m->perf;
	else
		rk_perf_params_default(RK_OVERLAP_PNORM, k);
	return 0;
}

/* Every plan `rubick plan --model M --placement P` predicts (its default
 * memory limits and 8 CPU threads per GPU), on the zoo's models. */
static void test_same_as_reference_zoo(void **state)
{
	(void)state;
	const char *models[] = {"llama7", "llama30", "bert", "gpt2", "t5", "t5_3b", "vit", "roberta"};
	const char *pls[] = {"8888", "8", "44", "88", "8421", "3333", "2", "1111", "884", "12"};
	struct rk_perf_env e;
	rk_perf_env_a800(&e);
	size_t total = 0, total_3d = 0;
	for (size_t mi = 0; mi < sizeof(models) / sizeof(models[0]); mi++) {
		struct rk_model m;
		struct rk_perf_params k;
		assert_int_equal(zoo_model(models[mi], &m, &k), 0);
		for (size_t pi = 0; pi < sizeof(pls) / sizeof(pls[0]); pi++) {
			struct rk_placement pl = place(pls[pi]);
			static struct rk_plan plans[8192];
			size_t n = 0;
			struct rk_error err;
			assert_int_equal(rk_plan_enumerate(&m, m.global_batch, &pl, 81920,
							   1600L * 1024, plans, 8192, &n, &err),
					 0);
			assert_true(n <= 8192);
			for (size_t i = 0; i < n; i++) {
				size_t ok = (size_t)same_as_reference(&m, &k, &e, &plans[i], &pl, 8);
				total += ok;
				total_3d += ok && (plans[i].tp > 1 || plans[i].pp > 1);
			}
		}
	}
	/* llama7 and llama30 on 8888 alone have hundreds of 3D plans */
	assert_true(total_3d > 500 && total > total_3d);
}

/* Deterministic pseudo-random stream (64-bit LCG, Knuth MMIX constants). */
static unsigned next_u(unsigned long long *s, unsigned n)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((*s >> 33) % n);
}

/* Irregular placements (nodes narrower than tp, a node skipped by a ring's
 * stride, 1..10 nodes), every dp x tp x pp factorisation of their GPUs and
 * DP variants, under several NIC layouts and both overlap forms. */
static void test_same_as_reference_random(void **state)
{
	(void)state;
	struct rk_model m = model();
	struct rk_perf_params k = params();
	k.k_sync = 1.7, k.k_off = 1.3, k.k_swap = 2.2, k.fwd_fixed_ms = 3;
	unsigned long long seed = 42;
	static const int nic_layout[][2] = {{4, 8}, {1, 8}, {8, 8}, {3, 8}, {2, 4}, {4, 16}};
	size_t checked = 0;
	for (int round = 0; round < 600; round++) {
		struct rk_placement pl = {0};
		pl.n_nodes = 1 + (int)next_u(&seed, 10);
		int wide = next_u(&seed, 3) == 0 ? 16 : 9;
		int g = 0;
		for (int i = 0; i < pl.n_nodes; i++)
			g += pl.gpus[i] = 1 + (int)next_u(&seed, (unsigned)wide);
		struct rk_perf_env e = env();
		e.nics_per_node = nic_layout[round % 6][0];
		e.gpus_per_node = nic_layout[round % 6][1];
		e.tp_eff = round % 2 ? 0.85 : 0.8;
		e.overlap = round % 5 == 4 ? RK_OVERLAP_ADDITIVE : RK_OVERLAP_PNORM;
		for (int tp = 1; tp <= g; tp++) {
			for (int pp = 1; tp * pp <= g; pp++) {
				if (g % (tp * pp))
					continue;
				struct rk_plan p = {.dp = g / (tp * pp), .tp = tp, .pp = pp,
						    .mb = 1 + (int)next_u(&seed, 4),
						    .ga = 1 + (int)next_u(&seed, 4),
						    .gc = (int)next_u(&seed, 2)};
				if (tp == 1 && pp == 1) {
					p.zero = (int)next_u(&seed, 4);
					p.offload = p.zero >= 2 && next_u(&seed, 2);
				}
				int cpus = 1 + (int)next_u(&seed, 8);
				checked += (size_t)same_as_reference(&m, &k, &e, &p, &pl, cpus);
			}
		}
	}
	assert_true(checked > 5000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dp_single_node), cmocka_unit_test(test_gc_zero_ga),
		cmocka_unit_test(test_offload),        cmocka_unit_test(test_multi_node_nics),
		cmocka_unit_test(test_3d),             cmocka_unit_test(test_structure_forward),
		cmocka_unit_test(test_errors),         cmocka_unit_test(test_params_array),
		cmocka_unit_test(test_same_as_reference_zoo),
		cmocka_unit_test(test_same_as_reference_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
