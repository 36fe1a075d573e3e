/*
 * SJF-BSBF (algorithms.md §3.4: shortest job first with best sharing benefit
 * first; Luo et al., IWQoS 2024) and its baseline SJF-FFS (§3.5: first-fit
 * sharing without the benefit test). Both preemption-free.
 *
 * Per round, pending jobs in order of remaining exclusive time E (SJF). A job
 * a whose request fits on GPUs nobody holds starts there (consolidated: one
 * node best fit when possible, else the nodes with the most such GPUs first).
 * Otherwise, when the driver allows GPU sharing (rk_sched_input.gpu_sharing),
 * each running job b that holds GPUs alone is a candidate partner:
 *  - SJF-BSBF: for every sub-batch setting of a that fits next to b in GPU
 *    memory (rk_subbatch_options, global batch unchanged), the §3.3 test with
 *    xi from the interference table (xi_a scaled by the setting's slowdown);
 *    the best setting is kept if T_con < T_seq. Candidates are taken by
 *    sharing benefit T_seq - T_con, largest first (option order=tcon: by
 *    T_con ascending, as the authors' code does, §3.4 note);
 *  - SJF-FFS: every partner whose GPUs fit a's smallest-memory-enough setting,
 *    in node and GPU order, with no test.
 * a then runs on the free GPUs plus the partners' GPUs, with the largest
 * accumulation any picked partner needed (memory falls as ga grows, so it
 * fits next to every one of them). Only data-parallel-family plans (tp = pp
 * = 1) share; others wait for free GPUs. To bound a round's cost, only the
 * first `window` pending jobs (option window=N, default 32) that cannot
 * start on free GPUs try sharing. docs/sharing.md lists the choices.
 */
#include "rubick/policy.h"
#include "rubick/sharing.h"

#include "rubick/placement.h"
#include "sjf_queue.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SUBBATCH 32


/* Sub-batch settings of one (model, batch, plan) with no partner: memory then filters. */
#define SB_CACHE 64
struct sb_entry {
	const struct rk_model *model;
	const struct rk_perf_env *env;
	int batch;
	struct rk_plan plan;
	int n;
	struct rk_subbatch opt[MAX_SUBBATCH];
};

/* The round's arrays, kept across rounds: scratch_grow(). */
struct scratch {
	int cap, cap_nodes;
	int *free_cpus, *node_free, *node_single; /* per node */
	int64_t *free_mem;
	double *e_rem, *mem_gpu, *xcur; /* per job, as in struct round */
	double *gfree;                  /* per GPU, as in struct round */
	int cap_gpus;
	int *gpus, *side, *seen;
	int64_t *gpu_mem;
	struct rk_job **job;
	struct cand *cands, *part;
	struct rk_alloc *kept;
	const struct rk_alloc **held;
};

struct bsbf_state {
	int ffs;        /* 1 = SJF-FFS: no benefit test, first fit */
	int order_tcon; /* 1 = candidates by T_con ascending instead of benefit */
	int window;     /* pending jobs per round that may try sharing (SJF order) */
	int consolidated;         /* placement=consolidated: a job one node holds starts on one */
	struct rk_xi_pairs pairs; /* interference answers by interned job sides */
	struct rk_sjfq queue;     /* waiting jobs, kept across rounds */
	struct scratch w;
	struct sb_entry sb[SB_CACHE];
	int sb_next;    /* round-robin replacement */
	struct mem_entry {
		const struct rk_model *model;
		struct rk_plan plan;
		double mb;
	} mem[SB_CACHE]; /* per-GPU memory of (model, plan): the memory model, once */
	int mem_next;
};

/* Per-GPU memory of `j` running `plan`, cached; +inf when the model cannot price it. */
static double mem_get(struct bsbf_state *st, const struct rk_job *j, const struct rk_plan *plan)
{
	for (int i = 0; i < SB_CACHE; i++)
		if (st->mem[i].model == j->model && rk_plan_equal(&st->mem[i].plan, plan))
			return st->mem[i].mb;
	struct mem_entry *e = &st->mem[st->mem_next];
	st->mem_next = (st->mem_next + 1) % SB_CACHE;
	struct rk_error err;
	e->model = j->model;
	e->plan = *plan;
	if (rk_job_gpu_mem_mb(j, plan, &e->mb, &err))
		e->mb = INFINITY; /* never a partner */
	return e->mb;
}

