/*
 * Plans (plan.h): canonical text round trip, every documented parse error with
 * its column, the invariants, the artifact's plan names and enumeration
 * (against a brute-force search of the whole plan space).
 */
#include "rubick/memory.h"
#include "rubick/model.h"
#include "rubick/plan.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_fixture.h"

static void test_round_trip(void **state)
{
	(void)state;
	const char *texts[] = {
		"dp=4,tp=2,pp=1,mb=2,ga=1,gc=0,zero=0,offload=0",
		"dp=1,tp=1,pp=1,mb=1,ga=64,gc=1,zero=2,offload=1",
		"dp=8,tp=1,pp=1,mb=1,ga=1,gc=0,zero=3,offload=0",
		"dp=2,tp=4,pp=8,mb=1,ga=4,gc=1,zero=0,offload=0",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct rk_plan p;
		struct rk_error err;
		assert_int_equal(rk_plan_parse(texts[i], "t", &p, &err), 0);
		char buf[RK_PLAN_TEXT_MAX];
		int n = rk_plan_format(&p, buf, sizeof(buf));
		assert_int_equal(n, (int)strlen(texts[i]));
		assert_string_equal(buf, texts[i]);
	}
	/* Any key order parses to the same plan, printed canonically. */
	struct rk_plan a, b;
	assert_int_equal(rk_plan_parse("offload=0,zero=1,gc=1,ga=2,mb=4,pp=1,tp=1,dp=2", "t", &a,
				       NULL),
			 0);
	assert_int_equal(rk_plan_parse("dp=2,tp=1,pp=1,mb=4,ga=2,gc=1,zero=1,offload=0", "t", &b,
				       NULL),
			 0);
	assert_true(rk_plan_equal(&a, &b));
	b.gc = 0;
	assert_false(rk_plan_equal(&a, &b));
	/* Format: too small a buffer. */
	char small[10];
	assert_int_equal(rk_plan_format(&a, small, sizeof(small)), RK_ERANGE);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_int_equal(rk_plan_format(NULL, small, sizeof(small)), RK_EINVAL);
}

