/*
 * Co-location models (sharing.h) on hand-checked cases: the §3.3 pairwise
 * test (each expected value worked out by hand in the comment, and checked
 * against a direct replay of the two jobs), the benefit ordering, the
 * sub-batch choice under the memory model, the interference fallback chain
 * and a two-server ring-all-reduce contention example (§4.2).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rubick/memory.h"
#include "rubick/perf.h"
#include "rubick/sharing.h"

/*
 * Half the JCT sum of a and b when both share from t = 0, by replaying the
 * two phases directly (independent of the closed form under test).
 */
static double replay_share(double ea, double eb, double xa, double xb)
{
	double ta = xa * ea, tb = xb * eb; /* shared end times if both kept sharing */
	if (ta <= tb) {
		double b_left = eb - ta / xb; /* exclusive work of b left when a ends */
		return 0.5 * (ta + ta + b_left);
	}
	double a_left = ea - tb / xa;
	return 0.5 * (tb + tb + a_left);
}

static void test_pair_hand_cases(void **st)
{
	(void)st;
	struct rk_pair_outcome o;
	struct rk_error err;
	/* E_a=10, E_b=20, xi 1.2/1.2: a ends at 12, b did 10 of 20, ends at 22: (12+22)/2 = 17. */
	assert_int_equal(rk_pair_evaluate(10, 20, 1.2, 1.2, &o, &err), 0);
	assert_true(fabs(o.t_con_s - 17.0) < 1e-9);
	assert_true(fabs(o.t_seq_s - 25.0) < 1e-9); /* b at 20, a at 30 */
	assert_true(fabs(o.benefit_s - 8.0) < 1e-9);
	assert_int_equal(o.share, 1);
	/* Plain time slicing (xi = 2) never helps: T_con = 5 + 0.75*20 = 20 > T_seq = 15. */
	assert_int_equal(rk_pair_evaluate(10, 10, 2, 2, &o, &err), 0);
	assert_true(fabs(o.t_con_s - 20.0) < 1e-9);
	assert_true(fabs(o.t_seq_s - 15.0) < 1e-9);
	assert_int_equal(o.share, 0);
	/* Tie: E_a=30, E_b=10, xi 1.5: T_con = 15 + (2/3)*15 = 25 = T_seq: strict test, no share. */
	assert_int_equal(rk_pair_evaluate(30, 10, 1.5, 1.5, &o, &err), 0);
	assert_true(fabs(o.t_con_s - 25.0) < 1e-9);
	assert_true(fabs(o.t_seq_s - 25.0) < 1e-9);
	assert_int_equal(o.share, 0);
	/* No interference: sharing is free, T_con = half the sum of exclusive times. */
	assert_int_equal(rk_pair_evaluate(4, 6, 1, 1, &o, &err), 0);
	assert_true(fabs(o.t_con_s - 5.0) < 1e-9);
	assert_int_equal(o.share, 1);
}

static void test_pair_matches_replay(void **st)
{
	(void)st;
	const double es[] = {0.5, 3, 10, 77, 400};
	const double xs[] = {1, 1.1, 1.47, 2, 3.5};
	for (int i = 0; i < 5; i++)
		for (int j = 0; j < 5; j++)
			for (int k = 0; k < 5; k++)
				for (int l = 0; l < 5; l++) {
					struct rk_pair_outcome o;
					assert_int_equal(rk_pair_evaluate(es[i], es[j], xs[k], xs[l], &o,
									  NULL), 0);
					double r = replay_share(es[i], es[j], xs[k], xs[l]);
					assert_true(fabs(o.t_con_s - r) < 1e-9 * (1 + r));
				}
}

static void test_pair_bad_inputs(void **st)
{
	(void)st;
	struct rk_pair_outcome o;
	struct rk_error err;
	assert_int_equal(rk_pair_evaluate(-1, 2, 1, 1, &o, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "E_a"));
	assert_int_equal(rk_pair_evaluate(1, NAN, 1, 1, &o, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "E_b"));
	assert_int_equal(rk_pair_evaluate(1, 2, 0.9, 1, &o, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "xi_a"));
}

