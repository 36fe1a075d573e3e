/*
 * rubickd's durable state: one SQLite database in WAL mode (store.c and
 * store_rows.c, through store_internal.h, are the only files that include
 * sqlite3.h; no SQLite type appears here). Tables: jobs, allocations and plan history, throughput
 * samples, fitted model parameters, tenants and quotas, events, and a
 * key/value meta table. A struct rkd_store is not thread-safe: one thread at
 * a time uses it (the scheduler thread its own, the submit writer its own,
 * request threads a read-only one borrowed from sched_read.c's pool).
 *
 * Durability: synchronous=FULL by default, so a COMMIT returns only after the
 * WAL is on stable storage; callers batch many changes in one transaction
 * (group commit) to pay one fsync for many submissions. RKD_SYNC_NORMAL skips
 * that fsync (WAL mode keeps the database consistent either way).
 */
#ifndef RUBICKD_STORE_H
#define RUBICKD_STORE_H

#include "rubick/error.h"

#include <stddef.h>
#include <stdint.h>

struct rkd_store;

/* A job row as stored; strings are owned (freed by rkd_job_row_fini). */
struct rkd_job_row {
	int64_t id;
	char *name;
	char *tenant;
	char *state;      /* "pending", "running", "restarting", "done", "failed", "cancelled" */
	char *spec_json;  /* the validated submission, canonical JSON */
	char *model_text; /* the resolved model in zoo text format */
	char *alloc;      /* current allocation "node:gpus:cpus:mem_mb;...", "" when none */
	char *plan;       /* current plan, canonical text, "" when none */
	char *reason;     /* last state change reason, "" when none */
	char *idem_key;   /* client idempotency key, "" when none */
	char *job_token;  /* SHA-256 (hex) of the token the job reports with (secrets.h) */
	char *gpu_ids;    /* virtual GPU ids of the live run, "" when none */
	int64_t submit_ms;
	int64_t first_start_ms; /* -1 until started */
	int64_t last_change_ms;
	int64_t end_ms;         /* -1 while active */
	double iters_total;
	double iters_done;
	double tput_sps;        /* last reported throughput, 0 if none */
	double attained_gpu_s;
	int req_gpus;
	int run;      /* number of the latest run decided (0 = never) */
	int live_run; /* run whose process was alive at the last write, 0 = none */
	int restarts; /* reconfigurations and preemptions so far */
	int stopping; /* 1 = the current run was asked to stop */
	int exit_status; /* last run's wait status encoding (see engine.h), -1 if none */
	/* who holds the job back from scheduling (docs/api.md "Hold"): "" none, "user", "admin" */
	char hold[8];
	/*
	 * Why a pending job waits, squeue's %r (sched_reason.c): "" when not
	 * pending or not known. Not stored: rounds recompute it, and reads take
	 * it from the scheduler's latest round (sched_reasons_fill).
	 */
	char pending_reason[16];
};

void rkd_job_row_fini(struct rkd_job_row *r);

/* One allocation/plan history entry (allocations table joined with plans). */
struct rkd_hist_row {
	int64_t t_ms;
	int run;
	char alloc[512];
	char plan[96];
	char reason[64];
};

/* Filters of a job listing; NULL/0 means "any". */
struct rkd_job_filter {
	const char *state;
	const char *tenant;
	int limit;          /* 1.. rows, newest first */
	int64_t before_id;  /* only ids < this (paging), 0 = no bound */
};

/* How far a commit must reach before it returns (see store.c). */
enum rkd_sync {
	RKD_SYNC_FULL = 0,   /* stable storage: survives power loss (default) */
	RKD_SYNC_NORMAL = 1, /* the OS: survives a crash or kill -9 of rubickd */
};

/*
 * Open (creating if needed) the database at `path`, set WAL and the sync
 * level and bring the schema to the latest version (migrations run in one
 * transaction). OUT: *out, closed with rkd_store_close. Errors name the path.
 */
int rkd_store_open(struct rkd_store **out, const char *path, enum rkd_sync sync,
		   struct rk_error *err);
void rkd_store_close(struct rkd_store *s);
/*
 * Open an existing database read-only, for readers on other threads than the
 * owner's (sched_read.c): no migration, no write; only the reading functions
 * may be used on it. OUT: *out.
 */
int rkd_store_open_reader(struct rkd_store **out, const char *path, struct rk_error *err);

/*
 * store_guard.c, before rkd_store_open. One daemon per database: take an
 * exclusive lock on PATH.lock (flock, held until the process exits or
 * rkd_store_unlock) and write our PID in it. RK_ECONFLICT naming the
 * database and the holder's PID when another process holds it. OUT: *fd.
 */
int rkd_store_lock(const char *path, int *fd, struct rk_error *err);
void rkd_store_unlock(int fd);
/*
 * Integrity at start-up: PRAGMA quick_check of an existing database, opened
 * so that nothing is written (no checkpoint on close, no migration). 0 when
 * it is sound or does not exist yet; RK_EIO naming the database and the
 * first problem found otherwise.
 */
int rkd_store_check(const char *path, struct rk_error *err);

/* Schema version after migrations. */
int rkd_store_schema_version(struct rkd_store *s);

int rkd_store_begin(struct rkd_store *s, struct rk_error *err);
int rkd_store_commit(struct rkd_store *s, struct rk_error *err);
void rkd_store_rollback(struct rkd_store *s);

