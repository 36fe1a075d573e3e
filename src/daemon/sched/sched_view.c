/*
 * The cluster a round decides on, and the per-decision filter of its
 * decisions (issue 13: a maintenance drain must not freeze the cluster).
 *
 * A node the engine reports down or drained (capacity(), engine.h) is still
 * where rubick's running jobs are until their runs end: Slurm's drain lets
 * them finish. Policies and rk_decisions_validate see such a node as up but
 * only as big as what those jobs hold, so the jobs keep their allocations
 * and nothing new fits there; once the last of them ends the node is down
 * in the view too and its capacity has left it.
 */
#include "daemon/sched/sched_internal.h"

#include "rubick/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the jobs holding an allocation hold on each node (GPUs, CPUs, MiB). */
static void held(const struct rkd_sched *s, int *gpus, int *cpus, int64_t *mem)
{
	for (int i = 0; i < s->n_jobs; i++) {
		const struct rk_job *c = &s->jobs[i]->core;
		if (sched_state_terminal(c->state))
			continue;
		for (int k = 0; k < c->alloc.n; k++) {
			int n = c->alloc.shares[k].node;
			if (n < 0 || n >= s->cluster.n_nodes)
				continue;
			gpus[n] += c->alloc.shares[k].gpus;
			cpus[n] += c->alloc.shares[k].cpus;
			mem[n] += c->alloc.shares[k].mem_mb;
		}
	}
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 1099511628211ull; /* FNV-1a step */
}

/*
 * Also what rubick does not control (engine foreign(): Slurm jobs it did not
 * submit, active reservations) leaves the view: a node shows only the GPUs
 * and CPUs nobody else holds, never less than rubick's own jobs hold there.
 */
const struct rk_cluster *sched_view(struct rkd_sched *s)
{
	int n = s->cluster.n_nodes, need = 0;
	if (s->engine->foreign && n > 0) {
		if (!s->fgn_gpus) {
			s->fgn_gpus = calloc((size_t)n, sizeof(int));
			s->fgn_cpus = calloc((size_t)n, sizeof(int));
		}
		if (s->fgn_gpus && s->fgn_cpus)
			s->engine->foreign(s->engine_state, s->fgn_gpus, s->fgn_cpus, n);
	}
	for (int i = 0; i < n; i++)
		need |= !s->cluster.nodes[i].up ||
		        (s->fgn_gpus && s->fgn_cpus && (s->fgn_gpus[i] || s->fgn_cpus[i]));
	if (!need) {
		if (s->view_sig != 0) {
			s->view_sig = 0;
			s->feed_valid = 0; /* the view changed under the policy: a full round */
		}
		return &s->cluster;
	}
	if (s->view.n_nodes != n) {
		struct rk_cluster c = {0};
		if (rk_cluster_copy(&c, &s->cluster))
			return &s->cluster; /* out of memory: decide on the engine's view */
		rk_cluster_fini(&s->view);
		s->view = c;
	}
	int *hg = calloc((size_t)n, sizeof(int)), *hc = calloc((size_t)n, sizeof(int));
	int64_t *hm = calloc((size_t)n, sizeof(int64_t));
	if (!hg || !hc || !hm) {
		free(hg);
		free(hc);
		free(hm);
		return &s->cluster;
	}
	held(s, hg, hc, hm);
	uint64_t sig = 1469598103934665603ull;
	for (int i = 0; i < n; i++) {
		struct rk_node *v = &s->view.nodes[i];
		*v = s->cluster.nodes[i];
		if (!v->up) {
			if (hg[i] > 0) { /* draining: room for what runs there, nothing more */
				v->up = 1;
				v->gpus = hg[i];
				v->cpus = hc[i];
				v->mem_mb = hm[i];
			}
		} else if (s->fgn_gpus && s->fgn_cpus && (s->fgn_gpus[i] || s->fgn_cpus[i])) {
			int g = v->gpus - s->fgn_gpus[i], c = v->cpus - s->fgn_cpus[i];
			v->gpus = g > hg[i] ? g : hg[i];
			v->cpus = c > hc[i] ? c : hc[i];
			if (v->gpus <= 0)
				v->up = 0; /* wholly someone else's */
		}
		sig = mix(mix(mix(mix(sig, (uint64_t)i), (uint64_t)v->up), (uint64_t)v->gpus),
		          (uint64_t)v->cpus);
	}
	free(hg);
	free(hc);
	free(hm);
	if (sig == 0)
		sig = 1;
	if (sig != s->view_sig) {
		s->view_sig = sig;
		s->feed_valid = 0;
	}
	return &s->view;
}

