/*
 * The analytic model (perf.h, docs/references.md §1.4) as the oracle's last
 * resort (rules 4-5 of oracle.h), on the reference GPU type. A leaf: the
 * dispatch (oracle.c), the Rubick tables (oracle_rubick.c) and the GPU-type
 * scaling (oracle_gpu.c) call it, it calls none of them.
 */
#include "sim/oracle/oracle_internal.h"

#include "rubick/perf.h"

#include <math.h>

int oracle_model_usable(const struct rk_oracle *o, const struct rk_model *m)
{
	if (o->measured && o->fallback == RK_ORACLE_FALLBACK_NONE)
		return 0;
	return o->env != NULL && m->perf_fitted;
}

int oracle_model_iter_s(const struct rk_oracle *o, const struct rk_model *m,
			const struct rk_plan *plan, const struct rk_placement *pl, int cpus_per_gpu,
			double *iter_s, struct rk_error *err)
{
	if (!o->env)
		return rk_error_set(err, RK_ENOTFOUND, "model '%s': no performance env for the model",
				    m->name);
	if (!m->perf_fitted)
		return rk_error_set(err, RK_ENOTFOUND,
				    "model '%s' has no fitted performance parameters (zoo)", m->name);
	double ms = 0.0;
	int rc = rk_perf_predict(m, &m->perf, o->env, plan, pl, cpus_per_gpu, &ms);
	if (rc)
		return rk_error_set(err, rc, "model '%s': performance model rejected the plan: %s",
				    m->name, rk_strerror(rc));
	if (!isfinite(ms) || ms <= 0.0)
		return rk_error_set(err, RK_EINTERNAL,
				    "model '%s': performance model predicted %g ms per iteration",
				    m->name, ms);
	*iter_s = ms / 1000.0;
	return 0;
}
