/*
 * SJF-BSBF and SJF-FFS (sjf_bsbf.c): placing one waiting job in a round, the
 * GPU scan, exclusive starts and sharing GPUs with running jobs after the
 * §3.3 benefit test (FFS: first fit, no test).
 */
#include "policy/sjf/sjf_bsbf_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *type_of(const struct rk_job *j)
{
	return j->job_type[0] ? j->job_type : j->model->name;
}

/* GPU g of node is usable by a job needing `mem_mb` alone: nobody holds it. */
static int gpu_free(const struct round *r, int node, int g)
{
	int a, b;
	return rk_gpu_occ_holders(&r->occ, node, g, &a, &b) == 0;
}

/*
 * Free GPUs per node, single-held GPUs and the sharing partners (each running
 * job holding a GPU alone, once, in node and GPU order: SJF-FFS's first fit).
 */
void bsbf_scan(struct round *r)
{
	const struct rk_sched_input *in = r->in;
	const struct rk_cluster *c = in->cluster;
	r->n_free = r->n_single = r->n_part = 0;
	r->n_gfree = -1;
	for (int n = 0; n < c->n_nodes; n++) {
		r->node_free[n] = r->node_single[n] = 0;
		for (int k = 0; c->nodes[n].up && k < c->nodes[n].gpus; k++) {
			int h0, h1, cnt = rk_gpu_occ_holders(&r->occ, n, k, &h0, &h1);
			if (cnt == 0) {
				r->node_free[n]++;
				continue;
			}
			if (cnt != 1 || r->job[h0]->state == RK_JOB_PENDING)
				continue;
			r->n_single++;
			r->node_single[n]++;
			if (r->seen[h0])
				continue;
			r->seen[h0] = 1;
			/* Ties go to the earlier snapshot position: with a change feed,
			 * the simulator's order, submit time then id (trace order). */
			const struct rk_job *j = r->job[h0];
			int feed = in->incremental;
			r->part[r->n_part++] = (struct cand){
				.who = h0,
				.key = (double)(r->occ.first[n] + k),
				.tie = {feed ? j->submit_ms : 0, feed ? j->id : h0}};
		}
		r->n_free += r->node_free[n];
	}
	for (int i = 0; i < r->n_part; i++)
		r->seen[r->part[i].who] = 0;
}

/* xi of x (gx GPUs) sharing with y (gy GPUs) on `gt`: interned, else the table. */
static double xi_of(struct bsbf_state *st, const struct round *r, const char *gt,
                    const struct rk_job *x, int gx, const struct rk_job *y, int gy)
{
	int sx = rk_xi_pairs_side(&st->pairs, gt, type_of(x), gx);
	int sy = rk_xi_pairs_side(&st->pairs, gt, type_of(y), gy);
	if (sx >= 0 && sy >= 0)
		return rk_xi_pairs_get(&st->pairs, r->in->xi, sx, sy);
	return rk_xi_lookup(r->in->xi, gt, type_of(x), gx, type_of(y), gy, NULL);
}

/*
 * The factor job i runs at now: the largest xi over the jobs it shares a GPU
 * with, 1 alone (the engine's rule, engine_coloc.c share_factor). Its real
 * remaining time is e_rem x this (the §3.3 test with the partner's
 * remaining *exclusive* time let jobs join partners already slowed by others).
 */
static double present_factor(struct bsbf_state *st, struct round *r, int i)
{
	if (!isnan(r->xcur[i]))
		return r->xcur[i];
	const struct rk_cluster *c = r->in->cluster;
	const struct rk_alloc *al = r->held[i];
	double x = 1.0;
	for (int s = 0; al && s < al->n; s++) {
		int n = al->shares[s].node;
		for (int g = 0; g < c->nodes[n].gpus; g++) {
			int h0, h1;
			if (!(al->shares[s].gpu_mask >> g & 1) ||
			    rk_gpu_occ_holders(&r->occ, n, g, &h0, &h1) != 2)
				continue;
			int o = h0 == i ? h1 : h0;
			if (o < 0 || o >= r->n_round)
				continue;
			double v = xi_of(st, r, c->nodes[n].gpu_type, r->job[i], r->gpus[i],
			                 r->job[o], r->gpus[o]);
			x = v > x ? v : x;
		}
	}
	r->xcur[i] = x;
	return x;
}

static int by_double(const void *p, const void *q)
{
	double x = *(const double *)p, y = *(const double *)q;
	return (x > y) - (x < y);
}

