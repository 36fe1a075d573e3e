/* The Pollux policy (src/policy/pollux/pollux.c) on hand-filled goodput models:
 * the batch it sets is rk_goodput_optimize's, a job that scales better gets more
 * GPUs, p trades throughput for fairness, the restart factor keeps a job from
 * moving for a small gain, jobs without a goodput model run at their trace batch,
 * and every bad option is refused naming it. */
#include "baseline_fixture.h"

#include "rubick/goodput.h"

#include <math.h>

extern const struct rk_policy_ops rk_policy_pollux;

/* A goodput model on a800: compute beta_c per sample, intra-node sync alpha_r
 * (+ beta_r per replica beyond 2); efficiency ~1 (noise dominates) unless
 * `sqr` is set. Total batch in [32, max_batch], per-GPU batch in [1, 64]. */
static void set_goodput(struct rk_job_goodput *gp, double alpha_r, double beta_r, double sqr,
			double max_batch, bool accumulation)
{
	memset(gp, 0, sizeof(*gp));
	gp->limits = (struct rk_goodput_limits){.init_batch = 32, .max_batch = max_batch,
						.min_local = 1, .max_local = 64,
						.accumulation = accumulation};
	gp->grad = (struct rk_goodput_grad){.sqr = sqr, .var = 1.0};
	gp->trace_batch = 32;
	gp->target = 1e9;
	gp->n_types = 1;
	snprintf(gp->gpu_type[0], sizeof(gp->gpu_type[0]), "a800");
	gp->perf[0] = (struct rk_goodput_perf){.alpha_c = 0.01, .beta_c = 0.01, .alpha_n = 1.0,
					       .beta_n = 0.1, .alpha_r = alpha_r, .beta_r = beta_r,
					       .gamma = 1.0};
}

static int run_round(struct fixture *f, const char *opts, int64_t now_ms, struct rk_decisions *d)
{
	void *st = NULL;
	struct rk_error err = {0};
	assert_int_equal(rk_policy_pollux.create(&st, opts, &err), RK_OK);
	struct rk_sched_input in = fx_input(f, now_ms);
	rk_decisions_init(d);
	int rc = rk_policy_pollux.schedule(st, &in, d, &err);
	if (rc)
		print_message("pollux: %s\n", err.msg);
	assert_int_equal(rc, RK_OK);
	assert_int_equal(rk_decisions_validate(&in, d, "pollux", &err), RK_OK);
	rk_policy_pollux.destroy(st);
	return d->n;
}

static const struct rk_decision *find(const struct rk_decisions *d, int64_t id)
{
	for (int i = 0; i < d->n; i++)
		if (d->v[i].job_id == id)
			return &d->v[i];
	return NULL;
}

static int gpus_of(const struct rk_decisions *d, int64_t id)
{
	const struct rk_decision *x = find(d, id);
	return x ? rk_alloc_total_gpus(&x->alloc) : 0;
}

static int nodes_of(const struct rk_alloc *a)
{
	return a->n;
}

/* A lone job takes the node; its decision's batch is the optimiser's there. */
static void batch_matches_optimize(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	struct rk_job_goodput gp;
	set_goodput(&gp, 0.002, 0.0005, 0.05, 4096, true);
	struct rk_job *j = fx_job(&f, 1, 0, 1, 0);
	j->goodput = &gp;
	struct rk_decisions d;
	run_round(&f, NULL, 60000, &d);
	const struct rk_decision *x = find(&d, 1);
	assert_non_null(x);
	int g = rk_alloc_total_gpus(&x->alloc);
	assert_true(g >= 2);
	struct rk_goodput_choice ch;
	assert_int_equal(rk_goodput_optimize(&gp.perf[0], &gp.grad, &gp.limits, nodes_of(&x->alloc),
					     g, &ch),
			 RK_OK);
	assert_int_equal(x->local_bsz, ch.local_bsz);
	assert_int_equal(x->accum_steps, ch.accum_steps);
	assert_true(x->local_bsz > 0);
	fx_decisions_free(&d);
	fx_fini(&f);
}

/* Same jobs but for their sync cost: the one that scales better gets more GPUs. */
static void scalable_gets_more(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 1);
	struct rk_job_goodput good, poor;
	set_goodput(&good, 0.0001, 0.0, 0.0, 32, false);
	set_goodput(&poor, 0.1, 0.05, 0.0, 32, false);
	fx_job(&f, 1, 0, 1, 0)->goodput = &poor;
	fx_job(&f, 2, 0, 1, 0)->goodput = &good;
	struct rk_decisions d;
	run_round(&f, NULL, 60000, &d);
	int gp = gpus_of(&d, 1), gg = gpus_of(&d, 2);
	print_message("pollux: poor scaling %d GPUs, good scaling %d GPUs\n", gp, gg);
	assert_true(gp >= 1);
	assert_true(gg > gp);
	assert_true(gp + gg <= 8);
	fx_decisions_free(&d);
	fx_fini(&f);
}

