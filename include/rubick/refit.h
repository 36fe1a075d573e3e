/*
 * Online refit of one job's performance model from the iterations it was
 * observed to run (docs/references.md §1.5 "online variant"). Shared by rubickd
 * (src/daemon/sched/refit.c: a progress report with a throughput is one sample) and
 * the simulator (src/sim/engine/engine_refit.c: the oracle's iteration time of the
 * configuration a job runs), so both follow the same sample rules:
 *
 *  - a sample is the plan and placement the job ran with, its CPU threads per
 *    GPU (total CPUs / GPUs, at least 1) and iter_ms = 1000 * global batch /
 *    throughput; nothing is recorded without a throughput, a batch or GPUs;
 *  - the newest RK_REFIT_MAX_SAMPLES samples are kept (the speed drifts, the
 *    fit stays cheap);
 *  - every sample refits the 7 parameters warm-started from the current ones
 *    (rk_perf_fit with `warm` once the model is fitted);
 *  - the model's miss on each sample before it joins the set is kept: how far
 *    this job's model was seen to be wrong on what the job really ran.
 */
#ifndef RUBICK_REFIT_H
#define RUBICK_REFIT_H

#include "rubick/error.h"
#include "rubick/fit.h"
#include "rubick/model.h"
#include "rubick/plan.h"

#define RK_REFIT_MAX_SAMPLES 32

struct rk_refit {
	struct rk_perf_samples set;
	struct rk_perf_fit_result last;
	int n_fits;
	double last_pred_err; /* |predicted - measured| / measured of the newest sample, before the
	                         refit */
	double max_pred_err;  /* the largest last_pred_err so far */
	char last_error[sizeof(
	    ((struct rk_error *)0)->msg)]; /* why the last refit failed; "" = it did not */
};

void rk_refit_init(struct rk_refit *f);
void rk_refit_fini(struct rk_refit *f);

/*
 * One observation: the job ran `plan` on placement `pl` with `cpus` CPU
 * threads in all, at `tput_sps` samples/s with global batch `global_batch`.
 * Adds the sample and refits `m` (perf, perf_fitted, fwd_ms) on the set.
 * Returns 0 when the observation was used or skipped (no throughput, no
 * batch), or when the sample or the fit was unusable (last_error says why; `m`
 * is then unchanged); RK_ENOMEM (err set) only on out of memory.
 */
int rk_refit_observe(struct rk_refit *f, struct rk_model *m, const struct rk_perf_env *env,
                     const struct rk_plan *plan, const struct rk_placement *pl, int cpus,
                     int global_batch, double tput_sps, struct rk_error *err);

#endif
