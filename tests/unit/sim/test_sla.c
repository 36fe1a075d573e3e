/*
 * Guaranteed jobs in the simulator (engine_sla.c, metrics.h): a test policy
 * that deliberately runs jobs on half their request must count a baseline
 * violation for every guaranteed job (and only for those), for exactly the
 * seconds it runs below its baseline (not while paying a restart); a job at
 * its request counts none. Quotas: guaranteed submissions over their
 * tenant's quota are rejected at arrival with the reason, everything else
 * runs to completion, and every round receives the quotas.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rubick/sim.h"

static struct rk_model model = {.name = "toy", .global_batch = 4};
static struct rk_cluster cl;
static struct rk_job tmpl[8];
static int nt;

/* Oracle: 1 s per iteration at the request, proportionally slower on fewer GPUs. */
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

/* ---- a policy that starts jobs at their request or at half of it --------- */

/* GROW: half the request first, three quarters of it from t = 10 s on;
 * PREEMPT: at the request, every job preempted once in its first round at or
 * after t = 60 s, restarted at its request in the next */
enum mode { FULL, HALF, GROW, PREEMPT };
static int64_t preempted_ids[8];
static int n_preempted;
static enum mode mode;
static int rounds_with_quotas, rounds_seen;

static int tp_create(void **state, const char *options, struct rk_error *err)
{
	(void)options, (void)err;
	*state = NULL;
	return 0;
}

static void tp_destroy(void *state)
{
	(void)state;
}

static int give(struct rk_decisions *out, const struct rk_job *j, int g)
{
	struct rk_alloc a;
	rk_alloc_init(&a);
	int rc = rk_alloc_add(&a, 0, g, 0, 0);
	struct rk_plan p = {.dp = g, .tp = 1, .pp = 1, .mb = j->global_batch / g, .ga = 1};
	if (!rc)
		rc = rk_decisions_push(out, j->id, &a, &p);
	rk_alloc_fini(&a);
	return rc;
}

static int tp_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
		       struct rk_error *err)
{
	(void)state, (void)err;
	rounds_seen++;
	rounds_with_quotas += in->n_quotas > 0 && in->quotas;
	int free_gpus = in->cluster->nodes[0].gpus;
	for (int i = 0; i < in->n_jobs; i++)
		free_gpus -= rk_alloc_total_gpus(&in->jobs[i]->alloc);
	for (int i = 0; i < in->n_jobs; i++) {
		const struct rk_job *j = in->jobs[i];
		int held = rk_alloc_total_gpus(&j->alloc);
		if (mode == PREEMPT && held > 0 && in->now_ms >= 60000) {
			int done = 0;
			for (int k = 0; k < n_preempted; k++)
				done |= preempted_ids[k] == j->id;
			if (done || n_preempted == 8)
				continue;
			preempted_ids[n_preempted++] = j->id;
			int rc = rk_decisions_push(out, j->id, NULL, NULL);
			if (rc)
				return rc;
			continue;
		}
		int g = mode == FULL || mode == PREEMPT ? j->req_gpus : j->req_gpus / 2;
		if (mode == GROW && held > 0 && held < j->req_gpus && in->now_ms >= 10000)
			g = j->req_gpus * 3 / 4;
		else if (held > 0)
			continue;
		if (g - held > free_gpus)
			continue;
		free_gpus -= g - held;
		int rc = give(out, j, g);
		if (rc)
			return rc;
	}
	return 0;
}

static const struct rk_policy_ops test_policy = {
	.name = "test-half",
	.summary = "starts jobs at their request or half of it",
	.create = tp_create,
	.destroy = tp_destroy,
	.schedule = tp_schedule,
};

/* ---- fixtures ---------------------------------------------------------------- */

