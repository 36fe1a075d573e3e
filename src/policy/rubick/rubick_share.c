/*
 * Rubick with option sharing=on: GPU sharing composed with
 * Rubick's reconfiguration, when the driver allows sharing
 * (rk_sched_input.gpu_sharing, `rubick sim --sharing on`).
 *
 * A best-effort pending job that found no exclusive room, neither free GPUs
 * nor GPUs the shrink phase could take (rubick.c steps 2-3), may start at its
 * start size on one node, on that node's free GPUs plus GPUs one running
 * best-effort job holds alone there, when sharing pays. The test is
 * SJF-BSBF's (docs/sharing.md, rk_group_evaluate; docs/references.md §3.3 and the
 * issue-15 generalisation): each partner's real remaining time (its time at
 * its GPUs on its curve x the factor it runs at now), its slowdown next to
 * the job, the job at the slowest pair's rate, the GPU-seconds the group
 * loses charged to the jobs queued behind, against not sharing: waiting
 * until the job's GPUs free up (at most until its partners end). Rubick has
 * one more way not to share: starting alone now on fewer free GPUs (its
 * curve says how fast), so the shared sum must also beat that. Times are the
 * curve's (the fitted model), never the simulator's oracle; the
 * interference factors are the driver's table (rk_sched_input.xi), looked up
 * as sjf-bsbf does. The job's plan is its curve's plan for its GPUs with the
 * least-slow gradient accumulation that fits each partner's GPU memory
 * (rk_subbatch_options, global batch unchanged).
 *
 * Rules: guaranteed jobs never share, on either side (a partner's slowdown
 * would break its baseline); only data-parallel-family plans (tp = pp = 1)
 * share; a partner holds no more GPUs than its request (may_partner); a job
 * that shares, and its partners, are not resized, shrunk or grown while they
 * share (rj.shared), so the pair is never restarted by the policy (as in
 * SJF-BSBF, preemption-free for sharers), except that with nobody waiting a
 * shared job may leave its pair for GPUs of its own (rubick_unshare.c).
 * Bounded cost: at most share_window (default 32) pending jobs per round try.
 *
 * Two rules keep sharing from losing to plain Rubick, because the
 * benefit test prices neither a frozen pair nor Rubick's own ways to make
 * room: a pair is not formed when it would delay one of the first
 * share_window jobs waiting ahead of the newcomer, by the t_free that counts
 * GPUs the shrink phase would take for that job (delays_ahead); and its
 * predicted gain must exceed the model's error on both sums (try_node).
 *
 * This file is what the round calls: set-up, starting a pair the test
 * chose, naming GPUs. The test itself (where, with whom, whether it pays,
 * both rules) is rubick_share_choose.c; who holds which GPU and how fast
 * each job runs there, rubick_share_occ.c (rubick_share_internal.h).
 */
#include "policy/rubick/rubick_internal.h"
#include "policy/rubick/rubick_share_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int rubick_share_state_create(struct rubick_share_state **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return RK_ENOMEM;
	rk_xi_pairs_init(&(*out)->pairs);
	return RK_OK;
}

void rubick_share_state_destroy(struct rubick_share_state *s)
{
	if (!s)
		return;
	rk_xi_pairs_fini(&s->pairs);
	free(s);
}

/* Capacity with each GPU counted once, for its first holder. */
static int capacity_once(struct round *R, struct rk_error *err)
{
	const struct rk_cluster *c = R->in->cluster;
	int rc = rk_capacity_init(&R->cap, c);
	if (rc)
		return rk_error_set(err, rc, "rubick: out of memory");
	for (int k = 0; k < R->n && !rc; k++) {
		struct rj *r = &R->j[k];
		struct rk_alloc first;
		rk_alloc_init(&first);
		for (int s = 0; s < r->now.n && !rc; s++) {
			const struct rk_share *sh = &r->now.shares[s];
			int mine = 0;
			for (int g = 0; g < c->nodes[sh->node].gpus; g++) {
				int h[2];
				int cnt = holders(R->sh, sh->node, g, h);
				if (sh->gpu_mask >> g & 1 && cnt > 0 && h[0] == k)
					mine++;
				if (sh->gpu_mask >> g & 1 && cnt == 2)
					r->shared = 1;
			}
			rc = rk_alloc_add(&first, sh->node, mine, sh->cpus, sh->mem_mb);
		}
		if (!rc)
			rc = rk_capacity_take(&R->cap, &first, err);
		if (rc)
			rk_error_prefix(err, "rubick: job %lld (%s)", (long long)r->job->id,
			                r->job->name);
		rk_alloc_fini(&first);
	}
	return rc;
}

