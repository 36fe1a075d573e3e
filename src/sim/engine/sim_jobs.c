/*
 * From trace records to simulator jobs: model from the zoo, global batch,
 * request, plan and length. The plan of an artifact trace ("zero-dp", "344")
 * is read on the consolidated placement the request gets on an empty cluster,
 * the placement the Rubick artifact measured it on (docs/references.md §1.3, §6 D1).
 */
#include "rubick/sim.h"

#include "rubick/placement.h"
#include "rubick/plan.h"
#include "rubick/trace.h"
#include "rubick/zoo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rk_sim_jobs_free(struct rk_job *jobs, int n)
{
	if (!jobs)
		return;
	for (int i = 0; i < n; i++)
		rk_alloc_fini(&jobs[i].alloc);
	free(jobs);
}

/* Placement of `j`'s request on the empty cluster (gpus_multiple from its tp). */
static int request_placement(const struct rk_cluster *cl, const struct rk_job *j,
			     struct rk_placement *pl, int64_t *gpu_mem_mb)
{
	struct rk_capacity cap;
	if (rk_capacity_init(&cap, cl))
		return RK_ENOMEM;
	struct rk_place_req req;
	rk_place_req_from_job(j, &req);
	struct rk_alloc a;
	rk_alloc_init(&a);
	int rc = rk_place_gang(&cap, &req, &a);
	if (rc == 0) {
		rc = rk_alloc_to_placement(&a, pl);
		*gpu_mem_mb = cl->nodes[a.shares[0].node].gpu_mem_mb;
	}
	rk_alloc_fini(&a);
	rk_capacity_fini(&cap);
	return rc;
}

static int read_plan(const char *text, const struct rk_model *m, struct rk_job *j,
		     const struct rk_placement *pl, int64_t gpu_mem_mb, struct rk_error *perr)
{
	int rc;
	if (!strncmp(text, "dp=", 3))
		rc = rk_plan_parse(text, "plan", &j->req_plan, perr);
	else
		rc = rk_plan_from_artifact(text, "plan", m, j->global_batch, pl, gpu_mem_mb,
					   &j->req_plan, perr);
	if (!rc)
		rc = rk_plan_validate(&j->req_plan, j->global_batch, j->req_gpus, perr);
	return rc;
}

/* Build job `j` from record `tj`; on a bad record fill `why` and return nonzero. */
static int build_one(const struct rk_trace_job *tj, const struct rk_zoo *zoo,
		     const struct rk_cluster *cl, struct rk_job *j, struct rk_sim_jobs_report *rep,
		     struct rk_error *why)
{
	if (tj->iters <= 0 && !(tj->duration_s > 0))
		return rk_error_set(why, RK_EINVAL, "neither a run time nor an iteration count: the "
				    "simulator cannot tell when it ends");
	const struct rk_model *m = rk_zoo_find(zoo, tj->model);
	if (!m)
		return rk_error_set(why, RK_ENOTFOUND, "model '%s' is not in the zoo", tj->model);
	j->model = m;
	snprintf(j->name, sizeof(j->name), "%s", tj->name);
	snprintf(j->job_type, sizeof(j->job_type), "%s", tj->source_type);
	/* No tenant in the trace (e.g. the Rubick traces): the daemon's default
	 * tenant, so that `rubick sim --quota default:N` can still cap them. */
	snprintf(j->tenant, sizeof(j->tenant), "%s", tj->tenant[0] ? tj->tenant : "default");
	j->submit_ms = tj->submit_ms;
	j->req_gpus = tj->gpus;
	j->req_cpus = tj->cpus;
	j->req_mem_mb = tj->mem_mb;
	j->req_net_gbps = tj->net_gbps;
	j->guaranteed = tj->guaranteed;
	j->min_gpus = tj->min_gpus > 0 ? tj->min_gpus : tj->gpus;
	j->max_gpus = tj->max_gpus > 0 ? tj->max_gpus : tj->gpus;
	j->iters_total = (double)tj->iters;
	j->est_duration_s = tj->duration_s;
	j->app_batch = tj->source_batch;
	j->first_start_ms = -1;
	j->last_change_ms = -1;
	/* No batch in the trace: the model's own, rounded up later if the plan needs it. */
	j->global_batch = tj->global_batch > 0 ? tj->global_batch
					       : (m->global_batch > 0 ? m->global_batch : 1);
	/* Place with tp = 1 first: the plan's tp is not known before it is read. */
	j->req_plan = (struct rk_plan){.dp = tj->gpus, .tp = 1, .pp = 1, .mb = 1, .ga = 1};
	struct rk_placement pl;
	int64_t gpu_mem_mb = 0;
	int rc = request_placement(cl, j, &pl, &gpu_mem_mb);
	if (rc == RK_EINFEASIBLE)
		return rk_error_set(why, rc, "its request (%d GPUs, %d CPUs) does not fit the empty "
				    "cluster", tj->gpus, tj->cpus);
	if (rc)
		return rk_error_set(why, rc, "placing its request: %s", rk_strerror(rc));
	const char *text = tj->plan[0] ? tj->plan : "ga";
	if (!tj->plan[0])
		rep->default_plan++;
	struct rk_error perr;
	rc = read_plan(text, m, j, &pl, gpu_mem_mb, &perr);
	if (rc && tj->global_batch <= 0 && j->global_batch % tj->gpus) {
		/* Every replica needs whole samples: round the default batch up to a multiple of the GPUs. */
		j->global_batch = (j->global_batch + tj->gpus - 1) / tj->gpus * tj->gpus;
		rc = read_plan(text, m, j, &pl, gpu_mem_mb, &perr);
		if (!rc)
			rep->batch_adjusted++;
	}
	if (rc)
		return rk_error_set(why, rc, "plan '%s': %s", text, perr.msg);
	/* The reader refused a canonical plan outside the job's space; an artifact
	 * plan ("tp+ga", "344") is only known here, once resolved. */
	j->space = tj->space;
	if (rk_plan_space_check(&j->req_plan, &j->space, &perr))
		return rk_error_set(why, RK_EINVAL, "plan '%s' is outside the job's own space: %s",
				    text, perr.msg);
	/* A tensor-parallel plan must also be placeable with tp GPUs per node. */
	if (j->req_plan.tp > 1) {
		rc = request_placement(cl, j, &pl, &gpu_mem_mb);
		if (rc)
			return rk_error_set(why, RK_EINFEASIBLE, "plan '%s' (tp=%d) does not fit the "
					    "empty cluster's nodes", text, j->req_plan.tp);
	}
	return 0;
}

