/*
 * Private state of the scheduler thread, shared by sched.c (the thread),
 * sched_jobs.c (job table, rows), sched_round.c (rounds), sched_engine.c
 * (engine events), sched_init.c (recovery) and sched_msgs.c (request
 * handlers). Nothing here is touched by any other thread.
 *
 * Calls go one way, from a core down to its parts; no part calls a file
 * above it (scripts/callgraph.py checks it over the objects: test
 * layout_calls):
 *
 *   core    sched.c          -> msgs round submit engine feed jobs
 *           sched_init.c     -> submit read reason engine feed jobs refit
 *           sched_msgs.c     -> hold read metrics submit engine reply jobs queue refit
 *           sched_round.c    -> view reason engine feed metrics jobs
 *   parts   sched_hold.c     -> engine reply jobs
 *           sched_read.c     -> read_ops reason reply queue refit
 *           sched_submit.c   -> slurm_opts reply jobs queue
 *           sched_engine.c   -> feed jobs
 *           sched_reason.c   -> feed jobs
 *           sched_read_ops.c, sched_slurm_opts.c -> reply
 *           sched_view.c, sched_metrics.c, sched_feed.c -> jobs
 *   leaves  sched_reply.c    -> jobs refit
 *           sched_jobs.c     -> queue refit
 *           sched_queue.c, refit.c (call none of them)
 *
 * A helper two parts need goes down into a leaf (sched_jobs.c, sched_reply.c)
 * or becomes an inline predicate here, never a call up into a core file.
 * Outside this folder the scheduler calls the store, job/ and identity/
 * (never http/ or api/, which call it); engines it reaches only through the
 * ops table it is given (engine.h).
 */
#ifndef RUBICKD_SCHED_INTERNAL_H
#define RUBICKD_SCHED_INTERNAL_H

#include "daemon/identity/secrets.h"
#include "daemon/job/codec.h"
#include "daemon/sched/sched.h"
#include "rubick/perf.h"
#include "rubick/policy.h"

#include <pthread.h>
#include <stdatomic.h>

enum stop_kind { STOP_NONE = 0, STOP_RESTART, STOP_PREEMPT, STOP_CANCEL };

/* A job the scheduler tracks: active, or terminal with a run still draining. */
struct sjob {
	struct rk_job core;      /* what policies see; core.alloc/plan = the target */
	struct rk_model model;   /* core.model points here */
	struct rkd_spec spec;    /* the submission (command, request) */
	struct rkd_job_row row;  /* mirror of the stored row, written when dirty */
	int live_run;            /* run number whose process exists, 0 = none; at most one */
	int launch_pending;      /* run row.run decided and stored, not launched yet */
	enum stop_kind stop;     /* why the live run was asked to stop */
	int dirty;               /* row must be written in the current transaction */
	struct rkd_fit *fit;     /* online refit from reports (refit.c); NULL until the first */
	struct sjob *adopt_next; /* committed by the submit writer, not yet tracked */
	/* the change feed of rounds (sched_feed.c) */
	int in_chg;              /* listed in rkd_sched.chg */
	int in_act;              /* listed in rkd_sched.act */
	int hl_slot;             /* index in rkd_sched.hl + 1; 0 = holds nothing */
	int in_ended;            /* listed in rkd_sched.ended */
	/* report rate (token bucket, sched_msgs.c): reports allowed now, as of rep_ms */
	double rep_budget;
	int64_t rep_ms;
	int quota_held;          /* a decision was dropped over a quota (event logged once) */
};

int sched_state_terminal(enum rk_job_state st); /* done, failed or cancelled (sched_jobs.c) */

/* Whether j waits under a hold (docs/api.md "Hold"): out of every round until released. */
static inline int sched_job_held(const struct sjob *j)
{
	return j->row.hold[0] && !sched_state_terminal(j->core.state);
}

/* Whether j's decided run waits to be launched (sched_engine.c launches it). */
static inline int sched_launchable(const struct sjob *j)
{
	return j->launch_pending && !j->live_run && j->core.state == RK_JOB_RUNNING;
}

/*
 * Reports a job may send: RKD_REPORT_BURST at once, then RKD_REPORT_PER_S a
 * second; beyond, 429 with Retry-After. A training loop reports every few
 * seconds; a flood costs the scheduler thread a message and nothing else.
 */