/* Every parse error: code, and the "NAME:1:COL:" prefix and a key phrase. */
static void test_parse_errors(void **state)
{
	(void)state;
	const struct {
		const char *text;
		int code;
		const char *prefix, *phrase;
	} cases[] = {
		{"", RK_EINVAL, "--plan:1:1:", "empty plan"},
		{"dp=1,,tp=1", RK_EINVAL, "--plan:1:6:", "empty field"},
		{"dp=1,tp=1,pp=1,mb=1,ga=1,gc=0,zero=0,offload=0,", RK_EINVAL, "--plan:1:48:",
		 "trailing"},
		{"dp", RK_EINVAL, "--plan:1:1:", "KEY=VALUE"},
		{"dp=1,foo=2", RK_EINVAL, "--plan:1:6:", "unknown key 'foo'"},
		{"dp=1,dp=2", RK_EINVAL, "--plan:1:6:", "duplicate key 'dp'"},
		{"dp=x", RK_EINVAL, "--plan:1:4:", "not an integer"},
		{"dp=", RK_EINVAL, "--plan:1:4:", "not an integer"},
		{"dp=1.5", RK_EINVAL, "--plan:1:4:", "not an integer"},
		{"dp= 1", RK_EINVAL, "--plan:1:4:", "not an integer"},
		{"dp=-", RK_EINVAL, "--plan:1:4:", "not an integer"},
		{"dp=0", RK_ERANGE, "--plan:1:4:", "'dp' must be in 1..65536"},
		{"dp=-3", RK_ERANGE, "--plan:1:4:", "got -3"},
		{"dp=99999999999999999999", RK_ERANGE, "--plan:1:4:", "'dp'"},
		{"dp=1,tp=1,pp=1,mb=1,ga=1,gc=2", RK_ERANGE, "--plan:1:29:", "'gc' must be in 0..1"},
		{"dp=1,zero=4", RK_ERANGE, "--plan:1:11:", "'zero' must be in 0..3"},
		{"dp=1,offload=7", RK_ERANGE, "--plan:1:14:", "'offload'"},
		{"dp=1,tp=1,pp=1,mb=1,ga=1,gc=0,zero=0", RK_EINVAL, "--plan:1:37:",
		 "missing key 'offload'"},
		{"tp=1,pp=1,mb=1,ga=1,gc=0,zero=0,offload=0", RK_EINVAL, "--plan:1:42:",
		 "missing key 'dp'"},
		{"dp=1,tp=1,pp=1,mb=1,ga=1,gc=0,zero=0,offload=1", RK_EINVAL, "--plan:1:38:",
		 "needs zero >= 1"},
		{"dp=1,tp=2,pp=1,mb=1,ga=1,gc=0,zero=1,offload=0", RK_EINVAL, "--plan:1:31:",
		 "exclude ZeRO"},
		{"dp=1,tp=1,pp=2,mb=1,ga=1,gc=0,zero=2,offload=1", RK_EINVAL, "--plan:1:31:",
		 "exclude ZeRO"},
		{"dp=1;tp=1", RK_EINVAL, "--plan:1:4:", "not an integer"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rk_plan p = {7, 7, 7, 7, 7, 7, 7, 7};
		struct rk_error err;
		int rc = rk_plan_parse(cases[i].text, "--plan", &p, &err);
		if (rc != cases[i].code || strncmp(err.msg, cases[i].prefix,
						   strlen(cases[i].prefix)) ||
		    !strstr(err.msg, cases[i].phrase))
			fail_msg("'%s': rc %d, msg '%s'", cases[i].text, rc, err.msg);
		assert_int_equal(err.code, cases[i].code);
		assert_int_equal(p.dp, 7); /* untouched on failure */
	}
	struct rk_error err;
	struct rk_plan p;
	assert_int_equal(rk_plan_parse(NULL, "x", &p, &err), RK_EINVAL);
	assert_int_equal(rk_plan_parse("dp=1", "x", NULL, &err), RK_EINVAL);
	/* NULL name and NULL err are fine. */
	assert_int_equal(rk_plan_parse("dp=0", NULL, &p, NULL), RK_ERANGE);
	assert_int_equal(rk_plan_parse("dp=0", NULL, &p, &err), RK_ERANGE);
	assert_non_null(strstr(err.msg, "plan:1:4:"));
}

static void test_validate(void **state)
{
	(void)state;
	struct rk_error err;
	struct rk_plan ok = {4, 2, 1, 2, 1, 0, 0, 0};
	assert_int_equal(rk_plan_validate(&ok, 8, 8, &err), 0);
	struct rk_plan p = ok;
	p.ga = 2;
	assert_int_equal(rk_plan_validate(&p, 8, 8, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "global batch is 8"));
	assert_int_equal(rk_plan_validate(&ok, 8, 16, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "16 GPUs"));
	p = ok;
	p.tp = 1;
	p.dp = 8;
	p.mb = 1;
	p.offload = 1;
	assert_int_equal(rk_plan_validate(&p, 8, 8, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "offload"));
	p = ok;
	p.zero = 1;
	assert_int_equal(rk_plan_validate(&p, 8, 8, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "exclude ZeRO"));
	p = ok;
	p.mb = 0;
	assert_int_equal(rk_plan_validate(&p, 8, 8, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "'mb'"));
	p = ok;
	p.zero = 5;
	assert_int_equal(rk_plan_validate(&p, 8, 8, &err), RK_EINVAL);
	assert_int_equal(rk_plan_validate(&ok, 0, 8, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "global batch"));
	assert_int_equal(rk_plan_validate(&ok, 8, 0, &err), RK_EINVAL);
	assert_int_equal(rk_plan_validate(NULL, 8, 8, &err), RK_EINVAL);
	/* Overflowing products are caught, not wrapped. */
	p = (struct rk_plan){65536, 65536, 65536, 1, 1, 0, 0, 0};
	assert_int_equal(rk_plan_validate(&p, 8, 8, &err), RK_EINVAL);
}

static void test_from_artifact(void **state)
{
	(void)state;
	struct rk_model m = fx_llama7(0);
	struct rk_placement pl;
	struct rk_plan p;
	struct rk_error err;
	assert_int_equal(rk_placement_parse("8888", "t", &pl, NULL), 0);
	assert_int_equal(rk_plan_from_artifact("244", "t", &m, 16, &pl, 81920, &p, &err), 0);
	assert_int_equal(p.pp, 2);
	assert_int_equal(p.tp, 4);
	assert_int_equal(p.dp, 4);
	assert_int_equal(p.mb, 1);
	assert_int_equal(p.ga, 4);
	assert_int_equal(rk_plan_validate(&p, 16, 32, NULL), 0);
	/* Digits must multiply to the GPUs; dp must divide the batch. */
	assert_int_equal(rk_plan_from_artifact("248", "t", &m, 16, &pl, 81920, &p, &err),
			 RK_EINVAL);
	assert_non_null(strstr(err.msg, "placement has 32"));
	assert_int_equal(rk_placement_parse("88888888", "t", &pl, NULL), 0);
	assert_int_equal(rk_plan_from_artifact("881", "t", &m, 4, &pl, 81920, &p, &err), 0);
	assert_int_equal(p.ga, 4);
	assert_int_equal(rk_plan_from_artifact("188", "t", &m, 4, &pl, 81920, &p, &err),
			 RK_EINVAL);
	assert_non_null(strstr(err.msg, "does not divide"));

	/* DP family: the largest micro-batch that fits. */
	struct rk_model t = fx_tiny();
	assert_int_equal(rk_placement_parse("2", "t", &pl, NULL), 0);
	assert_int_equal(rk_plan_from_artifact("ga", "t", &t, 8, &pl, 81920, &p, &err), 0);
	assert_int_equal(p.dp, 2);
	assert_int_equal(p.mb, 4);
	assert_int_equal(p.ga, 1);
	assert_int_equal(p.zero, 0);
	/* LLaMA-7B ZeRO-Offload on one GPU: the plain plan cannot hold 8 samples. */
	assert_int_equal(rk_placement_parse("1", "t", &pl, NULL), 0);
	assert_int_equal(rk_plan_from_artifact("zero-offload", "t", &m, 8, &pl, 81920, &p, &err),
			 0);
	assert_int_equal(p.zero, 2);
	assert_int_equal(p.offload, 1);
	assert_true(p.mb < 8);
	assert_int_equal(p.mb * p.ga, 8);
	assert_int_equal(rk_memory_check(&m, &p, &pl, 81920, RK_MEM_UNLIMITED, NULL, NULL), 0);
	struct rk_plan bigger = p;
	for (bigger.mb = p.mb + 1; bigger.mb <= 8 && 8 % bigger.mb; bigger.mb++)
		;
	bigger.ga = 8 / bigger.mb;
	assert_int_equal(rk_memory_check(&m, &bigger, &pl, 81920, RK_MEM_UNLIMITED, NULL, NULL),
			 RK_EINFEASIBLE);
	/* Nothing fits: mb = 1, so the caller's memory check reports it. */
	assert_int_equal(rk_plan_from_artifact("ga", "t", &m, 8, &pl, 81920, &p, &err), 0);
	assert_int_equal(p.mb, 1);
	assert_int_equal(rk_memory_check(&m, &p, &pl, 81920, RK_MEM_UNLIMITED, NULL, &err),
			 RK_EINFEASIBLE);
	/* gc: the whole per-replica batch at once. */
	assert_int_equal(rk_plan_from_artifact("gc", "t", &t, 8, &pl, 81920, &p, &err), 0);
	assert_int_equal(p.gc, 1);
	assert_int_equal(p.mb, 8);
	assert_int_equal(rk_plan_from_artifact("zero-dp", "t", &t, 8, &pl, 81920, &p, &err), 0);
	assert_int_equal(p.zero, 2);
	assert_int_equal(p.offload, 0);
	assert_int_equal(rk_plan_from_artifact("zero-offload+gc", "t", &t, 8, &pl, 81920, &p,
					       &err),
			 0);
	assert_true(p.gc && p.offload);
	/* tp+ga: tensor parallel over one node. */
	assert_int_equal(rk_placement_parse("3", "t", &pl, NULL), 0);
	assert_int_equal(rk_plan_from_artifact("tp+ga", "t", &t, 6, &pl, 81920, &p, &err), 0);
	assert_int_equal(p.tp, 3);
	assert_int_equal(p.dp, 1);
	assert_int_equal(p.mb * p.ga, 6);
	assert_int_equal(rk_placement_parse("22", "t", &pl, NULL), 0);
	assert_int_equal(rk_plan_from_artifact("tp+ga", "t", &t, 8, &pl, 81920, &p, &err),
			 RK_EINVAL);
	assert_non_null(strstr(err.msg, "spans 2 nodes"));
	/* Batch that does not split; unknown names. */
	assert_int_equal(rk_placement_parse("3", "t", &pl, NULL), 0);
	assert_int_equal(rk_plan_from_artifact("ga", "t", &t, 8, &pl, 81920, &p, &err),
			 RK_EINVAL);
	assert_non_null(strstr(err.msg, "does not split"));
	const char *bad[] = {"", "dp", "GA", "24", "2440", "240", "ga+gc", "zero"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(rk_plan_from_artifact(bad[i], "f.csv:3", &t, 8, &pl, 81920, &p,
						       &err),
				 RK_EINVAL);
		assert_non_null(strstr(err.msg, "f.csv:3"));
	}
	assert_int_equal(rk_plan_from_artifact("ga", "t", NULL, 8, &pl, 81920, &p, &err),
			 RK_EINVAL);
	assert_int_equal(rk_plan_from_artifact("ga", "t", &t, 0, &pl, 81920, &p, &err),
			 RK_EINVAL);
	struct rk_placement empty = {0};
	assert_int_equal(rk_plan_from_artifact("ga", "t", &t, 8, &empty, 81920, &p, &err),
			 RK_EINVAL);
}

/* The rules of rk_plan_enumerate, written out independently. */
static int brute_ok(const struct rk_model *m, int B, const struct rk_placement *pl,
		    const struct rk_plan *p)
{
	int g = rk_placement_total(pl);
	if (rk_plan_validate(p, B, g, NULL))
		return 0;
	if (p->offload && p->zero < 2)
		return 0;
	if (p->tp > 1 || p->pp > 1) {
		if (!m->allow_3d || m->layers % p->pp || m->heads % p->tp)
			return 0;
		if (rk_plan_check_placement(p, pl, NULL))
			return 0;
	}
	return 1;
}

static void check_against_brute(const struct rk_model *m, int B, const char *placement)
{
	struct rk_placement pl;
	assert_int_equal(rk_placement_parse(placement, "t", &pl, NULL), 0);
	size_t cap = 4096, n = 0;
	struct rk_plan *v = calloc(cap, sizeof(*v));
	assert_non_null(v);
	assert_int_equal(rk_plan_enumerate(m, B, &pl, RK_MEM_UNLIMITED, RK_MEM_UNLIMITED, v, cap,
					   &n, NULL),
			 0);
	assert_true(n <= cap);
	int g = rk_placement_total(&pl);
	size_t expect = 0;
	for (int dp = 1; dp <= g; dp++)
		for (int tp = 1; tp <= g; tp++)
			for (int pp = 1; pp <= g; pp++)
				for (int mb = 1; mb <= B; mb++)
					for (int ga = 1; ga <= B; ga++)
						for (int gc = 0; gc < 2; gc++)
							for (int z = 0; z < 4; z++)
								for (int o = 0; o < 2; o++) {
	struct rk_plan p = {dp, tp, pp, mb, ga, gc, z, o};
	if (!brute_ok(m, B, &pl, &p))
		continue;
	expect++;
	size_t hits = 0;
	for (size_t i = 0; i < n; i++)
		hits += rk_plan_equal(&v[i], &p);
	if (hits != 1)
		fail_msg("%s B=%d: plan dp=%d tp=%d pp=%d mb=%d ga=%d gc=%d zero=%d off=%d found %zu "
			 "times",
			 placement, B, dp, tp, pp, mb, ga, gc, z, o, hits);
								}
	assert_int_equal(n, expect);
	free(v);
}

static void test_enumerate_matches_brute_force(void **state)
{
	(void)state;
	struct rk_model m = fx_tiny();
	check_against_brute(&m, 8, "4");
	check_against_brute(&m, 8, "22");
	check_against_brute(&m, 12, "33");
	check_against_brute(&m, 8, "8");
	check_against_brute(&m, 16, "1111");
	check_against_brute(&m, 6, "5"); /* 5 does not divide 6: no DP family */
	m.allow_3d = 0;
	check_against_brute(&m, 8, "4");
	m = fx_tiny();
	m.heads = 3; /* tp must divide heads: only tp = 1 or 3 */
	m.layers = 6;
	check_against_brute(&m, 12, "6");
}

static void test_enumerate_hand_count(void **state)
{
	(void)state;
	struct rk_model m = fx_tiny();
	struct rk_placement pl = {1, {4}};
	struct rk_plan v[128];
	size_t n;
	/* DP family: B/4 = 2 -> mb in {1,2}, gc 0/1, 6 ZeRO modes = 24.
	 * 3D: (pp,tp,dp) = (1,2,2) 6, (1,4,1) 8, (2,1,2) 6, (2,2,1) 8, (4,1,1) 8 = 36. */
	assert_int_equal(rk_plan_enumerate(&m, 8, &pl, RK_MEM_UNLIMITED, RK_MEM_UNLIMITED, v, 128,
					   &n, NULL),
			 0);
	assert_int_equal(n, 60);
	/* Order: DP family first, plain DP gc=0 mb=1 at the head. */
	struct rk_plan first = {4, 1, 1, 1, 2, 0, 0, 0};
	assert_true(rk_plan_equal(&v[0], &first));
	for (size_t i = 0; i < 24; i++)
		assert_true(v[i].tp == 1 && v[i].pp == 1);
	for (size_t i = 24; i < 60; i++)
		assert_true(v[i].tp > 1 || v[i].pp > 1);
	/* Deterministic, and a small array gets a prefix plus the full count. */
	struct rk_plan w[10];
	size_t n2;
	assert_int_equal(rk_plan_enumerate(&m, 8, &pl, RK_MEM_UNLIMITED, RK_MEM_UNLIMITED, w, 10,
					   &n2, NULL),
			 0);
	assert_int_equal(n2, 60);
	for (size_t i = 0; i < 10; i++)
		assert_true(rk_plan_equal(&v[i], &w[i]));
	assert_int_equal(rk_plan_enumerate(&m, 8, &pl, RK_MEM_UNLIMITED, RK_MEM_UNLIMITED, NULL, 0,
					   &n2, NULL),
			 0);
	assert_int_equal(n2, 60);
}

static void test_enumerate_memory_filter(void **state)
{
	(void)state;
	struct rk_model m = fx_llama7(0);
	struct rk_placement pl = {1, {1}};
	struct rk_plan v[256];
	size_t n;
	struct rk_error err;
	/* One 80 GB GPU: only ZeRO-Offload (2 bytes/param on the GPU) fits. */
	assert_int_equal(rk_plan_enumerate(&m, 8, &pl, 81920, RK_MEM_UNLIMITED, v, 256, &n, &err),
			 0);
	assert_true(n > 0);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(v[i].offload, 1);
		assert_int_equal(rk_memory_check(&m, &v[i], &pl, 81920, RK_MEM_UNLIMITED, NULL,
						 NULL),
				 0);
	}
	/* Host memory: a node with too little RAM for the offloaded states. */
	assert_int_equal(rk_plan_enumerate(&m, 8, &pl, 81920, 50000, v, 256, &n, &err), 0);
	assert_int_equal(n, 0);
	/* 8 GPUs: every plan returned fits, every plan left out does not. */
	pl = (struct rk_placement){1, {8}};
	size_t all, fit;
	struct rk_plan *a = calloc(4096, sizeof(*a));
	assert_int_equal(rk_plan_enumerate(&m, 8, &pl, RK_MEM_UNLIMITED, RK_MEM_UNLIMITED, a, 4096,
					   &all, NULL),
			 0);
	assert_int_equal(rk_plan_enumerate(&m, 8, &pl, 81920, RK_MEM_UNLIMITED, v, 256, &fit, NULL),
			 0);
	assert_true(fit > 0 && fit < all);
	size_t feasible = 0;
	for (size_t i = 0; i < all; i++)
		feasible += rk_memory_check(&m, &a[i], &pl, 81920, RK_MEM_UNLIMITED, NULL, NULL) ==
			    0;
	assert_int_equal(feasible, fit);
	free(a);
}