/*
 * Seconds until `g` GPUs nobody holds exist if nothing new starts: every
 * GPU frees when the last of its holders ends (each at its real remaining
 * time). Not sharing, a waits at most this long (less than for its partners
 * when other GPUs free first); waiting jobs ahead of a are not counted, so
 * the estimate errs towards waiting, the side that never loses to SJF.
 */
static double time_to_free(struct bsbf_state *st, struct round *r, int g)
{
	const struct rk_cluster *c = r->in->cluster;
	if (r->n_gfree < 0) {
		int k = 0;
		for (int n = 0; n < c->n_nodes; n++)
			for (int q = 0; c->nodes[n].up && q < c->nodes[n].gpus; q++) {
				int h[2];
				int cnt = rk_gpu_occ_holders(&r->occ, n, q, &h[0], &h[1]);
				double t = 0;
				for (int e = 0; e < cnt; e++) {
					double rt =
					    h[e] < r->n_round
					        ? r->e_rem[h[e]] * present_factor(st, r, h[e])
					        : INFINITY;
					t = rt > t ? rt : t;
				}
				r->gfree[k++] = t;
			}
		qsort(r->gfree, (size_t)k, sizeof(*r->gfree), by_double);
		r->n_gfree = k;
	}
	return g >= 1 && g <= r->n_gfree ? r->gfree[g - 1] : INFINITY;
}

/*
 * Place `a` on `want[node]` free GPUs per node plus the shared GPUs in
 * `shared_mask[node]`; push the decision and record it. 1 = placed, 0 = the
 * node lacks CPUs or memory, < 0 error.
 */
static int commit(struct round *r, int ai, const int *want, const uint64_t *shared_mask,
		  const struct rk_plan *plan, struct rk_decisions *out)
{
	const struct rk_cluster *c = r->in->cluster;
	struct rk_job *a = r->job[ai];
	struct rk_place_req req;
	rk_place_req_from_job(a, &req);
	struct rk_alloc *al = r->tmp;
	rk_alloc_fini(al);
	for (int n = 0; n < c->n_nodes; n++) {
		int sh = 0;
		for (uint64_t m = shared_mask[n]; m; m &= m - 1)
			sh++;
		if (want[n] + sh == 0)
			continue;
		int cpus;
		int64_t mem;
		if (!rk_share_node_need(&req, &c->nodes[n], want[n], sh, r->free_cpus[n], r->free_mem[n],
			       &cpus, &mem))
			return 0;
		uint64_t mask = shared_mask[n];
		for (int g = 0, k = 0; g < c->nodes[n].gpus && k < want[n]; g++)
			if (gpu_free(r, n, g)) {
				mask |= 1ULL << g;
				k++;
			}
		if (rk_alloc_add(al, n, want[n] + sh, cpus, mem))
			return RK_ENOMEM;
		for (int i = 0; i < al->n; i++)
			if (al->shares[i].node == n)
				al->shares[i].gpu_mask = mask;
	}
	struct rk_error e;
	if (rk_gpu_occ_add(&r->occ, al, ai, 0, &e))
		return 0;
	(void)e;
	for (int i = 0; i < al->n; i++) {
		r->free_cpus[al->shares[i].node] -= al->shares[i].cpus;
		r->free_mem[al->shares[i].node] -= al->shares[i].mem_mb;
	}
	r->e_rem[ai] = bsbf_remaining_s(a);
	r->gpus[ai] = rk_alloc_total_gpus(al);
	r->mem_gpu[ai] = bsbf_mem_get(r->st, a, plan);
	/* What it holds, for the factors of the jobs it now shares with. */
	if (rk_alloc_copy(&r->kept[ai], al))
		return RK_ENOMEM;
	r->held[ai] = &r->kept[ai];
	r->xcur[ai] = NAN;
	for (int i = 0; i < al->n; i++) {
		int n = al->shares[i].node;
		for (int g = 0; g < c->nodes[n].gpus; g++) {
			int h0, h1;
			if (al->shares[i].gpu_mask >> g & 1 &&
			    rk_gpu_occ_holders(&r->occ, n, g, &h0, &h1) == 2)
				r->xcur[h0 == ai ? h1 : h0] = NAN; /* slowed by a from now */
		}
	}
	int rc = rk_decisions_push(out, a->id, al, plan);
	return rc ? rc : 1;
}

