/*
 * The natural merge sort (include/rubick/runsort.h) against qsort on the same
 * records, which carry their input position so that a total order checks
 * stability too: random, sorted, reversed, nearly sorted, few distinct keys,
 * and every length 0..70.
 */
#include "rubick/runsort.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* cmocka needs the headers above first. */
#include <cmocka.h>

struct rec {
	int key;
	int pos;      /* input position: not compared by cmp_key */
	char pad[24]; /* records wider than a word, as the scheduler's */
};

static int cmp_key(const void *pa, const void *pb)
{
	const struct rec *a = pa, *b = pb;
	return (a->key > b->key) - (a->key < b->key);
}

/* The stable order: key, then input position. */
static int cmp_stable(const void *pa, const void *pb)
{
	const struct rec *a = pa, *b = pb;
	if (a->key != b->key)
		return (a->key > b->key) - (a->key < b->key);
	return (a->pos > b->pos) - (a->pos < b->pos);
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void check(struct rec *in, size_t n)
{
	struct rec *want = malloc((n + 1) * sizeof(*want));
	struct rec *got = malloc((n + 1) * sizeof(*got));
	struct rec *tmp = malloc((n + 1) * sizeof(*tmp));
	assert_non_null(want);
	assert_non_null(got);
	assert_non_null(tmp);
	for (size_t i = 0; i < n; i++)
		in[i].pos = (int)i;
	memcpy(want, in, n * sizeof(*in));
	memcpy(got, in, n * sizeof(*in));
	qsort(want, n, sizeof(*want), cmp_stable);
	rk_runsort(got, n, sizeof(*got), cmp_key, tmp);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(got[i].key, want[i].key);
		assert_int_equal(got[i].pos, want[i].pos);
	}
	free(want);
	free(got);
	free(tmp);
}

static void sorts_like_a_stable_qsort(void **state)
{
	(void)state;
	enum { N = 3000 };
	static struct rec r[N];
	uint64_t s = 0x9e3779b97f4a7c15ull;
	for (size_t n = 0; n <= 70; n++) { /* every short length, random keys with ties */
		for (size_t i = 0; i < n; i++)
			r[i].key = (int)(next(&s) % 16);
		check(r, n);
	}
	for (int shape = 0; shape < 6; shape++) {
		for (int i = 0; i < N; i++) {
			switch (shape) {
			case 0:
				r[i].key = (int)(next(&s) % 1000000);
				break; /* random */
			case 1:
				r[i].key = i;
				break; /* sorted */
			case 2:
				r[i].key = N - i;
				break; /* reversed */
			case 3:
				r[i].key = (int)(next(&s) % 3);
				break; /* few keys */
			case 4:
				r[i].key = i / 7;
				break; /* sorted, ties */
			default:
				r[i].key = (i * 37) % 101;
				break; /* sawtooth */
			}
		}
		if (shape == 1) /* nearly sorted: a few records moved, a few appended */
			for (int k = 0; k < 20; k++)
				r[next(&s) % N].key = (int)(next(&s) % N);
		check(r, N);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(sorts_like_a_stable_qsort),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
