/*
 * Check mode (`--check`, docs/sim.md): after every instant the engine handled,
 * verify from scratch — not from the engine's own counters — that
 *  - time never went backwards;
 *  - no node holds more GPUs, CPUs or memory than installed, and the
 *    capacity view agrees with the sum of the jobs' allocations;
 *  - every job is in exactly one state, consistent with what it holds and
 *    with the active list;
 *  - every job's global batch is the one it arrived with, and the plan of
 *    every job holding resources is valid for it on its GPUs and inside the
 *    job's declared plan space.
 * O(jobs + nodes) per instant; meant for tests and --check.
 */
#include "sim/engine/engine_internal.h"

#include "rubick/plan.h"

#include <stdlib.h>
#include <string.h>

static int broken(struct rk_error *err, const struct sim *s, const char *what, long long a,
		  long long b)
{
	return rk_error_set(err, RK_EINTERNAL, "check mode: t=%lld ms: %s (%lld, %lld)",
			    (long long)s->now_ms, what, a, b);
}

static int check_nodes(struct sim *s, struct rk_error *err)
{
	int nn = s->cluster->n_nodes;
	int64_t *use = calloc((size_t)(nn > 0 ? nn : 1) * 3, sizeof(*use));
	if (!use)
		return rk_error_set(err, RK_ENOMEM, "check mode: out of memory");
	int rc = 0;
	for (int i = 0; i < s->n && !rc; i++) {
		const struct rk_alloc *a = &s->jobs[i].j.alloc;
		for (int k = 0; k < a->n; k++) {
			int node = a->shares[k].node;
			if (node < 0 || node >= nn) {
				rc = broken(err, s, "job holds an unknown node", (long long)s->jobs[i].j.id,
					    node);
				break;
			}
			use[3 * node] += a->shares[k].gpus;
			use[3 * node + 1] += a->shares[k].cpus;
			use[3 * node + 2] += a->shares[k].mem_mb;
		}
	}
	for (int i = 0; i < nn && !rc; i++) {
		const struct rk_node *nd = &s->cap.cluster->nodes[i]; /* two slots per GPU when sharing */
		if (use[3 * i] > nd->gpus)
			rc = broken(err, s, "node over-allocated in GPUs (node, GPUs held)", i, use[3 * i]);
		else if (use[3 * i + 1] > nd->cpus)
			rc = broken(err, s, "node over-allocated in CPUs (node, CPUs held)", i,
				    use[3 * i + 1]);
		else if (use[3 * i + 2] > nd->mem_mb)
			rc = broken(err, s, "node over-allocated in memory (node, MiB held)", i,
				    use[3 * i + 2]);
		else if (nd->up && (use[3 * i] != nd->gpus - s->cap.free_gpus[i] ||
				    use[3 * i + 1] != nd->cpus - s->cap.free_cpus[i] ||
				    use[3 * i + 2] != nd->mem_mb - s->cap.free_mem_mb[i]))
			rc = broken(err, s, "capacity view disagrees with the jobs (node, GPUs held)", i,
				    use[3 * i]);
	}
	free(use);
	return rc;
}

