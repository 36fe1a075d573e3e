/*
 * The scheduler thread (see sched.h): message queue, group commit, rounds,
 * engine events and crash recovery.
 *
 * Ordering rule that makes recovery exact: every engine action happens after
 * the transaction recording it has committed. A launch uses a run number that
 * is already durable, so after a crash the run either exists (adopted) or does
 * not (launched now) — never twice; a stop is re-issued for every stored run
 * marked stopping.
 */
#include "daemon/sched_internal.h"

#include "rubick/plan.h"
#include "rubick/zoo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

const double rkd_lat_bounds_ms[N_LAT_BUCKETS] = {0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 500,
						  1000};

/* Engine poll period: how soon an exited run is noticed and a stop escalated. */
#define POLL_MS 50
/*
 * Least time between two rounds triggered by events. A round costs O(queue);
 * under a burst of submissions it would otherwise run after every batch and
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

static int txn_commit(struct rkd_sched *s)
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
		s->cap_jobs = ncap;
	}
	int i = s->n_jobs++;
	while (i > 0 && s->jobs[i - 1]->core.id > j->core.id) {
		s->jobs[i] = s->jobs[i - 1];
		i--;
	}
	s->jobs[i] = j;
	return 0;
}

/* Replace a malloc'd row string. */
static void row_set(char **field, const char *value)
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
	row_set(&j->row.state, rkd_state_name(j->core.state));
	row_set(&j->row.alloc, alloc);
	row_set(&j->row.plan, plan);
	j->row.first_start_ms = j->core.first_start_ms;
	j->row.last_change_ms = j->core.last_change_ms;
	j->row.iters_done = j->core.iters_done;
	j->row.attained_gpu_s = j->core.attained_gpu_s;
	j->row.req_gpus = j->core.req_gpus;
	j->row.restarts = j->core.restarts;
	j->row.live_run = j->live_run;
	j->row.stopping = j->live_run && j->stop != STOP_NONE;
}

/* Sync the row and write it in the current transaction. */
int sched_job_write(struct rkd_sched *s, struct sjob *j)
{
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

void sched_stop_run(struct rkd_sched *s, struct sjob *j, enum stop_kind why, int64_t now)
{
	j->launch_pending = 0;
	if (!j->live_run)
		return;
	/* A cancel overrides a restart; a restart never downgrades a cancel. */
	if (j->stop == STOP_NONE || why == STOP_CANCEL)
		j->stop = why;
	s->engine->stop(s->engine_state, j->core.id, j->live_run, why != STOP_CANCEL, now);
	sched_dirty(s, j);
}

/* ---- GPU ids ---------------------------------------------------------------- */

/*
 * Live runs hold virtual GPU ids (global: node N's GPU g is gpu_base[N] + g).
 * A GPU has at most two holders: policies that share GPUs (rk_share.gpu_mask,
 * policy.h) put two jobs on one; every other share takes GPUs nobody holds.
 */
#define MAX_HOLDERS 2

/* Count the global ids in `text` as held (take = 1) or released. */
void sched_ids_mark(struct rkd_sched *s, const char *text, int take)
{
	const char *p = text;
	while (*p) {
		char *end;
		long g = strtol(p, &end, 10);
		if (end == p)
			break;
		if (g >= 0 && g < s->n_gpus) {
			if (take && s->gpu_holders[g] < 255)
				s->gpu_holders[g]++;
			else if (!take && s->gpu_holders[g] > 0)
				s->gpu_holders[g]--;
		}
		p = *end == ',' ? end + 1 : end;
	}
}

static int ids_append(char *buf, size_t cap, size_t *len, int id)
{
	int n = snprintf(buf + *len, cap - *len, "%s%d", *len ? "," : "", id);
	if (n < 0 || (size_t)n >= cap - *len)
		return RK_ERANGE;
	*len += (size_t)n;
	return 0;
}

/*
 * The ids for `a`: a share's gpu_mask when the policy named GPUs (each with
 * room for one more holder), else the lowest GPUs nobody holds. 0 and the
 * list in buf, or RK_EINFEASIBLE while a draining run still holds some.
 */
static int ids_pick(struct rkd_sched *s, const struct rk_alloc *a, char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < a->n; i++) {
		const struct rk_share *sh = &a->shares[i];
		if (sh->node < 0 || sh->node >= s->cluster.n_nodes)
			return RK_EINVAL;
		int base = s->gpu_base[sh->node], got = 0;
		for (int g = 0; g < s->cluster.nodes[sh->node].gpus && got < sh->gpus; g++) {
			int named = sh->gpu_mask && ((sh->gpu_mask >> g) & 1);
			int ok = sh->gpu_mask ? named && s->gpu_holders[base + g] < MAX_HOLDERS
					      : s->gpu_holders[base + g] == 0;
			if (named && !ok)
				return RK_EINFEASIBLE;
			if (!ok)
				continue;
			if (ids_append(buf, cap, &len, base + g))
				return RK_ERANGE;
			got++;
		}
		if (got < sh->gpus)
			return RK_EINFEASIBLE;
	}
	return 0;
}

