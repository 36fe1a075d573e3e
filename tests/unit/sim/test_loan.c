/*
 * Capacity loaning in the simulator (issue 5, docs/aryl.md), check mode on:
 * a server lent while inference does not need it within the deadline, taken
 * back a deadline ahead; reclaim scales an elastic job in (aryl) or preempts
 * (fifo, rubick); aryl-noloan never touches a lent server; bad settings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "rubick/sim.h"

static struct rk_model model = {.name = "toy", .global_batch = 8};
static struct rk_cluster cl;
static struct rk_job tmpl[2];
static struct rk_load_series ls;

/* 1 s per iteration at the request, linear in GPUs. */
static int toy_iter(void *ctx, const struct rk_job *job, const struct rk_plan *plan,
		    const struct rk_alloc *alloc, const struct rk_cluster *c, double *iter_s,
		    struct rk_error *err)
{
	(void)ctx, (void)plan, (void)c;
	int g = rk_alloc_total_gpus(alloc);
	if (g <= 0)
		return rk_error_set(err, RK_EINVAL, "empty allocation");
	*iter_s = (double)job->req_gpus / g;
	return 0;
}

static void job(int i, int gpus, int min, int max, double iters)
{
	struct rk_job *j = &tmpl[i];
	memset(j, 0, sizeof *j);
	j->id = i + 1;
	snprintf(j->name, sizeof j->name, "j%d", i + 1);
	j->model = &model;
	j->req_gpus = gpus;
	j->global_batch = 8;
	j->req_plan = (struct rk_plan){.dp = gpus, .tp = 1, .pp = 1, .mb = 8 / gpus, .ga = 1};
	j->iters_total = iters;
	j->est_duration_s = iters;
	j->min_gpus = min;
	j->max_gpus = max;
}

/* node 0: training, 4 GPUs; node 1: inference, 4 GPUs. Inference needs
 * nothing until t = 100 s, then the server: with a 20 s deadline it is lent
 * on [0, 80 s). */
static void setup(void)
{
	struct rk_error err;
	rk_cluster_fini(&cl);
	assert_int_equal(rk_cluster_parse(&cl, "1x4+1x4,pool=loaned", "t", &err), 0);
	rk_load_series_fini(&ls);
	assert_int_equal(rk_load_series_parse(&ls, "t_s,servers_needed\n0,0\n100,1\n", "load", &err), 0);
}

static void run(const char *policy, int n, struct rk_sim_result *r)
{
	struct rk_sim_config cfg;
	rk_sim_config_default(&cfg);
	cfg.restart_ms = 10000;
	cfg.check = 1;
	cfg.iter = toy_iter;
	cfg.inference = &ls;
	cfg.reclaim_deadline_ms = 20000;
	struct rk_error err;
	int rc = rk_sim_run(&cl, tmpl, n, rk_policy_find(policy), &cfg, r, &err);
	if (rc)
		fail_msg("%s: %s", policy, err.msg);
	for (int i = 0; i < r->n_outcomes; i++)
		assert_true(r->outcomes[i].finish_ms > 0);
}

static void test_fifo_preempts(void **state)
{
	(void)state;
	setup();
	job(0, 4, 4, 4, 1000);
	job(1, 4, 4, 4, 1000);
	struct rk_sim_result r;
	run("fifo", 2, &r);
	assert_int_equal(r.servers_loaned, 1);
	assert_int_equal(r.servers_reclaimed, 1);
	assert_int_equal(r.reclaim_preemptions, 1); /* the job on the lent server */
	assert_int_equal(r.reclaim_scale_ins, 0);
	assert_true(r.loaned_gpu_s > 319.0 && r.loaned_gpu_s < 321.0); /* 4 GPUs x 80 s */
	rk_sim_result_fini(&r);
	/* rubick sees the same capacity disappear and never places on it after. */
	run("rubick", 2, &r);
	assert_int_equal(r.servers_reclaimed, 1);
	rk_sim_result_fini(&r);
}

static void test_aryl_scales_in(void **state)
{
	(void)state;
	setup();
	job(0, 4, 2, 8, 2000); /* elastic: starts wide on the lent server, scales in at 80 s */
	struct rk_sim_result r;
	run("aryl", 1, &r);
	assert_int_equal(r.servers_reclaimed, 1);
	assert_int_equal(r.reclaim_preemptions, 0);
	assert_int_equal(r.reclaim_scale_ins, 1);
	/* 80 s at 8 GPUs (160 iterations at 0.5 s), then 10 s restart, then 4 GPUs:
	 * 1840 iterations at 1 s: finish at 80 + 10 + 1840 = 1930 s. */
	assert_int_equal(r.outcomes[0].finish_ms, 1930000);
	rk_sim_result_fini(&r);
	/* The baseline never uses the lent server: 2000 s at its request. */
	run("aryl-noloan", 1, &r);
	assert_int_equal(r.reclaim_preemptions + r.reclaim_scale_ins, 0);
	assert_int_equal(r.outcomes[0].finish_ms, 2000000);
	rk_sim_result_fini(&r);
}

static void test_bad_settings(void **state)
{
	(void)state;
	setup();
	job(0, 4, 4, 4, 10);
	struct rk_sim_config cfg;
	rk_sim_config_default(&cfg);
	cfg.iter = toy_iter;
	cfg.inference = &ls;
	cfg.reclaim_deadline_ms = -1;
	struct rk_sim_result r;
	struct rk_error err;
	assert_int_equal(rk_sim_run(&cl, tmpl, 1, rk_policy_find("fifo"), &cfg, &r, &err), RK_ERANGE);
	assert_non_null(strstr(err.msg, "--reclaim-deadline"));
	cfg.reclaim_deadline_ms = 0;
	struct rk_cluster c2;
	assert_int_equal(rk_cluster_parse(&c2, "2x4", "t", &err), 0);
	assert_int_equal(rk_sim_run(&c2, tmpl, 1, rk_policy_find("fifo"), &cfg, &r, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "pool=loaned"));
	rk_cluster_fini(&c2);
	rk_cluster_fini(&cl);
	rk_load_series_fini(&ls);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_preempts),
		cmocka_unit_test(test_aryl_scales_in),
		cmocka_unit_test(test_bad_settings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
