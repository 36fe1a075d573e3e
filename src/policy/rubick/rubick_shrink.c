/*
 * Rubick's shrink phase (rubick.c step 3, docs/references.md §1.8.1 lines 7-16):
 * for a pending job that free GPUs cannot start, the victims, sizes and nodes
 * that free room for it at the least loss of normalised throughput, and
 * applying that choice.
 */
#include "policy/rubick/rubick_internal.h"
#include "policy/rubick/rubick_round.h"
#include "rubick/placement.h"
#include "rubick/policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Is `v` running, or inside its restart delay on one node below
 * RUBICK_RESTART_LIMIT restarts? A job paying its restart delay makes no
 * progress, so shrinking it costs it only the part of the delay already paid
 * (its restart starts over), less than shrinking a running job; yet the
 * paper's rule (and this one at first) skipped such jobs, and on the
 * base trace short jobs waited 150-300 s while every job holding GPUs was
 * restarting. A multi-node job is left alone while restarting (it gives up a
 * node or is preempted whole, victim_step), as is one past the count:
 * measured, allowing those let one LLaMA-30B job be preempted 38 times while
 * restarting on base --load 0.7 (average JCT 599 -> 720 s).
 */
static int may_lose_now(const struct rj *v)
{
	return v->job->state == RK_JOB_RUNNING ||
	       (v->job->state == RK_JOB_RESTARTING && v->node >= 0 &&
	        v->job->restarts < RUBICK_RESTART_LIMIT);
}

/* May `v` lose GPUs this round (file comment, step 3)? */
static int shrinkable(const struct round *R, const struct rj *v)
{
	return v->was_placed && !v->fresh && v->g > 0 && may_lose_now(v) &&
	       !restart_protected(R, v, v->job->restarts, v->g) && !v->starving &&
	       remaining_s(v, v->g) >= R->st->restart_s && !v->shared;
}

/* May `v` lose GPUs to `self`? A guaranteed newcomer takes GPUs from
 * best-effort jobs whatever their restarts (AntMan preempts opportunistic
 * jobs for guaranteed ones, docs/references.md §5.3): the restart limit protects a
 * best-effort job from other best-effort jobs, not from a guarantee. */
static int shrinkable_for(const struct round *R, const struct rj *self, const struct rj *v)
{
	if (self->guaranteed && !v->guaranteed && v->was_placed && !v->fresh && v->g > 0 &&
	    v->job->state == RK_JOB_RUNNING && !v->starving && !v->shared &&
	    remaining_s(v, v->g) >= self->yield_s + R->st->restart_s)
		return 1;
	return shrinkable(R, v);
}

/* May the shrink phase take GPUs from `v` for `self` (shrinkable_for and, for
 * a best-effort newcomer under SRTF order, the victim filter of free_on_node:
 * more than the newcomer's run plus a restart left)? One predicate, so that
 * rubick_share_choose.c's wait estimate follows the shrink phase's rules. */
int rubick_shrink_victim_for(const struct round *R, const struct rj *self, const struct rj *v)
{
	if (v == self || !shrinkable_for(R, self, v))
		return 0;
	return self->guaranteed || self->starving || !R->st->order_srtf ||
	       remaining_s(v, v->g) >= self->yield_s + R->st->restart_s;
}

static int gpus_on(const struct rk_alloc *a, int node)
{
	for (int s = 0; s < a->n; s++)
		if (a->shares[s].node == node)
			return a->shares[s].gpus;
	return 0;
}

/*
 * The allocation of multi-node job `v` without its share on `node`, when the
 * GPUs left are a useful size on the curve and its plan for them lays out on
 * what is left. OUT: *a (caller frees), *ng = GPUs left. 0 on success.
 */
static int without_node(const struct rj *v, int node, struct rk_alloc *a, int *ng)
{
	rk_alloc_init(a);
	*ng = v->g - gpus_on(&v->now, node);
	if (*ng < 1 || use_gpus(v, *ng) != *ng)
		return -1;
	for (int s = 0; s < v->now.n; s++) {
		const struct rk_share *sh = &v->now.shares[s];
		if (sh->node != node && rk_alloc_add(a, sh->node, sh->gpus, sh->cpus, sh->mem_mb)) {
			rk_alloc_fini(a);
			return -1;
		}
	}
	struct rk_plan p = plan_for(v, *ng);
	struct rk_placement pl;
	if (rk_alloc_to_placement(a, &pl) || rk_plan_check_placement(&p, &pl, NULL)) {
		rk_alloc_fini(a);
		return -1;
	}
	return 0;
}

