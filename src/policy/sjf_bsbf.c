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

struct bsbf_state {
	int ffs;        /* 1 = SJF-FFS: no benefit test, first fit */
	int order_tcon; /* 1 = candidates by T_con ascending instead of benefit */
	int window;     /* pending jobs per round that may try sharing (SJF order) */
	struct rk_xi_memo memo;
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
	int who;          /* job index in the snapshot */
	double key;       /* sort key: -benefit, T_con or first GPU position */
	struct rk_plan plan;
};

/* Per round scratch, indexed by snapshot position. */
struct round {
	const struct rk_sched_input *in;
	struct rk_gpu_occ occ;
	int *free_cpus;
	int64_t *free_mem;
	double *e_rem;   /* remaining exclusive time (s), +inf unknown */
	double *mem_gpu; /* per-GPU memory of its current plan (MiB) */
	int *gpus;       /* GPUs held */
	uint64_t *th;    /* rk_xi_hash of each job's type */
	struct rk_alloc *tmp;
	struct rk_alloc *kept; /* copies of what jobs hold, GPU masks filled */
	struct bsbf_state *st;
};

static int bsbf_create_common(void **state, const char *options, struct rk_error *err, int ffs)
{
	struct bsbf_state *s = calloc(1, sizeof(*s));
	if (!s)
		return rk_error_set(err, RK_ENOMEM, "out of memory");
	s->ffs = ffs;
	s->window = 32;
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
		else if (end && end != p + 7 && !*end && w >= 1 && w <= 1000000)
			s->window = (int)w;
		else {
			rk_error_set(err, RK_EINVAL, "policy %s: unknown option '%s' (%s)",
				     ffs ? "sjf-ffs" : "sjf-bsbf", p,
				     ffs ? "window=N" : "order=benefit|tcon, window=N");
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

static void bsbf_destroy(void *state)
{
	free(state);
}

static double remaining_s(const struct rk_job *j)
{
	if (j->est_duration_s <= 0 || j->iters_total <= 0)
		return INFINITY;
	double left = 1.0 - j->iters_done / j->iters_total;
	return j->est_duration_s * (left > 0 ? left : 0);
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

static int free_on(const struct round *r, int node)
{
	int n = 0;
	for (int g = 0; g < r->in->cluster->nodes[node].gpus; g++)
		n += gpu_free(r, node, g);
	return n;
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
	struct rk_job *a = r->in->jobs[ai];
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
	int rc = rk_decisions_push(out, a->id, al, plan);
	return rc ? rc : 1;
}

/* Exclusive start: one node best fit, else most-free nodes first. */
static int start_free(struct round *r, int ai, struct rk_decisions *out)
{
	const struct rk_cluster *c = r->in->cluster;
	struct rk_job *a = r->in->jobs[ai];
	int g = a->req_gpus, nn = c->n_nodes;
	int *want = calloc((size_t)nn, sizeof(*want));
	uint64_t *none = calloc((size_t)nn, sizeof(*none));
	int *fr = calloc((size_t)nn, sizeof(*fr));
	if (!want || !none || !fr) {
		free(want);
		free(none);
		free(fr);
		return RK_ENOMEM;
	}
	int total = 0, best = -1;
	for (int n = 0; n < nn; n++) {
		fr[n] = c->nodes[n].up ? free_on(r, n) : 0;
		total += fr[n];
		if (fr[n] >= g && (best < 0 || fr[n] < fr[best]))
			best = n;
	}
	int rc = 0;
	if (best >= 0) {
		want[best] = g;
		rc = commit(r, ai, want, none, &a->req_plan, out);
	}
	if (rc == 0 && total >= g && a->req_plan.tp == 1) {
		memset(want, 0, (size_t)nn * sizeof(*want));
		for (int left = g; left > 0;) {
			int m = -1;
			for (int n = 0; n < nn; n++)
				if (fr[n] > want[n] && (m < 0 || fr[n] - want[n] > fr[m] - want[m]))
					m = n;
			int take = fr[m] - want[m] < left ? fr[m] - want[m] : left;
			want[m] += take;
			left -= take;
		}
		rc = commit(r, ai, want, none, &a->req_plan, out);
	}
	free(want);
	free(none);
	free(fr);
	return rc;
}

static int by_key(const void *p, const void *q)
{
	const struct cand *x = p, *y = q;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->who > y->who) - (x->who < y->who);
}

/* Try to start `a` sharing GPUs with running jobs (§3.4 lines 7-12). */
static int start_shared(struct bsbf_state *st, struct round *r, int ai,
			struct rk_decisions *out, struct cand *cands, int *seen)
{
	const struct rk_sched_input *in = r->in;
	const struct rk_cluster *c = in->cluster;
	struct rk_job *a = in->jobs[ai];
	if (a->req_plan.tp != 1 || a->req_plan.pp != 1)
		return 0;
	int g = a->req_gpus, n_free = 0, n_shared = 0, nc = 0;
	/* Partners in node and GPU order (first fit), each once. */
	for (int n = 0; n < c->n_nodes; n++) {
		if (!c->nodes[n].up)
			continue;
		for (int k = 0; k < c->nodes[n].gpus; k++) {
			int h0, h1, cnt = rk_gpu_occ_holders(&r->occ, n, k, &h0, &h1);
			if (cnt == 0) {
				n_free++;
				continue;
			}
			if (cnt != 1 || in->jobs[h0]->state == RK_JOB_PENDING)
				continue;
			n_shared++;
			if (seen[h0])
				continue;
			seen[h0] = 1;
			cands[nc++] = (struct cand){.who = h0, .key = (double)(r->occ.first[n] + k)};
		}
	}
	for (int i = 0; i < nc; i++)
		seen[cands[i].who] = 0;
	if (n_free + n_shared < g)
		return 0;
	/* The test (or, for FFS, the first setting that fits) per partner. */
	const struct sb_entry *sb = sb_get(st, a, in->env);
	struct rk_subbatch opts[MAX_SUBBATCH];
	int m = 0;
	for (int i = 0; i < nc; i++) {
		int b = cands[i].who;
		const struct rk_job *jb = in->jobs[b];
		int64_t gpu_mem = INT64_MAX;
		for (int s = 0; s < jb->alloc.n; s++)
			if (c->nodes[jb->alloc.shares[s].node].gpu_mem_mb < gpu_mem)
				gpu_mem = c->nodes[jb->alloc.shares[s].node].gpu_mem_mb;
		if (!isfinite(r->mem_gpu[b]))
			continue;
		struct rk_error e;
		int no = 0;
		for (int k = 0; k < sb->n; k++) /* ascending ga: the first that fits is FFS's */
			if (sb->opt[k].mem_mb + r->mem_gpu[b] <= (double)gpu_mem)
				opts[no++] = sb->opt[k];
		if (no == 0)
			continue;
		if (st->ffs) {
			cands[m++] = (struct cand){.who = b, .key = cands[i].key, .plan = opts[0].plan};
			continue;
		}
		const char *gt = c->nodes[jb->alloc.shares[0].node].gpu_type;
		double xa = rk_xi_lookup_memo_h(&st->memo, in->xi, gt, type_of(a), r->th[ai], g,
						type_of(jb), r->th[b], r->gpus[b]);
		double xb = rk_xi_lookup_memo_h(&st->memo, in->xi, gt, type_of(jb), r->th[b],
						r->gpus[b], type_of(a), r->th[ai], g);
		double e_a = remaining_s(a), e_b = r->e_rem[b];
		if (!isfinite(e_a) || !isfinite(e_b))
			continue; /* no length known: the test cannot say sharing helps */
		struct rk_pair_outcome best = {.t_con_s = INFINITY};
		int best_k = -1;
		for (int k = 0; k < no; k++) {
			struct rk_pair_outcome o;
			if (rk_pair_evaluate(e_a, e_b, xa * (opts[k].slow > 1 ? opts[k].slow : 1), xb,
					     &o, &e))
				continue;
			if (o.t_con_s < best.t_con_s) {
				best = o;
				best_k = k;
			}
		}
		if (best_k < 0 || !best.share)
			continue;
		cands[m++] = (struct cand){.who = b,
					   .key = st->order_tcon ? best.t_con_s : -best.benefit_s,
					   .plan = opts[best_k].plan};
	}
	if (!st->ffs)
		qsort(cands, (size_t)m, sizeof(*cands), by_key);
	/* Free GPUs first, then partners' GPUs in order until a has g. */
	int nn = c->n_nodes;
	int *want = calloc((size_t)nn, sizeof(*want));
	uint64_t *mask = calloc((size_t)nn, sizeof(*mask));
	if (!want || !mask) {
		free(want);
		free(mask);
		return RK_ENOMEM;
	}
	int got = 0;
	for (int n = 0; n < nn && got < g; n++)
		if (c->nodes[n].up) {
			int f = free_on(r, n);
			want[n] = f < g - got ? f : g - got;
			got += want[n];
		}
	struct rk_plan plan = a->req_plan;
	for (int i = 0; i < m && got < g; i++) {
		const struct rk_job *jb = in->jobs[cands[i].who];
		for (int s = 0; s < jb->alloc.n && got < g; s++) {
			int n = jb->alloc.shares[s].node;
			for (int k = 0; k < c->nodes[n].gpus && got < g; k++) {
				int h0, h1;
				if (!(r->kept[cands[i].who].shares[s].gpu_mask >> k & 1) ||
				    rk_gpu_occ_holders(&r->occ, n, k, &h0, &h1) != 1)
					continue;
				mask[n] |= 1ULL << k;
				got++;
			}
		}
		if (cands[i].plan.ga > plan.ga)
			plan = cands[i].plan;
	}
	int rc = got == g ? commit(r, ai, want, mask, &plan, out) : 0;
	free(want);
	free(mask);
	return rc;
}

/* GPUs nobody holds, and GPUs one running job holds alone (sharing candidates). */
static void count_gpus(const struct round *r, int *n_free, int *n_single)
{
	const struct rk_cluster *c = r->in->cluster;
	*n_free = *n_single = 0;
	for (int n = 0; n < c->n_nodes; n++)
		for (int g = 0; c->nodes[n].up && g < c->nodes[n].gpus; g++) {
			int h0, h1, k = rk_gpu_occ_holders(&r->occ, n, g, &h0, &h1);
			*n_free += k == 0;
			*n_single += k == 1 && r->in->jobs[h0]->state != RK_JOB_PENDING;
		}
}

struct order {
	double e;
	int64_t submit, id;
	int i;
};

static int by_order(const void *p, const void *q)
{
	const struct order *x = p, *y = q;
	if (x->e != y->e)
		return x->e < y->e ? -1 : 1;
	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* Min-heap on by_order. */
static void sift_down(struct order *h, int n, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && by_order(&h[l], &h[m]) < 0)
			m = l;
		if (r < n && by_order(&h[r], &h[m]) < 0)
			m = r;
		if (m == i)
			return;
		struct order t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static int bsbf_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			 struct rk_error *err)
{
	struct bsbf_state *st = state;
	const struct rk_cluster *c = in->cluster;
	int n = in->n_jobs, nn = c->n_nodes;
	size_t sz = (size_t)(n > 0 ? n : 1);
	struct round r = {.in = in};
	struct alloc_tmp {
		struct rk_alloc a;
	} tmp = {{0}};
	r.tmp = &tmp.a;
	r.free_cpus = malloc((size_t)(nn > 0 ? nn : 1) * sizeof(*r.free_cpus));
	r.free_mem = malloc((size_t)(nn > 0 ? nn : 1) * sizeof(*r.free_mem));
	r.e_rem = malloc(sz * sizeof(*r.e_rem));
	r.mem_gpu = malloc(sz * sizeof(*r.mem_gpu));
	r.gpus = calloc(sz, sizeof(*r.gpus));
	r.th = malloc(sz * sizeof(*r.th));
	struct order *q = malloc(sz * sizeof(*q));
	struct cand *cands = malloc(sz * sizeof(*cands));
	int *seen = calloc(sz, sizeof(*seen));
	struct rk_alloc *kept = calloc(sz, sizeof(*kept));
	int rc = 0, occ_ok = 0;
	if (!r.free_cpus || !r.free_mem || !r.e_rem || !r.mem_gpu || !r.gpus || !r.th || !q || !cands ||
	    !seen || !kept || rk_gpu_occ_init(&r.occ, c)) {
		rc = rk_error_set(err, RK_ENOMEM, "out of memory");
		goto out;
	}
	occ_ok = 1;
	r.kept = kept;
	r.st = st;
	for (int i = 0; i < nn; i++) {
		r.free_cpus[i] = c->nodes[i].up ? c->nodes[i].cpus : 0;
		r.free_mem[i] = c->nodes[i].up ? c->nodes[i].mem_mb : 0;
		if (!c->nodes[i].up) /* a down node's GPUs are nobody's to take */
			for (int g = 0; g < c->nodes[i].gpus; g++)
				r.occ.who[r.occ.first[i] + g][0] = r.occ.who[r.occ.first[i] + g][1] = n;
	}
	int nq = 0;
	for (int i = 0; i < n; i++) {
		const struct rk_job *j = in->jobs[i];
		r.e_rem[i] = remaining_s(j);
		r.th[i] = rk_xi_hash(type_of(j));
		r.mem_gpu[i] = INFINITY;
		if (j->alloc.n == 0) {
			if (j->state == RK_JOB_PENDING)
				q[nq++] = (struct order){r.e_rem[i], j->submit_ms, j->id, i};
			continue;
		}
		rc = rk_alloc_copy(&kept[i], &j->alloc);
		if (!rc)
			rc = rk_gpu_occ_add(&r.occ, &kept[i], i, 1, err);
		if (rc) {
			rc = rk_error_prefix(err, "job %lld (%s) holds more than its GPUs allow",
					     (long long)j->id, j->name);
			goto out;
		}
		for (int s = 0; s < j->alloc.n; s++) {
			r.free_cpus[j->alloc.shares[s].node] -= j->alloc.shares[s].cpus;
			r.free_mem[j->alloc.shares[s].node] -= j->alloc.shares[s].mem_mb;
		}
		r.gpus[i] = rk_alloc_total_gpus(&j->alloc);
		r.mem_gpu[i] = mem_get(st, j, &j->plan);
	}
	/*
	 * SJF order, lazily: a binary heap popped only while a job could still
	 * start (free GPUs for the smallest request, or sharing tries left), not
	 * a sort of the whole queue every round.
	 */
	int n_free, n_single, tried = 0, min_g = 1 << 30;
	count_gpus(&r, &n_free, &n_single);
	for (int k = 0; k < nq; k++)
		if (in->jobs[q[k].i]->req_gpus < min_g)
			min_g = in->jobs[q[k].i]->req_gpus;
	for (int k = nq / 2 - 1; k >= 0; k--)
		sift_down(q, nq, k);
	for (int hn = nq; hn > 0 && rc >= 0;) {
		if (n_free < min_g && (!in->gpu_sharing || tried >= st->window))
			break;
		struct order top = q[0];
		q[0] = q[--hn];
		sift_down(q, hn, 0);
		int g = in->jobs[top.i]->req_gpus;
		if (g > n_free + (in->gpu_sharing ? n_single : 0))
			continue; /* cannot fit even by sharing: skip without a scan */
		rc = 0;
		if (g <= n_free)
			rc = start_free(&r, top.i, out);
		if (rc == 0 && in->gpu_sharing && tried < st->window) {
			tried++; /* bounds the per-round cost of the pair tests */
			rc = start_shared(st, &r, top.i, out, cands, seen);
		}
		if (rc > 0)
			count_gpus(&r, &n_free, &n_single);
	}
	if (rc < 0)
		rc = rk_error_set(err, rc, "out of memory");
	else
		rc = 0;
out:
	if (occ_ok)
		rk_gpu_occ_fini(&r.occ);
	for (int i = 0; kept && i < n; i++)
		rk_alloc_fini(&kept[i]);
	rk_alloc_fini(&tmp.a);
	free(kept);
	free(seen);
	free(cands);
	free(q);
	free(r.gpus);
	free(r.th);
	free(r.mem_gpu);
	free(r.e_rem);
	free(r.free_mem);
	free(r.free_cpus);
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
