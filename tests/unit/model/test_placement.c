/*
 * Placements (plan.h): both text forms, every documented error with its
 * column, totals, the consolidated layout and the tensor-group rule.
 */
#include "rubick/plan.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static void test_parse_format(void **state)
{
	(void)state;
	struct rk_placement p;
	char buf[RK_PLACEMENT_TEXT_MAX];
	assert_int_equal(rk_placement_parse("8888", "t", &p, NULL), 0);
	assert_int_equal(p.n_nodes, 4);
	assert_int_equal(rk_placement_total(&p), 32);
	assert_int_equal(rk_placement_format(&p, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "8888");
	assert_int_equal(rk_placement_parse("111122", "t", &p, NULL), 0);
	assert_int_equal(rk_placement_total(&p), 8);
	assert_int_equal(p.gpus[5], 2);
	/* Comma form for nodes of more than 9 GPUs; printed back the same. */
	assert_int_equal(rk_placement_parse("16,16", "t", &p, NULL), 0);
	assert_int_equal(p.n_nodes, 2);
	assert_int_equal(rk_placement_total(&p), 32);
	assert_int_equal(rk_placement_format(&p, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "16,16");
	/* A comma list of small nodes prints in the digit form. */
	assert_int_equal(rk_placement_parse("8,8,4", "t", &p, NULL), 0);
	rk_placement_format(&p, buf, sizeof(buf));
	assert_string_equal(buf, "884");
	assert_int_equal(rk_placement_parse("12,4", "t", &p, NULL), 0);
	rk_placement_format(&p, buf, sizeof(buf));
	assert_string_equal(buf, "12,4");
	/* 64 nodes is the limit. */
	char many[80];
	memset(many, '1', 64);
	many[64] = '\0';
	assert_int_equal(rk_placement_parse(many, "t", &p, NULL), 0);
	assert_int_equal(rk_placement_total(&p), 64);
	assert_int_equal(rk_placement_total(NULL), 0);
	/* Format errors. */
	char small[3];
	assert_int_equal(rk_placement_parse("8888", "t", &p, NULL), 0);
	assert_int_equal(rk_placement_format(&p, small, sizeof(small)), RK_ERANGE);
	p.gpus[1] = 0;
	assert_int_equal(rk_placement_format(&p, buf, sizeof(buf)), RK_EINVAL);
	p.n_nodes = RK_PLACEMENT_MAX_NODES + 1;
	assert_int_equal(rk_placement_format(&p, buf, sizeof(buf)), RK_EINVAL);
	assert_int_equal(rk_placement_format(NULL, buf, sizeof(buf)), RK_EINVAL);
}

static void test_parse_errors(void **state)
{
	(void)state;
	char many[80];
	memset(many, '2', 65);
	many[65] = '\0';
	const struct {
		const char *text;
		int code;
		const char *prefix, *phrase;
	} cases[] = {
		{"", RK_EINVAL, "--placement:1:1:", "empty placement"},
		{"880", RK_ERANGE, "--placement:1:3:", "0 GPUs"},
		{"8a8", RK_EINVAL, "--placement:1:2:", "unexpected character 'a'"},
		{"8 8", RK_EINVAL, "--placement:1:2:", "unexpected character ' '"},
		{"-8", RK_EINVAL, "--placement:1:1:", "unexpected character '-'"},
		{many, RK_ERANGE, "--placement:1:65:", "too many nodes"},
		{"16,", RK_EINVAL, "--placement:1:3:", "trailing ','"},
		{",16", RK_EINVAL, "--placement:1:1:", "node 1"},
		{"16,,16", RK_EINVAL, "--placement:1:4:", "node 2"},
		{"16,0", RK_ERANGE, "--placement:1:4:", "1..1024, got 0"},
		{"16,99999", RK_ERANGE, "--placement:1:4:", "1..1024"},
		{"16,8x", RK_EINVAL, "--placement:1:5:", "unexpected character 'x'"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rk_placement p = {.n_nodes = 7};
		struct rk_error err;
		int rc = rk_placement_parse(cases[i].text, "--placement", &p, &err);
		if (rc != cases[i].code ||
		    strncmp(err.msg, cases[i].prefix, strlen(cases[i].prefix)) ||
		    !strstr(err.msg, cases[i].phrase))
			fail_msg("'%s': rc %d, msg '%s'", cases[i].text, rc, err.msg);
		assert_int_equal(p.n_nodes, 7); /* untouched on failure */
	}
	/* 65 comma-separated nodes. */
	char list[300] = "";
	for (int i = 0; i < 65; i++)
		strcat(list, i ? ",1" : "1");
	struct rk_placement p;
	struct rk_error err;
	assert_int_equal(rk_placement_parse(list, "x", &p, &err), RK_ERANGE);
	assert_non_null(strstr(err.msg, "too many nodes"));
	assert_int_equal(rk_placement_parse(NULL, "x", &p, &err), RK_EINVAL);
	assert_int_equal(rk_placement_parse("8", "x", NULL, &err), RK_EINVAL);
	assert_int_equal(rk_placement_parse("0", NULL, &p, &err), RK_ERANGE);
	assert_non_null(strstr(err.msg, "placement:1:1:"));
}

static void test_consolidated(void **state)
{
	(void)state;
	struct rk_placement p;
	char buf[RK_PLACEMENT_TEXT_MAX];
	struct rk_error err;
	const struct {
		int gpus, node;
		const char *text;
	} cases[] = {{1, 8, "1"}, {8, 8, "8"}, {9, 8, "81"}, {20, 8, "884"},
		     {64, 8, "88888888"}, {32, 16, "16,16"}, {5, 4, "41"}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(rk_placement_consolidated(cases[i].gpus, cases[i].node, &p, &err),
				 0);
		rk_placement_format(&p, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].text);
		assert_int_equal(rk_placement_total(&p), cases[i].gpus);
	}
	assert_int_equal(rk_placement_consolidated(0, 8, &p, &err), RK_EINVAL);
	assert_int_equal(rk_placement_consolidated(8, 0, &p, &err), RK_EINVAL);
	assert_int_equal(rk_placement_consolidated(65 * 8, 8, &p, &err), RK_ERANGE);
	assert_non_null(strstr(err.msg, "65 nodes"));
}

static void test_check_placement(void **state)
{
	(void)state;
	struct rk_placement pl;
	struct rk_error err;
	struct rk_plan p = {4, 4, 2, 1, 4, 0, 0, 0}; /* "244" on 32 GPUs */
	assert_int_equal(rk_placement_parse("8888", "t", &pl, NULL), 0);
	assert_int_equal(rk_plan_check_placement(&p, &pl, &err), 0);
	assert_int_equal(rk_placement_parse("44444444", "t", &pl, NULL), 0);
	assert_int_equal(rk_plan_check_placement(&p, &pl, &err), 0);
	/* tp = 4 on 6-GPU nodes: a group of ranks 4..7 spans nodes 1 and 2. */
	assert_int_equal(rk_placement_parse("66666666", "t", &pl, NULL), 0);
	p = (struct rk_plan){4, 4, 3, 1, 1, 0, 0, 0};
	assert_int_equal(rk_plan_check_placement(&p, &pl, &err), RK_EINFEASIBLE);
	assert_non_null(strstr(err.msg, "node 1"));
	/* GPU count mismatch. */
	assert_int_equal(rk_placement_parse("88", "t", &pl, NULL), 0);
	assert_int_equal(rk_plan_check_placement(&p, &pl, &err), RK_EINFEASIBLE);
	assert_non_null(strstr(err.msg, "16"));
	struct rk_placement empty = {0};
	assert_int_equal(rk_plan_check_placement(&p, &empty, &err), RK_EINVAL);
	assert_int_equal(rk_plan_check_placement(NULL, &pl, &err), RK_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_format),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_consolidated),
		cmocka_unit_test(test_check_placement),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
