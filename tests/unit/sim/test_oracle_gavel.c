/*
 * Trace-native Gavel/Shockwave throughputs in the oracle (oracle_gavel.c):
 * hand-made files, every rule (exact key, placement-independent, GPU counts the
 * file lacks, node types the file lacks, a measured 0) and every error.
 */
// clang-format off: cmocka needs these first, in this order
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rubick/oracle.h"

/* 4 steps/s on 1 v100, 10 on 4; 1 on 1 k80 and 0 (does not fit) on 4; the
 * unconsolidated type is ignored, as in Gavel's simulator. */
static const char file[] =
    "{\"v100\": {\"('ResNet-50 (batch size 64)', 1)\": {\"null\": 4.0},"
    "            \"('ResNet-50 (batch size 64)', 4)\": {\"null\": 10.0,"
    "              \"('A3C', 4)\": [5.0, 2.0]}},"
    " \"k80\": {\"('ResNet-50 (batch size 64)', 1)\": {\"null\": 1.0},"
    "          \"('ResNet-50 (batch size 64)', 4)\": {\"null\": 0}},"
    " \"v100_unconsolidated\": {\"('ResNet-50 (batch size 64)', 4)\": {\"null\": 1.0}}}";

struct fx {
	struct rk_node nodes[4];
	struct rk_cluster cl;
	struct rk_share shares[4];
	struct rk_alloc alloc;
	struct rk_model model;
	struct rk_job job;
	struct rk_oracle *o;
};

static void fx_init(struct fx *f, const char *types /* one letter per node: v, k, a */)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < 4; i++) {
		f->nodes[i].id = i;
		const char *t = types[i] == 'v' ? "v100" : types[i] == 'k' ? "k80" : "a800";
		snprintf(f->nodes[i].gpu_type, sizeof(f->nodes[i].gpu_type), "%s", t);
		f->nodes[i].gpus = 8;
		f->nodes[i].cpus = 64;
		f->nodes[i].up = 1;
	}
	f->cl.n_nodes = 4;
	f->cl.nodes = f->nodes;
	snprintf(f->model.name, sizeof(f->model.name), "vit");
	f->model.global_batch = 64;
	f->job.id = 3;
	f->job.model = &f->model;
	f->job.global_batch = 64;
	snprintf(f->job.job_type, sizeof(f->job.job_type), "ResNet-50 (batch size 64)");
	struct rk_error err;
	assert_int_equal(rk_oracle_create_measured(&f->o, NULL, RK_ORACLE_FALLBACK_NONE, &err), 0);
	int rc = rk_oracle_add_gavel_throughputs(f->o, file, strlen(file), "t.json", "v100", &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, 0);
}

/* Seconds per step on GPUs "digits[i]" of node i; returns the lookup's code. */
static int ask(struct fx *f, const char *digits, double *iter_s, struct rk_oracle_result *res)
{
	int n = (int)strlen(digits), g = 0;
	for (int i = 0; i < n; i++) {
		f->shares[i] = (struct rk_share){.node = i, .gpus = digits[i] - '0', .cpus = 4};
		g += digits[i] - '0';
	}
	f->alloc.n = n;
	f->alloc.shares = f->shares;
	struct rk_plan p = {.dp = g, .tp = 1, .pp = 1, .mb = 64 / g, .ga = 1};
	struct rk_error err;
	int rc = rk_oracle_lookup(f->o, &f->job, &p, &f->alloc, &f->cl, res, &err);
	if (rc == 0)
		*iter_s = res->iter_s;
	return rc;
}

