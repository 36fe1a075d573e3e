/*
 * The simulator engine on hand-computed scenarios (check mode on): FIFO vs
 * SRTF with preemption and restart cost, duration scaling by the oracle,
 * determinism, rejected decisions, oracle failures, jobs that never fit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "rubick/sim.h"

static struct rk_model model = {.name = "toy", .global_batch = 4};
static struct rk_cluster cl;
static struct rk_job tmpl[4];
static int nt;

/* Oracle: 1 s per iteration at the request; slower when given fewer GPUs. */
static int toy_iter(void *ctx, const struct rk_job *job, const struct rk_plan *plan,
		    const struct rk_alloc *alloc, const struct rk_cluster *c, double *iter_s,
		    struct rk_error *err)
{
	(void)plan;
	(void)c;
	double *scale = ctx;
	int g = rk_alloc_total_gpus(alloc);
	if (g <= 0)
		return rk_error_set(err, RK_EINVAL, "empty allocation");
	*iter_s = (scale ? *scale : 1.0) * job->req_gpus / g;
	return 0;
}

static int failing_iter(void *ctx, const struct rk_job *job, const struct rk_plan *plan,
			const struct rk_alloc *alloc, const struct rk_cluster *c, double *iter_s,
			struct rk_error *err)
{
	(void)ctx, (void)plan, (void)alloc, (void)c, (void)iter_s;
	return rk_error_set(err, RK_EINFEASIBLE, "job %lld: measured OOM", (long long)job->id);
}

static void add(int64_t id, int64_t submit_s, int gpus, double iters, double dur_s)
{
	struct rk_job *j = &tmpl[nt++];
	memset(j, 0, sizeof(*j));
	j->id = id;
	snprintf(j->name, sizeof(j->name), "j%lld", (long long)id);
	j->model = &model;
	j->submit_ms = submit_s * 1000;
	j->req_gpus = gpus;
	j->global_batch = gpus;
	j->req_plan = (struct rk_plan){.dp = gpus, .tp = 1, .pp = 1, .mb = 1, .ga = 1};
	j->iters_total = iters;
	j->est_duration_s = dur_s;
	j->min_gpus = j->max_gpus = gpus;
}

static void three_jobs(void)
{
	struct rk_error err;
	rk_cluster_fini(&cl);
	assert_int_equal(rk_cluster_parse(&cl, "1x4", "t", &err), 0);
	nt = 0;
	add(1, 0, 4, 100, 100);
	add(2, 10, 2, 10, 10);
	add(3, 20, 2, 50, 50);
}

static void config(struct rk_sim_config *cfg)
{
	rk_sim_config_default(cfg);
	cfg->restart_ms = 30000;
	cfg->check = 1;
	cfg->iter = toy_iter;
}

static void run(const char *policy, struct rk_sim_config *cfg, struct rk_sim_result *r)
{
	struct rk_error err;
	int rc = rk_sim_run(&cl, tmpl, nt, rk_policy_find(policy), cfg, r, &err);
	if (rc)
		fail_msg("%s: %s", policy, err.msg);
	assert_true(r->checks > 0);
}

static void fifo_by_hand(void **state)
{
	(void)state;
	three_jobs();
	struct rk_sim_config cfg;
	config(&cfg);
	struct rk_sim_result r;
	run("fifo", &cfg, &r);
	/* j1 0..100 s; j2 and j3 wait for it, start at 100 s, end at 110 s and 150 s. */
	assert_int_equal(r.n_outcomes, 3);
	assert_int_equal(r.outcomes[0].finish_ms, 100000);
	assert_int_equal(r.outcomes[1].first_start_ms, 100000);
	assert_int_equal(r.outcomes[1].finish_ms, 110000);
	assert_int_equal(r.outcomes[2].finish_ms, 150000);
	assert_int_equal(r.reconfigs, 0);
	assert_int_equal(r.preemptions, 0);
	assert_int_equal(r.start_ms, 0);
	assert_int_equal(r.end_ms, 150000);
	for (int i = 0; i < 3; i++)
		assert_int_equal(r.outcomes[i].completed, 1);
	/* GPU-seconds: 4 x 100 + 2 x 10 + 2 x 50. */
	assert_true(r.outcomes[0].gpu_s == 400.0);
	assert_true(r.outcomes[2].gpu_s == 100.0);
	/* Samples: the queue holds j2 and j3 until 100 s. */
	int saw_queue2 = 0;
	for (int i = 0; i < r.n_samples; i++) {
		if (r.samples[i].t_ms == 20000)
			saw_queue2 = r.samples[i].queue_len == 2 && r.samples[i].gpus_alloc == 4;
		if (i)
			assert_true(r.samples[i].t_ms > r.samples[i - 1].t_ms);
	}
	assert_true(saw_queue2);
	rk_sim_result_fini(&r);
}

