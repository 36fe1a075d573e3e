/*
 * SJF-BSBF (docs/references.md §3.4: shortest job first with best sharing benefit
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
#include "policy/sjf/sjf_bsbf_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bsbf_create_common(void **state, const char *options, struct rk_error *err, int ffs)
{
	struct bsbf_state *s = calloc(1, sizeof(*s));
	if (!s)
		return rk_error_set(err, RK_ENOMEM, "out of memory");
	s->ffs = ffs;
	s->window = 32;
	rk_xi_pairs_init(&s->pairs);
	rk_sjfq_init(&s->queue, bsbf_remaining_s);
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
	r->mem_gpu[i] = bsbf_mem_get(st, j, &j->plan);
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
		r.e_rem[i] = bsbf_remaining_s(r.job[i]);
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
	bsbf_scan(&r);
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
		r.e_rem[ai] = bsbf_remaining_s(top);
		r.mem_gpu[ai] = INFINITY;
		r.gpus[ai] = 0;
		rc = 0;
		if (top->req_gpus <= r.n_free)
			rc = bsbf_start_free(&r, ai, out);
		if (rc == 0 && in->gpu_sharing && tried < st->window) {
			tried++; /* bounds the per-round cost of the pair tests */
			rc = bsbf_start_shared(st, &r, ai, out, w->cands);
		}
		if (rc > 0)
			bsbf_scan(&r); /* a start is the only change to the GPUs */
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
		   "(the paper's pair test, sub-batching); no preemption; needs --sharing on",
	.create = bsbf_create,
	.destroy = bsbf_destroy,
	.schedule = bsbf_schedule,
	.flags = RK_POLICY_IDLE_NOOP | RK_POLICY_EVENT_DRIVEN,
	/* Without sharing both keep only the SJF order and their exclusive placement. */
	.needs = RK_POLICY_NEEDS_SHARING,
	.without = "shortest-job-first without sharing",
};

const struct rk_policy_ops rk_policy_sjf_ffs = {
	.name = "sjf-ffs",
	.summary = "SJF-FFS: SJF, first-fit GPU sharing whenever memory fits (no benefit "
		   "test); no preemption; needs --sharing on",
	.create = ffs_create,
	.destroy = bsbf_destroy,
	.schedule = bsbf_schedule,
	.flags = RK_POLICY_IDLE_NOOP | RK_POLICY_EVENT_DRIVEN,
	/* Without sharing both keep only the SJF order and their exclusive placement. */
	.needs = RK_POLICY_NEEDS_SHARING,
	.without = "shortest-job-first without sharing",
};
