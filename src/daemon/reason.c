/*
 * Pending reasons (reason.h). Slurm's squeue shows "Resources" for a job
 * waiting for nodes to free up and "Priority" for one that waits behind
 * higher-priority jobs (squeue(1), JOB REASON CODES); rubick's policies do
 * not rank jobs on one priority scale, so the two are told apart by what a
 * round leaves free: a job that could be placed there now waits because
 * the policy chose others (Priority), one that could not waits for
 * resources. Placements are checked with rk_place_gang, the gang placement
 * the classic policies use, so "could be placed" means one consolidated or
 * spread gang of the job's smallest request.
 */
#include "daemon/reason.h"

#include "rubick/cluster.h"
#include "rubick/placement.h"

#include <stdlib.h>
#include <string.h>

const char *rkd_reason_name(enum rkd_reason r)
{
	switch (r) {
	case RKD_REASON_RESOURCES:
		return "Resources";
	case RKD_REASON_PRIORITY:
		return "Priority";
	case RKD_REASON_QUOTA:
		return "Quota";
	case RKD_REASON_HELD:
		return "Held";
	case RKD_REASON_INFEASIBLE:
		return "Infeasible";
	case RKD_REASON_NONE:
		break;
	}
	return "None";
}

/* The smallest gang a job can run as: min_gpus with its per-GPU CPU and memory. */
static void smallest(const struct rk_job *j, struct rk_place_req *req)
{
	rk_place_req_from_job(j, req);
	if (j->min_gpus >= 1 && j->min_gpus < req->gpus) {
		req->gpus = j->min_gpus;
		req->gpus_multiple = 1; /* the requested plan's width was for req_gpus */
	}
}

/*
 * Placement answers per request shape: within one call both capacities are
 * fixed, so jobs asking alike (most of a long queue) cost one placement.
 */
#define N_SHAPES 32
struct shape {
	struct rk_place_req req;
	int fits_empty, fits_now;
};

static int same_req(const struct rk_place_req *a, const struct rk_place_req *b)
{
	return a->gpus == b->gpus && a->cpus_per_gpu == b->cpus_per_gpu &&
	       a->mem_mb_per_gpu == b->mem_mb_per_gpu && a->gpus_multiple == b->gpus_multiple &&
	       a->mode == b->mode &&
	       (a->gpu_type == b->gpu_type ||
	        (a->gpu_type && b->gpu_type && !strcmp(a->gpu_type, b->gpu_type)));
}

static int fits(const struct rk_capacity *cap, const struct rk_place_req *req)
{
	struct rk_alloc a;
	rk_alloc_init(&a);
	int ok = rk_place_gang(cap, req, &a) == 0;
	rk_alloc_fini(&a);
	return ok;
}

static int quota_index(const struct rkd_reason_input *in, const char *tenant)
{
	for (int q = 0; q < in->n_quotas; q++)
		if (!strcmp(in->quotas[q].tenant, tenant))
			return q;
	return -1;
}

/* Whether min_gpus more would take the job's tenant past one of its quotas. */
static int over_quota(const struct rkd_reason_input *in, const struct rk_job *j, int gpus,
                      const long long *held, const long long *held_g)
{
	int q = quota_index(in, j->tenant);
	if (q < 0)
		return 0;
	const struct rk_tenant_quota *t = &in->quotas[q];
	if (t->has_gpu_quota && t->gpu_quota >= 0 && held[q] + gpus > t->gpu_quota)
		return 1;
	return j->guaranteed && t->guaranteed_gpus >= 0 && held_g[q] + gpus > t->guaranteed_gpus;
}

int rkd_reasons_compute(const struct rkd_reason_input *in, enum rkd_reason *out,
                        struct rk_error *err)
{
	struct rk_capacity empty, now;
	int nq = in->n_quotas > 0 ? in->n_quotas : 1;
	long long *held = calloc((size_t)nq, sizeof(*held)),
	          *held_g = calloc((size_t)nq, sizeof(*held_g));
	struct shape *shapes = malloc(N_SHAPES * sizeof(*shapes));
	int rc = !held || !held_g || !shapes ? RK_ENOMEM : 0, n_shapes = 0;
	int have_empty = !rc && !(rc = rk_capacity_init(&empty, in->installed));
	int have_now = !rc && !(rc = rk_capacity_init(&now, in->view));
	if (rc) {
		rc = rk_error_set(err, RK_ENOMEM, "pending reasons: out of memory");
		goto out;
	}
	for (int i = 0; i < in->n_jobs; i++) {
		const struct rk_job *j = in->jobs[i];
		if (j->alloc.n == 0 || j->state == RK_JOB_DONE || j->state == RK_JOB_FAILED ||
		    j->state == RK_JOB_CANCELLED)
			continue;
		struct rk_error e;
		/* A GPU two jobs share is taken once: the second take fails and is skipped. */
		(void)rk_capacity_take(&now, &j->alloc, &e);
		int q = quota_index(in, j->tenant);
		if (q >= 0) {
			int g = rk_alloc_total_gpus(&j->alloc);
			held[q] += g;
			held_g[q] += j->guaranteed ? g : 0;
		}
	}
	for (int i = 0; i < in->n_jobs; i++) {
		const struct rk_job *j = in->jobs[i];
		out[i] = RKD_REASON_NONE;
		if (j->state != RK_JOB_PENDING)
			continue;
		struct rk_place_req req;
		smallest(j, &req);
		struct shape *sh = NULL;
		for (int k = 0; k < n_shapes && !sh; k++)
			if (same_req(&shapes[k].req, &req))
				sh = &shapes[k];
		struct shape tmp;
		if (!sh) {
			sh = n_shapes < N_SHAPES ? &shapes[n_shapes++] : &tmp;
			sh->req = req;
			sh->fits_empty = fits(&empty, &req);
			/* Room now: as the classic policies place a gang (fifo's consolidated,
			 * Yarn): free GPUs scattered over nodes are no room for a job that
			 * fits one node, so Priority means a placement really was there. */
			struct rk_place_req r1 = req;
			r1.mode = RK_PLACE_CONSOLIDATED;
			sh->fits_now = sh->fits_empty && fits(&now, &r1);
		}
		if (!sh->fits_empty)
			out[i] = RKD_REASON_INFEASIBLE;
		else if ((in->quota_dropped && in->quota_dropped[i]) ||
		         over_quota(in, j, req.gpus, held, held_g))
			out[i] = RKD_REASON_QUOTA;
		else if (sh->fits_now)
			out[i] = RKD_REASON_PRIORITY;
		else
			out[i] = RKD_REASON_RESOURCES;
	}
out:
	if (have_empty)
		rk_capacity_fini(&empty);
	if (have_now)
		rk_capacity_fini(&now);
	free(held);
	free(held_g);
	free(shapes);
	return rc;
}
