/*
 * The effective inter-node bandwidth calibration (netcal.c): on synthetic rows
 * t = base + volume / B_true it recovers B_true; rows marked held out do not
 * move the fit however wrong they are; bad bounds and no usable row are refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include "rubick/error.h"
#include "rubick/netcal.h"

#include <math.h>

#define NROWS 12

struct rows {
	double base[NROWS], mb[NROWS];
};

static double predict(size_t i, double gbps, void *ctx)
{
	const struct rows *r = ctx;
	/* MB over GB/s: 1 MB = 1/1024 GB, times 1000 for ms */
	return r->base[i] + r->mb[i] / 1024.0 / gbps * 1000.0;
}

static void make(struct rows *r, double *meas, double b_true)
{
	for (size_t i = 0; i < NROWS; i++) {
		r->base[i] = 20.0 + 7.0 * (double)i;
		r->mb[i] = 50.0 + 40.0 * (double)(i % 5);
		meas[i] = predict(i, b_true, r);
	}
}

static void test_recovers_known_bandwidth(void **state)
{
	(void)state;
	const double truths[] = { 0.8, 3.1, 12.5 };
	for (size_t t = 0; t < 3; t++) {
		struct rows r;
		double meas[NROWS];
		make(&r, meas, truths[t]);
		struct rk_netcal_result res;
		assert_int_equal(rk_netcal_fit(NROWS, meas, NULL, predict, &r, 0.05, 100.0, &res), 0);
		assert_true(fabs(res.gbps - truths[t]) / truths[t] < 1e-4);
		assert_true(res.sse_rel < 1e-8);
		assert_int_equal(res.n_used, NROWS);
	}
}

static void test_held_out_rows_ignored(void **state)
{
	(void)state;
	struct rows r;
	double meas[NROWS];
	unsigned char use[NROWS];
	make(&r, meas, 2.0);
	for (size_t i = 0; i < NROWS; i++)
		use[i] = i >= 3;
	struct rk_netcal_result a, b;
	assert_int_equal(rk_netcal_fit(NROWS, meas, use, predict, &r, 0.05, 100.0, &a), 0);
	/* wildly wrong held-out measurements must not change the fitted value */
	meas[0] *= 9.0;
	meas[1] *= 0.1;
	meas[2] *= 4.0;
	assert_int_equal(rk_netcal_fit(NROWS, meas, use, predict, &r, 0.05, 100.0, &b), 0);
	assert_true(a.gbps == b.gbps);
	assert_int_equal(b.n_used, NROWS - 3);
	assert_true(fabs(a.gbps - 2.0) / 2.0 < 1e-4);
}

static void test_bad_input(void **state)
{
	(void)state;
	struct rows r;
	double meas[NROWS];
	unsigned char none[NROWS] = { 0 };
	struct rk_netcal_result res;
	make(&r, meas, 1.0);
	assert_int_equal(rk_netcal_fit(NROWS, meas, NULL, predict, &r, 0.0, 10.0, &res), RK_EINVAL);
	assert_int_equal(rk_netcal_fit(NROWS, meas, NULL, predict, &r, 5.0, 1.0, &res), RK_EINVAL);
	assert_int_equal(rk_netcal_fit(NROWS, meas, none, predict, &r, 0.1, 10.0, &res), RK_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recovers_known_bandwidth),
		cmocka_unit_test(test_held_out_rows_ignored),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