static struct rk_job *add(int64_t id, int64_t submit_s, int gpus, double iters, int guaranteed,
			  const char *tenant)
{
	struct rk_job *j = &tmpl[nt++];
	memset(j, 0, sizeof(*j));
	j->id = id;
	snprintf(j->name, sizeof(j->name), "j%lld", (long long)id);
	snprintf(j->tenant, sizeof(j->tenant), "%s", tenant);
	j->model = &model;
	j->submit_ms = submit_s * 1000;
	j->req_gpus = gpus;
	j->global_batch = 12; /* divisible by every GPU count used here */
	j->req_plan = (struct rk_plan){.dp = gpus, .tp = 1, .pp = 1, .mb = 12 / gpus, .ga = 1};
	j->iters_total = iters;
	j->min_gpus = 1; /* the test policy may start a job on half its request */
	j->max_gpus = gpus;
	j->guaranteed = guaranteed;
	return j;
}

static void setup_cluster(const char *spec)
{
	struct rk_error err;
	rk_cluster_fini(&cl);
	assert_int_equal(rk_cluster_parse(&cl, spec, "t", &err), 0);
	nt = 0;
	rounds_seen = rounds_with_quotas = 0;
	n_preempted = 0;
}

static void run(struct rk_sim_config *cfg, struct rk_sim_result *r, struct rk_sim_summary *sum)
{
	struct rk_error err;
	cfg->iter = toy_iter;
	cfg->check = 1;
	int rc = rk_sim_run(&cl, tmpl, nt, &test_policy, cfg, r, &err);
	if (rc)
		fail_msg("%s", err.msg);
	assert_true(r->checks > 0);
	rc = rk_metrics_summarize(r->outcomes, r->n_outcomes, r->samples, r->n_samples, r->start_ms,
				  r->end_ms, sum, &err);
	if (rc)
		fail_msg("%s", err.msg);
}

/* ---- baseline violations ----------------------------------------------------- */

static void shrunk_guaranteed_job_violates(void **state)
{
	(void)state;
	setup_cluster("1x8");
	add(1, 0, 2, 10, 1, "a"); /* guaranteed, on 1 GPU: 2 s per iteration, 20 s */
	add(2, 0, 4, 10, 0, "a"); /* best effort, also halved: never counted */
	mode = HALF;
	struct rk_sim_config cfg;
	rk_sim_config_default(&cfg);
	struct rk_sim_result r;
	struct rk_sim_summary s;
	run(&cfg, &r, &s);
	assert_int_equal(r.outcomes[0].finish_ms, 20000);
	assert_true(r.outcomes[0].sla_below_s == 20.0);
	assert_true(r.outcomes[0].sla_worst_ratio == 0.5);
	assert_true(r.outcomes[1].sla_below_s == 0.0);
	assert_int_equal(s.guaranteed, 1);
	assert_int_equal(s.sla_violations, 1);
	assert_true(s.sla_violation_s == 20.0);
	assert_true(s.sla_worst_ratio == 0.5);
	assert_int_equal(s.rejected, 0);
	assert_int_equal(s.completed, 2);
	rk_sim_result_fini(&r);
}

static void job_at_request_counts_none(void **state)
{
	(void)state;
	setup_cluster("1x8");
	add(1, 0, 2, 10, 1, "a");
	add(2, 5, 4, 10, 1, "a");
	mode = FULL;
	struct rk_sim_config cfg;
	rk_sim_config_default(&cfg);
	struct rk_sim_result r;
	struct rk_sim_summary s;
	run(&cfg, &r, &s);
	assert_int_equal(s.guaranteed, 2);
	assert_int_equal(s.sla_violations, 0);
	assert_true(s.sla_violation_s == 0.0);
	assert_true(s.sla_worst_ratio == 1.0); /* ran exactly at the baseline */
	for (int i = 0; i < 2; i++) {
		assert_true(r.outcomes[i].sla_below_s == 0.0);
		assert_true(r.outcomes[i].sla_worst_ratio == 1.0);
	}
	rk_sim_result_fini(&r);
}

