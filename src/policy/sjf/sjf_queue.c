/*
 * The waiting queue of SJF-BSBF / SJF-FFS, kept across rounds (sjf_queue.h).
 * Removal leaves a tombstone (the array stays sorted, a removal costs a
 * binary search) and a size's array is compacted when half of it is dead;
 * a job's place is found by its id, since its key may have moved on since it
 * was queued (a job that started has made progress).
 */
#include "policy/sjf/sjf_queue.h"

#include <stdlib.h>
#include <string.h>

struct rk_sjfq_rec {
	struct rk_idtab_head h; /* the job's id */
	int gpus;
	double e_s;
	int64_t submit_ms;
};

void rk_sjfq_init(struct rk_sjfq *q, double (*key)(const struct rk_job *))
{
	memset(q, 0, sizeof(*q));
	rk_idtab_init(&q->tab, sizeof(struct rk_sjfq_rec));
	q->key = key;
}

void rk_sjfq_fini(struct rk_sjfq *q)
{
	if (!q)
		return;
	for (int k = 0; k < q->n_sz; k++)
		free(q->sz[k].v);
	free(q->sz);
	rk_idtab_fini(&q->tab);
	rk_sjfq_init(q, q->key);
}

static int waiting(const struct rk_job *j)
{
	return j->alloc.n == 0 && j->state == RK_JOB_PENDING;
}

static int ent_cmp(double e1, int64_t s1, int64_t i1, double e2, int64_t s2, int64_t i2)
{
	if (e1 != e2)
		return e1 < e2 ? -1 : 1;
	if (s1 != s2)
		return s1 < s2 ? -1 : 1;
	return (i1 > i2) - (i1 < i2);
}

static int by_ent(const void *p, const void *r)
{
	const struct rk_sjfq_ent *x = p, *y = r;
	return ent_cmp(x->e_s, x->submit_ms, x->id, y->e_s, y->submit_ms, y->id);
}

/* ---- the sorted arrays ---------------------------------------------------------- */

/* The array of request size g; created (sizes kept ascending) when `make`. */
static struct rk_sjfq_size *size_of(struct rk_sjfq *q, int g, int make)
{
	int k = 0;
	while (k < q->n_sz && q->sz[k].gpus < g)
		k++;
	if (k < q->n_sz && q->sz[k].gpus == g)
		return &q->sz[k];
	if (!make)
		return NULL;
	if (q->n_sz == q->cap_sz) {
		int ncap = q->cap_sz ? 2 * q->cap_sz : 8;
		struct rk_sjfq_size *v = realloc(q->sz, (size_t)ncap * sizeof(*v));
		if (!v)
			return NULL;
		q->sz = v;
		q->cap_sz = ncap;
	}
	memmove(&q->sz[k + 1], &q->sz[k], (size_t)(q->n_sz - k) * sizeof(*q->sz));
	q->sz[k] = (struct rk_sjfq_size){.gpus = g};
	q->n_sz++;
	return &q->sz[k];
}

static int size_reserve(struct rk_sjfq_size *s)
{
	if (s->n < s->cap)
		return 0;
	int ncap = s->cap ? 2 * s->cap : 64;
	struct rk_sjfq_ent *v = realloc(s->v, (size_t)ncap * sizeof(*v));
	if (!v)
		return RK_ENOMEM;
	s->v = v;
	s->cap = ncap;
	return 0;
}