static void test_enumerate_errors(void **state)
{
	(void)state;
	struct rk_model m = fx_tiny();
	struct rk_placement pl = {1, {4}};
	struct rk_plan v[8];
	size_t n;
	struct rk_error err;
	assert_int_equal(rk_plan_enumerate(NULL, 8, &pl, 1, 1, v, 8, &n, &err), RK_EINVAL);
	assert_int_equal(rk_plan_enumerate(&m, 8, NULL, 1, 1, v, 8, &n, &err), RK_EINVAL);
	assert_int_equal(rk_plan_enumerate(&m, 8, &pl, 1, 1, v, 8, NULL, &err), RK_EINVAL);
	assert_int_equal(rk_plan_enumerate(&m, 8, &pl, 1, 1, NULL, 8, &n, &err), RK_EINVAL);
	assert_int_equal(rk_plan_enumerate(&m, 0, &pl, 1, 1, v, 8, &n, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "global batch"));
	assert_int_equal(rk_plan_enumerate(&m, 8, &pl, 0, 1, v, 8, &n, &err), RK_EINVAL);
	assert_int_equal(rk_plan_enumerate(&m, 8, &pl, 1, -1, v, 8, &n, &err), RK_EINVAL);
	struct rk_placement bad = {0};
	assert_int_equal(rk_plan_enumerate(&m, 8, &bad, 1, 1, v, 8, &n, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "0 nodes"));
	bad = (struct rk_placement){2, {4, 0}};
	assert_int_equal(rk_plan_enumerate(&m, 8, &bad, 1, 1, v, 8, &n, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "node 2"));
	struct rk_model bm = m;
	bm.hidden = 0;
	assert_int_equal(rk_plan_enumerate(&bm, 8, &pl, 1, 1, v, 8, &n, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "tiny"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_from_artifact),
		cmocka_unit_test(test_enumerate_matches_brute_force),
		cmocka_unit_test(test_enumerate_hand_count),
		cmocka_unit_test(test_enumerate_memory_filter),
		cmocka_unit_test(test_enumerate_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
