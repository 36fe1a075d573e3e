/*
 * The scheduler thread of rubickd: the one owner of all core state (jobs,
 * cluster, policy, engine, store). Request threads never touch that state;
 * they send a struct rkd_msg and block until the scheduler thread replies
 * (rkd_sched_call). The thread runs a scheduling round when something changed
 * (submission, exit, cancel, policy change) and on a timer, and commits every
 * batch of messages in one transaction before replying (group commit), so an
 * acknowledged submission is durable.
 */
#ifndef RUBICKD_SCHED_H
#define RUBICKD_SCHED_H

#include "daemon/engine/engine.h"
#include "daemon/identity/config.h"
#include "daemon/job/jobspec.h"
#include "daemon/store/store.h"
#include "rubick/cluster.h"
#include "rubick/error.h"

#include <semaphore.h>
#include <stdint.h>

struct rk_zoo;
struct rkd_sched;

/* Who sent a request (resolved from the bearer token by http.c). */
struct rkd_caller {
	int admin;                  /* 1 = may act on every tenant's jobs */
	int authed;                 /* 1 = a valid tenant or admin token */
	char tenant[RK_TENANT_MAX]; /* the token's tenant ("" for admin) */
	const char *bearer;         /* raw token (job reports authenticate with it) */
};

struct rkd_sched_config {
	const char *db_path;
	enum rkd_sync sync;
	const struct rk_cluster *cluster;    /* copied */
	const char *cluster_spec;            /* text, for GET /v1/cluster */
	int cluster_given;                   /* the spec was given: a mismatch with the engine is reported */
	const char *policy;                  /* NULL = stored choice, else "fifo" */
	const char *policy_options;          /* NULL = none */
	const struct rkd_engine_ops *engine;
	struct rkd_engine_config engine_cfg;
	int round_interval_ms;               /* periodic rounds */
	const struct rkd_tenant_cfg *tenants;
	int n_tenants;
	/* who each tenant's jobs run as (borrowed; NULL = rubickd's user, no checks) */
	const struct rkd_idmap *ids;
	const struct rk_zoo *zoo;            /* borrowed, read-only */
	/*
	 * 1 = every round is a full one (rk_sched_input.incremental = 0), and
	 * launches, compaction and accrual walk every job: the daemon before the
	 * change feed, which the feed is tested and benchmarked against.
	 */
	int full_rounds;
};

enum rkd_msg_kind {
	RKD_MSG_SUBMIT,
	RKD_MSG_LIST,
	RKD_MSG_GET,
	RKD_MSG_CANCEL,
	RKD_MSG_UPDATE,
	RKD_MSG_REPORT,
	RKD_MSG_NODES,
	RKD_MSG_CLUSTER,
	RKD_MSG_POLICY_GET,
	RKD_MSG_POLICY_SET,
	RKD_MSG_METRICS,
	RKD_MSG_LOG,    /* GET /v1/jobs/{id}/log: filter.before_id is the byte offset */
	RKD_MSG_EVENTS, /* GET /v1/jobs/{id}/events: filter.limit events, oldest first */
	RKD_MSG_HOLD,    /* POST /v1/jobs/{id}/hold */
	RKD_MSG_RELEASE, /* POST /v1/jobs/{id}/release */
	RKD_MSG_REQUEUE, /* POST /v1/jobs/{id}/requeue: hold_after = {"hold": true} */
};

/* One request to the scheduler thread and its reply. */
struct rkd_msg {
	enum rkd_msg_kind kind;
	const struct rkd_caller *who;
	/* inputs (by kind) */
	struct rkd_spec *spec;           /* SUBMIT (ownership stays with the sender) */
	const struct rk_model *model;    /* SUBMIT: the resolved white box */
	int64_t job_id;                  /* GET, CANCEL, UPDATE, REPORT */
	struct rkd_job_filter filter;    /* LIST */
	struct rkd_update update;        /* UPDATE */
	struct rkd_report report;        /* REPORT */
	struct rkd_policy_req policy;    /* POLICY_SET */
	int hold_after;                  /* REQUEUE: hold the job once requeued */
	/* reply */
	int status;        /* HTTP status */
	char *body;        /* malloc'd reply body (JSON, or Prometheus text) */
	struct rkd_verr verr; /* when status >= 400 */
	int retry_after_s;    /* 429: when to try again */
	/* private to sched.c */
	sem_t replied;
	struct rkd_msg *next;
};

/*
 * Open the store, recover every active job and re-adopt their runs, choose
 * the policy; the thread is not started yet. OUT: *out.
 */
int rkd_sched_create(struct rkd_sched **out, const struct rkd_sched_config *cfg,
		     struct rk_error *err);
/* Set the RUBICK_URL jobs get (before rkd_sched_start). RK_ENOMEM. */
int rkd_sched_set_url(struct rkd_sched *s, const char *url);
int rkd_sched_start(struct rkd_sched *s, struct rk_error *err);
/* Stop the thread (jobs keep running; a restart adopts them) and free everything. */
void rkd_sched_destroy(struct rkd_sched *s);
/* 1 once the thread hit a storage failure and stopped serving (main exits). */
int rkd_sched_failed(struct rkd_sched *s);

/* Send `m` and wait for the reply (m->status, m->body). Thread-safe. */
void rkd_sched_call(struct rkd_sched *s, struct rkd_msg *m);
/*
 * Submit m (RKD_MSG_SUBMIT) and wait for the reply. Thread-safe. Plain
 * submissions are built on the calling thread and group-committed by the
 * submit writer (sched_submit.c) without waiting for the scheduler thread;
 * those with an idempotency key or a tenant quota go through rkd_sched_call.
 */
void rkd_sched_submit(struct rkd_sched *s, struct rkd_msg *m);
/*
 * Answer m (RKD_MSG_GET, _LIST, _LOG, _EVENTS) from the committed state on the
 * calling thread, through a read-only connection (sched_read.c): the
 * scheduler thread never sees it. Thread-safe.
 */
void rkd_sched_read(struct rkd_sched *s, struct rkd_msg *m);

/*
 * Without the thread (benchmarks and tests; never after rkd_sched_start):
 * handle one message on the calling thread and commit it, or run one
 * scheduling round and commit its decisions (OUT: *latency_ms of the round).
 * Engine actions are not taken: nothing is launched.
 */
void rkd_sched_handle_now(struct rkd_sched *s, struct rkd_msg *m);
int rkd_sched_round_now(struct rkd_sched *s, double *latency_ms, struct rk_error *err);
/*
 * Without the thread, the engine part of one loop of the thread: report the
 * runs the engine saw end, launch decided runs whose GPUs are free, commit,
 * forget ended jobs. Tests drive engine events through it.
 */
void rkd_sched_engine_now(struct rkd_sched *s);

#endif
