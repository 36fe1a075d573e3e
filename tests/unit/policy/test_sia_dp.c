/* Sia's one-type exact solver (src/policy/sia/sia_dp.c): a hand-checked case and a
 * brute-force cross-check on random small instances with job classes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "policy/sia/sia_internal.h"

/*
 * 8 GPUs; configurations of 2, 4 and 8 GPUs with benefits job0 {1.0, 1.5,
 * 1.8}, job1 {0.9, 1.2, 1.3}, and a class of two identical jobs {0.8, 1.0}
 * (2 and 4 GPUs). Everyone on 2 GPUs gives 1.0 + 0.9 + 2 x 0.8 = 3.5; the
 * next best, job0:4 job1:2 one of the class on 2, gives 3.2.
 */
static void hand_checked(void **state)
{
	(void)state;
	const int w[] = {2, 4, 8, 2, 4, 8, 2, 4};
	const double b[] = {1.0, 1.5, 1.8, 0.9, 1.2, 1.3, 0.8, 1.0};
	const struct sia_dp_class cls[] = {{0, 3, 1}, {3, 3, 1}, {6, 2, 2}};
	int count[8];
	assert_int_equal(sia_dp_solve(cls, 3, w, b, 8, count), RK_OK);
	const int want[] = {1, 0, 0, 1, 0, 0, 2, 0};
	for (int k = 0; k < 8; k++)
		assert_int_equal(count[k], want[k]);
	/* No GPUs: nobody runs. */
	assert_int_equal(sia_dp_solve(cls, 3, w, b, 0, count), RK_OK);
	for (int k = 0; k < 8; k++)
		assert_int_equal(count[k], 0);
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Best benefit over every way the members of classes c.. choose, recursively. */
static double brute(const struct sia_dp_class *cls, int n_cls, int c, int member, const int *w,
		    const double *b, int left)
{
	if (c == n_cls)
		return 0;
	if (member == cls[c].mult)
		return brute(cls, n_cls, c + 1, 0, w, b, left);
	double best = brute(cls, n_cls, c, member + 1, w, b, left); /* this member waits */
	for (int k = cls[c].first; k < cls[c].first + cls[c].n; k++)
		if (b[k] > 0 && w[k] <= left) {
			double v = b[k] + brute(cls, n_cls, c, member + 1, w, b, left - w[k]);
			if (v > best)
				best = v;
		}
	return best;
}

static void matches_brute_force(void **state)
{
	(void)state;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	for (int round = 0; round < 400; round++) {
		struct sia_dp_class cls[4];
		int w[16], count[16], n_cls = 1 + (int)(next(&seed) % 4), nv = 0;
		double b[16];
		for (int c = 0; c < n_cls; c++) {
			int n = 1 + (int)(next(&seed) % 4);
			cls[c] = (struct sia_dp_class){nv, n, 1 + (int)(next(&seed) % 3)};
			for (int k = 0; k < n; k++, nv++) {
				w[nv] = 1 + (int)(next(&seed) % 6);
				/* Some benefits <= 0: such a configuration is never taken. */
				b[nv] = (double)(next(&seed) % 1000) / 250.0 - 0.5;
			}
		}
		int cap = (int)(next(&seed) % 14);
		assert_int_equal(sia_dp_solve(cls, n_cls, w, b, cap, count), RK_OK);
		double got = 0;
		int used = 0;
		for (int c = 0; c < n_cls; c++) {
			int taken = 0;
			for (int k = cls[c].first; k < cls[c].first + cls[c].n; k++) {
				assert_true(count[k] >= 0);
				assert_true(count[k] == 0 || b[k] > 0);
				taken += count[k];
				used += count[k] * w[k];
				got += count[k] * b[k];
			}
			assert_true(taken <= cls[c].mult);
		}
		assert_true(used <= cap);
		double want = brute(cls, n_cls, 0, 0, w, b, cap);
		if (fabs(got - want) > 1e-9)
			fail_msg("round %d: dp %.6f, brute force %.6f (capacity %d)", round, got,
				 want, cap);
	}
}

/*
 * The bounds (sia_dp.c: items and cells that no near-optimal solution uses
 * are left out) never change the answer: the same counts as the whole table,
 * on random instances shaped like Sia's rows (benefits rising with GPUs, near
 * ties, classes of several jobs, capacities that bind) and on rows with
 * exact ties between classes.
 */
static void bounds_keep_the_answer(void **state)
{
	(void)state;
	uint64_t seed = 0x2545f4914f6cdd1dull;
	enum { MAXV = 400 };
	static const int sizes[] = {1, 2, 4, 8, 16, 24, 32, 64, 128};
	for (int round = 0; round < 300; round++) {
		struct sia_dp_class cls[40];
		int w[MAXV], c1[MAXV], c2[MAXV], nv = 0;
		double b[MAXV];
		int n_cls = 1 + (int)(next(&seed) % 40), total = 0;
		int ties = round % 3 == 0;
		for (int c = 0; c < n_cls; c++) {
			int n = 1 + (int)(next(&seed) % 9);
			cls[c] = (struct sia_dp_class){nv, n, 1 + (int)(next(&seed) % 4)};
			/* Sia's benefit lambda_n - g^-0.5 with g growing sublinearly */
			double eff = 0.3 + (double)(next(&seed) % 700) / 1000.0;
			for (int k = 0; k < n; k++, nv++) {
				w[nv] = sizes[k];
				double g = 1 + eff * (sizes[k] - 1) / (1 + 0.02 * sizes[k]);
				if (ties)
					g = 1 + 0.5 * (sizes[k] - 1); /* every class the same row */
				b[nv] = 1.1 - 1 / sqrt(g);
				total += sizes[k] * cls[c].mult;
			}
		}
		int cap = 1 + (int)(next(&seed) % (unsigned)(total / 4 + 1));
		assert_int_equal(sia_dp_solve_bounded(cls, n_cls, w, b, cap, 0, c1), RK_OK);
		assert_int_equal(sia_dp_solve_bounded(cls, n_cls, w, b, cap, 1, c2), RK_OK);
		for (int k = 0; k < nv; k++)
			if (c1[k] != c2[k])
				fail_msg(
				    "round %d: item %d taken %d times by the whole table, %d with "
				    "bounds (capacity %d)",
				    round, k, c1[k], c2[k], cap);
	}
}

static void too_large_is_refused(void **state)
{
	(void)state;
	const int w[] = {1};
	const double b[] = {1.0};
	int count[1];
	/* 2^20 members of one class on 2^20 GPUs: a 2^40-cell table. */
	const struct sia_dp_class big = {0, 1, 1 << 20};
	assert_int_equal(sia_dp_solve(&big, 1, w, b, 1 << 20, count), RK_ERANGE);
	assert_int_equal(sia_dp_solve(&big, 1, w, b, -1, count), RK_ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(hand_checked),
	    cmocka_unit_test(matches_brute_force),
	    cmocka_unit_test(bounds_keep_the_answer),
	    cmocka_unit_test(too_large_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
