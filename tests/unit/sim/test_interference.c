/*
 * Interference tables from Gavel-layout throughput JSON (interference.h):
 * keys, xi = isolated / paired (hand-computed), pairs that cannot co-run,
 * every documented error with its position, and the bundled tables.
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

#include "rubick/interference.h"

static void test_key(void **st)
{
	(void)st;
	char type[RK_XI_TYPE_MAX];
	int sf = 0;
	assert_int_equal(rk_xi_parse_key("('ResNet-50 (batch size 64)', 4)", type, &sf), 0);
	assert_string_equal(type, "ResNet-50 (batch size 64)");
	assert_int_equal(sf, 4);
	assert_int_equal(rk_xi_parse_key("('A3C', 1)", type, &sf), 0);
	assert_string_equal(type, "A3C");
	assert_int_equal(rk_xi_parse_key("('A3C', 0)", type, &sf), RK_EINVAL);
	assert_int_equal(rk_xi_parse_key("('A3C', 1", type, &sf), RK_EINVAL);
	assert_int_equal(rk_xi_parse_key("A3C", type, &sf), RK_EINVAL);
	assert_int_equal(rk_xi_parse_key("('', 1)", type, &sf), RK_EINVAL);
}

static const char *small =
    "{\"v100\": {\n"
    "  \"('A', 1)\": {\"null\": 10.0, \"('B', 1)\": [5.0, 8.0], \"('A', 1)\": [12.0, 12.0],\n"
    "               \"('C', 2)\": [0.0, 3.0]},\n"
    "  \"('B', 1)\": {\"null\": 16.0, \"('A', 1)\": [8.0, 5.0]},\n"
    "  \"('D', 1)\": {\"null\": 0.0, \"('A', 1)\": [0.0, 0.0]},\n"
    "  \"('E', 2)\": {\"null\": 5.0, \"('E', 2)\": [0.0, 0.0], \"('A', 1)\": [0.0, 0.0]}\n"
    "}}\n";

static void test_small_table(void **st)
{
	(void)st;
	struct rk_xi_table t;
	rk_xi_table_init(&t);
	struct rk_xi_parse_report rep;
	struct rk_error err;
	assert_int_equal(rk_xi_parse_gavel(&t, small, strlen(small), "s.json", &rep, &err), 0);
	assert_int_equal(rep.pairs, 3);    /* A-B, A-A (clamped), B-A */
	assert_int_equal(rep.no_corun, 1); /* A-C at 0 steps/s */
	assert_int_equal(rep.clamped, 1);  /* A with A: 12 > 10 isolated */
	assert_int_equal(rep.no_isolated, 1); /* D cannot run alone on v100: row skipped */
	/* E's row has no pair above 0: never measured co-located (Gavel's 2-8 GPU rows). */
	assert_int_equal(rep.unmeasured, 2);
	assert_int_equal(rk_xi_table_finish(&t), 0);
	/* Measured together either way round; A-C measured unable (either order); the
	 * rest not measured (E's zeros included), where the memory model decides. */
	assert_int_equal(rk_xi_corun(&t, "v100", "A", 1, "B", 1), 1);
	assert_int_equal(rk_xi_corun(&t, "v100", "B", 1, "A", 1), 1);
	assert_int_equal(rk_xi_corun(&t, "v100", "B", 1, "B", 1), 0);
	assert_int_equal(rk_xi_corun(&t, "v100", "A", 1, "C", 2), -1);
	assert_int_equal(rk_xi_corun(&t, "v100", "C", 2, "A", 1), -1);
	assert_int_equal(rk_xi_corun(&t, "v100", "E", 2, "E", 2), 0);
	assert_int_equal(rk_xi_corun(&t, "v100", "E", 2, "A", 1), 0);
	assert_int_equal(rk_xi_corun(&t, "a800", "A", 1, "B", 1), 0); /* per GPU type */
	assert_int_equal(rk_xi_table_measures(&t, "v100"), 1);
	assert_int_equal(rk_xi_table_measures(&t, "a800"), 0);
	/* The interned answers are the table's. */
	struct rk_xi_pairs ps;
	rk_xi_pairs_init(&ps);
	int sa = rk_xi_pairs_side(&ps, "v100", "A", 1), sc = rk_xi_pairs_side(&ps, "v100", "C", 2);
	int sb = rk_xi_pairs_side(&ps, "v100", "B", 1);
	assert_true(sa >= 0 && sb >= 0 && sc >= 0);
	assert_int_equal(rk_xi_pairs_corun(&ps, &t, sa, sb), 1);
	assert_int_equal(rk_xi_pairs_corun(&ps, &t, sa, sc), -1);
	assert_int_equal(rk_xi_pairs_corun(&ps, &t, sb, sb), 0);
	assert_true(rk_xi_pairs_get(&ps, &t, sa, sb) == 2.0);
	rk_xi_pairs_fini(&ps);
	enum rk_xi_how how;
	/* A with B: 10 / 5 = 2; B with A: 16 / 8 = 2; A with A clamped to 1. */
	assert_true(rk_xi_lookup(&t, "v100", "A", 1, "B", 1, &how) == 2.0);
	assert_int_equal(how, RK_XI_EXACT);
	assert_true(rk_xi_lookup(&t, "v100", "B", 1, "A", 1, &how) == 2.0);
	assert_true(rk_xi_lookup(&t, "v100", "A", 1, "A", 1, &how) == 1.0);
	rk_xi_table_fini(&t);
}

