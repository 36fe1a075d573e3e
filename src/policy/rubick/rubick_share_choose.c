/*
 * Rubick with option sharing=on (rubick_share.c): where a pending
 * job would share and whether it pays. Per node, the candidate partners
 * (may_partner) each screened by SJF-BSBF's pair test, then the group of the
 * best of them (rk_group_evaluate) against not sharing: waiting for GPUs
 * (time_to_free), or starting alone now on fewer GPUs (fewer_alone_s). Two
 * rules keep sharing from losing to plain Rubick: no pair that delays a job
 * waiting ahead (delays_ahead, with the wait that counts the shrink phase,
 * wait_s), and a predicted gain above the model's error (try_node).
 */
#include "policy/rubick/rubick_share_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

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
					double rt = rubick_share_left_s(R, h[e]);
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
			double rt = rubick_share_left_s(R, h[e]);
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
		int run = rubick_share_corun(R, nd->gpu_type, t->r->job, t->g, b->job, b->g);
		if (run < 0)
			continue; /* measured unable to run together */
		int best = -1;
		for (int k = 0; k < t->n_opt; k++) /* the least-slow setting that fits */
			if ((run > 0 || t->opt[k].mem_mb + mem_b <= (double)nd->gpu_mem_mb) &&
			    (best < 0 || t->opt[k].slow < t->opt[best].slow))
				best = k;
		double r_b = rubick_share_left_s(R, cs[i].who);
		if (best < 0 || !isfinite(r_b))
			continue;
		double xa = rubick_share_xi(R, nd->gpu_type, t->r->job, t->g, b->job, b->g);
		double xb = rubick_share_xi(R, nd->gpu_type, b->job, b->g, t->r->job, t->g);
		double xnow = rubick_share_factor(R, cs[i].who), slow = t->opt[best].slow;
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
static void try_node(const struct round *R, const struct share_try *t, int n,
                     struct rubick_share_choice *best)
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
	struct rubick_share_choice c = {.node = n, .free_used = free_used};
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

int rubick_share_choose(struct round *R, const struct rj *r, int g,
                        struct rubick_share_choice *best)
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
		room = cl->nodes[n].gpus >= g && rubick_share_room(R, n) >= g;
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
	*best = (struct rubick_share_choice){.node = -1};
	for (int n = 0; n < cl->n_nodes; n++)
		try_node(R, &t, n, best);
	return best->np > 0;
}
