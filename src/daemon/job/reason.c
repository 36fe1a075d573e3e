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
#include "daemon/job/reason.h"

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
 * Placement answers per request shape: within one round both capacities are
 * fixed, so jobs asking alike (most of a long queue) cost one placement.
 */
struct rkd_reason_shape {
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
static int over_quota(const struct rkd_reason_ctx *c, const struct rk_job *j, int gpus)
{
	int q = quota_index(c->in, j->tenant);
	if (q < 0)
		return 0;
	const struct rk_tenant_quota *t = &c->in->quotas[q];
	if (t->has_gpu_quota && t->gpu_quota >= 0 && c->held[q] + gpus > t->gpu_quota)
		return 1;
	return j->guaranteed && t->guaranteed_gpus >= 0 && c->held_g[q] + gpus > t->guaranteed_gpus;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 1099511628211ull; /* FNV-1a step */
}

static int active(const struct rk_job *j)
{
	return j->state == RK_JOB_PENDING || j->state == RK_JOB_RUNNING ||
	       j->state == RK_JOB_RESTARTING;
}

int rkd_reason_ctx_init(struct rkd_reason_ctx *c, const struct rkd_reason_input *in,
                        struct rk_error *err)
{
	memset(c, 0, sizeof(*c));
	c->in = in;
	int nq = in->n_quotas > 0 ? in->n_quotas : 1;
	c->held = calloc((size_t)nq, sizeof(*c->held));
	c->held_g = calloc((size_t)nq, sizeof(*c->held_g));
	c->shapes = malloc(RKD_REASON_SHAPES * sizeof(*c->shapes));
	int rc = c->held && c->held_g && c->shapes ? 0 : RK_ENOMEM;
	if (!rc && !(rc = rk_capacity_init(&c->empty, in->installed)) &&
	    (rc = rk_capacity_init(&c->now, in->view)))
		rk_capacity_fini(&c->empty);
	if (rc) {
		free(c->held);
		free(c->held_g);
		free(c->shapes);
		return rk_error_set(err, RK_ENOMEM, "pending reasons: out of memory");
	}
	struct rk_job *const *hl = in->holders ? in->holders : in->jobs;
	int n_hl = in->holders ? in->n_holders : in->n_jobs;
	for (int i = 0; i < n_hl; i++) {
		const struct rk_job *j = hl[i];
		if (j->alloc.n == 0 || !active(j))
			continue;
		struct rk_error e;
		/* A GPU two jobs share is taken once: the second take fails and is skipped. */
		(void)rk_capacity_take(&c->now, &j->alloc, &e);
		int q = quota_index(in, j->tenant);
		if (q >= 0) {
			int g = rk_alloc_total_gpus(&j->alloc);
			c->held[q] += g;
			c->held_g[q] += j->guaranteed ? g : 0;
		}
	}
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < c->now.n_nodes; i++) {
		h = mix(mix(mix(h, (uint64_t)c->now.free_gpus[i]), (uint64_t)c->now.free_cpus[i]),
		        (uint64_t)c->now.free_mem_mb[i]);
		h = mix(
		    mix(mix(h, (uint64_t)c->empty.free_gpus[i]), (uint64_t)c->empty.free_cpus[i]),
		    (uint64_t)c->empty.free_mem_mb[i]);
	}
	for (int q = 0; q < in->n_quotas; q++)
		h = mix(mix(h, (uint64_t)c->held[q]), (uint64_t)c->held_g[q]);
	c->sig = h;
	return 0;
}

void rkd_reason_ctx_fini(struct rkd_reason_ctx *c)
{
	rk_capacity_fini(&c->empty);
	rk_capacity_fini(&c->now);
	free(c->held);
	free(c->held_g);
	free(c->shapes);
	memset(c, 0, sizeof(*c));
}

enum rkd_reason rkd_reason_of(struct rkd_reason_ctx *c, const struct rk_job *j, int quota_dropped)
{
	if (j->state != RK_JOB_PENDING)
		return RKD_REASON_NONE;
	struct rk_place_req req;
	smallest(j, &req);
	struct rkd_reason_shape *sh = NULL, tmp;
	for (int k = 0; k < c->n_shapes && !sh; k++)
		if (same_req(&c->shapes[k].req, &req))
			sh = &c->shapes[k];
	if (!sh) {
		sh = c->n_shapes < RKD_REASON_SHAPES ? &c->shapes[c->n_shapes++] : &tmp;
		sh->req = req;
		sh->fits_empty = fits(&c->empty, &req);
		/* Room now: as the classic policies place a gang (fifo's consolidated,
		 * Yarn): free GPUs scattered over nodes are no room for a job that
		 * fits one node, so Priority means a placement really was there. */
		struct rk_place_req r1 = req;
		r1.mode = RK_PLACE_CONSOLIDATED;
		sh->fits_now = sh->fits_empty && fits(&c->now, &r1);
	}
	if (!sh->fits_empty)
		return RKD_REASON_INFEASIBLE;
	if (quota_dropped || over_quota(c, j, req.gpus))
		return RKD_REASON_QUOTA;
	return sh->fits_now ? RKD_REASON_PRIORITY : RKD_REASON_RESOURCES;
}

int rkd_reasons_compute(const struct rkd_reason_input *in, enum rkd_reason *out,
                        struct rk_error *err)
{
	struct rkd_reason_ctx c;
	int rc = rkd_reason_ctx_init(&c, in, err);
	if (rc)
		return rc;
	for (int i = 0; i < in->n_jobs; i++)
		out[i] = rkd_reason_of(&c, in->jobs[i], in->quota_dropped && in->quota_dropped[i]);
	rkd_reason_ctx_fini(&c);
	return 0;
}
