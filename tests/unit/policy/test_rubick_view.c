/*
 * The Rubick policy's view cache (src/policy/rubick/rubick_view.c): a view is built
 * once per key and handed back, unmoved, on every later lookup, however many
 * keys the cache holds (its hash table grows past 64 and 128 entries here);
 * a refit (new parameters) is a new key; trim keeps views below the cap.
 * The request's baseline throughput is cached beside the views.
 */
#include "baseline_fixture.h"

#include "policy/common/baseline.h"
#include "policy/rubick/rubick_internal.h"

#define N_KEYS 300

/* Res-only views (the user's plan scaled) are cheap to build: keys differ by max_gpus. */
static const struct rubick_view *get(struct rubick_cache *c, struct fixture *f, int max_gpus)
{
	const struct rubick_view *v = NULL;
	struct rk_error err;
	assert_int_equal(rubick_view_get(c, RUBICK_RES_ONLY, &f->jobs[0], &f->env, 8, 81920,
					 f->nodes[0].mem_mb, max_gpus, &v, &err),
			 RK_OK);
	assert_non_null(v);
	assert_int_equal(v->max_gpus, max_gpus);
	return v;
}

static void lookups_return_the_built_view(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	fx_job(&f, 1, 0, 1, 0);
	f.jobs[0].global_batch = 1;
	f.jobs[0].req_plan = fx_dp_plan(1, 1, 0);
	struct rubick_cache *c = NULL;
	assert_int_equal(rubick_cache_create(&c), RK_OK);
	static const struct rubick_view *first[N_KEYS + 1];
	for (int g = 1; g <= N_KEYS; g++) {
		first[g] = get(c, &f, g);
		for (int h = 1; h < g; h++)
			assert_ptr_not_equal(first[h], first[g]);
	}
	rubick_cache_trim(c); /* far below the cap: keeps everything */
	for (int g = N_KEYS; g >= 1; g--)
		assert_ptr_equal(get(c, &f, g), first[g]);
	/* One GPU is the whole view at batch 1: every size repeats size 1. */
	assert_true(first[N_KEYS]->tput_sps[1] > 0);
	assert_int_equal(first[N_KEYS]->use_gpus[N_KEYS], 1);
	/* A refit changes the parameters: a new view, the old one still there. */
	f.model.perf.k_const *= 2;
	const struct rubick_view *refit = get(c, &f, 8);
	assert_ptr_not_equal(refit, first[8]);
	assert_true(refit->tput_sps[1] < first[8]->tput_sps[1]);
	f.model.perf.k_const /= 2;
	assert_ptr_equal(get(c, &f, 8), first[8]);
	rubick_cache_destroy(c);
	fx_fini(&f);
}

/* A build that fails is remembered and fails again from the cache. */
static void failures_are_cached(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	fx_job(&f, 1, 0, 1, 0);
	f.jobs[0].global_batch = 1;
	f.jobs[0].req_plan = fx_dp_plan(1, 1, 0);
	struct rubick_cache *c = NULL;
	assert_int_equal(rubick_cache_create(&c), RK_OK);
	for (int i = 0; i < 2; i++) {
		const struct rubick_view *v = NULL;
		struct rk_error err;
		/* 1 MB per GPU: no size of the plan fits in memory. */
		int rc = rubick_view_get(c, RUBICK_RES_ONLY, &f.jobs[0], &f.env, 8, 1,
					 f.nodes[0].mem_mb, 4, &v, &err);
		assert_true(rc < 0);
		assert_null(v);
	}
	rubick_cache_destroy(c);
	fx_fini(&f);
}

