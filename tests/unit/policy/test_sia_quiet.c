/*
 * Sia's quiet rounds (src/policy/sia/sia_quiet.c): what a round promises through
 * rk_decisions.quiet_until_ms holds. On random contended snapshots of a
 * 2x8 cluster (placed jobs of every age and restart count, pending ones),
 * settled by applying rounds until one decides nothing, a round that
 * promised quiet until U is followed by rounds on the same snapshot at later
 * instants: every one before U decides nothing too. Some snapshots must
 * promise (else nothing is tested) and some must decide something at a
 * later instant past their promise (else the clock never mattered and any
 * promise would pass). Promising for good whenever the first step holds, or
 * pricing the restart factors at the round's own instant instead of their
 * bound, fails it; bounding a job younger than the penalty by its factor at
 * T instead of 1 does not (no snapshot here needs that case).
 */
#include "baseline_fixture.h"

#include <stdint.h>

extern const struct rk_policy_ops rk_policy_sia;

/* A fixed linear congruential sequence: the same snapshots on every run. */
static uint32_t lcg(uint32_t *x)
{
	*x = *x * 1103515245u + 12345u;
	return (*x >> 16) & 0x7fff;
}

/* Apply a round's decisions to the snapshot, as a driver would (restarts
 * counted for jobs that move or stop). */
static void apply(struct fixture *f, const struct rk_decisions *d)
{
	for (int i = 0; i < d->n; i++) {
		struct rk_job *j = fx_find(f, d->v[i].job_id);
		assert_non_null(j);
		if (j->alloc.n > 0)
			j->restarts++;
		free(j->alloc.shares);
		j->alloc.shares = NULL;
		j->alloc.n = d->v[i].alloc.n;
		if (j->alloc.n > 0) {
			j->alloc.shares = calloc((size_t)j->alloc.n, sizeof(*j->alloc.shares));
			assert_non_null(j->alloc.shares);
			memcpy(j->alloc.shares, d->v[i].alloc.shares,
			       (size_t)j->alloc.n * sizeof(*j->alloc.shares));
		}
		j->plan = d->v[i].plan;
		j->state = j->alloc.n > 0 ? RK_JOB_RUNNING : RK_JOB_PENDING;
	}
}

/* One round on `f` at now_ms with a fresh policy state. OUT: *until. */
static int round_at(struct fixture *f, const char *opts, int64_t now_ms, int64_t *until)
{
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(rk_policy_sia.create(&st, opts, &err), RK_OK);
	struct rk_sched_input in = fx_input(f, now_ms);
	in.skips_quiet = 1; /* as the simulator */
	struct rk_decisions d;
	rk_decisions_init(&d);
	if (rk_policy_sia.schedule(st, &in, &d, &err) != RK_OK)
		fail_msg("%s", err.msg);
	rk_policy_sia.destroy(st);
	int n = d.n;
	if (until)
		*until = d.quiet_until_ms;
	fx_decisions_free(&d);
	return n;
}

/* Run rounds at now_ms, applying them, until one decides nothing (at most
 * 8). Returns that round's promise, or 0 if none settled. */
static int64_t settle(struct fixture *f, int64_t now_ms)
{
	for (int it = 0; it < 8; it++) {
		void *st = NULL;
		struct rk_error err;
		assert_int_equal(rk_policy_sia.create(&st, NULL, &err), RK_OK);
		struct rk_sched_input in = fx_input(f, now_ms);
		in.skips_quiet = 1; /* as the simulator */
		struct rk_decisions d;
		rk_decisions_init(&d);
		if (rk_policy_sia.schedule(st, &in, &d, &err) != RK_OK)
			fail_msg("%s", err.msg);
		rk_policy_sia.destroy(st);
		int n = d.n;
		int64_t until = d.quiet_until_ms;
		apply(f, &d);
		fx_decisions_free(&d);
		if (n == 0)
			return until;
	}
	return 0;
}