/* ---- launches and exits ------------------------------------------------------ */

static void job_finish(struct rkd_sched *s, struct sjob *j, enum rk_job_state st, int64_t now,
		       const char *reason)
{
	j->core.state = st;
	rk_alloc_fini(&j->core.alloc);
	j->launch_pending = 0;
	s->compact_check = 1;
	j->row.end_ms = now;
	row_set(&j->row.reason, reason);
	j->core.last_change_ms = now;
	sched_dirty(s, j);
}

/* Launch every job whose run is decided, stored and whose GPUs are free. */
static void launch_ready(struct rkd_sched *s, int64_t now)
{
	if (!s->launch_check)
		return; /* nothing decided or freed since the last look */
	s->launch_check = 0;
	for (int i = 0; i < s->n_jobs; i++) {
		struct sjob *j = s->jobs[i];
		if (!j->launch_pending || j->live_run || j->core.state != RK_JOB_RUNNING)
			continue;
		char ids[1024], alloc[4096], plan[RK_PLAN_TEXT_MAX];
		if (ids_pick(s, &j->core.alloc, ids, sizeof(ids))) {
			s->launch_check = 1; /* a draining run still holds some: look again */
			continue;
		}
		rkd_alloc_format(&j->core.alloc, alloc, sizeof(alloc));
		rk_plan_format(&j->core.plan, plan, sizeof(plan));
		struct rkd_launch ln = {
			.job_id = j->core.id,
			.run = j->row.run,
			.command = j->spec.command ? j->spec.command : j->spec.launch,
			.plan_text = plan,
			.alloc_text = alloc,
			.gpu_ids = ids,
			.url = s->url,
			.job_token = j->row.job_token,
			.global_batch = j->core.global_batch,
			.iters_total = j->core.iters_total,
			.gpus = rk_alloc_total_gpus(&j->core.alloc),
			.cpus = rk_alloc_total_cpus(&j->core.alloc),
		};
		struct rk_error e;
		rk_error_clear(&e);
		j->launch_pending = 0;
		if (s->engine->launch(s->engine_state, &ln, &e)) {
			job_finish(s, j, RK_JOB_FAILED, now, e.msg);
			sched_event(s, j->core.id, "launch-failed", e.msg);
			s->round_wanted = 1;
			continue;
		}
		j->live_run = j->row.run;
		j->stop = STOP_NONE;
		sched_ids_mark(s, ids, 1);
		row_set(&j->row.gpu_ids, ids);
		sched_dirty(s, j);
		s->launches++;
		char detail[1200];
		snprintf(detail, sizeof(detail), "run %d gpus %s plan %s", j->row.run, ids, plan);
		sched_event(s, j->core.id, "launch", detail);
	}
}

/* Next run of a job: number stored now, launched after the commit. */
void sched_run_next(struct rkd_sched *s, struct sjob *j)
{
	j->row.run++;
	j->launch_pending = 1;
	s->launch_check = 1;
	sched_dirty(s, j);
}

static void exit_describe(int status, char *buf, size_t cap)
{
	if (status == RKD_EXIT_LOST)
		snprintf(buf, cap, "run lost (its supervisor died)");
	else if (status < 0)
		snprintf(buf, cap, "killed by signal %d", -status);
	else
		snprintf(buf, cap, "exited with status %d", status);
}

