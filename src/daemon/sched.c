/*
 * The scheduler thread (see sched.h): message queue, group commit, the job
 * table and its stored rows. Rounds are in sched_round.c, engine events
 * (launches, exits, GPU ids) in sched_engine.c, recovery in sched_init.c.
 *
 * Ordering rule that makes recovery exact: every engine action happens after
 * the transaction recording it has committed. A launch uses a run number that
 * is already durable, so after a crash the run either exists (adopted) or does
 * not (launched now) — never twice; a stop is re-issued for every stored run
 * marked stopping.
 */
#include "daemon/sched_internal.h"

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

int64_t rkd_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *const state_names[] = {
	[RK_JOB_PENDING] = "pending", [RK_JOB_RUNNING] = "running",
	[RK_JOB_RESTARTING] = "restarting", [RK_JOB_DONE] = "done",
	[RK_JOB_FAILED] = "failed", [RK_JOB_CANCELLED] = "cancelled",
};

const char *rkd_state_name(enum rk_job_state st)
{
	return (unsigned)st < sizeof(state_names) / sizeof(state_names[0]) ? state_names[st] : "?";
}

int rkd_state_parse(const char *name, enum rk_job_state *out)
{
	for (size_t i = 0; i < sizeof(state_names) / sizeof(state_names[0]); i++)
		if (!strcmp(state_names[i], name)) {
			*out = (enum rk_job_state)i;
			return 0;
		}
	return RK_EINVAL;
}

int sched_state_terminal(enum rk_job_state st)
{
	return st == RK_JOB_DONE || st == RK_JOB_FAILED || st == RK_JOB_CANCELLED;
}

void sched_fail(struct rkd_sched *s, const struct rk_error *e)
{
	/* The submit writer fails too: fail_err is set before failed, which is atomic. */
	pthread_mutex_lock(&s->mu);
	int first = !s->failed;
	if (first) {
		s->fail_err = *e;
		s->failed = 1;
	}
	pthread_mutex_unlock(&s->mu);
	if (first)
		fprintf(stderr, "rubickd: storage failure, stopping: %s\n", e->msg);
}

/* Open the write transaction (lazily, at the first write): store_mu until its commit. */
int sched_txn(struct rkd_sched *s)
{
	if (s->in_txn)
		return 0;
	pthread_mutex_lock(&s->store_mu);
	struct rk_error e;
	int ret = rkd_store_begin(s->store, &e);
	if (ret) {
		pthread_mutex_unlock(&s->store_mu);
		sched_fail(s, &e);
		return ret;
	}
	s->in_txn = 1;
	return 0;
}

int sched_commit(struct rkd_sched *s)
{
	if (!s->in_txn)
		return 0;
	s->in_txn = 0;
	struct rk_error e;
	int ret = rkd_store_commit(s->store, &e);
	pthread_mutex_unlock(&s->store_mu);
	if (ret)
		sched_fail(s, &e);
	return ret;
}

void sjob_free(struct sjob *j)
{
	if (!j)
		return;
	rk_alloc_fini(&j->core.alloc);
	rkd_spec_fini(&j->spec);
	rkd_job_row_fini(&j->row);
	rkd_refit_free(j->fit);
	free(j);
}

