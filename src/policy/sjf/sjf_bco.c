/*
 * SJF-BCO (docs/references.md §4.3: smallest job first with balanced contention
 * and overhead; Yu et al., MobiHoc 2022) and the placement baselines the
 * issue compares it with under the same order: first fit, best fit and a
 * seeded random placement. All gang-scheduled and preemption-free; a placed
 * job keeps its placement to the end (§4.2).
 *
 * Order ("smallest job first"): size = GPUs x remaining exclusive time, the
 * GPU-seconds left at the request (§4.3 line 3 with the trace's measured
 * time standing in for F_j * tau_j); ties by submission, then id.
 *
 * SJF-BCO, per round (docs/sharing.md gives the reconstruction's choices):
 * for every contention cap u = 1..U (option u_max, default 4) it runs a list
 * schedule of the running jobs and the first `lookahead` (default 16)
 * pending jobs in size order (sizes with tau^u), with the per-iteration
 * time of §4.2 under the cap:
 *   tau^u_j(n) = t_j                                              n = 1
 *              = t_j + 2(G-1)/G * m_j * u / b_ex + (n-1) * ovh      n >= 2
 * t_j = the job's measured exclusive iteration time at its request, m_j its
 * gradient bytes, b_ex the slowest NIC. A job goes on one node when one has
 * room (best fit); otherwise on the fewest nodes among those carrying fewer
 * than u cross-node jobs, preferring the lowest contention. It keeps the cap
 * whose schedule has the smallest predicted makespan and starts the jobs
 * that schedule starts now. A round where no pending job fits decides
 * nothing, whatever the cap (the common case on a loaded cluster).
 */
#include "rubick/policy.h"

#include "rubick/perf.h"
#include "rubick/placement.h"
#include "rubick/sharing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum bco_kind { K_FF, K_BF, K_RANDOM, K_BCO };

struct bco_state {
	enum bco_kind kind;
	int u_max;          /* contention caps tried */
	int lookahead;      /* pending jobs in the predicted schedule */
	double overhead_ms; /* ξ per extra node */
	/* per-round scratch kept across rounds (no page faults on big fresh blocks) */
	void *q, *runs, *live;
	int cap_jobs;
};

static int parse_int(const char *v, int lo, int hi, int *out)
{
	char *end;
	long x = strtol(v, &end, 10);
	if (end == v || *end || x < lo || x > hi)
		return -1;
	*out = (int)x;
	return 0;
}

static int create_kind(void **state, const char *options, struct rk_error *err,
		       enum bco_kind kind, const char *name)
{
	struct bco_state *s = calloc(1, sizeof(*s));
	if (!s)
		return rk_error_set(err, RK_ENOMEM, "out of memory");
	s->kind = kind;
	s->u_max = 4;
	s->lookahead = 16;
	s->overhead_ms = 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", options ? options : "");
	for (char *p = buf; *p;) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		char item[256];
		snprintf(item, sizeof(item), "%s", p);
		char *eq = strchr(p, '=');
		int bad = kind != K_BCO || !eq;
		if (!bad) {
			*eq = '\0';
			const char *v = eq + 1;
			if (!strcmp(p, "u_max"))
				bad = parse_int(v, 1, 64, &s->u_max);
			else if (!strcmp(p, "lookahead"))
				bad = parse_int(v, 1, 100000, &s->lookahead);
			else if (!strcmp(p, "overhead_ms")) {
				char *end;
				s->overhead_ms = strtod(v, &end);
				bad = end == v || *end || !(s->overhead_ms >= 0) ||
				      !isfinite(s->overhead_ms);
			} else
				bad = 1;
		}
		if (bad) {
			free(s);
			return rk_error_set(err, RK_EINVAL, "policy %s: bad option '%s' (%s)", name,
					    item, kind == K_BCO ? "u_max=1..64, lookahead=N, "
							       "overhead_ms=MS" : "takes none");
		}
		p = comma ? comma + 1 : p + strlen(p);
	}
	*state = s;
	return 0;
}

