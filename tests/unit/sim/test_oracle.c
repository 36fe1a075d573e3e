/*
 * The throughput oracle: exact lookups on real rows of the bundled Rubick
 * tables (data/measured/rubick), each interpolation rule on hand-checked
 * points, Sia/Pollux profiles, fallback provenance, and every error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rubick/oracle.h"
#include "rubick/perf.h"

#include "data_file.h"

static void add_table(struct rk_oracle *o, const char *folder, const char *model, int batch)
{
	char rel[256];
	size_t len;
	snprintf(rel, sizeof(rel), "measured/rubick/%s/placements.csv", folder);
	char *text = slurp("RK_DATA_DIR", rel, &len);
	struct rk_error err;
	int rc = rk_oracle_add_rubick_table(o, model, batch, text, len, rel, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, 0);
	free(text);
}

/* A cluster of n nodes with 8 GPUs and 64 CPUs each, all of one type. */
struct fixture {
	struct rk_node nodes[8];
	struct rk_cluster cluster;
	struct rk_share shares[8];
	struct rk_alloc alloc;
	struct rk_model model;
	struct rk_job job;
};

static void fx_init(struct fixture *fx, const char *gpu_type, const char *model, int batch)
{
	memset(fx, 0, sizeof(*fx));
	for (int i = 0; i < 8; i++) {
		fx->nodes[i].id = i;
		snprintf(fx->nodes[i].gpu_type, sizeof(fx->nodes[i].gpu_type), "%s", gpu_type);
		fx->nodes[i].gpus = 8;
		fx->nodes[i].cpus = 64;
		fx->nodes[i].mem_mb = 1600 * 1024;
		fx->nodes[i].up = 1;
	}
	fx->cluster.n_nodes = 8;
	fx->cluster.nodes = fx->nodes;
	snprintf(fx->model.name, sizeof(fx->model.name), "%s", model);
	fx->model.global_batch = batch;
	fx->job.id = 7;
	fx->job.model = &fx->model;
	fx->job.global_batch = batch;
}

/* Allocation with `gpus[i]` GPUs on node i (in the order given) and `cpg` CPUs per GPU. */
static void fx_alloc(struct fixture *fx, const char *digits, int cpg)
{
	int n = (int)strlen(digits);
	for (int i = 0; i < n; i++) {
		fx->shares[i].node = i;
		fx->shares[i].gpus = digits[i] - '0';
		fx->shares[i].cpus = cpg * fx->shares[i].gpus;
	}
	fx->alloc.n = n;
	fx->alloc.shares = fx->shares;
}

static struct rk_plan dp_plan(int gpus, int batch)
{
	struct rk_plan p = {.dp = gpus, .tp = 1, .pp = 1, .mb = batch / gpus, .ga = 1};
	if (p.mb < 1)
		p.mb = 1;
	return p;
}

static int look(struct rk_oracle *o, struct fixture *fx, const struct rk_plan *p,
		struct rk_oracle_result *res, struct rk_error *err)
{
	return rk_oracle_lookup(o, &fx->job, p, &fx->alloc, &fx->cluster, res, err);
}

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

/* Fitted BERT parameters, algorithms.md §1.4.2 table. */
static void fit_bert(struct rk_model *m)
{
	m->layers = 24;
	m->hidden = 1024;
	m->heads = 16;
	m->seq_len = 512;
	m->vocab = 30522;
	m->params = 336.3e6;
	m->fwd_ms = 225;
	m->perf_fitted = 1;
	m->perf = (struct rk_perf_params){.k_bwd = 1.7763, .k_sync = 1.1410, .k_opt = 1e-8,
					  .k_os_offload = 4.4006, .k_const = 15.257,
					  .k_off = 37.289, .k_swap = 26.222};
}

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

static void sia_profiles(void **state)
{
	(void)state;
	struct rk_oracle *o;
	assert_int_equal(rk_oracle_create_measured(&o, NULL, RK_ORACLE_FALLBACK_NONE, NULL), 0);
	size_t len;
	char *text = slurp("RK_SHARED_DIR", "traces/sia-artifacts/profiles/bert/placements-quad.csv",
			   &len);
	struct rk_error err;
	assert_int_equal(rk_oracle_add_sia_profile(o, "bert", "quad", RK_SIA_PLACEMENTS, text, len,
						   "placements-quad.csv", &err),
			 0);
	free(text);
	text = slurp("RK_SHARED_DIR", "traces/sia-artifacts/profiles/bert/scalability-quad.csv", &len);
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
	assert_int_equal(rk_oracle_add_sia_profile(o, "m", "a800", RK_SIA_PLACEMENTS, pl, strlen(pl),
						   "p.csv", &err),
			 0);
	assert_int_equal(look(o, &fx, &p, &b, &err), 0);
	assert_int_equal(b.source, RK_ORACLE_SRC_EXACT);
	assert_true(b.iter_s == 0.3);
	/* many distinct questions (beyond the cache's bound) stay correct */
	for (int mb = 1; mb <= 4; mb++)
		for (int ga = 1; ga <= 20000; ga++) {
			struct rk_plan q = {.dp = 2, .tp = 1, .pp = 1, .mb = mb, .ga = ga};
			double it;
			assert_int_equal(rk_oracle_iter_s(o, &fx.job, &q, &fx.alloc, &fx.cluster, &it, &err), 0);
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
	assert_int_equal(rk_oracle_add_sia_profile(o, "m", "", RK_SIA_PLACEMENTS, pl, strlen(pl),
						   "p.csv", &err),
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
	const char *v1 = "progress,iteration,metric,grad_sqr,grad_var\n1,10,0.5,1,1\n2,400,0.9,1,1\n";
	const char *v4 = "progress,iteration,metric\n2,100,0.9\n";
	assert_int_equal(rk_oracle_add_sia_target(o, "App", 128, v1, strlen(v1), "v1.csv", &err), 0);
	assert_int_equal(rk_oracle_add_sia_target(o, "app", 512, v4, strlen(v4), "v4.csv", &err), 0);
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
		cmocka_unit_test(exact_rows),      cmocka_unit_test(nearest_and_interp),
		cmocka_unit_test(cpu_threads_and_oom), cmocka_unit_test(model_fallback),
		cmocka_unit_test(sia_profiles),    cmocka_unit_test(errors),
		cmocka_unit_test(families_and_names), cmocka_unit_test(load_dir),
		cmocka_unit_test(cache_is_transparent), cmocka_unit_test(gpu_types),
		cmocka_unit_test(sia_targets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
