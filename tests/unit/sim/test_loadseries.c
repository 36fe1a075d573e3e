/* Inference-load series: the file format (every rejection names the line and
 * reason) and the seeded diurnal generator (issue 5, docs/aryl.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "rubick/loadseries.h"

static void test_parse_ok(void **state)
{
	(void)state;
	struct rk_load_series s;
	struct rk_error err;
	const char *txt = "t_s,servers_needed\n# comment\n0,12\n\n900, 14 # peak\n1800,3\r\n";
	assert_int_equal(rk_load_series_parse(&s, txt, "load.csv", &err), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.t_ms[1], 900000);
	assert_int_equal(s.need[1], 14);
	assert_int_equal(rk_load_series_at(&s, 0), 12);
	assert_int_equal(rk_load_series_at(&s, 899999), 12);
	assert_int_equal(rk_load_series_at(&s, 900000), 14);
	assert_int_equal(rk_load_series_at(&s, 99999999), 3);
	rk_load_series_fini(&s);
	/* A series that starts late needs nothing before its first sample. */
	assert_int_equal(rk_load_series_parse(&s, "60,5\n", "x", &err), 0);
	assert_int_equal(rk_load_series_at(&s, 0), 0);
	rk_load_series_fini(&s);
}

static void expect_bad(const char *txt, const char *want)
{
	struct rk_load_series s;
	struct rk_error err;
	assert_int_equal(rk_load_series_parse(&s, txt, "load.csv", &err), RK_EINVAL);
	if (!strstr(err.msg, want))
		fail_msg("got '%s', want '%s'", err.msg, want);
	assert_int_equal(s.n, 0);
}

static void test_parse_bad(void **state)
{
	(void)state;
	expect_bad("0,1\n60,-2\n", "load.csv:2:4: servers_needed");
	expect_bad("0,1\n60,2\n30,2\n", "load.csv:3:1: time 30 s out of order");
	expect_bad("0,1\n60,2\n60,2\n", "load.csv:3:1: time 60 s out of order");
	expect_bad("0,1\n60,2\n180,2\n", "load.csv:3:1: gap: 120 s after");
	expect_bad("0,1\n60,2\n90,2\n", "load.csv:3:1: irregular sample");
	expect_bad("0,1\n60\n", "load.csv:2:1: expected t_s,servers_needed");
	expect_bad("-5,1\n", "load.csv:1:1: t_s must be");
	expect_bad("0,abc\n", "load.csv:1:3: servers_needed");
	expect_bad("# nothing\n", "no samples");
	expect_bad("time,load\n0,1\n", "load.csv:1:1: t_s must be");
}

static void test_diurnal(void **state)
{
	(void)state;
	struct rk_diurnal d;
	struct rk_error err;
	rk_diurnal_default(&d);
	assert_int_equal(rk_diurnal_parse(&d, "servers=40,peak=0.8,trough=0.2,period=86400,seed=7,noise=0",
					  "--inference", &err), 0);
	struct rk_load_series s, s2;
	assert_int_equal(rk_diurnal_generate(&d, 2 * 86400, &s, &err), 0);
	assert_int_equal(s.n, 2 * 96 + 1);
	assert_int_equal(rk_load_series_at(&s, 0), 8);                 /* 40 x 0.2 */
	assert_int_equal(rk_load_series_at(&s, 43200000), 32);         /* 40 x 0.8 */
	assert_int_equal(rk_load_series_at(&s, 86400000), 8);
	/* Noise: seeded, deterministic, within its band and the cluster. */
	d.noise = 0.1;
	rk_load_series_fini(&s);
	assert_int_equal(rk_diurnal_generate(&d, 86400, &s, &err), 0);
	assert_int_equal(rk_diurnal_generate(&d, 86400, &s2, &err), 0);
	int differ = 0;
	for (int i = 0; i < s.n; i++) {
		assert_int_equal(s.need[i], s2.need[i]);
		assert_true(s.need[i] >= 4 && s.need[i] <= 36);
		differ |= s.need[i] != (i == 0 ? 8 : s.need[i]);
	}
	rk_load_series_fini(&s2);
	d.seed = 8;
	assert_int_equal(rk_diurnal_generate(&d, 86400, &s2, &err), 0);
	int same = 1;
	for (int i = 0; i < s.n; i++)
		same &= s.need[i] == s2.need[i];
	assert_false(same);
	(void)differ;
	rk_load_series_fini(&s);
	rk_load_series_fini(&s2);
	/* Bad options name the flag and key. */
	assert_int_equal(rk_diurnal_parse(&d, "peak=2", "--inference", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "--inference: peak=2 out of range"));
	assert_int_equal(rk_diurnal_parse(&d, "bogus=1", "--inference", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "unknown key 'bogus'"));
	assert_int_equal(rk_diurnal_parse(&d, "peak=0.1,trough=0.5", "--inference", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "trough"));
	assert_int_equal(rk_diurnal_parse(&d, "servers", "--inference", &err), RK_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ok),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_diurnal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
