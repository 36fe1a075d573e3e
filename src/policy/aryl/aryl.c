/*
 * Aryl/Lyra (docs/references.md §2; docs/aryl.md): capacity loaning and
 * elastic scaling.
 *
 *   phase 1 (§2.4 lines 1-4): pending jobs shortest remaining time first, each
 *     started with its base demand (min_gpus for an elastic job, its request
 *     otherwise) when it fits; placement best-fit (rk_place_gang), training
 *     servers first so that reclaiming loaned ones preempts little (§2.3
 *     placement corollary). A job that does not fit may take back flexible
 *     workers of running elastic jobs (they are "preemptible at any time",
 *     §2.2): those jobs scale in to their base, loaned servers' workers first.
 *   phase 2 (§2.4 lines 5-9): only when no job is left waiting, the spare GPUs
 *     go to running elastic jobs by the exact MCKP (mckp.c) on JCT-reduction
 *     values T(w) - T(w+k) minus the restart delay the change costs (so a
 *     scale-out that does not pay for its restart is never chosen: no
 *     thrash); flexible workers are placed on loaned servers first.
 *
 * T(w) = remaining run time at the request x (req / w)^scaling: a sub-linear
 * speed-up model [I] (option scaling=, default 0.8, docs/aryl.md); the
 * simulator's oracle, not this estimate, decides the real speed.
 *
 * `aryl-noloan` is the baseline of the paper: no elastic scaling (every job
 * runs its request) and no loaned server is ever used.
 */
#include "rubick/aryl.h"
#include "rubick/mckp.h"
#include "rubick/placement.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct aryl {
	int loan;          /* 0 = aryl-noloan */
	double restart_s;  /* cost of a reconfiguration (s) */
	double scaling;    /* speed-up exponent of T(w) */
};