/*
 * New job a (E_a = 20) against b1 (E = 100) and b2 (E = 10), xi 1.3 everywhere.
 * b1: 26 < 130, T_con = 50 + (1 - 1/2.6)*26 = 66, T_seq = 110, benefit 44.
 * b2: 26 >= 13, T_con = 10 + (1 - 1/2.6)*13 = 18, T_seq = 20, benefit 2.
 * Best benefit first takes b1; the code's T_con-ascending order would take b2.
 */
static void test_benefit_ordering(void **st)
{
	(void)st;
	struct rk_pair_outcome o1, o2;
	assert_int_equal(rk_pair_evaluate(20, 100, 1.3, 1.3, &o1, NULL), 0);
	assert_int_equal(rk_pair_evaluate(20, 10, 1.3, 1.3, &o2, NULL), 0);
	assert_true(fabs(o1.t_con_s - 66) < 1e-9 && fabs(o1.benefit_s - 44) < 1e-9);
	assert_true(fabs(o2.t_con_s - 18) < 1e-9 && fabs(o2.benefit_s - 2) < 1e-9);
	assert_true(o1.benefit_s > o2.benefit_s);
	assert_true(o1.t_con_s > o2.t_con_s);
}

static struct rk_model gpt2(void)
{
	struct rk_model m = {.name = "gpt2", .layers = 12, .hidden = 768, .heads = 12,
			     .seq_len = 1024, .vocab = 50257, .params = 124e6, .global_batch = 16};
	return m;
}

static void test_subbatch_memory(void **st)
{
	(void)st;
	struct rk_model m = gpt2();
	struct rk_plan base = {.dp = 1, .tp = 1, .pp = 1, .mb = 16, .ga = 1};
	struct rk_subbatch opt[16];
	struct rk_error err;
	/* Unlimited memory: every divisor of 16 (1, 2, 4, 8, 16), ascending ga. */
	int n = rk_subbatch_options(&m, 16, &base, 0, INT64_MAX / 4, NULL, opt, 16, &err);
	assert_int_equal(n, 5);
	for (int i = 0; i < n; i++) {
		assert_int_equal(opt[i].plan.mb * opt[i].plan.ga * opt[i].plan.dp, 16);
		assert_true(opt[i].slow == 1.0);
		if (i > 0) {
			assert_true(opt[i].plan.ga > opt[i - 1].plan.ga);
			assert_true(opt[i].mem_mb < opt[i - 1].mem_mb); /* fewer activations */
		}
	}
	/* A GPU between the ga=2 and ga=1 needs (with a 3000 MiB partner): ga=1 is out. */
	double partner = 3000;
	int64_t gpu = (int64_t)((opt[0].mem_mb + opt[1].mem_mb) / 2 + partner);
	struct rk_subbatch o2[16];
	n = rk_subbatch_options(&m, 16, &base, partner, gpu, NULL, o2, 16, &err);
	assert_int_equal(n, 4);
	assert_int_equal(o2[0].plan.ga, 2);
	assert_int_equal(o2[0].plan.mb, 8);
	/* Too small for even the smallest sub-batch: none. */
	n = rk_subbatch_options(&m, 16, &base, partner, (int64_t)opt[4].mem_mb, NULL, o2, 16, &err);
	assert_int_equal(n, 0);
	/*
	 * With the performance model: same samples per iteration, so the forward
	 * and backward work is the same; only the overlap of the last
	 * micro-batch's backward with the all-reduce shrinks as ga grows, so the
	 * ratio never drops below 1 and never falls as ga grows.
	 */
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	m.perf = (struct rk_perf_params){.k_bwd = 2, .k_sync = 1, .k_opt = 0.01, .k_const = 5,
					 .fwd_fixed_ms = 2};
	m.fwd_ms = 100;
	n = rk_subbatch_options(&m, 16, &base, 0, INT64_MAX / 4, &env, opt, 16, &err);
	assert_int_equal(n, 5);
	assert_true(fabs(opt[0].slow - 1.0) < 1e-12);
	for (int i = 1; i < n; i++)
		assert_true(opt[i].slow >= opt[i - 1].slow - 1e-12);
	/* A plan that does not match the batch is named. */
	assert_true(rk_subbatch_options(&m, 32, &base, 0, 1 << 20, NULL, opt, 16, &err) < 0);
	assert_non_null(strstr(err.msg, "global batch 32"));
}

