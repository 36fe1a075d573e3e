/*
 * Internal: the shared engine of the four classic baselines (FIFO, SJF, SRTF,
 * Tiresias). They differ only in the order jobs are served and in whether a
 * running job may be preempted; placement (gang, rk_place_gang, in the mode
 * of option placement=, consolidated by default as in the Tiresias and Muri
 * simulators), resources (the request) and plan (the user's req_plan) are
 * common.
 */
#ifndef RUBICK_POLICY_CLASSIC_H
#define RUBICK_POLICY_CLASSIC_H

#include "rubick/placement.h"
#include "rubick/policy.h"

/*
 * Sort key of a job: smaller runs first; ties by `k2` then job id. `opt`
 * is the policy's parsed options (may be NULL).
 */
struct classic_key {
	double k1;
	int64_t k2;
};
typedef void (*classic_key_fn)(const struct rk_job *job, int64_t now_ms, const void *opt,
			       struct classic_key *out);

struct classic_spec {
	const char *name;
	classic_key_fn key;
	int preemptive; /* 1 = higher-priority work may preempt running jobs */
};

/*
 * The priority order of the previous round (job ids), kept by preemptive
 * policies: from one round to the next it changes little (running jobs move
 * up as their remaining time shrinks, arrivals slot in), so re-sorting starts
 * from it with an insertion sort instead of a full sort.
 */
struct classic_inc; /* incremental rounds (classic.c) */

struct classic_cache {
	int64_t *ids;
	int n, cap;
	/*
	 * Waiting jobs kept across rounds when the driver sends the change feed
	 * (rk_sched_input.incremental): a round then costs O(changes + holders +
	 * started jobs), not O(waiting jobs). Requires keys of waiting jobs to
	 * stay the same while they wait (true of all four classic keys).
	 */
	struct classic_inc *inc;
	enum rk_place_mode mode; /* where jobs go when no one node has room */
	int repack;              /* preemptive: re-place every job each round (classic.c) */
};

void classic_cache_fini(struct classic_cache *c);

/*
 * One round (`cache` may be NULL). Non-preemptive: pending jobs in key order, each started when its
 * request fits (a job that does not fit is skipped, the next one tried).
 * Preemptive: see classic.c.
 */
int classic_schedule(const struct classic_spec *spec, const void *opt,
		     struct classic_cache *cache, const struct rk_sched_input *in, struct rk_decisions *out,
		     struct rk_error *err);

/* The classic baselines' default placement: yarn's, as their authors' simulators. */
#define CLASSIC_PLACE_DEFAULT RK_PLACE_CONSOLIDATED

/*
 * Allocate a zeroed classic_cache as the state of a policy whose only option
 * is placement=MODE (default CLASSIC_PLACE_DEFAULT).
 */
int classic_create_cache(void **state, const char *options, struct rk_error *err,
			 const char *name);

/* An active job in a round: its key, and what the round decided for it. */
struct classic_item {
	struct rk_job *job;
	struct classic_key key;
	int selected;
	int preempted; /* preemption decided this round */
};

/*
 * Priority order of items (qsort comparator): key, then k2, then job id.
 * Inline because both rounds (classic.c, classic_inc.c) sort and sift by it
 * in their inner loops.
 */
static inline int classic_item_cmp(const void *a, const void *b)
{
	const struct classic_item *x = a, *y = b;
	if (x->key.k1 != y->key.k1)
		return x->key.k1 < y->key.k1 ? -1 : 1;
	if (x->key.k2 != y->key.k2)
		return x->key.k2 < y->key.k2 ? -1 : 1;
	return (x->job->id > y->job->id) - (x->job->id < y->job->id);
}

/*
 * Start `j` on `cap` in placement `mode` when its request fits, pushing the
 * decision; 1 = started, *rc on error (classic_start.c).
 */
int classic_try_start(struct rk_capacity *cap, struct rk_job *j, enum rk_place_mode mode,
		      struct rk_decisions *out, int *rc);

/*
 * After `placed` started with victims[0..nv) of `it` preempted for it, give
 * back (in priority order) every victim whose allocation still fits: with
 * consolidated placement a victim on a node the job did not take was never
 * needed. Victims restored have it[v].preempted cleared (classic_start.c).
 */
int classic_restore_victims(struct rk_capacity *cap, struct classic_item *it, const int *victims,
			    int nv);

/* The round on the kept queue (classic_inc.c); in->incremental must be set. */
int classic_inc_schedule(const struct classic_spec *spec, const void *opt,
			 struct classic_cache *cache, const struct rk_sched_input *in,
			 struct rk_decisions *out, struct rk_error *err);
void classic_inc_free(struct classic_inc *s);

/* create/destroy for policies without options: any option is an error. */
int classic_create_noopt(void **state, const char *options, struct rk_error *err,
			 const char *name);

/* Remaining run time at the request (s): est_duration_s x fraction left; +inf if unknown. */
double classic_remaining_s(const struct rk_job *job);

#endif
