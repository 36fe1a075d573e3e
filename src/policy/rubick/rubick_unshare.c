/*
 * Rubick with option sharing=on: a shared job leaves its pair
 * when exclusive room appears and nobody waits (rubick_share_leave).
 *
 * Why: a pair is frozen while it shares (rj.shared: neither job is shrunk,
 * grown or re-planned, rubick_share.c), so the benefit test's premise holds
 * and the policy never restarts a pair to make room. But once the cluster
 * empties, plain Rubick grows its jobs (grow_to_request, grow_measured,
 * expand) while the pair kept crawling on its shared GPUs at the slowed
 * rate to its end. Measured (rubick sharing=on, --oracle model, against the
 * same policy without this rule): Muri trace4 on 8x8:v100 758,932 ->
 * 731,247 s average JCT, Gavel VC 6214e9 655,081 -> 640,778 s, Gavel VC
 * 0e4a51 202,080 -> 207,915 s (still 26 % ahead of plain rubick), the
 * other 13 cases of eval-sharing.sh and eval-contention.sh's "Both physics"
 * within 0.5 %. (The light-load losses to plain rubick it was written for
 * came from partners grown beyond their request: rubick_share_internal.h
 * may_partner.) The rule: with nobody waiting, a shared best-effort job
 * that has run since the last round moves to GPUs of its own (its GPUs that nobody
 * else holds plus free ones, re-placed on the fewest nodes, at its size or
 * larger as grow_measured and grow_to_request allow), and each partner it
 * leaves runs alone at full speed from then on. Priced as grow_measured
 * prices a move: the time saved, the mover's and its partners', must exceed
 * two restart delays (the move's own and the one paid if a later arrival
 * shrinks it back).
 *
 * Capacity: rubick_share_round_init counts a GPU two jobs hold once, under
 * its first holder. The mover gives back only the GPUs it holds alone (and
 * all of its CPUs and memory, which were taken in full); a GPU it shares
 * stays counted, for the partner that keeps it.
 */
#include "policy/rubick/rubick_internal.h"
#include "policy/rubick/rubick_round.h"
#include "rubick/placement.h"

#include <math.h>
#include <stdint.h>

#define LEAVE_PARTNERS 64

/*
 * What k gives back when it leaves: per share, the GPUs of its mask that
 * nobody else holds, and all its CPUs and memory. Partners (the other
 * holders of its shared GPUs, distinct) into p, their count returned: 0
 * when k is alone (its partners left this round) or its pair was formed
 * this round, -1 out of memory.
 */
static int leave_alloc(const struct round *R, int k, struct rk_alloc *out, int *p)
{
	const struct rk_alloc *now = &R->j[k].now;
	const struct rk_cluster *c = R->in->cluster;
	int np = 0;
	for (int s = 0; s < now->n; s++) {
		const struct rk_share *sh = &now->shares[s];
		int alone = 0;
		for (int q = 0; q < c->nodes[sh->node].gpus && q < 64; q++) {
			int h[2];
			if (!(sh->gpu_mask >> q & 1))
				continue;
			int cnt = rubick_share_holders(R, sh->node, q, h);
			if (cnt <= 1) {
				alone++;
				continue;
			}
			int o = h[0] == k ? h[1] : h[0], seen = 0;
			const struct rj *ro = &R->j[o];
			if (ro->changed && ro->shared)
				return 0; /* a pair formed this round: its test just said it pays */
			if (ro->changed) { /* the partner left this round: the GPU is k's alone */
				alone++;
				continue;
			}
			for (int i = 0; i < np; i++)
				seen |= p[i] == o;
			if (!seen && np < LEAVE_PARTNERS)
				p[np++] = o;
		}
		if (rk_alloc_add(out, sh->node, alone, sh->cpus, sh->mem_mb))
			return -1;
	}
	return np;
}

/*
 * Seconds partner o saves when k leaves: its run at the rate it runs at now
 * minus its run alone. 0 when o also shares GPUs with another job (it stays
 * slowed by that one: not priced, the rule errs towards staying).
 */
static double partner_save_s(const struct round *R, int o, int k)
{
	const struct rk_alloc *a = &R->j[o].now;
	for (int s = 0; s < a->n; s++)
		for (int q = 0; q < R->in->cluster->nodes[a->shares[s].node].gpus && q < 64; q++) {
			int h[2];
			if (a->shares[s].gpu_mask >> q & 1 &&
			    rubick_share_holders(R, a->shares[s].node, q, h) == 2 && h[0] != k &&
			    h[1] != k)
				return 0;
		}
	double save = rubick_share_left_s(R, o) - remaining_s(&R->j[o], R->j[o].g);
	return isfinite(save) && save > 0 ? save : 0;
}

/* May r leave its pair: shared, best-effort, running unchanged since the last round. */
static int may_leave(const struct rj *r)
{
	return r->shared && !r->guaranteed && r->was_placed && !r->changed && !r->fresh &&
	       !r->fallback && r->g > 0 && r->view && r->job->state == RK_JOB_RUNNING;
}

/* Try moving job k alone; 1 when it moved, 0 when not, < 0 on error. */
static int leave_one(struct round *R, int k)
{
	struct rj *r = &R->j[k];
	int partners[LEAVE_PARTNERS];
	struct rk_alloc give;
	rk_alloc_init(&give);
	int np = leave_alloc(R, k, &give, partners);
	if (np <= 0) { /* alone already (the partner left this round), or out of memory */
		rk_alloc_fini(&give);
		return np < 0 ? RK_ENOMEM : 0;
	}
	double others = 0;
	for (int i = 0; i < np; i++)
		others += partner_save_s(R, partners[i], k);
	int rc = rk_capacity_give(&R->cap, &give, NULL);
	if (rc) {
		rk_alloc_fini(&give);
		return rc;
	}
	/* Sizes: its own, or more up to what grow_measured (trace-measured
	 * speeds) or grow_to_request (model-priced jobs, to the request) allow. */
	int hi = r->g;
	if (r->job->native_sps)
		hi = r->view->max_gpus;
	else if (use_gpus(r, r->job->req_gpus) > hi)
		hi = use_gpus(r, r->job->req_gpus);
	if (hi > R->cap.free_gpus_total)
		hi = R->cap.free_gpus_total;
	double now_s = rubick_share_left_s(R, k), need = 2.0 * R->st->restart_s;
	int moved = 0;
	for (;;) { /* largest saving first; the first size that places wins */
		int best = 0;
		double best_save = need;
		for (int g = r->g; g <= hi; g++) {
			double save = now_s - remaining_s(r, g) + others;
			if (use_gpus(r, g) == g && save > best_save) {
				best_save = save;
				best = g;
			}
		}
		if (!best)
			break;
		if (rubick_place_at(R, r, best)) {
			r->shared = 0; /* alone now */
			moved = 1;
			break;
		}
		hi = best - 1;
	}
	if (!moved && rk_capacity_take(&R->cap, &give, NULL))
		rc = RK_EINTERNAL; /* its own GPUs were just given back */
	rk_alloc_fini(&give);
	return rc ? rc : moved;
}

int rubick_share_leave(struct round *R)
{
	if (!R->sh)
		return RK_OK;
	int left = 0;
	for (int k = 0; k < R->n && R->cap.free_gpus_total > 0; k++) {
		if (!may_leave(&R->j[k]))
			continue;
		int rc = leave_one(R, k);
		if (rc < 0)
			return rc;
		left += rc;
	}
	if (left)
		rubick_share_note_moved(R);
	return RK_OK;
}
