/*
 * Internal state of the simulator engine, shared by engine.c (event loop,
 * rounds), engine_apply.c (applying decisions), engine_jobs.c (event heap,
 * progress, change feed), engine_run.c (set-up, outcomes) and engine_check.c
 * (check mode). Not a public interface.
 *
 * Calls go one way, from the core down to its parts; no part calls a file
 * above it (scripts/callgraph.py over every object of src/sim/engine: test
 * layout_calls):
 *
 *   core    engine_run.c     -> engine coloc loan refit sla request jobs
 *           engine.c         -> apply check coloc loan refit sla jobs
 *   parts   engine_loan.c    -> apply jobs loadseries
 *           engine_apply.c   -> coloc sla jobs
 *           engine_check.c   -> coloc
 *           engine_coloc.c   -> jobs
 *           engine_sla.c     -> request
 *   leaves  engine_jobs.c, engine_request.c, engine_refit.c, loadseries.c
 *
 * sim_jobs.c (jobs from a trace, sim.h) stands apart: the CLI and the benches
 * call it before a run, no engine file does. Out of the folder the engine calls
 * only the oracle (rk_oracle_iter_s, src/sim/oracle).
 */
#ifndef RUBICK_SIM_ENGINE_INTERNAL_H
#define RUBICK_SIM_ENGINE_INTERNAL_H

#include "rubick/sharing.h"
#include "rubick/sim.h"

#include <stdint.h>

/* Heap events at the same instant: restarts end before completions. */
enum { EV_RESTART_END = 0, EV_COMPLETE = 1 };

struct ev {
	int64_t t_ms;
	int kind;
	int job;          /* index in sim.jobs */
	uint32_t version; /* stale when != the job's version */
};

/* One simulated job: the live rk_job plus the engine's bookkeeping. */
struct sjob {
	struct rk_job j;       /* live copy; alloc owned */
	double iter_ms;        /* ms per iteration with the current plan/alloc (oracle) */
	double base_iter_ms;   /* the oracle's price alone, before co-location (engine_coloc.c) */
	int64_t run_from_ms;   /* progress accrues from here ... */
	double iters_at_run;   /* ... starting at this many iterations */
	int64_t hold_from_ms;  /* GPU-seconds accrue from here while holding */
	int64_t ready_ms;      /* end of the current restart delay */
	int64_t finish_ms;     /* -1 until done */
	int64_t restart_ms;    /* this job's restart delay (per-model override) */
	double gpu_s;          /* GPU-seconds held so far */
	int preemptions;
	uint32_t version;
	int arr_rank;          /* position in sim.order: act is sorted by it */
	int hl_pos;            /* index in sim.hl, -1 = holds nothing */
	int in_chg;            /* listed in sim.chg */
	/* guaranteed jobs (engine_sla.c) */
	double sla_base_ms;    /* oracle ms per iteration at the request; 0 = not guaranteed */
	int64_t below_from_ms; /* running below the baseline since, -1 = not */
	int64_t below_ms;      /* running ms below the baseline so far */
	double worst_ratio;    /* smallest current/baseline while running, 0 = never ran */
	int rejected;          /* over its tenant's quota at arrival: never runs */
	/* online refit (engine_refit.c); NULL unless cfg.refit and observed */
	struct sim_fit *fit;
	char reason[160];      /* why it was rejected */
};

struct sim {
	const struct rk_cluster *cluster;
	const struct rk_job *tmpl; /* the caller's templates, for the invariant checks */
	struct rk_sim_config cfg;
	int n;
	struct sjob *jobs;         /* n, input order */
	int *order;                /* job indices by (submit_ms, input index) */
	int next_arrival;          /* position in order */
	int *act;                  /* active job indices (pending or holding), arrival order */
	int n_act;
	struct rk_job **snap;      /* policy snapshot, n_act entries, kept in step with act */
	/* The change feed of rk_sched_input (policy.h): rounds cost O(changes), not O(active). */
	struct rk_job **hl;        /* jobs holding resources, any order */
	int n_hl;
	struct rk_job **chg;       /* jobs that arrived/started/stopped/finished since the last round */
	int n_chg;
	struct rk_job **vsnap;     /* validation snapshot: holders + decided jobs (scratch) */
	struct id_slot *ids;       /* job id -> index, sorted by id */
	struct rk_capacity cap;
	int gpus_total;
	struct ev *heap;
	int n_heap, cap_heap;
	int64_t now_ms;
	int64_t next_round_ms;
	int last_round_decisions;
	int dirty;                 /* something happened since the last round */
	int64_t wake_ms;           /* round the policy asked for (rk_decisions.wake_ms), 0 = none */
	int64_t quiet_until_ms;    /* rk_decisions.quiet_until_ms of the last round, 0 = none */
	int n_pending, n_holding, n_done;
	int n_rejected;            /* arrived and rejected (state RK_JOB_CANCELLED) */
	int n_guaranteed;          /* guaranteed jobs, for skipping the SLA sweep */
	struct rk_decisions ds;
	struct rk_sim_result res;
	int cap_samples;
	int cap_plans;             /* entries allocated in res.plans */
	/* co-location (engine_coloc.c); unused unless cfg.sharing or cfg.contention */
	struct rk_cluster slots;   /* the cluster with two slots per GPU (sharing) */
	struct rk_gpu_occ occ;     /* holders of each GPU (sharing) */
	int busy_gpus;             /* GPUs with at least one holder (sharing) */
	int *hold;                 /* n: holding job indices, scratch */
	const struct rk_alloc **hold_alloc; /* n: their allocations, scratch */
	int *hold_p;               /* n: their contention degrees, scratch */
	struct rk_xi_memo *xi_memo; /* answered interference lookups (sharing) */
	/* capacity loaning (engine_loan.c); unused unless cfg.inference */
	struct rk_cluster live;    /* the cluster with loaned servers up or down */
	int64_t *loan_t;           /* instants the loanable count changes */
	int *loan_avail;           /* servers loanable from loan_t[i] on */
	int n_loan, next_loan;
	int loaned_gpus;           /* GPUs of loaned servers up now */
	int64_t loaned_since_ms;   /* loaned_gpus holds since */
};