static void srtf_by_hand(void **state)
{
	(void)state;
	three_jobs();
	struct rk_sim_config cfg;
	config(&cfg);
	struct rk_sim_result r;
	run("srtf", &cfg, &r);
	/*
	 * 10 s: j2 (10 s) preempts j1 (90 s left) and runs to 20 s. 20 s: j3 (50 s)
	 * beats j1, runs to 70 s. 70 s: j1 resumes, pays 30 s restart, then its 90
	 * iterations: done at 190 s.
	 */
	assert_int_equal(r.outcomes[1].first_start_ms, 10000);
	assert_int_equal(r.outcomes[1].finish_ms, 20000);
	assert_int_equal(r.outcomes[2].first_start_ms, 20000);
	assert_int_equal(r.outcomes[2].finish_ms, 70000);
	assert_int_equal(r.outcomes[0].finish_ms, 190000);
	assert_int_equal(r.outcomes[0].preemptions, 1);
	assert_int_equal(r.outcomes[0].restarts, 1);
	assert_int_equal(r.reconfigs, 1);
	assert_int_equal(r.preemptions, 1);
	/* j1 held 4 GPUs for 10 s, then 30 s restart + 90 s run. */
	assert_true(r.outcomes[0].gpu_s == 4.0 * 130);
	rk_sim_result_fini(&r);

	/* Without restart cost j1 ends 30 s earlier. */
	cfg.restart_ms = 0;
	run("srtf", &cfg, &r);
	assert_int_equal(r.outcomes[0].finish_ms, 160000);
	assert_int_equal(r.reconfigs, 1);
	rk_sim_result_fini(&r);

	/* A per-model override replaces the default delay. */
	struct rk_sim_restart_override ov = {.model = "toy", .restart_ms = 5000};
	cfg.restart_ms = 30000;
	cfg.overrides = &ov;
	cfg.n_overrides = 1;
	run("srtf", &cfg, &r);
	assert_int_equal(r.outcomes[0].finish_ms, 165000);
	rk_sim_result_fini(&r);
}

static void tiresias_and_sjf_complete(void **state)
{
	(void)state;
	const char *names[] = {"sjf", "tiresias"};
	for (int k = 0; k < 2; k++) {
		three_jobs();
		struct rk_sim_config cfg;
		config(&cfg);
		struct rk_sim_result r;
		run(names[k], &cfg, &r);
		for (int i = 0; i < 3; i++)
			assert_int_equal(r.outcomes[i].completed, 1);
		/* Neither preempts here: Tiresias keeps j1 (under 16 GPU-hours, first in). */
		assert_int_equal(r.outcomes[0].finish_ms, 100000);
		rk_sim_result_fini(&r);
	}
}

static void duration_scaled_by_oracle(void **state)
{
	(void)state;
	struct rk_error err;
	rk_cluster_fini(&cl);
	assert_int_equal(rk_cluster_parse(&cl, "1x4", "t", &err), 0);
	nt = 0;
	add(1, 5, 2, 0, 100); /* only a duration: 100 s at the request */
	add(2, 5, 1, 30, 0);  /* only iterations */
	double slow = 2.0;    /* the oracle: 2 s per iteration at the request */
	struct rk_sim_config cfg;
	config(&cfg);
	cfg.iter_ctx = &slow;
	struct rk_sim_result r;
	run("fifo", &cfg, &r);
	/* 50 iterations x 2 s: the trace's 100 s; 30 iterations x 2 s = 60 s. */
	assert_int_equal(r.outcomes[0].finish_ms, 105000);
	assert_int_equal(r.outcomes[1].finish_ms, 65000);
	assert_int_equal(r.jobs_scaled, 1);
	rk_sim_result_fini(&r);
}

