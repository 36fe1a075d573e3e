/*
 * The trace-driven simulator engine: a discrete-event loop over integer
 * milliseconds that replays jobs through one policy (the same rk_policy_ops
 * the daemon runs), applies its decisions after rk_decisions_validate, charges
 * a restart delay for every change of placement or plan, and advances jobs
 * with a throughput oracle (never with the policy's own model).
 *
 * Deterministic: the same jobs, cluster, policy, config and seed give the
 * same outcomes and samples, bit for bit. Events at the same instant are
 * handled in a fixed order: restarts that end, completions, arrivals, then
 * one scheduling round.
 */
#ifndef RUBICK_SIM_H
#define RUBICK_SIM_H

#include "rubick/cluster.h"
#include "rubick/error.h"
#include "rubick/job.h"
#include "rubick/loadseries.h"
#include "rubick/metrics.h"
#include "rubick/policy.h"

#include <stdint.h>

/* Defaults of the papers' simulators (docs/references.md §1.9, §7). */
#define RK_SIM_DEFAULT_INTERVAL_MS 60000       /* scheduling round: 60 s */
#define RK_SIM_DEFAULT_RESTART_MS 260000       /* Rubick simulator's restart delay: 260 s */

/*
 * Seconds per iteration of `job` running `plan` on `alloc` (the oracle). Same
 * contract as rk_oracle_iter_s; `ctx` is the caller's.
 */
typedef int (*rk_sim_iter_fn)(void *ctx, const struct rk_job *job, const struct rk_plan *plan,
			      const struct rk_alloc *alloc, const struct rk_cluster *cluster,
			      double *iter_s, struct rk_error *err);

/* rk_sim_iter_fn over an rk_oracle (ctx = struct rk_oracle *). */
int rk_sim_oracle_iter(void *ctx, const struct rk_job *job, const struct rk_plan *plan,
		       const struct rk_alloc *alloc, const struct rk_cluster *cluster,
		       double *iter_s, struct rk_error *err);

/* A per-model restart delay overriding the default one. */
struct rk_sim_restart_override {
	char model[RK_MODEL_NAME_MAX]; /* zoo key */
	int64_t restart_ms;
};

struct rk_sim_config {
	int64_t interval_ms;      /* periodic round; > 0 */
	int64_t restart_ms;       /* delay of every reconfiguration; >= 0 */
	/* 1 = a job's first start also pays its restart delay, as Pollux's and
	 * Sia's simulators charge it (the rescale countdown starts at every
	 * allocation); 0 (default) = free: the trace's length includes start-up. */
	int first_start_paid;
	const struct rk_sim_restart_override *overrides; /* borrowed, n_overrides entries */
	int n_overrides;
	uint64_t seed;            /* mixed with the round number into rk_sched_input.seed */
	int check;                /* 1 = verify the invariants after every event (slow) */
	int64_t horizon_ms;       /* stop at this time, 0 = run until every job ends */
	rk_sim_iter_fn iter;      /* the oracle; required */
	void *iter_ctx;
	const struct rk_perf_env *env; /* passed to policies (may be NULL) */
	/* 1 = refit each running job's model from the iteration times the oracle
	 * gives for what it runs (rubick/refit.h, as rubickd does from reports);
	 * policies then decide with the refitted model. Needs env. */
	int refit;
	const char *policy_options;    /* "key=value,..." for the policy's create, or NULL */
	/* Called after each round with jobs finished so far (may be NULL). */
	void (*progress)(void *ctx, int64_t now_ms, int done, int total);
	void *progress_ctx;
	/*
	 * Co-location physics (issue 6, docs/sharing.md); all off by default.
	 * sharing: at most two jobs per GPU when their per-GPU memory (memory
	 * model) fits, each slowed by xi from `xi` (fallback chain of sharing.h).
	 * contention: a job spanning several nodes shares each node's NIC with the
	 * other cross-node jobs there; its iteration time gains the §4.2 ring
	 * term for the extra contention and contention_overhead_ms per extra node.
	 * Rates are re-evaluated whenever a job starts, changes or ends.
	 */
	int sharing;
	int contention;
	const struct rk_xi_table *xi;   /* borrowed; NULL = no measurements */
	double contention_overhead_ms;  /* per extra node spanned; >= 0 */
	/*
	 * Capacity loaning (issue 5, docs/aryl.md). With `inference` set, the
	 * nodes of pool RK_POOL_LOANED are the inference cluster: at time t
	 * (seconds of the series count from the simulation start) inference
	 * keeps the servers it needs over [t, t + reclaim_deadline_ms] and the
	 * rest are up, on loan to training. When fewer may stay on loan the
	 * policy's reclaim hook (aryl.h rk_policy_reclaim_hook), else the §2.3
	 * greedy, picks the servers and moves jobs off; anything still on them
	 * is preempted and the servers go down — so the notice comes a deadline
	 * ahead of inference's need. Not combinable with `sharing`.
	 */
	const struct rk_load_series *inference; /* borrowed; NULL = no loaning */
	int64_t reclaim_deadline_ms;            /* >= 0 */
	/*
	 * Guaranteed-GPU quotas (docs/references.md §1.7; borrowed, n_quotas entries,
	 * tenants not listed have none). A guaranteed job arriving when its
	 * tenant's active guaranteed jobs (arrived, not finished or rejected)
	 * already request so many GPUs that its own request would exceed the
	 * quota is rejected: it never runs and its outcome says why. Every round
	 * gets the quotas in rk_sched_input, and a decision that would have a
	 * tenant hold more than one is dropped (rk_decisions_apply_quotas).
	 */
	const struct rk_tenant_quota *quotas;
	int n_quotas;
};