static void add(struct rk_xi_table *t, const char *gpu, const char *a, int sfa, const char *b,
		int sfb, double xi)
{
	struct rk_xi_entry e = {.sf_a = sfa, .sf_b = sfb, .xi_a = xi};
	snprintf(e.gpu_type, sizeof(e.gpu_type), "%s", gpu);
	snprintf(e.a, sizeof(e.a), "%s", a);
	snprintf(e.b, sizeof(e.b), "%s", b);
	assert_int_equal(rk_xi_table_add(t, &e, NULL), 0);
}

static void test_xi_fallback_chain(void **st)
{
	(void)st;
	struct rk_xi_table t;
	rk_xi_table_init(&t);
	enum rk_xi_how how;
	assert_true(rk_xi_lookup(&t, "v100", "x", 1, "y", 1, &how) == RK_XI_NO_DATA);
	assert_int_equal(how, RK_XI_DEFAULT);
	add(&t, "v100", "ResNet-18 (batch size 32)", 1, "LM (batch size 10)", 1, 1.2);
	add(&t, "v100", "ResNet-18 (batch size 64)", 1, "LM (batch size 10)", 1, 1.6);
	add(&t, "v100", "LM (batch size 10)", 1, "ResNet-18 (batch size 32)", 1, 1.1);
	add(&t, "k80", "ResNet-18 (batch size 64)", 1, "A3C", 1, 3.0);
	assert_int_equal(rk_xi_table_finish(&t), 0);
	/* Exact. */
	assert_true(rk_xi_lookup(&t, "v100", "ResNet-18 (batch size 64)", 1, "LM (batch size 10)",
				 1, &how) == 1.6);
	assert_int_equal(how, RK_XI_EXACT);
	/* Other batch size / scale factor: family mean (1.2 + 1.6) / 2 = 1.4 on v100. */
	assert_true(fabs(rk_xi_lookup(&t, "v100", "ResNet-18 (batch size 256)", 2, "LM (batch "
				      "size 80)", 2, &how) - 1.4) < 1e-12);
	assert_int_equal(how, RK_XI_FAMILY);
	/* Muri name "shufflenet" aliases to resnet18, "gpt2" to lm. */
	assert_true(fabs(rk_xi_lookup(&t, "v100", "shufflenet", 1, "gpt2", 1, &how) - 1.4) <
		    1e-12);
	assert_int_equal(how, RK_XI_FAMILY);
	/* Family measured only on k80: any-GPU family mean. */
	assert_true(rk_xi_lookup(&t, "v100", "resnet18", 1, "dqn", 1, &how) == 3.0);
	assert_int_equal(how, RK_XI_FAMILY_ANY);
	/* Unknown family on a known GPU: that GPU's median of 1.1, 1.2, 1.6 = 1.2. */
	assert_true(rk_xi_lookup(&t, "v100", "cyclegan", 1, "lm", 1, &how) == 1.2);
	assert_int_equal(how, RK_XI_GPU_MEDIAN);
	/* Unknown GPU: whole-table median of 1.1, 1.2, 1.6, 3.0 = 1.4. */
	assert_true(fabs(rk_xi_lookup(&t, "a800", "cyclegan", 1, "lm", 1, &how) - 1.4) < 1e-12);
	assert_int_equal(how, RK_XI_MEDIAN);
	struct rk_xi_entry bad = {.gpu_type = "v100", .a = "a", .b = "b", .xi_a = 0.5};
	struct rk_error err;
	assert_int_equal(rk_xi_table_add(&t, &bad, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "xi 0.5"));
	rk_xi_table_fini(&t);
}

/*
 * Interned lookups (rk_xi_pairs) answer exactly what rk_xi_lookup answers,
 * through every fallback, across table growth (many sides and pairs) and a
 * change of table; names too long to keep are refused, not truncated.
 */