/* First entry of s not before (e, submit, id). */
static int lower_bound(const struct rk_sjfq_size *s, double e, int64_t submit, int64_t id)
{
	int lo = 0, hi = s->n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		const struct rk_sjfq_ent *x = &s->v[mid];
		if (ent_cmp(x->e_s, x->submit_ms, x->id, e, submit, id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int insert(struct rk_sjfq *q, struct rk_job *j)
{
	struct rk_sjfq_rec r = {.h.id = j->id, .gpus = j->req_gpus, .e_s = q->key(j),
				.submit_ms = j->submit_ms};
	struct rk_sjfq_size *s = size_of(q, r.gpus, 1);
	if (!s || size_reserve(s) || rk_idtab_put(&q->tab, &r))
		return RK_ENOMEM;
	int i = lower_bound(s, r.e_s, r.submit_ms, r.h.id);
	memmove(&s->v[i + 1], &s->v[i], (size_t)(s->n - i) * sizeof(*s->v));
	s->v[i] = (struct rk_sjfq_ent){r.e_s, r.submit_ms, r.h.id, j};
	s->n++;
	return 0;
}

static void compact(struct rk_sjfq_size *s)
{
	int m = 0;
	for (int i = 0; i < s->n; i++)
		if (s->v[i].job)
			s->v[m++] = s->v[i];
	s->n = m;
	s->dead = 0;
}

static void remove_id(struct rk_sjfq *q, int64_t id)
{
	struct rk_sjfq_rec *r = rk_idtab_find(&q->tab, id);
	if (!r)
		return;
	struct rk_sjfq_size *s = size_of(q, r->gpus, 0);
	if (s) {
		int i = lower_bound(s, r->e_s, r->submit_ms, id);
		while (i < s->n && !s->v[i].job) /* tombstones of the same key (requeued) */
			i++;
		if (i < s->n && s->v[i].id == id) {
			s->v[i].job = NULL;
			if (2 * ++s->dead > s->n)
				compact(s);
		}
	}
	rk_idtab_del(&q->tab, r);
}

int rk_sjfq_sync(struct rk_sjfq *q, const struct rk_sched_input *in)
{
	int rc = 0;
	if (!in->incremental || !q->synced) {
		for (int k = 0; k < q->n_sz; k++)
			q->sz[k].n = q->sz[k].dead = 0;
		rk_idtab_clear(&q->tab);
		/* Append, then sort each size once: inserting one by one is quadratic. */
		for (int i = 0; i < in->n_jobs && !rc; i++) {
			struct rk_job *j = in->jobs[i];
			if (!waiting(j))
				continue;
			struct rk_sjfq_rec r = {.h.id = j->id, .gpus = j->req_gpus, .e_s = q->key(j),
						.submit_ms = j->submit_ms};
			struct rk_sjfq_size *s = size_of(q, r.gpus, 1);
			if (!s || size_reserve(s) || rk_idtab_put(&q->tab, &r)) {
				rc = RK_ENOMEM;
				break;
			}
			s->v[s->n++] = (struct rk_sjfq_ent){r.e_s, r.submit_ms, r.h.id, j};
		}
		for (int k = 0; k < q->n_sz; k++)
			qsort(q->sz[k].v, (size_t)q->sz[k].n, sizeof(*q->sz[k].v), by_ent);
	} else {
		for (int i = 0; i < in->n_changed && !rc; i++) {
			struct rk_job *j = in->changed[i];
			remove_id(q, j->id);
			if (waiting(j))
				rc = insert(q, j);
		}
	}
	q->synced = in->incremental && rc == 0;
	for (int k = 0; k < q->n_sz; k++)
		q->sz[k].cur = 0;
	return rc;
}

int rk_sjfq_min_gpus(const struct rk_sjfq *q)
{
	for (int k = 0; k < q->n_sz; k++)
		if (q->sz[k].n > q->sz[k].dead)
			return q->sz[k].gpus;
	return 1 << 30;
}

struct rk_job *rk_sjfq_next(struct rk_sjfq *q, int cap)
{
	struct rk_sjfq_size *best = NULL;
	for (int k = 0; k < q->n_sz && q->sz[k].gpus <= cap; k++) {
		struct rk_sjfq_size *s = &q->sz[k];
		while (s->cur < s->n && !s->v[s->cur].job)
			s->cur++;
		if (s->cur < s->n &&
		    (!best || by_ent(&s->v[s->cur], &best->v[best->cur]) < 0))
			best = s;
	}
	return best ? best->v[best->cur++].job : NULL;
}
