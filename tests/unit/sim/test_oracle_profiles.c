/*
 * The throughput oracle beyond the Rubick tables: Sia/Pollux profiles and
 * their job targets, GPU types (the GPU table, nearest-type profiles),
 * loading a whole data folder, and the lookup cache being transparent.
 */
#include "oracle_fixture.h"

static void sia_profiles(void **state)
{
	(void)state;
	struct rk_oracle *o;
	assert_int_equal(rk_oracle_create_measured(&o, NULL, RK_ORACLE_FALLBACK_NONE, NULL), 0);
	size_t len;
	char *text =
	    slurp("RK_SHARED_DIR", "traces/sia-artifacts/profiles/bert/placements-quad.csv", &len);
	struct rk_error err;
	assert_int_equal(rk_oracle_add_sia_profile(o, "bert", "quad", RK_SIA_PLACEMENTS, text, len,
	                                           "placements-quad.csv", &err),
	                 0);
	free(text);
	text =
	    slurp("RK_SHARED_DIR", "traces/sia-artifacts/profiles/bert/scalability-quad.csv", &len);
	assert_int_equal(rk_oracle_add_sia_profile(o, "bert", "quad", RK_SIA_SCALABILITY, text, len,
	                                           "scalability-quad.csv", &err),
	                 0);
	free(text);
	struct fixture fx;
	fx_init(&fx, "rtx6000", "bert", 16); /* alias of the artifact's "quad" */
	struct rk_oracle_result res;

	/* "8,2,0.4350355416536331,0.14719552898406985": exact */
	fx_alloc(&fx, "2", 4);
	struct rk_plan p = {.dp = 2, .tp = 1, .pp = 1, .mb = 8, .ga = 1};
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_EXACT);
	assert_true(res.iter_s == 0.4350355416536331);
	/* three accumulation steps: two of them skip the sync */
	p.ga = 3;
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	double want = 0.4350355416536331 + 2 * (0.4350355416536331 - 0.14719552898406985);
	assert_true(fabs(res.iter_s - want) < 1e-15);
	/* local batch 10: linear between 8 and 11 */
	p.ga = 1;
	p.mb = 10;
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_INTERP);
	want = 0.4350355416536331 + 2.0 / 3.0 * (0.46493659913539886 - 0.4350355416536331);
	assert_true(fabs(res.iter_s - want) < 1e-15);
	/* local batch above the largest measured (24): does not fit */
	p.mb = 32;
	assert_int_equal(look(o, &fx, &p, &res, &err), RK_EINFEASIBLE);
	assert_non_null(strstr(err.msg, "largest measured"));
	/* 3 GPUs over 2 nodes: never measured on 2 nodes; 1 node with 3 replicas answers */
	fx_alloc(&fx, "21", 4);
	p = (struct rk_plan){.dp = 3, .tp = 1, .pp = 1, .mb = 4, .ga = 1};
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_INTERP);
	assert_true(res.iter_s == 0.4568048566579819);
	/* 5 GPUs on one node: nothing above 4 replicas */
	fx_alloc(&fx, "5", 4);
	p.dp = 5;
	assert_int_equal(look(o, &fx, &p, &res, &err), RK_ENOTFOUND);
	assert_non_null(strstr(err.msg, "outside the Sia/Pollux profile"));
	rk_oracle_destroy(o);

	/* (nodes, replicas) rows from both files, averaged: NEAREST. */
	assert_int_equal(rk_oracle_create_measured(&o, NULL, RK_ORACLE_FALLBACK_NONE, NULL), 0);
	const char *pl = "placement,local_bsz,step_time,sync_time\n22,4,1.0,0.5\n";
	const char *sc = "num_nodes,num_replicas,local_bsz,step_time,sync_time\n2,4,4,2.0,1.0\n";
	assert_int_equal(rk_oracle_add_sia_profile(o, "cifar10", "", RK_SIA_PLACEMENTS, pl,
	                                           strlen(pl), "p.csv", &err),
	                 0);
	assert_int_equal(rk_oracle_add_sia_profile(o, "cifar10", "", RK_SIA_SCALABILITY, sc,
	                                           strlen(sc), "s.csv", &err),
	                 0);
	fx_init(&fx, "t4", "cifar10", 16);
	fx_alloc(&fx, "31", 4);
	p = (struct rk_plan){.dp = 4, .tp = 1, .pp = 1, .mb = 4, .ga = 2};
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_NEAREST);
	assert_true(res.iter_s == 1.5 + 0.75); /* step 1.5, sync 0.75, one extra step 0.75 */
	assert_int_equal(rk_oracle_add_sia_profile(o, "cifar10", "", RK_SIA_PLACEMENTS, pl,
	                                           strlen(pl), "p2.csv", &err),
	                 RK_EEXIST);
	rk_oracle_destroy(o);
}