/*
 * The next step victim `v`, holding g GPUs, can take on `node` for `self`:
 * OUT *ng = GPUs it keeps (0 = preempted), *freed = GPUs freed there.
 * Returns -1 when it cannot give any.
 *  - A single-node job steps down to its next useful size.
 *  - A multi-node job gives up this node once, keeping its others when they
 *    make a useful size its plan lays out on.
 *  - Neither is left below RUBICK_MIN_START_FRACTION of its throughput at the
 *    request, the floor a pending job is started at: below it the job would
 *    crawl, its remaining time would explode and, once at the restart limit,
 *    it would stay that small. It is preempted instead: a best-effort job on
 *    one node, or a multi-node one for a guaranteed or starving newcomer or,
 *    under SRTF order, for a shorter one (its other nodes' GPUs go back to
 *    the queue).
 *  - A guaranteed job keeps its baseline (times its margin, sla_ok).
 */
static int victim_step(const struct round *R, const struct rj *self, const struct rj *v, int node,
		       int g, int *ng, int *freed)
{
	*freed = 0;
	if (v->node == node) {
		*ng = step_down(v, g);
	} else {
		if (g != v->g)
			return -1; /* already off this node in this evaluation */
		struct rk_alloc rest;
		*freed = gpus_on(&v->now, node);
		if (without_node(v, node, &rest, ng) == 0)
			rk_alloc_fini(&rest);
		else
			*ng = 0;
	}
	if (*ng > 0 && norm(v, *ng) < RUBICK_MIN_START_FRACTION)
		*ng = 0;
	if (v->node == node)
		*freed = g - *ng;
	/* A guaranteed job grown beyond its request (rubick.c guarantee_may_grow)
	 * also steps back to its request, the configuration it was observed to
	 * keep its baseline at (rubick_assign gives it its requested plan there). */
	if (v->guaranteed)
		return *ng > 0 && (sla_ok(v, *ng) || (*ng == v->job->req_gpus && g > *ng)) ? 0 : -1;
	if (*ng == 0 && v->node != node &&
	    !R->st->order_srtf && !(self->guaranteed || self->starving))
		return -1;
	return 0;
}

#define RUBICK_NODE_VICTIMS 64

void rubick_node_max_rem(struct round *R, int node)
{
	double m = 0;
	int g = R->cap.free_gpus[node];
	const int *list = R->on + (size_t)node * R->slots;
	for (int li = 0; li < R->n_on[node]; li++) {
		const struct rj *v = &R->j[list[li]];
		if (shrinkable(R, v)) {
			double rem = remaining_s(v, v->g);
			if (rem > m)
				m = rem;
			g += gpus_on(&v->now, node);
		}
	}
	R->max_rem_s[node] = m;
	R->max_free[node] = g;
}

/* May some job on `node` yield to `self` at all (SRTF filter)? */
static int node_may_yield(const struct round *R, const struct rj *self, int node)
{
	return self->guaranteed || self->starving || !R->st->order_srtf ||
	       R->max_rem_s[node] >= self->yield_s + R->st->restart_s;
}

int rubick_shrink_may_yield(const struct round *R, const struct rj *r)
{
	if (r->guaranteed || r->starving || !R->st->order_srtf)
		return 1;
	for (int n = 0; n < R->in->cluster->n_nodes; n++)
		if (node_may_yield(R, r, n))
			return 1;
	return 0;
}

/*
 * Normalised throughput lost to free `x` GPUs on `node` for `self`: victims
 * give up one useful step at a time, the lowest loss per freed GPU first
 * (§1.8.1 lines 10-14). INFINITY when it cannot be done, or (pricing only)
 * when the loss reaches `limit`. With `apply`, the
 * victims are resized or preempted for real.
 */