/* The request's baseline: rk_baseline_tput_sps on the consolidated placement, remembered. */
static void baseline_is_the_request_on_consolidated_nodes(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	fx_job(&f, 1, 0, 4, 0);
	struct rubick_cache *c = NULL;
	assert_int_equal(rubick_cache_create(&c), RK_OK);
	struct rk_placement pl = {.n_nodes = 1, .gpus = {4}};
	double want = 0;
	assert_int_equal(rk_baseline_tput_sps(&f.jobs[0], &f.jobs[0].req_plan, &pl, 8, &f.env, &want),
			 RK_OK);
	assert_true(want > 0);
	for (int i = 0; i < 2; i++) /* built, then from the cache */
		assert_true(rubick_view_baseline(c, &f.jobs[0], &f.env, 8) == want);
	/* Nodes of 2 GPUs: the same request spans two of them, a different price. */
	struct rk_placement two = {.n_nodes = 2, .gpus = {2, 2}};
	double want2 = 0;
	assert_int_equal(rk_baseline_tput_sps(&f.jobs[0], &f.jobs[0].req_plan, &two, 8, &f.env,
					      &want2), RK_OK);
	assert_true(rubick_view_baseline(c, &f.jobs[0], &f.env, 2) == want2);
	/* A refit is a new key, not the old figure. */
	f.model.perf.k_const *= 2;
	double refit = rubick_view_baseline(c, &f.jobs[0], &f.env, 8);
	assert_true(refit > 0 && refit < want);
	f.model.perf.k_const /= 2;
	assert_true(rubick_view_baseline(c, &f.jobs[0], &f.env, 8) == want);
	/* A request the model cannot place (65 nodes of 1 GPU): 0, remembered too. */
	f.jobs[0].req_gpus = 65;
	f.jobs[0].req_plan = fx_dp_plan(65, 65, 0);
	f.jobs[0].global_batch = 65;
	for (int i = 0; i < 2; i++)
		assert_true(rubick_view_baseline(c, &f.jobs[0], &f.env, 1) == 0);
	rubick_cache_destroy(c);
	fx_fini(&f);
}

/* Baselines filling the cache are dropped alone: views keep their addresses. */
static void trim_drops_baselines_alone(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	fx_job(&f, 1, 0, 1, 0);
	f.jobs[0].global_batch = 1;
	f.jobs[0].req_plan = fx_dp_plan(1, 1, 0);
	struct rubick_cache *c = NULL;
	assert_int_equal(rubick_cache_create(&c), RK_OK);
	const struct rubick_view *v = get(c, &f, 4);
	double first = rubick_view_baseline(c, &f.jobs[0], &f.env, 8);
	for (int b = 2; b <= 4096; b++) { /* 4096 distinct requests: batches 1..4096 */
		f.jobs[0].global_batch = b;
		f.jobs[0].req_plan = fx_dp_plan(b, 1, 0);
		rubick_view_baseline(c, &f.jobs[0], &f.env, 8);
	}
	f.jobs[0].global_batch = 1;
	f.jobs[0].req_plan = fx_dp_plan(1, 1, 0);
	rubick_cache_trim(c);
	/* Still allocated (MALLOC_PERTURB_ and the sanitizers would see a freed one). */
	assert_int_equal(v->max_gpus, 4);
	assert_true(v->tput_sps[4] > 0);
	assert_ptr_equal(get(c, &f, 4), v);
	assert_true(rubick_view_baseline(c, &f.jobs[0], &f.env, 8) == first);
	rubick_cache_destroy(c);
	fx_fini(&f);
}

/*
 * A job with a floor (min_gpus, docs/policies.md "GPU ranges"): no size below
 * it is feasible, every size at or above it snaps only to sizes in range
 * (lo <= use_gpus[g] <= g, a fixed point), throughput stays non-decreasing,
 * and the job still runs at or above its floor where its unrestricted curve
 * snaps below it (full mode, floor 5: the curve runs 5 GPUs' worth on 4). The
 * floored view is its own cache entry.
 */
static void floor_keeps_sizes_in_range(void **state)
{
	(void)state;
	for (int k = 0; k < 3; k++) {
		int mode = k == 1 ? RUBICK_RES_ONLY : RUBICK_FULL, lo = k == 2 ? 5 : 4;
		struct fixture f;
		fx_init(&f, 2);
		f.model.allow_3d = 1;
		struct rk_job *j = fx_job(&f, 1, 0, 8, 0);
		j->global_batch = 8;
		j->req_plan = fx_dp_plan(8, 8, 0);
		struct rubick_cache *c = NULL;
		assert_int_equal(rubick_cache_create(&c), RK_OK);
		const struct rubick_view *free_v = NULL, *v = NULL;
		struct rk_error err;
		j->min_gpus = 1;
		assert_int_equal(rubick_view_get(c, mode, j, &f.env, 8, 81920, f.nodes[0].mem_mb, 16,
						 &free_v, &err), RK_OK);
		j->min_gpus = lo;
		assert_int_equal(rubick_view_get(c, mode, j, &f.env, 8, 81920, f.nodes[0].mem_mb, 16,
						 &v, &err), RK_OK);
		assert_ptr_not_equal(v, free_v);
		if (k == 2)
			assert_true(free_v->use_gpus[lo] < lo); /* the curve alone would go below */
		for (int g = 1; g < lo; g++)
			assert_true(v->tput_sps[g] == 0 && v->use_gpus[g] == 0);
		int runs = 0;
		for (int g = lo; g <= 16; g++) {
			if (!(v->tput_sps[g] > 0))
				continue;
			runs = 1;
			assert_true(v->use_gpus[g] >= lo && v->use_gpus[g] <= g);
			assert_int_equal(v->use_gpus[v->use_gpus[g]], v->use_gpus[g]);
			assert_true(v->tput_sps[g] >= v->tput_sps[g - 1]);
			const struct rk_plan *p = &v->plan[g];
			assert_int_equal(p->dp * p->tp * p->pp, v->use_gpus[g]);
		}
		assert_true(runs);
		/* A floor above the view's sizes cannot be planned (the job runs as requested). */
		j->min_gpus = 17;
		assert_int_equal(rubick_view_get(c, mode, j, &f.env, 8, 81920, f.nodes[0].mem_mb, 16,
						 &v, &err), RK_EINFEASIBLE);
		rubick_cache_destroy(c);
		fx_fini(&f);
	}
}

