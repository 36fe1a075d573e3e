/*
 * Rubick's allocation steps inside a round (rubick.c): placing a job on the
 * fewest nodes its curve assumes, handing an allocation to a job (re-planned
 * for its GPU count) and resizing a single-node job in place, keeping the
 * round's per-node index of who holds GPUs up to date.
 */
#include "policy/rubick/rubick_internal.h"
#include "policy/rubick/rubick_round.h"
#include "rubick/placement.h"
#include "rubick/policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t mem_per_gpu(const struct rj *r)
{
	int q = r->job->req_gpus > 0 ? r->job->req_gpus : 1;
	return r->job->req_mem_mb > 0 ? (r->job->req_mem_mb + q - 1) / q : RK_SHARE_PROPORTIONAL;
}

/*
 * Gang-place g GPUs (a useful size) of `r` on `cap` with the plan for g, on
 * the fewest nodes that can hold g (the placement the curve was built for:
 * full nodes, then the rest on one). A job scattered over more nodes than
 * that syncs over the network, which the curve does not price: measured
 * GPT-2 data parallelism on 4 nodes x 1 GPU is 5.8x slower per iteration than
 * on one node x 8. 0 on success.
 */
int rubick_try_place(const struct round *R, const struct rj *r, int g,
		     const struct rk_capacity *cap, struct rk_alloc *a)
{
	struct rk_plan p = plan_for(r, g);
	struct rk_place_req req = {.gpus = g, .cpus_per_gpu = cpus_for(r, g),
				   .mem_mb_per_gpu = mem_per_gpu(r), .gpus_multiple = p.tp};
	/* placement=contention: SJF-BCO's node choice (rubick_place.c) */
	if (R->st->place_contention ? rubick_place_contention(R, cap, &req, a)
				    : rk_place_gang(cap, &req, a))
		return -1;
	if (a->n > (g + R->node_gpus - 1) / R->node_gpus) {
		rk_alloc_fini(a);
		return -1;
	}
	struct rk_placement pl;
	if (rk_alloc_to_placement(a, &pl) || rk_plan_check_placement(&p, &pl, NULL)) {
		rk_alloc_fini(a);
		return -1;
	}
	return 0;
}

void rubick_index_update(struct round *R, const struct rj *r, int add)
{
	int me = (int)(r - R->j);
	for (int s = 0; s < r->now.n; s++) {
		int k = r->now.shares[s].node, *list = R->on + (size_t)k * R->slots;
		if (r->now.shares[s].gpus < 1)
			continue;
		if (R->price)
			R->price[k].valid = 0; /* who holds what on node k changes */
		if (add) {
			if (R->n_on[k] < R->slots)
				list[R->n_on[k]++] = me;
			continue;
		}
		for (int i = 0; i < R->n_on[k]; i++)
			if (list[i] == me) {
				list[i] = list[--R->n_on[k]];
				break;
			}
	}
}

/* `r` now holds `a` (ownership moves) with g GPUs, re-planned for them. */
void rubick_assign(struct round *R, struct rj *r, struct rk_alloc *a, int g)
{
	rubick_index_update(R, r, 0);
	if (r->own_now)
		rk_alloc_fini(&r->now);
	r->own_now = 1;
	r->now = *a;
	rk_alloc_init(a);
	r->g = g;
	r->plan = plan_for(r, g);
	/* A guaranteed job at its request's GPU count where the curve's plan is
	 * not trusted to keep its baseline (sla_ok) runs its requested plan: the
	 * one configuration known to keep it. */
	if (r->guaranteed && g == r->job->req_gpus && !sla_ok(r, g))
		r->plan = r->job->req_plan;
	r->node = r->now.n == 1 ? r->now.shares[0].node : -1;
	r->changed = 1;
	R->n_assign++;
	rubick_index_update(R, r, 1);
}

/*
 * Resize single-node job `r` in place to g GPUs (0 = preempt), re-planned.
 * Threads per GPU follow the curve when the node has them, else the old ratio.
 */
int rubick_resize(struct round *R, struct rj *r, int g)
{
	int node = r->node, old_g = r->g;
	int old_cpus = rk_alloc_total_cpus(&r->now);
	int rc = rk_capacity_give(&R->cap, &r->now, NULL);
	if (rc)
		return rc;
	struct rk_alloc a;
	rk_alloc_init(&a);
	if (g == 0) {
		rubick_assign(R, r, &a, 0);
		return RK_OK;
	}
	const struct rk_node *nd = &R->in->cluster->nodes[node];
	int cpg = cpus_for(r, g);
	if (cpg < 0)
		cpg = nd->cpus / nd->gpus;
	int64_t mpg = mem_per_gpu(r);
	if (mpg < 0)
		mpg = nd->mem_mb / nd->gpus;
	rc = rk_alloc_add(&a, node, g, g * cpg, g * mpg);
	if (!rc && !rk_capacity_fits(&R->cap, &a)) {
		a.shares[0].cpus = old_g > 0 ? g * (old_cpus / old_g) : 0;
		if (!rk_capacity_fits(&R->cap, &a))
			rc = RK_EINFEASIBLE;
	}
	if (!rc)
		rc = rk_capacity_take(&R->cap, &a, NULL);
	if (rc) {
		rk_alloc_fini(&a);
		return rk_capacity_take(&R->cap, &r->now, NULL) ? RK_EINTERNAL : rc;
	}
	rubick_assign(R, r, &a, g);
	return RK_OK;
}

/* Place running job r at g GPUs on the round's capacity (its own GPUs
 * already given back by the caller) and take them: 1 when placed, 0 when g
 * does not fit (nothing taken). The growth and leave steps share it. */
int rubick_place_at(struct round *R, struct rj *r, int g)
{
	struct rk_alloc a;
	rk_alloc_init(&a);
	if (rubick_try_place(R, r, g, &R->cap, &a) == 0 &&
	    rk_capacity_take(&R->cap, &a, NULL) == 0) {
		rubick_assign(R, r, &a, g);
		return 1;
	}
	rk_alloc_fini(&a);
	return 0;
}