/*
 * Keep the decisions of `ds` that rk_decisions_validate accepts one by one,
 * in the policy's order, each checked with those kept before it (so that
 * two decisions that only fit apart cannot both stay): a decision that
 * fails is dropped alone, with an event naming the job and why, and the rest
 * of the round applies. The whole list is tried first, so a valid round
 * costs one validation. Returns how many were dropped, or a negative RK_E*
 * code when nothing could be checked (out of memory: nothing applies).
 */
/* The node of `d` that is down or draining for the engine, or -1; none for a no-op decision. */
static int new_run_on_down_node(struct rkd_sched *s, const struct rk_decision *d)
{
	struct sjob *j = sched_job_find(s, d->job_id);
	if (j && j->core.state != RK_JOB_PENDING && rk_alloc_equal(&j->core.alloc, &d->alloc) &&
	    rk_plan_equal(&j->core.plan, &d->plan))
		return -1; /* keeps its run where it is */
	for (int k = 0; k < d->alloc.n; k++) {
		int n = d->alloc.shares[k].node;
		if (n >= 0 && n < s->cluster.n_nodes && !s->cluster.nodes[n].up)
			return n;
	}
	return -1;
}

int sched_decisions_filter(struct rkd_sched *s, const struct rk_sched_input *vin,
                           struct rk_decisions *ds, struct rk_error *err)
{
	/* A draining node is in the view for the runs it keeps; no new run goes there. */
	int dropped = 0, w = 0;
	for (int i = 0; i < ds->n; i++) {
		int n = new_run_on_down_node(s, &ds->v[i]);
		if (n < 0) {
			ds->v[w++] = ds->v[i];
			continue;
		}
		char msg[200];
		snprintf(msg, sizeof(msg),
		         "policy %s: job %lld: node %d is down or draining: no new "
		         "run starts there",
		         s->policy->name, (long long)ds->v[i].job_id, n);
		sched_event(s, ds->v[i].job_id, "decision-dropped", msg);
		s->policy_errors++;
		rk_alloc_fini(&ds->v[i].alloc);
		dropped++;
	}
	ds->n = w;
	if (!rk_decisions_validate(vin, ds, s->policy->name, err))
		return dropped;
	struct rk_decisions keep;
	rk_decisions_init(&keep);
	struct rk_error e;
	rk_error_clear(&e);
	if (rk_decisions_validate(vin, &keep, s->policy->name, &e)) {
		/* Wrong with no decision at all: the jobs left alone, not any decision. */
		rk_decisions_clear(ds);
		return rk_error_set(err, RK_EINFEASIBLE, "%s", e.msg);
	}
	int rc = 0;
	for (int i = 0; i < ds->n; i++) {
		const struct rk_decision *d = &ds->v[i];
		rc = rk_decisions_push(&keep, d->job_id, &d->alloc, &d->plan);
		if (rc)
			break;
		rk_error_clear(&e);
		if (!rk_decisions_validate(vin, &keep, s->policy->name, &e))
			continue;
		rk_alloc_fini(&keep.v[--keep.n].alloc);
		dropped++;
		s->policy_errors++;
		sched_event(s, d->job_id, "decision-dropped", e.msg);
	}
	if (rc) {
		rk_decisions_fini(&keep);
		rk_decisions_clear(ds);
		return rk_error_set(err, rc, "policy %s: filtering decisions: out of memory",
		                    s->policy->name);
	}
	keep.wake_ms = ds->wake_ms;
	keep.quiet_until_ms = ds->quiet_until_ms;
	rk_decisions_fini(ds);
	*ds = keep;
	return dropped;
}
