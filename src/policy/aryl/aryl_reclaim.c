/*
 * Greedy reclaim of loaned inference servers (docs/references.md §2.3) and the
 * elastic plan helper. The reconstruction's PreemptCost(s) counts c_j for each
 * job on s that cannot be scaled in; we use both variants of c_j
 * lexicographically (first the count of preemptions, then the lost work), so
 * the greedy minimises preemptions and, among equal counts, lost work — as
 * capacity loaning asks. Choices documented in docs/aryl.md.
 */
#include "rubick/aryl.h"

#include <stdlib.h>
#include <string.h>

int rk_aryl_job_elastic(const struct rk_job *job)
{
	return job->min_gpus >= 1 && job->min_gpus < job->max_gpus && job->req_plan.tp <= 1 &&
	       job->req_plan.pp <= 1;
}

int rk_aryl_plan_for(const struct rk_job *job, int gpus, struct rk_plan *out)
{
	if (gpus == job->req_gpus) {
		*out = job->req_plan;
		return 0;
	}
	if (gpus < 1 || job->global_batch % gpus)
		return RK_EINFEASIBLE;
	int per = job->global_batch / gpus;
	struct rk_plan p = job->req_plan;
	p.dp = gpus;
	p.tp = 1;
	p.pp = 1;
	if (p.mb < 1 || per % p.mb)
		p.mb = per;
	p.ga = per / p.mb;
	*out = p;
	return 0;
}

void rk_reclaim_stats_fini(struct rk_reclaim_stats *s)
{
	if (!s)
		return;
	free(s->servers);
	memset(s, 0, sizeof *s);
}

/* Working state of one job touched (or touchable) by the reclaim. */
struct rjob {
	struct rk_alloc alloc; /* what it holds now, after earlier picks */
	int touched;
};

static int gpus_on(const struct rk_alloc *a, int node)
{
	for (int i = 0; i < a->n; i++)
		if (a->shares[i].node == node)
			return a->shares[i].gpus;
	return 0;
}

static void drop_node(struct rk_alloc *a, int node)
{
	int w = 0;
	for (int i = 0; i < a->n; i++)
		if (a->shares[i].node != node)
			a->shares[w++] = a->shares[i];
	a->n = w;
}

/* Whether returning `node` scales job j in (1) or preempts it (0). */
static int can_scale_in(const struct rk_job *j, const struct rk_alloc *a, int node)
{
	if (!rk_aryl_job_elastic(j))
		return 0;
	int rest = rk_alloc_total_gpus(a) - gpus_on(a, node);
	struct rk_plan p;
	return rest >= j->min_gpus && rk_aryl_plan_for(j, rest, &p) == 0;
}

struct cost {
	int preempt;
	double lost;
	int busy, jobs;
};

static double age_s(const struct rk_sched_input *in, const struct rk_job *j)
{
	int64_t d = in->now_ms - j->last_change_ms;
	return d > 0 ? (double)d / 1000.0 : 0.0;
}

static void server_cost(const struct rk_sched_input *in, const struct rjob *rj, int node,
			struct cost *c)
{
	memset(c, 0, sizeof *c);
	for (int i = 0; i < in->n_jobs; i++) {
		int g = gpus_on(&rj[i].alloc, node);
		if (!g)
			continue;
		c->busy += g;
		c->jobs++;
		if (!can_scale_in(in->jobs[i], &rj[i].alloc, node)) {
			c->preempt++;
			c->lost += rk_alloc_total_gpus(&rj[i].alloc) * age_s(in, in->jobs[i]);
		}
	}
}

static int cost_less(const struct cost *a, int na, const struct cost *b, int nb)
{
	if (a->preempt != b->preempt)
		return a->preempt < b->preempt;
	if (a->lost != b->lost)
		return a->lost < b->lost;
	if (a->busy != b->busy)
		return a->busy < b->busy;
	if (a->jobs != b->jobs)
		return a->jobs < b->jobs;
	return na < nb;
}

int rk_aryl_reclaim(const struct rk_sched_input *in, int k, struct rk_decisions *out,
		    struct rk_reclaim_stats *stats, struct rk_error *err)
{
	memset(stats, 0, sizeof *stats);
	const struct rk_cluster *cl = in->cluster;
	int n_loaned = 0;
	for (int s = 0; s < cl->n_nodes; s++)
		n_loaned += cl->nodes[s].pool == RK_POOL_LOANED && cl->nodes[s].up;
	if (k < 0 || k > n_loaned)
		return rk_error_set(err, RK_ERANGE,
				    "aryl reclaim: %d servers asked back, %d loaned servers are up", k,
				    n_loaned);
	if (k == 0)
		return 0;
	int rc = RK_ENOMEM;
	struct rjob *rj = calloc((size_t)(in->n_jobs > 0 ? in->n_jobs : 1), sizeof *rj);
	char *gone = calloc((size_t)cl->n_nodes, 1);
	stats->servers = malloc((size_t)k * sizeof *stats->servers);
	if (!rj || !gone || !stats->servers)
		goto fail;
	for (int i = 0; i < in->n_jobs; i++)
		if (rk_alloc_copy(&rj[i].alloc, &in->jobs[i]->alloc))
			goto fail;
	for (int pick = 0; pick < k; pick++) {
		int bs = -1;
		struct cost bc = {0}, c;
		for (int s = 0; s < cl->n_nodes; s++) {
			if (cl->nodes[s].pool != RK_POOL_LOANED || !cl->nodes[s].up || gone[s])
				continue;
			server_cost(in, rj, s, &c);
			if (bs < 0 || cost_less(&c, s, &bc, bs)) {
				bs = s;
				bc = c;
			}
		}
		gone[bs] = 1;
		stats->servers[stats->n_servers++] = bs;
		for (int i = 0; i < in->n_jobs; i++) {
			struct rjob *r = &rj[i];
			if (!gpus_on(&r->alloc, bs))
				continue;
			r->touched = 1;
			if (can_scale_in(in->jobs[i], &r->alloc, bs)) {
				drop_node(&r->alloc, bs);
				stats->scale_ins++;
			} else {
				stats->lost_gpu_s += rk_alloc_total_gpus(&r->alloc) * age_s(in, in->jobs[i]);
				stats->preemptions++;
				r->alloc.n = 0;
			}
		}
	}
	for (int i = 0; i < in->n_jobs; i++) {
		if (!rj[i].touched)
			continue;
		const struct rk_job *j = in->jobs[i];
		struct rk_plan p = {0};
		int w = rk_alloc_total_gpus(&rj[i].alloc);
		if (w > 0 && rk_aryl_plan_for(j, w, &p)) {
			rc = rk_error_set(err, RK_EINTERNAL, "aryl reclaim: job %lld: no plan on %d GPUs",
					  (long long)j->id, w);
			goto fail;
		}
		if ((rc = rk_decisions_push(out, j->id, &rj[i].alloc, &p)))
			goto fail;
	}
	rc = 0;
fail:
	if (rc == RK_ENOMEM)
		rk_error_set(err, RK_ENOMEM, "aryl reclaim: out of memory");
	if (rj)
		for (int i = 0; i < in->n_jobs; i++)
			rk_alloc_fini(&rj[i].alloc);
	free(rj);
	free(gone);
	if (rc)
		rk_reclaim_stats_fini(stats);
	return rc;
}