static void test_xi_pairs_match_lookup(void **st)
{
	(void)st;
	struct rk_xi_table t, t2;
	rk_xi_table_init(&t);
	rk_xi_table_init(&t2);
	add(&t, "v100", "ResNet-18 (batch size 32)", 1, "LM (batch size 10)", 1, 1.2);
	add(&t, "v100", "ResNet-18 (batch size 64)", 1, "LM (batch size 10)", 1, 1.6);
	add(&t, "v100", "LM (batch size 10)", 1, "ResNet-18 (batch size 32)", 1, 1.1);
	add(&t, "k80", "ResNet-18 (batch size 64)", 1, "A3C", 1, 3.0);
	add(&t2, "v100", "ResNet-18 (batch size 64)", 1, "LM (batch size 10)", 1, 1.9);
	assert_int_equal(rk_xi_table_finish(&t), 0);
	assert_int_equal(rk_xi_table_finish(&t2), 0);
	static const char *const gpus[] = {"v100", "k80", "a800"};
	static const char *const types[] = {"ResNet-18 (batch size 32)", "ResNet-18 (batch size 64)",
					    "LM (batch size 10)", "A3C", "shufflenet", "gpt2",
					    "cyclegan", "resnet18", "dqn"};
	static const int sfs[] = {1, 2, 4, 8};
	struct rk_xi_pairs p;
	rk_xi_pairs_init(&p);
	int id[3][9][4];
	for (int round = 0; round < 2; round++) /* the second round finds the same ids */
		for (int g = 0; g < 3; g++)
			for (int a = 0; a < 9; a++)
				for (int f = 0; f < 4; f++) {
					int k = rk_xi_pairs_side(&p, gpus[g], types[a], sfs[f]);
					assert_true(k >= 0);
					if (round)
						assert_int_equal(k, id[g][a][f]);
					id[g][a][f] = k;
				}
	assert_int_equal(p.n_sides, 3 * 9 * 4);
	for (int pass = 0; pass < 3; pass++) { /* t, t again (cached), then t2 */
		const struct rk_xi_table *tab = pass < 2 ? &t : &t2;
		for (int g = 0; g < 3; g++)
			for (int a = 0; a < 9; a++)
				for (int b = 0; b < 9; b++)
					for (int f = 0; f < 4; f++) {
						double want = rk_xi_lookup(tab, gpus[g], types[a],
									   sfs[f], types[b],
									   sfs[3 - f], NULL);
						double got = rk_xi_pairs_get(&p, tab, id[g][a][f],
									     id[g][b][3 - f]);
						assert_true(got == want);
					}
	}
	char long_name[RK_XI_TYPE_MAX + 1];
	memset(long_name, 'x', RK_XI_TYPE_MAX);
	long_name[RK_XI_TYPE_MAX] = '\0';
	assert_int_equal(rk_xi_pairs_side(&p, "v100", long_name, 1), RK_EINVAL);
	rk_xi_pairs_fini(&p);
	rk_xi_pairs_fini(&p); /* twice is harmless */
	rk_xi_table_fini(&t);
	rk_xi_table_fini(&t2);
}

/*
 * Two servers, 100 Gb/s NICs (12.5 GB/s), NVLink 400 GB/s. Jobs A and B each
 * run 4 workers as 2+2 across servers 0 and 1; job C runs 4 workers on server
 * 1 only. k_0 = k_1 = 2 (A and B cross both NICs), so p_A = p_B = 2, p_C = 0.
 * With Δ = 0.1 s, m = 1 GB: ring volume 2*3/4*1 = 1.5 GB.
 *   A: 0.1 + 1.5*2/12.5 + 1*0.005 = 0.345 s; alone (p = 1): 0.225 s.
 *   C: 0.1 + 1.5/400 = 0.10375 s.
 */
static void test_two_server_contention(void **st)
{
	(void)st;
	struct rk_share sa[2] = {{.node = 0, .gpus = 2}, {.node = 1, .gpus = 2}};
	struct rk_share sb[2] = {{.node = 0, .gpus = 2}, {.node = 1, .gpus = 2}};
	struct rk_share sc[1] = {{.node = 1, .gpus = 4}};
	struct rk_alloc A = {2, sa}, B = {2, sb}, C = {1, sc};
	const struct rk_alloc *all[3] = {&A, &B, &C};
	int p[3];
	assert_int_equal(rk_contention_degrees(all, 3, 2, p, NULL), 0);
	assert_int_equal(p[0], 2);
	assert_int_equal(p[1], 2);
	assert_int_equal(p[2], 0);
	struct rk_rar_job ja = {.compute_s = 0.1, .grad_gb = 1.0, .gpus = 4, .servers = 2};
	struct rk_rar_job jc = {.compute_s = 0.1, .grad_gb = 1.0, .gpus = 4, .servers = 1};
	double t;
	assert_int_equal(rk_rar_iter_s(&ja, p[0], 400, 12.5, 0.005, &t, NULL), 0);
	assert_true(fabs(t - 0.345) < 1e-12);
	assert_int_equal(rk_rar_iter_s(&ja, 1, 400, 12.5, 0.005, &t, NULL), 0);
	assert_true(fabs(t - 0.225) < 1e-12);
	assert_int_equal(rk_rar_iter_s(&jc, p[2], 400, 12.5, 0.005, &t, NULL), 0);
	assert_true(fabs(t - 0.10375) < 1e-12);
	/* B finishes: A alone on the NICs again. */
	const struct rk_alloc *two[2] = {&A, &C};
	assert_int_equal(rk_contention_degrees(two, 2, 2, p, NULL), 0);
	assert_int_equal(p[0], 1);
	struct rk_error err;
	assert_int_equal(rk_rar_iter_s(&ja, 0, 400, 12.5, 0.005, &t, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "contention degree 0"));
	assert_int_equal(rk_contention_degrees(all, 3, 1, p, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "node 1 of 1"));
}