/* Exclusive start: one node best fit, else most-free nodes first. */
int bsbf_start_free(struct round *r, int ai, struct rk_decisions *out)
{
	const struct rk_cluster *c = r->in->cluster;
	struct rk_job *a = r->job[ai];
	int g = a->req_gpus, nn = c->n_nodes;
	int *want = calloc((size_t)nn, sizeof(*want));
	uint64_t *none = calloc((size_t)nn, sizeof(*none));
	const int *fr = r->node_free;
	if (!want || !none) {
		free(want);
		free(none);
		return RK_ENOMEM;
	}
	int total = 0, best = -1;
	for (int n = 0; n < nn; n++) {
		total += fr[n];
		if (fr[n] >= g && (best < 0 || fr[n] < fr[best]))
			best = n;
	}
	int rc = 0;
	if (best >= 0) {
		want[best] = g;
		rc = commit(r, ai, want, none, &a->req_plan, out);
	}
	/* Over several nodes, most free first, each node taking whole tensor-
	 * parallel groups (tp GPUs stay on one node, as rk_place_gang keeps them):
	 * a 3D plan otherwise never finds a placement and its job never starts. */
	int tp = a->req_plan.tp > 1 ? a->req_plan.tp : 1, left = g;
	/* placement=consolidated (yarn, as the baselines' default): a job one
	 * node holds waits for one node, or shares on one (bsbf_start_shared). */
	int split_ok = !r->st->consolidated || g > r->max_node_gpus;
	if (rc == 0 && split_ok && total >= g && g % tp == 0) {
		memset(want, 0, (size_t)nn * sizeof(*want));
		while (left > 0) {
			int m = -1, room_m = 0;
			for (int n = 0; n < nn; n++) {
				int room = (fr[n] - want[n]) / tp * tp;
				if (room > room_m) {
					m = n;
					room_m = room;
				}
			}
			if (m < 0)
				break; /* no node has room for another tensor-parallel group */
			int take = room_m < left ? room_m : left;
			want[m] += take;
			left -= take;
		}
		if (left == 0)
			rc = commit(r, ai, want, none, &a->req_plan, out);
	}
	free(want);
	free(none);
	return rc;
}

static int by_key(const void *p, const void *q)
{
	const struct cand *x = p, *y = q;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->tie[0] != y->tie[0])
		return x->tie[0] < y->tie[0] ? -1 : 1;
	return (x->tie[1] > y->tie[1]) - (x->tie[1] < y->tie[1]);
}