static void expect_error(const char *text, const char *needle)
{
	struct rk_xi_table t;
	rk_xi_table_init(&t);
	struct rk_xi_parse_report rep;
	struct rk_error err;
	assert_int_equal(rk_xi_parse_gavel(&t, text, strlen(text), "e.json", &rep, &err), RK_EINVAL);
	if (!strstr(err.msg, needle))
		fail_msg("message '%s' lacks '%s'", err.msg, needle);
	rk_xi_table_fini(&t);
}

static void test_errors(void **st)
{
	(void)st;
	expect_error("{\"v100\": {\n  \"('A', 1)\": {\"null\": 1,}}}", "e.json:2:");
	expect_error("[1, 2]", "e.json:1:1: expected an object of GPU types");
	expect_error("{\"v100\": 3}", "e.json: v100: expected an object of job types");
	expect_error("{\"v100\": {\"A\": {\"null\": 1}}}", "e.json: v100/A: expected a key");
	expect_error("{\"v100\": {\"('A', 1)\": {\"null\": -1}}}", "v100/('A', 1): missing or negative");
	expect_error("{\"v100\": {\"('A', 1)\": {\"null\": 1, \"B\": [1, 1]}}}", "v100/B: expected a partner key");
	expect_error("{\"v100\": {\"('A', 1)\": {\"null\": 1, \"('B', 1)\": [1]}}}",
		     "v100/('B', 1): expected [throughput self, throughput other]");
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf)
		buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

/* The bundled Gavel table: a value read by hand from the JSON. */
static void test_bundled_gavel(void **st)
{
	(void)st;
	const char *dir = getenv("RK_DATA_DIR");
	if (!dir)
		skip();
	char path[1024];
	snprintf(path, sizeof(path), "%s/interference/gavel_simulation_throughputs.json", dir);
	size_t len = 0;
	char *text = slurp(path, &len);
	assert_non_null(text);
	struct rk_xi_table t;
	rk_xi_table_init(&t);
	struct rk_xi_parse_report rep;
	struct rk_error err;
	int rc = rk_xi_parse_gavel(&t, text, len, path, &rep, &err);
	free(text);
	if (rc)
		fail_msg("%s", err.msg);
	assert_true(rep.pairs > 1000);
	assert_int_equal(rk_xi_table_finish(&t), 0);
	enum rk_xi_how how;
	/* v100 ResNet-18 bs16 isolated 32.353384328946916, with ResNet-18 bs256: 24.45464779058787. */
	double xi = rk_xi_lookup(&t, "v100", "ResNet-18 (batch size 16)", 1,
				 "ResNet-18 (batch size 256)", 1, &how);
	assert_int_equal(how, RK_XI_EXACT);
	assert_true(fabs(xi - 32.353384328946916 / 24.45464779058787) < 1e-12);
	/* The median of the v100 pairs is a plausible slowdown (between no and full slicing). */
	double med = rk_xi_lookup(&t, "v100", "nosuch", 1, "other", 1, &how);
	assert_int_equal(how, RK_XI_GPU_MEDIAN);
	assert_true(med > 1.0 && med < 2.0);
	/* Gavel measured 1-GPU pairs only: on v100 40 of the 676 ordered pairs ran at 0
	 * steps/s (e.g. ResNet-50 bs128 with LM bs5, in the JSON as [0.0, 0.0]); every
	 * 2-8 GPU pair is 0 in rows with no pair above 0, i.e. never measured. */
	assert_int_equal(
	    rk_xi_corun(&t, "v100", "ResNet-50 (batch size 128)", 1, "LM (batch size 5)", 1), -1);
	assert_int_equal(
	    rk_xi_corun(&t, "v100", "LM (batch size 5)", 1, "ResNet-50 (batch size 128)", 1), -1);
	assert_int_equal(rk_xi_corun(&t, "v100", "ResNet-18 (batch size 16)", 1,
	                             "ResNet-18 (batch size 256)", 1),
	                 1);
	assert_int_equal(
	    rk_xi_corun(&t, "v100", "ResNet-18 (batch size 16)", 2, "ResNet-18 (batch size 16)", 2),
	    0);
	int nc_v100 = 0;
	for (int i = 0; i < t.n_nc; i++)
		nc_v100 += !strcmp(t.nc[i].gpu_type, "v100");
	assert_int_equal(nc_v100, 40);
	rk_xi_table_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_small_table),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_bundled_gavel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