/* Defaults: 60 s rounds, 260 s restarts, seed 0, check off, no horizon. */
void rk_sim_config_default(struct rk_sim_config *cfg);

/*
 * One plan a job was given: a start, a resume or a reconfiguration (new GPUs
 * or a new plan), as applied. The log is what shows which plans a policy
 * actually ran (rubick sim --out: plans.csv), e.g. that a job declaring
 * tp=1 never ran tensor parallelism.
 */
struct rk_sim_plan_change {
	int64_t t_ms;        /* when it was applied */
	int64_t job_id;
	int gpus;            /* GPUs of the new allocation */
	struct rk_plan plan; /* the plan it runs from then on */
};

struct rk_sim_result {
	struct rk_job_outcome *outcomes; /* owned; one per job, in input order */
	int n_outcomes;
	struct rk_sim_sample *samples;   /* owned; one per change, sorted by t_ms */
	int n_samples;
	struct rk_sim_plan_change *plans; /* owned; one per start, resume or reconfiguration,
					   * in the order applied */
	int n_plans;
	int64_t start_ms, end_ms;        /* simulated window */
	int64_t rounds;                  /* scheduling rounds run */
	int64_t reconfigs;               /* restarts paid (changes after the first start) */
	int64_t preemptions;
	int64_t decisions;               /* decisions applied */
	int64_t checks;                  /* invariant checks passed (check mode) */
	int64_t jobs_scaled;             /* jobs whose iterations came from duration / oracle */
	/* capacity loaning (cfg.inference) */
	int64_t servers_loaned;          /* loan events, servers */
	int64_t servers_reclaimed;       /* servers given back */
	int64_t reclaim_preemptions;     /* jobs preempted to give servers back */
	int64_t reclaim_scale_ins;       /* elastic jobs scaled in instead */
	double loaned_gpu_s;             /* GPU-seconds of loaned servers up */
	int64_t rejected;                /* guaranteed jobs rejected over their tenant's quota */
};

void rk_sim_result_fini(struct rk_sim_result *r);

/*
 * Replay `jobs` (n templates, read only; ids unique; submit_ms >= 0) on
 * `cluster` under `policy`. Each job needs its model, global batch, request
 * (req_gpus >= 1 and req_plan valid for them) and either iters_total > 0 or
 * est_duration_s > 0: a job with only a duration gets iters_total = duration
 * / the oracle's iteration time at its request on a consolidated placement
 * of an empty cluster of its ref_gpu_type (this cluster's shape, every node
 * of that type; this cluster itself when ref_gpu_type is ""); one with only
 * iterations gets est_duration_s the same way. OUT: *out (release with rk_sim_result_fini). Errors name the job or
 * policy: a bad job (RK_EINVAL), a rejected decision (the validator's code),
 * an oracle failure for a decided allocation, a broken invariant in check mode
 * (RK_EINTERNAL).
 */
