/* The job-id table (include/rubick/idtab.h) against a plain array, through growth and deletions. */
#include "rubick/idtab.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

struct rec {
	struct rk_idtab_head h;
	int payload;
};

#define N_IDS 5000

/* A deterministic id sequence with clustered and far-apart ids (xorshift). */
static int64_t next_id(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (int64_t)(*s % 4000) + ((*s & 1) ? (int64_t)1 << 40 : 0);
}

static void matches_an_array(void **state)
{
	(void)state;
	static int present[2][4000], payload[2][4000];
	struct rk_idtab t;
	rk_idtab_init(&t, sizeof(struct rec));
	assert_null(rk_idtab_find(&t, 7));
	uint64_t s = 88172645463325252ULL;
	int n = 0;
	for (int step = 0; step < 4 * N_IDS; step++) {
		int64_t id = next_id(&s);
		int hi = id >= ((int64_t)1 << 40), lo = (int)(id - (hi ? (int64_t)1 << 40 : 0));
		struct rec *r = rk_idtab_find(&t, id);
		assert_int_equal(r != NULL, present[hi][lo]);
		if (r) {
			assert_int_equal(r->payload, payload[hi][lo]);
			if (step % 3 == 0) {
				rk_idtab_del(&t, r);
				present[hi][lo] = 0;
				n--;
			}
		} else {
			struct rec add = {.h.id = id, .payload = step};
			assert_int_equal(rk_idtab_put(&t, &add), 0);
			present[hi][lo] = 1;
			payload[hi][lo] = step;
			n++;
		}
		assert_int_equal(t.n, n);
	}
	/* Every id is found exactly when present, after all the moves. */
	for (int hi = 0; hi < 2; hi++)
		for (int lo = 0; lo < 4000; lo++) {
			int64_t id = lo + (hi ? (int64_t)1 << 40 : 0);
			struct rec *r = rk_idtab_find(&t, id);
			assert_int_equal(r != NULL, present[hi][lo]);
			if (r)
				assert_int_equal(r->payload, payload[hi][lo]);
		}
	rk_idtab_clear(&t);
	assert_int_equal(t.n, 0);
	assert_null(rk_idtab_find(&t, 1));
	rk_idtab_fini(&t);
	assert_null(t.slots);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(matches_an_array),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