static void load_dir(void **state)
{
	(void)state;
	struct rk_oracle *o;
	struct rk_error err;
	assert_int_equal(rk_oracle_create_measured(&o, NULL, RK_ORACLE_FALLBACK_NONE, NULL), 0);
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s/measured/rubick", getenv("RK_DATA_DIR"));
	int rc = rk_oracle_load_dir(o, dir, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, 0);
	/* a second load of the same tables collides */
	assert_int_equal(rk_oracle_load_dir(o, dir, &err), RK_EEXIST);
	struct fixture fx;
	fx_init(&fx, "a800", "vit", 64);
	fx_alloc(&fx, "332", 8); /* vit "ga,233,0.29909253120422363" */
	struct rk_plan p = dp_plan(8, 64);
	struct rk_oracle_result res;
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_true(res.iter_s == 0.29909253120422363);
	rk_oracle_destroy(o);

	/* Sia layout: typed placements/scalability files, README and validation ignored */
	assert_int_equal(rk_oracle_create_measured(&o, NULL, RK_ORACLE_FALLBACK_NONE, NULL), 0);
	snprintf(dir, sizeof(dir), "%s/traces/sia-artifacts/profiles", getenv("RK_SHARED_DIR"));
	rc = rk_oracle_load_dir(o, dir, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, 0);
	fx_init(&fx, "quad", "bert", 16);
	fx_alloc(&fx, "2", 4);
	p = (struct rk_plan){.dp = 2, .tp = 1, .pp = 1, .mb = 8, .ga = 1};
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_true(res.iter_s == 0.4350355416536331);
	rk_oracle_destroy(o);

	assert_int_equal(rk_oracle_create_measured(&o, NULL, RK_ORACLE_FALLBACK_NONE, NULL), 0);
	assert_int_equal(rk_oracle_load_dir(o, "/nonexistent/rubick-tables", &err), RK_EIO);
	assert_non_null(strstr(err.msg, "/nonexistent/rubick-tables"));
	snprintf(dir, sizeof(dir), "%s/zoo", getenv("RK_DATA_DIR"));
	assert_int_equal(rk_oracle_load_dir(o, dir, &err), RK_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no throughput tables"));
	rk_oracle_destroy(o);
}

/* Repeated lookups give the same answer and count each time; new tables are seen. */
static void cache_is_transparent(void **state)
{
	(void)state;
	struct rk_oracle *o;
	struct rk_error err;
	assert_int_equal(rk_oracle_create_measured(&o, NULL, RK_ORACLE_FALLBACK_NONE, NULL), 0);
	const char *t = "exec_plan,placement,iter_time\nga,1,0.5\nga,4,0.125\n";
	assert_int_equal(rk_oracle_add_rubick_table(o, "m", 0, t, strlen(t), "t.csv", &err), 0);
	struct fixture fx;
	fx_init(&fx, "a800", "m", 8);
	fx_alloc(&fx, "2", 4);
	struct rk_plan p = dp_plan(2, 8);
	struct rk_oracle_result a, b;
	assert_int_equal(look(o, &fx, &p, &a, &err), 0);
	assert_int_equal(look(o, &fx, &p, &b, &err), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(a.source, RK_ORACLE_SRC_INTERP);
	/* log-linear at 2 of [1, 4]: 0.5 * (0.125/0.5)^(1/3) */
	assert_true(fabs(a.iter_s - 0.5 * cbrt(0.25)) < 1e-15);
	/* the same question from a different node order and the other node is a hit too */
	fx.shares[0].node = 5;
	assert_int_equal(look(o, &fx, &p, &b, &err), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	struct rk_oracle_stats st;
	rk_oracle_stats_get(o, &st);
	assert_int_equal(st.lookups, 3);
	assert_int_equal(st.by_source[RK_ORACLE_SRC_INTERP], 3);
	/* a profile added later answers (profiles come before tables) */
	const char *pl = "placement,local_bsz,step_time,sync_time\n2,4,0.3,0.1\n";
	assert_int_equal(rk_oracle_add_sia_profile(o, "m", "a800", RK_SIA_PLACEMENTS, pl,
	                                           strlen(pl), "p.csv", &err),
	                 0);
	assert_int_equal(look(o, &fx, &p, &b, &err), 0);
	assert_int_equal(b.source, RK_ORACLE_SRC_EXACT);
	assert_true(b.iter_s == 0.3);
	/* many distinct questions (beyond the cache's bound) stay correct */
	for (int mb = 1; mb <= 4; mb++)
		for (int ga = 1; ga <= 20000; ga++) {
			struct rk_plan q = {.dp = 2, .tp = 1, .pp = 1, .mb = mb, .ga = ga};
			double it;
			assert_int_equal(
			    rk_oracle_iter_s(o, &fx.job, &q, &fx.alloc, &fx.cluster, &it, &err), 0);
			if (mb == 4 && ga == 20000)
				assert_true(fabs(it - (0.3 + 19999 * 0.2)) < 1e-9);
		}
	rk_oracle_destroy(o);
}

/*
 * GPU types (docs/oracle.md "GPU types"): the A800 tables answer other types
 * scaled by the GPU table; a profile answers its own type only, others get
 * the nearest type's profile scaled; the model follows the node's type; every
 * lookup is counted under its type.
 */
static void gpu_types(void **state)
{
	(void)state;
	struct rk_oracle *o;
	struct rk_error err;
	assert_int_equal(rk_oracle_create_measured(&o, NULL, RK_ORACLE_FALLBACK_NONE, NULL), 0);
	const char *t = "exec_plan,placement,iter_time\nga,2,0.5\n";
	assert_int_equal(rk_oracle_add_rubick_table(o, "m", 0, t, strlen(t), "t.csv", &err), 0);
	struct fixture fx;
	struct rk_plan p = dp_plan(2, 8);
	struct rk_oracle_result res;
	fx_init(&fx, "a800", "m", 8);
	fx_alloc(&fx, "2", 4);
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_EXACT);
	assert_true(res.iter_s == 0.5);
	/* no model: the whole iteration by the training peaks, A800 312 / T4 65 */
	fx_init(&fx, "t4", "m", 8);
	fx_alloc(&fx, "2", 4);
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_TYPE_SCALED);
	assert_true(fabs(res.iter_s - 0.5 * 312.0 / 65.0) < 1e-12);
	/* a type outside the GPU table cannot be scaled to */
	fx_init(&fx, "foo", "m", 8);
	fx_alloc(&fx, "2", 4);
	assert_int_equal(look(o, &fx, &p, &res, &err), RK_ENOTFOUND);
	assert_non_null(strstr(err.msg, "'foo' is not in the GPU table"));
	struct rk_oracle_stats st;
	rk_oracle_stats_get(o, &st);
	assert_int_equal(st.lookups, 2);
	assert_int_equal(st.n_types, 2);
	assert_string_equal(st.types[0].gpu_type, "a800");
	assert_int_equal(st.types[0].by_source[RK_ORACLE_SRC_EXACT], 1);
	assert_string_equal(st.types[1].gpu_type, "t4");
	assert_int_equal(st.types[1].by_source[RK_ORACLE_SRC_TYPE_SCALED], 1);
	assert_int_equal(st.failed, 1);

	/* the untyped (Pollux T4) profile no longer answers an A800 as is */
	const char *pl = "placement,local_bsz,step_time,sync_time\n2,4,0.3,0.1\n";
	assert_int_equal(
	    rk_oracle_add_sia_profile(o, "m", "", RK_SIA_PLACEMENTS, pl, strlen(pl), "p.csv", &err),
	    0);
	p = (struct rk_plan){.dp = 2, .tp = 1, .pp = 1, .mb = 4, .ga = 1};
	fx_init(&fx, "t4", "m", 8);
	fx_alloc(&fx, "2", 4);
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_EXACT); /* untyped = T4: its own */
	assert_true(res.iter_s == 0.3);
	fx_init(&fx, "a800", "m", 8);
	fx_alloc(&fx, "2", 4);
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_TYPE_SCALED);
	/* compute 0.2 x FP32 8.1/19.5 (profiles train in FP32), one-node sync 0.1 x PCIe 32 /
	 * NVLink 400 */
	double want = 0.2 * 8.1 / 19.5 + 0.1 * 32.0 / 400.0;
	assert_true(fabs(res.iter_s - want) < 1e-12);
	/* a V100 profile is nearer the A800 than the T4's: it is the one scaled */
	const char *pv = "placement,local_bsz,step_time,sync_time\n2,4,0.2,0.05\n";
	assert_int_equal(rk_oracle_add_sia_profile(o, "m", "azure", RK_SIA_PLACEMENTS, pv,
	                                           strlen(pv), "pv.csv", &err),
	                 0);
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	want = 0.15 * 15.7 / 19.5 + 0.05 * 300.0 / 400.0;
	assert_true(fabs(res.iter_s - want) < 1e-12);
	/* a job of another model whose trace application has a profile gets it */
	fx_init(&fx, "v100", "other", 8);
	snprintf(fx.job.job_type, sizeof(fx.job.job_type), "M");
	fx_alloc(&fx, "2", 4);
	p.mb = 64; /* the stand-in's batch, above the profile's: read at its largest */
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_int_equal(res.source, RK_ORACLE_SRC_EXACT);
	assert_true(res.iter_s == 0.2);
	rk_oracle_destroy(o);

	/* the model oracle runs the node's type: slower on a T4, the same on an A800 */
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	assert_int_equal(rk_oracle_create_model(&o, &env, &err), 0);
	fx_init(&fx, "a800", "bert", 32);
	fit_bert(&fx.model);
	fx_alloc(&fx, "4", 8);
	p = dp_plan(4, 32);
	double a800, t4, h100;
	assert_int_equal(rk_oracle_iter_s(o, &fx.job, &p, &fx.alloc, &fx.cluster, &a800, &err), 0);
	struct rk_placement q4 = {.n_nodes = 1, .gpus = {4}};
	double ref;
	assert_int_equal(rk_perf_predict(&fx.model, &fx.model.perf, &env, &p, &q4, 8, &ref), 0);
	assert_true(fabs(a800 - ref / 1000.0) < 1e-15);
	for (int i = 0; i < 8; i++)
		snprintf(fx.nodes[i].gpu_type, sizeof(fx.nodes[i].gpu_type), "t4");
	assert_int_equal(rk_oracle_iter_s(o, &fx.job, &p, &fx.alloc, &fx.cluster, &t4, &err), 0);
	for (int i = 0; i < 8; i++)
		snprintf(fx.nodes[i].gpu_type, sizeof(fx.nodes[i].gpu_type), "h100");
	assert_int_equal(rk_oracle_iter_s(o, &fx.job, &p, &fx.alloc, &fx.cluster, &h100, &err), 0);
	assert_true(t4 > 1.5 * a800);
	assert_true(h100 < a800);
	assert_true(t4 < a800 * 312.0 / 65.0); /* host-side terms do not scale */
	rk_oracle_destroy(o);
}

