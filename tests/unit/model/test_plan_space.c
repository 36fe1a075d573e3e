/*
 * Plan spaces (plan.h): the parser's accepted forms and every refusal, the
 * canonical form round-tripping, membership and the named violation, and the
 * curve keeping to a declared space (a job forbidding tp gets no tp plan where
 * the unrestricted curve picks one).
 */
#include "rubick/curve.h"
#include "rubick/perf.h"
#include "rubick/plan.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "model_fixture.h"

static struct rk_plan_space parse_ok(const char *text)
{
	struct rk_plan_space s;
	struct rk_error err;
	memset(&s, 0x5a, sizeof(s));
	if (rk_plan_space_parse(text, "--space", &s, &err) != 0)
		fail_msg("'%s' refused: %s", text, err.msg);
	return s;
}

static void test_accepted_forms_round_trip(void **state)
{
	(void)state;
	static const struct {
		const char *text, *canonical;
	} cases[] = {
		{"all", "all"},
		{"zero<=3", "all"},
		{"dp", "tp=1,pp=1,zero=0,offload=no"},
		{"tp=1", "tp=1"},
		{"gc=no,dp", "tp=1,pp=1,zero=0,offload=no,gc=no"},
		{"tp<=4,pp<=4,zero<=2,offload=no,gc=yes", "tp<=4,pp<=4,zero<=2,offload=no"},
		{"pp<=2,tp<=8", "tp<=8,pp<=2"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rk_plan_space s = parse_ok(cases[i].text), back;
		char buf[RK_PLAN_SPACE_TEXT_MAX];
		int n = rk_plan_space_format(&s, buf, sizeof(buf));
		assert_true(n > 0);
		assert_string_equal(buf, cases[i].canonical);
		back = parse_ok(buf);
		assert_true(rk_plan_space_equal(&s, &back));
	}
	struct rk_plan_space all = parse_ok("all");
	assert_int_equal(all.limited, 0);
	char tiny[3];
	assert_int_equal(rk_plan_space_format(&all, tiny, sizeof(tiny)), RK_ERANGE);
}

static void test_refusals_name_the_item(void **state)
{
	(void)state;
	static const struct {
		const char *text, *needle;
	} cases[] = {
		{"tp=4", "tp"},        /* '=' only forbids: a bound is tp<=4 */
		{"dp,tp<=2", "tp"},    /* contradicts dp */
		{"tp<=0", "tp"},
		{"x=1", "x"},
		{"tp<=2,", ""},        /* empty item */
		{"", ""},
		{",", ""},
		{"offload=maybe", "offload"},
		{"all,tp=1", "all"},
		{"zero<=4", "zero"},
		{"tp<=2,tp<=4", "tp"}, /* twice */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rk_plan_space s, before;
		struct rk_error err;
		memset(&s, 0x5a, sizeof(s));
		before = s;
		err.msg[0] = 0;
		int rc = rk_plan_space_parse(cases[i].text, "--space", &s, &err);
		if (rc == 0)
			fail_msg("'%s' accepted", cases[i].text);
		assert_true(rc == RK_EINVAL || rc == RK_ERANGE);
		assert_memory_equal(&s, &before, sizeof(s)); /* out untouched */
		assert_non_null(strstr(err.msg, "--space"));
		if (cases[i].needle[0] && !strstr(err.msg, cases[i].needle))
			fail_msg("'%s': message '%s' does not name '%s'", cases[i].text, err.msg,
				 cases[i].needle);
	}
}

static struct rk_plan plan_of(const char *text)
{
	struct rk_plan p;
	struct rk_error err;
	if (rk_plan_parse(text, "plan", &p, &err) != 0)
		fail_msg("plan '%s': %s", text, err.msg);
	return p;
}

static void test_membership_and_violation(void **state)
{
	(void)state;
	struct rk_plan_space tp1 = parse_ok("tp=1"), dp = parse_ok("dp"), z2 = parse_ok("zero<=2");
	struct rk_plan tp2 = plan_of("dp=2,tp=2,pp=1,mb=4,ga=1,gc=0,zero=0,offload=0");
	struct rk_plan z3 = plan_of("dp=4,tp=1,pp=1,mb=2,ga=1,gc=1,zero=3,offload=0");
	struct rk_plan plain = plan_of("dp=4,tp=1,pp=1,mb=2,ga=1,gc=0,zero=0,offload=0");
	assert_false(rk_plan_in_space(&tp2, &tp1));
	assert_string_equal(rk_plan_space_violation(&tp2, &tp1), "tp");
	assert_true(rk_plan_in_space(&z3, &tp1));
	assert_null(rk_plan_space_violation(&z3, &tp1));
	assert_string_equal(rk_plan_space_violation(&z3, &dp), "zero");
	assert_string_equal(rk_plan_space_violation(&z3, &z2), "zero");
	assert_true(rk_plan_in_space(&plain, &dp));
	assert_true(rk_plan_in_space(&tp2, NULL));
	struct rk_error err;
	assert_int_equal(rk_plan_space_check(&tp2, &tp1, &err), RK_EINFEASIBLE);
	assert_non_null(strstr(err.msg, "tp=2"));
	assert_int_equal(rk_plan_space_check(&plain, &dp, &err), 0);
}

/* A job that forbids tp never gets a tp plan on its curve, where the same
 * curve without the space does pick one (so this test can fail). */
static void test_curve_keeps_to_space(void **state)
{
	(void)state;
	struct rk_model m = fx_llama7(1000);
	struct rk_perf_params k = {.k_bwd = 2.0, .k_sync = 2.0, .k_opt = 0.05,
				   .k_os_offload = 2.0, .k_const = 10.0, .k_off = 2.0,
				   .k_swap = 2.0, .fwd_fixed_ms = 0};
	struct rk_perf_env env;
	struct rk_curve_opts o;
	rk_perf_env_a800(&env);
	rk_curve_opts_default(&env, &o);
	o.max_gpus = 16;
	struct rk_curve free_c, tp1_c;
	assert_int_equal(rk_curve_build(&m, &k, &env, 8, &o, &free_c, NULL), 0);
	o.space = parse_ok("tp=1");
	assert_int_equal(rk_curve_build(&m, &k, &env, 8, &o, &tp1_c, NULL), 0);
	int free_tp = 0, kept = 0;
	for (int g = 1; g <= o.max_gpus; g++)
		for (int ci = 0; ci < o.n_cpus; ci++) {
			const struct rk_curve_point *a = rk_curve_at(&free_c, g, ci, 0);
			const struct rk_curve_point *b = rk_curve_at(&tp1_c, g, ci, 0);
			if (a->has_plan && a->plan.tp > 1)
				free_tp++;
			if (b->has_plan) {
				assert_int_equal(b->plan.tp, 1);
				kept++;
			}
		}
	assert_true(free_tp > 0);
	assert_true(kept > 0);
	rk_curve_fini(&free_c);
	rk_curve_fini(&tp1_c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted_forms_round_trip),
		cmocka_unit_test(test_refusals_name_the_item),
		cmocka_unit_test(test_membership_and_violation),
		cmocka_unit_test(test_curve_keeps_to_space),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