/* Try to start `a` sharing GPUs with running jobs (§3.4 lines 7-12). */
int bsbf_start_shared(struct bsbf_state *st, struct round *r, int ai, struct rk_decisions *out,
		      struct cand *cands)
{
	const struct rk_sched_input *in = r->in;
	const struct rk_cluster *c = in->cluster;
	struct rk_job *a = r->job[ai];
	if (a->req_plan.tp != 1 || a->req_plan.pp != 1)
		return 0;
	int g = a->req_gpus, nc = r->n_part;
	if (r->n_free + r->n_single < g)
		return 0;
	if (g <= r->max_node_gpus) { /* shares on one node (below): one must have room */
		int room = 0;
		for (int n = 0; n < c->n_nodes && !room; n++)
			room = r->node_free[n] + r->node_single[n] >= g;
		if (!room)
			return 0;
	}
	/* Partners in node and GPU order (first fit), each once: bsbf_scan()'s list. */
	memcpy(cands, r->part, (size_t)nc * sizeof(*cands));
	/* The test (or, for FFS, the first setting that fits) per partner. */
	const struct rk_subbatch_set *sb =
	    rk_subbatch_cache_get(&st->sb, a->model, a->global_batch, &a->req_plan, in->env);
	struct rk_subbatch opts[MAX_SUBBATCH];
	const char *side_gt = NULL; /* a's interned side is per GPU type */
	const char *meas_gt = NULL; /* the GPU type `meas` answers for */
	int meas = 0;
	/* Jobs queued behind a, per GPU of the cluster: rk_group_evaluate's weight
	 * of the GPU-seconds a group loses or gains. */
	int nbehind = r->n_waiting - (r->n_round - r->n_hold);
	double qw = r->total_gpus > 0 && nbehind > 0 ? (double)nbehind / r->total_gpus : 0;
	double t_free = st->ffs ? 0 : time_to_free(st, r, g);
	int side_a = -1, m = 0;
	for (int i = 0; i < nc; i++) {
		int b = cands[i].who;
		const struct rk_job *jb = r->job[b];
		if (!isfinite(r->mem_gpu[b]))
			continue;
		struct rk_error e;
		int no = 0;
		const char *gt = c->nodes[jb->alloc.shares[0].node].gpu_type;
		if (gt != meas_gt) { /* partners come in node order: one check per run */
			meas = rk_xi_table_measures(in->xi, gt);
			meas_gt = gt;
		}
		/* A pair the table measured fits (or not) by the measurement, as the
		 * driver checks it (rk_gpu_share_resolve): a runs its own plan. */
		int run = 0;
		if (meas) {
			if (gt != side_gt) {
				side_a = rk_xi_pairs_side(&st->pairs, gt, type_of(a), g);
				side_gt = gt;
			}
			if (r->side[b] == SIDE_UNSET)
				r->side[b] =
				    rk_xi_pairs_side(&st->pairs, gt, type_of(jb), r->gpus[b]);
			run = side_a >= 0 && r->side[b] >= 0
			          ? rk_xi_pairs_corun(&st->pairs, in->xi, side_a, r->side[b])
			          : rk_xi_corun(in->xi, gt, type_of(a), g, type_of(jb), r->gpus[b]);
		}
		if (run < 0)
			continue;
		if (run > 0)
			opts[no++] = (struct rk_subbatch){.plan = a->req_plan, .slow = 1.0};
		/* Unmeasured: by memory, in ascending ga (the first that fits is FFS's). */
		for (int k = 0; run == 0 && k < sb->n; k++)
			if (sb->opt[k].mem_mb + r->mem_gpu[b] <= (double)r->gpu_mem[b])
				opts[no++] = sb->opt[k];
		if (no == 0)
			continue;
		if (st->ffs) {
			cands[m] = cands[i];
			cands[m++].plan = opts[0].plan;
			continue;
		}
		if (gt != side_gt) {
			side_a = rk_xi_pairs_side(&st->pairs, gt, type_of(a), g);
			side_gt = gt;
		}
		if (r->side[b] == SIDE_UNSET)
			r->side[b] = rk_xi_pairs_side(&st->pairs, gt, type_of(jb), r->gpus[b]);
		double xa, xb;
		if (side_a >= 0 && r->side[b] >= 0) {
			xa = rk_xi_pairs_get(&st->pairs, in->xi, side_a, r->side[b]);
			xb = rk_xi_pairs_get(&st->pairs, in->xi, r->side[b], side_a);
		} else {
			xa = rk_xi_lookup(in->xi, gt, type_of(a), g, type_of(jb), r->gpus[b], NULL);
			xb = rk_xi_lookup(in->xi, gt, type_of(jb), r->gpus[b], type_of(a), g, NULL);
		}
		double e_a = bsbf_remaining_s(a), e_b = r->e_rem[b];
		if (!isfinite(e_a) || !isfinite(e_b))
			continue; /* no length known: the test cannot say sharing helps */
		/*
		 * §3.3 with b's *real* remaining time: b may already share other
		 * GPUs and run xnow times slower than alone; next to a it runs at
		 * the larger of the two factors (the engine's max rule), i.e. rel
		 * times slower than now. With xnow = 1 this is the paper's test.
		 */
		double xnow = present_factor(st, r, b);
		double r_b = e_b * xnow, rel = (xb > xnow ? xb : xnow) / xnow;
		struct rk_pair_outcome best = {.t_con_s = INFINITY};
		/*
		 * The setting: a slower a never shortens anything in the test
		 * (its shared run, the partner's slowed time and the GPU-seconds
		 * lost all grow with a's factor), so the feasible setting with the
		 * least accumulation slowdown is the best one; one evaluation, not
		 * one per setting. The pair alone, b's GPUs up to a's request
		 * shared, is a screen; the group test below judges the set picked.
		 */
		int best_k = 0;
		for (int k = 1; k < no; k++)
			if (opts[k].slow < opts[best_k].slow)
				best_k = k;
		double slow_k = opts[best_k].slow > 1 ? opts[best_k].slow : 1;
		struct rk_share_partner pp = {.r_s = r_b,
		                              .xi_a = xa,
		                              .rel = rel,
		                              .gpus = r->gpus[b],
		                              .shared = r->gpus[b] < g ? r->gpus[b] : g};
		double wt = t_free < r_b ? t_free : r_b;
		if (rk_group_evaluate(e_a, slow_k, 0, &pp, 1, wt, qw, &best, &e))
			best_k = -1;
		if (best_k < 0 || !best.share)
			continue;
		cands[m] = cands[i];
		cands[m].key = st->order_tcon ? best.t_con_s : -best.benefit_s;
		cands[m].slow = opts[best_k].slow > 1 ? opts[best_k].slow : 1;
		cands[m].p = (struct rk_share_partner){
		    .r_s = r_b, .xi_a = xa, .rel = rel, .gpus = r->gpus[b]};
		cands[m++].plan = opts[best_k].plan;
	}
	if (!st->ffs)
		qsort(cands, (size_t)m, sizeof(*cands), by_key);
	if (m == 0 && r->n_free < g)
		return 0; /* the free GPUs alone cannot hold a */
	/* Free GPUs first, then partners' GPUs in order until a has g. */
	int nn = c->n_nodes;
	int *want = calloc((size_t)nn, sizeof(*want));
	uint64_t *mask = calloc((size_t)nn, sizeof(*mask));
	if (!want || !mask) {
		free(want);
		free(mask);
		return RK_ENOMEM;
	}
	/*
	 * A job one node can hold shares on one node: the test prices it at its
	 * exclusive time E_a, which is its time on one node; spread over the free
	 * GPUs of one node and a partner's on another it would run slower than
	 * predicted for its whole life (the authors' consolidated variant,
	 * docs/references.md §3.4, tries one node first). The node: the one with room
	 * that has the most free GPUs (fewest shared), lowest id on ties.
	 */
	int only = -1;
	if (g <= r->max_node_gpus) {
		for (int n = 0; n < nn; n++)
			want[n] = c->nodes[n].up ? r->node_free[n] : 0; /* room per node */
		for (int i = 0; i < m; i++) {
			const struct rk_alloc *h = r->held[cands[i].who];
			for (int s = 0; s < h->n; s++) {
				int n = h->shares[s].node;
				for (int k = 0; k < c->nodes[n].gpus; k++) {
					int h0, h1;
					if (h->shares[s].gpu_mask >> k & 1 &&
					    rk_gpu_occ_holders(&r->occ, n, k, &h0, &h1) == 1)
						want[n]++;
				}
			}
		}
		for (int n = 0; n < nn; n++)
			if (want[n] >= g && (only < 0 || r->node_free[n] > r->node_free[only]))
				only = n;
		memset(want, 0, (size_t)nn * sizeof(*want));
		if (only < 0) {
			free(want);
			free(mask);
			return 0; /* no one node has room: wait */
		}
	}
	int got = 0;
	for (int n = 0; n < nn && got < g; n++)
		if (c->nodes[n].up && (only < 0 || n == only)) {
			int f = r->node_free[n];
			want[n] = f < g - got ? f : g - got;
			got += want[n];
		}
	int free_used = got;
	struct rk_plan plan = a->req_plan;
	double slow = 1.0;
	int np = 0; /* candidates that gave GPUs: the partners */
	for (int i = 0; i < m && got < g; i++) {
		const struct rk_job *jb = r->job[cands[i].who];
		int before = got;
		for (int s = 0; s < jb->alloc.n && got < g; s++) {
			int n = jb->alloc.shares[s].node;
			for (int k = 0; (only < 0 || n == only) && k < c->nodes[n].gpus && got < g;
			     k++) {
				int h0, h1;
				if (!(r->held[cands[i].who]->shares[s].gpu_mask >> k & 1) ||
				    rk_gpu_occ_holders(&r->occ, n, k, &h0, &h1) != 1)
					continue;
				mask[n] |= 1ULL << k;
				got++;
			}
		}
		if (got > before) {
			cands[i].p.shared = got - before;
			cands[np++] = cands[i]; /* i >= np: nothing unread is overwritten */
		}
		if (cands[i].plan.ga > plan.ga) {
			plan = cands[i].plan;
			slow = cands[i].slow;
		}
	}
	int ok = got == g;
	if (ok && !st->ffs && np > 0) {
		/*
		 * Every pair passing §3.3 is not enough: a runs at the slowest
		 * pair's rate while any partner is left, and each partner slows.
		 * The whole set against not sharing (a waits until g GPUs are
		 * free): rk_group_evaluate, = the pair test for one partner.
		 */
		struct rk_share_partner ps[64];
		double last = 0;
		for (int i = 0; i < np && i < 64; i++) {
			ps[i] = cands[i].p;
			last = ps[i].r_s > last ? ps[i].r_s : last;
		}
		double wait = t_free < last ? t_free : last;
		struct rk_pair_outcome o;
		struct rk_error e;
		ok = np <= 64 &&
		     !rk_group_evaluate(bsbf_remaining_s(a), slow, free_used, ps, np, wait, qw, &o,
					&e) &&
		     o.share;
	}
	int rc = ok ? commit(r, ai, want, mask, &plan, out) : 0;
	free(want);
	free(mask);
	return rc;
}
