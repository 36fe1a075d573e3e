/*
 * Rubick with option sharing=on (issue 15): GPU sharing composed with
 * Rubick's reconfiguration, when the driver allows sharing
 * (rk_sched_input.gpu_sharing, `rubick sim --sharing on`).
 *
 * A best-effort pending job that found no exclusive room, neither free GPUs
 * nor GPUs the shrink phase could take (rubick.c steps 2-3), may start at its
 * start size on one node, on that node's free GPUs plus GPUs one running
 * best-effort job holds alone there, when sharing pays. The test is
 * SJF-BSBF's (docs/sharing.md, rk_group_evaluate; algorithms.md §3.3 and the
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
 * Bounded cost: at most
 * share_window (default 32) pending jobs per round try.
 *
 * Two rules keep sharing from losing to plain Rubick (issue 15), because the
 * benefit test prices neither a frozen pair nor Rubick's own ways to make
 * room: a pair is not formed when it would delay one of the first
 * share_window jobs waiting ahead of the newcomer, by the t_free that counts
 * GPUs the shrink phase would take for that job (delays_ahead); and its
 * predicted gain must exceed the model's error on both sums (try_node).
 */
#include "policy/rubick_internal.h"
#include "policy/rubick_round.h"
#include "rubick/placement.h"
#include "rubick/sharing.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SHARE_PARTNERS 64 /* rk_group_evaluate's limit */

struct rubick_share_state {
	struct rk_xi_pairs pairs;     /* interference answers by interned job sides */
	struct rk_subbatch_cache sbc; /* each job's accumulation settings, priced once */
};

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

struct rubick_share_round {
	struct rk_gpu_occ
	    occ;       /* holders by index into R->j: the snapshot, then the pairs started */
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

static int holders(const struct rubick_share_round *sh, int node, int g, int *h);
static int may_partner(const struct rj *b);

/*
 * GPUs node n could give a newcomer: those nobody holds (at most the
 * capacity's free count) plus those one job that may be a partner holds
 * alone. Starts and pairs only lower it within a round: jobs the round
 * changed stay in the occupancy as they were and are no partners.
 */
static int node_room(const struct round *R, int n)
{
	const struct rk_node *nd = &R->in->cluster->nodes[n];
	int free = 0, single = 0;
	for (int q = 0; nd->up && q < nd->gpus; q++) {
		int h[2], cnt = holders(R->sh, n, q, h);
		free += cnt == 0;
		single += cnt == 1 && may_partner(&R->j[h[0]]);
	}
	return (free < R->cap.free_gpus[n] ? free : R->cap.free_gpus[n]) + single;
}

static void room_update(struct round *R)
{
	R->sh->max_room = 0;
	for (int n = 0; n < R->in->cluster->n_nodes; n++) {
		int room = node_room(R, n);
		R->sh->max_room = room > R->sh->max_room ? room : R->sh->max_room;
	}
}

static const char *type_of(const struct rk_job *j)
{
	return j->job_type[0] ? j->job_type : j->model->name;
}

/* xi of job x (gx GPUs) next to job y (gy GPUs) on GPUs of type `gt`. */
static double xi_of(const struct round *R, const char *gt, const struct rk_job *x, int gx,
                    const struct rk_job *y, int gy)
{
	struct rk_xi_pairs *p = &R->st->share_st->pairs;
	int sx = rk_xi_pairs_side(p, gt, type_of(x), gx);
	int sy = rk_xi_pairs_side(p, gt, type_of(y), gy);
	if (sx >= 0 && sy >= 0)
		return rk_xi_pairs_get(p, R->in->xi, sx, sy);
	return rk_xi_lookup(R->in->xi, gt, type_of(x), gx, type_of(y), gy, NULL);
}

/*
 * Did the table measure x and y on one GPU of type `gt` (rk_xi_corun: 1 ran
 * together, -1 could not, 0 not measured)? A measurement decides whether the
 * pair fits, before the memory model of the stand-in models does, as the
 * driver checks it (rk_gpu_share_resolve) and sjf-bsbf places.
 */
static int corun_of(const struct round *R, const char *gt, const struct rk_job *x, int gx,
                    const struct rk_job *y, int gy)
{
	if (!rk_xi_table_measures(R->in->xi, gt))
		return 0;
	struct rk_xi_pairs *p = &R->st->share_st->pairs;
	int sx = rk_xi_pairs_side(p, gt, type_of(x), gx);
	int sy = rk_xi_pairs_side(p, gt, type_of(y), gy);
	if (sx >= 0 && sy >= 0)
		return rk_xi_pairs_corun(p, R->in->xi, sx, sy);
	return rk_xi_corun(R->in->xi, gt, type_of(x), gx, type_of(y), gy);
}

/* Does every share of `a` name its GPUs? */
static int named(const struct rk_alloc *a)
{
	int all = 1;
	for (int s = 0; s < a->n; s++)
		all &= a->shares[s].gpu_mask != 0;
	return all;
}

/* Allocations of R->j into `o` (who = index): named ones first, then the rest
 * on GPUs nobody holds, their masks written back. */
static int occ_fill(struct round *R, struct rk_gpu_occ *o, struct rk_error *err)
{
	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < R->n; k++) {
			struct rk_alloc *a = &R->j[k].now;
			if (a->n == 0 || named(a) != (pass == 0))
				continue;
			int rc = rk_gpu_occ_add(o, a, k, pass, err);
			if (rc) {
				rk_error_prefix(err, "rubick: job %lld (%s)",
				                (long long)R->j[k].job->id, R->j[k].job->name);
				return rc;
			}
		}
	return RK_OK;
}

