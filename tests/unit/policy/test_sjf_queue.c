/*
 * The size-bucketed SJF queue of SJF-BSBF / SJF-FFS (src/policy/sjf_queue.h):
 * popping "the first job of at most cap GPUs" must give exactly the sequence
 * of the policy's former loop, one heap of every waiting job in SJF order
 * with the jobs larger than the current cap skipped, while cap only falls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "policy/sjf_queue.h"

#define N 600

static int by_sjf(const void *p, const void *q)
{
	const struct rk_sjfq_item *x = p, *y = q;
	if (x->e_s != y->e_s)
		return x->e_s < y->e_s ? -1 : 1;
	if (x->submit_ms != y->submit_ms)
		return x->submit_ms < y->submit_ms ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* A fixed pseudo-random sequence (xorshift), so the test is the same every run. */
static uint32_t next(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void test_pop_matches_skip_loop(void **st)
{
	(void)st;
	static const int sizes[] = {1, 2, 4, 8, 16, 32, 3};
	struct rk_sjfq_item items[N], sorted[N], v[N];
	struct rk_sjfq_bucket bk[N];
	int taken[N] = {0};
	uint32_t s = 12345;
	for (int k = 0; k < N; k++) {
		/* Few distinct times and submits, so the tie-breaks are exercised. */
		double e = (next(&s) % 50) * 100.0;
		items[k] = (struct rk_sjfq_item){.e_s = k % 97 ? e : INFINITY,
						 .submit_ms = next(&s) % 7,
						 .id = N - k,
						 .i = k,
						 .gpus = sizes[next(&s) % 7]};
	}
	for (int cap0 = 0; cap0 <= 40; cap0 += 5) {
		for (int k = 0; k < N; k++) {
			sorted[k] = items[k];
			taken[k] = 0;
		}
		qsort(sorted, N, sizeof(sorted[0]), by_sjf);
		struct rk_sjfq q = {.v = v, .bk = bk};
		rk_sjfq_build(&q, items, N, cap0);
		int cap = cap0, pos = 0;
		for (int step = 0;; step++) {
			if (step % 9 == 8 && cap > 0)
				cap -= (int)(next(&s) % 3); /* a start took GPUs */
			/* The former loop: walk the SJF order, skipping (and dropping) larger jobs. */
			int want = -1;
			while (pos < N && want < 0) {
				if (!taken[pos] && sorted[pos].gpus <= cap)
					want = sorted[pos].i;
				taken[pos] = 1;
				pos++;
			}
			int got = rk_sjfq_pop(&q, cap);
			assert_int_equal(got, want);
			if (got < 0)
				break;
		}
	}
}

static void test_empty_and_nothing_fits(void **st)
{
	(void)st;
	struct rk_sjfq_item it[2] = {{.e_s = 1, .id = 1, .i = 0, .gpus = 8},
				     {.e_s = 2, .id = 2, .i = 1, .gpus = 4}};
	struct rk_sjfq_item v[2];
	struct rk_sjfq_bucket bk[2];
	struct rk_sjfq q = {.v = v, .bk = bk};
	rk_sjfq_build(&q, it, 0, 100);
	assert_int_equal(rk_sjfq_pop(&q, 100), -1);
	rk_sjfq_build(&q, it, 2, 3); /* both larger than the cap: not even kept */
	assert_int_equal(q.nb, 0);
	assert_int_equal(rk_sjfq_pop(&q, 3), -1);
	rk_sjfq_build(&q, it, 2, 8);
	assert_int_equal(rk_sjfq_pop(&q, 4), 1); /* the shorter job does not fit 4 */
	assert_int_equal(rk_sjfq_pop(&q, 8), 0);
	assert_int_equal(rk_sjfq_pop(&q, 8), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pop_matches_skip_loop),
		cmocka_unit_test(test_empty_and_nothing_fits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