static void restart_time_is_not_running_time(void **state)
{
	(void)state;
	setup_cluster("1x8");
	/* 2 of 4 GPUs from 0 s, 3 from the round at 60 s after a 30 s restart: below
	 * its baseline all along, but the restart is not running time. */
	add(1, 0, 4, 100, 1, "a");
	mode = GROW;
	struct rk_sim_config cfg;
	rk_sim_config_default(&cfg);
	cfg.restart_ms = 30000;
	struct rk_sim_result r;
	struct rk_sim_summary s;
	run(&cfg, &r, &s);
	/* 0..60 s at 2 s/iter (30 iterations), restart 60..90 s, then 70 iterations at
	 * 4/3 s: 93333.3 ms, ceil 93334, done at 183.334 s; below for 60 + 93.334 s. */
	assert_int_equal(r.outcomes[0].finish_ms, 183334);
	assert_true(r.outcomes[0].sla_below_s == 153.334);
	assert_int_equal(s.sla_violations, 1);
	assert_true(s.sla_violation_s == 153.334);
	assert_true(s.sla_worst_ratio == 0.5);
	rk_sim_result_fini(&r);
}

static void horizon_closes_the_interval(void **state)
{
	(void)state;
	setup_cluster("1x8");
	add(1, 0, 2, 100, 1, "a"); /* would run 200 s below its baseline */
	mode = HALF;
	struct rk_sim_config cfg;
	rk_sim_config_default(&cfg);
	cfg.horizon_ms = 50000;
	struct rk_sim_result r;
	struct rk_sim_summary s;
	run(&cfg, &r, &s);
	assert_int_equal(r.outcomes[0].completed, 0);
	assert_true(r.outcomes[0].sla_below_s == 50.0);
	assert_int_equal(s.sla_violations, 1);
	rk_sim_result_fini(&r);
}

/* A preempted guaranteed job runs at its baseline whenever it runs, but not
 * while preempted: it is counted in sla_preempted, not in sla_violations
 * (metrics.h); a preempted best-effort job is not counted. */
static void preempted_guaranteed_job_counts(void **state)
{
	(void)state;
	setup_cluster("1x8");
	add(1, 0, 4, 100, 1, "a"); /* 1 s per iteration at its request: 100 s */
	add(2, 0, 4, 100, 0, "a");
	mode = PREEMPT;
	struct rk_sim_config cfg;
	rk_sim_config_default(&cfg);
	struct rk_sim_result r;
	struct rk_sim_summary s;
	run(&cfg, &r, &s);
	assert_int_equal(r.outcomes[0].preemptions, 1);
	assert_int_equal(r.outcomes[1].preemptions, 1);
	assert_int_equal(r.outcomes[0].completed, 1);
	assert_int_equal(s.guaranteed, 1);
	assert_int_equal(s.sla_preempted, 1);
	assert_int_equal(s.sla_violations, 0);
	assert_true(s.sla_worst_ratio == 1.0);
	rk_sim_result_fini(&r);
}

/* ---- quotas -------------------------------------------------------------------- */

