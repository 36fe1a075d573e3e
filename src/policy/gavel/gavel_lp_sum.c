/*
 * Gavel baselines, part 4 (see gavel.c): the max_sum_throughput_perf LP
 * (Narayanan et al., OSDI 2020, §4.1 "Other policies"; Gavel's
 * ThroughputSumWithPerf): maximise the cluster's total effective throughput
 * sum_j sum_t tput[j][t] X[j][t], with the same constraints as the max-min
 * LP (rows at most 1, sum_j scale_j X[j][t] <= cap_t, X = 0 where a job
 * cannot run). Throughputs are summed in their own unit, not normalised, as
 * Gavel does: a job with more steps per second weighs more.
 */
#include "policy/gavel/gavel_internal.h"

#include "rubick/lp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int runnable(const struct gavel_problem *p, int j, int t)
{
	double v = p->tput[(size_t)j * p->n_types + t];
	return v > 0 && isfinite(v) && p->scale[j] >= 1 && p->scale[j] <= p->cap[t];
}

int gavel_maxsum(const struct gavel_problem *p, double *x, struct rk_error *err)
{
	int nj = p->n_jobs, nt = p->n_types;
	size_t cells = (size_t)nj * nt;
	memset(x, 0, cells * sizeof(*x));
	int *var = malloc((cells > 0 ? cells : 1) * sizeof(*var));
	int *idx = malloc((size_t)(nj > nt ? nj : nt) * sizeof(*idx) + sizeof(*idx));
	double *coef = malloc((size_t)(nj > nt ? nj : nt) * sizeof(*coef) + sizeof(*coef));
	struct rk_lp *lp = NULL;
	int rc = RK_OK;
	if (!var || !idx || !coef) {
		rc = rk_error_set(err, RK_ENOMEM, "gavel: out of memory for the LP");
		goto out;
	}
	int nv = 0;
	for (size_t c = 0; c < cells; c++)
		var[c] = runnable(p, (int)(c / nt), (int)(c % nt)) ? nv++ : -1;
	if (nv == 0)
		goto out;
	rc = rk_lp_create(&lp, nv, RK_LP_MAXIMISE, err);
	for (size_t c = 0; c < cells && rc == RK_OK; c++)
		if (var[c] >= 0) {
			rc = rk_lp_set_real(lp, var[c], 0.0, 1.0, err);
			if (rc == RK_OK)
				rc = rk_lp_set_obj(lp, var[c], p->tput[c], err);
		}
	/* Per job: sum_t x <= 1. */
	for (int j = 0; j < nj && rc == RK_OK; j++) {
		int n = 0;
		for (int t = 0; t < nt; t++)
			if (var[(size_t)j * nt + t] >= 0) {
				idx[n] = var[(size_t)j * nt + t];
				coef[n++] = 1.0;
			}
		if (n > 0)
			rc = rk_lp_add_row(lp, n, idx, coef, RK_LP_NO_BOUND, 1.0, err);
	}
	/* Per type: sum_j scale_j x[j][t] <= cap_t. */
	for (int t = 0; t < nt && rc == RK_OK; t++) {
		int n = 0;
		for (int j = 0; j < nj; j++)
			if (var[(size_t)j * nt + t] >= 0) {
				idx[n] = var[(size_t)j * nt + t];
				coef[n++] = p->scale[j];
			}
		if (n > 0)
			rc = rk_lp_add_row(lp, n, idx, coef, RK_LP_NO_BOUND, p->cap[t], err);
	}
	if (rc)
		goto out;
	struct rk_lp_result res;
	rc = rk_lp_solve(lp, NULL, &res, err);
	if (rc)
		goto out;
	if (res.status != RK_LP_OPTIMAL) {
		/* x = 0 is feasible and the objective bounded: the solver's fault. */
		rc = rk_error_set(err, RK_EINTERNAL,
		                  "gavel-tput: allocation LP not solved (status %d)",
		                  (int)res.status);
		goto out;
	}
	for (size_t c = 0; c < cells; c++)
		if (var[c] >= 0) {
			double v = rk_lp_value_real(lp, var[c]);
			x[c] = v < 0 ? 0 : v > 1 ? 1 : v;
		}
out:
	rk_lp_destroy(lp);
	free(var);
	free(idx);
	free(coef);
	return rc;
}
