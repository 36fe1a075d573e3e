/* Sia baseline (docs/references.md §5.1) on hand-checked 2-node snapshots. */
#include "baseline_fixture.h"

#include "policy/common/baseline.h"

#include <math.h>

extern const struct rk_policy_ops rk_policy_sia;

static void run_round(struct fixture *f, const char *opts, int64_t now_ms,
		      struct rk_decisions *d)
{
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(rk_policy_sia.create(&st, opts, &err), RK_OK);
	struct rk_sched_input in = fx_input(f, now_ms);
	rk_decisions_init(d);
	if (rk_policy_sia.schedule(st, &in, d, &err) != RK_OK)
		fail_msg("%s", err.msg);
	rk_policy_sia.destroy(st);
	fx_check(f, d, "sia");
}

/* Model throughput of job j's plan scaled to g GPUs on one node (g <= 8) or g/8 full nodes. */
static double tput_at(struct fixture *f, struct rk_job *j, int g)
{
	struct rk_plan p;
	if (rk_baseline_plan_scale(&j->req_plan, j->global_batch, g, &p))
		return 0;
	struct rk_placement pl = {.n_nodes = g <= 8 ? 1 : g / 8};
	for (int i = 0; i < pl.n_nodes; i++)
		pl.gpus[i] = g <= 8 ? g : 8;
	double t = 0;
	assert_int_equal(rk_baseline_tput_sps(j, &p, &pl, 8, &f->env, &t), RK_OK);
	return t;
}

/*
 * Alone in the cluster, p < 0 and λ_n > 0 make the job take the configuration
 * with the highest goodput (the objective is decreasing in goodput). Its plan
 * is the user's, scaled: same tp/pp/zero, dp = GPUs, mb*ga*dp = 32.
 */
