/* Measured plan x placement tables (measured.c): the three layouts, the
 * documented traps, and every documented error with its line and column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rubick/measured.h"

#include <stdio.h>
#include <string.h>

static int parse(const char *text, struct rk_measured *t, struct rk_error *err)
{
	return rk_measured_parse(text, strlen(text), "p.csv", t, err);
}

static void test_full_layout(void **state)
{
	(void)state;
	/* BOM, CRLF, ms phases in one row, seconds in another */
	const char *text = "\xEF\xBB\xBF"
			   "exec_plan,placement,iter_time,forward,overlap_sync,optimize\r\n"
			   "ga,11,0.44,118.5,288.1,25.3\r\n"
			   "zero-dp,233,0.34,0.034,0.25,0.034\r\n"
			   "244,8888,0.94,0,666.2,24.3\r\n";
	struct rk_measured t;
	struct rk_error err;
	assert_int_equal(parse(text, &t, &err), 0);
	assert_int_equal(t.n_rows, 3);
	assert_true(t.has_phases);
	assert_false(t.has_cpu_threads);
	assert_string_equal(t.rows[0].plan, "ga");
	assert_int_equal(t.rows[0].line, 2);
	assert_int_equal(t.rows[0].placement.n_nodes, 2);
	assert_int_equal(rk_measured_row_gpus(&t.rows[1]), 8);
	assert_false(t.rows[0].phases_in_s);
	assert_float_equal(t.rows[0].fwd_ms, 118.5, 1e-9);
	assert_true(t.rows[1].phases_in_s);
	assert_float_equal(t.rows[1].sync_ms, 250, 1e-9);
	assert_false(t.rows[2].phases_in_s);
	assert_int_equal(t.n_phases_in_s, 1);
	assert_float_equal(t.rows[2].iter_s, 0.94, 1e-12);
	rk_measured_fini(&t);
	assert_int_equal(t.n_rows, 0);
}

static void test_cpu_threads_and_failed(void **state)
{
	(void)state;
	const char *text = "exec_plan,placement,cpu_threads,iter_time\n"
			   "242,4444,2,1.955\n"
			   "182,4444,2,0\n"
			   "\n"
			   "zero-offload+gc,1,4,46\n";
	struct rk_measured t;
	assert_int_equal(parse(text, &t, NULL), 0);
	assert_int_equal(t.n_rows, 3);
	assert_true(t.has_cpu_threads);
	assert_false(t.has_phases);
	assert_int_equal(t.rows[0].cpu_threads, 2);
	assert_true(t.rows[1].failed);
	assert_int_equal(t.n_failed, 1);
	assert_int_equal(t.rows[2].line, 5);
	assert_string_equal(t.rows[2].plan, "zero-offload+gc");
	rk_measured_fini(&t);
	/* the 3-column layout, any column order */
	assert_int_equal(parse("placement,iter_time,exec_plan\n2,3.27,tp+ga\n", &t, NULL), 0);
	assert_string_equal(t.rows[0].plan, "tp+ga");
	assert_float_equal(t.rows[0].iter_s, 3.27, 1e-12);
	rk_measured_fini(&t);
}

static void expect_error(const char *text, int code, const char *where, const char *what)
{
	struct rk_measured t;
	struct rk_error err = {0};
	assert_int_equal(parse(text, &t, &err), code);
	assert_int_equal(err.code, code);
	if (!strstr(err.msg, where) || !strstr(err.msg, what))
		fail_msg("message '%s' lacks '%s' or '%s'", err.msg, where, what);
	assert_int_equal(t.n_rows, 0);
	assert_null(t.rows);
}

static void test_errors(void **state)
{
	(void)state;
	const char *h = "exec_plan,placement,iter_time\n";
	char buf[256];
	expect_error("", RK_EINVAL, "p.csv:1:1", "empty");
	expect_error("exec_plan,placement,iter_time\n", RK_EINVAL, "p.csv:2:1", "no data rows");
	expect_error("exec_plan,placement,speed\nga,1,1\n", RK_EINVAL, "p.csv:1:21",
		     "unknown column 'speed'");
	expect_error("exec_plan,placement,placement,iter_time\n", RK_EINVAL, "p.csv:1:21",
		     "duplicate column");
	expect_error("exec_plan,placement\nga,1\n", RK_EINVAL, "p.csv:1:1",
		     "missing column 'iter_time'");
	expect_error("exec_plan,placement,iter_time,forward\nga,1,1,1\n", RK_EINVAL, "p.csv:1:1",
		     "come together");
	snprintf(buf, sizeof(buf), "%sga,1\n", h);
	expect_error(buf, RK_EINVAL, "p.csv:2:1", "2 fields, the header has 3");
	snprintf(buf, sizeof(buf), "%sga,1,1,7\n", h);
	expect_error(buf, RK_EINVAL, "p.csv:2:", "4 fields");
	snprintf(buf, sizeof(buf), "%s,1,1\n", h);
	expect_error(buf, RK_EINVAL, "p.csv:2:1", "exec_plan: empty");
	snprintf(buf, sizeof(buf), "%sga,1201,1\n", h);
	expect_error(buf, RK_EINVAL, "p.csv:2:6", "'0' is not a GPU count");
	snprintf(buf, sizeof(buf), "%sga,,1\n", h);
	expect_error(buf, RK_EINVAL, "p.csv:2:4", "placement: empty");
	snprintf(buf, sizeof(buf), "%sga,1,fast\n", h);
	expect_error(buf, RK_EINVAL, "p.csv:2:6", "'fast' is not a number");
	snprintf(buf, sizeof(buf), "%sga,1,-2\n", h);
	expect_error(buf, RK_ERANGE, "p.csv:2:6", "negative");
	snprintf(buf, sizeof(buf), "%sga,1,inf\n", h);
	expect_error(buf, RK_ERANGE, "p.csv:2:6", "not a finite");
	expect_error("exec_plan,placement,cpu_threads,iter_time\nga,1,0,1\n", RK_ERANGE,
		     "p.csv:2:6", "cpu_threads");
	expect_error("exec_plan,placement,iter_time\nga,1,1\nzero-dp,1,x\n", RK_EINVAL,
		     "p.csv:3:11", "iter_time");
	char big[100];
	memset(big, '1', 80);
	big[80] = '\0';
	snprintf(buf, sizeof(buf), "%sga,%s,1\n", h, big);
	expect_error(buf, RK_ERANGE, "p.csv:2:4", "at most 64");
}

static void test_nul_byte(void **state)
{
	(void)state;
	const char text[] = "exec_plan,placement,iter_time\nga,1,1\0x\n";
	struct rk_measured t;
	struct rk_error err;
	assert_int_equal(rk_measured_parse(text, sizeof(text) - 1, "p.csv", &t, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "p.csv:2:7: NUL byte"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_layout),
		cmocka_unit_test(test_cpu_threads_and_failed),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_nul_byte),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