struct id_slot {
	int64_t id;
	int index;
};

/* engine_jobs.c: the job primitives every other engine file uses */
/* Index of the job with id `id` (it must exist: decisions are validated first). */
int sim_job_index(const struct sim *s, int64_t id);
/* The event heap: earliest first, ties by kind then job (deterministic). RK_ENOMEM. */
int sim_heap_push(struct sim *s, int64_t t_ms, int kind, int job);
void sim_heap_pop(struct sim *s);
/* Drop events made stale by a later change of their job. */
void sim_heap_clean_top(struct sim *s);
/* Bring iters_done and the GPU-seconds held up to `now`. */
void sim_settle(struct sim *s, struct sjob *sj, int64_t now);
/* Change feed bookkeeping: list `sj` as changed; it starts / stops holding. */
void sim_mark(struct sim *s, struct sjob *sj);
void sim_hold_add(struct sim *s, struct sjob *sj);
void sim_hold_del(struct sim *s, struct sjob *sj);
/* Start accruing progress at `now` and schedule the completion. */
int sim_start_running(struct sim *s, int idx, int64_t now);
/* Co-location (engine_coloc.c): set-up, re-evaluating every holder's rate, check mode. */
int sim_coloc_init(struct sim *s, struct rk_error *err);
void sim_coloc_fini(struct sim *s);
int sim_rerate(struct sim *s, struct rk_error *err);
int sim_coloc_check(struct sim *s, struct rk_error *err);
/* engine_apply.c: apply validated decisions at s->now_ms (nothing changes on an oracle error). */
int sim_apply(struct sim *s, const struct rk_decisions *ds, const char *pname,
	      struct rk_error *err);
/*
 * Quotas bound what is held (rk_decisions_apply_quotas): drop from s->ds the
 * decisions that would take a tenant past a quota, after they were validated
 * on `vin` (engine.c's rounds; the loan rounds of engine_loan.c too).
 */
int sim_apply_quotas(struct sim *s, const struct rk_sched_input *vin, const char *name,
		     struct rk_error *err);
/* engine.c: the event loop rk_sim_run (engine_run.c) drives. */
int sim_loop(struct sim *s, const struct rk_policy_ops *p, void *pstate, struct rk_error *err);
/* Check mode: the invariants of sim.h after the instant that followed `prev_ms`. */
int sim_check(struct sim *s, int64_t prev_ms, struct rk_error *err);
/* Capacity loaning (engine_loan.c): set-up, next instant, one instant's change. */
int sim_loan_init(struct sim *s, struct rk_error *err);
void sim_loan_fini(struct sim *s);
int64_t sim_loan_next(const struct sim *s);
void sim_loan_account(struct sim *s); /* integrate loaned GPU-seconds up to now */
int sim_loan_step(struct sim *s, const struct rk_policy_ops *p, void *pstate, int *changed,
		  struct rk_error *err);

/*
 * Guaranteed jobs (engine_sla.c): baselines at set-up, the quota check at
 * arrival (0 = admitted, 1 = rejected), and the below-baseline bookkeeping:
 * sim_sla_sweep at the end of every instant (states and rates are constant
 * between instants), sim_sla_close when a job leaves (completion, the end).
 */
/*
 * Online refit (engine_refit.c, cfg.refit): sim_refit_sweep after every
 * instant observes each running holder's configuration once; around a policy
 * call, sim_refit_swap(s, 1) shows policies the refitted models and
 * sim_refit_swap(s, 0) gives the oracle its own back.
 */
int sim_refit_sweep(struct sim *s, struct rk_error *err);
void sim_refit_swap(struct sim *s, int fitted);
void sim_refit_fini(struct sim *s);
int sim_sla_init(struct sim *s, struct rk_error *err);
int sim_quota_reject(struct sim *s, int idx);
void sim_sla_sweep(struct sim *s);
void sim_sla_close(struct sjob *sj, int64_t now);

#endif