static int ff_create(void **s, const char *o, struct rk_error *e)
{
	return create_kind(s, o, e, K_FF, "sjf-ff");
}
static int bf_create(void **s, const char *o, struct rk_error *e)
{
	return create_kind(s, o, e, K_BF, "sjf-bf");
}
static int rnd_create(void **s, const char *o, struct rk_error *e)
{
	return create_kind(s, o, e, K_RANDOM, "sjf-random");
}
static int bco_create(void **s, const char *o, struct rk_error *e)
{
	return create_kind(s, o, e, K_BCO, "sjf-bco");
}
static void bco_destroy(void *state)
{
	struct bco_state *s = state;
	if (s) {
		free(s->q);
		free(s->runs);
		free(s->live);
	}
	free(s);
}

/* ---- the round ----------------------------------------------------------- */

struct pjob {
	int i;            /* snapshot index */
	int gpus;
	double t_iter_s;  /* exclusive iteration time at the request (s) */
	double iters_left;
	double grad_gb;
	double size;      /* ordering key */
	int nodes[RK_PLACEMENT_MAX_NODES], per[RK_PLACEMENT_MAX_NODES], n_nodes;
};

struct ctx {
	const struct rk_sched_input *in;
	const struct bco_state *st;
	int nn;
	int *free_g;    /* free GPUs per node (simulation) */
	int *k;         /* cross-node jobs per node (simulation) */
	int *usable;    /* GPUs a job can take per node now (CPUs and memory), scratch */
	double b_ex;    /* slowest NIC (GB/s) */
	int per_node;   /* most GPUs of a node */
	int *perm;      /* node order scratch */
};

static double tau_s(const struct ctx *c, const struct pjob *j, int n, int u)
{
	if (n <= 1)
		return j->t_iter_s;
	return j->t_iter_s + 2.0 * (j->gpus - 1) / j->gpus * j->grad_gb * u / c->b_ex +
	       (n - 1) * c->st->overhead_ms / 1000.0;
}

/*
 * Where `j` goes on the free GPUs `cap_g` (per node) under the policy's rule;
 * `u` = contention cap (SJF-BCO). Fills j->nodes/per; 0 = does not fit.
 */
static int place(struct ctx *c, struct pjob *j, const int *cap_g, int u, uint64_t seed)
{
	int nn = c->nn, g = j->gpus, total = 0, m = 0;
	if (c->st->kind == K_BCO) /* §4.3 line 6: src/policy/sharing/coloc_place.c */
		return rk_contention_choose(cap_g, c->k, nn, g, u, c->perm, j->nodes, j->per,
					    &j->n_nodes);
	for (int n = 0; n < nn; n++)
		total += cap_g[n];
	if (total < g)
		return 0;
	j->n_nodes = 0;
	int best = -1;
	if (c->st->kind == K_BF)
		for (int n = 0; n < nn; n++)
			if (cap_g[n] >= g && (best < 0 || cap_g[n] < cap_g[best]))
				best = n;
	if (best >= 0) { /* one node, best fit: no ring over the NIC */
		j->nodes[0] = best;
		j->per[0] = g;
		j->n_nodes = 1;
		return 1;
	}
	int *v = c->perm;
	for (int n = 0; n < nn; n++)
		if (cap_g[n] > 0)
			v[m++] = n;
	if (c->st->kind == K_BF) {
		rk_nodes_sort_by(v, m, cap_g, 0); /* fullest nodes first */
	} else if (c->st->kind == K_RANDOM) {
		uint64_t z = seed;
		for (int i = m - 1; i > 0; i--) { /* Fisher-Yates with splitmix64 */
			z += 0x9e3779b97f4a7c15ULL;
			uint64_t x = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
			x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
			x ^= x >> 31;
			int r = (int)(x % (uint64_t)(i + 1));
			int t = v[i];
			v[i] = v[r];
			v[r] = t;
		}
	}
	for (int i = 0, left = g; i < m && left > 0; i++) {
		int take = cap_g[v[i]] < left ? cap_g[v[i]] : left;
		if (j->n_nodes == RK_PLACEMENT_MAX_NODES)
			return 0;
		j->nodes[j->n_nodes] = v[i];
		j->per[j->n_nodes++] = take;
		left -= take;
		if (i == m - 1 && left > 0)
			return 0;
	}
	return 1;
}