static void deterministic(void **state)
{
	(void)state;
	three_jobs();
	add(4, 20, 1, 7, 7);
	struct rk_sim_config cfg;
	config(&cfg);
	cfg.seed = 42;
	const char *names[] = {"fifo", "sjf", "srtf", "tiresias"};
	for (int k = 0; k < 4; k++) {
		struct rk_sim_result a, b;
		run(names[k], &cfg, &a);
		run(names[k], &cfg, &b);
		assert_int_equal(a.n_outcomes, b.n_outcomes);
		assert_int_equal(a.n_samples, b.n_samples);
		assert_memory_equal(a.outcomes, b.outcomes, sizeof(*a.outcomes) * (size_t)a.n_outcomes);
		assert_memory_equal(a.samples, b.samples, sizeof(*a.samples) * (size_t)a.n_samples);
		rk_sim_result_fini(&a);
		rk_sim_result_fini(&b);
	}
}

/* A policy that puts every pending job on node 0 with all its GPUs. */
static int greedy_create(void **s, const char *o, struct rk_error *e)
{
	(void)o, (void)e;
	*s = NULL;
	return 0;
}
static void greedy_destroy(void *s)
{
	(void)s;
}
static int greedy_schedule(void *s, const struct rk_sched_input *in, struct rk_decisions *out,
			   struct rk_error *e)
{
	(void)s, (void)e;
	for (int i = 0; i < in->n_jobs; i++) {
		const struct rk_job *j = in->jobs[i];
		if (j->state != RK_JOB_PENDING)
			continue;
		struct rk_alloc a;
		rk_alloc_init(&a);
		rk_alloc_add(&a, 0, j->req_gpus, 0, 0);
		rk_decisions_push(out, j->id, &a, &j->req_plan);
		rk_alloc_fini(&a);
	}
	return 0;
}
static const struct rk_policy_ops greedy = {"greedy", "test", greedy_create, greedy_destroy,
					    greedy_schedule, 0, 0, NULL};

static void rejects_bad_decisions(void **state)
{
	(void)state;
	three_jobs();
	tmpl[1].submit_ms = 0; /* j1 and j2 arrive together: 6 GPUs on a 4-GPU node */
	struct rk_sim_config cfg;
	config(&cfg);
	struct rk_sim_result r;
	struct rk_error err;
	assert_int_equal(rk_sim_run(&cl, tmpl, nt, &greedy, &cfg, &r, &err), RK_EINFEASIBLE);
	assert_non_null(strstr(err.msg, "policy greedy: job 2 (j2): node 0: 2 GPUs asked, 0 free"));
	assert_null(r.outcomes);
}

static void oracle_failure_named(void **state)
{
	(void)state;
	three_jobs();
	struct rk_sim_config cfg;
	config(&cfg);
	struct rk_sim_result r;
	struct rk_error err;
	cfg.iter = failing_iter;
	/* Every job has both iterations and duration: the failure comes at the first start. */
	assert_int_equal(rk_sim_run(&cl, tmpl, nt, rk_policy_find("fifo"), &cfg, &r, &err),
			 RK_EINFEASIBLE);
	assert_non_null(strstr(err.msg, "policy fifo: job 1 (j1): the oracle cannot run"));
	assert_non_null(strstr(err.msg, "measured OOM"));
	/* A duration-only job needs the oracle at its request before anything runs. */
	tmpl[0].iters_total = 0;
	assert_int_equal(rk_sim_run(&cl, tmpl, nt, rk_policy_find("fifo"), &cfg, &r, &err),
			 RK_EINFEASIBLE);
	assert_non_null(strstr(err.msg, "job 1 (j1): iteration time at the request"));
}