#define RKD_REPORT_PER_S 10
#define RKD_REPORT_BURST 20
/*
 * Holds, releases and requeues a tenant may ask for: RKD_CHANGE_BURST at once
 * (a `rubick hold` of a few dozen jobs), then RKD_CHANGE_PER_S a second; beyond,
 * 429 with Retry-After. Each one forces a full round and writes an event: a
 * flood of them (8,614 in 25 s, measured) stalled the rounds and grew the
 * database. The admin is not limited.
 */
#define RKD_CHANGE_PER_S 5
#define RKD_CHANGE_BURST 60

/* The sjob of a policy-side job pointer: core is sjob's first member. */
#define SJOB_OF(job) ((struct sjob *)(job))

/* A submission on the fast path (sched_submit.c), waiting for its group commit. */
struct sub_req {
	struct sjob *job;        /* built on the request thread; the scheduler's once committed */
	int ok;                  /* 1 = committed */
	sem_t done;
	struct sub_req *next;
};

#define N_LAT_BUCKETS 12

/* A pending job's reason as the latest round computed it (sched_reason.c). */
struct rkd_reason_ent {
	int64_t id;
	unsigned char reason; /* enum rkd_reason */
};

struct rkd_sched {
	struct rkd_store *store;
	struct rk_cluster cluster;
	struct rk_cluster view;  /* what rounds decide on (sched_view.c): draining nodes shrunk */
	uint64_t view_sig;       /* what the view was built from; 0 = the cluster itself */
	int *fgn_gpus, *fgn_cpus; /* per node: what the engine says rubick does not control */
	char *cluster_spec;
	int *gpu_base;           /* first global GPU id of each node */
	unsigned char *gpu_holders; /* per global GPU id: live runs holding it */
	int n_gpus;              /* GPUs installed, all nodes */
	struct rk_perf_env env;  /* performance-model constants policies decide with */
	const struct rkd_engine_ops *engine;
	void *engine_state;
	const struct rk_policy_ops *policy;
	void *policy_state;
	char policy_options[512];
	char *url;
	int round_interval_ms;
	struct rkd_tenant_cfg *tenants;
	int n_tenants;
	/* hold/release/requeue rate per tenant (token bucket, sched_hold.c), tenants' order */
	double *chg_budget;
	int64_t *chg_ms;
	struct rk_tenant_quota *quotas; /* tenants with a guaranteed_gpu_quota, for every round */
	const struct rkd_idmap *ids;    /* who jobs run as (identity.h); NULL = rubickd's user */
	unsigned char token_key[RKD_KEY_BYTES]; /* job tokens derive from it (secrets.h) */
	int n_quotas;
	const struct rk_zoo *zoo;
	struct rkd_readers *readers; /* read-only connections of GET and listings (sched_read.c) */

	struct sjob **jobs;      /* tracked jobs, in id order */
	int n_jobs, cap_jobs;
	struct sjob **dirty;     /* jobs whose row must be written (sjob.dirty set) */
	int n_dirty, cap_dirty;
	int launch_check;        /* a launch may have become possible */
	int compact_check;       /* a terminal job may be ready to forget */
	_Atomic int64_t next_id; /* request threads and the scheduler thread both take ids */
	/* Configured CPU threads and host memory of all nodes (fixed at start): a
	 * request above them can never be allocated, and is refused at submission. */
	int64_t cpus_total, mem_mb_total;
	_Atomic int gpus_up;     /* GPUs on nodes that are up, for submissions' feasibility check */
	struct rk_decisions dec;
	/*
	 * The change feed (rk_sched_input.incremental, policy.h), so that the
	 * classic policies' rounds cost O(changes + holders), not O(queue). Each
	 * array has room for cap_jobs entries (grown with jobs), so keeping them
	 * never fails. Every change to a job marks it (sched_dirty,
	 * sched_job_write, sched_job_add: sched_feed_mark); the round brings act
	 * and hl up to date from the marked jobs. feed_valid = 0 (start,
	 * recovery, policy or capacity change) rebuilds them from jobs and runs
	 * one full round (incremental = 0).
	 */
	struct rk_job **act;     /* active jobs in id order: the round's snapshot */
	int n_act;
	struct rk_job **hl;      /* active jobs holding an allocation, any order */
	int n_hl;
	struct rk_job **chg;     /* jobs changed since the last round */
	int n_chg;
	struct rk_job **vsnap;   /* scratch: holders + decided jobs, for validation */
	struct rk_job **ended;   /* tracked jobs that ended: what compaction looks at */
	int n_ended;
	int feed_valid;
	int full_rounds;         /* rkd_sched_config.full_rounds: no feed, every job walked */
	uint64_t round_seq;
	int round_wanted;
	int64_t next_round_ms;
	int64_t last_round_at_ms; /* when the latest round ran */
	int in_txn;
	_Atomic int failed;      /* storage failure: stop serving (either writer may set it) */
	struct rk_error fail_err;