/* The settings of `a` from the cache (computed once per model, batch and plan). */
static const struct sb_entry *sb_get(struct bsbf_state *st, const struct rk_job *a,
				     const struct rk_perf_env *env)
{
	for (int i = 0; i < SB_CACHE; i++) {
		struct sb_entry *e = &st->sb[i];
		if (e->model == a->model && e->env == env && e->batch == a->global_batch &&
		    rk_plan_equal(&e->plan, &a->req_plan))
			return e;
	}
	struct sb_entry *e = &st->sb[st->sb_next];
	st->sb_next = (st->sb_next + 1) % SB_CACHE;
	struct rk_error err;
	e->model = a->model;
	e->env = env;
	e->batch = a->global_batch;
	e->plan = a->req_plan;
	e->n = rk_subbatch_options(a->model, a->global_batch, &a->req_plan, 0, INT64_MAX / 4, env,
				   e->opt, MAX_SUBBATCH, &err);
	if (e->n < 0)
		e->n = 0;
	return e;
}

struct cand {
	int who;          /* the round's job number */
	double key;       /* sort key: -benefit, T_con or first GPU position */
	int64_t tie[2];   /* then the snapshot order: (0, position) or (submit, id) */
	struct rk_plan plan;
	double slow;               /* the plan's accumulation slowdown of a (>= 1) */
	struct rk_share_partner p; /* the partner as the group test sees it */
};

#define SIDE_UNSET (-1000) /* struct round.side not interned yet (errors are > it) */

/*
 * Per round scratch, indexed by the round's own job numbers: the jobs holding
 * resources first, then each waiting job as the round takes it from the
 * queue. Ties between equally good partners go to the earlier snapshot
 * position (struct cand.tie), whatever the numbering.
 */
struct round {
	const struct rk_sched_input *in;
	struct rk_job **job; /* by round number */
	struct rk_gpu_occ occ;
	int *free_cpus;
	int64_t *free_mem;
	double *e_rem;   /* remaining exclusive time (s), +inf unknown */
	double *mem_gpu; /* per-GPU memory of its current plan (MiB) */
	double *xcur;    /* running jobs: present sharing factor (1 alone), NAN = not yet known */
	double *gfree;   /* per GPU: seconds until nobody holds it, sorted; n_gfree valid */
	int n_gfree;     /* -1 = not computed since the last scan() */
	int *gpus;       /* GPUs held */
	int *side;       /* running jobs: rk_xi_pairs id on their GPUs, < 0 none */
	int64_t *gpu_mem; /* running jobs: smallest GPU memory of their nodes (MiB) */
	struct rk_alloc *tmp;
	struct rk_alloc *kept; /* copies of what jobs hold, GPU masks filled */
	const struct rk_alloc **held; /* running jobs: what they hold, GPU masks named */
	struct bsbf_state *st;
	/*
	 * The GPUs as they stand, from scan(): rebuilt after every start (the
	 * only thing that changes them in a round), not by every sharing try.
	 */
	int *node_free;       /* GPUs nobody holds, per node (0 on a down node) */
	int *node_single;     /* GPUs one running job holds alone, per node */
	int max_node_gpus;    /* GPUs of the largest up node */
	int n_free, n_single; /* GPUs nobody holds; GPUs one running job holds alone */
	struct cand *part;    /* running jobs holding a GPU alone, by their first such GPU */
	int n_part;
	int *seen;            /* scratch of scan(), all 0 between calls */
	int n_round;          /* round numbers in use (holders, then jobs taken) */
	int n_hold;           /* of them, the holders */
	int n_waiting;        /* jobs queued at the round's start */
	int total_gpus;       /* GPUs of the up nodes */
};

static double remaining_s(const struct rk_job *j)
{
	if (j->est_duration_s <= 0 || j->iters_total <= 0)
		return INFINITY;
	double left = 1.0 - j->iters_done / j->iters_total;
	return j->est_duration_s * (left > 0 ? left : 0);
}