struct sjob *sched_job_find(struct rkd_sched *s, int64_t id)
{
	int lo = 0, hi = s->n_jobs - 1; /* jobs are kept in id order */
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (s->jobs[mid]->core.id == id)
			return s->jobs[mid];
		if (s->jobs[mid]->core.id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

int sched_job_add(struct rkd_sched *s, struct sjob *j)
{
	if (s->n_jobs == s->cap_jobs) {
		int ncap = s->cap_jobs ? 2 * s->cap_jobs : 64;
		struct sjob **v = realloc(s->jobs, (size_t)ncap * sizeof(*v));
		if (!v)
			return RK_ENOMEM;
		s->jobs = v;
		if (sched_feed_reserve(s, ncap))
			return RK_ENOMEM;
		s->cap_jobs = ncap;
	}
	int i = s->n_jobs++;
	while (i > 0 && s->jobs[i - 1]->core.id > j->core.id) {
		s->jobs[i] = s->jobs[i - 1];
		i--;
	}
	s->jobs[i] = j;
	sched_feed_mark(s, j); /* an arrival */
	return 0;
}

/* Replace a malloc'd row string. */
void sched_row_set(char **field, const char *value)
{
	char *d = strdup(value ? value : "");
	if (d) {
		free(*field);
		*field = d;
	}
}

/* Copy the live state of core into the row mirror. */
void sched_row_sync(struct sjob *j)
{
	char alloc[4096], plan[RK_PLAN_TEXT_MAX] = "";
	rkd_alloc_format(&j->core.alloc, alloc, sizeof(alloc));
	if (j->core.alloc.n > 0)
		rk_plan_format(&j->core.plan, plan, sizeof(plan));
	sched_row_set(&j->row.state, rkd_state_name(j->core.state));
	sched_row_set(&j->row.alloc, alloc);
	sched_row_set(&j->row.plan, plan);
	j->row.first_start_ms = j->core.first_start_ms;
	j->row.last_change_ms = j->core.last_change_ms;
	j->row.iters_done = j->core.iters_done;
	j->row.attained_gpu_s = j->core.attained_gpu_s;
	j->row.req_gpus = j->core.req_gpus;
	j->row.restarts = j->core.restarts;
	j->row.live_run = j->live_run;
	j->row.stopping = j->live_run && j->stop != STOP_NONE;
	if (j->core.state != RK_JOB_PENDING)
		j->row.pending_reason[0] = '\0'; /* only a pending job waits for something */
}

/* Sync the row and write it in the current transaction. */
int sched_job_write(struct rkd_sched *s, struct sjob *j)
{
	sched_feed_mark(s, j); /* a row is written because the job changed */
	sched_row_sync(j);
	struct rk_error e;
	if (sched_txn(s))
		return RK_EIO;
	int ret = rkd_store_job_update(s->store, &j->row, &e);
	if (ret)
		sched_fail(s, &e);
	j->dirty = 0;
	return ret;
}

void sched_dirty(struct rkd_sched *s, struct sjob *j)
{
	/* Before the early return: the row may be queued since before the last round. */
	sched_feed_mark(s, j);
	if (j->dirty)
		return;
	if (s->n_dirty == s->cap_dirty) {
		int ncap = s->cap_dirty ? 2 * s->cap_dirty : 64;
		struct sjob **v = realloc(s->dirty, (size_t)ncap * sizeof(*v));
		if (!v) {
			struct rk_error e;
			rk_error_set(&e, RK_ENOMEM, "out of memory tracking changed jobs");
			sched_fail(s, &e);
			return;
		}
		s->dirty = v;
		s->cap_dirty = ncap;
	}
	j->dirty = 1;
	s->dirty[s->n_dirty++] = j;
}

void sched_flush(struct rkd_sched *s)
{
	for (int i = 0; i < s->n_dirty; i++)
		if (s->dirty[i]->dirty)
			sched_job_write(s, s->dirty[i]);
	s->n_dirty = 0;
}

void sched_history(struct rkd_sched *s, struct sjob *j, int64_t now, const char *reason)
{
	char alloc[4096], plan[RK_PLAN_TEXT_MAX] = "";
	rkd_alloc_format(&j->core.alloc, alloc, sizeof(alloc));
	if (j->core.alloc.n > 0)
		rk_plan_format(&j->core.plan, plan, sizeof(plan));
	struct rk_error e;
	if (sched_txn(s))
		return;
	if (rkd_store_history_add(s->store, j->core.id, now, j->row.run, alloc, plan, reason, &e))
		sched_fail(s, &e);
}

void sched_event(struct rkd_sched *s, int64_t job_id, const char *kind, const char *detail)
{
	struct rk_error e;
	if (sched_txn(s))
		return;
	if (rkd_store_event_add(s->store, rkd_now_ms(), job_id, kind, detail, &e))
		sched_fail(s, &e);
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

void rkd_sched_call(struct rkd_sched *s, struct rkd_msg *m)
{
	m->next = NULL;
	m->status = 0;
	m->body = NULL;
	sem_init(&m->replied, 0, 0);
	pthread_mutex_lock(&s->mu);
	if (s->stopping) {
		pthread_mutex_unlock(&s->mu);
		sem_destroy(&m->replied);
		m->status = 503;
		rkd_verr_set(&m->verr, RK_EUNAVAIL, "", "rubickd is shutting down");
		return;
	}
	if (s->tail)
		s->tail->next = m;
	else
		s->head = m;
	s->tail = m;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->mu);
	while (sem_wait(&m->replied))
		; /* EINTR */
	sem_destroy(&m->replied);
}

int rkd_sched_failed(struct rkd_sched *s)
{
	pthread_mutex_lock(&s->mu);
	int f = s->failed;
	pthread_mutex_unlock(&s->mu);
	return f;
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
