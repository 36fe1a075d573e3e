/*
 * The scheduling-policy interface. A policy reads a snapshot (time, cluster,
 * jobs) and returns the allocation and plan it wants for each job it changes.
 * Policies read no clock, file or network: time and randomness come in through
 * the snapshot, so the simulator, the daemon and the benchmarks drive exactly
 * the same decisions. A policy is a const struct of methods (like a Linux
 * scheduling class); the registry is a plain array.
 */
#ifndef RUBICK_POLICY_H
#define RUBICK_POLICY_H

#include "rubick/cluster.h"
#include "rubick/job.h"

#include <stdint.h>

struct rk_perf_env; /* cluster constants of the performance model (perf.h) */
struct rk_xi_table; /* interference factors (sharing.h) */

/*
 * A tenant's quotas. guaranteed_gpus (Rubick §1.7): the GPUs its guaranteed
 * jobs may hold together; best-effort jobs are not counted. gpu_quota (when
 * has_gpu_quota): the GPUs all its jobs may hold together. Drivers own quotas
 * (daemon tenant config, `rubick sim --quota`): they reject a submission over
 * its tenant's quota, hand the quotas to every round, and apply no decision
 * that would break one (rk_decisions_apply_quotas).
 */
struct rk_tenant_quota {
	char tenant[RK_TENANT_MAX];
	int guaranteed_gpus; /* >= 0; -1 = no guaranteed quota (an entry for gpu_quota alone) */
	int has_gpu_quota;   /* 0 (the zero value) = no gpu_quota */
	int gpu_quota;       /* >= 0 when has_gpu_quota */
};

/*
 * Parse quotas "TENANT:GPUS[/TENANT:GPUS...]" (the syntax of rubick's quota=
 * option; `rubick sim --quota`) from `text`; `what` names the input in
 * messages. Tenants are 1..RK_TENANT_MAX-1 characters without ':' or '/',
 * GPUs 0..1000000, each tenant at most once. OUT: *quotas (free() it; NULL
 * when n == 0), *n. RK_EINVAL / RK_ERANGE / RK_ENOMEM with
 * "WHAT: entry 'X': what is wrong". (src/policy/common/quota.c)
 */
int rk_tenant_quotas_parse(const char *text, const char *what, struct rk_tenant_quota **quotas,
			   int *n, struct rk_error *err);

struct rk_sched_input {
	int64_t now_ms;                   /* current time */
	const struct rk_cluster *cluster; /* nodes, with up/down and pool */
	struct rk_job *const *jobs;       /* active jobs (pending, running, restarting) */
	int n_jobs;
	const struct rk_perf_env *env;    /* for model-based decisions; may be NULL */
	uint64_t seed;                    /* per-round seed for any randomness */
	/*
	 * GPU sharing (issue 6, docs/sharing.md): 1 = the driver lets two jobs
	 * share a GPU when their memory fits (rk_share.gpu_mask names GPUs);
	 * `xi` = measured interference factors for the policy's estimates (may
	 * be NULL: sharing.h's fallback applies).
	 */
	int gpu_sharing;
	const struct rk_xi_table *xi;
	/* Guaranteed-GPU quotas; tenants not listed have none. May be NULL. */
	const struct rk_tenant_quota *quotas;
	int n_quotas;
	/*
	 * Change feed, so that policies keeping state across rounds (the classic
	 * baselines) pay for what changed, not for every waiting job. Drivers
	 * that fill it (the simulator) set `incremental` = 1 and promise: a job
	 * keeps one pointer for the life of the policy state; `holders` lists
	 * exactly the jobs of `jobs` holding resources; `changed` lists every job
	 * that arrived, started or stopped holding, or finished (RK_JOB_DONE, no
	 * longer in `jobs`) since the previous round given to this policy state.
	 * 0 (the default) = none of this holds and policies read `jobs` alone.
	 */
	int incremental;
	struct rk_job *const *holders;
	int n_holders;
	struct rk_job *const *changed;
	int n_changed;
	/*
	 * 1: the driver skips the rounds an RK_POLICY_EVENT_DRIVEN policy
	 * answers by rk_decisions.wake_ms and quiet_until_ms (the simulator), so
	 * proving that rounds would repeat pays (Sia, sia_quiet.c); 0 (rubickd):
	 * every round runs and such proofs are wasted work.
	 */
	int skips_quiet;
};