static double free_on_node(struct round *R, const struct rj *self, int node, int x, int apply,
			   int *rc, double limit)
{
	int have = R->cap.free_gpus[node];
	if (have >= x)
		return 0;
	/* A best-effort newcomer under SRTF order: the price depends on it only
	 * through the victims its threshold lets in (struct node_price). */
	int cacheable = !apply && R->st->order_srtf && !(self->guaranteed || self->starving);
	double thr = self->yield_s + R->st->restart_s;
	struct node_price *pr = &R->price[node];
	if (cacheable && pr->valid && pr->x == x && thr > pr->max_out && thr <= pr->min_in &&
	    (pr->exact || limit <= pr->limit))
		return pr->cost;
	double min_in = INFINITY, max_out = -INFINITY;
	int vi[RUBICK_NODE_VICTIMS], vg[RUBICK_NODE_VICTIMS], nv = 0;
	const int *list = R->on + (size_t)node * R->slots;
	for (int li = 0; li < R->n_on[node] && nv < RUBICK_NODE_VICTIMS; li++) {
		int i = list[li];
		const struct rj *v = &R->j[i];
		if (v == self || !shrinkable_for(R, self, v) || !gpus_on(&v->now, node))
			continue;
		/* Longer jobs yield to shorter ones, never the reverse (the exchange
		 * argument behind SRTF): a victim must have more than the newcomer's
		 * remaining time plus a restart left. Guaranteed and starving
		 * newcomers take what they need. */
		if (!(self->guaranteed || self->starving) && R->st->order_srtf) {
			double rem = remaining_s(v, v->g);
			if (rem < thr) {
				max_out = rem > max_out ? rem : max_out;
				continue;
			}
			min_in = rem < min_in ? rem : min_in;
		}
		vi[nv] = i;
		vg[nv++] = v->g;
	}
	if (cacheable)
		*pr = (struct node_price){.valid = 1, .x = x, .exact = 0, .cost = INFINITY,
					  .limit = limit, .min_in = min_in, .max_out = max_out};
	double cost = 0;
	while (have < x) {
		int best = -1, best_ng = 0, best_freed = 0;
		double best_loss = 0, best_per = INFINITY;
		for (int k = 0; k < nv; k++) {
			const struct rj *v = &R->j[vi[k]];
			int g = vg[k], ng, freed;
			if (g == 0)
				continue;
			if (victim_step(R, self, v, node, g, &ng, &freed))
				continue;
			/* Rate lost, plus the restart amortised over the victim's remaining
			 * run: restart_s of its new rate out of remaining_s(ng) (§1.6
			 * cal_slope charges restarts the same way). */
			double rem = remaining_s(v, ng);
			double loss = norm(v, g) - norm(v, ng) +
				      (ng > 0 && rem > 0 ? norm(v, ng) * R->st->restart_s / rem : 0);
			if (freed > 0 && loss / freed < best_per) {
				best = k;
				best_per = loss / freed;
				best_loss = loss;
				best_ng = ng;
				best_freed = freed;
			}
		}
		if (best < 0) {
			if (cacheable)
				pr->exact = 1; /* no victims free enough, whatever the limit */
			return INFINITY;
		}
		vg[best] = best_ng;
		have += best_freed;
		cost += best_loss;
		if (!apply && cost >= limit)
			return INFINITY; /* cannot beat what the caller can still accept (price
					  * kept as stopped at `limit`) */
	}
	if (cacheable) {
		pr->exact = 1;
		pr->cost = cost;
	}
	for (int k = 0; apply && k < nv && !*rc; k++) {
		struct rj *v = &R->j[vi[k]];
		if (vg[k] == v->g)
			continue;
		if (v->node != node) {
			/* Multi-node: off this node (vg[k] > 0) or preempted whole. */
			struct rk_alloc rest;
			int ng = 0;
			if (vg[k] > 0 && without_node(v, node, &rest, &ng))
				*rc = RK_EINTERNAL;
			if (vg[k] == 0)
				rk_alloc_init(&rest);
			if (!*rc)
				*rc = rk_capacity_give(&R->cap, &v->now, NULL);
			if (!*rc && vg[k] > 0)
				*rc = rk_capacity_take(&R->cap, &rest, NULL);
			if (!*rc)
				rubick_assign(R, v, &rest, ng);
			else
				rk_alloc_fini(&rest);
		} else {
			*rc = rubick_resize(R, v, vg[k]);
		}
	}
	return cost;
}

static void cost_cache_clear(struct round *R)
{
	for (int n = 0; n < R->in->cluster->n_nodes; n++)
		R->cost_of[n] = -1;
	R->cost_w = -1;
}

/*
 * Nodes to host t GPUs for `self` (full nodes, then the remainder on one
 * more) at the least loss. OUT: want[n] = GPUs to take on node n (0 = not
 * used). Returns the loss, INFINITY when no set of nodes can do it or the
 * loss would reach `limit` (pricing stops there).
 */
