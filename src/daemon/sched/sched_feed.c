/*
 * The change feed of rubickd's rounds (rk_sched_input.incremental, policy.h;
 * the simulator's is in src/sim/engine/engine.c): the active jobs in id order (the
 * snapshot policies get), the jobs holding an allocation, and the jobs that
 * changed since the last round. Policies keeping state across rounds (FIFO,
 * SJF, SRTF, Tiresias, sjf-bsbf) then pay for what changed instead of for
 * every queued job, and the daemon stops walking its whole job table to
 * build the snapshot, validate decisions, find runs to launch, accrue
 * service and forget ended jobs: with tens of thousands of queued jobs those
 * walks and the policy's pass over the queue were most of its CPU.
 *
 * Marking is deliberately coarse: every change to a tracked job goes through
 * sched_dirty, sched_job_write or sched_job_add, and each marks the job, so
 * no state change can be missed by a new code path that writes its row.
 * Membership in act, hl and ended is recomputed from the marked jobs' state
 * when it is needed (feed_sync), not where the change happens: several
 * handlers mark a job before they finish changing it. The marks themselves
 * (sched_feed_mark, sched_feed_reserve) live in sched_jobs.c beside those
 * three, so that the job table calls nothing above it; this file reads them.
 */
#include "daemon/sched/sched_internal.h"

#include <stdlib.h>
#include <string.h>

void sched_feed_free(struct rkd_sched *s)
{
	free(s->act);
	free(s->hl);
	free(s->chg);
	free(s->vsnap);
	free(s->ended);
	s->act = s->hl = s->chg = s->vsnap = s->ended = NULL;
	s->n_act = s->n_hl = s->n_chg = s->n_ended = 0;
}

int sched_feed_releasable(const struct sjob *j)
{
	return !j->in_chg && !j->in_act && !j->hl_slot;
}

/*
 * What the policy sees (act): active jobs but held ones (docs/api.md "Hold"),
 * which wait outside every round. A hold or release invalidates the feed
 * (sched_hold.c), so policies keeping state drop or pick up the job in a
 * full round; the feed never lists a held job as changed.
 */
static int in_policy(const struct sjob *j)
{
	return !sched_state_terminal(j->core.state) && !sched_job_held(j);
}

static int holds(const struct sjob *j)
{
	return !sched_state_terminal(j->core.state) && j->core.alloc.n > 0;
}

/* From scratch: start, recovery, a policy or capacity change, or full_rounds. */
static void feed_rebuild(struct rkd_sched *s)
{
	for (int i = 0; i < s->n_chg; i++) {
		SJOB_OF(s->chg[i])->in_chg = 0;
		if (sched_state_terminal(s->chg[i]->state))
			s->compact_check = 1; /* the feed held it back from compaction */
	}
	s->n_chg = s->n_act = s->n_hl = s->n_ended = 0;
	for (int i = 0; i < s->n_jobs; i++) {
		struct sjob *j = s->jobs[i];
		j->in_act = in_policy(j);
		j->in_ended = sched_state_terminal(j->core.state);
		j->hl_slot = 0;
		if (j->in_act)
			s->act[s->n_act++] = &j->core;
		if (j->in_ended)
			s->ended[s->n_ended++] = &j->core;
		if (holds(j)) {
			s->hl[s->n_hl++] = &j->core;
			j->hl_slot = s->n_hl;
		}
	}
	s->feed_valid = 1;
}