/* One partner, its real time as the wait, no queue weight: exactly §3.3. */
static void test_group_matches_pair(void **st)
{
	(void)st;
	const double es[] = {0, 1, 7, 50, 300}, xs[] = {1, 1.1, 1.7, 2, 3.5};
	for (int i = 0; i < 5; i++)
		for (int j = 0; j < 5; j++)
			for (int k = 0; k < 5; k++)
				for (int l = 0; l < 5; l++) {
					struct rk_pair_outcome o, q;
					struct rk_share_partner p = {.r_s = es[j],
					                             .xi_a = xs[k],
					                             .rel = xs[l],
					                             .gpus = 2,
					                             .shared = 1};
					assert_int_equal(
					    rk_pair_evaluate(es[i], es[j], xs[k], xs[l], &o, NULL),
					    0);
					assert_int_equal(rk_group_evaluate(es[i], 1, 0, &p, 1,
					                                   es[j], 0, &q, NULL),
					                 0);
					assert_true(fabs(o.t_con_s - q.t_con_s) <=
					            1e-9 * (1 + o.t_con_s));
					assert_true(fabs(o.t_seq_s - q.t_seq_s) <=
					            1e-12 * (1 + o.t_seq_s));
					assert_int_equal(o.share, q.share);
				}
	/* The accumulation slowdown multiplies xi_a, as the §3.3 screen does. */
	struct rk_pair_outcome o, q;
	struct rk_share_partner p = {.r_s = 40, .xi_a = 1.3, .rel = 1.4, .gpus = 1, .shared = 1};
	assert_int_equal(rk_pair_evaluate(25, 40, 1.3 * 1.1, 1.4, &o, NULL), 0);
	assert_int_equal(rk_group_evaluate(25, 1.1, 0, &p, 1, 40, 0, &q, NULL), 0);
	assert_true(fabs(o.t_con_s - q.t_con_s) <= 1e-9);
}

/*
 * Two partners by hand. a: E_a = 10 s; P1: 5 s left, slows a 2x, slowed
 * 1.5x; P2: 100 s left, 1.2x / 1.1x; one GPU of each shared, none free; a
 * could start alone at 5 s. Until P1 ends (7.5 s) a runs at the slowest
 * pair's rate (1/2): 3.75 s done; then 6.25 x 1.2 = 7.5 s more: a ends at
 * 15 s; P2, 1.1x slower until then, has 100 - 15/1.1 s left: it ends at
 * 15 + 100 - 15/1.1. Shared sum 7.5 + 15 + that = 123.86, half 61.93;
 * waiting: 5 + 10 + 5 + 100 = 120, half 60: the group does not pay, though
 * the pair test with P2 alone does (T_con = 50 + (1 - 1/2.2) x 12 = 56.5 <
 * T_seq = 105): P1's 2x holds a back while it lasts.
 * The GPU-seconds: 7.5 x ((1 - 1/2 - 1/1.5) + (1 - 1/2 - 1/1.1)) + 7.5 x
 * (1 - 1/1.2 - 1/1.1) = -9.886 (sharing delivers more): with one queued job
 * per GPU (queue_w = 1) the sum falls by 9.886 and the group shares.
 */
