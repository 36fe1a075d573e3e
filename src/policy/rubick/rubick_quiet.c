/*
 * Quiet rounds of the Rubick policy (rubick.c): a round that provably
 * decides nothing is answered without being run.
 *
 * Rubick is not event-driven: its rounds read the clock (a job's age makes
 * it starving) and the progress of running jobs (remaining times), so a
 * driver runs it every interval. Under contention (Gavel's VC trace at its
 * stand-ins' zoo speeds: ~1,000 jobs queued for ~6 million 60 s rounds,
 * bench/README.md "Speed") nearly every round decides nothing, and each costs
 * O(active jobs): a view lookup and a sort key per job, then the shrink
 * phase's pricing for every waiting job.
 *
 * After a full round that decided nothing, the next rounds decide nothing
 * as long as (a) nothing but the clock and the running jobs' progress
 * changed: no job in the driver's change feed (rk_sched_input.changed), the
 * same holders in the same states, allocations, plans and models, the same
 * cluster, quotas and environment; (b) no active job turned starving (the
 * earliest such instant is kept); and (c) no waiting job can act. For (c),
 * a waiting job of the last full round is "dead" when more progress of the
 * running jobs cannot make it start, because every quantity the shrink and
 * expand phases compare only moves one way while nothing else changes: a
 * running job's remaining time only falls, so the jobs that may yield
 * (shrinkable: at least a restart left, not starving) only leave, the
 * per-node longest remaining time (the SRTF filter) and the GPUs that can be
 * freed only fall, and an expansion's saved time only falls below the
 * restart it must beat. Free GPUs and every waiting job's own inputs do not
 * change. Hence:
 *  - a guaranteed or starving waiting job takes its minimum whatever the
 *    loss, i.e. exactly when victims can free enough GPUs; that set of
 *    victims only shrinks, so one that could not start stays so;
 *  - a best-effort job under SRTF order that no node's jobs may yield to
 *    (rubick_shrink_may_yield) stays so;
 *  - any other waiting job may start after some progress (the greedy
 *    pricing of victims is not monotone in their losses) and is "live": a
 *    round with a live job is run in full;
 *  - the expand phase and grow_to_request, which found nothing, find
 *    nothing later (the saved time only falls), and a quiet round has no
 *    freshly started job for them.
 * The decisions are those of the full rounds (a round with decisions, or
 * with anything in (a)-(c) changed, is run in full); the test compares
 * whole simulations with option quiet=off (tests/cli/test_cli_rubick_quiet.sh).
 * sharing=on is not covered (its benefit test reads more of the round): every
 * round then runs in full.
 */
#include "policy/rubick/rubick_internal.h"
#include "policy/rubick/rubick_round.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * What of a holder may change between two rounds without the job entering
 * the change feed: its state (a restart that ends), its model and what was
 * observed of it (refits; a sample that is not fitted still moves model_miss). Its allocation and
 * plan change only through the policy's own decisions (then no round is quiet) or with the job in
 * the feed (policy.h); the allocation's array is compared as a check on that promise. Every field
 * of the job the round reads besides these is its request or its progress.
 */
struct quiet_holder {
	const struct rk_job *job;
	const struct rk_model *model;
	const struct rk_share *shares;
	double observed_sps, model_miss;
	int state, model_refits, n_shares;
};

/* What of a node a round reads that may change between rounds (capacity loaning, drains). */
struct quiet_node {
	int up, gpus, cpus;
	int64_t mem_mb;
};

struct rubick_quiet {
	int valid;
	int64_t t_ms;      /* the full round it was recorded at */
	int64_t starve_ms; /* from this instant on some active job may be starving */
	int n_jobs, n_quotas, gpu_sharing;
	const struct rk_cluster *cluster;
	const struct rk_perf_env *env;
	const struct rk_tenant_quota *quotas;
	struct quiet_node *nodes;
	int n_nodes, cap_nodes;
	struct quiet_holder *h;
	int n_h, cap_h;
};

int rubick_quiet_create(struct rubick_quiet **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? RK_OK : RK_ENOMEM;
}

void rubick_quiet_destroy(struct rubick_quiet *q)
{
	if (!q)
		return;
	free(q->h);
	free(q->nodes);
	free(q);
}

