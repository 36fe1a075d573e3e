/*
 * Internal: the waiting queue of SJF-BSBF and SJF-FFS rounds (sjf_bsbf.c).
 * Jobs in SJF order (remaining exclusive time, then submit time, then id),
 * split by request size, each size a binary min-heap. A round pops only the
 * jobs that can still act, "the first job in SJF order of at most `cap`
 * GPUs", instead of popping the whole queue: on a saturated cluster most
 * waiting jobs are larger than what is free or shareable.
 */
#ifndef RUBICK_POLICY_SJF_QUEUE_H
#define RUBICK_POLICY_SJF_QUEUE_H

#include <stdint.h>

struct rk_sjfq_item {
	double e_s;        /* remaining exclusive time (s), +inf unknown */
	int64_t submit_ms, id;
	int i;             /* caller's index (snapshot position) */
	int gpus;          /* request size */
};

struct rk_sjfq_bucket {
	int gpus, lo, n;   /* request size, first slot in v, jobs left */
};

/* Storage is the caller's: v and bk hold at least as many entries as items. */
struct rk_sjfq {
	struct rk_sjfq_item *v;
	struct rk_sjfq_bucket *bk; /* sizes ascending */
	int nb;
};

/* Fill q from `items` (n, any order), keeping only jobs of at most `cap` GPUs. O(n log sizes). */
void rk_sjfq_build(struct rk_sjfq *q, const struct rk_sjfq_item *items, int n, int cap);

/* The caller index of the first job in SJF order of at most `cap` GPUs, removed; -1 if none. */
int rk_sjfq_pop(struct rk_sjfq *q, int cap);

#endif
