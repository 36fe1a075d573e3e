/*
 * The throughput oracle on the bundled Rubick tables: exact lookups on real
 * rows (data/measured/rubick), each interpolation rule on hand-checked
 * points, CPU threads and OOM rows, fallback provenance, family and source
 * names, and every error. Sia/Pollux profiles, GPU types, loading a data
 * folder and the cache are in test_oracle_profiles.c.
 */
#include "oracle_fixture.h"

static void exact_rows(void **state)
{
	(void)state;
	struct rk_oracle *o;
	assert_int_equal(rk_oracle_create_measured(&o, NULL, RK_ORACLE_FALLBACK_NONE, NULL), 0);
	add_table(o, "bert", "bert", 0);
	add_table(o, "llama7", "llama7", 0);
	struct fixture fx;
	fx_init(&fx, "a800", "bert", 32);
	struct rk_oracle_result res;
	struct rk_error err;

	/* bert/placements.csv line 2: ga,11,0.4407473684210526 */
	fx_alloc(&fx, "11", 8);
	struct rk_plan p = dp_plan(2, 32);
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_EXACT);
	assert_true(res.iter_s == 0.4407473684210526);
	assert_string_equal(res.family, "ga");
	assert_string_equal(res.placement, "11");

	/* Node order does not matter: the row "ga,11222" answers 2,1,2,1,2 (canonical 22211). */
	fx_alloc(&fx, "21212", 8);
	p = dp_plan(8, 32);
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_EXACT);
	assert_true(res.iter_s == 0.26841578947368416);
	assert_string_equal(res.placement, "22211");

	/* Checkpointing -> gc family; ZeRO-2 -> zero-dp; offload -> zero-offload (same lines). */
	fx_alloc(&fx, "8", 8);
	p = dp_plan(8, 32);
	p.gc = 1;
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_string_equal(res.family, "gc");
	assert_true(res.iter_s == 0.19032631578947368);
	p.gc = 0;
	p.zero = 2;
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_string_equal(res.family, "zero-dp");
	assert_true(res.iter_s == 0.15498947368421054);
	p.offload = 1;
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_string_equal(res.family, "zero-offload");
	assert_true(res.iter_s == 0.2847315789473684);

	/* 3D: llama7 "248,88888888,0.672942105" = pp2, tp4, dp8 on 8 full nodes. */
	fx_init(&fx, "a800", "llama7", 8);
	fx_alloc(&fx, "88888888", 12);
	struct rk_plan p3 = {.dp = 8, .tp = 4, .pp = 2, .mb = 1, .ga = 1};
	assert_int_equal(look(o, &fx, &p3, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_EXACT);
	assert_string_equal(res.family, "248");
	assert_true(res.iter_s == 0.672942105);

	/* rk_oracle_iter_s is the same lookup without provenance. */
	double it = 0;
	assert_int_equal(rk_oracle_iter_s(o, &fx.job, &p3, &fx.alloc, &fx.cluster, &it, &err), 0);
	assert_true(it == 0.672942105);

	struct rk_oracle_stats st;
	rk_oracle_stats_get(o, &st);
	assert_int_equal(st.lookups, 7);
	assert_int_equal(st.by_source[RK_ORACLE_SRC_EXACT], 7);
	rk_oracle_stats_reset(o);
	rk_oracle_stats_get(o, &st);
	assert_int_equal(st.lookups, 0);
	assert_int_equal(st.by_source[RK_ORACLE_SRC_EXACT], 0);
	rk_oracle_destroy(o);
}

