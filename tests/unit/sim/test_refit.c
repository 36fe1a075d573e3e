/*
 * Online refit in the simulator (engine_refit.c, issue 15) with the Rubick
 * policy in guaranteed=reconfigure mode, on a small multi-tenant case: a
 * guaranteed job requests a poor plan on 4 GPUs next to best-effort jobs of
 * another tenant. Its model (the trace's) over-predicts it: the job's
 * backward pass is slower than the model says. Trusting that model, a smaller
 * configuration looks like it keeps the baseline while it does not (checked
 * below on the oracle), so a policy deciding on the unfitted model breaks the
 * guarantee. With --refit the policy only moves the job on its model refitted
 * from what it ran: no time below the baseline, and the reconfiguration still
 * happens (it re-plans to a faster plan on its GPUs) and pays.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the headers above first */
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rubick/perf.h"
#include "rubick/sim.h"

#define MI (1024.0 * 1024.0)

static struct rk_model truth, trace_model;
static struct rk_perf_env env;
static struct rk_cluster cl;

static struct rk_model model(double k_bwd)
{
	struct rk_model m = {.layers = 24,
	                     .hidden = 1024,
	                     .heads = 16,
	                     .seq_len = 512,
	                     .params = 320 * MI,
	                     .global_batch = 32,
	                     .fwd_ms = 220};
	snprintf(m.name, sizeof(m.name), "%s", "synthetic");
	m.perf = (struct rk_perf_params){.k_bwd = k_bwd,
	                                 .k_sync = 1.6,
	                                 .k_opt = 0.08,
	                                 .k_os_offload = 5.0,
	                                 .k_const = 15.0,
	                                 .k_off = 1.5,
	                                 .k_swap = 2.5,
	                                 .fwd_fixed_ms = 12.0};
	m.perf_fitted = 1;
	return m;
}

static double truth_ms(const struct rk_plan *plan, const struct rk_placement *pl, int cpg)
{
	double t = 0;
	assert_int_equal(rk_perf_predict(&truth, &truth.perf, &env, plan, pl, cpg, &t), 0);
	return t;
}

/* The oracle: the job's true speed, whatever model the trace gave it. */
static int truth_iter(void *ctx, const struct rk_job *job, const struct rk_plan *plan,
                      const struct rk_alloc *alloc, const struct rk_cluster *c, double *iter_s,
                      struct rk_error *err)
{
	(void)ctx, (void)job, (void)c;
	struct rk_placement pl;
	int g = rk_alloc_total_gpus(alloc);
	if (g < 1 || rk_alloc_to_placement(alloc, &pl))
		return rk_error_set(err, RK_EINVAL, "empty allocation");
	int cpg = rk_alloc_total_cpus(alloc) / g;
	*iter_s = truth_ms(plan, &pl, cpg < 1 ? 1 : cpg) / 1000.0;
	return 0;
}

static struct rk_plan poor_plan(void)
{
	/* one sample per micro-batch, recomputing activations: slow on 4 GPUs */
	return (struct rk_plan){
	    .dp = 4, .tp = 1, .pp = 1, .mb = 1, .ga = 8, .gc = 1, .zero = 2, .offload = 1};
}

static void add_job(struct rk_job *j, int64_t id, const char *tenant, int g, int guaranteed,
                    int64_t submit_ms, double iters)
{
	memset(j, 0, sizeof(*j));
	j->id = id;
	snprintf(j->name, sizeof(j->name), "%s-%lld", tenant, (long long)id);
	snprintf(j->tenant, sizeof(j->tenant), "%s", tenant);
	j->model = &trace_model;
	j->global_batch = 32;
	j->iters_total = iters;
	j->submit_ms = submit_ms;
	j->req_gpus = g;
	j->req_cpus = 8 * g;
	j->req_mem_mb = (int64_t)g * 100 * 1024;
	j->req_plan = (struct rk_plan){.dp = g, .tp = 1, .pp = 1, .mb = 32 / g, .ga = 1};
	j->guaranteed = guaranteed;
	j->min_gpus = j->max_gpus = g;
}