static void bad_jobs_and_config(void **state)
{
	(void)state;
	struct rk_sim_config cfg;
	struct rk_sim_result r;
	struct rk_error err;
	const struct rk_policy_ops *fifo = rk_policy_find("fifo");
	three_jobs();
	config(&cfg);
	tmpl[2].id = 1;
	assert_int_equal(rk_sim_run(&cl, tmpl, nt, fifo, &cfg, &r, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "duplicate job id"));
	three_jobs();
	tmpl[1].req_plan.mb = 3;
	assert_int_equal(rk_sim_run(&cl, tmpl, nt, fifo, &cfg, &r, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "job 2 (j2): requested plan"));
	three_jobs();
	tmpl[1].iters_total = 0;
	tmpl[1].est_duration_s = 0;
	assert_int_equal(rk_sim_run(&cl, tmpl, nt, fifo, &cfg, &r, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "job 2 (j2): neither iterations nor a duration"));
	three_jobs();
	tmpl[0].model = NULL;
	assert_int_equal(rk_sim_run(&cl, tmpl, nt, fifo, &cfg, &r, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "job 1 (j1): no model"));
	three_jobs();
	cfg.interval_ms = 0;
	assert_int_equal(rk_sim_run(&cl, tmpl, nt, fifo, &cfg, &r, &err), RK_ERANGE);
	assert_non_null(strstr(err.msg, "--interval"));
	config(&cfg);
	cfg.restart_ms = -1;
	assert_int_equal(rk_sim_run(&cl, tmpl, nt, fifo, &cfg, &r, &err), RK_ERANGE);
	config(&cfg);
	cfg.policy_options = "bogus=1";
	assert_int_equal(rk_sim_run(&cl, tmpl, nt, fifo, &cfg, &r, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "policy fifo"));
}

