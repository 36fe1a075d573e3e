/*
 * rk_sim_run: checks the jobs, derives missing iteration counts or durations
 * from the oracle at each job's request, runs the event loop (engine.c) and
 * collects one outcome per job.
 */
#include "sim/engine/engine_internal.h"

#include "rubick/placement.h"
#include "rubick/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_id(const void *a, const void *b)
{
	const struct id_slot *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/* Arrival order: submit time, then input order (ids reused as (submit, index) pairs). */
static int by_arrival(const void *a, const void *b)
{
	const struct id_slot *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

static int job_fail(struct rk_error *err, int code, const struct rk_job *j, const char *what)
{
	return rk_error_set(err, code, "job %lld (%s): %s", (long long)j->id, j->name, what);
}

static int init_jobs_on(struct sim *s, const struct rk_job *tmpl, struct rk_cluster *ref,
			struct rk_error *err);

/*
 * The cluster a job's trace run time is read on: this cluster's shape with
 * every node of the trace's GPU type (docs/oracle.md "Job length"), so a run
 * time becomes the same work whatever GPUs the simulated cluster has. `ref`
 * keeps the last one built (a trace has one type); NULL type or a cluster
 * already all of it: the cluster itself.
 */
static int ref_cluster(const struct rk_cluster *cl, const char *type, struct rk_cluster *ref,
		       const struct rk_cluster **out, struct rk_error *err)
{
	*out = cl;
	if (!type || !type[0])
		return 0;
	int uniform = 1;
	for (int i = 0; i < cl->n_nodes && uniform; i++)
		uniform = !strcmp(cl->nodes[i].gpu_type, type);
	if (uniform)
		return 0;
	if (ref->n_nodes == cl->n_nodes && ref->n_nodes > 0 && !strcmp(ref->nodes[0].gpu_type, type)) {
		*out = ref;
		return 0;
	}
	rk_cluster_fini(ref);
	if (strlen(type) >= RK_GPU_TYPE_MAX || rk_cluster_copy(ref, cl))
		return rk_error_set(err, RK_ENOMEM, "simulator: out of memory");
	for (int i = 0; i < ref->n_nodes; i++) {
		memcpy(ref->nodes[i].gpu_type, type, strlen(type) + 1);
		ref->nodes[i].gpu_mem_mb = rk_gpu_type_mem_mb(type);
	}
	*out = ref;
	return 0;
}

static int init_jobs(struct sim *s, const struct rk_job *tmpl, struct rk_error *err)
{
	struct rk_cluster ref = {0, NULL};
	int rc = init_jobs_on(s, tmpl, &ref, err);
	rk_cluster_fini(&ref);
	return rc;
}

static int init_jobs_on(struct sim *s, const struct rk_job *tmpl, struct rk_cluster *ref,
			struct rk_error *err)
{
	for (int i = 0; i < s->n; i++) {
		const struct rk_job *t = &tmpl[i];
		struct sjob *sj = &s->jobs[i];
		struct rk_job *j = &sj->j;
		*j = *t;
		rk_alloc_init(&j->alloc);
		j->state = RK_JOB_PENDING;
		j->iters_done = 0;
		j->restarts = 0;
		j->first_start_ms = -1;
		j->last_change_ms = -1;
		j->attained_gpu_s = 0;
		memset(&j->plan, 0, sizeof(j->plan));
		sj->finish_ms = -1;
		if (!t->model)
			return job_fail(err, RK_EINVAL, t, "no model");
		if (t->submit_ms < 0)
			return job_fail(err, RK_EINVAL, t, "negative submit time");
		if (t->req_gpus < 1 || t->global_batch < 1)
			return job_fail(err, RK_EINVAL, t, "needs req_gpus >= 1 and a global batch");
		int rc = rk_plan_validate(&t->req_plan, t->global_batch, t->req_gpus, err);
		if (rc)
			return rk_error_prefix(err, "job %lld (%s): requested plan", (long long)t->id,
					       t->name);
		if (!(t->iters_total > 0) && !(t->est_duration_s > 0))
			return job_fail(err, RK_EINVAL, t, "neither iterations nor a duration");
		if (!isfinite(t->iters_total) || !isfinite(t->est_duration_s))
			return job_fail(err, RK_EINVAL, t, "iterations or duration not finite");
		/* Fill whichever of iterations and duration the trace left out. */
		if (!(t->iters_total > 0) || !(t->est_duration_s > 0)) {
			double it_s;
			const struct rk_cluster *on;
			rc = ref_cluster(s->cluster, t->ref_gpu_type, ref, &on, err);
			if (!rc)
				rc = rk_sim_iter_at_request(on, t, s->cfg.iter, s->cfg.iter_ctx, &it_s,
							    err);
			if (rc)
				return rc;
			if (!(t->iters_total > 0)) {
				j->iters_total = t->est_duration_s / it_s;
				s->res.jobs_scaled++;
			} else {
				j->est_duration_s = t->iters_total * it_s;
			}
		}
		sj->restart_ms = s->cfg.restart_ms;
		for (int k = 0; k < s->cfg.n_overrides; k++)
			if (!strcmp(s->cfg.overrides[k].model, t->model->name))
				sj->restart_ms = s->cfg.overrides[k].restart_ms;
		s->ids[i] = (struct id_slot){t->id, i};
	}
	qsort(s->ids, (size_t)s->n, sizeof(*s->ids), by_id);
	for (int i = 1; i < s->n; i++)
		if (s->ids[i].id == s->ids[i - 1].id)
			return job_fail(err, RK_EINVAL, &tmpl[s->ids[i].index], "duplicate job id");
	/* Arrival order, sorted in the id table's storage, then the id table rebuilt. */
	for (int i = 0; i < s->n; i++)
		s->ids[i] = (struct id_slot){s->jobs[i].j.submit_ms, i};
	qsort(s->ids, (size_t)s->n, sizeof(*s->ids), by_arrival);
	for (int i = 0; i < s->n; i++) {
		s->order[i] = s->ids[i].index;
		s->jobs[s->order[i]].arr_rank = i;
		s->jobs[i].hl_pos = -1;
	}
	for (int i = 0; i < s->n; i++)
		s->ids[i] = (struct id_slot){s->jobs[i].j.id, i};
	qsort(s->ids, (size_t)s->n, sizeof(*s->ids), by_id);
	return 0;
}

static int collect(struct sim *s)
{
	struct rk_job_outcome *o = calloc((size_t)(s->n > 0 ? s->n : 1), sizeof(*o));
	if (!o)
		return RK_ENOMEM;
	for (int i = 0; i < s->n; i++) {
		struct sjob *sj = &s->jobs[i];
		sim_settle(s, sj, s->now_ms);
		sim_sla_close(sj, s->now_ms); /* a run stopped at the horizon */
		o[i].id = sj->j.id;
		memcpy(o[i].name, sj->j.name, sizeof(o[i].name));
		snprintf(o[i].model, sizeof(o[i].model), "%s", sj->j.model->name);
		o[i].req_gpus = sj->j.req_gpus;
		o[i].submit_ms = sj->j.submit_ms;
		o[i].first_start_ms = sj->j.first_start_ms;
		o[i].finish_ms = sj->finish_ms;
		o[i].restarts = sj->j.restarts;
		o[i].preemptions = sj->preemptions;
		o[i].completed = sj->j.state == RK_JOB_DONE;
		o[i].gpu_s = sj->gpu_s;
		o[i].guaranteed = sj->j.guaranteed != 0;
		o[i].rejected = sj->rejected;
		memcpy(o[i].reason, sj->reason, sizeof(o[i].reason));
		o[i].sla_below_s = (double)sj->below_ms / 1000.0;
		o[i].sla_worst_ratio = sj->worst_ratio;
	}
	s->res.outcomes = o;
	s->res.n_outcomes = s->n;
	return 0;
}

/* Earliest submit time: the start the load series counts from. */
static int64_t jobs_min_submit(const struct rk_job *jobs, int n)
{
	int64_t t = jobs[0].submit_ms;
	for (int i = 1; i < n; i++)
		if (jobs[i].submit_ms < t)
			t = jobs[i].submit_ms;
	return t;
}

static void sim_free(struct sim *s)
{
	if (s->jobs)
		for (int i = 0; i < s->n; i++)
			rk_alloc_fini(&s->jobs[i].j.alloc);
	sim_refit_fini(s);
	free(s->jobs);
	free(s->order);
	free(s->act);
	free(s->snap);
	free(s->hl);
	free(s->chg);
	free(s->vsnap);
	free(s->ids);
	free(s->heap);
	rk_capacity_fini(&s->cap);
	sim_coloc_fini(s);
	sim_loan_fini(s);
	rk_decisions_fini(&s->ds);
	rk_sim_result_fini(&s->res);
}

int rk_sim_run(const struct rk_cluster *cluster, const struct rk_job *jobs, int n,
	       const struct rk_policy_ops *policy, const struct rk_sim_config *cfg,
	       struct rk_sim_result *out, struct rk_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!cfg || !cfg->iter || !policy || !cluster || n < 0 || (n > 0 && !jobs))
		return rk_error_set(err, RK_EINVAL, "simulator: missing cluster, jobs, policy or "
				    "oracle");
	if (cfg->interval_ms <= 0)
		return rk_error_set(err, RK_ERANGE, "--interval: must be > 0 (got %lld ms)",
				    (long long)cfg->interval_ms);
	if (cfg->refit && !cfg->env)
		return rk_error_set(err, RK_EINVAL, "--refit: needs the performance environment "
				    "the models are fitted in (none given)");
	if (cfg->restart_ms < 0)
		return rk_error_set(err, RK_ERANGE, "--restart-cost: must be >= 0 (got %lld ms)",
				    (long long)cfg->restart_ms);
	struct sim s;
	memset(&s, 0, sizeof(s));
	s.cluster = cluster;
	s.tmpl = jobs;
	s.cfg = *cfg;
	s.n = n;
	rk_decisions_init(&s.ds);
	size_t m = (size_t)(n > 0 ? n : 1);
	s.jobs = calloc(m, sizeof(*s.jobs));
	s.order = malloc(m * sizeof(*s.order));
	s.act = malloc(m * sizeof(*s.act));
	s.snap = malloc(m * sizeof(*s.snap));
	s.ids = malloc(m * sizeof(*s.ids));
	s.hl = malloc(m * sizeof(*s.hl));
	s.chg = malloc(m * sizeof(*s.chg));
	s.vsnap = malloc(m * sizeof(*s.vsnap));
	int rc = 0;
	if (!s.jobs || !s.order || !s.act || !s.snap || !s.ids || !s.hl || !s.chg || !s.vsnap) {
		rc = rk_error_set(err, RK_ENOMEM, "simulator: out of memory for %d jobs", n);
		goto done;
	}
	rc = sim_coloc_init(&s, err); /* GPU sharing counts on two slots per GPU */
	if (rc)
		goto done;
	s.res.start_ms = n > 0 ? jobs_min_submit(jobs, n) : 0;
	rc = sim_loan_init(&s, err); /* capacity loaning: loaned servers start down */
	if (rc)
		goto done;
	if (rk_capacity_init(&s.cap, s.cfg.sharing ? &s.slots : s.cfg.inference ? &s.live : cluster)) {
		rc = rk_error_set(err, RK_ENOMEM, "simulator: out of memory for %d jobs", n);
		goto done;
	}
	s.gpus_total = rk_cluster_total_gpus(s.cfg.inference ? &s.live : cluster);
	rc = init_jobs(&s, jobs, err);
	if (!rc)
		rc = sim_sla_init(&s, err); /* guaranteed baselines, on the whole cluster */
	if (rc)
		goto done;
	s.res.start_ms = n > 0 ? s.jobs[s.order[0]].j.submit_ms : 0;
	if (s.cfg.inference)
		s.cluster = &s.live; /* jobs were sized on the whole cluster; policies see the live one */
	s.now_ms = s.res.start_ms;
	s.next_round_ms = s.res.start_ms;
	s.n_pending = 0;
	void *pstate = NULL;
	rc = policy->create(&pstate, cfg->policy_options, err);
	if (rc) {
		if (err && !strstr(err->msg, policy->name))
			rk_error_prefix(err, "policy %s", policy->name);
		goto done;
	}
	rc = sim_loop(&s, policy, pstate, err);
	policy->destroy(pstate);
	if (rc)
		goto done;
	s.res.end_ms = s.now_ms;
	if (s.cfg.inference)
		sim_loan_account(&s);
	rc = collect(&s);
	if (rc) {
		rk_error_set(err, rc, "simulator: out of memory");
		goto done;
	}
	*out = s.res;
	memset(&s.res, 0, sizeof(s.res));
done:
	sim_free(&s);
	return rc;
}