/* Sia/Pollux job targets: the last row's iterations per batch, log-log between batches. */
static void sia_targets(void **state)
{
	(void)state;
	struct rk_oracle *o;
	struct rk_error err;
	assert_int_equal(rk_oracle_create_measured(&o, NULL, RK_ORACLE_FALLBACK_NONE, NULL), 0);
	const char *v1 =
	    "progress,iteration,metric,grad_sqr,grad_var\n1,10,0.5,1,1\n2,400,0.9,1,1\n";
	const char *v4 = "progress,iteration,metric\n2,100,0.9\n";
	assert_int_equal(rk_oracle_add_sia_target(o, "App", 128, v1, strlen(v1), "v1.csv", &err),
	                 0);
	assert_int_equal(rk_oracle_add_sia_target(o, "app", 512, v4, strlen(v4), "v4.csv", &err),
	                 0);
	double it = 0;
	assert_int_equal(rk_oracle_target_iters(o, "app", 128, &it), 0);
	assert_true(it == 400);
	assert_int_equal(rk_oracle_target_iters(o, "APP", 256, &it), 0);
	assert_true(fabs(it - 200) < 1e-9); /* sqrt(400 * 100) */
	assert_int_equal(rk_oracle_target_iters(o, "app", 64, &it), 0);
	assert_true(it == 400); /* below the measured batches: the nearest */
	assert_int_equal(rk_oracle_target_iters(o, "app", 4096, &it), 0);
	assert_true(it == 100);
	assert_int_equal(rk_oracle_target_iters(o, "other", 128, &it), RK_ENOTFOUND);
	/* errors */
	assert_int_equal(rk_oracle_add_sia_target(o, "app", 128, v1, strlen(v1), "v1.csv", &err),
	                 RK_EEXIST);
	const char *bad = "progress,iteration\n1,x\n";
	assert_int_equal(rk_oracle_add_sia_target(o, "b", 8, bad, strlen(bad), "bad.csv", &err),
	                 RK_EINVAL);
	assert_non_null(strstr(err.msg, "bad.csv:2:"));
	const char *nocol = "progress,metric\n1,2\n";
	assert_int_equal(rk_oracle_add_sia_target(o, "b", 8, nocol, strlen(nocol), "n.csv", &err),
	                 RK_EINVAL);
	assert_non_null(strstr(err.msg, "missing column 'iteration'"));
	const char *unk = "progress,iters\n1,2\n";
	assert_int_equal(rk_oracle_add_sia_target(o, "b", 8, unk, strlen(unk), "u.csv", &err),
	                 RK_EINVAL);
	assert_non_null(strstr(err.msg, "unknown column 'iters'"));
	const char *empty = "progress,iteration\n";
	assert_int_equal(rk_oracle_add_sia_target(o, "b", 8, empty, strlen(empty), "e.csv", &err),
	                 RK_EINVAL);
	assert_int_equal(rk_oracle_add_sia_target(o, "b", 0, v1, strlen(v1), "z.csv", &err),
	                 RK_ERANGE);

	/* the application's profile is read at its own batch over the replicas, accumulating
	 * where a placement's rows stop: 2 replicas x 64 = 16 x 4 accumulation steps */
	const char *pl = "placement,local_bsz,step_time,sync_time\n2,16,0.4,0.1\n2,8,0.3,0.1\n";
	assert_int_equal(rk_oracle_add_sia_profile(o, "app", "t4", RK_SIA_PLACEMENTS, pl,
	                                           strlen(pl), "p.csv", &err),
	                 0);
	struct fixture fx;
	fx_init(&fx, "t4", "standin", 8);
	snprintf(fx.job.job_type, sizeof(fx.job.job_type), "app");
	fx.job.app_batch = 128;
	fx_alloc(&fx, "2", 4);
	struct rk_plan p = {.dp = 2, .tp = 1, .pp = 1, .mb = 4, .ga = 1};
	struct rk_oracle_result res;
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_true(fabs(res.iter_s - (0.4 + 3 * 0.3)) < 1e-12);
	fx.job.app_batch = 16; /* 8 per replica: exact, no accumulation */
	assert_int_equal(look(o, &fx, &p, &res, &err), 0);
	assert_true(res.iter_s == 0.3);
	rk_oracle_destroy(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(sia_profiles),         cmocka_unit_test(load_dir),
	    cmocka_unit_test(cache_is_transparent), cmocka_unit_test(gpu_types),
	    cmocka_unit_test(sia_targets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
