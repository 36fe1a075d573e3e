/*
 * Fitted-model and trace-native throughput for the baselines (baseline.h). Kept apart from
 * baseline.c so that GPU-only policies (AntMan) do not link the performance
 * model.
 */
#include "policy/common/baseline.h"

#include "rubick/perf.h"

#include <math.h>

int rk_baseline_tput_sps(const struct rk_job *job, const struct rk_plan *plan,
			 const struct rk_placement *pl, int cpus_per_gpu,
			 const struct rk_perf_env *env, double *tput_sps)
{
	*tput_sps = 0;
	double iter_ms = 0;
	int rc = rk_perf_predict(job->model, &job->model->perf, env, plan, pl,
				 cpus_per_gpu > 0 ? cpus_per_gpu : 1, &iter_ms);
	if (rc)
		return rc;
	if (!(iter_ms > 0))
		return RK_ERANGE;
	*tput_sps = job->global_batch / (iter_ms / 1000.0);
	return RK_OK;
}

double rk_baseline_native_sps(const struct rk_job *job, int gpus)
{
	if (!job->native_sps || gpus < 1 || gpus > job->native_max)
		return 0;
	double t = job->native_sps[gpus] * job->global_batch;
	return t > 0 && isfinite(t) ? t : 0;
}

int rk_baseline_is_native(const struct rk_job *job)
{
	return rk_baseline_native_sps(job, job->req_gpus > 0 ? job->req_gpus : 1) > 0;
}
