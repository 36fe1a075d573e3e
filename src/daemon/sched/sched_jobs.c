/*
 * The job table of the scheduler thread and its stored rows: lookup and
 * insertion in id order, the row mirror, the write transaction, history and
 * events, the change feed's marks (sched_feed.c uses them) and the
 * tenants' configuration. Every scheduler file calls it; it calls only
 * sched_queue.c (sched_fail), so no part has to reach back into sched.c for
 * the table (call graph in sched_internal.h).
 */
#include "daemon/sched/sched_internal.h"

#include "rubick/plan.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t rkd_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *const state_names[] = {
    [RK_JOB_PENDING] = "pending", [RK_JOB_RUNNING] = "running", [RK_JOB_RESTARTING] = "restarting",
    [RK_JOB_DONE] = "done",       [RK_JOB_FAILED] = "failed",   [RK_JOB_CANCELLED] = "cancelled",
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

int sched_feed_reserve(struct rkd_sched *s, int cap)
{
	struct rk_job ***arrays[] = {&s->act, &s->hl, &s->chg, &s->vsnap, &s->ended};
	for (size_t k = 0; k < sizeof(arrays) / sizeof(arrays[0]); k++) {
		struct rk_job **v = realloc(*arrays[k], (size_t)cap * sizeof(*v));
		if (!v)
			return RK_ENOMEM;
		*arrays[k] = v;
	}
	return 0;
}

void sched_feed_mark(struct rkd_sched *s, struct sjob *j)
{
	/* Never overflows: only tracked jobs are marked, and chg has room for cap_jobs. */
	if (j->in_chg)
		return;
	j->in_chg = 1;
	s->chg[s->n_chg++] = &j->core;
}

const struct rkd_tenant_cfg *sched_tenant_find(const struct rkd_sched *s, const char *name)
{
	for (int i = 0; i < s->n_tenants; i++) /* fixed at start: any thread may read it */
		if (!strcmp(s->tenants[i].name, name))
			return &s->tenants[i];
	return NULL;
}