static int check_jobs(struct sim *s, struct rk_error *err)
{
	char *in_act = calloc((size_t)(s->n > 0 ? s->n : 1), 1);
	if (!in_act)
		return rk_error_set(err, RK_ENOMEM, "check mode: out of memory");
	int rc = 0;
	for (int i = 0; i < s->n_act && !rc; i++) {
		int k = s->act[i];
		if (in_act[k])
			rc = broken(err, s, "job twice in the active list (job, slot)",
				    (long long)s->jobs[k].j.id, i);
		in_act[k] = 1;
	}
	int counts[RK_JOB_CANCELLED + 1] = {0};
	for (int i = 0; i < s->n && !rc; i++) {
		const struct sjob *sj = &s->jobs[i];
		const struct rk_job *j = &sj->j;
		long long id = (long long)j->id;
		/* Every arrival at or before now has been handled by now. */
		int arrived = j->submit_ms <= s->now_ms;
		int holds = j->alloc.n > 0;
		if ((int)j->state < 0 || j->state > RK_JOB_CANCELLED) {
			rc = broken(err, s, "job in no known state (job, state)", id, j->state);
			break;
		}
		counts[j->state]++;
		if (j->global_batch != s->tmpl[i].global_batch)
			rc = broken(err, s, "global batch changed (job, batch)", id, j->global_batch);
		else if (j->state == RK_JOB_DONE && (holds || sj->finish_ms < 0))
			rc = broken(err, s, "finished job still holds resources (job, shares)", id,
				    j->alloc.n);
		else if (j->state == RK_JOB_PENDING && holds)
			rc = broken(err, s, "pending job holds resources (job, shares)", id, j->alloc.n);
		else if ((j->state == RK_JOB_RUNNING || j->state == RK_JOB_RESTARTING) && !holds)
			rc = broken(err, s, "running job holds nothing (job, state)", id, j->state);
		else if (sj->rejected != (j->state == RK_JOB_CANCELLED) ||
			 (sj->rejected && (holds || in_act[i] || !arrived)))
			rc = broken(err, s, "rejected job active or cancelled without a rejection "
				    "(job, state)", id, j->state);
		else if (j->state != RK_JOB_DONE && !sj->rejected && arrived && !in_act[i])
			rc = broken(err, s, "arrived job missing from the active list (job, submit ms)",
				    id, (long long)j->submit_ms);
		else if (!arrived && (in_act[i] || holds || j->state != RK_JOB_PENDING))
			rc = broken(err, s, "job active before its arrival (job, submit ms)", id,
				    (long long)j->submit_ms);
		else if (j->iters_done > j->iters_total + 1e-9 * j->iters_total)
			rc = broken(err, s, "job did more iterations than it has (job, iters)", id,
				    (long long)j->iters_done);
		if (!rc && holds) {
			struct rk_error perr;
			if (rk_plan_validate(&j->plan, j->global_batch, rk_alloc_total_gpus(&j->alloc),
					     &perr))
				rc = rk_error_set(err, RK_EINTERNAL, "check mode: t=%lld ms: job %lld "
						  "runs an invalid plan: %s", (long long)s->now_ms,
						  id, perr.msg);
			else if (rk_plan_space_check(&j->plan, &j->space, &perr))
				rc = rk_error_set(err, RK_EINTERNAL, "check mode: t=%lld ms: job %lld "
						  "runs a plan outside its space: %s",
						  (long long)s->now_ms, id, perr.msg);
		}
	}
	if (!rc) {
		int holding = counts[RK_JOB_RUNNING] + counts[RK_JOB_RESTARTING];
		if (holding != s->n_holding || counts[RK_JOB_DONE] != s->n_done)
			rc = broken(err, s, "state counts disagree (holding, done)", holding,
				    counts[RK_JOB_DONE]);
		else if (counts[RK_JOB_CANCELLED] != s->n_rejected)
			rc = broken(err, s, "rejected counts disagree (cancelled, rejected)",
				    counts[RK_JOB_CANCELLED], s->n_rejected);
		else if (s->n_pending + s->n_holding + s->n_done + s->n_rejected != s->next_arrival)
			rc = broken(err, s, "arrived jobs not in exactly one state (arrived, counted)",
				    s->next_arrival,
				    s->n_pending + s->n_holding + s->n_done + s->n_rejected);
	}
	free(in_act);
	return rc;
}

int sim_check(struct sim *s, int64_t prev_ms, struct rk_error *err)
{
	if (s->now_ms < prev_ms)
		return broken(err, s, "time went backwards (previous, now)", (long long)prev_ms,
			      (long long)s->now_ms);
	int rc = check_nodes(s, err);
	if (!rc)
		rc = check_jobs(s, err);
	if (!rc && s->cfg.sharing)
		rc = sim_coloc_check(s, err);
	if (!rc)
		s->res.checks++;
	return rc;
}