static int holders(const struct rubick_share_round *sh, int node, int g, int *h)
{
	return rk_gpu_occ_holders(&sh->occ, node, g, &h[0], &h[1]);
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
	int rc = occ_fill(R, &sh->occ, err);
	if (!rc)
		rc = capacity_once(R, err);
	if (rc)
		return rc;
	for (int k = R->n - 1, behind = 0; k >= 0; k--) {
		sh->xnow[k] = sh->mem[k] = sh->gwait[k] = NAN;
		sh->behind[k] = behind;
		behind += !R->j[k].was_placed;
	}
	room_update(R);
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

/*
 * The factor job k runs at now: the largest xi over the jobs it shares a GPU
 * with, 1 alone (the engine's rule, engine_coloc.c share_factor).
 */
static double present_factor(const struct round *R, int k)
{
	struct rubick_share_round *sh = R->sh;
	if (!isnan(sh->xnow[k]))
		return sh->xnow[k];
	const struct rk_cluster *c = R->in->cluster;
	const struct rk_alloc *al = &R->j[k].now;
	double x = 1.0;
	for (int s = 0; s < al->n; s++) {
		int n = al->shares[s].node;
		for (int g = 0; g < c->nodes[n].gpus; g++) {
			int h[2];
			if (!(al->shares[s].gpu_mask >> g & 1) || holders(sh, n, g, h) != 2)
				continue;
			int o = h[0] == k ? h[1] : h[0];
			double v = xi_of(R, c->nodes[n].gpu_type, R->j[k].job, R->j[k].g,
			                 R->j[o].job, R->j[o].g);
			x = v > x ? v : x;
		}
	}
	sh->xnow[k] = x;
	return x;
}

/* Seconds job k has left at what it holds, at the rate it runs at now. */
static double real_left_s(const struct round *R, int k)
{
	const struct rj *r = &R->j[k];
	return remaining_s(r, r->g) * present_factor(R, k);
}

int rubick_share_holders(const struct round *R, int node, int g, int *h)
{
	return holders(R->sh, node, g, h);
}

double rubick_share_left_s(const struct round *R, int k)
{
	return real_left_s(R, k);
}

void rubick_share_note_moved(struct round *R)
{
	R->sh->moved++;
}

static int by_double(const void *p, const void *q)
{
	double x = *(const double *)p, y = *(const double *)q;
	return (x > y) - (x < y);
}

/*
 * Seconds until `g` GPUs have no holder if nothing else starts: each GPU
 * frees when the last of its holders ends, each at its real remaining time
 * (sjf-bsbf's t_free, docs/sharing.md). Jobs this round moved count at their
 * new size on GPUs the snapshot had free. Waiting jobs ahead are not counted,
 * so the estimate errs towards waiting.
 */
static double time_to_free(const struct round *R, int g)
{
	struct rubick_share_round *sh = R->sh;
	const struct rk_cluster *c = R->in->cluster;
	if (sh->gtime_key == R->n_assign + 1) /* nothing moved since the last sort */
		return g >= 1 && sh->gtime_skip + g <= sh->gtime_n
		           ? sh->gtime[sh->gtime_skip + g - 1]
		           : INFINITY;
	int m = 0, zeros = 0, added = 0;
	for (int n = 0; n < c->n_nodes; n++)
		for (int q = 0; c->nodes[n].up && q < c->nodes[n].gpus; q++) {
			int h[2], cnt = holders(sh, n, q, h);
			double t = 0;
			for (int e = 0; e < cnt; e++)
				if (!R->j[h[e]].changed || sh->in_occ[h[e]]) {
					double rt = real_left_s(R, h[e]);
					t = rt > t ? rt : t;
				}
			zeros += t == 0;
			sh->gtime[m++] = t;
		}
	for (int k = 0; k < R->n && m < 2 * sh->n_gtime; k++) {
		const struct rj *r = &R->j[k];
		if (!r->changed || sh->in_occ[k] || r->g < 1)
			continue;
		double t = remaining_s(r, r->g);
		for (int q = 0; q < r->g && m < 2 * sh->n_gtime; q++, added++)
			sh->gtime[m++] = t;
	}
	qsort(sh->gtime, (size_t)m, sizeof(*sh->gtime), by_double);
	sh->gtime_skip = added < zeros ? added : zeros; /* the GPUs those jobs took were free */
	sh->gtime_n = m;
	sh->gtime_key = R->n_assign + 1;
	return time_to_free(R, g);
}

/*
 * Seconds `r` would run alone started now on fewer than g free GPUs (the
 * largest useful count that places), INFINITY when none: Rubick's other way
 * not to share, which start_pending declined below its start fraction.
 */
static double fewer_alone_s(const struct round *R, const struct rj *r, int g)
{
	for (int f = g - 1; f >= 1; f--) {
		if (f > R->cap.free_gpus_total || use_gpus(r, f) != f || !(tput(r, f) > 0))
			continue;
		struct rk_alloc a;
		rk_alloc_init(&a);
		int ok = rubick_try_place(R, r, f, &R->cap, &a) == 0;
		rk_alloc_fini(&a);
		if (ok)
			return remaining_s(r, f);
	}
	return INFINITY;
}

/*
 * May the shrink phase take `v`'s GPUs for waiting job `gj`? Its own rule
 * (rubick_shrink_victim_for), read on the snapshot; a shared job is never a
 * victim. (A restatement here went stale once, when the restart limit became
 * spent time and restarting single-node jobs became victims: under NIC
 * contention on 11x6:v100 sharing=on then cost Rubick 11 % on trace3.)
 */
static int victim_for(const struct round *R, const struct rj *gj, const struct rj *v)
{
	return !v->shared && rubick_shrink_victim_for(R, gj, v);
}

/* When GPU q of node n is free for waiting job gj (wait_s). */
static double gpu_free_for(const struct round *R, const struct rj *gj, int n, int q)
{
	int h[2], cnt = holders(R->sh, n, q, h);
	double t = 0;
	for (int e = 0; e < cnt; e++)
		if (!victim_for(R, gj, &R->j[h[e]])) {
			double rt = real_left_s(R, h[e]);
			t = rt > t ? rt : t;
		}
	return t;
}

/*
 * Seconds waiting job k can expect to wait for its request's GPUs in plain
 * Rubick: a GPU is its at once when every holder is a victim it may
 * shrink (victim_for), else when the last holder that is not ends. This is
 * the t_free that counts what the shrink phase frees, not only jobs ending.
 * Cached per round on the snapshot, with the count of GPUs free for it by
 * then (sh->gcnt). 0 when the GPUs are there and something else (quota, node
 * shape, CPUs) holds it back.
 */
static double wait_s(const struct round *R, int k)
{
	struct rubick_share_round *sh = R->sh;
	if (!isnan(sh->gwait[k]))
		return sh->gwait[k];
	const struct rk_cluster *c = R->in->cluster;
	const struct rj *gj = &R->j[k];
	int m = 0;
	for (int n = 0; n < c->n_nodes; n++)
		for (int q = 0; c->nodes[n].up && q < c->nodes[n].gpus; q++)
			sh->gscr[m++] = gpu_free_for(R, gj, n, q);
	qsort(sh->gscr, (size_t)m, sizeof(*sh->gscr), by_double);
	int need = gj->job->req_gpus;
	sh->gwait[k] = need >= 1 && need <= m ? sh->gscr[need - 1] : INFINITY;
	sh->gcnt[k] = need;
	while (sh->gcnt[k] < m && sh->gscr[sh->gcnt[k]] <= sh->gwait[k])
		sh->gcnt[k]++;
	return sh->gwait[k];
}

/*
 * Would the pair delay a job waiting ahead of it? Rubick starts the jobs
 * ahead in its order (guarantees first, then shortest remaining time) on
 * GPUs that free up or that the shrink phase takes from other jobs
 * (rubick_shrink.c), but it never shrinks a job that shares (rj.shared). A
 * GPU of the pair (`mask` on node n: the free ones the newcomer takes and
 * its partners' ones) is then busy until the later of the newcomer's shared
 * run t_a and its partner's end at the slowed rate, and out of the shrink
 * phase's reach meanwhile. If that turns GPUs waiting job W would have had
 * by its expected wait (wait_s) into later ones, and too few are left for
 * its request, the pair delays W: a cost the benefit test does not see (it
 * counts only the queue behind the newcomer), paid by a job Rubick ranks
 * first (measured: on the Muri testbed trace, 11x6:v100 with contention, the
 * 32-GPU guaranteed jobs waited ~470,000 s longer each, average JCT 28.0 ->
 * 33.9 h). The first share_window waiting jobs ahead are checked, as many as
 * a round tries to share: those next in line, and a bounded cost.
 */
static int delays_ahead(const struct round *R, int self, int n, uint64_t mask,
                        const struct rk_share_partner *ps, const int *partners, int np, double t_a)
{
	const struct rk_node *nd = &R->in->cluster->nodes[n];
	for (int k = 0, seen = 0; k < self && seen < R->st->share_window; k++) {
		const struct rj *gj = &R->j[k];
		if (gj->g != 0)
			continue;
		seen++;
		double w = wait_s(R, k);
		if (!isfinite(w))
			continue;
		int lost = 0;
		for (int q = 0; q < nd->gpus; q++) {
			if (!(mask >> q & 1) || gpu_free_for(R, gj, n, q) > w)
				continue;
			int h[2];
			double t = t_a;
			if (holders(R->sh, n, q, h) == 1)
				for (int i = 0; i < np; i++)
					if (partners[i] == h[0] && ps[i].r_s * ps[i].rel > t)
						t = ps[i].r_s * ps[i].rel;
			lost += t > w;
		}
		if (R->sh->gcnt[k] - lost < gj->job->req_gpus)
			return 1;
	}
	return 0;
}

/* Per-GPU memory of job k's plan (MiB), +inf when the model cannot price it. */
static double mem_of(const struct round *R, int k)
{
	struct rubick_share_round *sh = R->sh;
	if (isnan(sh->mem[k]) && rk_job_gpu_mem_mb(R->j[k].job, &R->j[k].plan, &sh->mem[k], NULL))
		sh->mem[k] = INFINITY;
	return sh->mem[k];
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
static int may_partner(const struct rj *b)
{
	return !b->guaranteed && b->was_placed && !b->changed && !b->fallback && b->g > 0 &&
	       b->job->state == RK_JOB_RUNNING && b->g <= b->job->req_gpus;
}

struct cand {
	int who;       /* index into R->j */
	uint64_t mask; /* GPUs of the node it holds alone */
	double key;    /* -benefit of the pair alone */
	struct rk_subbatch opt;
	struct rk_share_partner p;
};

static int by_key(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->who > b->who) - (a->who < b->who);
}

/* What sharing on one node would be: the best found so far is kept. */
struct choice {
	int node, free_used, cpus, np;
	int64_t mem;
	uint64_t mask;
	double gain_s; /* the better way of not sharing minus the shared sum, > 0 */
	struct rk_plan plan;
	int partners[SHARE_PARTNERS];
};

/* Everything one try shares across nodes. */
struct share_try {
	const struct rj *r;
	int g;
	double e_a, t_free, queue_w, fewer_s;
	const struct rk_subbatch *opt;
	int n_opt;
	struct rk_place_req req;
};

/* The candidate partners on node n, each screened by the pair test. */
static int node_cands(const struct round *R, const struct share_try *t, int n, struct cand *cs)
{
	const struct rk_node *nd = &R->in->cluster->nodes[n];
	int m = 0;
	for (int q = 0; q < nd->gpus; q++) {
		int h[2], i = 0;
		if (holders(R->sh, n, q, h) != 1 || !may_partner(&R->j[h[0]]))
			continue;
		while (i < m && cs[i].who != h[0])
			i++;
		if (i == m) {
			if (m == SHARE_PARTNERS)
				continue;
			cs[m++] = (struct cand){.who = h[0]};
		}
		cs[i].mask |= 1ULL << q;
	}
	int kept = 0;
	for (int i = 0; i < m; i++) {
		const struct rj *b = &R->j[cs[i].who];
		double mem_b = mem_of(R, cs[i].who);
		int run = corun_of(R, nd->gpu_type, t->r->job, t->g, b->job, b->g);
		if (run < 0)
			continue; /* measured unable to run together */
		int best = -1;
		for (int k = 0; k < t->n_opt; k++) /* the least-slow setting that fits */
			if ((run > 0 || t->opt[k].mem_mb + mem_b <= (double)nd->gpu_mem_mb) &&
			    (best < 0 || t->opt[k].slow < t->opt[best].slow))
				best = k;
		double r_b = real_left_s(R, cs[i].who);
		if (best < 0 || !isfinite(r_b))
			continue;
		double xa = xi_of(R, nd->gpu_type, t->r->job, t->g, b->job, b->g);
		double xb = xi_of(R, nd->gpu_type, b->job, b->g, t->r->job, t->g);
		double xnow = present_factor(R, cs[i].who), slow = t->opt[best].slow;
		int single = __builtin_popcountll(cs[i].mask);
		struct rk_share_partner pp = {.r_s = r_b,
		                              .xi_a = xa,
		                              .rel = (xb > xnow ? xb : xnow) / xnow,
		                              .gpus = b->g,
		                              .shared = single < t->g ? single : t->g};
		struct rk_pair_outcome o;
		double wait = t->t_free < r_b ? t->t_free : r_b;
		if (rk_group_evaluate(t->e_a, slow > 1 ? slow : 1, 0, &pp, 1, wait, t->queue_w, &o,
		                      NULL) ||
		    !o.share)
			continue;
		cs[kept] = cs[i];
		cs[kept].key = -o.benefit_s;
		cs[kept].opt = t->opt[best];
		cs[kept++].p = pp;
	}
	qsort(cs, (size_t)kept, sizeof(*cs), by_key);
	return kept;
}

/* Sharing on node n: free GPUs first, then partners by benefit; the group test. */
static void try_node(const struct round *R, const struct share_try *t, int n, struct choice *best)
{
	const struct rk_node *nd = &R->in->cluster->nodes[n];
	if (!nd->up || nd->gpus < t->g || nd->gpus > 64)
		return;
	uint64_t mask = 0;
	int got = 0, cap_free = R->cap.free_gpus[n];
	for (int q = 0; q < nd->gpus && got < cap_free && got < t->g; q++) {
		int h[2];
		if (holders(R->sh, n, q, h) == 0) {
			mask |= 1ULL << q;
			got++;
		}
	}
	if (got >= t->g)
		return; /* room alone: start_pending's placement declined it (CPUs, memory) */
	struct cand cs[SHARE_PARTNERS];
	int m = node_cands(R, t, n, cs), free_used = got, np = 0;
	struct choice c = {.node = n, .free_used = free_used};
	struct rk_share_partner ps[SHARE_PARTNERS];
	double slow = 1, last = 0, left_sum = 0;
	c.plan = plan_for(t->r, t->g);
	for (int i = 0; i < m && got < t->g; i++) {
		int before = got;
		for (int q = 0; q < nd->gpus && got < t->g; q++)
			if (cs[i].mask >> q & 1) {
				mask |= 1ULL << q;
				got++;
			}
		ps[np] = cs[i].p;
		ps[np].shared = got - before;
		c.partners[np++] = cs[i].who;
		last = cs[i].p.r_s > last ? cs[i].p.r_s : last;
		left_sum += cs[i].p.r_s;
		/* Memory falls as accumulation grows: the largest fits beside every partner. */
		if (cs[i].opt.plan.ga >= c.plan.ga || np == 1) {
			c.plan = cs[i].opt.plan;
			slow = cs[i].opt.slow > 1 ? cs[i].opt.slow : 1;
		}
	}
	if (got < t->g || np == 0)
		return;
	struct rk_pair_outcome o;
	double wait = t->t_free < last ? t->t_free : last;
	if (rk_group_evaluate(t->e_a, slow, free_used, ps, np, wait, t->queue_w, &o, NULL) ||
	    !o.share)
		return;
	double xa_max = 1;
	for (int i = 0; i < np; i++)
		xa_max = ps[i].xi_a > xa_max ? ps[i].xi_a : xa_max;
	if (delays_ahead(R, (int)(t->r - R->j), n, mask, ps, c.partners, np,
	                 t->e_a * slow * xa_max))
		return;
	double alone = 0.5 * (t->fewer_s + left_sum); /* started now on fewer GPUs */
	double not_sharing = o.t_seq_s < alone ? o.t_seq_s : alone;
	double gain = not_sharing - o.t_con_s;
	/* The gain is a difference of model estimates, each trusted to within
	 * RUBICK_SLA_MARGIN (the model's 2-7 % errors, §1.5), and sharing has
	 * costs no estimate here prices (a pair is frozen: neither job grows or
	 * shrinks until one ends, and a partner across nodes meets the NIC's
	 * contention the co-location table does not see): it must exceed the
	 * two estimates' errors together, 2 x (margin - 1) of the not-sharing
	 * sum. Measured without it: predicted gains of 0-100 s on runs of
	 * 10,000-45,000 s were taken, and sharing=on lost to plain rubick on
	 * 11x6:v100 with contention (testbed 28.0 -> 35.0 h). */
	if (!(gain > 2 * (RUBICK_SLA_MARGIN - 1) * not_sharing) ||
	    (best->np > 0 && gain <= best->gain_s))
		return;
	if (!rk_share_node_need(&t->req, nd, free_used, t->g - free_used, R->cap.free_cpus[n],
	                        R->cap.free_mem_mb[n], &c.cpus, &c.mem))
		return;
	c.np = np;
	c.mask = mask;
	c.gain_s = gain;
	*best = c;
}

/* Start `r` as `c` says: the capacity takes its free GPUs, the occupancy all. */
static int commit(struct round *R, struct rj *r, int g, const struct choice *c)
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
	room_update(R);
	return RK_OK;
}