void sched_on_exit(struct rkd_sched *s, const struct rkd_exit *x, int64_t now)
{
	struct sjob *j = sched_job_find(s, x->job_id);
	if (!j || x->run != j->live_run)
		return; /* not the run we track: nothing holds resources for it */
	s->exits++;
	enum stop_kind why = j->stop;
	j->live_run = 0;
	j->stop = STOP_NONE;
	s->launch_check = 1; /* its GPUs are free */
	s->compact_check = 1;
	sched_ids_mark(s, j->row.gpu_ids, 0);
	row_set(&j->row.gpu_ids, "");
	j->row.exit_status = x->status;
	sched_dirty(s, j);
	s->round_wanted = 1;
	char what[300];
	exit_describe(x->status, what, sizeof(what));
	if (x->reason[0]) /* the engine knows more (Slurm's state and reason) */
		snprintf(what, sizeof(what), "%s", x->reason);
	sched_event(s, j->core.id, "exit", what);
	if (sched_state_terminal(j->core.state))
		return; /* cancelled: the run was only draining */
	if (x->status == 0) {
		j->core.iters_done = j->core.iters_total;
		job_finish(s, j, RK_JOB_DONE, now, "completed");
		return;
	}
	if (why != STOP_NONE || x->status == RKD_EXIT_CHECKPOINTED || x->status == RKD_EXIT_LOST) {
		/* Stopped on request (or lost): go on with whatever is decided now. */
		if (j->row.run > x->run)
			return; /* a newer run is decided and waits for this one's GPUs */
		if (j->core.state == RK_JOB_RESTARTING || j->core.state == RK_JOB_RUNNING) {
			if (why == STOP_NONE) { /* the job itself asked to be restarted */
				j->core.state = RK_JOB_PENDING;
				rk_alloc_fini(&j->core.alloc);
				j->core.restarts++;
				sched_history(s, j, now, what);
				return;
			}
			j->core.state = RK_JOB_RUNNING;
			sched_run_next(s, j);
		}
		return;
	}
	job_finish(s, j, RK_JOB_FAILED, now, what);
}

/* ---- rounds ------------------------------------------------------------------- */

static void apply_decision(struct rkd_sched *s, struct sjob *j, const struct rk_decision *d,
			   int64_t now)
{
	if (d->alloc.n == 0) {
		if (j->core.state == RK_JOB_PENDING)
			return;
		j->core.state = RK_JOB_PENDING;
		rk_alloc_fini(&j->core.alloc);
		j->core.restarts++;
		j->core.last_change_ms = now;
		s->preemptions++;
		sched_stop_run(s, j, STOP_PREEMPT, now);
		sched_history(s, j, now, "preempt");
		sched_dirty(s, j);
		return;
	}
	int same = j->core.alloc.n > 0 && rk_alloc_equal(&j->core.alloc, &d->alloc) &&
		   rk_plan_equal(&j->core.plan, &d->plan);
	if (same && j->core.state != RK_JOB_PENDING)
		return;
	struct rk_alloc copy;
	rk_alloc_init(&copy);
	if (rk_alloc_copy(&copy, &d->alloc))
		return;
	rk_alloc_fini(&j->core.alloc);
	j->core.alloc = copy;
	j->core.plan = d->plan;
	j->core.last_change_ms = now;
	sched_dirty(s, j);
	if (j->core.state == RK_JOB_PENDING) {
		if (j->core.first_start_ms < 0)
			j->core.first_start_ms = now;
		j->core.state = RK_JOB_RUNNING;
		sched_run_next(s, j); /* waits for a draining earlier run, if any */
		sched_history(s, j, now, "start");
		return;
	}
	j->core.restarts++;
	s->reconfigs++;
	sched_history(s, j, now, "reconfigure");
	if (j->live_run) {
		j->core.state = RK_JOB_RESTARTING;
		sched_stop_run(s, j, STOP_RESTART, now);
	}
	/* not live yet: the pending launch simply uses the new target */
}

static void lat_record(struct rkd_sched *s, double ms)
{
	int b = 0;
	while (b < N_LAT_BUCKETS && ms > rkd_lat_bounds_ms[b])
		b++;
	s->lat_count[b]++;
	s->lat_sum_ms += ms;
	s->last_round_ms = ms;
}

