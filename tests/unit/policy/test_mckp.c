/* The exact MCKP of Aryl phase 2 (docs/references.md §2.4): hand-checked cases and
 * a brute-force cross-check on random small instances. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "rubick/mckp.h"

static void test_hand_checked(void **state)
{
	(void)state;
	/* Two jobs, 3 spare GPUs. A: +1 -> 5, +2 -> 6; B: +1 -> 4, +2 -> 7, +3 -> 8.
	 * Options within 3 GPUs: A1+B2 = 12, A2+B1 = 10, B3 = 8, A1+B1 = 9: best 12. */
	double a[] = {0, 5, 6}, b[] = {0, 4, 7, 8};
	struct rk_mckp_item it[] = {{3, a}, {4, b}};
	int ch[2];
	double best;
	struct rk_error err;
	assert_int_equal(rk_mckp_solve(it, 2, 3, ch, &best, &err), 0);
	assert_int_equal(ch[0], 1);
	assert_int_equal(ch[1], 2);
	assert_true(fabs(best - 12) < 1e-9);
	/* Capacity 1: the better single worker is A's (5 > 4). */
	assert_int_equal(rk_mckp_solve(it, 2, 1, ch, &best, &err), 0);
	assert_int_equal(ch[0], 1);
	assert_int_equal(ch[1], 0);
	assert_true(fabs(best - 5) < 1e-9);
	/* Capacity 0: nothing moves. */
	assert_int_equal(rk_mckp_solve(it, 2, 0, ch, &best, &err), 0);
	assert_int_equal(ch[0] + ch[1], 0);
}

static void test_negative_and_forbidden(void **state)
{
	(void)state;
	/* Restart cost makes a small scale-out negative: not taken even with room.
	 * A forbidden choice (-inf, e.g. a worker count that does not divide the
	 * batch) is skipped: B must take 2 or nothing. */
	double a[] = {0, -1, -0.5}, b[] = {0, -INFINITY, 3};
	struct rk_mckp_item it[] = {{3, a}, {3, b}};
	int ch[2];
	double best;
	assert_int_equal(rk_mckp_solve(it, 2, 10, ch, &best, NULL), 0);
	assert_int_equal(ch[0], 0);
	assert_int_equal(ch[1], 2);
	assert_true(fabs(best - 3) < 1e-9);
	assert_int_equal(rk_mckp_solve(it, 2, 1, ch, &best, NULL), 0);
	assert_int_equal(ch[1], 0);
	/* Ties keep the smaller k: equal values never scale. */
	double c[] = {0, 0, 0};
	struct rk_mckp_item t2[] = {{3, c}};
	assert_int_equal(rk_mckp_solve(t2, 1, 2, ch, &best, NULL), 0);
	assert_int_equal(ch[0], 0);
}

static void test_bad_args(void **state)
{
	(void)state;
	double a[] = {NAN, 1};
	struct rk_mckp_item it[] = {{2, a}};
	int ch[1];
	struct rk_error err;
	assert_int_equal(rk_mckp_solve(it, 1, 2, ch, NULL, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "item 0"));
	struct rk_mckp_item z[] = {{0, a}};
	assert_int_equal(rk_mckp_solve(z, 1, 2, ch, NULL, &err), RK_EINVAL);
	assert_int_equal(rk_mckp_solve(it, 1, -1, ch, NULL, &err), RK_EINVAL);
	assert_int_equal(rk_mckp_solve(NULL, 0, 5, NULL, NULL, &err), 0);
}

/* xorshift64*: deterministic and seeded here, unlike the C library generator. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ull;
}

#define BN 5
#define BK 4
static double bv[BN][BK];
static int bnk[BN];

static double brute(int i, int cap, int n)
{
	if (i == n)
		return 0;
	double best = -INFINITY;
	for (int k = 0; k < bnk[i] && k <= cap; k++) {
		if (bv[i][k] == -INFINITY)
			continue;
		double v = bv[i][k] + brute(i + 1, cap - k, n);
		if (v > best)
			best = v;
	}
	return best;
}

static void test_brute_force(void **state)
{
	(void)state;
	for (int trial = 0; trial < 2000; trial++) {
		int n = 1 + (int)(next() % BN);
		int cap = (int)(next() % 9);
		struct rk_mckp_item it[BN];
		for (int i = 0; i < n; i++) {
			bnk[i] = 1 + (int)(next() % BK);
			bv[i][0] = 0;
			for (int k = 1; k < bnk[i]; k++)
				bv[i][k] = (next() % 10 == 0) ? -INFINITY
							       : (double)(int)(next() % 41) - 10.0;
			it[i] = (struct rk_mckp_item){bnk[i], bv[i]};
		}
		int ch[BN];
		double best;
		assert_int_equal(rk_mckp_solve(it, n, cap, ch, &best, NULL), 0);
		double want = brute(0, cap, n);
		assert_true(fabs(best - want) < 1e-9);
		/* The backtracked choices realise the value and respect capacity. */
		double got = 0;
		int used = 0;
		for (int i = 0; i < n; i++) {
			assert_true(ch[i] >= 0 && ch[i] < bnk[i]);
			assert_true(bv[i][ch[i]] != -INFINITY);
			got += bv[i][ch[i]];
			used += ch[i];
		}
		assert_true(used <= cap);
		assert_true(fabs(got - want) < 1e-9);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_checked),
		cmocka_unit_test(test_negative_and_forbidden),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_brute_force),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