static void nearest_and_interp(void **state)
{
	(void)state;
	struct rk_oracle *o;
	assert_int_equal(rk_oracle_create_measured(&o, NULL, RK_ORACLE_FALLBACK_NONE, NULL), 0);
	add_table(o, "bert", "bert", 0);
	struct fixture fx;
	fx_init(&fx, "a800", "bert", 32);
	struct rk_oracle_result res;
	struct rk_error err;
	struct rk_plan p = dp_plan(8, 32);

	/* "611" is not measured for ga; same GPUs and nodes: 332 (L1 6) and 422 (L1 4) -> 422. */
	fx_alloc(&fx, "116", 8);
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_NEAREST);
	assert_true(res.iter_s == 0.2606421052631579);

	/* "431": 332 and 422 both at L1 2 -> mean throughput of the two. */
	fx_alloc(&fx, "431", 8);
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_NEAREST);
	double want = 2.0 / (1.0 / 0.2642631578947368 + 1.0 / 0.2606421052631579);
	assert_true(fabs(res.iter_s - want) < 1e-15);

	/* 6 GPUs on one node: no ga row with 6 GPUs; between "4" (0.2256...) and "8" (0.1576...),
	 * log-linear at the midpoint = geometric mean of the iteration times. */
	fx_alloc(&fx, "6", 8);
	p = dp_plan(6, 32);
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_INTERP);
	want = sqrt(0.2256736842105263 * 0.1576842105263158);
	assert_true(fabs(res.iter_s - want) < 1e-12);

	/* 16 GPUs: beyond every measured count; no model -> the nearest point of the family
	 * (8 GPUs, 2 nodes: 44, 53 and 62 tie at L1 8 -> first in the file, "44" line 5). */
	fx_alloc(&fx, "88", 8);
	p = dp_plan(16, 32);
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_NEAREST_POINT);
	assert_true(res.iter_s == 0.2100157894736842);

	struct rk_oracle_stats st;
	rk_oracle_stats_get(o, &st);
	assert_int_equal(st.by_source[RK_ORACLE_SRC_NEAREST], 2);
	assert_int_equal(st.by_source[RK_ORACLE_SRC_NEAREST_POINT], 1);
	assert_int_equal(st.by_source[RK_ORACLE_SRC_INTERP], 1);
	rk_oracle_destroy(o);
}

static void cpu_threads_and_oom(void **state)
{
	(void)state;
	struct rk_oracle *o;
	assert_int_equal(rk_oracle_create_measured(&o, NULL, RK_ORACLE_FALLBACK_NONE, NULL), 0);
	/* the folder name's "7b" names the zoo model llama7; measured at batch 16 */
	add_table(o, "llama7b_bsz16", "llama7b", 16);
	struct fixture fx;
	fx_init(&fx, "a800", "llama7", 8);
	fx.job.global_batch = 16;
	struct rk_oracle_result res;
	struct rk_error err;
	struct rk_plan p = {.dp = 1, .tp = 1, .pp = 1, .mb = 1, .ga = 16, .gc = 1, .zero = 2,
			    .offload = 1};
	/* zero-offload+gc on 1 GPU: 66 s with 2 threads, 46 s with 4 */
	fx_alloc(&fx, "1", 4);
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_true(res.iter_s == 46.0);
	fx_alloc(&fx, "1", 2);
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_true(res.iter_s == 66.0);
	fx_alloc(&fx, "1", 3); /* most threads not above 3: 2 */
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_true(res.iter_s == 66.0);
	fx_alloc(&fx, "1", 16); /* most threads not above 16: 4 */
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_true(res.iter_s == 46.0);

	/* "zero-offload+gc,8888,2,0": measured out of memory */
	fx_alloc(&fx, "8888", 2);
	p.dp = 32;
	p.ga = 1;
	rk_error_clear(&err);
	assert_int_equal(look(o, &fx, &p, &res, &err), RK_EINFEASIBLE);
	assert_non_null(strstr(err.msg, "out of memory"));
	assert_non_null(strstr(err.msg, "placements.csv:18"));
	struct rk_oracle_stats st;
	rk_oracle_stats_get(o, &st);
	assert_int_equal(st.infeasible, 1);

	/* The table is for batch 16 only: at its default batch 8 the job reads it with the
	 * time scaled by 8/16 (rule 6); the OOM row stays infeasible. */
	fx.job.global_batch = 8;
	assert_int_equal(look(o, &fx, &p, &res, &err), RK_EINFEASIBLE);
	fx_alloc(&fx, "1", 4);
	p.dp = 1;
	p.ga = 8;
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_BATCH_SCALED);
	assert_true(res.iter_s == 23.0);
	/* a model with no table at any batch */
	fx.model.name[0] = 'x';
	assert_int_equal(look(o, &fx, &p, &res, &err), RK_ENOTFOUND);
	assert_non_null(strstr(err.msg, "xlama7"));
	assert_non_null(strstr(err.msg, "fallback is off"));
	rk_oracle_destroy(o);
}

/* Fitted BERT parameters, docs/references.md §1.4.2 table. */

