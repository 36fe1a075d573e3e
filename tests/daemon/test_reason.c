/*
 * Pending reasons (src/daemon/job/reason.h), alone: which of Resources,
 * Priority, Quota and Infeasible a pending job gets from the cluster's up
 * nodes, the round's view, what the holders hold, the tenants' quotas and
 * the decisions dropped over them. Every case names the input that decides.
 */
// clang-format off: cmocka needs these first, in this order
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
// clang-format on

#include <stdio.h>
#include <string.h>

#include "daemon/job/reason.h"
#include "rubick/cluster.h"

#define MAXJ 16

struct fx {
	struct rk_cluster installed, view;
	struct rk_job jobs[MAXJ];
	struct rk_job *ptr[MAXJ];
	int n;
	enum rkd_reason out[MAXJ];
};

static void fx_cluster(struct fx *f, const char *spec)
{
	struct rk_error e;
	memset(f, 0, sizeof(*f));
	assert_int_equal(rk_cluster_parse(&f->installed, spec, "test", &e), 0);
	assert_int_equal(rk_cluster_parse(&f->view, spec, "test", &e), 0);
}

/* A job of `tenant` asking `gpus` (elastic down to `min`); `hold` GPUs on node `node` (0 =
 * pending). */
static struct rk_job *fx_job(struct fx *f, const char *tenant, int gpus, int min, int node,
                             int hold)
{
	struct rk_job *j = &f->jobs[f->n];
	j->id = f->n + 1;
	snprintf(j->tenant, sizeof(j->tenant), "%s", tenant);
	j->req_gpus = gpus;
	j->min_gpus = min;
	j->max_gpus = gpus;
	j->first_start_ms = -1;
	rk_alloc_init(&j->alloc);
	j->state = hold ? RK_JOB_RUNNING : RK_JOB_PENDING;
	if (hold)
		assert_int_equal(rk_alloc_add(&j->alloc, node, hold, 12 * hold, 0), 0);
	f->ptr[f->n] = j;
	f->n++;
	return j;
}

static void fx_run(struct fx *f, const struct rk_tenant_quota *q, int nq,
                   const unsigned char *dropped)
{
	struct rkd_reason_input in = {.installed = &f->installed,
	                              .view = &f->view,
	                              .jobs = f->ptr,
	                              .n_jobs = f->n,
	                              .quotas = q,
	                              .n_quotas = nq,
	                              .quota_dropped = dropped};
	struct rk_error e;
	assert_int_equal(rkd_reasons_compute(&in, f->out, &e), 0);
}

static void fx_fini(struct fx *f)
{
	for (int i = 0; i < f->n; i++)
		rk_alloc_fini(&f->jobs[i].alloc);
	rk_cluster_fini(&f->installed);
	rk_cluster_fini(&f->view);
}

/* Room decides: a job that fits what is free waits on the policy, one that does not on resources.
 */
static void test_resources_priority(void **st)
{
	(void)st;
	struct fx f;
	fx_cluster(&f, "2x4");
	fx_job(&f, "a", 4, 4, 0, 4); /* node 0 full */
	fx_job(&f, "a", 3, 3, 1, 3); /* node 1: 1 GPU free */
	fx_job(&f, "b", 2, 2, 0, 0); /* 1+0 free, and 2 GPUs fit one node: Resources */
	fx_job(&f, "b", 1, 1, 0, 0); /* fits the free GPU: the policy chose others */
	fx_job(&f, "b", 4, 1, 0, 0); /* elastic: its smallest gang (1) fits */
	fx_run(&f, NULL, 0, NULL);
	assert_int_equal(f.out[0], RKD_REASON_NONE); /* running: no reason */
	assert_int_equal(f.out[1], RKD_REASON_NONE);
	assert_int_equal(f.out[2], RKD_REASON_RESOURCES);
	assert_int_equal(f.out[3], RKD_REASON_PRIORITY);
	assert_int_equal(f.out[4], RKD_REASON_PRIORITY);
	fx_fini(&f);
}

/* Free GPUs spread over nodes are no room for a gang that fits one node (consolidated, Yarn). */
static void test_room_is_one_gang(void **st)
{
	(void)st;
	struct fx f;
	fx_cluster(&f, "2x4");
	fx_job(&f, "a", 3, 3, 0, 3);
	fx_job(&f, "a", 3, 3, 1, 3);
	fx_job(&f, "b", 2, 2, 0, 0); /* 1 + 1 free, not on one node */
	fx_run(&f, NULL, 0, NULL);
	assert_int_equal(f.out[2], RKD_REASON_RESOURCES);
	fx_fini(&f);
}

/* CPUs count: free GPUs without the CPUs the job asks per GPU are no room. */
static void test_cpus_count(void **st)
{
	(void)st;
	struct fx f;
	fx_cluster(&f, "1x4,cpus=8");
	struct rk_job *h = fx_job(&f, "a", 1, 1, 0, 0);
	h->state = RK_JOB_RUNNING;
	assert_int_equal(rk_alloc_add(&h->alloc, 0, 1, 7, 0), 0); /* 1 GPU, 7 of 8 CPUs */
	struct rk_job *p = fx_job(&f, "b", 1, 1, 0, 0);
	p->req_cpus = 4;
	fx_job(&f, "b", 1, 1, 0, 0); /* the proportional share (2 CPUs) does not fit 1 either */
	struct rk_job *q = fx_job(&f, "b", 1, 1, 0, 0);
	q->req_cpus = 1;
	fx_run(&f, NULL, 0, NULL);
	assert_int_equal(f.out[1], RKD_REASON_RESOURCES);
	assert_int_equal(f.out[2], RKD_REASON_RESOURCES);
	assert_int_equal(f.out[3], RKD_REASON_PRIORITY);
	fx_fini(&f);
}