/* p = -1 (fair) gives the poorly scaling job more than p = 1 (throughput). */
static void p_changes_fairness(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 1);
	struct rk_job_goodput good, poor;
	set_goodput(&good, 0.0001, 0.0, 0.0, 32, false);
	set_goodput(&poor, 0.02, 0.01, 0.0, 32, false);
	fx_job(&f, 1, 0, 1, 0)->goodput = &poor;
	fx_job(&f, 2, 0, 1, 0)->goodput = &good;
	struct rk_decisions fair, util;
	run_round(&f, "p=-1", 60000, &fair);
	run_round(&f, "p=1", 60000, &util);
	print_message("pollux: poor job gets %d GPUs at p=-1, %d at p=1\n", gpus_of(&fair, 1),
		      gpus_of(&util, 1));
	assert_true(gpus_of(&fair, 1) > gpus_of(&util, 1));
	assert_true(gpus_of(&util, 2) > gpus_of(&fair, 2));
	fx_decisions_free(&fair);
	fx_decisions_free(&util);
	fx_fini(&f);
}

/* A job on 4 GPUs whose best is 8 for ~10% more: with the restart factor of a
 * job 60 s old (0.67) it stays; with restarts free (restart_s=0) it grows. */
static void restart_keeps_job(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 1);
	struct rk_job_goodput gp;
	set_goodput(&gp, 0.02, 0.004, 0.0, 32, false);
	struct rk_job *j = fx_job(&f, 1, 0, 4, 0);
	j->goodput = &gp;
	fx_run_on(j, 0, 0);
	gp.local_bsz = 8;
	struct rk_goodput_choice c4, c8;
	assert_int_equal(rk_goodput_optimize(&gp.perf[0], &gp.grad, &gp.limits, 1, 4, &c4), RK_OK);
	assert_int_equal(rk_goodput_optimize(&gp.perf[0], &gp.grad, &gp.limits, 1, 8, &c8), RK_OK);
	assert_true(c8.goodput > c4.goodput && c8.goodput < 1.3 * c4.goodput);
	struct rk_decisions d;
	run_round(&f, NULL, 60000, &d);
	assert_null(find(&d, 1));
	fx_decisions_free(&d);
	run_round(&f, "restart_s=0", 60000, &d);
	assert_int_equal(gpus_of(&d, 1), 8);
	fx_decisions_free(&d);
	fx_fini(&f);
}

/* Without a goodput model a job runs at its trace batch (local_bsz 0). */
static void without_goodput(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 1);
	fx_job(&f, 1, 0, 2, 0);
	struct rk_decisions d;
	run_round(&f, NULL, 60000, &d);
	const struct rk_decision *x = find(&d, 1);
	assert_non_null(x);
	assert_true(rk_alloc_total_gpus(&x->alloc) >= 1);
	assert_int_equal(x->local_bsz, 0);
	assert_int_equal(x->accum_steps, 0);
	assert_int_equal(rk_policy_pollux.needs, RK_POLICY_NEEDS_GOODPUT);
	assert_non_null(rk_policy_pollux.without);
	fx_decisions_free(&d);
	fx_fini(&f);
}

/* search=ga runs the artifact's GA and its decisions are valid too. */
static void ga_search_runs(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	struct rk_job_goodput good, poor;
	set_goodput(&good, 0.0001, 0.0, 0.0, 32, false);
	set_goodput(&poor, 0.1, 0.05, 0.0, 32, false);
	fx_job(&f, 1, 0, 1, 0)->goodput = &poor;
	fx_job(&f, 2, 0, 1, 0)->goodput = &good;
	struct rk_decisions d;
	run_round(&f, "search=ga,pop=20,gens=20", 60000, &d);
	assert_true(gpus_of(&d, 1) >= 1 && gpus_of(&d, 2) >= 1);
	fx_decisions_free(&d);
	fx_fini(&f);
}

static void bad_options(void **state)
{
	(void)state;
	static const struct {
		const char *opts, *msg;
	} bad[] = {
		{"p=2", "p=2: must be a number in [-10, 1]"},
		{"p=x", "p=x"},
		{"restart_s=-1", "restart_s=-1"},
		{"search=sa", "search=sa: must be greedy or ga"},
		{"ls=-1", "ls=-1: must be an integer in 0..1000"},
		{"pop=1", "pop=1"},
		{"gens=abc", "gens=abc"},
		{"bogus=1", "unknown option 'bogus'"},
		{"p", "option 'p' is not key=value"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		void *st = (void *)1;
		struct rk_error err = {0};
		assert_int_not_equal(rk_policy_pollux.create(&st, bad[i].opts, &err), RK_OK);
		assert_null(st);
		if (!strstr(err.msg, bad[i].msg))
			fail_msg("options '%s': message '%s' lacks '%s'", bad[i].opts, err.msg,
				 bad[i].msg);
	}
	/* search=ga on two GPU types is refused at the round, naming search=ga. */
	struct fixture f;
	fx_init(&f, 2);
	snprintf(f.nodes[1].gpu_type, sizeof(f.nodes[1].gpu_type), "h100");
	fx_job(&f, 1, 0, 1, 0);
	void *st = NULL;
	struct rk_error err = {0};
	assert_int_equal(rk_policy_pollux.create(&st, "search=ga", &err), RK_OK);
	struct rk_sched_input in = fx_input(&f, 0);
	struct rk_decisions d;
	rk_decisions_init(&d);
	assert_int_equal(rk_policy_pollux.schedule(st, &in, &d, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "search=ga needs a cluster of one GPU type"));
	rk_policy_pollux.destroy(st);
	fx_decisions_free(&d);
	fx_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(batch_matches_optimize), cmocka_unit_test(scalable_gets_more),
		cmocka_unit_test(p_changes_fairness),     cmocka_unit_test(restart_keeps_job),
		cmocka_unit_test(without_goodput),        cmocka_unit_test(ga_search_runs),
		cmocka_unit_test(bad_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