static void lone_job_takes_best_config(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	struct rk_job *j = fx_job(&f, 1, 0, 2, 0);
	int best_g = 0;
	double best = 0;
	const int sizes[] = {1, 2, 4, 8, 16};
	for (int i = 0; i < 5; i++) {
		double t = tput_at(&f, j, sizes[i]);
		if (t > best) {
			best = t;
			best_g = sizes[i];
		}
	}
	assert_true(best_g > 0);
	struct rk_decisions d;
	run_round(&f, NULL, 1000, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(fx_gpus(&d.v[0].alloc), best_g);
	assert_int_equal(d.v[0].plan.dp, best_g);
	assert_int_equal(d.v[0].plan.tp, 1);
	assert_int_equal(d.v[0].plan.zero, j->req_plan.zero);
	assert_int_equal(d.v[0].plan.mb * d.v[0].plan.ga * d.v[0].plan.dp, 32);
	rk_decisions_fini(&d);
	fx_fini(&f);
}

/* Sia's objective term G^p - λ_n (p = -0.5, λ_n = 1.1) of a job on g GPUs. */
static double cost_at(struct fixture *f, struct rk_job *j, int g)
{
	const int sizes[] = {1, 2, 4, 8, 16};
	double min = HUGE_VAL;
	for (int i = 0; i < 5; i++) {
		double t = tput_at(f, j, sizes[i]);
		if (t > 0 && t < min)
			min = t;
	}
	return pow(tput_at(f, j, g) / min, -0.5) - 1.1;
}

/*
 * n identical pending jobs on 16 GPUs: the optimum, found here by brute force
 * over how many jobs get 1, 2, 4, 8 or 16 GPUs, must equal the objective of
 * Sia's decisions (with G normalised per job and p < 0, Sia may prefer fewer
 * jobs with more GPUs over starting every job: λ_n - 1 = 0.1 is all a job
 * gains by starting at its smallest configuration).
 */
static void matches_brute_force(int n_jobs)
{
	struct fixture f;
	fx_init(&f, 2);
	for (int i = 0; i < n_jobs; i++)
		fx_job(&f, 10 + i, i, 4, 0);
	struct rk_job *j = &f.jobs[0];
	const int g[5] = {1, 2, 4, 8, 16};
	double c[5];
	for (int i = 0; i < 5; i++)
		c[i] = cost_at(&f, j, g[i]);
	double best = 0;
	for (int a = 0; a <= 16; a++)
		for (int b = 0; b <= 8; b++)
			for (int d4 = 0; d4 <= 4; d4++)
				for (int e = 0; e <= 2; e++)
					for (int h = 0; h <= 1; h++) {
						int used = a + 2 * b + 4 * d4 + 8 * e + 16 * h;
						int jobs = a + b + d4 + e + h;
						if (used > 16 || jobs > n_jobs)
							continue;
						double v = a * c[0] + b * c[1] + d4 * c[2] + e * c[3] + h * c[4];
						if (v < best)
							best = v;
					}
	struct rk_decisions d;
	run_round(&f, NULL, 1000, &d);
	double got = 0;
	for (int i = 0; i < d.n; i++)
		got += cost_at(&f, j, fx_gpus(&d.v[i].alloc));
	assert_float_equal(got, best, 1e-3 * fabs(best));
	assert_true(d.n >= 1);
	rk_decisions_fini(&d);
	fx_fini(&f);
}

static void optimum_six_jobs(void **state)
{
	(void)state;
	matches_brute_force(6);
}

static void optimum_sixteen_jobs(void **state)
{
	(void)state;
	matches_brute_force(FX_MAX_JOBS);
}

/*
 * Restart factor: a job running on 1 GPU whose best configuration is larger.
 * Young (age < P): r = 1, it moves to the better configuration. Restarted
 * often (restarts * P > age): r = 0, every other configuration is floored and
 * it keeps its current one, so no decision at all.
 */
static void restart_factor_holds_thrashing_jobs(void **state)
{
	(void)state;
	for (int thrash = 0; thrash < 2; thrash++) {
		struct fixture f;
		fx_init(&f, 2);
		struct rk_job *j = fx_job(&f, 1, 0, 1, 0);
		fx_run_on(j, 0, 0);
		assert_true(tput_at(&f, j, 8) > tput_at(&f, j, 1));
		j->restarts = thrash ? 50 : 0;
		int64_t now_ms = thrash ? 3600 * 1000 : 100 * 1000; /* P = 260 s */
		struct rk_decisions d;
		run_round(&f, NULL, now_ms, &d);
		if (thrash) {
			assert_int_equal(d.n, 0);
		} else {
			assert_int_equal(d.n, 1);
			assert_true(fx_gpus(&d.v[0].alloc) > 1);
		}
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
}

/*
 * A job holding its chosen configuration keeps its nodes (no decision); a rigid
 * range (min_gpus == max_gpus) pins every job to its request. A ZeRO-2 job is
 * never scaled below its dp.
 */
static void keeps_nodes_and_honours_ranges(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	struct rk_job *a = fx_job(&f, 1, 0, 4, 0);
	fx_run_on(a, 1, 0);
	struct rk_job *b = fx_job(&f, 2, 5, 4, 0);
	b->req_plan = fx_dp_plan(32, 4, 2);
	a->min_gpus = a->max_gpus = b->min_gpus = b->max_gpus = 4; /* rigid */
	struct rk_decisions d;
	run_round(&f, "range=job", 1000 * 1000, &d);
	assert_null(fx_decision(&d, 1));
	const struct rk_decision *x = fx_decision(&d, 2);
	assert_non_null(x);
	assert_int_equal(fx_gpus(&x->alloc), 4);
	assert_int_equal(x->plan.zero, 2);
	rk_decisions_fini(&d);

	struct rk_plan p;
	assert_int_equal(rk_baseline_plan_scale(&b->req_plan, 32, 2, &p), RK_EINFEASIBLE);
	assert_int_equal(rk_baseline_plan_scale(&b->req_plan, 32, 8, &p), RK_OK);
	assert_int_equal(p.dp, 8);
	assert_int_equal(p.mb * p.ga, 4);
	assert_int_equal(rk_baseline_plan_scale(&b->req_plan, 32, 64, &p), RK_EINFEASIBLE);
	fx_fini(&f);
}

/* A tensor-parallel width of 5 (not a power of two) still runs at its request. */
static void odd_width_runs_at_request(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	struct rk_job *j = fx_job(&f, 1, 0, 5, 0);
	f.model.allow_3d = 1;
	f.model.heads = 20;
	j->global_batch = 16;
	j->req_plan = (struct rk_plan){.dp = 1, .tp = 5, .pp = 1, .mb = 1, .ga = 16};
	struct rk_decisions d;
	run_round(&f, NULL, 1000, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(fx_gpus(&d.v[0].alloc), 5);
	assert_int_equal(d.v[0].plan.tp, 5);
	rk_decisions_fini(&d);
	fx_fini(&f);
}

/*
 * A request that is no multiple of 8 (12 GPUs: 8 + 4) still runs, on two
 * nodes, as does a job whose model cannot be predicted (unfitted: k_sync = 0)
 * at exactly its request and plan.
 */
static void ragged_and_unfitted_requests(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 3);
	struct rk_job *j = fx_job(&f, 1, 0, 12, 0);
	j->global_batch = 24;
	j->req_plan = fx_dp_plan(24, 12, 0);
	j->min_gpus = j->max_gpus = 12;
	struct rk_decisions d;
	run_round(&f, NULL, 1000, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(fx_gpus(&d.v[0].alloc), 12);
	assert_int_equal(d.v[0].alloc.n, 2);
	rk_decisions_fini(&d);
	fx_fini(&f);

	fx_init(&f, 2);
	f.model.perf = (struct rk_perf_params){0};
	fx_job(&f, 2, 0, 4, 0);
	run_round(&f, NULL, 1000, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(fx_gpus(&d.v[0].alloc), 4);
	assert_true(rk_plan_equal(&d.v[0].plan, &f.jobs[0].req_plan));
	rk_decisions_fini(&d);
	fx_fini(&f);
}

/* One round on a policy state kept by the caller (its goodput rows persist). */
static void round_on(void *st, struct fixture *f, int64_t now_ms, struct rk_decisions *d)
{
	struct rk_error err;
	struct rk_sched_input in = fx_input(f, now_ms);
	rk_decisions_init(d);
	if (rk_policy_sia.schedule(st, &in, d, &err) != RK_OK)
		fail_msg("%s", err.msg);
}

/*
 * Goodput rows are kept across rounds (sia_cache.c) only while the request
 * is the same: after the model changes (1,000x the parameters: the gradient
 * all-reduce makes one GPU beat any spread), a kept state decides what a
 * fresh one does, not what the cached row said.
 */
static void rows_follow_the_model(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	fx_job(&f, 1, 0, 2, 0);
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(rk_policy_sia.create(&st, NULL, &err), RK_OK);
	struct rk_decisions d1, d2, fresh;
	round_on(st, &f, 1000, &d1);
	round_on(st, &f, 2000, &d2); /* from the cached row: the same answer */
	assert_int_equal(d1.n, 1);
	assert_int_equal(d2.n, 1);
	assert_int_equal(fx_gpus(&d2.v[0].alloc), fx_gpus(&d1.v[0].alloc));
	rk_decisions_fini(&d2);
	f.model.params *= 1000;
	round_on(st, &f, 3000, &d2);
	run_round(&f, NULL, 3000, &fresh);
	assert_int_equal(d2.n, 1);
	assert_int_equal(fresh.n, 1);
	assert_int_equal(fx_gpus(&d2.v[0].alloc), fx_gpus(&fresh.v[0].alloc));
	assert_int_equal(fx_gpus(&fresh.v[0].alloc), 1);
	assert_true(fx_gpus(&d1.v[0].alloc) > 1);
	rk_decisions_fini(&d1);
	rk_decisions_fini(&d2);
	rk_decisions_fini(&fresh);
	rk_policy_sia.destroy(st);
	fx_fini(&f);
}

/*
 * A job with its trace's measured speeds (rk_job.native_sps: Gavel and
 * Shockwave job types) is priced from them, not from the model: a table that
 * peaks at a size other than the model's best makes the lone job take the
 * table's peak, in a fresh state and in one that priced the same request
 * from the model a round before (the cached row is the model's: keyed apart).
 */
static void native_speeds_price_the_row(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	struct rk_job *j = fx_job(&f, 1, 0, 2, 0);
	int model_g = 0;
	double best = 0;
	const int sizes[] = {1, 2, 4, 8, 16};
	for (int i = 0; i < 5; i++) {
		double t = tput_at(&f, j, sizes[i]);
		if (t > best) {
			best = t;
			model_g = sizes[i];
		}
	}
	int peak = model_g == 4 ? 8 : 4;
	double sps[17] = {0};
	for (int g = 1; g <= 16; g++)
		sps[g] = g <= peak ? 0.1 * g : 0.05 * peak; /* steps/s, falling past the peak */
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(rk_policy_sia.create(&st, NULL, &err), RK_OK);
	struct rk_decisions d1, d2, fresh;
	round_on(st, &f, 1000, &d1);
	assert_int_equal(d1.n, 1);
	assert_int_equal(fx_gpus(&d1.v[0].alloc), model_g);
	j->native_sps = sps;
	j->native_max = 16;
	round_on(st, &f, 2000, &d2);
	run_round(&f, NULL, 2000, &fresh);
	assert_int_equal(d2.n, 1);
	assert_int_equal(fresh.n, 1);
	assert_int_equal(fx_gpus(&d2.v[0].alloc), peak);
	assert_int_equal(fx_gpus(&fresh.v[0].alloc), peak);
	assert_int_equal(fresh.v[0].plan.dp, peak);
	assert_int_equal(fresh.v[0].plan.mb * fresh.v[0].plan.ga * fresh.v[0].plan.dp, 32);
	rk_decisions_fini(&d1);
	rk_decisions_fini(&d2);
	rk_decisions_fini(&fresh);
	rk_policy_sia.destroy(st);
	fx_fini(&f);
}

static void options_are_checked(void **state)
{
	(void)state;
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(rk_policy_sia.create(&st, "p=0", &err), RK_ERANGE);
	assert_non_null(strstr(err.msg, "p=0"));
	assert_int_equal(rk_policy_sia.create(&st, "lambda_n=abc", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "lambda_n=abc"));
	assert_int_equal(rk_policy_sia.create(&st, "foo=1", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "unknown option 'foo'"));
	assert_int_equal(rk_policy_sia.create(&st, "range=all", &err), RK_EINVAL);
	/* range=plan ignored the jobs' ranges, which every policy honours now. */
	assert_int_equal(rk_policy_sia.create(&st, "range=plan", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "min_gpus..max_gpus"));
	assert_int_equal(rk_policy_sia.create(&st, "gap", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "key=value"));
	assert_int_equal(rk_policy_sia.create(&st, "p=-1,lambda_n=2,restart_s=30,gap=0,range=job",
					      &err),
			 RK_OK);
	rk_policy_sia.destroy(st);
	/* No performance environment: a clear error, not a crash. */
	struct fixture f;
	fx_init(&f, 2);
	fx_job(&f, 1, 0, 1, 0);
	assert_int_equal(rk_policy_sia.create(&st, NULL, &err), RK_OK);
	struct rk_sched_input in = fx_input(&f, 0);
	in.env = NULL;
	struct rk_decisions d;
	rk_decisions_init(&d);
	assert_int_equal(rk_policy_sia.schedule(st, &in, &d, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "env"));
	rk_policy_sia.destroy(st);
	rk_decisions_fini(&d);
	fx_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lone_job_takes_best_config),
		cmocka_unit_test(optimum_six_jobs),
		cmocka_unit_test(optimum_sixteen_jobs),
		cmocka_unit_test(restart_factor_holds_thrashing_jobs),
		cmocka_unit_test(keeps_nodes_and_honours_ranges),
		cmocka_unit_test(odd_width_runs_at_request),
		cmocka_unit_test(ragged_and_unfitted_requests),
		cmocka_unit_test(rows_follow_the_model),
		cmocka_unit_test(native_speeds_price_the_row),
		cmocka_unit_test(options_are_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
