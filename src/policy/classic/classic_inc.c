/*
 * Incremental rounds of the classic baselines (rk_sched_input.incremental):
 * the waiting jobs are kept across rounds, updated from the driver's change
 * feed, grouped by placement request and sorted by priority key within a
 * group. A round then visits the holders, the jobs it selects or starts, and
 * one placement failure per group between two starts, instead of every
 * waiting job, and decides exactly what classic.c's full round decides
 * (same selection, victims, fill and decision order): the simulator's
 * outputs are byte-identical either way.
 */
#include "policy/classic/classic.h"
#include "rubick/idtab.h"

#include "rubick/placement.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int holds(const struct rk_job *j)
{
	return j->alloc.n > 0;
}

/* A waiting job in its class's order. */
struct pent {
	struct classic_key key;
	int64_t id;
	struct rk_job *job;
	int mark; /* selected this round */
};

/*
 * Waiting jobs with one placement request, sorted by (key, id). Placement
 * reads the request alone, so a job that cannot be placed tells that no job
 * of its class can be until the capacity changes.
 */
struct pclass {
	struct rk_place_req req;
	struct pent *v;
	int n, cap;
	int cur, failed; /* scratch of a pass */
};

/* Where a waiting job is: open addressing on its id, backward-shift deletion. */
struct prec {
	struct rk_idtab_head h; /* the job's id */
	int cls;
	struct classic_key key;
};

struct classic_inc {
	int synced;
	struct pclass *cls;
	int n_cls, cap_cls;
	struct rk_idtab tab; /* struct prec by job id */
	long waiting_gpus;
};

void classic_inc_free(struct classic_inc *s)
{
	if (!s)
		return;
	for (int k = 0; k < s->n_cls; k++)
		free(s->cls[k].v);
	free(s->cls);
	rk_idtab_fini(&s->tab);
	free(s);
}

static int ent_cmp(const struct classic_key *a, int64_t ia, const struct classic_key *b, int64_t ib)
{
	if (a->k1 != b->k1)
		return a->k1 < b->k1 ? -1 : 1;
	if (a->k2 != b->k2)
		return a->k2 < b->k2 ? -1 : 1;
	return (ia > ib) - (ia < ib);
}

