/*
 * The scheduler thread (see sched.h): the receiving side of the message
 * queue, group commit, and the order of each pass (messages, engine events,
 * round, launches, compaction). The job table and its rows are in
 * sched_jobs.c, the sending side of the queue in sched_queue.c, rounds in
 * sched_round.c, engine events (launches, exits, GPU ids) in sched_engine.c,
 * recovery in sched_init.c. This file calls those parts; none calls back
 * (call graph in sched_internal.h).
 *
 * Ordering rule that makes recovery exact: every engine action happens after
 * the transaction recording it has committed. A launch uses a run number that
 * is already durable, so after a crash the run either exists (adopted) or does
 * not (launched now) — never twice; a stop is re-issued for every stored run
 * marked stopping.
 */
#include "daemon/sched/sched_internal.h"

#include "rubick/lp.h"
#include "rubick/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

/* Engine poll period: how soon an exited run is noticed and a stop escalated. */
#define POLL_MS 50
/*
 * Least time between two rounds triggered by events. A round of a policy that
 * reads the whole snapshot (no change feed) costs O(queue); under a burst of
 * submissions it would otherwise run after every batch and
 * starve the batches themselves. Placing a job 20 ms later is invisible next
 * to training times of minutes.
 */
#define ROUND_GAP_MS 20
/*
 * And at least this many times the last round's own time: with tens of
 * thousands of queued jobs a round takes milliseconds, and on a small
 * machine back-to-back rounds would take the CPU the request threads need.
 */
#define ROUND_DUTY 10

static int64_t round_gap_ms(const struct rkd_sched *s)
{
	int64_t g = (int64_t)(ROUND_DUTY * s->last_round_ms);
	return g > ROUND_GAP_MS ? g : ROUND_GAP_MS;
}

/* ---- the thread ---------------------------------------------------------------- */

/* Forget terminal jobs whose runs are gone: they live on in the store only. */
static void jobs_compact(struct rkd_sched *s)
{
	if (!s->compact_check)
		return;
	s->compact_check = 0;
	if (sched_feed_compact(s))
		return; /* from the list of ended jobs, not a walk over the queue */
	int k = 0;
	for (int i = 0; i < s->n_jobs; i++) {
		struct sjob *j = s->jobs[i];
		if (sched_state_terminal(j->core.state) && !j->live_run && !j->dirty &&
		    sched_feed_releasable(j)) {
			sjob_free(j);
			continue;
		}
		if (sched_state_terminal(j->core.state) && (j->live_run || j->dirty))
			s->compact_check = 1; /* its run is draining: look again */
		/* (named by the change feed only: the round sets compact_check) */
		s->jobs[k++] = j;
	}
	s->n_jobs = k;
}

/* Wake each sender on its own semaphore (no thundering herd). */
static void reply_all(struct rkd_msg *batch)
{
	for (struct rkd_msg *m = batch, *next; m; m = next) {
		next = m->next; /* the sender may free m as soon as it wakes */
		sem_post(&m->replied);
	}
}

static void fail_msg(struct rkd_msg *m, const struct rk_error *e)
{
	free(m->body);
	m->body = NULL;
	m->status = 503;
	rkd_verr_set(&m->verr, RK_EUNAVAIL, "", "storage failure: %s", e->msg);
}

void rkd_sched_handle_now(struct rkd_sched *s, struct rkd_msg *m)
{
	m->status = 0;
	m->body = NULL;
	sched_handle(s, m, rkd_now_ms());
	sched_flush(s);
	sched_commit(s);
	if (s->failed)
		fail_msg(m, &s->fail_err);
}

void rkd_sched_engine_now(struct rkd_sched *s)
{
	int64_t now = rkd_now_ms();
	struct rkd_exit ex[64];
	int n;
	while ((n = s->engine->poll(s->engine_state, now, ex, 64)) > 0)
		for (int i = 0; i < n; i++)
			sched_on_exit(s, &ex[i], now);
	sched_flush(s);
	sched_commit(s);
	sched_launch_ready(s, now); /* as the thread: after the records are durable */
	sched_flush(s);
	sched_commit(s);
	jobs_compact(s);
}