static void model_fallback(void **state)
{
	(void)state;
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	struct rk_oracle *o;
	assert_int_equal(rk_oracle_create_measured(&o, &env, RK_ORACLE_FALLBACK_MODEL, NULL), 0);
	add_table(o, "bert", "bert", 0);
	struct fixture fx;
	fx_init(&fx, "a800", "bert", 32);
	fit_bert(&fx.model);
	struct rk_oracle_result res;
	struct rk_error err;

	/* 16 GPUs on 2 nodes: the model scaled by measured/model at the nearest measured
	 * point of the family: 8 GPUs on 2 nodes, ties broken by file line -> "44" (line 5). */
	fx_alloc(&fx, "88", 8);
	struct rk_plan p = dp_plan(16, 32);
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_MODEL_SCALED);
	struct rk_placement q = {.n_nodes = 2, .gpus = {8, 8}};
	struct rk_placement r = {.n_nodes = 2, .gpus = {4, 4}};
	double mq, mr;
	struct rk_plan rp = dp_plan(8, 32);
	assert_int_equal(rk_perf_predict(&fx.model, &fx.model.perf, &env, &p, &q, 8, &mq), 0);
	assert_int_equal(rk_perf_predict(&fx.model, &fx.model.perf, &env, &rp, &r, 8, &mr), 0);
	double want = (mq / 1000.0) * 0.2100157894736842 / (mr / 1000.0);
	assert_true(fabs(res.iter_s - want) < 1e-12 * want);

	/* A model without a table: the model alone. */
	struct fixture fx2;
	fx_init(&fx2, "a800", "resnet", 32);
	fit_bert(&fx2.model);
	snprintf(fx2.model.name, sizeof(fx2.model.name), "resnet");
	fx_alloc(&fx2, "4", 8);
	p = dp_plan(4, 32);
	assert_int_equal(look(o, &fx2, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_MODEL);
	struct rk_placement q4 = {.n_nodes = 1, .gpus = {4}};
	assert_int_equal(rk_perf_predict(&fx2.model, &fx2.model.perf, &env, &p, &q4, 8, &mq), 0);
	assert_true(fabs(res.iter_s - mq / 1000.0) < 1e-15);

	/* Unfitted model without a table: nothing can answer. */
	fx2.model.perf_fitted = 0;
	rk_error_clear(&err);
	assert_int_equal(look(o, &fx2, &p, &res, &err), RK_ENOTFOUND);
	assert_non_null(strstr(err.msg, "resnet"));
	assert_non_null(strstr(err.msg, "job 7"));

	struct rk_oracle_stats st;
	rk_oracle_stats_get(o, &st);
	assert_int_equal(st.by_source[RK_ORACLE_SRC_MODEL_SCALED], 1);
	assert_int_equal(st.by_source[RK_ORACLE_SRC_MODEL], 1);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.lookups, 2);
	rk_oracle_destroy(o);

	/* The model oracle answers every lookup with the model. */
	assert_int_equal(rk_oracle_create_model(&o, &env, NULL), 0);
	fx_alloc(&fx, "11", 8);
	p = dp_plan(2, 32);
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_MODEL);
	assert_int_equal(rk_oracle_add_rubick_table(o, "bert", 0, "x", 1, "t.csv", &err), RK_EINVAL);
	rk_oracle_destroy(o);
	assert_int_equal(rk_oracle_create_model(&o, NULL, &err), RK_EINVAL);
	assert_null(o);
}