/* A random contended snapshot at now_ms: placed jobs first, then a queue. */
static void snapshot(struct fixture *f, uint32_t *x, int64_t now_ms)
{
	static const int sizes[] = {1, 2, 4, 8};
	static const int64_t ages_s[] = {10, 100, 200, 250, 255, 300, 400, 1000, 5000, 100000};
	int free_gpus[2] = {8, 8};
	fx_init(f, 2);
	int n = 6 + (int)(lcg(x) % 10);
	for (int i = 0; i < n; i++) {
		int g = sizes[lcg(x) % 4];
		int64_t age_ms = 1000 * ages_s[lcg(x) % 10];
		struct rk_job *j = fx_job(f, i + 1, now_ms - age_ms, g, 0);
		j->global_batch = 32 * (1 + (int)(lcg(x) % 2));
		j->req_plan = fx_dp_plan(j->global_batch, g, 0);
		int node = free_gpus[0] >= g ? 0 : free_gpus[1] >= g ? 1 : -1;
		if (node >= 0 && lcg(x) % 3 != 0) {
			fx_run_on(j, node, now_ms - age_ms / 2);
			j->restarts = (int)(lcg(x) % 4);
			free_gpus[node] -= g;
		}
	}
}

static void promises_hold(void **state)
{
	(void)state;
	/* Later instants probed (s after the round). */
	static const int64_t probes_s[] = {1,   30,   60,   61,    120,    200,     260,
	                                   500, 1000, 3600, 20000, 100000, 1000000, 30000000};
	const int n_probes = (int)(sizeof(probes_s) / sizeof(probes_s[0]));
	uint32_t x = 7;
	int promised = 0, forever = 0, later_moves = 0;
	for (int c = 0; c < 1500; c++) {
		struct fixture f;
		int64_t now = 2000000000 + 1000 * (int64_t)(lcg(&x) % 100000);
		snapshot(&f, &x, now);
		int64_t until = settle(&f, now);
		if (until > now) {
			promised++;
			forever += until == INT64_MAX;
			for (int p = 0; p < n_probes; p++) {
				int64_t t = now + 1000 * probes_s[p];
				int moved = round_at(&f, "quiet=off", t, NULL) > 0;
				if (t < until && moved)
					fail_msg("case %d: quiet until %lld ms promised at %lld, "
					         "but the "
					         "round at %lld decides",
					         c, (long long)until, (long long)now, (long long)t);
				later_moves += moved;
			}
		}
		fx_fini(&f);
	}
	print_message("promised %d (%d for good), later moves %d\n", promised, forever,
	              later_moves);
	assert_true(promised >= 20);
	assert_true(forever >= 5 && forever < promised);
	assert_true(later_moves >= 5);
}

/* quiet=off never promises, nor does a round for a driver that runs every
 * round; bad values are refused with the option named. */
static void quiet_option(void **state)
{
	(void)state;
	struct fixture f;
	uint32_t x = 11;
	int64_t now = 2000000000;
	for (int c = 0; c < 20; c++) {
		snapshot(&f, &x, now);
		int64_t until = -1;
		round_at(&f, "quiet=off", now, &until);
		assert_int_equal(until, 0);
		fx_fini(&f);
	}
	/* A driver that runs every round (rubickd) gets no promise either. */
	int promised = 0;
	for (int c = 0; c < 20; c++) {
		snapshot(&f, &x, now);
		promised += settle(&f, now) > now;
		void *st = NULL;
		struct rk_error err;
		assert_int_equal(rk_policy_sia.create(&st, NULL, &err), RK_OK);
		struct rk_sched_input in = fx_input(&f, now);
		struct rk_decisions d;
		rk_decisions_init(&d);
		assert_int_equal(rk_policy_sia.schedule(st, &in, &d, &err), RK_OK);
		assert_int_equal(d.n, 0);
		assert_int_equal(d.quiet_until_ms, 0);
		rk_policy_sia.destroy(st);
		fx_decisions_free(&d);
		fx_fini(&f);
	}
	assert_true(promised > 0);
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(rk_policy_sia.create(&st, "quiet=maybe", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "quiet=maybe"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(promises_hold),
	    cmocka_unit_test(quiet_option),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