static int parse_opts(struct aryl *a, const char *options, const char *name,
		      struct rk_error *err)
{
	const char *p = options ? options : "";
	while (*p) {
		const char *end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		const char *eq = memchr(p, '=', (size_t)(end - p));
		char val[32];
		if (!eq || end - eq - 1 <= 0 || end - eq - 1 >= (long)sizeof val)
			return rk_error_set(err, RK_EINVAL, "policy %s: option '%.*s' is not key=value",
					    name, (int)(end - p), p);
		memcpy(val, eq + 1, (size_t)(end - eq - 1));
		val[end - eq - 1] = 0;
		char *e;
		double x = strtod(val, &e);
		size_t kl = (size_t)(eq - p);
		if (*e || !isfinite(x))
			return rk_error_set(err, RK_EINVAL, "policy %s: option %.*s=%s is not a number",
					    name, (int)kl, p, val);
		if (kl == 7 && !memcmp(p, "restart", 7) && x >= 0 && x <= 1e6)
			a->restart_s = x;
		else if (kl == 7 && !memcmp(p, "scaling", 7) && x > 0 && x <= 1)
			a->scaling = x;
		else
			return rk_error_set(err, RK_EINVAL,
					    "policy %s: unknown or out-of-range option '%.*s' (restart=0..1e6"
					    " seconds, scaling=(0,1])", name, (int)(end - p), p);
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int create_common(void **state, const char *options, struct rk_error *err, int loan,
			 const char *name)
{
	struct aryl *a = calloc(1, sizeof *a);
	if (!a)
		return rk_error_set(err, RK_ENOMEM, "policy %s: out of memory", name);
	a->loan = loan;
	a->restart_s = 260.0; /* the Rubick simulator's restart delay (sim.h) */
	a->scaling = 0.8;
	int rc = parse_opts(a, options, name, err);
	if (rc) {
		free(a);
		return rc;
	}
	*state = a;
	return 0;
}

static int aryl_create(void **s, const char *o, struct rk_error *e)
{
	return create_common(s, o, e, 1, "aryl");
}

static int noloan_create(void **s, const char *o, struct rk_error *e)
{
	return create_common(s, o, e, 0, "aryl-noloan");
}

static void aryl_destroy(void *state)
{
	free(state);
}

/* Remaining run time at the request (s); a large finite value when unknown. */
static double rem_req_s(const struct rk_job *j)
{
	double frac = j->iters_total > 0 ? 1.0 - j->iters_done / j->iters_total : 1.0;
	if (frac < 0)
		frac = 0;
	double d = j->est_duration_s > 0 ? j->est_duration_s : 1e9;
	return d * frac;
}

static double t_of(const struct aryl *a, const struct rk_job *j, int w)
{
	return rem_req_s(j) * pow((double)j->req_gpus / w, a->scaling);
}

/* Capacity views: all nodes, and one pool's nodes only (the other zeroed). */
struct views {
	struct rk_capacity all, train, loaned;
};

static void view_adjust(struct rk_capacity *c, const struct rk_alloc *a, int sign, int pool,
			const struct rk_cluster *cl)
{
	for (int i = 0; i < a->n; i++) {
		const struct rk_share *s = &a->shares[i];
		if (pool >= 0 && (int)cl->nodes[s->node].pool != pool)
			continue;
		c->free_gpus[s->node] += sign * s->gpus;
		c->free_cpus[s->node] += sign * s->cpus;
		c->free_mem_mb[s->node] += sign * s->mem_mb;
		c->free_gpus_total += sign * s->gpus;
	}
}

static void views_take(struct views *v, const struct rk_alloc *a, const struct rk_cluster *cl,
		       int sign)
{
	view_adjust(&v->all, a, -sign, -1, cl);
	view_adjust(&v->train, a, -sign, RK_POOL_TRAINING, cl);
	view_adjust(&v->loaned, a, -sign, RK_POOL_LOANED, cl);
}

static void zero_pool(struct rk_capacity *c, const struct rk_cluster *cl, int pool)
{
	for (int s = 0; s < c->n_nodes; s++)
		if ((int)cl->nodes[s].pool == pool) {
			c->free_gpus_total -= c->free_gpus[s];
			c->free_gpus[s] = 0;
		}
}

/* Place `gpus` for job j, pool `first` preferred; 0 and *out, or RK_EINFEASIBLE. */
static int place(struct views *v, const struct aryl *a, const struct rk_job *j, int gpus,
		 int prefer_loaned, struct rk_alloc *out)
{
	struct rk_place_req r;
	rk_place_req_from_job(j, &r);
	r.gpus = gpus;
	if (gpus != j->req_gpus)
		r.gpus_multiple = 1; /* resized plans are pure data parallel */
	const struct rk_capacity *pref = prefer_loaned ? &v->loaned : &v->train;
	if (rk_place_gang(pref, &r, out) == 0)
		return 0;
	if (!a->loan)
		return RK_EINFEASIBLE;
	return rk_place_gang(&v->all, &r, out);
}

struct pend {
	double key;
	int64_t submit_ms, id;
	int idx;
};

static int pend_cmp(const void *x, const void *y)
{
	const struct pend *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->submit_ms != b->submit_ms)
		return a->submit_ms < b->submit_ms ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* Base demand: the smallest count in [min, req] with a plan (req always has one). */
static int base_gpus(const struct aryl *a, const struct rk_job *j)
{
	if (!a->loan || !rk_aryl_job_elastic(j))
		return j->req_gpus;
	struct rk_plan p;
	for (int w = j->min_gpus; w < j->req_gpus; w++)
		if (rk_aryl_plan_for(j, w, &p) == 0)
			return w;
	return j->req_gpus;
}

/*
 * Scale running elastic job j in to its base, dropping loaned servers' GPUs
 * first, then the smallest shares. Writes the new alloc to `out`.
 */
static int shrink_to_base(const struct aryl *a, const struct rk_job *j, const struct rk_cluster *cl,
			  struct rk_alloc *out)
{
	int target = base_gpus(a, j);
	int have = rk_alloc_total_gpus(&j->alloc);
	if (have <= target)
		return RK_EINFEASIBLE;
	int rc = rk_alloc_copy(out, &j->alloc);
	if (rc)
		return rc;
	int drop = have - target;
	for (int pass = 0; pass < 2 && drop > 0; pass++) {
		/* pass 0: loaned nodes; pass 1: training nodes, smallest shares first. */
		while (drop > 0) {
			int bi = -1;
			for (int i = 0; i < out->n; i++) {
				struct rk_share *s = &out->shares[i];
				if (s->gpus == 0 || (pass == 0) != (cl->nodes[s->node].pool == RK_POOL_LOANED))
					continue;
				if (bi < 0 || s->gpus < out->shares[bi].gpus)
					bi = i;
			}
			if (bi < 0)
				break;
			struct rk_share *s = &out->shares[bi];
			int d = s->gpus < drop ? s->gpus : drop;
			int cpg = s->cpus / s->gpus;
			int64_t mpg = s->mem_mb / s->gpus;
			s->gpus -= d;
			s->cpus = s->gpus ? s->cpus - cpg * d : 0;
			s->mem_mb = s->gpus ? s->mem_mb - mpg * d : 0;
			drop -= d;
		}
	}
	int w = 0;
	for (int i = 0; i < out->n; i++)
		if (out->shares[i].gpus > 0)
			out->shares[w++] = out->shares[i];
	out->n = w;
	return 0;
}

static int push_resized(struct rk_decisions *out, const struct rk_job *j, const struct rk_alloc *al)
{
	struct rk_plan p;
	if (rk_aryl_plan_for(j, rk_alloc_total_gpus(al), &p))
		return RK_EINTERNAL;
	return rk_decisions_push(out, j->id, al, &p);
}

/* Phase 2 candidates: running elastic jobs left alone so far, and those started now. */
static int p2_eligible(const struct rk_job *j, int touched, int started)
{
	if (!rk_aryl_job_elastic(j))
		return 0;
	return started >= 0 || (!touched && j->state == RK_JOB_RUNNING);
}

static int p2_gpus(const struct rk_job *j, const struct rk_decisions *out, int started)
{
	return rk_alloc_total_gpus(started >= 0 ? &out->v[started].alloc : &j->alloc);
}

static int schedule_impl(struct aryl *a, const struct rk_sched_input *in, struct rk_decisions *out,
			 struct rk_error *err)
{
	const struct rk_cluster *cl = in->cluster;
	struct views v;
	memset(&v, 0, sizeof v);
	struct pend *pq = NULL;
	char *touched = NULL;
	int *started = NULL; /* decision index of a job started this round, else -1 */
	struct rk_mckp_item *items = NULL;
	double *vals = NULL;
	int *eidx = NULL, *choice = NULL;
	int rc = rk_capacity_from_jobs(&v.all, cl, in->jobs, in->n_jobs, err);
	if (rc)
		return rc;
	if ((rc = rk_capacity_copy(&v.train, &v.all)) || (rc = rk_capacity_copy(&v.loaned, &v.all)))
		goto out;
	zero_pool(&v.train, cl, RK_POOL_LOANED);
	zero_pool(&v.loaned, cl, RK_POOL_TRAINING);
	if (!a->loan)
		zero_pool(&v.all, cl, RK_POOL_LOANED);
	rc = RK_ENOMEM;
	pq = malloc((size_t)(in->n_jobs + 1) * sizeof *pq);
	touched = calloc((size_t)in->n_jobs + 1, 1);
	started = malloc(((size_t)in->n_jobs + 1) * sizeof *started);
	if (!pq || !touched || !started)
		goto out;
	for (int i = 0; i < in->n_jobs; i++)
		started[i] = -1;
	int np = 0, flex = 0;
	for (int i = 0; i < in->n_jobs; i++) {
		const struct rk_job *j = in->jobs[i];
		if (j->state == RK_JOB_PENDING)
			pq[np++] = (struct pend){rem_req_s(j), j->submit_ms, j->id, i};
		else if (j->alloc.n > 0 && rk_alloc_total_gpus(&j->alloc) > base_gpus(a, j))
			flex++;
	}
	qsort(pq, (size_t)np, sizeof *pq, pend_cmp);
	/* Phase 1. */
	int waiting = 0;
	for (int q = 0; q < np; q++) {
		const struct rk_job *j = in->jobs[pq[q].idx];
		int need = base_gpus(a, j);
		struct rk_alloc al;
		rk_alloc_init(&al);
		int ok = need <= v.all.free_gpus_total && place(&v, a, j, need, 0, &al) == 0;
		/* Take flexible workers back, largest holders first, until it fits. */
		while (!ok && flex > 0) {
			int bi = -1, bx = 0;
			for (int i = 0; i < in->n_jobs; i++) {
				const struct rk_job *e = in->jobs[i];
				if (touched[i] || e->alloc.n == 0 || e->state == RK_JOB_PENDING)
					continue;
				int x = rk_alloc_total_gpus(&e->alloc) - base_gpus(a, e);
				if (x > bx) {
					bx = x;
					bi = i;
				}
			}
			if (bi < 0) {
				flex = 0;
				break;
			}
			const struct rk_job *e = in->jobs[bi];
			struct rk_alloc sh;
			rk_alloc_init(&sh);
			if ((rc = shrink_to_base(a, e, cl, &sh)))
				goto out;
			views_take(&v, &e->alloc, cl, -1);
			views_take(&v, &sh, cl, 1);
			touched[bi] = 1;
			flex--;
			rc = push_resized(out, e, &sh);
			rk_alloc_fini(&sh);
			if (rc)
				goto out;
			ok = need <= v.all.free_gpus_total && place(&v, a, j, need, 0, &al) == 0;
		}
		if (!ok) {
			rk_alloc_fini(&al);
			waiting++;
			continue;
		}
		views_take(&v, &al, cl, 1);
		touched[pq[q].idx] = 1;
		started[pq[q].idx] = out->n;
		struct rk_plan p;
		rc = rk_aryl_plan_for(j, need, &p);
		if (!rc)
			rc = rk_decisions_push(out, j->id, &al, &p);
		rk_alloc_fini(&al);
		if (rc)
			goto out;
	}
	rc = 0;
	if (!a->loan || waiting > 0 || v.all.free_gpus_total <= 0)
		goto out;
	/* Phase 2: the exact MCKP over the running elastic jobs. */
	int F = v.all.free_gpus_total, ne = 0, nv = 0;
	for (int i = 0; i < in->n_jobs; i++) {
		const struct rk_job *j = in->jobs[i];
		if (!p2_eligible(j, touched[i], started[i]))
			continue;
		int w = p2_gpus(j, out, started[i]);
		if (w < j->max_gpus)
			nv += 1 + (j->max_gpus - w < F ? j->max_gpus - w : F), ne++;
	}
	if (ne == 0)
		goto out;
	rc = RK_ENOMEM;
	items = malloc((size_t)ne * sizeof *items);
	vals = malloc((size_t)nv * sizeof *vals);
	eidx = malloc((size_t)ne * sizeof *eidx);
	choice = malloc((size_t)ne * sizeof *choice);
	if (!items || !vals || !eidx || !choice)
		goto out;
	int e = 0, off = 0;
	for (int i = 0; i < in->n_jobs; i++) {
		const struct rk_job *j = in->jobs[i];
		if (!p2_eligible(j, touched[i], started[i]))
			continue;
		int w = p2_gpus(j, out, started[i]);
		if (w >= j->max_gpus)
			continue;
		/* A job starting now pays no restart for starting wider. */
		double cost = started[i] >= 0 ? 0.0 : a->restart_s;
		int K = j->max_gpus - w < F ? j->max_gpus - w : F;
		double tw = t_of(a, j, w);
		vals[off] = 0;
		for (int k = 1; k <= K; k++) {
			struct rk_plan p;
			vals[off + k] = rk_aryl_plan_for(j, w + k, &p)
						? -INFINITY
						: tw - t_of(a, j, w + k) - cost;
		}
		items[e] = (struct rk_mckp_item){K + 1, vals + off};
		eidx[e++] = i;
		off += K + 1;
	}
	if ((rc = rk_mckp_solve(items, ne, F, choice, NULL, err)))
		goto out;
	for (e = 0; e < ne; e++) {
		if (choice[e] == 0)
			continue;
		const struct rk_job *j = in->jobs[eidx[e]];
		struct rk_alloc extra, na;
		rk_alloc_init(&extra);
		rk_alloc_init(&na);
		/* Flexible workers on loaned servers first (§2.3 corollary). */
		int sd = started[eidx[e]];
		if (place(&v, a, j, choice[e], 1, &extra) == 0) {
			views_take(&v, &extra, cl, 1);
			rc = rk_alloc_copy(&na, sd >= 0 ? &out->v[sd].alloc : &j->alloc);
			for (int s = 0; !rc && s < extra.n; s++)
				rc = rk_alloc_add(&na, extra.shares[s].node, extra.shares[s].gpus,
						  extra.shares[s].cpus, extra.shares[s].mem_mb);
			if (!rc && sd < 0)
				rc = push_resized(out, j, &na);
			else if (!rc) { /* widen this round's start decision in place */
				rc = rk_aryl_plan_for(j, rk_alloc_total_gpus(&na), &out->v[sd].plan)
					     ? RK_EINTERNAL
					     : rk_alloc_copy(&out->v[sd].alloc, &na);
			}
		}
		rk_alloc_fini(&extra);
		rk_alloc_fini(&na);
		if (rc)
			goto out;
	}
	rc = 0;
out:
	if (rc == RK_ENOMEM)
		rk_error_set(err, RK_ENOMEM, "policy aryl: out of memory");
	else if (rc == RK_EINTERNAL)
		rk_error_set(err, RK_EINTERNAL, "policy aryl: a resized job has no plan");
	rk_capacity_fini(&v.all);
	rk_capacity_fini(&v.train);
	rk_capacity_fini(&v.loaned);
	free(pq);
	free(touched);
	free(started);
	free(items);
	free(vals);
	free(eidx);
	free(choice);
	return rc;
}

static int aryl_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			 struct rk_error *err)
{
	return schedule_impl(state, in, out, err);
}

/* Reclaim hook: the §2.3 greedy (aryl_reclaim.c). */
static int aryl_reclaim_hook(void *state, const struct rk_sched_input *in, int k,
			     struct rk_decisions *out, struct rk_reclaim_stats *st,
			     struct rk_error *err)
{
	(void)state;
	return rk_aryl_reclaim(in, k, out, st, err);
}

const struct rk_policy_ops rk_policy_aryl = {
	.name = "aryl",
	.summary = "Aryl/Lyra: SJF base demands, then exact MCKP scale-out of elastic jobs onto loaned servers",
	.create = aryl_create,
	.destroy = aryl_destroy,
	.schedule = aryl_schedule,
	.flags = RK_POLICY_EVENT_DRIVEN,
};

const struct rk_policy_ops rk_policy_aryl_noloan = {
	.name = "aryl-noloan",
	.summary = "Aryl's baseline: SJF at the request, no elastic scaling, loaned servers unused",
	.create = noloan_create,
	.destroy = aryl_destroy,
	.schedule = aryl_schedule,
	.flags = RK_POLICY_EVENT_DRIVEN,
};

rk_reclaim_fn rk_policy_reclaim_hook(const struct rk_policy_ops *policy)
{
	return policy == &rk_policy_aryl ? aryl_reclaim_hook : NULL;
}