static void errors(void **state)
{
	(void)state;
	struct rk_oracle *o;
	struct rk_error err;
	assert_int_equal(rk_oracle_create_measured(&o, NULL, (enum rk_oracle_fallback)9, &err),
			 RK_EINVAL);
	assert_int_equal(rk_oracle_create_measured(&o, NULL, RK_ORACLE_FALLBACK_NONE, &err), 0);

	/* malformed row: file:line:col */
	const char *bad = "exec_plan,placement,iter_time\nga,1x,0.5\n";
	assert_int_equal(rk_oracle_add_rubick_table(o, "bert", 0, bad, strlen(bad), "bad.csv", &err),
			 RK_EINVAL);
	assert_non_null(strstr(err.msg, "bad.csv:2:"));
	const char *neg = "exec_plan,placement,iter_time\nga,1,-3\n";
	assert_true(rk_oracle_add_rubick_table(o, "bert", 0, neg, strlen(neg), "neg.csv", &err) < 0);
	assert_non_null(strstr(err.msg, "neg.csv:2:"));
	const char *longfam = "exec_plan,placement,iter_time\nzero-offload+gc+something,1,3\n";
	assert_int_equal(rk_oracle_add_rubick_table(o, "bert", 0, longfam, strlen(longfam), "l.csv",
						    &err),
			 RK_EINVAL);
	assert_non_null(strstr(err.msg, "l.csv:2:1"));
	const char *good = "exec_plan,placement,iter_time\nga,1,0.5\n";
	assert_int_equal(rk_oracle_add_rubick_table(o, "bert", 0, good, strlen(good), "g.csv", &err), 0);
	assert_int_equal(rk_oracle_add_rubick_table(o, "BERT", 0, good, strlen(good), "g2.csv", &err),
			 RK_EEXIST);
	assert_non_null(strstr(err.msg, "g.csv"));
	assert_int_equal(rk_oracle_add_rubick_table(o, "bert", -1, good, strlen(good), "g3.csv", &err),
			 RK_ERANGE);

	/* Sia: bad number, missing column */
	const char *sbad = "placement,local_bsz,step_time,sync_time\n12,4,abc,0.1\n";
	assert_int_equal(rk_oracle_add_sia_profile(o, "m", "", RK_SIA_PLACEMENTS, sbad, strlen(sbad),
						   "sp.csv", &err),
			 RK_EINVAL);
	assert_non_null(strstr(err.msg, "sp.csv:2:"));
	assert_non_null(strstr(err.msg, "step_time"));
	const char *smiss = "local_bsz,step_time,sync_time\n4,1,0.1\n";
	assert_int_equal(rk_oracle_add_sia_profile(o, "m", "", RK_SIA_PLACEMENTS, smiss,
						   strlen(smiss), "sm.csv", &err),
			 RK_EINVAL);
	assert_non_null(strstr(err.msg, "missing column 'placement'"));
	const char *sbadpl = "placement,local_bsz,step_time,sync_time\n10,4,1,0.1\n";
	assert_int_equal(rk_oracle_add_sia_profile(o, "m", "", RK_SIA_PLACEMENTS, sbadpl,
						   strlen(sbadpl), "sz.csv", &err),
			 RK_EINVAL);
	assert_non_null(strstr(err.msg, "sz.csv:2:2"));

	/* lookups: unknown model, empty allocation, unknown node, plan/GPU mismatch */
	struct fixture fx;
	fx_init(&fx, "a800", "gpt5", 16);
	fx_alloc(&fx, "1", 4);
	struct rk_plan p = dp_plan(1, 16);
	struct rk_oracle_result res;
	assert_int_equal(look(o, &fx, &p, &res, &err), RK_ENOTFOUND);
	assert_non_null(strstr(err.msg, "gpt5"));
	fx.alloc.n = 0;
	assert_int_equal(look(o, &fx, &p, &res, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "empty allocation"));
	fx_alloc(&fx, "1", 4);
	fx.shares[0].node = 42;
	assert_int_equal(look(o, &fx, &p, &res, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "unknown node 42"));
	fx_alloc(&fx, "2", 4);
	assert_int_equal(look(o, &fx, &p, &res, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "holds 2"));

	struct rk_oracle_stats st;
	rk_oracle_stats_get(o, &st);
	assert_int_equal(st.failed, 4);
	assert_int_equal(st.lookups, 0);
	rk_oracle_destroy(o);
}

static void families_and_names(void **state)
{
	(void)state;
	char buf[RK_ORACLE_FAMILY_MAX];
	struct rk_plan p = {.dp = 4, .tp = 4, .pp = 2, .mb = 1, .ga = 2};
	assert_int_equal(rk_oracle_plan_family(&p, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "244");
	p = (struct rk_plan){.dp = 12, .tp = 2, .pp = 1, .mb = 1, .ga = 1};
	assert_int_equal(rk_oracle_plan_family(&p, buf, sizeof(buf)), RK_ERANGE);
	p = (struct rk_plan){.dp = 4, .tp = 1, .pp = 1, .mb = 1, .ga = 2};
	assert_int_equal(rk_oracle_plan_family(&p, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "ga");
	p.zero = 3;
	assert_int_equal(rk_oracle_plan_family(&p, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "zero-dp");
	p.offload = 1;
	p.gc = 1;
	assert_int_equal(rk_oracle_plan_family(&p, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "zero-offload+gc");
	assert_int_equal(rk_oracle_plan_family(&p, buf, 4), RK_EINVAL);
	assert_string_equal(rk_oracle_source_name(RK_ORACLE_SRC_MODEL_SCALED), "model-scaled");
	assert_string_equal(rk_oracle_source_name(RK_ORACLE_SRC_NEAREST_POINT), "nearest-point");
	assert_string_equal(rk_oracle_source_name(RK_ORACLE_SRC_BATCH_SCALED), "batch-scaled");
	assert_string_equal(rk_oracle_source_name(RK_ORACLE_SRC_COUNT), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(exact_rows),
	    cmocka_unit_test(nearest_and_interp),
	    cmocka_unit_test(cpu_threads_and_oom),
	    cmocka_unit_test(model_fallback),
	    cmocka_unit_test(errors),
	    cmocka_unit_test(families_and_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