/* First position in act whose id is >= id (act is in id order, no holes). */
static int act_lower(const struct rkd_sched *s, int64_t id)
{
	int lo = 0, hi = s->n_act;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (s->act[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int by_id(const void *a, const void *b)
{
	int64_t x = (*(struct rk_job *const *)a)->id, y = (*(struct rk_job *const *)b)->id;
	return (x > y) - (x < y);
}

/*
 * Bring act and hl up to date from the marked jobs: O(changes), plus one
 * pass of pointer moves over act from the first job that ended, when some
 * did (no job is dereferenced in it). Idempotent; leaves the marks.
 */
static void feed_sync(struct rkd_sched *s)
{
	int n_gone = 0;
	for (int i = 0; i < s->n_chg; i++) {
		struct sjob *j = SJOB_OF(s->chg[i]);
		int active = in_policy(j);
		if (active && !j->in_act) {
			/* Arrivals come in id order, nearly: append, else insert in place. */
			int k = s->n_act;
			if (k > 0 && s->act[k - 1]->id > j->core.id) {
				k = act_lower(s, j->core.id);
				memmove(&s->act[k + 1], &s->act[k],
					(size_t)(s->n_act - k) * sizeof(*s->act));
			}
			s->act[k] = &j->core;
			s->n_act++;
			j->in_act = 1;
		} else if (!active && j->in_act) {
			s->vsnap[n_gone++] = &j->core; /* vsnap is scratch until validation */
		}
		if (sched_state_terminal(j->core.state) && !j->in_ended) {
			s->ended[s->n_ended++] = &j->core;
			j->in_ended = 1;
		}
		if (holds(j) && !j->hl_slot) {
			s->hl[s->n_hl++] = &j->core;
			j->hl_slot = s->n_hl;
		} else if (!holds(j) && j->hl_slot) {
			struct rk_job *last = s->hl[--s->n_hl];
			s->hl[j->hl_slot - 1] = last;
			SJOB_OF(last)->hl_slot = j->hl_slot;
			j->hl_slot = 0;
		}
	}
	if (!n_gone)
		return;
	/* Both lists in id order: drop the ended jobs in one merge, comparing pointers. */
	if (n_gone > 1) /* vsnap is NULL until the first job */
		qsort(s->vsnap, (size_t)n_gone, sizeof(*s->vsnap), by_id);
	int r = act_lower(s, s->vsnap[0]->id), w = r, g = 0;
	for (; r < s->n_act; r++) {
		if (g < n_gone && s->act[r] == s->vsnap[g]) {
			SJOB_OF(s->act[r])->in_act = 0;
			g++;
			continue;
		}
		s->act[w++] = s->act[r];
	}
	s->n_act = w;
}

/* Held jobs out of the changed list: the policy never sees them (in_policy). */
static void chg_drop_held(struct rkd_sched *s)
{
	int w = 0;
	for (int i = 0; i < s->n_chg; i++) {
		struct sjob *j = SJOB_OF(s->chg[i]);
		if (sched_job_held(j))
			j->in_chg = 0;
		else
			s->chg[w++] = s->chg[i];
	}
	s->n_chg = w;
}

int sched_feed_prepare(struct rkd_sched *s)
{
	int incremental = s->feed_valid && !s->full_rounds;
	if (incremental)
		feed_sync(s);
	else
		feed_rebuild(s);
	chg_drop_held(s);
	return incremental;
}

void sched_feed_consumed(struct rkd_sched *s, int ok)
{
	for (int i = 0; i < s->n_chg; i++) {
		struct sjob *j = SJOB_OF(s->chg[i]);
		j->in_chg = 0;
		if (sched_state_terminal(j->core.state))
			s->compact_check = 1; /* the feed held it back from compaction */
	}
	s->n_chg = 0;
	/* A failed round may have left the policy's kept state behind: start it afresh. */
	if (!ok)
		s->feed_valid = 0;
}

int sched_feed_validation_jobs(struct rkd_sched *s, const struct rk_decisions *ds)
{
	int m = 0;
	for (int i = 0; i < s->n_hl; i++)
		s->vsnap[m++] = s->hl[i];
	for (int k = 0; k < ds->n && m < s->cap_jobs; k++) {
		struct sjob *j = sched_job_find(s, ds->v[k].job_id);
		if (j && !sched_state_terminal(j->core.state) && !j->hl_slot)
			s->vsnap[m++] = &j->core;
	}
	/* In id order as the full snapshot: the same job is named when several are wrong. */
	if (m > 1) /* vsnap is NULL until the first job */
		qsort(s->vsnap, (size_t)m, sizeof(*s->vsnap), by_id);
	return m;
}

struct rk_job *const *sched_feed_holders(struct rkd_sched *s, int *n)
{
	if (!s->feed_valid || s->full_rounds) /* the reference: every job walked */
		return NULL;
	feed_sync(s);
	*n = s->n_hl;
	return s->hl;
}

struct rk_job *const *sched_feed_launchable(struct rkd_sched *s, int *n)
{
	if (!s->feed_valid || s->full_rounds) /* the reference: every job walked */
		return NULL;
	feed_sync(s);
	int m = 0;
	for (int i = 0; i < s->n_hl; i++)
		if (sched_launchable(SJOB_OF(s->hl[i])))
			s->vsnap[m++] = s->hl[i];
	if (m > 1) /* vsnap is NULL until the first job */
		qsort(s->vsnap, (size_t)m, sizeof(*s->vsnap), by_id);
	*n = m;
	return s->vsnap;
}

int sched_feed_compact(struct rkd_sched *s)
{
	if (!s->feed_valid || s->full_rounds) /* the reference: every job walked */
		return 0;
	feed_sync(s);
	int n_free = 0, k = 0;
	for (int i = 0; i < s->n_ended; i++) {
		struct sjob *j = SJOB_OF(s->ended[i]);
		if (!j->live_run && !j->dirty && sched_feed_releasable(j)) {
			s->vsnap[n_free++] = &j->core;
			continue;
		}
		if (j->live_run || j->dirty)
			s->compact_check = 1; /* its run is draining: look again */
		s->ended[k++] = &j->core;
	}
	s->n_ended = k;
	if (!n_free)
		return 1;
	/* jobs and the freed list in id order: one merge, comparing pointers. */
	if (n_free > 1) /* vsnap is NULL until the first job */
		qsort(s->vsnap, (size_t)n_free, sizeof(*s->vsnap), by_id);
	int lo = 0, hi = s->n_jobs;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (s->jobs[mid]->core.id < s->vsnap[0]->id)
			lo = mid + 1;
		else
			hi = mid;
	}
	int w = lo, g = 0;
	for (int r = lo; r < s->n_jobs; r++) {
		if (g < n_free && &s->jobs[r]->core == s->vsnap[g]) {
			sjob_free(s->jobs[r]);
			g++;
			continue;
		}
		s->jobs[w++] = s->jobs[r];
	}
	s->n_jobs = w;
	return 1;
}