int rubick_share_round_init(struct round *R, struct rk_error *err)
{
	R->sh = NULL;
	if (!R->st->share || !R->in->gpu_sharing || !R->st->share_st)
		return RK_OK;
	const struct rk_cluster *c = R->in->cluster;
	int ng = 0;
	for (int n = 0; n < c->n_nodes; n++)
		ng += c->nodes[n].gpus;
	struct rubick_share_round *sh = calloc(1, sizeof(*sh));
	size_t n = (size_t)R->n + 1;
	if (!sh)
		return rk_error_set(err, RK_ENOMEM, "rubick: out of memory");
	R->sh = sh;
	sh->xnow = malloc(n * sizeof(*sh->xnow));
	sh->mem = malloc(n * sizeof(*sh->mem));
	sh->in_occ = calloc(n, sizeof(*sh->in_occ));
	sh->behind = calloc(n, sizeof(*sh->behind));
	sh->gtime = malloc((2 * (size_t)ng + 1) * sizeof(*sh->gtime));
	sh->gwait = malloc(n * sizeof(*sh->gwait));
	sh->gscr = malloc(((size_t)ng + 1) * sizeof(*sh->gscr));
	if (!sh->xnow || !sh->mem || !sh->in_occ || !sh->behind || !sh->gtime || !sh->gwait ||
	    !sh->gscr || !(sh->gcnt = malloc(n * sizeof(*sh->gcnt))) ||
	    rk_gpu_occ_init(&sh->occ, c))
		return rk_error_set(err, RK_ENOMEM, "rubick: out of memory");
	int rc = rubick_share_occ_fill(R, &sh->occ, err);
	if (!rc)
		rc = capacity_once(R, err);
	if (rc)
		return rc;
	for (int k = R->n - 1, behind = 0; k >= 0; k--) {
		sh->xnow[k] = sh->mem[k] = sh->gwait[k] = NAN;
		sh->behind[k] = behind;
		behind += !R->j[k].was_placed;
	}
	rubick_share_room_update(R);
	return RK_OK;
}

void rubick_share_round_fini(struct round *R)
{
	struct rubick_share_round *sh = R->sh;
	if (!sh)
		return;
	if (sh->occ.first)
		rk_gpu_occ_fini(&sh->occ);
	free(sh->xnow);
	free(sh->mem);
	free(sh->in_occ);
	free(sh->behind);
	free(sh->gtime);
	free(sh->gwait);
	free(sh->gscr);
	free(sh->gcnt);
	free(sh);
	R->sh = NULL;
}

/* Start `r` as `c` says: the capacity takes its free GPUs, the occupancy all. */
static int commit(struct round *R, struct rj *r, int g, const struct rubick_share_choice *c)
{
	struct rk_alloc a;
	rk_alloc_init(&a);
	if (rk_alloc_add(&a, c->node, g, c->cpus, c->mem))
		return RK_ENOMEM;
	a.shares[0].gpu_mask = c->mask;
	int k = (int)(r - R->j);
	if (rk_gpu_occ_add(&R->sh->occ, &a, k, 0, NULL)) {
		rk_alloc_fini(&a);
		return RK_EINTERNAL; /* the occupancy said these GPUs had room */
	}
	R->cap.free_gpus[c->node] -= c->free_used;
	R->cap.free_gpus_total -= c->free_used;
	R->cap.free_cpus[c->node] -= c->cpus;
	R->cap.free_mem_mb[c->node] -= c->mem;
	rubick_assign(R, r, &a, g);
	r->plan = c->plan;
	r->fresh = r->shared = 1;
	R->sh->in_occ[k] = 1;
	R->sh->xnow[k] = R->sh->mem[k] = NAN;
	for (int i = 0; i < c->np; i++) {
		R->j[c->partners[i]].shared = 1;
		R->sh->xnow[c->partners[i]] = NAN; /* slowed by r from now */
	}
	R->sh->started++;
	rubick_share_room_update(R);
	return RK_OK;
}

int rubick_share_start(struct round *R, struct rj *r, int g, int *rc)
{
	struct rubick_share_choice best;
	if (!rubick_share_choose(R, r, g, &best))
		return 0;
	*rc = commit(R, r, g, &best);
	return *rc == RK_OK;
}

int rubick_share_name_gpus(struct round *R)
{
	if (!R->sh || (R->sh->started == 0 && R->sh->moved == 0))
		return RK_OK;
	/* A fresh occupancy of what the round leaves: the pairs' named GPUs and
	 * everything unchanged first, then the allocations this round made
	 * without names take GPUs nobody holds (a job that left its pair takes
	 * none of its partner's). A failure leaves names unset:
	 * the driver's check then decides (the capacity counts agree). */
	struct rk_gpu_occ o;
	if (rk_gpu_occ_init(&o, R->in->cluster))
		return RK_ENOMEM;
	rubick_share_occ_fill(R, &o, NULL);
	rk_gpu_occ_fini(&o);
	return RK_OK;
}
