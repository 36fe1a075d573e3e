/*
 * The two steps both rounds of the classic baselines take (the full round of
 * classic.c and the incremental one of classic_inc.c): starting a job on the
 * free capacity, and giving back the victims a start did not need. A leaf:
 * it calls only the placement and decision helpers of policy/common.
 */
#include "policy/classic/classic.h"

#include "rubick/placement.h"

int classic_try_start(struct rk_capacity *cap, struct rk_job *j, enum rk_place_mode mode,
		      struct rk_decisions *out, int *rc)
{
	struct rk_place_req req;
	rk_place_req_from_job(j, &req);
	req.mode = mode;
	if (req.gpus > cap->free_gpus_total)
		return 0;
	struct rk_alloc a;
	rk_alloc_init(&a);
	int r = rk_place_gang_take(cap, &req, &a);
	if (r == RK_EINFEASIBLE)
		return 0;
	if (r == 0)
		r = rk_decisions_push(out, j->id, &a, &j->req_plan);
	rk_alloc_fini(&a);
	if (r)
		*rc = r;
	return r == 0;
}

int classic_restore_victims(struct rk_capacity *cap, struct classic_item *it, const int *victims,
			    int nv)
{
	for (int k = nv - 1; k >= 0; k--) {
		struct classic_item *v = &it[victims[k]];
		if (!rk_capacity_fits(cap, &v->job->alloc))
			continue;
		int rc = rk_capacity_take(cap, &v->job->alloc, NULL);
		if (rc)
			return rc;
		v->preempted = 0;
	}
	return 0;
}