static void never_fits_is_unfinished(void **state)
{
	(void)state;
	three_jobs();
	add(4, 0, 8, 10, 10); /* 8 GPUs on a 4-GPU cluster */
	tmpl[3].global_batch = 8;
	tmpl[3].req_plan.dp = 8;
	struct rk_sim_config cfg;
	config(&cfg);
	struct rk_sim_result r;
	run("srtf", &cfg, &r);
	assert_int_equal(r.outcomes[3].completed, 0);
	assert_int_equal(r.outcomes[3].first_start_ms, -1);
	assert_int_equal(r.outcomes[3].finish_ms, -1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(r.outcomes[i].completed, 1);
	rk_sim_result_fini(&r);
	/* A horizon stops the run early. */
	three_jobs();
	config(&cfg);
	cfg.horizon_ms = 50000;
	run("fifo", &cfg, &r);
	assert_int_equal(r.end_ms, 50000);
	assert_int_equal(r.outcomes[0].completed, 0);
	assert_true(r.outcomes[0].gpu_s == 200.0);
	rk_sim_result_fini(&r);
}

/*
 * A policy that starts pending jobs on 2 GPUs of node 0 and, from 60 s on,
 * moves a running job to 4 GPUs (mode 1: a reconfiguration) or gives it 8
 * more CPUs on the same GPUs (mode 2: resources only), or moves it to two
 * other GPUs of the same node (mode 3, named GPUs: a move, so a restart).
 */
static int grow_mode;
static int grow_schedule(void *s, const struct rk_sched_input *in, struct rk_decisions *out,
			 struct rk_error *e)
{
	(void)s, (void)e;
	for (int i = 0; i < in->n_jobs; i++) {
		const struct rk_job *j = in->jobs[i];
		struct rk_alloc a;
		rk_alloc_init(&a);
		struct rk_plan p = {.tp = 1, .pp = 1, .ga = 1};
		if (j->state == RK_JOB_PENDING) {
			rk_alloc_add(&a, 0, 2, 0, 0);
			if (grow_mode == 3)
				a.shares[0].gpu_mask = 0x3; /* GPUs 0 and 1 */
			p.dp = 2;
			p.mb = 2;
		} else if (grow_mode == 3) {
			if (in->now_ms < 60000 || j->alloc.shares[0].gpu_mask != 0x3)
				continue;
			rk_alloc_add(&a, 0, 2, 0, 0);
			a.shares[0].gpu_mask = 0xc; /* the same node's GPUs 2 and 3 */
			p.dp = 2;
			p.mb = 2;
		} else if (in->now_ms >= 60000 && rk_alloc_total_gpus(&j->alloc) == 2 &&
			   j->alloc.shares[0].cpus == 0) {
			rk_alloc_add(&a, 0, grow_mode == 1 ? 4 : 2, grow_mode == 1 ? 0 : 8, 0);
			p.dp = grow_mode == 1 ? 4 : 2;
			p.mb = grow_mode == 1 ? 1 : 2;
		} else {
			continue;
		}
		rk_decisions_push(out, j->id, &a, &p);
		rk_alloc_fini(&a);
	}
	return 0;
}
static const struct rk_policy_ops grow = {"grow", "test", greedy_create, greedy_destroy,
					  grow_schedule, 0, 0, NULL};

static void reconfiguration_and_resources(void **state)
{
	(void)state;
	struct rk_error err;
	rk_cluster_fini(&cl);
	assert_int_equal(rk_cluster_parse(&cl, "1x4", "t", &err), 0);
	nt = 0;
	add(1, 0, 2, 100, 0);
	tmpl[0].global_batch = 4;
	tmpl[0].req_plan.mb = 2;
	tmpl[0].max_gpus = 4; /* elastic: the policy may grow it (the engine checks the range) */
	struct rk_sim_config cfg;
	config(&cfg);
	struct rk_sim_result r;
	/*
	 * 0-60 s on 2 GPUs at 1 s per iteration (60 done); at 60 s moved to 4 GPUs:
	 * 30 s restart, then 40 iterations at 0.5 s: done at 110 s.
	 */
	grow_mode = 1;
	if (rk_sim_run(&cl, tmpl, nt, &grow, &cfg, &r, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(r.outcomes[0].finish_ms, 110000);
	assert_int_equal(r.outcomes[0].restarts, 1);
	assert_int_equal(r.outcomes[0].preemptions, 0);
	assert_int_equal(r.reconfigs, 1);
	assert_true(r.outcomes[0].gpu_s == 2.0 * 60 + 4.0 * 50);
	rk_sim_result_fini(&r);
	/* More CPUs on the same GPUs: no restart, same speed here, done at 100 s. */
	grow_mode = 2;
	if (rk_sim_run(&cl, tmpl, nt, &grow, &cfg, &r, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(r.outcomes[0].finish_ms, 100000);
	assert_int_equal(r.outcomes[0].restarts, 0);
	assert_int_equal(r.reconfigs, 0);
	assert_int_equal(r.decisions, 2);
	rk_sim_result_fini(&r);
	/* The same count of GPUs, other GPUs of the same node: the job moves, so it
	 * restarts (30 s): 60 done by 60 s, 40 more from 90 s at 1 s each. */
	grow_mode = 3;
	if (rk_sim_run(&cl, tmpl, nt, &grow, &cfg, &r, &err))
		fail_msg("%s", err.msg);
	assert_int_equal(r.outcomes[0].restarts, 1);
	assert_int_equal(r.outcomes[0].finish_ms, 130000);
	rk_sim_result_fini(&r);
}

static int teardown(void **state)
{
	(void)state;
	rk_cluster_fini(&cl);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fifo_by_hand),
		cmocka_unit_test(srtf_by_hand),
		cmocka_unit_test(tiresias_and_sjf_complete),
		cmocka_unit_test(duration_scaled_by_oracle),
		cmocka_unit_test(deterministic),
		cmocka_unit_test(rejects_bad_decisions),
		cmocka_unit_test(oracle_failure_named),
		cmocka_unit_test(bad_jobs_and_config),
		cmocka_unit_test(never_fits_is_unfinished),
		cmocka_unit_test(reconfiguration_and_resources),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