	/* metrics */
	uint64_t rounds, reconfigs, preemptions, submits, launches, exits, policy_errors;
	uint64_t feed_rounds;    /* rounds that sent the change feed (incremental) */
	uint64_t quota_drops;    /* decisions dropped over a tenant quota (sched_round.c) */
	int reasons_stale;       /* pending reasons must be recomputed at the next round */
	/*
	 * The reasons of the latest round for reads on request threads
	 * (sched_reasons_fill): the pending jobs the policy saw, in id order.
	 * The scheduler thread fills reasons_build, then swaps it with
	 * reasons_pub under reasons_mu; readers search reasons_pub under it.
	 */
	pthread_mutex_t reasons_mu;
	struct rkd_reason_ent *reasons_pub, *reasons_build;
	int n_reasons_pub, cap_reasons_pub, cap_reasons_build;
	uint64_t reasons_sig;    /* rkd_reason_ctx.sig of the latest computation */
	struct rk_job **rchg;    /* the latest round's changed jobs (its feed), for the reasons */
	int n_rchg, cap_rchg;
	uint64_t lat_count[N_LAT_BUCKETS + 1];
	double lat_sum_ms;
	double last_round_ms;

	/* the message queue */
	pthread_t thread;
	int started, stopping;
	pthread_mutex_t mu;
	pthread_cond_t wake;     /* scheduler: messages arrived or stop */
	struct rkd_msg *head, *tail;
	struct sjob *adopt_head, *adopt_tail; /* (under mu) committed submissions to track */

	/*
	 * The submit writer (sched_submit.c): its own SQLite connection, so a
	 * submission's group commit never waits for a policy round. store_mu is
	 * held by whichever connection has a write transaction open (BEGIN to
	 * COMMIT), so the other waits on a mutex, not in SQLite's sleeping busy
	 * handler.
	 */
	char *db_path;
	char *state_dir; /* per-job folders (engine_cfg.state_dir): GET .../log reads job-ID/log */
	enum rkd_sync sync;
	pthread_mutex_t store_mu;
	struct rkd_store *sub_store;
	pthread_t sub_thread;
	int sub_started, sub_stopping;
	pthread_mutex_t sub_mu;
	pthread_cond_t sub_wake;
	struct sub_req *sub_head, *sub_tail;
};

extern const double rkd_lat_bounds_ms[N_LAT_BUCKETS]; /* sched_metrics.c */

/* sched_queue.c: the sending side of the message queue; the storage-failure flag */
/* Record the first storage failure (either writer); the thread stops serving. */
void sched_fail(struct rkd_sched *s, const struct rk_error *e);

/* sched_jobs.c: the job table, its stored rows, the write transaction, the feed's marks */
int64_t rkd_now_ms(void);
const char *rkd_state_name(enum rk_job_state st);
int rkd_state_parse(const char *name, enum rk_job_state *out);
struct sjob *sched_job_find(struct rkd_sched *s, int64_t id);
int sched_job_add(struct rkd_sched *s, struct sjob *j);
void sjob_free(struct sjob *j);
int sched_txn(struct rkd_sched *s);                       /* begin if not yet */
int sched_commit(struct rkd_sched *s);                    /* commit if open */
void sched_row_set(char **field, const char *value);      /* replace a malloc'd row string */
void sched_row_sync(struct sjob *j);                      /* row <- core */
int sched_job_write(struct rkd_sched *s, struct sjob *j); /* row <- core, update */
void sched_dirty(struct rkd_sched *s, struct sjob *j);    /* queue j's row for writing */
void sched_flush(struct rkd_sched *s);                    /* write every queued row */
void sched_history(struct rkd_sched *s, struct sjob *j, int64_t now, const char *reason);
void sched_event(struct rkd_sched *s, int64_t job_id, const char *kind, const char *detail);
/* List j in the change feed of the next round (any change to a tracked job). */
void sched_feed_mark(struct rkd_sched *s, struct sjob *j);
/* Grow the feed's arrays to `cap` entries (sched_job_add). RK_ENOMEM. */
int sched_feed_reserve(struct rkd_sched *s, int cap);
/* A tenant's configuration (fixed at start: any thread may read it), or NULL. */
const struct rkd_tenant_cfg *sched_tenant_find(const struct rkd_sched *s, const char *name);