static int run(const char *opts, int refit, struct rk_sim_result *r)
{
	struct rk_job jobs[4];
	add_job(&jobs[0], 1, "gold", 4, 1, 0, 20000);
	jobs[0].req_plan = poor_plan();
	add_job(&jobs[1], 2, "free", 2, 0, 0, 20000);
	add_job(&jobs[2], 3, "free", 2, 0, 600000, 20000);
	add_job(&jobs[3], 4, "free", 4, 0, 1200000, 20000);
	struct rk_sim_config cfg = {.interval_ms = 60000,
	                            .restart_ms = 60000,
	                            .iter = truth_iter,
	                            .env = &env,
	                            .policy_options = opts,
	                            .refit = refit};
	struct rk_error err;
	rk_error_clear(&err);
	int rc = rk_sim_run(&cl, jobs, 4, rk_policy_find("rubick"), &cfg, r, &err);
	if (rc)
		fail_msg("%s", err.msg);
	return rc;
}

static const struct rk_job_outcome *gold(const struct rk_sim_result *r)
{
	for (int i = 0; i < r->n_outcomes; i++)
		if (r->outcomes[i].guaranteed)
			return &r->outcomes[i];
	fail_msg("no guaranteed outcome");
	return NULL;
}

static void test_reconfigure_with_refit(void **state)
{
	(void)state;
	/* The scenario: on the trace's model, a DP plan on 2 GPUs beats the
	 * request's throughput by 20%; on the truth it is below the baseline. A
	 * policy trusting the unfitted model would break the guarantee. */
	struct rk_plan p2 = {.dp = 2, .tp = 1, .pp = 1, .mb = 16, .ga = 1};
	struct rk_plan req = poor_plan();
	struct rk_placement pl2 = {.n_nodes = 1, .gpus = {2}}, pl4 = {.n_nodes = 1, .gpus = {4}};
	double m2, m4;
	assert_int_equal(rk_perf_predict(&trace_model, &trace_model.perf, &env, &p2, &pl2, 8, &m2),
	                 0);
	assert_int_equal(rk_perf_predict(&trace_model, &trace_model.perf, &env, &req, &pl4, 8, &m4),
	                 0);
	double base_ms = truth_ms(&req, &pl4, 8);
	assert_true(m4 / m2 >= 1.2); /* the model: 2 GPUs beat the request by 20% */
	assert_true(truth_ms(&p2, &pl2, 8) > base_ms); /* the truth: below the baseline */

	struct rk_sim_result keep, reconf, unfitted;
	run("guaranteed=keep", 1, &keep);
	run("guaranteed=reconfigure", 1, &reconf);
	run("guaranteed=reconfigure", 0, &unfitted);
	const struct rk_job_outcome *k = gold(&keep), *g = gold(&reconf), *u = gold(&unfitted);
	assert_int_equal(g->completed, 1);
	assert_true(g->sla_below_s == 0);
	assert_true(g->sla_worst_ratio >= 1 - 1e-9);
	/* it was reconfigured (a faster plan on its GPUs) and finished sooner */
	assert_true(g->restarts >= 1);
	assert_true(g->finish_ms < k->finish_ms);
	/* without the refit nothing confirms the model: the request only, as keep */
	assert_int_equal(u->restarts, 0);
	assert_true(u->sla_below_s == 0);
	assert_int_equal(u->finish_ms, k->finish_ms);
	rk_sim_result_fini(&keep);
	rk_sim_result_fini(&reconf);
	rk_sim_result_fini(&unfitted);
}

/* --refit needs the environment the models are fitted in. */
static void test_refit_needs_env(void **state)
{
	(void)state;
	struct rk_job j;
	add_job(&j, 1, "gold", 4, 1, 0, 100);
	struct rk_sim_config cfg = {.interval_ms = 60000, .iter = truth_iter, .refit = 1};
	struct rk_sim_result r;
	struct rk_error err;
	rk_error_clear(&err);
	assert_int_equal(rk_sim_run(&cl, &j, 1, rk_policy_find("rubick"), &cfg, &r, &err),
	                 RK_EINVAL);
	assert_non_null(strstr(err.msg, "--refit"));
}

static int setup(void **state)
{
	(void)state;
	rk_perf_env_a800(&env);
	truth = model(4.5);       /* backward 2.5x as slow as ... */
	trace_model = model(1.8); /* ... the trace's model says */
	struct rk_error err;
	return rk_cluster_parse(&cl, "1x8:a800,cpus=96,mem=1600G,nvlink=400,net=100", "t", &err);
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
	    cmocka_unit_test(test_reconfigure_with_refit),
	    cmocka_unit_test(test_refit_needs_env),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
