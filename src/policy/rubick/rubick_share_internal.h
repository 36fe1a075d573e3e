/*
 * Internal to Rubick's option sharing=on (src/policy/rubick/rubick_share*.c):
 * the state of one round and the calls between its three files. Calls
 * go one way (tests/meson.build, layout_calls):
 *   rubick_share.c         the round's set-up, starting a pair, naming GPUs;
 *   rubick_share_choose.c  where a newcomer would share, with whom, and
 *                          whether it pays (the benefit test and its rules);
 *   rubick_share_occ.c     who holds which GPU, how fast each runs there.
 * rubick_unshare.c and rubick.c ask the round through rubick_round.h.
 */
#ifndef RUBICK_POLICY_RUBICK_SHARE_INTERNAL_H
#define RUBICK_POLICY_RUBICK_SHARE_INTERNAL_H

#include "policy/rubick/rubick_round.h"
#include "rubick/placement.h"
#include "rubick/sharing.h"

#include <stdint.h>

#define SHARE_PARTNERS 64 /* rk_group_evaluate's limit */

/* What sharing=on keeps across rounds (rubick_internal.h: rubick_state.share_st). */
struct rubick_share_state {
	struct rk_xi_pairs pairs;     /* interference answers by interned job sides */
	struct rk_subbatch_cache sbc; /* each job's accumulation settings, priced once */
};

/* One round's state (R->sh, owned: rubick_share_round_init and _fini). */
struct rubick_share_round {
	/* holders by index into R->j: the snapshot, then the pairs started */
	struct rk_gpu_occ occ;
	double *xnow;  /* per job: factor it runs at now (1 alone), NAN = not yet known */
	double *mem;   /* per job: per-GPU MiB of its plan, NAN = not yet known */
	int *in_occ;   /* per job: started sharing this round (occ holds it as it is now) */
	int *behind;   /* per job position: pending jobs after it in the round's order */
	double *gtime; /* seconds until each GPU has no holder, sorted */
	double *gwait; /* per waiting job: its wait_s, NAN = not yet known */
	double *gscr;  /* scratch of wait_s: one free time per GPU */
	int *gcnt;     /* per waiting job: GPUs free for it by its gwait */
	int n_gtime;   /* GPUs of the cluster */
	int gtime_n, gtime_skip;
	int gtime_key; /* 1 + R->n_assign when gtime was sorted, 0 = never */
	int tries, started;
	int moved;    /* jobs that left a pair this round (rubick_unshare.c) */
	int max_room; /* most GPUs one node could offer a newcomer: an upper bound for the round */
};

/* Holders of GPU g of node (h: their indexes into R->j, at most 2): the
 * snapshot plus the pairs started this round. */
static inline int holders(const struct rubick_share_round *sh, int node, int g, int *h)
{
	return rk_gpu_occ_holders(&sh->occ, node, g, &h[0], &h[1]);
}

/*
 * A running job that may lend a GPU it holds alone: best-effort, unchanged
 * this round, and holding no more than its request. GPUs beyond the request
 * are leftovers Rubick lent it while nobody else could use them (expand,
 * grow_measured: up to the whole cluster on a light load), and sharing any
 * of them slows the job on all its GPUs (a data-parallel job steps at its
 * slowest GPU's rate, the engine's largest-factor rule) and freezes the loan
 * (rj.shared). Measured on Gavel VC 103959 on 4x8 (main e1a9647): one job
 * grown from 4 to all 32 GPUs lent them to five newcomers in turn, ran at
 * the slowed rate for most of its run (JCT 19,302 -> 38,302 s), and
 * sharing=on lost 2.8 % to plain rubick; without such partners it is level.
 */
static inline int may_partner(const struct rj *b)
{
	return !b->guaranteed && b->was_placed && !b->changed && !b->fallback && b->g > 0 &&
	       b->job->state == RK_JOB_RUNNING && b->g <= b->job->req_gpus;
}

/* What sharing on one node would be: the best found so far is kept. */
struct rubick_share_choice {
	int node, free_used, cpus, np;
	int64_t mem;
	uint64_t mask;
	double gain_s; /* the better way of not sharing minus the shared sum, > 0 */
	struct rk_plan plan;
	int partners[SHARE_PARTNERS];
};

/* ---- rubick_share_occ.c ---- */

/* Allocations of R->j into `o` (who = index): named ones first, then the
 * rest on GPUs nobody holds, their masks written back. */
int rubick_share_occ_fill(struct round *R, struct rk_gpu_occ *o, struct rk_error *err);
/* GPUs node n could give a newcomer: free ones plus ones a partner holds alone. */
int rubick_share_room(const struct round *R, int n);
/* R->sh->max_room: the largest rubick_share_room over the nodes. */
void rubick_share_room_update(struct round *R);
/* xi of job x (gx GPUs) next to job y (gy GPUs) on GPUs of type `gt`. */
double rubick_share_xi(const struct round *R, const char *gt, const struct rk_job *x, int gx,
                       const struct rk_job *y, int gy);
/* Did the table measure x and y together on `gt`: 1 ran, -1 could not, 0 not measured. */
int rubick_share_corun(const struct round *R, const char *gt, const struct rk_job *x, int gx,
                       const struct rk_job *y, int gy);
/* The factor job k runs at now (1 alone): the largest xi over its partners. */
double rubick_share_factor(const struct round *R, int k);

/* ---- rubick_share_choose.c ---- */

/* The node and partners best-effort pending `r` would share at g GPUs when
 * the benefit test says it pays: 1 with OUT: *best, else 0. Counts a try
 * against share_window when it gets as far as the tests. */
int rubick_share_choose(struct round *R, const struct rj *r, int g,
                        struct rubick_share_choice *best);

#endif