static void test_group_by_hand(void **st)
{
	(void)st;
	struct rk_share_partner p[2] = {
	    {.r_s = 5, .xi_a = 2, .rel = 1.5, .gpus = 1, .shared = 1},
	    {.r_s = 100, .xi_a = 1.2, .rel = 1.1, .gpus = 1, .shared = 1}};
	struct rk_pair_outcome o, one;
	assert_int_equal(rk_pair_evaluate(10, 100, 1.2, 1.1, &one, NULL), 0);
	assert_int_equal(one.share, 1);
	assert_int_equal(rk_group_evaluate(10, 1, 0, p, 2, 5, 0, &o, NULL), 0);
	double con = 7.5 + 15 + (15 + 100 - 15 / 1.1);
	assert_true(fabs(o.t_con_s - con / 2) <= 1e-9);
	assert_true(fabs(o.t_seq_s - 60) <= 1e-12);
	assert_int_equal(o.share, 0);
	double lost =
	    7.5 * ((1 - 0.5 - 1 / 1.5) + (1 - 0.5 - 1 / 1.1)) + 7.5 * (1 - 1 / 1.2 - 1 / 1.1);
	assert_int_equal(rk_group_evaluate(10, 1, 0, p, 2, 5, 1, &o, NULL), 0);
	assert_true(fabs(o.t_con_s - (con + lost) / 2) <= 1e-9);
	assert_int_equal(o.share, 1);
	/* a outlasting both partners runs alone after the last one, still at its
	 * accumulation slowdown 1.05. E_a = 100; P1 1 s left (a 2x, P1 1.5x),
	 * P2 2 s (a 1.2x, P2 1.1x): P1 ends at 1.5 s (a did 1.5 / 2.1); P2 has
	 * 2 - 1.5/1.1 left and ends at 2.2 s (a did 0.7 / 1.26 more); a ends
	 * at 2.2 + (100 - both) x 1.05. */
	struct rk_share_partner q[2] = {
	    {.r_s = 1, .xi_a = 2, .rel = 1.5, .gpus = 1, .shared = 1},
	    {.r_s = 2, .xi_a = 1.2, .rel = 1.1, .gpus = 1, .shared = 1}};
	assert_int_equal(rk_group_evaluate(100, 1.05, 0, q, 2, 0, 0, &o, NULL), 0);
	double a1 = 1.5 / (2 * 1.05), a2 = 0.7 / (1.2 * 1.05);
	double end_a = 2.2 + (100 - a1 - a2) * 1.05;
	assert_true(fabs(o.t_con_s - (1.5 + 2.2 + end_a) / 2) <= 1e-9);
}

static void test_group_bad_inputs(void **st)
{
	(void)st;
	struct rk_pair_outcome o;
	struct rk_error err;
	struct rk_share_partner p = {.r_s = 5, .xi_a = 2, .rel = 1.5, .gpus = 2, .shared = 1};
	assert_int_equal(rk_group_evaluate(10, 1, 0, &p, 0, 5, 0, &o, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "partners"));
	assert_int_equal(rk_group_evaluate(10, 0.5, 0, &p, 1, 5, 0, &o, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "slow"));
	assert_int_equal(rk_group_evaluate(10, 1, 0, &p, 1, 5, -1, &o, &err), RK_EINVAL);
	p.shared = 3;
	assert_int_equal(rk_group_evaluate(10, 1, 0, &p, 1, 5, 0, &o, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "partner 0"));
	p.shared = 1;
	p.rel = 0.9;
	assert_int_equal(rk_group_evaluate(10, 1, 0, &p, 1, 5, 0, &o, &err), RK_EINVAL);
	p.rel = 1.5;
	p.r_s = INFINITY;
	assert_int_equal(rk_group_evaluate(10, 1, 0, &p, 1, 5, 0, &o, &err), RK_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pair_hand_cases),
	    cmocka_unit_test(test_pair_matches_replay),
	    cmocka_unit_test(test_pair_bad_inputs),
	    cmocka_unit_test(test_group_matches_pair),
	    cmocka_unit_test(test_group_by_hand),
	    cmocka_unit_test(test_group_bad_inputs),
	    cmocka_unit_test(test_benefit_ordering),
	    cmocka_unit_test(test_subbatch_memory),
	    cmocka_unit_test(test_xi_fallback_chain),
	    cmocka_unit_test(test_xi_pairs_match_lookup),
	    cmocka_unit_test(test_two_server_contention),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
