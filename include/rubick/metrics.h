/*
 * Simulation metrics: what happened to each job, the cluster sampled over
 * time, and the per-policy summary every report prints (issue 3 "Metrics and
 * output"). Pure computation, no I/O; exact and deterministic (the same
 * records always give the same bits).
 *
 * Definitions (all times in seconds in the summary):
 *  - JCT of a completed job = finish - submit. Unfinished jobs have no JCT;
 *    they are counted in `unfinished`.
 *  - Percentiles are nearest-rank: the p-th percentile of n sorted values
 *    x[0..n-1] is x[ceil(p/100 * n) - 1] (p in (0,100]); it is always an
 *    observed value. The median is the 50th percentile by this rule (the lower
 *    middle value when n is even).
 *  - Makespan = (last finish of a completed job) - start_ms, or end_ms -
 *    start_ms when some job is unfinished (the run stopped at the horizon).
 *  - Queueing delay of a job = first start - submit, averaged over the jobs
 *    that started at least once; `never_started` counts the others.
 *  - GPU utilisation = integral of allocated GPUs / integral of total GPUs
 *    over [start_ms, end_ms], samples taken as piecewise constant (sample i
 *    holds from its t_ms until the next sample's, the last until end_ms;
 *    nothing is counted before the first sample). The average queue length
 *    is the same integral of queue_len over the time the samples cover.
 *  - GPU-hours = sum of the jobs' gpu_s / 3600 (service received, including
 *    restart time while the allocation is held).
 *  - Reconfigurations per job = total restarts / jobs (every change of
 *    placement or plan that paid the restart cost, preemptions included).
 *  - Rejected jobs (a guaranteed submission over its tenant's quota,
 *    docs/references.md §1.7) never run: they are counted in `rejected` only, not
 *    in completed, unfinished, never_started or the queueing delay.
 *  - Guaranteed baseline (docs/references.md §1.7): a guaranteed job's throughput
 *    at its request (requested plan, requested GPUs, consolidated placement)
 *    by the simulator's oracle. While the job is RUNNING (not while pending or
 *    paying a restart) its throughput is the oracle's for its current plan
 *    and allocation (co-location slowdowns included); ratio = current /
 *    baseline. The job runs below its baseline when ratio < 1 - 1e-9 (the
 *    tolerance only absorbs floating-point noise: both sides are the same
 *    oracle's answers). sla_violations counts guaranteed jobs that ever ran
 *    below it, sla_violation_s sums their running seconds below it, and
 *    sla_worst_ratio is the smallest ratio any guaranteed job ran at (0 when
 *    no guaranteed job ran).
 *  - A guaranteed job the policy preempts (sends back to pending after it
 *    started, rk_job_outcome.preemptions > 0) runs at no throughput until it
 *    resumes: that breaks its guarantee too, however fast it runs otherwise
 *    (AntMan never preempts a guaranteed job, Rubick only shrinks one while
 *    it keeps its baseline, docs/references.md §1.7). The below-baseline seconds
 *    cover running time only, so preempted guaranteed jobs are counted apart:
 *    sla_preempted. A guarantee is kept when the job never ran below its
 *    baseline and was never preempted. A restart it pays for a new plan or
 *    allocation is not a preemption.
 */
#ifndef RUBICK_METRICS_H
#define RUBICK_METRICS_H

#include "rubick/error.h"
#include "rubick/job.h"
#include "rubick/model.h"

#include <stdint.h>

/* What happened to one job in one simulated run. */
struct rk_job_outcome {
	int64_t id;
	char name[RK_JOB_NAME_MAX];
	char model[RK_MODEL_NAME_MAX];
	int req_gpus;           /* GPUs requested */
	int64_t submit_ms;
	int64_t first_start_ms; /* -1 if it never started */
	int64_t finish_ms;      /* -1 if unfinished */
	int restarts;           /* reconfigurations that paid the restart cost (incl. after preemption) */
	int preemptions;        /* times it was stopped back to pending */
	int completed;          /* 1 = finished all iterations */
	double gpu_s;           /* GPU-seconds held */
	int guaranteed;         /* 1 = guaranteed job (has a performance baseline) */
	int rejected;           /* 1 = rejected at submission; never ran */
	char reason[160];       /* why it was rejected; "" otherwise */
	double sla_below_s;     /* guaranteed: running seconds below its baseline */
	double sla_worst_ratio; /* guaranteed: smallest current/baseline while running; 0 = never ran */
};

/* The cluster at one instant (the engine samples at every event or round). */
struct rk_sim_sample {
	int64_t t_ms;
	int gpus_alloc; /* GPUs held by jobs */
	int gpus_total; /* GPUs on nodes that are up */
	int queue_len;  /* pending jobs (submitted, holding nothing) */
	int running;    /* jobs holding an allocation (running or restarting) */
};

/* One policy's summary. Times in seconds; NaN-free: 0 where undefined. */
struct rk_sim_summary {
	int jobs;            /* outcomes summarised */
	int completed;
	int unfinished;
	int never_started;
	double avg_jct_s;    /* over completed jobs */
	double median_jct_s; /* nearest-rank */
	double p95_jct_s;
	double p99_jct_s;
	double max_jct_s;
	double makespan_s;
	double avg_queue_s;  /* over jobs that started */
	double gpu_util;     /* 0..1 */
	double gpu_hours;
	double reconfigs_per_job;
	double preemptions_per_job;
	double avg_queue_len; /* time-averaged pending jobs */
	int max_queue_len;
	int rejected;         /* rejected at submission (over a guaranteed quota) */
	int guaranteed;       /* guaranteed jobs, rejected ones included */
	int sla_violations;   /* guaranteed jobs that ever ran below their baseline */
	double sla_violation_s; /* running seconds below baseline, all guaranteed jobs */
	double sla_worst_ratio; /* smallest current/baseline seen; 0 = no guaranteed job ran */
	int sla_preempted;      /* guaranteed jobs preempted at least once */
};

/*
 * Summarise `n` outcomes and `ns` samples (sorted by t_ms, non-decreasing)
 * over the run [start_ms, end_ms]. OUT: *out. Errors (RK_EINVAL, message
 * names the record index and field): n < 0, end_ms < start_ms, a completed
 * job without a finish or finishing before its submit, a start before the
 * submit, samples out of order or outside the window, negative counts,
 * gpus_alloc > gpus_total. `out` is untouched on failure.
 */
int rk_metrics_summarize(const struct rk_job_outcome *outcomes, int n,
			 const struct rk_sim_sample *samples, int ns, int64_t start_ms,
			 int64_t end_ms, struct rk_sim_summary *out, struct rk_error *err);

/*
 * Nearest-rank percentile (see above) of `n` values already sorted ascending.
 * Returns 0 when n == 0; p is clamped to (0, 100].
 */
double rk_metrics_percentile(const double *sorted, int n, double p);

/* Fill an outcome from a job's final live state (driver helper). OUT: *out. */
void rk_job_outcome_from_job(const struct rk_job *job, int64_t finish_ms, int preemptions,
			     double gpu_s, struct rk_job_outcome *out);

#endif
