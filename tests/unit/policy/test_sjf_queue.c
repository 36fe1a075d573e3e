/*
 * The waiting queue of SJF-BSBF / SJF-FFS (src/policy/sjf/sjf_queue.h):
 *  - its walk ("the first job in SJF order of at most cap GPUs") is exactly
 *    the policy's former loop, one heap of every waiting job in SJF order
 *    with the jobs larger than the current cap skipped, while cap only falls;
 *  - kept up to date from a change feed it holds the same jobs in the same
 *    order as a queue rebuilt from the snapshot, through arrivals, starts,
 *    preemptions (requeued with a new key, or the same one) and finishes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy/sjf/sjf_queue.h"

#define N 600

static double key_of(const struct rk_job *j)
{
	return j->est_duration_s > 0 ? j->est_duration_s - j->iters_done : INFINITY;
}

static int by_sjf(const void *p, const void *q)
{
	const struct rk_job *x = *(struct rk_job *const *)p, *y = *(struct rk_job *const *)q;
	double a = key_of(x), b = key_of(y);
	if (a != b)
		return a < b ? -1 : 1;
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

static struct rk_job jobs[N];
static struct rk_job *ptr[N];

static void make_jobs(uint32_t *s)
{
	static const int sizes[] = {1, 2, 4, 8, 16, 32, 3};
	memset(jobs, 0, sizeof(jobs));
	for (int k = 0; k < N; k++) {
		jobs[k].id = N - k;
		jobs[k].submit_ms = next(s) % 7; /* few distinct values: ties exercised */
		jobs[k].est_duration_s = k % 97 ? (next(s) % 50) * 100.0 : 0;
		jobs[k].req_gpus = sizes[next(s) % 7];
		jobs[k].state = RK_JOB_PENDING;
		ptr[k] = &jobs[k];
	}
}

static void test_walk_matches_skip_loop(void **st)
{
	(void)st;
	uint32_t s = 12345;
	make_jobs(&s);
	struct rk_job *sorted[N];
	int taken[N];
	struct rk_sjfq q;
	rk_sjfq_init(&q, key_of);
	struct rk_sched_input in = {.jobs = ptr, .n_jobs = N};
	for (int cap0 = 0; cap0 <= 40; cap0 += 5) {
		memcpy(sorted, ptr, sizeof(sorted));
		memset(taken, 0, sizeof(taken));
		qsort(sorted, N, sizeof(sorted[0]), by_sjf);
		assert_int_equal(rk_sjfq_sync(&q, &in), 0);
		assert_int_equal(rk_sjfq_min_gpus(&q), 1);
		int cap = cap0, pos = 0;
		for (int step = 0;; step++) {
			if (step % 9 == 8 && cap > 0)
				cap -= (int)(next(&s) % 3); /* a start took GPUs */
			/* The former loop: walk the SJF order, dropping larger jobs. */
			struct rk_job *want = NULL;
			while (pos < N && !want) {
				if (!taken[pos] && sorted[pos]->req_gpus <= cap)
					want = sorted[pos];
				taken[pos] = 1;
				pos++;
			}
			struct rk_job *got = rk_sjfq_next(&q, cap);
			assert_ptr_equal(got, want);
			if (!got)
				break;
		}
	}
	rk_sjfq_fini(&q);
}

/* The whole walk of q (cap unbounded) into out; returns its length. */
static int walk(struct rk_sjfq *q, struct rk_job **out)
{
	int n = 0;
	for (struct rk_job *j; (j = rk_sjfq_next(q, 1 << 30));)
		out[n++] = j;
	return n;
}

static void test_feed_matches_rebuild(void **st)
{
	(void)st;
	uint32_t s = 777;
	make_jobs(&s);
	struct rk_sjfq inc, full;
	rk_sjfq_init(&inc, key_of);
	rk_sjfq_init(&full, key_of);
	struct rk_job *active[N], *changed[N], *a[N], *b[N];
	int n_act = 0, arrived = 0;
	for (int round = 0; round < 300; round++) {
		int n_chg = 0;
		for (int e = 0; e < 4; e++) {
			uint32_t what = next(&s) % 4;
			if (what == 0 && arrived < N) { /* arrival */
				active[n_act++] = changed[n_chg++] = &jobs[arrived++];
			} else if (n_act > 0) {
				int k = (int)(next(&s) % (uint32_t)n_act);
				struct rk_job *j = active[k];
				if (what == 1 && j->alloc.n == 0) { /* starts */
					j->alloc.n = 1;
					j->state = RK_JOB_RUNNING;
				} else if (what == 2 && j->alloc.n) { /* preempted */
					j->alloc.n = 0;
					j->state = RK_JOB_PENDING;
					j->iters_done += next(&s) % 2 ? 10 : 0;
				} else if (what == 3 && j->alloc.n) { /* finishes: leaves */
					j->alloc.n = 0;
					j->state = RK_JOB_DONE;
					active[k] = active[--n_act];
				} else {
					continue;
				}
				changed[n_chg++] = j;
			}
		}
		struct rk_sched_input in = {.jobs = active, .n_jobs = n_act, .incremental = 1,
					    .changed = changed, .n_changed = n_chg};
		assert_int_equal(rk_sjfq_sync(&inc, &in), 0);
		in.incremental = 0;
		assert_int_equal(rk_sjfq_sync(&full, &in), 0);
		assert_int_equal(rk_sjfq_min_gpus(&inc), rk_sjfq_min_gpus(&full));
		int na = walk(&inc, a), nb = walk(&full, b);
		assert_int_equal(na, nb);
		for (int k = 0; k < na; k++)
			assert_ptr_equal(a[k], b[k]);
	}
	rk_sjfq_fini(&inc);
	rk_sjfq_fini(&full);
}

static void test_empty(void **st)
{
	(void)st;
	struct rk_sjfq q;
	rk_sjfq_init(&q, key_of);
	struct rk_sched_input in = {0};
	assert_int_equal(rk_sjfq_sync(&q, &in), 0);
	assert_int_equal(rk_sjfq_min_gpus(&q), 1 << 30);
	assert_null(rk_sjfq_next(&q, 100));
	rk_sjfq_fini(&q);
	rk_sjfq_fini(&q); /* twice is harmless */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_matches_skip_loop),
		cmocka_unit_test(test_feed_matches_rebuild),
		cmocka_unit_test(test_empty),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