static int bsbf_create_common(void **state, const char *options, struct rk_error *err, int ffs)
{
	struct bsbf_state *s = calloc(1, sizeof(*s));
	if (!s)
		return rk_error_set(err, RK_ENOMEM, "out of memory");
	s->ffs = ffs;
	s->window = 32;
	rk_xi_pairs_init(&s->pairs);
	rk_sjfq_init(&s->queue, remaining_s);
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", options ? options : "");
	for (char *p = buf; *p;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		char *end = NULL;
		long w = !strncmp(p, "window=", 7) ? strtol(p + 7, &end, 10) : 0;
		if (!ffs && !strcmp(p, "order=tcon"))
			s->order_tcon = 1;
		else if (!ffs && !strcmp(p, "order=benefit"))
			s->order_tcon = 0;
		else if (!strcmp(p, "placement=consolidated"))
			s->consolidated = 1;
		else if (!strcmp(p, "placement=spread"))
			s->consolidated = 0;
		else if (end && end != p + 7 && !*end && w >= 1 && w <= 1000000)
			s->window = (int)w;
		else {
			rk_error_set(
			    err, RK_EINVAL, "policy %s: unknown option '%s' (%s)",
			    ffs ? "sjf-ffs" : "sjf-bsbf", p,
			    ffs ? "placement=spread|consolidated, window=N"
			        : "order=benefit|tcon, placement=spread|consolidated, window=N");
			free(s);
			return RK_EINVAL;
		}
		p = comma ? comma + 1 : p + strlen(p);
	}
	*state = s;
	return 0;
}

static int bsbf_create(void **state, const char *options, struct rk_error *err)
{
	return bsbf_create_common(state, options, err, 0);
}

static int ffs_create(void **state, const char *options, struct rk_error *err)
{
	return bsbf_create_common(state, options, err, 1);
}

static void scratch_fini(struct scratch *w);

static void bsbf_destroy(void *state)
{
	struct bsbf_state *s = state;
	if (s) {
		rk_xi_pairs_fini(&s->pairs);
		rk_sjfq_fini(&s->queue);
		scratch_fini(&s->w);
	}
	free(s);
}

static const char *type_of(const struct rk_job *j)
{
	return j->job_type[0] ? j->job_type : j->model->name;
}

/*
 * CPUs and memory of a job on `node`: its per-GPU request for every GPU it
 * holds alone (required: 0 = the node lacks them), and for shared GPUs up to
 * half of that from what the node has left (the partner already holds the
 * GPU's share; the GPU, not the host, is what the pair contends for).
 */