/*
 * What a policy wants for one job. alloc.n == 0 stops the job (preempt back to
 * pending); otherwise the job runs `plan` on `alloc`. Jobs a policy does not
 * mention keep what they have.
 */
struct rk_decision {
	int64_t job_id;
	struct rk_alloc alloc; /* owned by the decision list */
	struct rk_plan plan;
	/* Batch-size adaptation (Pollux, Sia), read only for a job with a goodput
	 * model (job.h rk_job_goodput): the per-GPU batch and the gradient
	 * accumulation steps to run on `alloc` (total batch = GPUs x local_bsz x
	 * (accum_steps + 1)). local_bsz 0 = the trace's batch (trace_batch / GPUs,
	 * no accumulation), which is what every policy that does not adapt runs. */
	int local_bsz;
	int accum_steps;
};

struct rk_decisions {
	int n, cap;
	struct rk_decision *v; /* owned */
	/*
	 * For RK_POLICY_EVENT_DRIVEN policies: the time by which the policy needs
	 * another round even if no job arrives or finishes (e.g. a running job
	 * crossing a priority threshold); 0 = none. Drivers round it up to their
	 * round grid.
	 */
	int64_t wake_ms;
	/*
	 * For RK_POLICY_EVENT_DRIVEN policies: every round of the driver's grid
	 * before this instant (INT64_MAX = all) would decide nothing and, of
	 * itself, ask for the next grid round; the policy answers them by
	 * wake_ms instead. A driver that skips them keeps its grid as if they had
	 * run: a round it then runs for an event that is not an arrival or a
	 * completion (a restart that ends) happens at the grid round it would
	 * have waited for after them (Sia's quiet rounds, sia_quiet.c). 0 = none.
	 */
	int64_t quiet_until_ms;
};

struct rk_policy_ops {
	const char *name;    /* registry key, e.g. "fifo" */
	const char *summary; /* one line for `rubick sim --help` */
	/* Allocate private state; `options` is "key=value,..." or NULL. */
	int (*create)(void **state, const char *options, struct rk_error *err);
	void (*destroy)(void *state);
	/* One scheduling round: append decisions to `out`. */
	int (*schedule)(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			struct rk_error *err);
	/*
	 * RK_POLICY_* flags; 0 is always safe. RK_POLICY_IDLE_NOOP promises that a
	 * round in which no job is pending changes nothing, so a driver may skip
	 * periodic rounds while the queue is empty (the classic baselines).
	 */
	unsigned flags;
	/*
	 * RK_POLICY_NEEDS_* flags: what of its input the policy needs to act as
	 * its name says (0 = nothing). Without it the policy still runs, as
	 * `without` says, so a driver can tell its user why two rows agree
	 * (`rubick sim` warns on stderr). Data, not behaviour: no driver
	 * changes what it runs because of it.
	 */
	unsigned needs;
	const char *without; /* what it runs as without what it needs, e.g. "fifo"; NULL if needs == 0 */
};

#define RK_POLICY_IDLE_NOOP 1u
/*
 * The policy's decisions depend only on which jobs are active, what they hold
 * and their progress relative to one another in a way that only arrivals,
 * completions and restarts that end can change, and a round run right after
 * applying the previous one's decisions decides nothing new: a driver may skip
 * a periodic round when none of these happened since the last round (FIFO,
 * SJF, SRTF),
 * unless the policy asked for one through rk_decisions.wake_ms (Tiresias).
 */
#define RK_POLICY_EVENT_DRIVEN 2u

/* Shares GPUs only when the driver allows it (rk_sched_input.gpu_sharing). */
#define RK_POLICY_NEEDS_SHARING 1u
/* Treats guaranteed jobs (rk_job.guaranteed) apart; with none it is `without`. */
#define RK_POLICY_NEEDS_GUARANTEED 2u
/*
 * Adapts batch sizes on the jobs' goodput models (rk_job.goodput): without
 * one (no goodput oracle) it runs every job at its trace's batch, and a
 * driver fits the per-type throughput models (rk_job_goodput.perf) only for
 * a policy that declares it.
 */
#define RK_POLICY_NEEDS_GOODPUT 4u

/* ---- registry (src/policy/registry.c) ------------------------------------- */