/*
 * The GPU type each trace format's run times were measured on
 * (docs/oracle.md "Job length"): the testbed of the paper whose artifact the
 * trace comes from. Philly-derived traces record no hardware per job; they
 * are read as V100 runs, as Gavel's simulator runs them (its
 * cluster_specs.json: 500 V100).
 */
static const char *const trace_gpu[][2] = {
	{"rubick", "a800"},   /* the Rubick artifact's 8 x 8 A800 testbed */
	{"native", "a800"},   /* rubick's own reference type */
	{"alibaba", "a800"},  /* mixed PAI fleet, no single type: the reference */
	{"sia", "t4"},        /* Pollux/Sia testbed and profiles (AWS g4dn, T4) */
	{"philly", "v100"},   /* Philly run times, read as Gavel does */
	{"gavel", "v100"},    /* Gavel's Philly VC traces on its V100 cluster */
	{"muri", "v100"},     /* Philly-derived, as above */
	{"synergy", "v100"},  /* Synergy's V100 servers */
	{"tiresias", "p100"}, /* the Tiresias testbed's P100 machines */
};

const char *rk_sim_trace_gpu_type(const char *format)
{
	for (size_t i = 0; format && i < sizeof(trace_gpu) / sizeof(trace_gpu[0]); i++)
		if (!strcmp(format, trace_gpu[i][0]))
			return trace_gpu[i][1];
	return "";
}

void rk_sim_jobs_set_ref_gpu(struct rk_job *jobs, int n, const char *gpu_type)
{
	for (int i = 0; i < n; i++)
		snprintf(jobs[i].ref_gpu_type, sizeof(jobs[i].ref_gpu_type), "%s",
			 gpu_type ? gpu_type : "");
}

int rk_sim_jobs_from_trace(const struct rk_trace *t, const char *filename,
			   const struct rk_zoo *zoo, const struct rk_cluster *cluster, int skip_bad,
			   struct rk_job **jobs, int *n, struct rk_sim_jobs_report *rep,
			   struct rk_error *err)
{
	memset(rep, 0, sizeof(*rep));
	*jobs = NULL;
	*n = 0;
	struct rk_job *v = calloc(t->n > 0 ? t->n : 1, sizeof(*v));
	if (!v)
		return rk_error_set(err, RK_ENOMEM, "%s: out of memory for %zu jobs", filename, t->n);
	int m = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct rk_trace_job *tj = &t->jobs[i];
		struct rk_job *j = &v[m];
		memset(j, 0, sizeof(*j));
		j->id = (int64_t)i + 1;
		struct rk_error why;
		int rc = build_one(tj, zoo, cluster, j, rep, &why);
		if (rc == RK_ENOMEM) {
			free(v);
			return rk_error_set(err, rc, "%s: out of memory", filename);
		}
		if (rc && !skip_bad) {
			free(v);
			return rk_error_set(err, rc, "%s:%d: job %s: %s", filename, tj->line, tj->name,
					    why.msg);
		}
		if (rc) {
			if (rep->dropped++ == 0)
				snprintf(rep->first_reason, sizeof(rep->first_reason),
					 "%.60s:%d: job %.40s: %.120s", filename, tj->line, tj->name,
					 why.msg);
			continue;
		}
		m++;
	}
	rk_sim_jobs_set_ref_gpu(v, m, rk_sim_trace_gpu_type(t->format));
	*jobs = v;
	*n = m;
	return 0;
}

int rk_sim_jobs_free_range(const struct rk_trace *t, struct rk_job *jobs, int n, int max_gpus)
{
	int widened = 0;
	for (int i = 0; i < n; i++) {
		struct rk_job *j = &jobs[i];
		size_t k = (size_t)(j->id - 1); /* ids are 1 + the record's index */
		if (j->id < 1 || k >= t->n || t->jobs[k].has_range)
			continue;
		j->min_gpus = 1;
		j->max_gpus = max_gpus > j->req_gpus ? max_gpus : j->req_gpus;
		widened++;
	}
	return widened;
}
