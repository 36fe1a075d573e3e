/*
 * Online refit of a job's performance model from observed iterations
 * (refit.h). Moved out of rubickd's report handling (src/daemon/sched/refit.c) so
 * the simulator refits with the same rules.
 */
#include "rubick/refit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void rk_refit_init(struct rk_refit *f)
{
	memset(f, 0, sizeof(*f));
	rk_perf_samples_init(&f->set);
}

void rk_refit_fini(struct rk_refit *f)
{
	if (f)
		rk_perf_samples_fini(&f->set);
}

int rk_refit_observe(struct rk_refit *f, struct rk_model *m, const struct rk_perf_env *env,
                     const struct rk_plan *plan, const struct rk_placement *pl, int cpus,
                     int global_batch, double tput_sps, struct rk_error *err)
{
	if (!f || !m || !env || !plan || !pl)
		return rk_error_set(err, RK_EINVAL, "refit: missing argument");
	if (!(tput_sps > 0) || global_batch <= 0 || pl->n_nodes < 1)
		return 0; /* nothing measured under a known plan */
	struct rk_perf_sample x;
	memset(&x, 0, sizeof(x));
	x.placement = *pl;
	int gpus = 0;
	for (int i = 0; i < pl->n_nodes; i++)
		gpus += pl->gpus[i];
	x.plan = *plan;
	x.cpus_per_gpu = gpus > 0 && cpus >= gpus ? cpus / gpus : 1;
	x.fwd_ms = x.sync_ms = x.opt_ms = -1;
	x.iter_ms = 1000.0 * global_batch / tput_sps;
	double pred;
	if (rk_perf_predict(m, &m->perf, env, &x.plan, &x.placement, x.cpus_per_gpu, &pred) == 0 &&
	    pred > 0) {
		f->last_pred_err = fabs(pred - x.iter_ms) / x.iter_ms;
		if (f->last_pred_err > f->max_pred_err)
			f->max_pred_err = f->last_pred_err;
	}
	if (f->set.n == RK_REFIT_MAX_SAMPLES) {
		memmove(f->set.v, f->set.v + 1, (size_t)(f->set.n - 1) * sizeof(*f->set.v));
		f->set.n--;
	}
	struct rk_error fe;
	rk_error_clear(&fe);
	int ret = rk_perf_samples_add(&f->set, &x, &fe);
	if (ret) {
		snprintf(f->last_error, sizeof(f->last_error), "%s", fe.msg);
		/* an unusable sample is not a failure */
		return ret == RK_ENOMEM ? rk_error_set(err, ret, "%s", fe.msg) : 0;
	}
	struct rk_perf_fit_result r;
	rk_error_clear(&fe);
	ret = rk_perf_fit(m, env, f->set.v, f->set.n, m->perf_fitted ? &m->perf : NULL, &r, &fe);
	if (ret) {
		snprintf(f->last_error, sizeof(f->last_error), "%s", fe.msg);
		return ret == RK_ENOMEM ? rk_error_set(err, ret, "%s", fe.msg) : 0;
	}
	m->perf = r.k;
	if (r.fwd_ms > 0)
		m->fwd_ms = r.fwd_ms;
	m->perf_fitted = 1;
	f->last = r;
	f->n_fits++;
	f->last_error[0] = '\0';
	return 0;
}
