/*
 * The size-bucketed SJF queue of SJF-BSBF / SJF-FFS (sjf_queue.h). Popping
 * the first job of at most `cap` GPUs from one heap per size gives the same
 * sequence as popping one heap of every job and skipping the larger ones,
 * as long as `cap` never grows during a round (a start only takes GPUs).
 */
#include "sjf_queue.h"

#include <string.h>

static int by_order(const struct rk_sjfq_item *x, const struct rk_sjfq_item *y)
{
	if (x->e_s != y->e_s)
		return x->e_s < y->e_s ? -1 : 1;
	if (x->submit_ms != y->submit_ms)
		return x->submit_ms < y->submit_ms ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

static void sift_down(struct rk_sjfq_item *h, int n, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && by_order(&h[l], &h[m]) < 0)
			m = l;
		if (r < n && by_order(&h[r], &h[m]) < 0)
			m = r;
		if (m == i)
			return;
		struct rk_sjfq_item t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* Position of size g in bk[0..nb) (sizes ascending), or where it would go. */
static int bucket_find(const struct rk_sjfq_bucket *bk, int nb, int g)
{
	int lo = 0, hi = nb;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (bk[mid].gpus < g)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void rk_sjfq_build(struct rk_sjfq *q, const struct rk_sjfq_item *items, int n, int cap)
{
	struct rk_sjfq_bucket *bk = q->bk;
	int nb = 0;
	for (int k = 0; k < n; k++) { /* distinct sizes (a handful) and their counts */
		int g = items[k].gpus;
		if (g > cap)
			continue;
		int b = bucket_find(bk, nb, g);
		if (b < nb && bk[b].gpus == g) {
			bk[b].n++;
			continue;
		}
		memmove(&bk[b + 1], &bk[b], (size_t)(nb - b) * sizeof(*bk));
		bk[b] = (struct rk_sjfq_bucket){.gpus = g, .n = 1};
		nb++;
	}
	for (int b = 0, lo = 0; b < nb; b++) {
		bk[b].lo = lo;
		lo += bk[b].n;
		bk[b].n = 0;
	}
	for (int k = 0; k < n; k++) {
		if (items[k].gpus > cap)
			continue;
		struct rk_sjfq_bucket *b = &bk[bucket_find(bk, nb, items[k].gpus)];
		q->v[b->lo + b->n++] = items[k];
	}
	for (int b = 0; b < nb; b++)
		for (int k = bk[b].n / 2 - 1; k >= 0; k--)
			sift_down(q->v + bk[b].lo, bk[b].n, k);
	q->nb = nb;
}

int rk_sjfq_pop(struct rk_sjfq *q, int cap)
{
	struct rk_sjfq_bucket *bk = q->bk;
	int best = -1;
	for (int b = 0; b < q->nb && bk[b].gpus <= cap; b++)
		if (bk[b].n > 0 && (best < 0 || by_order(&q->v[bk[b].lo], &q->v[bk[best].lo]) < 0))
			best = b;
	if (best < 0)
		return -1;
	struct rk_sjfq_item *h = q->v + bk[best].lo;
	int who = h[0].i;
	h[0] = h[--bk[best].n];
	sift_down(h, bk[best].n, 0);
	return who;
}