/* meta key/value; get returns RK_ENOTFOUND when absent, RK_ERANGE when cap is short. */
int rkd_store_meta_get(struct rkd_store *s, const char *key, char *buf, size_t cap);
int rkd_store_meta_set(struct rkd_store *s, const char *key, const char *value,
		       struct rk_error *err);

/* Largest job id ever stored, 0 when none. */
int64_t rkd_store_max_job_id(struct rkd_store *s);

/* Insert a new job (row->id chosen by the caller). RK_EEXIST on a duplicate id. */
int rkd_store_job_insert(struct rkd_store *s, const struct rkd_job_row *row,
			 struct rk_error *err);
/* Rewrite the live columns of an existing job (state, alloc, plan, counters...). */
int rkd_store_job_update(struct rkd_store *s, const struct rkd_job_row *row,
			 struct rk_error *err);
/* Fetch one job; RK_ENOTFOUND when absent. OUT: *row (caller finis). */
int rkd_store_job_get(struct rkd_store *s, int64_t id, struct rkd_job_row *row,
		      struct rk_error *err);
/* Job id holding idempotency key `key` for `tenant`, or 0. */
int64_t rkd_store_job_by_key(struct rkd_store *s, const char *tenant, const char *key);

/*
 * Jobs matching `f`, newest first. OUT: *rows (array the caller frees with
 * rkd_job_rows_free) and *n.
 */
int rkd_store_job_list(struct rkd_store *s, const struct rkd_job_filter *f,
		       struct rkd_job_row **rows, int *n, struct rk_error *err);
/* Every job in an active state (pending, running, restarting) or whose last run
 * may still be alive (live_run > 0), oldest first. */
int rkd_store_job_list_active(struct rkd_store *s, struct rkd_job_row **rows, int *n,
			      struct rk_error *err);
void rkd_job_rows_free(struct rkd_job_row *rows, int n);

/* Append an allocation (and its plan) to a job's history. */
int rkd_store_history_add(struct rkd_store *s, int64_t job_id, int64_t t_ms, int run,
			  const char *alloc, const char *plan, const char *reason,
			  struct rk_error *err);
/* The history of one job, oldest first. OUT: *rows (free()) and *n. */
int rkd_store_history_get(struct rkd_store *s, int64_t job_id, struct rkd_hist_row **rows,
			  int *n, struct rk_error *err);

/*
 * A throughput sample reported by a running job. A job keeps its newest
 * RKD_SAMPLES_PER_JOB samples: adding one more drops its oldest.
 */
#define RKD_SAMPLES_PER_JOB 1000
int rkd_store_sample_add(struct rkd_store *s, int64_t job_id, int64_t t_ms, int run,
			 double iters_done, double tput_sps, int gpus, const char *plan,
			 struct rk_error *err);
/* Number of samples of a job. */
int rkd_store_sample_count(struct rkd_store *s, int64_t job_id);

/*
 * An event (state change, launch, exit, reconfiguration) for the audit log. A
 * job keeps its first event and its newest ones, at most RKD_EVENTS_PER_JOB in
 * all: each event beyond drops the oldest but the first.
 */
#define RKD_EVENTS_PER_JOB 1000
int rkd_store_event_add(struct rkd_store *s, int64_t t_ms, int64_t job_id, const char *kind,
			const char *detail, struct rk_error *err);

/* One stored event (store_rows.c). */
struct rkd_event_row {
	int64_t id, t_ms;
	char kind[32];
	char detail[512];
};
/*
 * A job's events, oldest first, at most `limit` of those with id > after_id.
 * OUT: *rows (caller frees) and *n.
 */
int rkd_store_events_get(struct rkd_store *s, int64_t job_id, int64_t after_id, int limit,
                         struct rkd_event_row **rows, int *n, struct rk_error *err);

/* Tenants, their GPU quota and guaranteed-GPU quota (-1 = unlimited / none). */
int rkd_store_tenant_set(struct rkd_store *s, const char *name, int gpu_quota,
			 int guaranteed_gpu_quota, struct rk_error *err);
/* A stored tenant's quotas. RK_ENOTFOUND when it is not stored. */
int rkd_store_tenant_get(struct rkd_store *s, const char *name, int *gpu_quota,
			 int *guaranteed_gpu_quota);

/*
 * Fitted performance parameters of a model, stored as the 7 values in the
 * order of struct rk_perf_params, with the number of samples behind the fit.
 */
int rkd_store_model_params_set(struct rkd_store *s, const char *model, const double k[7],
			       int n_samples, int64_t t_ms, struct rk_error *err);
/* RK_ENOTFOUND when no fit is stored. OUT: k[7], *n_samples. */
int rkd_store_model_params_get(struct rkd_store *s, const char *model, double k[7],
			       int *n_samples);

/*
 * A job's online-refit state (samples, fitted parameters; refit.c), opaque
 * text, one per job, replaced at every refit so a restarted rubickd resumes it.
 */
int rkd_store_job_fit_set(struct rkd_store *s, int64_t job_id, const char *state, int64_t t_ms,
			  struct rk_error *err);
/* RK_ENOTFOUND when the job has none. OUT: *state (the caller free()s it). */
int rkd_store_job_fit_get(struct rkd_store *s, int64_t job_id, char **state);

#endif
