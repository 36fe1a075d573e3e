/*
 * Re-plans of running guaranteed jobs in place (Rubick step 5,
 * guaranteed=reconfigure): the same GPUs, a faster plan of the
 * family the job was observed running, priced by its model refitted from
 * its own iterations.
 */
#include "policy/common/baseline.h"
#include "policy/rubick/rubick_round.h"
#include "rubick/memory.h"
#include "rubick/placement.h"

#include <math.h>

/*
 * The fastest plan of `r`'s observed family on placement `pl` with `cpg`
 * CPU threads per GPU, by its refitted model: the request's tensor and
 * pipeline degrees, the data-parallel degree the GPUs give, every
 * micro-batch x accumulation split of the replica's batch, with and without
 * checkpointing, and the request's ZeRO stage and offload or less of them,
 * that fits the GPUs' and the node's memory. Less: dropping sharding or
 * offload removes traffic the job was observed paying and leaves the
 * computation and gradient synchronisation its refit was calibrated on;
 * adding it is extrapolation (sla_ok: plain data parallelism moved to ZeRO-1
 * broke 6 of 504 guarantees on Muri trace3). The curve holds one plan per
 * GPU count, the best of every family; where that one changes the family
 * (tensor or pipeline degree, more ZeRO), sla_ok refuses it and a faster
 * plan of the job's own family would never be seen. Only plans inside the
 * job's declared space (plan.h): the request lies in it, so its family does,
 * but checkpointing may not. OUT: *best and its
 * refitted throughput *best_sps (0 when none).
 */
static void family_best(const struct round *R, const struct rj *r, const struct rk_placement *pl,
                        int cpg, struct rk_plan *best, double *best_sps)
{
	const struct rk_job *job = r->job;
	const struct rk_plan *req = &job->req_plan;
	*best_sps = 0;
	int g = rk_placement_total(pl);
	int tp = req->tp > 0 ? req->tp : 1, pp = req->pp > 0 ? req->pp : 1;
	if (g % (tp * pp) || job->global_batch % (g / (tp * pp)))
		return;
	int dp = g / (tp * pp), per = job->global_batch / dp;
	for (int zero = 0; zero <= req->zero; zero++)
		for (int off = 0; off <= req->offload; off++)
			for (int mb = 1; mb <= per; mb++)
				for (int gc = 0; gc <= 1 && per % mb == 0; gc++) {
					struct rk_plan p = {.dp = dp, .tp = tp, .pp = pp};
					p.mb = mb, p.ga = per / mb, p.gc = gc;
					p.zero = zero, p.offload = off;
					double sps = 0;
					/* Checkpointing the script cannot do is no candidate. */
					if (!rk_plan_in_space(&p, &job->space) ||
					    rk_plan_validate(&p, job->global_batch, g, NULL) ||
					    rk_plan_check_placement(&p, pl, NULL) ||
					    rk_memory_check(job->model, &p, pl, R->gpu_mem_mb,
					                    R->host_mem_mb, NULL, NULL) ||
					    rk_baseline_tput_sps(job, &p, pl, cpg, R->in->env,
					                         &sps))
						continue;
					if (sps > *best_sps) {
						*best_sps = sps;
						*best = p;
					}
				}
}

/*
 * Step 5 (guaranteed=reconfigure): a running guaranteed job whose model was
 * refitted from its own iterations moves, on the GPUs it holds, to the
 * fastest plan of its observed family there (family_best) when the refitted
 * model predicts it at its floor times its margin (sla_ok's test) and
 * the time saved against its observed speed (observed_sps, not a
 * prediction) exceeds the restart delay. Only on the fewest nodes for its
 * GPUs (where the model was calibrated for the request). This is where
 * reconfiguring a guarantee pays: the request's plan is often not the best
 * one for its GPUs (e.g. checkpointing, offload or one-sample micro-batches
 * where the memory allows without), and the GPUs stay.
 */
void rubick_replan_guaranteed(struct round *R)
{
	if (!R->st->reconfigure_guaranteed || !R->in->env)
		return;
	for (int i = 0; i < R->n; i++) {
		struct rj *r = &R->j[i];
		const struct rk_job *job = r->job;
		if (!r->guaranteed || !r->view || !r->was_placed || r->changed || r->g < 1 ||
		    job->state != RK_JOB_RUNNING || !(job->observed_sps > 0) ||
		    job->restarts >= RUBICK_RESTART_LIMIT || !job->model)
			continue;
		double left = job->iters_total - job->iters_done;
		/* Nothing saves more than the whole remaining time: skip the search. */
		if (!(left > 0) || left * job->global_batch / job->observed_sps <= R->st->restart_s)
			continue;
		struct rk_placement pl;
		if (rk_alloc_to_placement(&r->now, &pl) ||
		    pl.n_nodes > (r->g + R->node_gpus - 1) / R->node_gpus)
			continue;
		int cpg = rk_alloc_total_cpus(&r->now) / r->g;
		struct rk_plan p;
		double t_new = 0;
		family_best(R, r, &pl, cpg, &p, &t_new);
		if (!(t_new >= r->sla_sps * r->sla_margin) || !(t_new > job->observed_sps) ||
		    rk_plan_equal(&p, &r->plan))
			continue;
		double saved = left * job->global_batch * (1.0 / job->observed_sps - 1.0 / t_new);
		if (saved <= R->st->restart_s)
			continue;
		r->plan = p;
		r->changed = 1;
	}
}