static double mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int round_run(struct rkd_sched *s, int64_t now, struct rk_error *err)
{
	double t0 = mono_ms();
	struct rk_job **active = malloc((size_t)(s->n_jobs ? s->n_jobs : 1) * sizeof(*active));
	if (!active)
		return rk_error_set(err, RK_ENOMEM, "round: out of memory");
	int n = 0;
	for (int i = 0; i < s->n_jobs; i++)
		if (!sched_state_terminal(s->jobs[i]->core.state))
			active[n++] = &s->jobs[i]->core;
	struct rk_sched_input in = {
		.now_ms = now,
		.cluster = &s->cluster,
		.jobs = (struct rk_job *const *)active,
		.n_jobs = n,
		.env = &s->env,
		.seed = 0x9e3779b97f4a7c15ull ^ s->round_seq++,
		.quotas = s->quotas,
		.n_quotas = s->n_quotas,
	};
	rk_decisions_clear(&s->dec);
	int ret = s->policy->schedule(s->policy_state, &in, &s->dec, err);
	if (!ret)
		ret = rk_decisions_validate(&in, &s->dec, s->policy->name, err);
	if (ret) {
		s->policy_errors++;
		sched_event(s, 0, "policy-error", err->msg);
	} else {
		for (int i = 0; i < s->dec.n; i++) {
			struct sjob *j = sched_job_find(s, s->dec.v[i].job_id);
			if (j)
				apply_decision(s, j, &s->dec.v[i], now);
		}
	}
	free(active);
	s->rounds++;
	lat_record(s, mono_ms() - t0);
	return ret;
}

int rkd_sched_round_now(struct rkd_sched *s, double *latency_ms, struct rk_error *err)
{
	int ret = round_run(s, rkd_now_ms(), err);
	sched_flush(s);
	txn_commit(s);
	if (latency_ms)
		*latency_ms = s->last_round_ms;
	return ret;
}

/* ---- the thread ---------------------------------------------------------------- */

/* Forget terminal jobs whose runs are gone: they live on in the store only. */
static void jobs_compact(struct rkd_sched *s)
{
	if (!s->compact_check)
		return;
	s->compact_check = 0;
	int k = 0;
	for (int i = 0; i < s->n_jobs; i++) {
		struct sjob *j = s->jobs[i];
		if (sched_state_terminal(j->core.state) && !j->live_run && !j->dirty) {
			sjob_free(j);
			continue;
		}
		if (sched_state_terminal(j->core.state))
			s->compact_check = 1; /* its run is draining: look again */
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
	txn_commit(s);
	if (s->failed)
		fail_msg(m, &s->fail_err);
}

/* GPU-seconds of service (Tiresias' attained service), brought up to date once a second. */
static void accrue(struct rkd_sched *s, int64_t now, int64_t *last)
{
	if (now - *last < 1000)
		return;
	double dt_s = (double)(now - *last) / 1e3;
	*last = now;
	if (dt_s <= 0)
		return;
	for (int i = 0; i < s->n_jobs; i++)
		if (s->jobs[i]->live_run)
			s->jobs[i]->core.attained_gpu_s +=
				dt_s * rk_alloc_total_gpus(&s->jobs[i]->core.alloc);
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
				atomic_store(&s->gpus_up, rk_cluster_total_gpus(&s->cluster));
			}
			accrue(s, now, &last_accrue);
			sched_flush(s);
			txn_commit(s);
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
			round_run(s, now, &e); /* the transaction opens after the policy decided */
			sched_flush(s);
			txn_commit(s);
		}
		if (s->failed) {
			if (stop)
				break;
			continue;
		}
		/* Engine actions only after their records are durable (see top). */
		launch_ready(s, now);
		/* commit the launches now: the write lock is never held while we wait */
		sched_flush(s);
		txn_commit(s);
		jobs_compact(s);
		if (stop)
			break;
	}
	if (s->in_txn) { /* failed with a transaction open: give the write lock back */
		rkd_store_rollback(s->store);
		s->in_txn = 0;
		pthread_mutex_unlock(&s->store_mu);
	}
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
	if (txn_commit(s) || s->failed)
		return rk_error_set(err, RK_EIO, "%s", s->fail_err.msg);
	int ret = sched_submit_start(s, err);
	if (ret)
		return ret;
	if (pthread_create(&s->thread, NULL, sched_thread_main, s))
		return rk_error_set(err, RK_EIO, "cannot start the scheduler thread");
	s->started = 1;
	return 0;
}