struct run {
	double end_s;
	int n_nodes;
	int nodes[RK_PLACEMENT_MAX_NODES], per[RK_PLACEMENT_MAX_NODES];
};

static void take(struct ctx *c, const int *nodes, const int *per, int n, int sign)
{
	for (int i = 0; i < n; i++) {
		c->free_g[nodes[i]] -= sign * per[i];
		if (n >= 2)
			c->k[nodes[i]] += sign;
	}
}

/*
 * Predicted makespan (s from now) of list-scheduling `q` (nq jobs, order
 * given) after the running jobs, under cap u.
 */
static double simulate(struct ctx *c, struct pjob *q0, const int *ord, int nq,
		       struct run *runs, int nr, int u, const int *free0, const int *k0)
{
	int nn = c->nn;
	memcpy(c->free_g, free0, (size_t)nn * sizeof(int));
	memcpy(c->k, k0, (size_t)nn * sizeof(int));
	char *done = calloc((size_t)(nq > 0 ? nq : 1), 1);
	struct run *live = c->st->live; /* cap_jobs + 1 >= nr + nq entries */
	int *capg = malloc((size_t)nn * sizeof(int));
	if (!done || !capg) {
		free(done);
		free(capg);
		return INFINITY;
	}
	int nl = nr;
	memcpy(live, runs, (size_t)nr * sizeof(*live));
	double t = 0, makespan = 0;
	for (int i = 0; i < nr; i++)
		if (runs[i].end_s > makespan)
			makespan = runs[i].end_s;
	int left = nq;
	while (left > 0) {
		int free_total = 0;
		for (int n = 0; n < nn; n++) {
			capg[n] = c->free_g[n];
			free_total += capg[n];
		}
		for (int i = 0; i < nq && free_total > 0; i++) {
			struct pjob *qi = &q0[ord[i]];
			if (done[i] || qi->gpus > free_total)
				continue;
			if (!place(c, qi, capg, u, 0))
				continue;
			done[i] = 1;
			left--;
			take(c, qi->nodes, qi->per, qi->n_nodes, 1);
			for (int s = 0; s < qi->n_nodes; s++) {
				capg[qi->nodes[s]] -= qi->per[s];
				free_total -= qi->per[s];
			}
			struct run *r = &live[nl++];
			r->end_s = t + qi->iters_left * tau_s(c, qi, qi->n_nodes, u);
			r->n_nodes = qi->n_nodes;
			memcpy(r->nodes, qi->nodes, sizeof(r->nodes));
			memcpy(r->per, qi->per, sizeof(r->per));
			if (r->end_s > makespan)
				makespan = r->end_s;
		}
		if (left == 0)
			break;
		/* Advance to the next completion and release it. */
		int nx = -1;
		for (int i = 0; i < nl; i++)
			if (live[i].end_s >= t && (nx < 0 || live[i].end_s < live[nx].end_s))
				nx = i;
		if (nx < 0 || !isfinite(live[nx].end_s))
			break; /* nothing ever ends: the rest cannot be placed */
		t = live[nx].end_s > t ? live[nx].end_s : t + 1e-9;
		take(c, live[nx].nodes, live[nx].per, live[nx].n_nodes, -1);
		live[nx] = live[--nl];
	}
	free(done);
	free(capg);
	return left > 0 ? INFINITY : makespan;
}

struct skey {
	double size;
	int i; /* snapshot index: the tie-break (arrival order of the snapshot) */
	int q; /* position in the pending array */
};

static int key_less(const struct skey *x, const struct skey *y)
{
	return x->size != y->size ? x->size < y->size : x->i < y->i;
}

static int by_key(const void *p, const void *q)
{
	const struct skey *x = p, *y = q;
	return key_less(x, y) ? -1 : key_less(y, x);
}

