/*
 * Internal helpers the baseline policies (Sia, Synergy-TUNE, AntMan) share:
 * scaling the user's plan to another GPU count without re-planning, the
 * fitted-model throughput of a job, job orderings and decision appends. Not a
 * public header: the baseline policies (sia/, synergy/, classic/antman.c) and
 * rubick/ include it.
 */
#ifndef RUBICK_POLICY_BASELINE_H
#define RUBICK_POLICY_BASELINE_H

#include "rubick/cluster.h"
#include "rubick/job.h"
#include "rubick/plan.h"
#include "rubick/policy.h"

#include <stdint.h>

struct rk_perf_env;

/*
 * Scale the user's plan `req` (valid for global batch `global_batch`) to
 * `gpus` GPUs without choosing a new plan (baselines never re-plan):
 * tensor and pipeline widths, ZeRO stage, offload and checkpointing stay; only
 * the data-parallel degree dp' = gpus / (tp*pp) changes. The samples per
 * replica B/dp' are split into the largest micro-batch not above the user's
 * (activation memory per GPU never grows) times accumulation steps. A
 * ZeRO-partitioned plan without offload is not scaled below the user's dp:
 * its per-GPU optimizer state grows as dp shrinks and we do not re-check GPU
 * memory here (the node carries no GPU memory size).
 * Returns 0 with *out set, or RK_EINFEASIBLE when `gpus` is not a multiple
 * of tp*pp, dp' does not divide the batch, or the ZeRO rule forbids it.
 */
int rk_baseline_plan_scale(const struct rk_plan *req, int global_batch, int gpus,
			   struct rk_plan *out /* OUT */);

/*
 * Predicted throughput (samples/s) of `job` running `plan` on `pl` with
 * `cpus_per_gpu` threads per GPU, from the job's fitted parameters
 * (rk_perf_predict, docs/references.md §1.4). Policies decide with this model, never
 * with the simulator's oracle. Returns 0, or the perf model's error (then
 * *tput_sps = 0).
 */
int rk_baseline_tput_sps(const struct rk_job *job, const struct rk_plan *plan,
			 const struct rk_placement *pl, int cpus_per_gpu,
			 const struct rk_perf_env *env, double *tput_sps /* OUT */);

/*
 * Samples/s of `job` on `gpus` GPUs at its trace's own measured speeds
 * (rk_job.native_sps times the global batch: Gavel and Shockwave job types,
 * docs/oracle.md "Trace-native speeds"), 0 where the job has none at that
 * count. The same figure Rubick's views price with (rubick_view.c
 * native_at calls this), so every policy that prices throughput per GPU count decides
 * on the speeds the simulator runs the job at: Sia's authors profile each
 * job type's throughput, Gavel's policies read this very matrix.
 */
double rk_baseline_native_sps(const struct rk_job *job, int gpus);

/*
 * 1 when `job` is priced from its measured speeds: it has one at its request
 * (as rubick_view.c native_view). A policy then prices every GPU count from
 * them (never mixing them with the fitted model's scale) and the fitted
 * model only where they are silent (CPU threads: the measured speeds do not
 * depend on them, and neither does the simulator's run of the job).
 */
int rk_baseline_is_native(const struct rk_job *job);

/* 1 when the job holds resources (running or restarting with a non-empty alloc). */
int rk_baseline_is_placed(const struct rk_job *job);

/*
 * Sort `jobs` (n entries, pointers borrowed) in place: FIFO is ascending
 * submit time then id; SRTF ascending remaining run time at the request
 * (est_duration_s scaled by the fraction of iterations left; unknown
 * durations last) then FIFO.
 */
void rk_baseline_sort_fifo(struct rk_job **jobs, int n);
void rk_baseline_sort_srtf(struct rk_job **jobs, int n);

#endif