/* Infeasible: more than the up nodes have; a node that goes down shrinks that. */
static void test_infeasible_after_drain(void **st)
{
	(void)st;
	struct fx f;
	fx_cluster(&f, "2x4");
	fx_job(&f, "b", 6, 6, 0, 0);
	fx_job(&f, "b", 4, 4, 0, 0);
	fx_job(&f, "b", 9, 9, 0, 0); /* more than installed */
	fx_run(&f, NULL, 0, NULL);
	assert_int_equal(f.out[0], RKD_REASON_PRIORITY);
	assert_int_equal(f.out[1], RKD_REASON_PRIORITY);
	assert_int_equal(f.out[2], RKD_REASON_INFEASIBLE);
	f.installed.nodes[1].up = 0; /* drained or down */
	f.view.nodes[1].up = 0;
	fx_run(&f, NULL, 0, NULL);
	assert_int_equal(f.out[0], RKD_REASON_INFEASIBLE);
	assert_int_equal(f.out[1], RKD_REASON_PRIORITY);
	/* Capacity only the view lacks (another's jobs on it) is no infeasibility. */
	f.installed.nodes[1].up = 1;
	fx_run(&f, NULL, 0, NULL);
	assert_int_equal(f.out[0], RKD_REASON_RESOURCES);
	fx_fini(&f);
}

/* Quotas: what the tenant holds plus the job's smallest gang against gpu_quota and
 * guaranteed_gpu_quota. */
static void test_quota(void **st)
{
	(void)st;
	struct fx f;
	fx_cluster(&f, "2x8");
	fx_job(&f, "t", 3, 3, 0, 3);
	fx_job(&f, "t", 2, 2, 0, 0); /* 3 + 2 > 4 */
	fx_job(&f, "t", 1, 1, 0, 0); /* 3 + 1 = 4 */
	fx_job(&f, "t", 4, 1, 0, 0); /* elastic: 3 + 1 */
	struct rk_job *g = fx_job(&f, "g", 2, 2, 1, 2);
	g->guaranteed = 1;
	struct rk_job *g2 = fx_job(&f, "g", 1, 1, 0, 0);
	g2->guaranteed = 1;          /* 2 + 1 > guaranteed 2 */
	fx_job(&f, "g", 1, 1, 0, 0); /* best-effort: the guaranteed quota does not bind it */
	fx_job(&f, "u", 1, 1, 0, 0); /* a tenant without quotas */
	struct rk_tenant_quota q[2] = {
	    {.tenant = "t", .guaranteed_gpus = -1, .has_gpu_quota = 1, .gpu_quota = 4},
	    {.tenant = "g", .guaranteed_gpus = 2, .has_gpu_quota = 0},
	};
	fx_run(&f, q, 2, NULL);
	assert_int_equal(f.out[1], RKD_REASON_QUOTA);
	assert_int_equal(f.out[2], RKD_REASON_PRIORITY);
	assert_int_equal(f.out[3], RKD_REASON_PRIORITY);
	assert_int_equal(f.out[5], RKD_REASON_QUOTA);
	assert_int_equal(f.out[6], RKD_REASON_PRIORITY);
	assert_int_equal(f.out[7], RKD_REASON_PRIORITY);
	/* A decision dropped over a quota (rk_decisions_apply_quotas) is Quota whatever is held. */
	unsigned char dropped[MAXJ] = {0};
	dropped[7] = 1;
	fx_run(&f, q, 2, dropped);
	assert_int_equal(f.out[7], RKD_REASON_QUOTA);
	/* Infeasible comes first: no quota makes it runnable. */
	fx_job(&f, "t", 20, 20, 0, 0);
	fx_run(&f, q, 2, NULL);
	assert_int_equal(f.out[8], RKD_REASON_INFEASIBLE);
	fx_fini(&f);
}

/* Many jobs alike share one placement answer; it must be the same answer. */
static void test_shapes_cached(void **st)
{
	(void)st;
	struct fx f;
	fx_cluster(&f, "1x4");
	fx_job(&f, "a", 2, 2, 0, 2);
	for (int i = 0; i < 6; i++)
		fx_job(&f, "b", i % 2 ? 2 : 3, i % 2 ? 2 : 3, 0, 0);
	fx_run(&f, NULL, 0, NULL);
	for (int i = 1; i < f.n; i++)
		assert_int_equal(f.out[i], i % 2 ? RKD_REASON_RESOURCES : RKD_REASON_PRIORITY);
	fx_fini(&f);
}

static void test_names(void **st)
{
	(void)st;
	assert_string_equal(rkd_reason_name(RKD_REASON_NONE), "None");
	assert_string_equal(rkd_reason_name(RKD_REASON_RESOURCES), "Resources");
	assert_string_equal(rkd_reason_name(RKD_REASON_PRIORITY), "Priority");
	assert_string_equal(rkd_reason_name(RKD_REASON_QUOTA), "Quota");
	assert_string_equal(rkd_reason_name(RKD_REASON_HELD), "Held");
	assert_string_equal(rkd_reason_name(RKD_REASON_INFEASIBLE), "Infeasible");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_resources_priority),
	    cmocka_unit_test(test_room_is_one_gang),
	    cmocka_unit_test(test_cpus_count),
	    cmocka_unit_test(test_infeasible_after_drain),
	    cmocka_unit_test(test_quota),
	    cmocka_unit_test(test_shapes_cached),
	    cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