/* Min-heap on key_less. */
static void key_sift(struct skey *h, int n, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && key_less(&h[l], &h[m]))
			m = l;
		if (r < n && key_less(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		struct skey t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/*
 * The k smallest keys of v[0..n), sorted, into out (a bounded max-heap:
 * O(n log k), not a sort of the whole queue every round).
 */
static int smallest(const struct skey *v, int n, int k, struct skey *out)
{
	int m = 0;
	for (int i = 0; i < n; i++) {
		if (m < k) {
			int j = m++;
			out[j] = v[i];
			while (j > 0 && key_less(&out[(j - 1) / 2], &out[j])) {
				struct skey t = out[j];
				out[j] = out[(j - 1) / 2];
				out[(j - 1) / 2] = t;
				j = (j - 1) / 2;
			}
		} else if (key_less(&v[i], &out[0])) {
			out[0] = v[i];
			for (int j = 0;;) {
				int l = 2 * j + 1, r = l + 1, b = j;
				if (l < m && key_less(&out[b], &out[l]))
					b = l;
				if (r < m && key_less(&out[b], &out[r]))
					b = r;
				if (b == j)
					break;
				struct skey t = out[j];
				out[j] = out[b];
				out[b] = t;
				j = b;
			}
		}
	}
	qsort(out, (size_t)m, sizeof(*out), by_key);
	return m;
}

static int bco_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			struct rk_error *err)
{
	struct bco_state *st = state;
	const struct rk_cluster *cl = in->cluster;
	int nn = cl->n_nodes, n = in->n_jobs;
	struct rk_capacity cap = {0};
	int rc = rk_capacity_from_jobs(&cap, cl, in->jobs, n, err);
	if (rc)
		return rc;
	struct ctx c = {.in = in, .st = st, .nn = nn, .b_ex = INFINITY};
	size_t sz = (size_t)(n > 0 ? n : 1), nsz = (size_t)(nn > 0 ? nn : 1);
	if ((int)sz + 1 > st->cap_jobs) {
		int ncap = (int)sz * 2 + 1;
		void *nq_ = realloc(st->q, (size_t)ncap * sizeof(struct pjob));
		if (nq_)
			st->q = nq_;
		void *nr_ = realloc(st->runs, (size_t)ncap * sizeof(struct run));
		if (nr_)
			st->runs = nr_;
		void *nl_ = realloc(st->live, (size_t)ncap * sizeof(struct run));
		if (nl_)
			st->live = nl_;
		if (!nq_ || !nr_ || !nl_) {
			rk_capacity_fini(&cap);
			return rk_error_set(err, RK_ENOMEM, "out of memory");
		}
		st->cap_jobs = ncap;
	}
	struct pjob *q = st->q;
	struct run *runs = st->runs;
	int *free0 = calloc(nsz, sizeof(int)), *k0 = calloc(nsz, sizeof(int));
	c.free_g = calloc(nsz, sizeof(int));
	c.k = calloc(nsz, sizeof(int));
	c.usable = calloc(nsz, sizeof(int));
	c.perm = calloc(nsz, sizeof(int));
	struct rk_alloc a = {0};
	if (!q || !runs || !free0 || !k0 || !c.free_g || !c.k || !c.usable || !c.perm) {
		rc = rk_error_set(err, RK_ENOMEM, "out of memory");
		goto out;
	}
	for (int i = 0; i < nn; i++) {
		free0[i] = cap.free_gpus[i];
		if (cl->nodes[i].up && cl->nodes[i].net_gbps < c.b_ex)
			c.b_ex = cl->nodes[i].net_gbps;
		if (cl->nodes[i].gpus > c.per_node)
			c.per_node = cl->nodes[i].gpus;
	}
	double bytes = in->env ? in->env->grad_bytes : 4.0;
	int nq = 0, nr = 0, min_req = 1 << 30;
	for (int i = 0; i < n; i++) {
		const struct rk_job *j = in->jobs[i];
		struct pjob p; /* the placement arrays are written by place() when used */
		p.i = i;
		p.gpus = j->req_gpus;
		p.n_nodes = 0;
		p.size = 0;
		p.t_iter_s = j->iters_total > 0 && j->est_duration_s > 0
				     ? j->est_duration_s / j->iters_total : INFINITY;
		p.iters_left = j->iters_total - j->iters_done > 0 ? j->iters_total - j->iters_done : 0;
		p.grad_gb = j->model->params * bytes / 1e9;
		if (j->alloc.n > 0) {
			struct run *r = &runs[nr++];
			r->n_nodes = 0;
			for (int s = 0; s < j->alloc.n && s < RK_PLACEMENT_MAX_NODES; s++) {
				r->nodes[r->n_nodes] = j->alloc.shares[s].node;
				r->per[r->n_nodes++] = j->alloc.shares[s].gpus;
				if (j->alloc.n >= 2)
					k0[j->alloc.shares[s].node]++;
			}
			p.gpus = rk_alloc_total_gpus(&j->alloc);
			r->end_s = p.iters_left * tau_s(&c, &p, j->alloc.n, st->u_max);
			continue;
		}
		if (j->state != RK_JOB_PENDING)
			continue;
		struct pjob *dst = &q[nq++];
		dst->i = p.i, dst->gpus = p.gpus, dst->t_iter_s = p.t_iter_s;
		dst->iters_left = p.iters_left, dst->grad_gb = p.grad_gb, dst->n_nodes = 0;
		if (p.gpus < min_req)
			min_req = p.gpus;
	}
	/* Nothing can start: every cap decides nothing. */
	if (nq == 0 || min_req > cap.free_gpus_total)
		goto out;
	int n_u = st->kind == K_BCO ? st->u_max : 1;
	double best = INFINITY;
	int best_u = 1;
	struct skey *keys = malloc(sz * sizeof(*keys));
	struct skey *top = malloc(sz * sizeof(*top));
	int *ord = malloc(sz * sizeof(*ord));
	if (!keys || !top || !ord) {
		free(keys);
		free(top);
		free(ord);
		rc = rk_error_set(err, RK_ENOMEM, "out of memory");
		goto out;
	}
	for (int u = 1; u <= n_u && st->kind == K_BCO; u++) {
		/* §4.3 line 3: size with tau^u on ceil(G/O) nodes. */
		for (int i = 0; i < nq; i++) {
			int nodes = c.per_node > 0 ? (q[i].gpus + c.per_node - 1) / c.per_node : 1;
			double sz_i = q[i].gpus * q[i].iters_left * tau_s(&c, &q[i], nodes, u);
			keys[i] = (struct skey){isfinite(sz_i) ? sz_i : INFINITY, q[i].i, i};
		}
		int nl = smallest(keys, nq, st->lookahead, top);
		for (int i = 0; i < nl; i++)
			ord[i] = top[i].q;
		double mk = simulate(&c, q, ord, nl, runs, nr, u, free0, k0);
		if (mk < best) {
			best = mk;
			best_u = u;
		}
	}
	/* Sizes under the chosen cap (the baselines: u = 1). */
	for (int i = 0; i < nq; i++) {
		int nodes = c.per_node > 0 ? (q[i].gpus + c.per_node - 1) / c.per_node : 1;
		double sz_i = q[i].gpus * q[i].iters_left * tau_s(&c, &q[i], nodes, best_u);
		keys[i] = (struct skey){isfinite(sz_i) ? sz_i : INFINITY, q[i].i, i};
	}
	memcpy(c.free_g, free0, nsz * sizeof(int));
	memcpy(c.k, k0, nsz * sizeof(int));
	/*
	 * Smallest job first, each placed when it fits, the others skipped: the
	 * jobs whose GPUs fit the free total, served from a heap popped only
	 * while some GPUs are free (capacity only shrinks within a round).
	 */
	int hn = 0, free_total = 0;
	for (int nd = 0; nd < nn; nd++)
		free_total += c.free_g[nd];
	for (int k = 0; k < nq; k++)
		if (q[k].gpus <= free_total)
			top[hn++] = keys[k];
	for (int k = hn / 2 - 1; k >= 0; k--)
		key_sift(top, hn, k);
	while (hn > 0 && free_total > 0) {
		struct skey kt = top[0];
		top[0] = top[--hn];
		key_sift(top, hn, 0);
		int i = kt.q;
		if (q[i].gpus > free_total)
			continue;
		struct rk_job *j = in->jobs[q[i].i];
		struct rk_place_req req;
		rk_place_req_from_job(j, &req);
		int *capg = c.usable;
		for (int nd = 0; nd < nn; nd++) {
			const struct rk_node *node = &cl->nodes[nd];
			int cpg = req.cpus_per_gpu == RK_SHARE_PROPORTIONAL
					  ? node->cpus / (node->gpus ? node->gpus : 1) : req.cpus_per_gpu;
			int64_t mpg = req.mem_mb_per_gpu == RK_SHARE_PROPORTIONAL
					      ? node->mem_mb / (node->gpus ? node->gpus : 1)
					      : req.mem_mb_per_gpu;
			int g = c.free_g[nd];
			if (cpg > 0 && cap.free_cpus[nd] / cpg < g)
				g = cap.free_cpus[nd] / cpg;
			if (mpg > 0 && cap.free_mem_mb[nd] / mpg < g)
				g = (int)(cap.free_mem_mb[nd] / mpg);
			if (req.gpus_multiple > 1)
				g -= g % req.gpus_multiple;
			capg[nd] = g > 0 ? g : 0;
		}
		if (!place(&c, &q[i], capg, best_u, in->seed ^ (uint64_t)j->id))
			continue;
		rk_alloc_fini(&a);
		for (int s = 0; s < q[i].n_nodes && !rc; s++) {
			const struct rk_node *node = &cl->nodes[q[i].nodes[s]];
			int per = q[i].per[s];
			int cpg = req.cpus_per_gpu == RK_SHARE_PROPORTIONAL
					  ? node->cpus / (node->gpus ? node->gpus : 1) : req.cpus_per_gpu;
			int64_t mpg = req.mem_mb_per_gpu == RK_SHARE_PROPORTIONAL
					      ? node->mem_mb / (node->gpus ? node->gpus : 1)
					      : req.mem_mb_per_gpu;
			rc = rk_alloc_add(&a, q[i].nodes[s], per, cpg * per, mpg * per);
		}
		if (!rc && rk_capacity_take(&cap, &a, NULL) == 0) {
			take(&c, q[i].nodes, q[i].per, q[i].n_nodes, 1);
			free_total -= q[i].gpus;
			rc = rk_decisions_push(out, j->id, &a, &j->req_plan);
		}
		if (rc) {
			rc = rk_error_set(err, rc, "out of memory");
			break;
		}
	}
	free(keys);
	free(top);
	free(ord);
out:
	rk_alloc_fini(&a);
	rk_capacity_fini(&cap);
	free(free0);
	free(k0);
	free(c.free_g);
	free(c.k);
	free(c.usable);
	free(c.perm);
	return rc;
}

#define BCO_OPS(var, nm, fn, text)                                                           \
	const struct rk_policy_ops var = {                                                   \
		.name = nm,                                                                  \
		.summary = text,                                                             \
		.create = fn,                                                                \
		.destroy = bco_destroy,                                                      \
		.schedule = bco_schedule,                                                    \
		.flags = RK_POLICY_IDLE_NOOP | RK_POLICY_EVENT_DRIVEN,                       \
	}

BCO_OPS(rk_policy_sjf_bco, "sjf-bco", bco_create,
	"SJF-BCO: smallest job first, fewest nodes with balanced NIC contention, best cap "
	"by predicted makespan; no preemption");
BCO_OPS(rk_policy_sjf_ff, "sjf-ff", ff_create,
	"smallest job first, first-fit placement (nodes in id order); no preemption");
BCO_OPS(rk_policy_sjf_bf, "sjf-bf", bf_create,
	"smallest job first, best-fit placement (one node if possible, else fullest nodes first)");
BCO_OPS(rk_policy_sjf_random, "sjf-random", rnd_create,
	"smallest job first, seeded random placement; no preemption");