/* sched_reply.c: what request handlers share to answer a message */
/* Set m's status and error (field named) from an RK_E* code. */
void sched_set_err(struct rkd_msg *m, int code, const char *field, const char *msg);
/* Reply with one job, tracked or stored (and its history when `with_hist`). */
void sched_reply_job(struct rkd_sched *s, struct rkd_msg *m, int status, int64_t id, int with_hist);
/*
 * The tracked, active job m->job_id names, or NULL with m's error set: 404
 * for a missing job or another tenant's (worded alike), 409 for one that ended.
 */
struct sjob *sched_job_for_change(struct rkd_sched *s, struct rkd_msg *m);
/* Whether `who` may see a job of `tenant` (its own tenant's, or the admin). */
int sched_caller_sees(const struct rkd_caller *who, const char *tenant);

/* sched.c: the scheduler thread */
void *sched_thread_main(void *arg);

/* sched_engine.c */
void sched_stop_run(struct rkd_sched *s, struct sjob *j, enum stop_kind why, int64_t now);
/* Stop j to pending, checkpointed (`why` in its history); the caller counts it, writes the row. */
void sched_preempt(struct rkd_sched *s, struct sjob *j, int64_t now, const char *why);
void sched_on_exit(struct rkd_sched *s, const struct rkd_exit *x, int64_t now);
void sched_ids_mark(struct rkd_sched *s, const char *text, int take);
void sched_run_next(struct rkd_sched *s, struct sjob *j);
/* Launch every job whose run is decided, stored and whose GPUs are free. */
void sched_launch_ready(struct rkd_sched *s, int64_t now);
/* Attained GPU-seconds of running jobs, brought up to date at most once a second. */
void sched_accrue(struct rkd_sched *s, int64_t now, int64_t *last);

/* sched_round.c */
/* One round: policy, validation, decisions applied (rows queued, not committed). */
int sched_round_run(struct rkd_sched *s, int64_t now, struct rk_error *err);

/* sched_view.c */
/* The cluster a round decides on: a draining node as big as what still runs there. */
const struct rk_cluster *sched_view(struct rkd_sched *s);
/* Drop the decisions that fail validation, one by one (events); dropped count or RK_E*. */
int sched_decisions_filter(struct rkd_sched *s, const struct rk_sched_input *vin,
			   struct rk_decisions *ds, struct rk_error *err);

/* sched_reason.c: squeue-like pending reasons, after each round's decisions */
/*
 * After a round's decisions: the pending reason (Infeasible, Quota,
 * Priority, Resources) of every job the policy saw, against `view`,
 * published for reads. An incremental round whose capacity and quota
 * holdings are those of the previous computation recomputes only the jobs
 * it changed or decided; any other round recomputes all.
 */
void sched_reasons_update(struct rkd_sched *s, const struct rk_cluster *view, int incremental);
/* Keep the round's changed jobs (in.changed) before the feed consumes them. */
void sched_reasons_note_changed(struct rkd_sched *s, struct rk_job *const *chg, int n);
/* Rows of a read (state "pending", no hold) get the latest round's reason. Thread-safe. */
void sched_reasons_fill(const struct rkd_sched *s, struct rkd_job_row *rows, int n);
void sched_reasons_init(struct rkd_sched *s);
void sched_reasons_fini(struct rkd_sched *s);

/* sched_hold.c: hold, release and requeue (docs/api.md "Hold, release, requeue") */
void sched_on_hold(struct rkd_sched *s, struct rkd_msg *m, int64_t now);
void sched_on_release(struct rkd_sched *s, struct rkd_msg *m, int64_t now);
void sched_on_requeue(struct rkd_sched *s, struct rkd_msg *m, int64_t now);

/* sched_feed.c: the change feed of rounds */
/* Whether compaction may free j: the feed no longer names it. */
int sched_feed_releasable(const struct sjob *j);
void sched_feed_free(struct rkd_sched *s);
/*
 * Before a round: act and hl brought up to date. Returns 1 when the round
 * may send the feed (incremental), 0 when it must be a full one (the lists
 * were rebuilt from jobs and the marks dropped).
 */