/* First entry of `c` after (key, id) when `after`, else at or after it. */
static int cls_bound(const struct pclass *c, const struct classic_key *k, int64_t id, int after)
{
	int lo = 0, hi = c->n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int r = ent_cmp(&c->v[mid].key, c->v[mid].id, k, id);
		if (r < 0 || (after && r == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int req_same(const struct rk_place_req *a, const struct rk_place_req *b)
{
	return a->gpus == b->gpus && a->cpus_per_gpu == b->cpus_per_gpu &&
	       a->mem_mb_per_gpu == b->mem_mb_per_gpu && a->gpus_multiple == b->gpus_multiple &&
	       (a->gpu_type == b->gpu_type ||
		(a->gpu_type && b->gpu_type && !strcmp(a->gpu_type, b->gpu_type)));
}

static void inc_remove(struct classic_inc *s, int64_t id)
{
	struct prec *r = rk_idtab_find(&s->tab, id);
	if (!r)
		return;
	struct pclass *c = &s->cls[r->cls];
	int i = cls_bound(c, &r->key, id, 0);
	if (i < c->n && c->v[i].id == id) {
		s->waiting_gpus -= c->v[i].job->req_gpus;
		memmove(&c->v[i], &c->v[i + 1], (size_t)(c->n - i - 1) * sizeof(*c->v));
		c->n--;
	}
	rk_idtab_del(&s->tab, r);
}

static int inc_insert(struct classic_inc *s, const struct classic_spec *spec, const void *opt,
		      struct rk_job *j, int64_t now_ms)
{
	struct rk_place_req req;
	rk_place_req_from_job(j, &req);
	req.gpu_type = NULL; /* the classic request names no type (rk_place_req_from_job) */
	int k = 0;
	while (k < s->n_cls && !req_same(&s->cls[k].req, &req))
		k++;
	if (k == s->n_cls) {
		if (s->n_cls == s->cap_cls) {
			int ncap = s->cap_cls ? 2 * s->cap_cls : 8;
			struct pclass *v = realloc(s->cls, (size_t)ncap * sizeof(*v));
			if (!v)
				return RK_ENOMEM;
			s->cls = v;
			s->cap_cls = ncap;
		}
		memset(&s->cls[k], 0, sizeof(s->cls[k]));
		s->cls[k].req = req;
		s->n_cls++;
	}
	struct pclass *c = &s->cls[k];
	if (c->n == c->cap) {
		int ncap = c->cap ? 2 * c->cap : 64;
		struct pent *v = realloc(c->v, (size_t)ncap * sizeof(*v));
		if (!v)
			return RK_ENOMEM;
		c->v = v;
		c->cap = ncap;
	}
	struct prec r = {.h.id = j->id, .cls = k};
	spec->key(j, now_ms, opt, &r.key);
	int rc = rk_idtab_put(&s->tab, &r);
	if (rc)
		return rc;
	int i = cls_bound(c, &r.key, j->id, 0);
	memmove(&c->v[i + 1], &c->v[i], (size_t)(c->n - i) * sizeof(*c->v));
	c->v[i] = (struct pent){r.key, j->id, j, 0};
	c->n++;
	s->waiting_gpus += j->req_gpus;
	return 0;
}

static int active(const struct rk_job *j)
{
	return j->state == RK_JOB_PENDING || j->state == RK_JOB_RUNNING ||
	       j->state == RK_JOB_RESTARTING;
}

/* Bring the waiting jobs up to date: from the change feed, or from scratch. */
static int inc_sync(struct classic_inc *s, const struct classic_spec *spec, const void *opt,
		    const struct rk_sched_input *in)
{
	int rc = 0;
	if (!s->synced) {
		for (int k = 0; k < s->n_cls; k++)
			s->cls[k].n = 0;
		rk_idtab_clear(&s->tab);
		s->waiting_gpus = 0;
		for (int i = 0; i < in->n_jobs && !rc; i++)
			if (active(in->jobs[i]) && !holds(in->jobs[i]))
				rc = inc_insert(s, spec, opt, in->jobs[i], in->now_ms);
	} else {
		for (int i = 0; i < in->n_changed && !rc; i++) {
			struct rk_job *j = in->changed[i];
			inc_remove(s, j->id);
			if (active(j) && !holds(j))
				rc = inc_insert(s, spec, opt, j, in->now_ms);
		}
	}
	s->synced = rc == 0;
	return rc;
}

/*
 * Unselected waiting jobs in priority order, each started when it fits
 * (classic_schedule's fill). Classes are merged head by head; a class whose
 * job could not be placed is skipped until some job starts (the capacity is
 * the same, so would be the answer), then resumes after that job. Stops when
 * no GPU is free, as schedule_fifo_like does (nothing could start then).
 */
static int inc_fill(struct classic_inc *s, struct rk_capacity *cap, enum rk_place_mode mode,
		    struct rk_decisions *out)
{
	int rc = 0;
	for (int k = 0; k < s->n_cls; k++)
		s->cls[k].cur = s->cls[k].failed = 0;
	while (!rc && cap->free_gpus_total > 0) {
		struct pclass *b = NULL;
		for (int k = 0; k < s->n_cls; k++) {
			struct pclass *c = &s->cls[k];
			if (c->failed || c->req.gpus > cap->free_gpus_total)
				continue;
			while (c->cur < c->n && c->v[c->cur].mark)
				c->cur++;
			if (c->cur < c->n &&
			    (!b || ent_cmp(&c->v[c->cur].key, c->v[c->cur].id, &b->v[b->cur].key,
					   b->v[b->cur].id) < 0))
				b = c;
		}
		if (!b)
			break;
		const struct pent *e = &b->v[b->cur++];
		if (classic_try_start(cap, e->job, mode, out, &rc)) {
			for (int k = 0; k < s->n_cls; k++)
				if (s->cls[k].failed) {
					s->cls[k].failed = 0;
					s->cls[k].cur = cls_bound(&s->cls[k], &e->key, e->id, 1);
				}
		} else {
			b->failed = 1;
		}
	}
	return rc;
}

/* The waiting job first in priority order among classes of at most `budget` GPUs. */
static struct pclass *inc_head(struct classic_inc *s, int budget)
{
	struct pclass *b = NULL;
	for (int k = 0; k < s->n_cls; k++) {
		struct pclass *c = &s->cls[k];
		if (c->cur < c->n && c->req.gpus <= budget &&
		    (!b || ent_cmp(&c->v[c->cur].key, c->v[c->cur].id, &b->v[b->cur].key,
				   b->v[b->cur].id) < 0))
			b = c;
	}
	return b;
}

/*
 * The preemptive round of schedule_preemptive on the kept queue: holders
 * `hs` (sorted, nh of them; none when nobody can be preempted) merged with
 * the waiting jobs; only jobs that fit the budget by count are visited.
 */
static int inc_preemptive(struct classic_inc *s, struct classic_item *hs, int nh, struct rk_capacity *cap,
			  int budget, enum rk_place_mode mode, struct rk_decisions *out)
{
	int rc = 0, nsel = 0, hi = 0, max_sel = budget > 0 ? budget : 1;
	struct pent **sel = malloc((size_t)(budget > 0 ? budget : 1) * sizeof(*sel));
	int *cands = malloc((size_t)(nh > 0 ? nh : 1) * sizeof(*cands));
	int *victims = malloc((size_t)(nh > 0 ? nh : 1) * sizeof(*victims));
	if (!sel || !cands || !victims) {
		rc = RK_ENOMEM;
		goto done;
	}
	/* Step 1: select by count in priority order. */
	for (int k = 0; k < s->n_cls; k++)
		s->cls[k].cur = 0;
	while (budget > 0) {
		struct pclass *b = inc_head(s, budget);
		if (hi < nh && (!b || ent_cmp(&hs[hi].key, hs[hi].job->id, &b->v[b->cur].key,
					      b->v[b->cur].id) < 0)) {
			int g = rk_alloc_total_gpus(&hs[hi].job->alloc);
			if (g <= budget) {
				hs[hi].selected = 1;
				budget -= g;
			}
			hi++;
		} else if (b && nsel < max_sel) {
			struct pent *e = &b->v[b->cur++];
			e->mark = 1;
			sel[nsel++] = e;
			budget -= e->job->req_gpus;
		} else {
			break;
		}
	}
	/* Step 3: place the selected, preempting unselected holders from the bottom. */
	int nc = 0;
	for (int v = 0; v < nh; v++)
		if (!hs[v].selected)
			cands[nc++] = v;
	for (int i = 0; i < nsel && !rc; i++) {
		const struct pent *e = sel[i];
		if (classic_try_start(cap, e->job, mode, out, &rc) || rc)
			continue;
		int nv = 0, placed = 0;
		for (int c = nc - 1; c >= 0 && !placed && !rc; c--) {
			int v = cands[c];
			if (ent_cmp(&hs[v].key, hs[v].job->id, &e->key, e->id) < 0)
				break; /* outranks the job: never a victim for it */
			if (hs[v].preempted)
				continue;
			rc = rk_capacity_give(cap, &hs[v].job->alloc, NULL);
			if (rc)
				break;
			hs[v].preempted = 1;
			victims[nv++] = v;
			if (cap->free_gpus_total >= e->job->req_gpus)
				placed = classic_try_start(cap, e->job, mode, out, &rc);
		}
		if (placed && !rc)
			rc = classic_restore_victims(cap, hs, victims, nv);
		for (int k = 0; k < nv && !placed && !rc; k++) {
			rc = rk_capacity_take(cap, &hs[victims[k]].job->alloc, NULL);
			hs[victims[k]].preempted = 0;
		}
	}
	for (int v = 0; v < nh && !rc; v++)
		if (hs[v].preempted)
			rc = rk_decisions_push(out, hs[v].job->id, NULL, NULL);
	/* Step 4: fill. */
	if (!rc)
		rc = inc_fill(s, cap, mode, out);
done:
	for (int i = 0; i < nsel; i++)
		sel[i]->mark = 0;
	free(sel);
	free(cands);
	free(victims);
	return rc;
}

int classic_inc_schedule(const struct classic_spec *spec, const void *opt,
			 struct classic_cache *cache, const struct rk_sched_input *in,
			 struct rk_decisions *out, struct rk_error *err)
{
	if (!cache->inc) {
		if (!(cache->inc = calloc(1, sizeof(*cache->inc))))
			return rk_error_set(err, RK_ENOMEM, "policy %s: out of memory", spec->name);
		rk_idtab_init(&cache->inc->tab, sizeof(struct prec));
	}
	struct classic_inc *s = cache->inc;
	struct rk_capacity cap;
	int rc = rk_capacity_from_jobs(&cap, in->cluster, in->holders, in->n_holders, err);
	if (rc)
		return rk_error_prefix(err, "policy %s", spec->name);
	struct classic_item *hs = NULL;
	int nh = 0;
	rc = inc_sync(s, spec, opt, in);
	if (!rc && !spec->preemptive) {
		rc = inc_fill(s, &cap, cache->mode, out);
	} else if (!rc) {
		hs = calloc((size_t)(in->n_holders > 0 ? in->n_holders : 1), sizeof(*hs));
		if (!hs)
			rc = RK_ENOMEM;
		for (int i = 0; !rc && i < in->n_holders; i++) {
			if (!active(in->holders[i]))
				continue;
			hs[nh].job = in->holders[i];
			spec->key(hs[nh].job, in->now_ms, opt, &hs[nh].key);
			nh++;
		}
		/* As classic_schedule: holders take part only when someone may be preempted. */
		const struct classic_item *worst = NULL;
		for (int i = 0; i < nh; i++)
			if (!worst || classic_item_cmp(&hs[i], worst) > 0)
				worst = &hs[i];
		for (int k = 0; k < s->n_cls; k++)
			s->cls[k].cur = 0;
		const struct pclass *b = inc_head(s, INT32_MAX);
		int possible = b && worst &&
			       ent_cmp(&b->v[0].key, b->v[0].id, &worst->key, worst->job->id) < 0;
		int budget = cap.free_gpus_total;
		if (s->waiting_gpus > cap.free_gpus_total && possible) {
			budget = rk_cluster_total_gpus(in->cluster);
			qsort(hs, (size_t)nh, sizeof(*hs), classic_item_cmp);
		} else {
			nh = 0;
		}
		if (!rc)
			rc = inc_preemptive(s, hs, nh, &cap, budget, cache->mode, out);
	}
	free(hs);
	rk_capacity_fini(&cap);
	if (rc) {
		s->synced = 0;
		return rk_error_set(err, rc, "policy %s: %s", spec->name, rk_strerror(rc));
	}
	return 0;
}
