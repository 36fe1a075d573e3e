/*
 * Helpers shared by the baseline policies (see baseline.h): plan scaling with
 * the user's plan kept, fitted-model throughput, orderings.
 */
#include "policy/common/baseline.h"

#include <stdlib.h>
#include <string.h>

int rk_baseline_plan_scale(const struct rk_plan *req, int global_batch, int gpus,
			   struct rk_plan *out)
{
	int width = req->tp * req->pp;
	if (gpus < 1 || width < 1 || global_batch < 1 || gpus % width)
		return RK_EINFEASIBLE;
	int dp = gpus / width;
	if (global_batch % dp)
		return RK_EINFEASIBLE;
	if (req->zero >= 1 && !req->offload && dp < req->dp)
		return RK_EINFEASIBLE;
	int per_replica = global_batch / dp;
	int mb = req->mb < per_replica ? req->mb : per_replica;
	while (mb > 1 && per_replica % mb)
		mb--;
	*out = *req;
	out->dp = dp;
	out->mb = mb;
	out->ga = per_replica / mb;
	return RK_OK;
}

int rk_baseline_is_placed(const struct rk_job *job)
{
	return (job->state == RK_JOB_RUNNING || job->state == RK_JOB_RESTARTING) &&
	       job->alloc.n > 0;
}

static int cmp_fifo(const void *pa, const void *pb)
{
	const struct rk_job *a = *(struct rk_job *const *)pa, *b = *(struct rk_job *const *)pb;
	if (a->submit_ms != b->submit_ms)
		return a->submit_ms < b->submit_ms ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* Remaining run time at the request (s); +inf-like when unknown. */
static double remaining_s(const struct rk_job *j)
{
	if (!(j->est_duration_s > 0))
		return 1e300;
	double left = 1.0;
	if (j->iters_total > 0) {
		left = (j->iters_total - j->iters_done) / j->iters_total;
		if (left < 0)
			left = 0;
	}
	return j->est_duration_s * left;
}

static int cmp_srtf(const void *pa, const void *pb)
{
	const struct rk_job *a = *(struct rk_job *const *)pa, *b = *(struct rk_job *const *)pb;
	double ra = remaining_s(a), rb = remaining_s(b);
	if (ra != rb)
		return ra < rb ? -1 : 1;
	return cmp_fifo(pa, pb);
}

void rk_baseline_sort_fifo(struct rk_job **jobs, int n)
{
	if (n > 1)
		qsort(jobs, (size_t)n, sizeof(*jobs), cmp_fifo);
}

void rk_baseline_sort_srtf(struct rk_job **jobs, int n)
{
	if (n > 1)
		qsort(jobs, (size_t)n, sizeof(*jobs), cmp_srtf);
}
