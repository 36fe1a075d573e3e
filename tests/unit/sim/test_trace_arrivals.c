/*
 * Arrival-rate changes (trace.h, src/sim/trace/trace_arrivals.c): the load factor
 * divides every gap from the first arrival, Poisson arrivals are seeded,
 * ordered and have the asked mean gap, and bad factors or rates leave the
 * trace unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four it needs */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rubick/trace.h"

static void make(struct rk_trace *t, size_t n, int64_t gap_ms)
{
	memset(t, 0, sizeof(*t));
	t->jobs = calloc(n, sizeof(*t->jobs));
	assert_non_null(t->jobs);
	t->n = n;
	for (size_t i = 0; i < n; i++)
		t->jobs[i].submit_ms = 5000 + (int64_t)i * gap_ms;
}

static void load_factor(void **state)
{
	(void)state;
	struct rk_trace t;
	struct rk_error err;
	make(&t, 5, 1000); /* 5 s, 6 s, ..., 9 s */
	assert_int_equal(rk_trace_scale_load(&t, 2.0, &err), 0);
	assert_int_equal(t.jobs[0].submit_ms, 5000); /* the first arrival stays */
	assert_int_equal(t.jobs[4].submit_ms, 7000);
	assert_int_equal(t.jobs[1].submit_ms, 5500);
	assert_int_equal(rk_trace_scale_load(&t, 0.25, &err), 0);
	assert_int_equal(t.jobs[4].submit_ms, 13000);
	assert_float_equal(rk_trace_mean_rate_per_h(&t), 4 * 3600.0 / 8.0, 1e-9);
	assert_int_equal(rk_trace_scale_load(&t, 0, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "load factor"));
	assert_int_equal(rk_trace_scale_load(&t, NAN, &err), RK_EINVAL);
	assert_int_equal(rk_trace_scale_load(&t, -1, &err), RK_EINVAL);
	assert_int_equal(t.jobs[4].submit_ms, 13000); /* unchanged */
	free(t.jobs);
}

static void poisson(void **state)
{
	(void)state;
	enum { N = 20001 };
	struct rk_trace a, b, c;
	struct rk_error err;
	make(&a, N, 0);
	make(&b, N, 0);
	make(&c, N, 0);
	assert_int_equal(rk_trace_poisson(&a, 60.0, 7, &err), 0); /* one a minute */
	assert_int_equal(rk_trace_poisson(&b, 60.0, 7, &err), 0);
	assert_int_equal(rk_trace_poisson(&c, 60.0, 8, &err), 0);
	assert_int_equal(a.jobs[0].submit_ms, 5000);
	int differ = 0;
	for (size_t i = 1; i < N; i++) {
		assert_true(a.jobs[i].submit_ms >= a.jobs[i - 1].submit_ms);
		assert_int_equal(a.jobs[i].submit_ms, b.jobs[i].submit_ms);
		differ |= a.jobs[i].submit_ms != c.jobs[i].submit_ms;
	}
	assert_true(differ);
	/* 20,000 exponential gaps of mean 60 s: the mean within 3% (sd of the mean 0.7%) */
	double mean_gap = (double)(a.jobs[N - 1].submit_ms - 5000) / (N - 1) / 1000.0;
	assert_true(fabs(mean_gap - 60.0) < 1.8);
	assert_float_equal(rk_trace_mean_rate_per_h(&a), 3600.0 / mean_gap, 1e-6);
	assert_int_equal(rk_trace_poisson(&a, 0, 1, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "Poisson rate"));
	assert_int_equal(rk_trace_poisson(&a, INFINITY, 1, &err), RK_EINVAL);
	assert_int_equal(a.jobs[N - 1].submit_ms, b.jobs[N - 1].submit_ms); /* unchanged */
	free(a.jobs);
	free(b.jobs);
	free(c.jobs);
	/* no jobs, one job: nothing to do, and no rate */
	struct rk_trace e;
	make(&e, 1, 0);
	assert_int_equal(rk_trace_poisson(&e, 1.0, 1, &err), 0);
	assert_int_equal(rk_trace_scale_load(&e, 3.0, &err), 0);
	assert_int_equal(e.jobs[0].submit_ms, 5000);
	assert_float_equal(rk_trace_mean_rate_per_h(&e), 0.0, 0);
	free(e.jobs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(load_factor),
		cmocka_unit_test(poisson),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