static double memo_get(struct rubick_cache *c, struct fixture *f, int job, int max_gpus,
                       const struct rubick_view **v)
{
	return rubick_view_job(c, RUBICK_RES_ONLY, &f->jobs[job], &f->env, 8, 81920,
	                       f->nodes[0].mem_mb, max_gpus, v);
}

/*
 * rubick_view_job answers what rubick_view_get and rubick_view_baseline
 * answer, from its per-job memo while the job's inputs stay the same, and
 * notices every change: a refit, another request, another cap, another job
 * in the same memo slot, and views freed by a trim.
 */
static void job_memo_answers_what_the_cache_answers(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	fx_job(&f, 1, 0, 1, 0);
	fx_job(&f, 1 + 64, 0, 2, 0); /* the memo has 64 slots for 1 job: same slot as job 1 */
	for (int i = 0; i < 2; i++) {
		f.jobs[i].global_batch = 1;
		f.jobs[i].req_plan = fx_dp_plan(1, 1, 0);
	}
	struct rubick_cache *c = NULL;
	assert_int_equal(rubick_cache_create(&c), RK_OK);
	rubick_cache_reserve_jobs(c, 1);
	const struct rubick_view *v = NULL, *w = NULL;
	double base = memo_get(c, &f, 0, 4, &v);
	assert_ptr_equal(v, get(c, &f, 4));
	assert_true(base > 0 && base == rubick_view_baseline(c, &f.jobs[0], &f.env, 8));
	assert_true(memo_get(c, &f, 0, 4, &w) == base); /* from the memo */
	assert_ptr_equal(w, v);
	/* Another cap: another view. No view below 1 GPU, the baseline still. */
	assert_true(memo_get(c, &f, 0, 2, &w) == base);
	assert_ptr_equal(w, get(c, &f, 2));
	assert_true(memo_get(c, &f, 0, 0, &w) == base);
	assert_null(w);
	/* A refit: new parameters, new answers; back again, the old ones. */
	f.model.perf.k_const *= 2;
	double refit = memo_get(c, &f, 0, 4, &w);
	assert_ptr_not_equal(w, v);
	assert_ptr_equal(w, get(c, &f, 4));
	assert_true(refit > 0 && refit < base);
	f.model.perf.k_const /= 2;
	assert_true(memo_get(c, &f, 0, 4, &w) == base);
	assert_ptr_equal(w, v);
	/* Another request of the same job. */
	int cpus = f.jobs[0].req_cpus;
	f.jobs[0].req_cpus = cpus + 7;
	memo_get(c, &f, 0, 4, &w);
	assert_ptr_equal(w, get(c, &f, 4));
	assert_ptr_not_equal(w, v);
	f.jobs[0].req_cpus = cpus;
	/* Another floor (the job's range changed, e.g. a PUT): another answer
	 * (none here: a batch of 1 runs on no 2 GPUs, the job runs as requested). */
	int lo = f.jobs[0].min_gpus;
	f.jobs[0].min_gpus = 2;
	memo_get(c, &f, 0, 4, &w);
	assert_null(w);
	f.jobs[0].min_gpus = lo;
	assert_true(memo_get(c, &f, 0, 4, &w) == base);
	assert_ptr_equal(w, v);
	/* Job 65 takes job 1's slot: each still gets its own answers. */
	double other = memo_get(c, &f, 1, 4, &w);
	assert_true(other == rubick_view_baseline(c, &f.jobs[1], &f.env, 8));
	assert_true(memo_get(c, &f, 0, 4, &w) == base);
	assert_ptr_equal(w, v);
	/* A trim that frees every view (RUBICK_CACHE_MAX of them): the memo's
	 * pointer is stale and not handed out (ASan would see a freed view). */
	for (int b = 2; b <= 4097; b++) {
		f.jobs[1].global_batch = b;
		f.jobs[1].req_plan = fx_dp_plan(b, 1, 0);
		memo_get(c, &f, 1, 1, &w);
	}
	rubick_cache_trim(c);
	assert_true(memo_get(c, &f, 0, 4, &w) == base);
	assert_non_null(w);
	assert_int_equal(w->max_gpus, 4);
	assert_ptr_equal(w, get(c, &f, 4));
	rubick_cache_destroy(c);
	fx_fini(&f);
}