static double choose_nodes(struct round *R, const struct rj *self, int t, int *want, double limit)
{
	int ng = R->node_gpus, full = t / ng, rest = t % ng, rc = 0;
	int n_nodes = R->in->cluster->n_nodes;
	memset(want, 0, (size_t)n_nodes * sizeof(*want));
	double cost = 0;
	/* Each node's cost is evaluated once per amount (a full node, the rest);
	 * the cache holds one pass of one call and is cleared on every way out. */
	for (int pass = 0; pass < 2; pass++) {
		int w = pass == 0 ? ng : rest, picks = pass == 0 ? full : rest > 0;
		for (int f = 0; f < picks; f++) {
			int best = -1;
			double best_c = INFINITY;
			for (int n = 0; n < n_nodes; n++) {
				const struct rk_node *nd = &R->in->cluster->nodes[n];
				if (want[n] || !nd->up || nd->gpus < w ||
				    (R->max_free[n] < w && !self->guaranteed))
					continue;
				if (R->cap.free_gpus[n] < w && !node_may_yield(R, self, n))
					continue;
				/* A node priced at INFINITY under a larger limit stays
				 * over every later, smaller one: the cache stays right. */
				double c = R->cost_w == w && R->cost_of[n] >= 0
						   ? R->cost_of[n]
						   : free_on_node(R, self, n, w, 0, &rc, limit - cost);
				if (f == 0) {
					R->cost_of[n] = c;
					R->cost_w = -1; /* filled below once the pass is complete */
				}
				if (c < best_c) {
					best_c = c;
					best = n;
				}
			}
			if (f == 0)
				R->cost_w = w;
			if (best < 0 || cost + best_c >= limit) {
				cost_cache_clear(R);
				return INFINITY;
			}
			want[best] = w;
			cost += best_c;
		}
		cost_cache_clear(R);
	}
	return cost;
}

/*
 * What victims must have left (plus a restart) to yield to `r` started on t
 * GPUs: its remaining time there, not at its request, where the driver
 * measured its speed at every size (rk_job.native_sps). The exchange
 * argument behind SRTF compares the run times the two jobs will have, and
 * victims are priced at the size they hold; a newcomer priced at its request
 * but started below it (start_floor) looked shorter than it would run, so
 * two jobs asking for 2 GPUs and running on 1 preempted each other in turns,
 * each paying a restart (Shockwave's 120-job trace: 56 of 97
 * preemptions hit a job inside its restart delay). With the stand-ins'
 * extrapolated scaling the same rule was measured worse (Muri testbed
 * 206,205 -> 213,530 s): there the request's time, which the driver's run
 * time calibrates (time_scale), is the figure to trust.
 */
static double yield_at(const struct rj *r, int t)
{
	if (!r->view || !r->job->native_sps)
		return r->key_s;
	double at = remaining_s(r, t);
	return at > r->key_s ? at : r->key_s;
}

/*
 * Shrink phase for pending job `r` that free resources could not start:
 * the size (between its minimum and its max config, doubling) and nodes with
 * the best gain minus loss; guaranteed and starving jobs take their minimum
 * at the least loss, whatever it is. Returns 1 when `r` was started.
 */
int rubick_shrink_for(struct round *R, struct rj *r, int gmin, int gmax, int *want, int *rc)
{
	int must = r->guaranteed || r->starving;
	if (!rubick_shrink_may_yield(R, r))
		return 0; /* every running job is shorter: nobody yields */
	int best_t = 0;
	double best_net = 0;
	for (int t = gmin; t >= 1 && t <= gmax; t = (t < gmax && 2 * t > gmax) ? gmax : 2 * t) {
		if (use_gpus(r, t) == t) {
			r->yield_s = yield_at(r, t);
			/* Sizes whose loss reaches their gain minus the best net so far
			 * cannot win: their pricing stops there (same choice, less work). */
			double c = choose_nodes(R, r, t, want, must ? INFINITY : norm(r, t) - best_net);
			double net = must ? INFINITY : norm(r, t) - c;
			if (isfinite(c) && net > best_net) {
				best_net = net;
				best_t = t;
			}
		}
		if (must || t == gmax)
			break;
	}
	if (!best_t) {
		r->yield_s = r->key_s;
		return 0;
	}
	r->yield_s = yield_at(r, best_t);
	choose_nodes(R, r, best_t, want, INFINITY);
	int n_nodes = R->in->cluster->n_nodes;
	for (int n = 0; n < n_nodes && !*rc; n++)
		if (want[n])
			free_on_node(R, r, n, want[n], 1, rc, INFINITY);
	for (int n = 0; n < n_nodes; n++)
		rubick_node_max_rem(R, n); /* victims changed here and, if preempted whole, elsewhere */
	if (*rc)
		return 0;
	/* Place on the chosen nodes only. */
	struct rk_capacity only;
	*rc = rk_capacity_copy(&only, &R->cap);
	if (*rc)
		return 0;
	for (int n = 0; n < n_nodes; n++)
		if (!want[n]) {
			only.free_gpus_total -= only.free_gpus[n];
			only.free_gpus[n] = 0;
		}
	struct rk_alloc a;
	rk_alloc_init(&a);
	int ok = rubick_try_place(R, r, best_t, &only, &a) == 0;
	rk_capacity_fini(&only);
	if (ok && !(*rc = rk_capacity_take(&R->cap, &a, NULL))) {
		rubick_assign(R, r, &a, best_t);
		r->fresh = 1;
		return 1;
	}
	rk_alloc_fini(&a);
	return 0;
}
