/*
 * Hand-built snapshots for the baseline policy tests: a small cluster, jobs
 * with zoo-like models, and a checker that applies a round's decisions and
 * verifies the invariants every policy must keep (no node over-committed, at
 * most one decision per known job, gang size and plan consistent).
 */
#ifndef TEST_BASELINE_FIXTURE_H
#define TEST_BASELINE_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rubick/cluster.h"
#include "rubick/job.h"
#include "rubick/perf.h"
#include "rubick/plan.h"
#include "rubick/policy.h"

#define FX_MAX_JOBS 16

struct fixture {
	struct rk_node nodes[8];
	struct rk_cluster cluster;
	struct rk_job jobs[FX_MAX_JOBS];
	struct rk_job *ptrs[FX_MAX_JOBS];
	int n_jobs;
	struct rk_model model;
	struct rk_perf_env env;
};

/* n_nodes nodes of 8 GPUs, 96 CPUs, 1600 GiB: the Rubick A800 node (§1.9). */
static inline void fx_init(struct fixture *f, int n_nodes)
{
	memset(f, 0, sizeof(*f));
	for (int i = 0; i < n_nodes; i++) {
		struct rk_node *n = &f->nodes[i];
		n->id = i;
		snprintf(n->gpu_type, sizeof(n->gpu_type), "a800");
		n->gpus = 8;
		n->cpus = 96;
		n->mem_mb = 1600 * 1024;
		n->nvlink_gbps = 400;
		n->net_gbps = 100;
		n->up = 1;
	}
	f->cluster.n_nodes = n_nodes;
	f->cluster.nodes = f->nodes;
	rk_perf_env_a800(&f->env);
	/* BERT-like row of docs/references.md §1.3/§1.4.2. */
	struct rk_model *m = &f->model;
	snprintf(m->name, sizeof(m->name), "bert");
	m->layers = 24;
	m->hidden = 1536;
	m->heads = 16;
	m->seq_len = 1024;
	m->vocab = 30522;
	m->params = 336.3e6;
	m->global_batch = 32;
	m->fwd_ms = 225;
	m->perf_fitted = 1;
	m->perf = (struct rk_perf_params){.k_bwd = 1.7763, .k_sync = 1.1410, .k_opt = 1e-8,
					  .k_os_offload = 4.4006, .k_const = 15.257,
					  .k_off = 37.289, .k_swap = 26.222};
}

/* Plain data-parallel plan for batch B on g GPUs, micro-batch B/g. */
static inline struct rk_plan fx_dp_plan(int batch, int g, int zero)
{
	return (struct rk_plan){.dp = g, .tp = 1, .pp = 1, .mb = batch / g, .ga = 1, .zero = zero};
}

/* Add a pending job asking for g GPUs (8 CPUs and 100 GiB per GPU). */
static inline struct rk_job *fx_job(struct fixture *f, int64_t id, int64_t submit_ms, int g,
				    int guaranteed)
{
	assert_true(f->n_jobs < FX_MAX_JOBS);
	struct rk_job *j = &f->jobs[f->n_jobs];
	f->ptrs[f->n_jobs++] = j;
	memset(j, 0, sizeof(*j));
	j->id = id;
	snprintf(j->name, sizeof(j->name), "job%lld", (long long)id);
	snprintf(j->tenant, sizeof(j->tenant), "t0");
	j->model = &f->model;
	j->global_batch = 32;
	j->iters_total = 1000;
	j->submit_ms = submit_ms;
	j->req_gpus = g;
	j->req_cpus = 8 * g;
	j->req_mem_mb = (int64_t)g * 100 * 1024;
	j->req_plan = fx_dp_plan(32, g, 0);
	j->guaranteed = guaranteed;
	/* Elastic from 1 GPU up, as `rubick sim --gpu-range free` makes a trace's jobs:
	 * tests of rigid or narrow ranges set them. */
	j->min_gpus = 1;
	j->max_gpus = 1024;
	j->est_duration_s = 1000;
	j->state = RK_JOB_PENDING;
	j->first_start_ms = -1;
	return j;
}