/*
 * Trace-native speeds (rk_job.native_sps, rubick_view.c native_view): full
 * and res-only views price every size at the driver's measured speed (times
 * the global batch) and apply the 1% rule to it; the baseline of rubick_view_job
 * is the request's measured speed; plan-only keeps the model's. Another table
 * is another view.
 */
static void native_speeds_set_the_scale(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	struct rk_job *j = fx_job(&f, 1, 0, 1, 0);
	j->global_batch = 8;
	j->req_plan = fx_dp_plan(8, 1, 0);
	/* Steps/s: 2 GPUs nearly double, 3 add nothing, 4 (past the model's
	 * guess or not) reach 3x, more add nothing. */
	static const double native[9] = {0, 1.0, 1.9, 1.9, 3.0, 3.0, 3.0, 3.0, 3.0};
	static const double other[9] = {0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
	struct rubick_cache *c = NULL;
	assert_int_equal(rubick_cache_create(&c), RK_OK);
	rubick_cache_reserve_jobs(c, 1);
	const struct rubick_view *model_v = NULL, *v = NULL, *w = NULL;
	double model_base = rubick_view_job(c, RUBICK_FULL, j, &f.env, 8, 81920,
	                                    f.nodes[0].mem_mb, 8, &model_v);
	assert_non_null(model_v);
	j->native_sps = native;
	j->native_max = 8;
	for (int k = 0; k < 2; k++) {
		int mode = k ? RUBICK_RES_ONLY : RUBICK_FULL;
		double base = rubick_view_job(c, mode, j, &f.env, 8, 81920, f.nodes[0].mem_mb, 8, &v);
		assert_true(base == native[1] * 8);
		assert_non_null(v);
		assert_ptr_not_equal(v, model_v);
		assert_true(v->tput_sps[1] == native[1] * 8);
		assert_int_equal(v->use_gpus[2], 2);
		assert_true(v->tput_sps[2] == native[2] * 8);
		assert_true(v->use_gpus[3] <= 2); /* no gain: the 1% rule snaps down */
		assert_int_equal(v->use_gpus[4], 4);
		assert_true(v->tput_sps[4] == native[4] * 8);
		assert_int_equal(v->use_gpus[8], 4);
		for (int g = 1; g <= 8; g++) {
			const struct rk_plan *p = &v->plan[g];
			assert_int_equal(p->dp * p->tp * p->pp, v->use_gpus[g]);
		}
	}
	/* Plan-only runs the request: the model's view and baseline. */
	double po = rubick_view_job(c, RUBICK_PLAN_ONLY, j, &f.env, 8, 81920, f.nodes[0].mem_mb, 8,
	                            &w);
	assert_true(po == model_base);
	/* Another table: another view (that never scales). */
	j->native_sps = other;
	assert_true(rubick_view_job(c, RUBICK_FULL, j, &f.env, 8, 81920, f.nodes[0].mem_mb, 8, &w) ==
	            8.0);
	assert_int_equal(w->use_gpus[8], 1);
	/* Without a table, the model's again. */
	j->native_sps = NULL;
	j->native_max = 0;
	assert_true(rubick_view_job(c, RUBICK_FULL, j, &f.env, 8, 81920, f.nodes[0].mem_mb, 8, &w) ==
	            model_base);
	assert_ptr_equal(w, model_v);
	rubick_cache_destroy(c);
	fx_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lookups_return_the_built_view),
		cmocka_unit_test(failures_are_cached),
		cmocka_unit_test(baseline_is_the_request_on_consolidated_nodes),
		cmocka_unit_test(trim_drops_baselines_alone),
		cmocka_unit_test(floor_keeps_sizes_in_range),
		cmocka_unit_test(job_memo_answers_what_the_cache_answers),
		cmocka_unit_test(native_speeds_set_the_scale),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