static void quota_rejects_at_submission(void **state)
{
	(void)state;
	setup_cluster("1x8");
	add(1, 0, 2, 10, 1, "a");  /* a holds 2 of 3 */
	add(2, 1, 2, 10, 1, "a");  /* 2 + 2 > 3: rejected */
	add(3, 2, 4, 10, 0, "a");  /* best effort: not counted, runs */
	add(4, 3, 4, 10, 1, "b");  /* b has no quota: runs */
	add(5, 4, 1, 10, 1, "a");  /* 2 + 1 <= 3: runs */
	add(6, 30, 2, 10, 1, "a"); /* after job 1 ended (10 s): 1 + 2 <= 3, runs */
	mode = FULL;
	struct rk_tenant_quota q[1] = {{.tenant = "a", .guaranteed_gpus = 3}};
	struct rk_sim_config cfg;
	rk_sim_config_default(&cfg);
	cfg.quotas = q;
	cfg.n_quotas = 1;
	struct rk_sim_result r;
	struct rk_sim_summary s;
	run(&cfg, &r, &s);
	assert_int_equal(r.rejected, 1);
	assert_int_equal(s.rejected, 1);
	assert_int_equal(s.completed, 5);
	assert_int_equal(s.unfinished, 0);
	assert_int_equal(s.never_started, 0);
	assert_int_equal(s.guaranteed, 5);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(r.outcomes[i].rejected, i == 1);
		assert_int_equal(r.outcomes[i].completed, i != 1);
	}
	assert_int_equal(r.outcomes[1].first_start_ms, -1);
	assert_string_equal(r.outcomes[1].reason, "tenant 'a' guaranteed quota is 3 GPUs; 2 held "
			    "by active guaranteed jobs, 2 requested");
	assert_string_equal(r.outcomes[0].reason, "");
	assert_true(rounds_seen > 0);
	assert_int_equal(rounds_with_quotas, rounds_seen);
	rk_sim_result_fini(&r);

	/* Without quotas nothing is rejected. */
	rounds_seen = rounds_with_quotas = 0;
	cfg.quotas = NULL;
	cfg.n_quotas = 0;
	run(&cfg, &r, &s);
	assert_int_equal(s.rejected, 0);
	assert_int_equal(s.completed, 6);
	assert_int_equal(rounds_with_quotas, 0);
	rk_sim_result_fini(&r);
}

static void quota_zero_rejects_every_guaranteed_job(void **state)
{
	(void)state;
	setup_cluster("1x8");
	add(1, 0, 1, 10, 1, "a");
	add(2, 0, 1, 10, 0, "a");
	mode = FULL;
	struct rk_tenant_quota q[1] = {{.tenant = "a", .guaranteed_gpus = 0}};
	struct rk_sim_config cfg;
	rk_sim_config_default(&cfg);
	cfg.quotas = q;
	cfg.n_quotas = 1;
	struct rk_sim_result r;
	struct rk_sim_summary s;
	run(&cfg, &r, &s);
	assert_int_equal(s.rejected, 1);
	assert_int_equal(s.completed, 1);
	assert_int_equal(r.outcomes[0].rejected, 1);
	rk_sim_result_fini(&r);
}

static void quota_text(void **state)
{
	(void)state;
	struct rk_tenant_quota *q;
	int n;
	struct rk_error err;
	assert_int_equal(rk_tenant_quotas_parse("a:32/team-b:0", "--quota", &q, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(q[0].tenant, "a");
	assert_int_equal(q[0].guaranteed_gpus, 32);
	assert_string_equal(q[1].tenant, "team-b");
	assert_int_equal(q[1].guaranteed_gpus, 0);
	free(q);
	const char *bad[] = {"", "a", ":3", "a:", "a:x", "a:-1", "a:3/", "a:1/a:2", "a:1//b:2",
			     "a:2000000"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		q = (void *)&n; /* must come back NULL */
		int rc = rk_tenant_quotas_parse(bad[i], "--quota", &q, &n, &err);
		if (rc == 0)
			fail_msg("'%s' accepted", bad[i]);
		assert_null(q);
		assert_non_null(strstr(err.msg, "--quota"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shrunk_guaranteed_job_violates),
		cmocka_unit_test(job_at_request_counts_none),
		cmocka_unit_test(restart_time_is_not_running_time),
		cmocka_unit_test(horizon_closes_the_interval),
		cmocka_unit_test(preempted_guaranteed_job_counts),
		cmocka_unit_test(quota_rejects_at_submission),
		cmocka_unit_test(quota_zero_rejects_every_guaranteed_job),
		cmocka_unit_test(quota_text),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rk_cluster_fini(&cl);
	return rc;
}
