/*
 * Every registered policy keeps every job within its [min_gpus, max_gpus]
 * (docs/policies.md "GPU ranges"): rigid, narrow, odd and wide ranges, single-
 * and multi-node, data and tensor parallel, arriving and finishing over several
 * rounds, every decision checked as the policy returns it and by
 * rk_decisions_validate (range, capacity and plan).
 */
#include "baseline_fixture.h"

#define N_JOBS   21
#define ROUNDS   40
#define ROUND_MS 60000

struct spec {
	int req, min, max, batch, arrive, guaranteed;
	double iters;
	int tp; /* 0 = data parallel */
};

/* Sizes are divisors of the batch, so data-parallel plans exist for most of the range. */
static const struct spec specs[N_JOBS] = {
    {2, 2, 2, 32, 0, 0, 400, 0},
    {4, 4, 4, 32, 0, 0, 300, 0},
    {2, 1, 8, 32, 0, 0, 2000, 0},
    {4, 2, 6, 48, 0, 0, 900, 0},
    {8, 8, 16, 32, 1, 0, 1500, 0},
    {1, 1, 1, 32, 1, 0, 200, 0},
    {4, 3, 12, 48, 2, 0, 1200, 0},
    {16, 16, 16, 32, 2, 0, 800, 0},
    {2, 2, 4, 32, 3, 0, 600, 0},
    {8, 4, 8, 32, 3, 0, 1000, 0},
    {4, 4, 4, 32, 4, 1, 500, 0},
    {2, 1, 32, 32, 5, 0, 3000, 0},
    {6, 6, 6, 48, 6, 0, 700, 0},
    {1, 1, 4, 32, 8, 0, 400, 0},
    {8, 8, 8, 32, 10, 1, 900, 0},
    {12, 6, 24, 48, 12, 0, 1600, 0},
    {2, 2, 2, 32, 14, 0, 300, 0},
    {4, 1, 4, 32, 16, 0, 700, 0},
    {3, 3, 3, 48, 18, 0, 500, 0},
    {16, 8, 32, 32, 20, 0, 2500, 0},
    /* tensor parallel with a wide range: only policies that re-plan may resize it */
    {4, 1, 16, 32, 0, 0, 800, 2},
};

struct world {
	struct fixture f;
	struct rk_job jobs[N_JOBS];
	struct rk_job *active[N_JOBS];
	int resized; /* decisions that ran a job on other than its request */
	int ran;     /* decisions that ran a job */
};

static void world_init(struct world *w)
{
	memset(w, 0, sizeof(*w));
	fx_init(&w->f, 4); /* 32 GPUs */
	for (int i = 0; i < N_JOBS; i++) {
		const struct spec *s = &specs[i];
		struct rk_job *j = &w->jobs[i];
		j->id = i + 1;
		snprintf(j->name, sizeof(j->name), "job%d", i + 1);
		snprintf(j->tenant, sizeof(j->tenant), "t%d", i % 2);
		j->model = &w->f.model;
		j->global_batch = s->batch;
		j->iters_total = s->iters;
		j->submit_ms = (int64_t)s->arrive * ROUND_MS;
		j->req_gpus = s->req;
		j->req_cpus = 8 * s->req;
		j->req_mem_mb = (int64_t)s->req * 100 * 1024;
		j->req_plan = fx_dp_plan(s->batch, s->req, 0);
		if (s->tp > 1) {
			j->req_plan.tp = s->tp;
			j->req_plan.dp = s->req / s->tp;
			j->req_plan.mb = s->batch / j->req_plan.dp;
		}
		j->guaranteed = s->guaranteed;
		j->min_gpus = s->min;
		j->max_gpus = s->max;
		j->est_duration_s = s->iters;
		j->state = RK_JOB_PENDING;
		j->first_start_ms = -1;
		j->last_change_ms = -1;
	}
}

static void world_fini(struct world *w)
{
	for (int i = 0; i < N_JOBS; i++)
		rk_alloc_fini(&w->jobs[i].alloc);
}

static struct rk_job *job_of(struct world *w, int64_t id)
{
	return id >= 1 && id <= N_JOBS ? &w->jobs[id - 1] : NULL;
}