/* Make `j` run on `node` with its whole request there. */
static inline void fx_run_on(struct rk_job *j, int node, int64_t since_ms)
{
	j->state = RK_JOB_RUNNING;
	j->alloc.n = 1;
	j->alloc.shares = calloc(1, sizeof(*j->alloc.shares));
	assert_non_null(j->alloc.shares);
	j->alloc.shares[0] = (struct rk_share){.node = node, .gpus = j->req_gpus,
					       .cpus = j->req_cpus, .mem_mb = j->req_mem_mb};
	j->plan = j->req_plan;
	j->first_start_ms = j->last_change_ms = since_ms;
}

static inline void fx_fini(struct fixture *f)
{
	for (int i = 0; i < f->n_jobs; i++)
		free(f->jobs[i].alloc.shares);
}

static inline struct rk_sched_input fx_input(struct fixture *f, int64_t now_ms)
{
	return (struct rk_sched_input){.now_ms = now_ms, .cluster = &f->cluster,
				       .jobs = f->ptrs, .n_jobs = f->n_jobs, .env = &f->env};
}

static inline void fx_decisions_free(struct rk_decisions *d)
{
	for (int i = 0; i < d->n; i++)
		free(d->v[i].alloc.shares);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

static inline struct rk_job *fx_find(struct fixture *f, int64_t id)
{
	for (int i = 0; i < f->n_jobs; i++)
		if (f->jobs[i].id == id)
			return &f->jobs[i];
	return NULL;
}

static inline const struct rk_decision *fx_decision(const struct rk_decisions *d, int64_t id)
{
	for (int i = 0; i < d->n; i++)
		if (d->v[i].job_id == id)
			return &d->v[i];
	return NULL;
}

static inline int fx_gpus(const struct rk_alloc *a)
{
	int g = 0;
	for (int i = 0; i < a->n; i++)
		g += a->shares[i].gpus;
	return g;
}

/*
 * rk_decisions_validate accepts `d`, and, checked again here independently,
 * the state after applying `d`: every decision names a known job once; the
 * allocations of all jobs (changed or kept) fit every node's GPUs, CPUs and
 * memory; a running decision's plan has dp*tp*pp == its GPUs and
 * mb*ga*dp == the job's global batch.
 */
static inline void fx_check(struct fixture *f, const struct rk_decisions *d, const char *policy)
{
	struct rk_sched_input in = fx_input(f, 0);
	struct rk_error err;
	if (rk_decisions_validate(&in, d, policy, &err) != RK_OK)
		fail_msg("%s", err.msg);
	int gpus[8] = {0}, cpus[8] = {0};
	int64_t mem[8] = {0};
	for (int i = 0; i < d->n; i++) {
		assert_non_null(fx_find(f, d->v[i].job_id));
		for (int k = i + 1; k < d->n; k++)
			assert_true(d->v[i].job_id != d->v[k].job_id);
	}
	for (int i = 0; i < f->n_jobs; i++) {
		struct rk_job *j = &f->jobs[i];
		const struct rk_decision *dec = fx_decision(d, j->id);
		const struct rk_alloc *a = dec ? &dec->alloc : &j->alloc;
		if (dec && a->n > 0) {
			const struct rk_plan *p = &dec->plan;
			assert_int_equal(p->dp * p->tp * p->pp, fx_gpus(a));
			assert_int_equal(p->mb * p->ga * p->dp, j->global_batch);
		}
		for (int s = 0; s < a->n; s++) {
			int n = a->shares[s].node;
			assert_true(n >= 0 && n < f->cluster.n_nodes);
			assert_true(a->shares[s].gpus >= 1);
			gpus[n] += a->shares[s].gpus;
			cpus[n] += a->shares[s].cpus;
			mem[n] += a->shares[s].mem_mb;
		}
	}
	for (int n = 0; n < f->cluster.n_nodes; n++) {
		assert_true(gpus[n] <= f->nodes[n].gpus);
		assert_true(cpus[n] <= f->nodes[n].cpus);
		assert_true(mem[n] <= f->nodes[n].mem_mb);
	}
}

#endif
