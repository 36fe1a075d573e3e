/*
 * Internal: the waiting queue of SJF-BSBF and SJF-FFS (sjf_bsbf.c), kept
 * across rounds. Jobs in SJF order (remaining exclusive time at the time they
 * began waiting, then submit time, then id), one sorted array per request
 * size. With the driver's change feed (rk_sched_input.incremental) a round
 * pays for the jobs that arrived, started, stopped or finished, not for every
 * waiting job; without it the queue is rebuilt from the snapshot each round.
 * A round walks it with rk_sjfq_next: "the first job in SJF order of at most
 * `cap` GPUs", which is the former pop-everything-and-skip-larger-jobs loop
 * as long as `cap` never grows during the round (a start only takes GPUs).
 */
#ifndef RUBICK_POLICY_SJF_QUEUE_H
#define RUBICK_POLICY_SJF_QUEUE_H

#include "rubick/policy.h"
#include "rubick/idtab.h"

#include <stdint.h>

struct rk_sjfq_ent {
	double e_s; /* remaining exclusive time when queued (s), +inf unknown */
	int64_t submit_ms, id;
	struct rk_job *job; /* NULL = removed (a tombstone keeping the order) */
};

struct rk_sjfq_size {
	int gpus;                /* request size */
	struct rk_sjfq_ent *v;   /* sorted; live and removed entries */
	int n, cap, dead, cur;   /* cur: the round's walk */
};

struct rk_sjfq_rec; /* where a queued job is: by id */

struct rk_sjfq {
	struct rk_sjfq_size *sz; /* sizes ascending */
	int n_sz, cap_sz;
	struct rk_idtab tab;     /* struct rk_sjfq_rec (where a queued job is) by job id */
	int synced;              /* 1 = up to date with the driver's change feed */
	double (*key)(const struct rk_job *); /* the SJF key (remaining exclusive time) */
};

void rk_sjfq_init(struct rk_sjfq *q, double (*key)(const struct rk_job *));
void rk_sjfq_fini(struct rk_sjfq *q);
/*
 * Bring the queue up to `in`: the jobs without resources in state
 * RK_JOB_PENDING. From the change feed when `in` has one and the previous
 * round did too, else from scratch. Rewinds the round's walk. RK_ENOMEM (the
 * queue is then rebuilt next time).
 */
int rk_sjfq_sync(struct rk_sjfq *q, const struct rk_sched_input *in);
/* Smallest request among waiting jobs; 1 << 30 when none. */
int rk_sjfq_min_gpus(const struct rk_sjfq *q);
/* The next job of the walk in SJF order among sizes <= cap; NULL if none. */
struct rk_job *rk_sjfq_next(struct rk_sjfq *q, int cap);

#endif
