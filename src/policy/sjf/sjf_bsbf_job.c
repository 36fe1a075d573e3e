/*
 * What SJF-BSBF and SJF-FFS ask of one job, both when the round orders the
 * queue (sjf_bsbf.c) and when it places a job (sjf_bsbf_place.c): its
 * remaining exclusive time and its per-GPU memory under a plan. A leaf of the
 * folder: it calls only the memory model (rk_job_gpu_mem_mb, policy/sharing).
 */
#include "policy/sjf/sjf_bsbf_internal.h"

#include <math.h>

double bsbf_mem_get(struct bsbf_state *st, const struct rk_job *j, const struct rk_plan *plan)
{
	for (int i = 0; i < SB_CACHE; i++)
		if (st->mem[i].model == j->model && rk_plan_equal(&st->mem[i].plan, plan))
			return st->mem[i].mb;
	struct mem_entry *e = &st->mem[st->mem_next];
	st->mem_next = (st->mem_next + 1) % SB_CACHE;
	struct rk_error err;
	e->model = j->model;
	e->plan = *plan;
	if (rk_job_gpu_mem_mb(j, plan, &e->mb, &err))
		e->mb = INFINITY; /* never a partner */
	return e->mb;
}

double bsbf_remaining_s(const struct rk_job *j)
{
	if (j->est_duration_s <= 0 || j->iters_total <= 0)
		return INFINITY;
	double left = 1.0 - j->iters_done / j->iters_total;
	return j->est_duration_s * (left > 0 ? left : 0);
}