static int nodes_same(const struct rubick_quiet *q, const struct rk_cluster *c)
{
	if (c->n_nodes != q->n_nodes)
		return 0;
	for (int i = 0; i < c->n_nodes; i++) {
		const struct rk_node *n = &c->nodes[i];
		const struct quiet_node *k = &q->nodes[i];
		if (n->up != k->up || n->gpus != k->gpus || n->cpus != k->cpus ||
		    n->mem_mb != k->mem_mb)
			return 0;
	}
	return 1;
}

static void holder_of(const struct rk_job *j, struct quiet_holder *q)
{
	*q = (struct quiet_holder){.job = j,
	                           .model = j->model,
	                           .shares = j->alloc.shares,
	                           .observed_sps = j->observed_sps,
	                           .model_miss = j->model_miss,
	                           .state = (int)j->state,
	                           .model_refits = j->model_refits,
	                           .n_shares = j->alloc.n};
}

/* Is holder `j` as recorded in `q`? (This runs every round for every holder.) */
static int holder_same(const struct rk_job *j, const struct quiet_holder *q)
{
	return j == q->job && (int)j->state == q->state && j->alloc.shares == q->shares &&
	       j->alloc.n == q->n_shares && j->model == q->model &&
	       j->model_refits == q->model_refits && j->observed_sps == q->observed_sps &&
	       j->model_miss == q->model_miss;
}

int rubick_quiet_skip(struct rubick_state *st, const struct rk_sched_input *in)
{
	struct rubick_quiet *q = st->quiet;
	if (!q || !q->valid)
		return 0;
	int same = in->incremental && in->n_changed == 0 && in->n_jobs == q->n_jobs &&
	           in->now_ms >= q->t_ms && in->now_ms < q->starve_ms &&
	           in->cluster == q->cluster && in->env == q->env && in->quotas == q->quotas &&
	           in->n_quotas == q->n_quotas && in->gpu_sharing == q->gpu_sharing &&
	           in->n_holders == q->n_h && nodes_same(q, in->cluster);
	for (int i = 0; same && i < q->n_h; i++)
		same = holder_same(in->holders[i], &q->h[i]);
	if (!same)
		q->valid = 0;
	return same;
}

void rubick_quiet_note(struct rubick_state *st, const struct round *R, int decided)
{
	struct rubick_quiet *q = st->quiet;
	if (!q)
		return;
	const struct rk_sched_input *in = R->in;
	q->valid = 0;
	if (decided || !in->incremental || R->sh || st->share || !in->holders)
		return;
	int64_t starve = INT64_MAX;
	/* The first instant (now - submit) / 1000 > RUBICK_STARVE_S may hold, or earlier. */
	const int64_t starve_after_ms = (int64_t)floor(RUBICK_STARVE_S * 1000.0);
	for (int i = 0; i < R->n; i++) {
		const struct rj *r = &R->j[i];
		if (!r->starving && r->job->submit_ms <= INT64_MAX - starve_after_ms &&
		    r->job->submit_ms + starve_after_ms < starve)
			starve = r->job->submit_ms + starve_after_ms;
		if (r->g > 0)
			continue;
		/* Waiting (the round started nothing). Dead or live (file comment)? */
		if (!(r->guaranteed || r->starving) && rubick_shrink_may_yield(R, r))
			return; /* live: the next rounds run in full */
	}
	if (in->n_holders > q->cap_h) {
		struct quiet_holder *h = realloc(q->h, (size_t)in->n_holders * sizeof(*h));
		if (!h)
			return; /* not recorded: the next round runs in full */
		q->h = h;
		q->cap_h = in->n_holders;
	}
	for (int i = 0; i < in->n_holders; i++)
		holder_of(in->holders[i], &q->h[i]);
	q->n_h = in->n_holders;
	q->t_ms = in->now_ms;
	q->starve_ms = starve;
	q->n_jobs = in->n_jobs;
	q->n_quotas = in->n_quotas;
	q->gpu_sharing = in->gpu_sharing;
	q->cluster = in->cluster;
	q->env = in->env;
	q->quotas = in->quotas;
	const struct rk_cluster *c = in->cluster;
	if (c->n_nodes > q->cap_nodes) {
		struct quiet_node *v = realloc(q->nodes, (size_t)c->n_nodes * sizeof(*v));
		if (!v)
			return;
		q->nodes = v;
		q->cap_nodes = c->n_nodes;
	}
	for (int i = 0; i < c->n_nodes; i++)
		q->nodes[i] = (struct quiet_node){c->nodes[i].up, c->nodes[i].gpus,
		                                  c->nodes[i].cpus, c->nodes[i].mem_mb};
	q->n_nodes = c->n_nodes;
	q->valid = 1;
}