void *sched_thread_main(void *arg)
{
	struct rkd_sched *s = arg;
	prctl(PR_SET_NAME, "rkd-sched"); /* visible in top -H, perf and gdb */
	int64_t last_accrue = rkd_now_ms();
	for (;;) {
		pthread_mutex_lock(&s->mu);
		if (!s->head && !s->adopt_head && !s->stopping) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			int64_t gap = s->last_round_at_ms + round_gap_ms(s) - rkd_now_ms();
			int64_t wait = s->round_wanted ? (gap > 0 ? (gap < POLL_MS ? gap : POLL_MS) : 0)
						       : POLL_MS;
			ts.tv_nsec += (long)(wait % 1000) * 1000000L;
			ts.tv_sec += wait / 1000 + ts.tv_nsec / 1000000000L;
			ts.tv_nsec %= 1000000000L;
			if (wait)
				pthread_cond_timedwait(&s->wake, &s->mu, &ts);
		}
		struct rkd_msg *batch = s->head;
		s->head = s->tail = NULL;
		struct sjob *adopt = s->adopt_head; /* first: later messages may name them */
		s->adopt_head = s->adopt_tail = NULL;
		int stop = s->stopping;
		pthread_mutex_unlock(&s->mu);

		int64_t now = rkd_now_ms();
		sched_adopt(s, adopt);
		for (struct rkd_msg *m = batch; m; m = m->next) {
			if (s->failed)
				fail_msg(m, &s->fail_err);
			else
				sched_handle(s, m, now);
		}
		if (!s->failed) {
			struct rkd_exit ex[64];
			int n;
			while ((n = s->engine->poll(s->engine_state, now, ex, 64)) > 0)
				for (int i = 0; i < n; i++)
					sched_on_exit(s, &ex[i], now);
			/* a node down or drained is a capacity change: decide again */
			if (s->engine->capacity &&
			    s->engine->capacity(s->engine_state, s->cluster.nodes, s->cluster.n_nodes) > 0) {
				s->round_wanted = 1;
				s->feed_valid = 0; /* rare: a full round rather than reasoning about it */
				atomic_store(&s->gpus_up, rk_cluster_total_gpus(&s->cluster));
			}
			sched_accrue(s, now, &last_accrue);
			sched_flush(s);
			sched_commit(s);
		}
		if (s->failed)
			for (struct rkd_msg *m = batch; m; m = m->next)
				if (m->status < 400 || m->status == 0)
					fail_msg(m, &s->fail_err);
		/* Replies go out before the round: no request waits for the policy. */
		reply_all(batch);
		if (!s->failed && ((s->round_wanted && now - s->last_round_at_ms >= round_gap_ms(s)) ||
				   now >= s->next_round_ms)) {
			s->last_round_at_ms = now;
			struct rk_error e;
			rk_error_clear(&e);
			s->round_wanted = 0;
			s->next_round_ms = now + s->round_interval_ms;
			sched_round_run(s, now, &e); /* the transaction opens after the policy decided */
			sched_flush(s);
			sched_commit(s);
		}
		if (s->failed) {
			if (stop)
				break;
			continue;
		}
		/* Engine actions only after their records are durable (see top). */
		sched_launch_ready(s, now);
		/* commit the launches now: the write lock is never held while we wait */
		sched_flush(s);
		sched_commit(s);
		jobs_compact(s);
		if (stop)
			break;
	}
	if (s->in_txn) { /* failed with a transaction open: give the write lock back */
		rkd_store_rollback(s->store);
		s->in_txn = 0;
		pthread_mutex_unlock(&s->store_mu);
	}
	rk_lp_thread_exit(); /* the ILP policies (sia) solved on this thread */
	return NULL;
}

int rkd_sched_start(struct rkd_sched *s, struct rk_error *err)
{
	/* Recovery's writes commit on this thread: store_mu is released where it was taken. */
	sched_flush(s);
	if (sched_commit(s) || s->failed)
		return rk_error_set(err, RK_EIO, "%s", s->fail_err.msg);
	int ret = sched_submit_start(s, err);
	if (ret)
		return ret;
	if (pthread_create(&s->thread, NULL, sched_thread_main, s))
		return rk_error_set(err, RK_EIO, "cannot start the scheduler thread");
	s->started = 1;
	return 0;
}