/* The policy registered as `name` (exact match), or NULL. Borrowed, static. */
const struct rk_policy_ops *rk_policy_find(const char *name);

/* Every registered policy, in registry order. OUT: *n. Borrowed, static. */
const struct rk_policy_ops *const *rk_policy_list(int *n);

/* ---- decision lists (src/policy/common/decisions.c) ----------------------- */

void rk_decisions_init(struct rk_decisions *d);
/* Free every decision's alloc and the list; leaves it empty and reusable. */
void rk_decisions_fini(struct rk_decisions *d);
/* Drop all decisions, keep the storage. */
void rk_decisions_clear(struct rk_decisions *d);
/*
 * Append "run `job_id` with `plan` on `alloc`" (alloc copied; alloc == NULL or
 * alloc->n == 0 means preempt, plan then ignored and may be NULL). RK_ENOMEM.
 */
int rk_decisions_push(struct rk_decisions *d, int64_t job_id, const struct rk_alloc *alloc,
		      const struct rk_plan *plan);

/*
 * The GPUs any policy may give `job`: [*lo, *hi] = [min_gpus, max_gpus], a
 * field <= 0 meaning unbounded on that side (1, INT_MAX). Every policy honours
 * it (docs/policies.md "GPU ranges"): drivers say how elastic a job is, a
 * rigid job has min_gpus == max_gpus == req_gpus (src/policy/common/decisions.c).
 */
void rk_job_gpu_range(const struct rk_job *job, int *lo, int *hi);

/*
 * Check decisions `ds` of policy `policy_name` against snapshot `in`, as if
 * applied together (jobs not mentioned keep their allocations):
 *  - every job id exists among in->jobs and is pending, running or restarting,
 *    and appears at most once;
 *  - an allocation has shares on distinct, existing nodes that are up, each
 *    with at least one GPU, and every node's GPUs, CPUs and memory suffice;
 *  - its GPUs lie in the job's [min_gpus, max_gpus] (rk_job_gpu_range);
 *  - its plan is valid for the job's global batch on the allocated GPUs
 *    (rk_plan_validate) and lays out on its placement (rk_plan_check_placement).
 * Returns 0, or RK_EINVAL / RK_EINFEASIBLE / RK_ENOTFOUND with
 * "policy NAME: job ID (NAME): what is wrong".
 */
int rk_decisions_validate(const struct rk_sched_input *in, const struct rk_decisions *ds,
			  const char *policy_name, struct rk_error *err);

/*
 * The gpu_quota of `tenant` in in->quotas, or -1 when it has none: what a
 * policy caps one job's growth at, so that a lone elastic job is sized within
 * its quota instead of having its decision dropped (src/policy/common/quota.c).
 */
int rk_tenant_gpu_quota(const struct rk_sched_input *in, const char *tenant);

/* A decision rk_decisions_apply_quotas dropped, and the quota it would have broken. */
struct rk_quota_drop {
	int64_t job_id;
	int guaranteed; /* 0 = the tenant's gpu_quota, 1 = its guaranteed_gpus */
	int quota;      /* GPUs */
	int job_gpus;   /* what the decision gave the job */
	int tenant_gpus; /* what the tenant would have held with it */
	int stopped;    /* 1 = the job is stopped instead (keeping its allocation was invalid) */
};

/*
 * Quotas bound what is held, whatever a policy decides. `ds` was accepted by
 * rk_decisions_validate on `in` (whose jobs include every job holding GPUs).
 * For each tenant whose GPUs after the round (a decided job's new allocation,
 * the others' current one) would exceed its gpu_quota, or whose guaranteed
 * jobs' would exceed guaranteed_gpus, drop the decisions that give its jobs
 * more GPUs than they hold, the policy's last first, until it fits: those
 * jobs keep what they hold, every other decision stands. When keeping an
 * allocation no longer fits beside the remaining decisions (another decision
 * took what a dropped one gave up), that job is stopped instead. OUT: the
 * first max_drops drops in drops[], their number in *n_drops. Returns 0, or
 * the error of the final validation (RK_ENOMEM...).
 */
int rk_decisions_apply_quotas(const struct rk_sched_input *in, struct rk_decisions *ds,
			      const char *policy_name, struct rk_quota_drop *drops, int max_drops,
			      int *n_drops, struct rk_error *err);

#endif