int sched_feed_prepare(struct rkd_sched *s);
/* After the policy ran: the marks are consumed; ok = 0 forces a full round next. */
void sched_feed_consumed(struct rkd_sched *s, int ok);
/* Holders and active decided jobs in vsnap, in id order, for rk_decisions_validate. */
int sched_feed_validation_jobs(struct rkd_sched *s, const struct rk_decisions *ds);
/* The jobs holding an allocation now (OUT: *n), or NULL while the feed is invalid. */
struct rk_job *const *sched_feed_holders(struct rkd_sched *s, int *n);
/* The holders sched_launchable accepts, in id order (OUT: *n); NULL while invalid. */
struct rk_job *const *sched_feed_launchable(struct rkd_sched *s, int *n);
/*
 * Forget ended jobs whose runs are gone and whose rows are written, looking
 * at the ended jobs only; sets compact_check while some still drain. 0 =
 * the feed is invalid: the caller scans every job instead.
 */
int sched_feed_compact(struct rkd_sched *s);

/* sched_submit.c */
/*
 * Build the job a submission asks for (no scheduler state but the cluster's
 * and tenants' configuration): checks that need no other job, the default
 * plan, the stored row; takes a new id. 0 and *out, or the error in m.
 */
int sched_submit_build(struct rkd_sched *s, struct rkd_msg *m, const char *tenant, int64_t now,
		       struct sjob **out);
/* Track jobs the submit writer committed (scheduler thread). */
void sched_adopt(struct rkd_sched *s, struct sjob *list);
int sched_submit_start(struct rkd_sched *s, struct rk_error *err);
void sched_submit_stop(struct rkd_sched *s);
/*
 * What an elastic job may be grown to: max_gpus no higher than its tenant's
 * gpu_quota (and guaranteed_gpu_quota for a guaranteed job), which it could
 * never hold anyway; the job's spec keeps what was asked.
 */
void sched_quota_clamp(const struct rkd_sched *s, struct rk_job *c);
/* 0 when m->spec's CPUs and memory fit the cluster; else RK_EINFEASIBLE in m, naming it. */
int sched_submit_fits(const struct rkd_sched *s, struct rkd_msg *m);
/* The plan a job without one gets (data parallel with accumulation: rk_plan_from_artifact "ga"). */
int sched_default_plan(const struct rkd_sched *s, const struct rk_model *model, int batch, int gpus,
                       struct rk_plan *out, struct rk_error *err);
/*
 * sched_slurm_opts.c: a submission's Slurm partition, account, QOS and time
 * limit against its tenant's allow-lists and limit; on failure the error is
 * set on m (the field at fault named) and a negative RK_E* code returned.
 */
int sched_slurm_opts_check(const struct rkd_tenant_cfg *tc, const char *tenant,
			   const struct rkd_spec *sp, struct rkd_msg *m);

/* sched_msgs.c */
void sched_handle(struct rkd_sched *s, struct rkd_msg *m, int64_t now);

/* sched_metrics.c */
void rkd_metrics_render(struct rkd_sched *s, struct rkd_msg *m);

/* refit.c: refit j->model from a throughput report; fitted parameters in the job's JSON. */
int rkd_refit_report(struct rkd_sched *s, struct sjob *j, double tput_sps, struct rk_error *err);
char *rkd_refit_json_add(const struct sjob *j, char *body);
void rkd_refit_free(struct rkd_fit *f);
/* The refit state in the store: saved with each report, reloaded on recovery, and shown for
 * jobs no longer tracked (finished) from the store. */
int rkd_refit_save(struct rkd_sched *s, const struct sjob *j, int64_t now, struct rk_error *err);
void rkd_refit_recover(struct rkd_sched *s, struct sjob *j);
char *rkd_refit_json_add_stored(struct rkd_store *store, int64_t id, char *body);

/* sched_read.c: GET /v1/jobs[/{id}] from the committed state, off the scheduler thread */
/* Answer m (GET, LIST, LOG, EVENTS) from `store`, with what m->who may see. */
void sched_read_store(const struct rkd_sched *s, struct rkd_store *store, struct rkd_msg *m);
/* sched_read_ops.c: GET /v1/jobs/{id}/log and /events (owner or admin). */
void sched_read_log(const struct rkd_sched *s, struct rkd_store *store, struct rkd_msg *m);
void sched_read_events(struct rkd_store *store, struct rkd_msg *m);
/* 0 when m->who may see job m->job_id; else m holds the 404 (or storage error). */
int sched_read_owned(struct rkd_store *store, struct rkd_msg *m);
int sched_readers_init(struct rkd_sched *s, struct rk_error *err);
void sched_readers_fini(struct rkd_sched *s);

#endif