int rubick_share_start(struct round *R, struct rj *r, int g, int *rc)
{
	struct rubick_share_round *sh = R->sh;
	if (!sh || r->guaranteed || g < 1 || g > R->node_gpus || g > sh->max_room ||
	    sh->tries >= R->st->share_window)
		return 0;
	struct rk_plan plan = plan_for(r, g);
	double e_a = remaining_s(r, g);
	if (plan.tp != 1 || plan.pp != 1 || use_gpus(r, g) != g || !isfinite(e_a))
		return 0;
	const struct rk_cluster *cl = R->in->cluster;
	int room = 0;
	for (int n = 0; n < cl->n_nodes && !room; n++)
		room = cl->nodes[n].gpus >= g && node_room(R, n) >= g;
	if (!room)
		return 0;
	sh->tries++; /* bounds the per-round cost of the tests */
	const struct rk_subbatch_set *sb = rk_subbatch_cache_get(
	    &R->st->share_st->sbc, r->job->model, r->job->global_batch, &plan, R->in->env);
	if (sb->n <= 0)
		return 0;
	sh->n_gtime = 0;
	for (int n = 0; n < cl->n_nodes; n++)
		sh->n_gtime += cl->nodes[n].gpus;
	int k = (int)(r - R->j);
	struct share_try t = {.r = r, .g = g, .e_a = e_a, .opt = sb->opt, .n_opt = sb->n};
	t.t_free = time_to_free(R, g);
	t.queue_w = R->total_gpus > 0 ? (double)sh->behind[k] / R->total_gpus : 0;
	t.fewer_s = fewer_alone_s(R, r, g);
	rk_place_req_from_job(r->job, &t.req);
	int cpg = cpus_for(r, g);
	t.req.cpus_per_gpu = cpg > 0 ? cpg : RK_SHARE_PROPORTIONAL;
	struct choice best = {.node = -1};
	for (int n = 0; n < cl->n_nodes; n++)
		try_node(R, &t, n, &best);
	if (best.np == 0)
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
	occ_fill(R, &o, NULL);
	rk_gpu_occ_fini(&o);
	return RK_OK;
}