static int node_need(const struct rk_place_req *req, const struct rk_node *nd, int whole,
		     int shared, int free_cpus, int64_t free_mem, int *cpus, int64_t *mem)
{
	int c = req->cpus_per_gpu == RK_SHARE_PROPORTIONAL ? nd->cpus / (nd->gpus ? nd->gpus : 1)
							    : req->cpus_per_gpu;
	int64_t m = req->mem_mb_per_gpu == RK_SHARE_PROPORTIONAL
			    ? nd->mem_mb / (nd->gpus ? nd->gpus : 1)
			    : req->mem_mb_per_gpu;
	*cpus = c * whole;
	*mem = m * whole;
	if (*cpus > free_cpus || *mem > free_mem)
		return 0;
	int sc = (c * shared + 1) / 2;
	int64_t sm = (m * shared + 1) / 2;
	*cpus += sc < free_cpus - *cpus ? sc : free_cpus - *cpus;
	*mem += sm < free_mem - *mem ? sm : free_mem - *mem;
	return 1;
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
static void scan(struct round *r)
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
 * remaining time is e_rem x this (issue 15: the §3.3 test with the partner's
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
		if (!node_need(&req, &c->nodes[n], want[n], sh, r->free_cpus[n], r->free_mem[n],
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
	r->e_rem[ai] = remaining_s(a);
	r->gpus[ai] = rk_alloc_total_gpus(al);
	r->mem_gpu[ai] = mem_get(r->st, a, plan);
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
static int start_free(struct round *r, int ai, struct rk_decisions *out)
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
	 * node holds waits for one node, or shares on one (start_shared). */
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
static int start_shared(struct bsbf_state *st, struct round *r, int ai,
			struct rk_decisions *out, struct cand *cands)
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
	/* Partners in node and GPU order (first fit), each once: scan()'s list. */
	memcpy(cands, r->part, (size_t)nc * sizeof(*cands));
	/* The test (or, for FFS, the first setting that fits) per partner. */
	const struct sb_entry *sb = sb_get(st, a, in->env);
	struct rk_subbatch opts[MAX_SUBBATCH];
	const char *side_gt = NULL; /* a's interned side is per GPU type */
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
		for (int k = 0; k < sb->n; k++) /* ascending ga: the first that fits is FFS's */
			if (sb->opt[k].mem_mb + r->mem_gpu[b] <= (double)r->gpu_mem[b])
				opts[no++] = sb->opt[k];
		if (no == 0)
			continue;
		if (st->ffs) {
			cands[m] = cands[i];
			cands[m++].plan = opts[0].plan;
			continue;
		}
		const char *gt = c->nodes[jb->alloc.shares[0].node].gpu_type;
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
		double e_a = remaining_s(a), e_b = r->e_rem[b];
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
	 * algorithms.md §3.4, tries one node first). The node: the one with room
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
		ok =
		    np <= 64 &&
		    !rk_group_evaluate(remaining_s(a), slow, free_used, ps, np, wait, qw, &o, &e) &&
		    o.share;
	}
	int rc = ok ? commit(r, ai, want, mask, &plan, out) : 0;
	free(want);
	free(mask);
	return rc;
}

/*
 * The round's per-job and per-node arrays, kept across rounds (grown, never
 * shrunk): a round of a saturated cluster is short, and allocating and
 * clearing arrays of every active job each time was a good part of it.
 * Invariants between rounds: kept[] all empty, seen[] all 0.
 */
static int scratch_grow(struct bsbf_state *st, int n, int nn, int ng)
{
	struct scratch *w = &st->w;
	if (ng > w->cap_gpus) {
		double *gf = realloc(w->gfree, (size_t)ng * sizeof(*gf));
		if (!gf)
			return RK_ENOMEM;
		w->gfree = gf;
		w->cap_gpus = ng;
	}
	if (nn > w->cap_nodes) {
		int *fc = realloc(w->free_cpus, (size_t)nn * sizeof(*fc));
		if (fc)
			w->free_cpus = fc;
		int64_t *fm = realloc(w->free_mem, (size_t)nn * sizeof(*fm));
		if (fm)
			w->free_mem = fm;
		int *nf = realloc(w->node_free, (size_t)nn * sizeof(*nf));
		if (nf)
			w->node_free = nf;
		int *ns = realloc(w->node_single, (size_t)nn * sizeof(*ns));
		if (ns)
			w->node_single = ns;
		if (!fc || !fm || !nf || !ns)
			return RK_ENOMEM;
		w->cap_nodes = nn;
	}
	if (n <= w->cap)
		return 0;
	int cap = n > 2 * w->cap ? n : 2 * w->cap;
	size_t z = (size_t)cap;
#define GROW(f)                                                                        \
	do {                                                                           \
		void *p_ = realloc(w->f, z * sizeof(*w->f));                           \
		if (!p_)                                                               \
			return RK_ENOMEM;                                              \
		w->f = p_;                                                             \
	} while (0)
	GROW(e_rem);
	GROW(mem_gpu);
	GROW(xcur);
	GROW(gpus);
	GROW(side);
	GROW(gpu_mem);
	GROW(job);
	GROW(cands);
	GROW(part);
	GROW(seen);
	GROW(kept);
	GROW(held);
#undef GROW
	memset(w->seen + w->cap, 0, (z - (size_t)w->cap) * sizeof(*w->seen));
	memset(w->kept + w->cap, 0, (z - (size_t)w->cap) * sizeof(*w->kept));
	w->cap = cap;
	return 0;
}

static void scratch_fini(struct scratch *w)
{
	for (int i = 0; i < w->cap; i++)
		rk_alloc_fini(&w->kept[i]);
	free(w->free_cpus);
	free(w->free_mem);
	free(w->node_free);
	free(w->node_single);
	free(w->e_rem);
	free(w->mem_gpu);
	free(w->xcur);
	free(w->gfree);
	free(w->gpus);
	free(w->side);
	free(w->gpu_mem);
	free(w->job);
	free(w->cands);
	free(w->part);
	free(w->seen);
	free(w->kept);
	free(w->held);
}

/* What running job i holds, into the round's occupancy and free CPUs/memory. */
static int take_running(struct bsbf_state *st, struct round *r, int i, struct rk_error *err)
{
	const struct rk_sched_input *in = r->in;
	const struct rk_cluster *c = in->cluster;
	const struct rk_job *j = r->job[i];
	int named = 1; /* every share names its GPUs: use it as it is, no copy */
	for (int s = 0; s < j->alloc.n; s++)
		named &= j->alloc.shares[s].gpu_mask != 0;
	int rc = 0;
	if (named) {
		r->held[i] = &j->alloc;
		rc = rk_gpu_occ_add(&r->occ, &r->job[i]->alloc, i, 0, err); /* writes nothing */
	} else {
		r->held[i] = &r->kept[i];
		rc = rk_alloc_copy(&r->kept[i], &j->alloc);
		if (!rc)
			rc = rk_gpu_occ_add(&r->occ, &r->kept[i], i, 1, err);
	}
	if (rc)
		return rc;
	r->gpu_mem[i] = INT64_MAX;
	for (int s = 0; s < j->alloc.n; s++) {
		const struct rk_share *sh = &j->alloc.shares[s];
		r->free_cpus[sh->node] -= sh->cpus;
		r->free_mem[sh->node] -= sh->mem_mb;
		if (c->nodes[sh->node].gpu_mem_mb < r->gpu_mem[i])
			r->gpu_mem[i] = c->nodes[sh->node].gpu_mem_mb;
	}
	r->gpus[i] = rk_alloc_total_gpus(&j->alloc);
	r->mem_gpu[i] = mem_get(st, j, &j->plan);
	r->side[i] = SIDE_UNSET; /* interned when a pair test first needs it */
	r->xcur[i] = NAN;        /* from the occupancy once every holder is in */
	return 0;
}

static int bsbf_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			 struct rk_error *err)
{
	struct bsbf_state *st = state;
	const struct rk_cluster *c = in->cluster;
	int n = in->n_jobs, nn = c->n_nodes;
	struct round r = {.in = in};
	struct scratch *w = &st->w;
	struct alloc_tmp {
		struct rk_alloc a;
	} tmp = {{0}};
	r.tmp = &tmp.a;
	int rc = 0, occ_ok = 0, nh = 0;
	int ng = 0;
	for (int i = 0; i < nn; i++)
		ng += c->nodes[i].gpus;
	if (scratch_grow(st, n > 0 ? n : 1, nn > 0 ? nn : 1, ng > 0 ? ng : 1) ||
	    rk_gpu_occ_init(&r.occ, c) || rk_sjfq_sync(&st->queue, in)) {
		rc = rk_error_set(err, RK_ENOMEM, "out of memory");
		goto out;
	}
	occ_ok = 1;
	r.job = w->job;
	r.free_cpus = w->free_cpus;
	r.free_mem = w->free_mem;
	r.node_free = w->node_free;
	r.node_single = w->node_single;
	r.max_node_gpus = 0;
	for (int i = 0; i < nn; i++)
		if (c->nodes[i].up && c->nodes[i].gpus > r.max_node_gpus)
			r.max_node_gpus = c->nodes[i].gpus;
	r.e_rem = w->e_rem;
	r.mem_gpu = w->mem_gpu;
	r.xcur = w->xcur;
	r.gfree = w->gfree;
	r.n_gfree = -1;
	r.gpus = w->gpus;
	r.side = w->side;
	r.gpu_mem = w->gpu_mem;
	r.kept = w->kept;
	r.held = w->held;
	r.part = w->part;
	r.seen = w->seen;
	r.st = st;
	for (int i = 0; i < nn; i++) {
		r.free_cpus[i] = c->nodes[i].up ? c->nodes[i].cpus : 0;
		r.free_mem[i] = c->nodes[i].up ? c->nodes[i].mem_mb : 0;
		/* A down node's GPUs are nobody's to take: two holders no job is. */
		for (int g = 0; !c->nodes[i].up && g < c->nodes[i].gpus; g++) {
			int *who = r.occ.who[r.occ.first[i] + g];
			who[0] = who[1] = INT_MAX;
		}
	}
	/* Holders: the change feed lists them (any order); otherwise the snapshot. */
	if (in->incremental) {
		for (int k = 0; k < in->n_holders && nh < n; k++)
			r.job[nh++] = in->holders[k];
	} else {
		for (int i = 0; i < n; i++)
			if (in->jobs[i]->alloc.n > 0)
				r.job[nh++] = in->jobs[i];
	}
	r.n_round = r.n_hold = nh;
	r.n_waiting = 0;
	for (int k = 0; k < st->queue.n_sz; k++)
		r.n_waiting += st->queue.sz[k].n - st->queue.sz[k].dead;
	r.total_gpus = 0;
	for (int i = 0; i < nn; i++)
		r.total_gpus += c->nodes[i].up ? c->nodes[i].gpus : 0;
	for (int i = 0; i < nh; i++) {
		r.e_rem[i] = remaining_s(r.job[i]);
		rc = take_running(st, &r, i, err);
		if (rc) {
			rc = rk_error_prefix(err, "job %lld (%s) holds more than its GPUs allow",
					     (long long)r.job[i]->id, r.job[i]->name);
			goto out;
		}
	}
	/*
	 * SJF order from the kept queue, walked only while a job could still
	 * act (sjf_queue.h), not a sort of the whole queue.
	 */
	scan(&r);
	int tried = 0, nl = nh, min_g = rk_sjfq_min_gpus(&st->queue);
	for (; rc >= 0 && nl < n;) {
		if (r.n_free < min_g && (!in->gpu_sharing || tried >= st->window))
			break;
		/*
		 * A job larger than the free GPUs plus, while sharing tries are
		 * left, the GPUs a running job holds alone can do nothing this
		 * round; both counts only fall as jobs start, so such a job would
		 * never act later either: take the first job in SJF order among
		 * the sizes that still can.
		 */
		int cap = r.n_free + (in->gpu_sharing && tried < st->window ? r.n_single : 0);
		struct rk_job *top = rk_sjfq_next(&st->queue, cap);
		if (!top)
			break;
		int ai = nl++;
		r.n_round = nl;
		r.job[ai] = top;
		r.e_rem[ai] = remaining_s(top);
		r.mem_gpu[ai] = INFINITY;
		r.gpus[ai] = 0;
		rc = 0;
		if (top->req_gpus <= r.n_free)
			rc = start_free(&r, ai, out);
		if (rc == 0 && in->gpu_sharing && tried < st->window) {
			tried++; /* bounds the per-round cost of the pair tests */
			rc = start_shared(st, &r, ai, out, w->cands);
		}
		if (rc > 0)
			scan(&r); /* a start is the only change to the GPUs */
	}
	if (rc < 0)
		rc = rk_error_set(err, rc, "out of memory");
	else
		rc = 0;
out:
	if (rc)
		st->queue.synced = 0; /* the driver's feed moves on: start afresh next round */
	if (occ_ok)
		rk_gpu_occ_fini(&r.occ);
	for (int k = 0; k < r.n_round; k++)
		rk_alloc_fini(&w->kept[k]); /* holders' copies and this round's starts */
	rk_alloc_fini(&tmp.a);
	return rc;
}

const struct rk_policy_ops rk_policy_sjf_bsbf = {
	.name = "sjf-bsbf",
	.summary = "SJF-BSBF: SJF, shares GPUs with the running job of best sharing benefit "
		   "(§3.3 test, sub-batching); no preemption; needs --sharing on",
	.create = bsbf_create,
	.destroy = bsbf_destroy,
	.schedule = bsbf_schedule,
	.flags = RK_POLICY_IDLE_NOOP | RK_POLICY_EVENT_DRIVEN,
};

const struct rk_policy_ops rk_policy_sjf_ffs = {
	.name = "sjf-ffs",
	.summary = "SJF-FFS: SJF, first-fit GPU sharing whenever memory fits (no benefit "
		   "test); no preemption; needs --sharing on",
	.create = ffs_create,
	.destroy = bsbf_destroy,
	.schedule = bsbf_schedule,
	.flags = RK_POLICY_IDLE_NOOP | RK_POLICY_EVENT_DRIVEN,
};