/* Apply `d` at `now`: the driver's part (what the simulator's engine does, simplified). */
static void apply(struct world *w, const struct rk_decisions *d, int64_t now)
{
	for (int i = 0; i < d->n; i++) {
		struct rk_job *j = job_of(w, d->v[i].job_id);
		int was = j->alloc.n > 0;
		rk_alloc_fini(&j->alloc);
		rk_alloc_init(&j->alloc);
		if (d->v[i].alloc.n == 0) {
			j->state = RK_JOB_PENDING;
		} else {
			assert_int_equal(rk_alloc_copy(&j->alloc, &d->v[i].alloc), RK_OK);
			j->plan = d->v[i].plan;
			j->state = RK_JOB_RUNNING;
			if (j->first_start_ms < 0)
				j->first_start_ms = now;
		}
		if (was)
			j->restarts++;
		j->last_change_ms = now;
	}
}

/* One round of progress: iterations in proportion to the GPUs held; finished jobs leave. */
static void advance(struct world *w)
{
	for (int i = 0; i < N_JOBS; i++) {
		struct rk_job *j = &w->jobs[i];
		int g = rk_alloc_total_gpus(&j->alloc);
		if (j->state != RK_JOB_RUNNING || g < 1)
			continue;
		j->iters_done += 25.0 * g;
		j->attained_gpu_s += 60.0 * g;
		if (j->iters_done >= j->iters_total) {
			j->state = RK_JOB_DONE;
			rk_alloc_fini(&j->alloc);
			rk_alloc_init(&j->alloc);
		}
	}
}

static void check_round(struct world *w, const struct rk_sched_input *in,
                        const struct rk_decisions *d, const char *policy, int round)
{
	struct rk_error err;
	for (int i = 0; i < d->n; i++) {
		const struct rk_job *j = job_of(w, d->v[i].job_id);
		assert_non_null(j);
		int g = rk_alloc_total_gpus(&d->v[i].alloc);
		if (d->v[i].alloc.n == 0)
			continue;
		if (g < j->min_gpus || g > j->max_gpus)
			fail_msg("policy %s, round %d: job %lld given %d GPUs, range [%d, %d]",
			         policy, round, (long long)j->id, g, j->min_gpus, j->max_gpus);
		w->ran++;
		w->resized += g != j->req_gpus;
	}
	if (rk_decisions_validate(in, d, policy, &err) != RK_OK)
		fail_msg("round %d: %s", round, err.msg);
}

static void run_policy(const struct rk_policy_ops *ops, int sharing)
{
	struct world w;
	world_init(&w);
	void *st = NULL;
	struct rk_error err;
	if (ops->create(&st, NULL, &err) != RK_OK)
		fail_msg("policy %s: create: %s", ops->name, err.msg);
	for (int r = 0; r < ROUNDS; r++) {
		int64_t now = (int64_t)r * ROUND_MS;
		int n = 0;
		for (int i = 0; i < N_JOBS; i++)
			if (w.jobs[i].submit_ms <= now && w.jobs[i].state != RK_JOB_DONE)
				w.active[n++] = &w.jobs[i];
		struct rk_sched_input in = fx_input(&w.f, now);
		in.jobs = w.active;
		in.n_jobs = n;
		in.seed = (uint64_t)r + 1;
		in.gpu_sharing = sharing;
		struct rk_decisions d;
		rk_decisions_init(&d);
		if (ops->schedule(st, &in, &d, &err) != RK_OK)
			fail_msg("policy %s, round %d: %s", ops->name, r, err.msg);
		check_round(&w, &in, &d, ops->name, r);
		apply(&w, &d, now);
		rk_decisions_fini(&d);
		advance(&w);
	}
	ops->destroy(st);
	/* The rounds did place jobs (a test that places nothing proves nothing). */
	if (w.ran < N_JOBS / 2)
		fail_msg("policy %s: only %d job starts in %d rounds", ops->name, w.ran, ROUNDS);
	/* Policies that reconfigure GPU counts did use the ranges, inside them. */
	if (!strcmp(ops->name, "rubick") || !strcmp(ops->name, "sia"))
		assert_true(w.resized > 0);
	world_fini(&w);
}

static void every_policy_keeps_ranges(void **state)
{
	(void)state;
	int n = 0;
	const struct rk_policy_ops *const *list = rk_policy_list(&n);
	assert_true(n > 0);
	for (int i = 0; i < n; i++) {
		run_policy(list[i], 0);
		if (!strncmp(list[i]->name, "sjf-", 4))
			run_policy(list[i], 1); /* sharing policies with GPU sharing on */
	}
}

/*
 * Rigid jobs under rubick on an idle cluster hold exactly their request,
 * round after round (the operator's report: --gpus 2 ran on 8), and an
 * elastic one is grown, but no further than its max_gpus.
 */