int rk_sim_run(const struct rk_cluster *cluster, const struct rk_job *jobs, int n,
	       const struct rk_policy_ops *policy, const struct rk_sim_config *cfg,
	       struct rk_sim_result *out, struct rk_error *err);

/* ---- jobs from a trace (src/sim/engine/sim_jobs.c) ----------------------- */

struct rk_trace;
struct rk_zoo;

/* What building the jobs changed or dropped (never silent: the CLI prints it). */
struct rk_sim_jobs_report {
	int dropped;          /* jobs skipped as bad (only with skip_bad) */
	int batch_adjusted;   /* jobs whose default global batch was rounded up to a multiple
			       * of their GPUs (the trace gave no batch) */
	int default_plan;     /* jobs given plain data parallelism (the trace gave no plan) */
	char first_reason[256]; /* the first dropped job: "FILE:LINE: why" */
};

/*
 * Turn a parsed trace into simulator jobs (ids 1..n in trace order). Per job:
 * the zoo model (rk_zoo_find), the trace's global batch or the model's (rounded
 * up to a multiple of the GPUs when the trace gave none), the requested
 * GPUs/CPUs/memory, the plan (canonical text, or an artifact name read with
 * rk_plan_from_artifact on the consolidated placement of the request, or plain
 * data parallelism "ga" when none), iterations and duration. A job whose model
 * is unknown, whose plan cannot be read or whose request cannot fit the empty
 * cluster is an error "FILE:LINE: job NAME: why", or with `skip_bad` dropped
 * and counted. OUT: *jobs (free with rk_sim_jobs_free), *n, *rep.
 */
int rk_sim_jobs_from_trace(const struct rk_trace *t, const char *filename,
			   const struct rk_zoo *zoo, const struct rk_cluster *cluster, int skip_bad,
			   struct rk_job **jobs, int *n, struct rk_sim_jobs_report *rep,
			   struct rk_error *err);

void rk_sim_jobs_free(struct rk_job *jobs, int n);

/*
 * Give every job of `jobs` (built from `t` by rk_sim_jobs_from_trace) whose
 * record carries no elastic range (rk_trace_job.has_range) the range
 * [1, max_gpus]: the free reconfiguration of the Rubick and Sia papers, made
 * explicit since every policy honours a job's range (`rubick sim --gpu-range
 * free`, docs/policies.md "GPU ranges"). Returns how many jobs it widened.
 */
int rk_sim_jobs_free_range(const struct rk_trace *t, struct rk_job *jobs, int n, int max_gpus);

/*
 * The GPU type a trace format's run times were measured on ("a800" for
 * Rubick traces, "t4" for Sia's, "v100" for Philly-derived ones, ...; the
 * table and its sources are in src/sim/engine/sim_jobs.c and docs/oracle.md), or ""
 * for an unknown format. rk_sim_jobs_from_trace sets every job's
 * ref_gpu_type to it; rk_sim_jobs_set_ref_gpu overrides it ("" = the cluster
 * each job runs on, the length rubick used before GPU types were modelled).
 */
const char *rk_sim_trace_gpu_type(const char *format);
void rk_sim_jobs_set_ref_gpu(struct rk_job *jobs, int n, const char *gpu_type);

/*
 * The oracle's seconds per iteration of `job`'s requested plan on the
 * consolidated placement its request gets on the empty `cluster` (what
 * rk_sim_run scales durations with). OUT: *iter_s. RK_EINFEASIBLE when the
 * request does not fit the empty cluster; the oracle's error otherwise.
 */
int rk_sim_iter_at_request(const struct rk_cluster *cluster, const struct rk_job *job,
			   rk_sim_iter_fn iter, void *ctx, double *iter_s, struct rk_error *err);

/*
 * Keep only the jobs whose request the oracle can price (rk_sim_iter_at_request);
 * the others are an error naming the job, or with `skip_bad` dropped (the
 * array compacted, *n reduced) and counted in rep->dropped.
 */
int rk_sim_jobs_check_oracle(const struct rk_cluster *cluster, struct rk_job *jobs, int *n,
			     rk_sim_iter_fn iter, void *ctx, int skip_bad,
			     struct rk_sim_jobs_report *rep, struct rk_error *err);

#endif