static void rules(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f, "vvvv");
	struct rk_oracle_result r;
	double it = 0;
	assert_int_equal(ask(&f, "1", &it, &r), 0);
	assert_true(fabs(it - 0.25) < 1e-12); /* 1 / 4 steps/s */
	assert_int_equal(r.source, RK_ORACLE_SRC_GAVEL);
	assert_string_equal(rk_oracle_source_name(r.source), "gavel");
	assert_int_equal(ask(&f, "22", &it, &r), 0); /* 4 GPUs over 2 nodes: same as on one */
	assert_true(fabs(it - 0.1) < 1e-12);
	assert_int_equal(ask(&f, "4", &it, &r), 0);
	assert_true(fabs(it - 0.1) < 1e-12);
	assert_int_equal(ask(&f, "2", &it, &r), 0); /* no 2-GPU key: 4 steps/s x 2 / 1 */
	assert_true(fabs(it - 0.125) < 1e-12);
	assert_int_equal(ask(&f, "8", &it, &r), 0); /* nearest below is 4: 10 x 8 / 4 */
	assert_true(fabs(it - 0.05) < 1e-12);
	/* node 0 made a k80: 1 step/s; its 4-GPU figure is a measured 0 */
	snprintf(f.nodes[0].gpu_type, sizeof(f.nodes[0].gpu_type), "k80");
	assert_int_equal(ask(&f, "1", &it, &r), 0);
	assert_true(fabs(it - 1.0) < 1e-12);
	assert_int_equal(ask(&f, "4", &it, &r), RK_EINFEASIBLE);
	/* 1 v100 + 1 k80 (2 GPUs, scaled from 1): the k80's pace, 2 x 1 step/s */
	assert_int_equal(ask(&f, "11", &it, &r), 0);
	assert_true(fabs(it - 0.5) < 1e-12);
	/* a type the file lacks: the reference (v100) figure */
	snprintf(f.nodes[0].gpu_type, sizeof(f.nodes[0].gpu_type), "a800");
	assert_int_equal(ask(&f, "1", &it, &r), 0);
	assert_true(fabs(it - 0.25) < 1e-12);
	struct rk_oracle_gavel_stats st;
	rk_oracle_gavel_stats_get(f.o, &st);
	assert_int_equal(st.lookups, 8);
	assert_int_equal(st.scaled, 3);
	assert_int_equal(st.other_type, 1);
	/* a job type the file does not hold goes to the other rules (none here) */
	snprintf(f.job.job_type, sizeof(f.job.job_type), "A3C");
	assert_int_equal(ask(&f, "1", &it, &r), RK_ENOTFOUND);
	assert_int_equal(rk_oracle_gavel_knows(f.o, "A3C"), 0);
	assert_int_equal(rk_oracle_gavel_knows(f.o, "ResNet-50 (batch size 64)"), 1);
	assert_int_equal(rk_oracle_gavel_ref_iter_s(f.o, "ResNet-50 (batch size 64)", 4, &it), 0);
	assert_true(fabs(it - 0.1) < 1e-12);
	assert_string_equal(rk_oracle_gavel_ref_type(f.o), "v100");
	assert_int_equal(rk_oracle_gavel_has_type(f.o, "K80"), 1);
	assert_int_equal(rk_oracle_gavel_has_type(f.o, "a800"), 0);
	assert_int_equal(rk_oracle_gavel_has_type(f.o, "v100_unconsolidated"), 0);
	rk_oracle_destroy(f.o);
}

static void errors(void **state)
{
	(void)state;
	struct rk_oracle *o;
	struct rk_error err;
	assert_int_equal(rk_oracle_create_measured(&o, NULL, RK_ORACLE_FALLBACK_NONE, &err), 0);
	const char *bad[] = {
	    "{\"v100\": ",
	    "[1]",
	    "{\"v100\": 3}",
	    "{\"v100\": {\"(bad)\": {\"null\": 1}}}",
	    "{\"v100\": {\"('A', 0)\": {\"null\": 1}}}",
	    "{\"v100\": {\"('A', 1)\": {\"null\": -1}}}",
	    "{\"v100\": {\"('A', 1)\": {}}}",
	    "{\"v100\": {}}",
	    "{\"k80\": {\"('A', 1)\": {\"null\": 1}}}",
	};
	const char *why[] = {
	    "f.json:1:",
	    "expected an object of GPU types",
	    "expected an object of job types",
	    "expected a key",
	    "expected a key",
	    "missing or negative",
	    "missing or negative",
	    "no throughputs",
	    "reference GPU type 'v100' is not in the file",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = rk_oracle_add_gavel_throughputs(o, bad[i], strlen(bad[i]), "f.json",
		                                         "v100", &err);
		assert_true(rc < 0);
		if (!strstr(err.msg, why[i]))
			fail_msg("%s: got '%s', want '%s'", bad[i], err.msg, why[i]);
	}
	assert_int_equal(rk_oracle_gavel_knows(o, "A"), 0); /* nothing kept from failures */
	const char *ok = "{\"v100\": {\"('A', 1)\": {\"null\": 2}}}";
	assert_int_equal(rk_oracle_add_gavel_throughputs(o, ok, strlen(ok), "f.json", "v100", &err),
	                 0);
	assert_int_equal(rk_oracle_add_gavel_throughputs(o, ok, strlen(ok), "g.json", "v100", &err),
	                 RK_EEXIST);
	assert_non_null(strstr(err.msg, "already holds throughputs from f.json"));
	rk_oracle_destroy(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(rules),
	    cmocka_unit_test(errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