static void rubick_rigid_and_capped(void **state)
{
	(void)state;
	const struct rk_policy_ops *ops = rk_policy_find("rubick");
	assert_non_null(ops);
	for (int elastic = 0; elastic < 2; elastic++) {
		struct fixture f;
		fx_init(&f, 1);
		struct rk_job *j = fx_job(&f, 1, 0, 2, 0);
		j->iters_total = 1e6;
		j->min_gpus = elastic ? 1 : 2;
		j->max_gpus = elastic ? 4 : 2;
		void *st = NULL;
		struct rk_error err;
		assert_int_equal(ops->create(&st, NULL, &err), RK_OK);
		for (int r = 0; r < 5; r++) {
			struct rk_sched_input in = fx_input(&f, (int64_t)r * ROUND_MS);
			struct rk_decisions d;
			rk_decisions_init(&d);
			assert_int_equal(ops->schedule(st, &in, &d, &err), RK_OK);
			fx_check(&f, &d, ops->name);
			if (r == 0) {
				assert_int_equal(d.n, 1);
				int g = fx_gpus(&d.v[0].alloc);
				if (elastic)
					assert_true(g > 2 && g <= 4);
				else
					assert_int_equal(g, 2);
				free(j->alloc.shares);
				j->alloc.n = 0;
				j->alloc.shares = NULL;
				assert_int_equal(rk_alloc_copy(&j->alloc, &d.v[0].alloc), RK_OK);
				j->plan = d.v[0].plan;
				j->state = RK_JOB_RUNNING;
				j->first_start_ms = j->last_change_ms = 0;
			} else {
				assert_int_equal(d.n, 0); /* nothing to undo, nothing to grow */
			}
			rk_decisions_fini(&d);
		}
		ops->destroy(st);
		fx_fini(&f);
	}
}

/*
 * A job left holding GPUs outside its range (its range changed under it, e.g.
 * narrowed by a tenant's quota at a daemon restart) is moved back inside by
 * rubick in the next round, or stopped; never kept outside.
 */
static void rubick_moves_out_of_range_holder(void **state)
{
	(void)state;
	const struct rk_policy_ops *ops = rk_policy_find("rubick");
	struct fixture f;
	fx_init(&f, 1);
	struct rk_job *j = fx_job(&f, 1, 0, 8, 0);
	j->iters_total = 1e6;
	fx_run_on(j, 0, 0);
	j->min_gpus = 2;
	j->max_gpus = 4;
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(ops->create(&st, NULL, &err), RK_OK);
	struct rk_sched_input in = fx_input(&f, 1000 * 1000);
	struct rk_decisions d;
	rk_decisions_init(&d);
	assert_int_equal(ops->schedule(st, &in, &d, &err), RK_OK);
	fx_check(&f, &d, ops->name);
	const struct rk_decision *x = fx_decision(&d, 1);
	assert_non_null(x);
	int g = fx_gpus(&x->alloc);
	assert_true(g >= 2 && g <= 4);
	rk_decisions_fini(&d);
	ops->destroy(st);
	fx_fini(&f);
}

/* The validator refuses a decision outside the range and names it. */
static void validator_refuses_out_of_range(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 1);
	struct rk_job *j = fx_job(&f, 1, 0, 2, 0);
	j->min_gpus = j->max_gpus = 2;
	struct rk_alloc a;
	rk_alloc_init(&a);
	assert_int_equal(rk_alloc_add(&a, 0, 4, 32, 400 * 1024), RK_OK);
	struct rk_plan p = fx_dp_plan(32, 4, 0);
	struct rk_decisions d;
	rk_decisions_init(&d);
	assert_int_equal(rk_decisions_push(&d, 1, &a, &p), RK_OK);
	struct rk_sched_input in = fx_input(&f, 0);
	struct rk_error err;
	assert_int_equal(rk_decisions_validate(&in, &d, "x", &err), RK_ERANGE);
	assert_non_null(strstr(err.msg, "job 1 (job1): 4 GPUs is outside the job's range [2, 2]"));
	rk_decisions_fini(&d);
	rk_alloc_fini(&a);
	fx_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_policy_keeps_ranges),
	    cmocka_unit_test(rubick_rigid_and_capped),
	    cmocka_unit_test(rubick_moves_out_of_range_holder),
	    cmocka_unit_test(validator_refuses_out_of_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
