/*
 * Gavel baselines, part 2 (see gavel.c): the allocation LPs (Narayanan et
 * al., OSDI 2020, §4.1). X[j][t] is the fraction of time job j runs on GPU
 * type t; the effective throughput of j is sum_t tput[j][t] X[j][t].
 *
 * Max-min fairness (LAS, §4.1 "Max-Min Fairness"): maximise
 * min_j scale_j * efftput_j(X) / efftput_j(X^equal), Gavel's
 * heterogeneity-aware least attained service; the scale factor makes a
 * 1-GPU job get scale_j times the time of a scale_j-GPU job at equal speed.
 *
 * Finish-time fairness (§4.1 "Finish-Time Fairness"; Gavel's
 * FinishTimeFairnessPolicyWithPerf): rho_j = (t_j + R_j / efftput_j(X)) /
 * D_j, D_j = t_j + R_j / efftput_j(X^equal), the ratio of a job's expected
 * finish time under X to that on its isolated share from now on (t_j time
 * since arrival, R_j work left); minimise max_j rho_j. rho_j <= r holds
 * exactly when efftput_j(X) >= R_j / (r D_j - t_j), which is linear in X, so
 * the smallest feasible r is found by bisection over the max-min LP with
 * weights (r D_j - t_j) / R_j: r is
 * feasible when that LP's optimum is at least 1.
 *
 * Makespan (§4.1 "Minimize Makespan", Gavel's MinTotalDurationPolicy):
 * minimise T with R_j / efftput_j(X) <= T for every job, i.e. efftput_j(X)
 * (1 / R_j) >= 1 / T: the max-min LP with weights 1 / R_j, whose optimum z
 * is 1 / T*. One LP gives the exact T*, where Gavel bisects on T to 5 %.
 * Max-sum-throughput has its own LP (gavel_lp_sum.c).
 */
#include "policy/gavel/gavel_internal.h"

#include "rubick/lp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int can_run(const struct gavel_problem *p, int j, int t)
{
	double v = p->tput[(size_t)j * p->n_types + t];
	return v > 0 && isfinite(v) && p->scale[j] >= 1 && p->scale[j] <= p->cap[t];
}

static int count_runnable(const struct gavel_problem *p)
{
	int n_run = 0;
	for (int j = 0; j < p->n_jobs; j++)
		for (int t = 0; t < p->n_types; t++)
			if (can_run(p, j, t)) {
				n_run++;
				break;
			}
	return n_run;
}

/* Row j of X^equal (gavel_equal_share) into row[n_types]. */
static void equal_row(const struct gavel_problem *p, int j, int n_run, double *row)
{
	double g = 0;
	for (int t = 0; t < p->n_types; t++)
		if (can_run(p, j, t))
			g += p->cap[t];
	double share = g > 0 ? g / ((double)n_run * p->scale[j]) : 0;
	if (share > 1)
		share = 1;
	for (int t = 0; t < p->n_types; t++)
		row[t] = can_run(p, j, t) ? share * p->cap[t] / g : 0;
}

/* X^equal itself. OUT: x, n_jobs * n_types. */
static void equal_alloc(const struct gavel_problem *p, double *x)
{
	int n_run = count_runnable(p);
	for (int j = 0; j < p->n_jobs; j++)
		equal_row(p, j, n_run, x + (size_t)j * p->n_types);
}

void gavel_equal_share(const struct gavel_problem *p, double *iso)
{
	int n_run = count_runnable(p);
	for (int j = 0; j < p->n_jobs; j++) {
		double row[GAVEL_MAX_TYPES];
		equal_row(p, j, n_run, row);
		iso[j] = 0;
		for (int t = 0; t < p->n_types; t++)
			iso[j] += row[t] * p->tput[(size_t)j * p->n_types + t];
	}
}

int gavel_maxmin(const struct gavel_problem *p, const double *w, double *x, double *z,
                 struct rk_error *err)
{
	int nj = p->n_jobs, nt = p->n_types;
	size_t cells = (size_t)nj * nt;
	memset(x, 0, cells * sizeof(*x));
	*z = 0;
	/* Variables: one per pair that can run, then z. */
	int *var = malloc(cells * sizeof(*var));
	int *idx = malloc((cells + 1) * sizeof(*idx));
	double *coef = malloc((cells + 1) * sizeof(*coef));
	struct rk_lp *lp = NULL;
	int rc = RK_OK;
	if (!var || !idx || !coef) {
		rc = rk_error_set(err, RK_ENOMEM, "gavel: out of memory for the LP");
		goto out;
	}
	int nv = 0;
	for (size_t c = 0; c < cells; c++) {
		int j = (int)(c / nt), t = (int)(c % nt);
		var[c] = w[j] > 0 && can_run(p, j, t) ? nv++ : -1;
	}
	if (nv == 0)
		goto out;
	int zv = nv;
	rc = rk_lp_create(&lp, nv + 1, RK_LP_MAXIMISE, err);
	for (int v = 0; v <= nv && rc == RK_OK; v++)
		rc = rk_lp_set_real(lp, v, 0.0, v == zv ? RK_LP_NO_BOUND : 1.0, err);
	if (rc == RK_OK)
		rc = rk_lp_set_obj(lp, zv, 1.0, err);
	/* Per job: w_j * sum_t tput x - z >= 0, and sum_t x <= 1. */
	for (int j = 0; j < nj && rc == RK_OK; j++) {
		int n = 0;
		for (int t = 0; t < nt; t++) {
			int v = var[(size_t)j * nt + t];
			if (v < 0)
				continue;
			idx[n] = v;
			coef[n++] = w[j] * p->tput[(size_t)j * nt + t];
		}
		if (n == 0)
			continue;
		double ones[GAVEL_MAX_TYPES];
		for (int k = 0; k < n; k++)
			ones[k] = 1.0;
		rc = rk_lp_add_row(lp, n, idx, ones, RK_LP_NO_BOUND, 1.0, err);
		if (rc)
			break;
		idx[n] = zv;
		coef[n++] = -1.0;
		rc = rk_lp_add_row(lp, n, idx, coef, 0.0, RK_LP_NO_BOUND, err);
	}
	/* Per type: sum_j scale_j x[j][t] <= cap_t. */
	for (int t = 0; t < nt && rc == RK_OK; t++) {
		int n = 0;
		for (int j = 0; j < nj; j++) {
			int v = var[(size_t)j * nt + t];
			if (v < 0)
				continue;
			idx[n] = v;
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
		/* x = 0, z = 0 is always feasible: anything else is the solver's fault. */
		rc = rk_error_set(err, RK_EINTERNAL, "gavel: allocation LP not solved (status %d)",
		                  (int)res.status);
		goto out;
	}
	for (size_t c = 0; c < cells; c++)
		if (var[c] >= 0) {
			double v = rk_lp_value_real(lp, var[c]);
			x[c] = v < 0 ? 0 : v > 1 ? 1 : v;
		}
	*z = rk_lp_value_real(lp, zv);
out:
	rk_lp_destroy(lp);
	free(var);
	free(idx);
	free(coef);
	return rc;
}

/*
 * rho's denominator for job j: its expected finish time on its isolated
 * share, t_j + R_j / efftput_j(X^equal), as Gavel's
 * FinishTimeFairnessPolicyWithPerf computes it (expected_time_isolated).
 */
static double ftf_base(const struct gavel_problem *p, const double *iso, int j)
{
	return p->elapsed_s[j] + p->remaining[j] / iso[j];
}

/* Smallest r with the FTF constraints feasible; x of the feasible end. */
static int allocate_ftf(const struct gavel_problem *p, const double *iso, double *w, double *x,
                        double *xt, int *lps, struct rk_error *err)
{
	int nj = p->n_jobs;
	/* D_j (ftf_base); rho under X^equal (1 wherever it runs) bounds r above. */
	double lo = 0, hi = 0;
	for (int j = 0; j < nj; j++) {
		if (!(iso[j] > 0) || !(p->total[j] > 0))
			continue;
		double T = ftf_base(p, iso, j);
		double r_eq = (p->elapsed_s[j] + p->remaining[j] / iso[j]) / T;
		if (p->elapsed_s[j] / T > lo)
			lo = p->elapsed_s[j] / T;
		if (r_eq > hi)
			hi = r_eq;
	}
	if (hi <= 0) {
		memset(x, 0, (size_t)nj * p->n_types * sizeof(*x));
		return RK_OK;
	}
	/* hi is feasible (X^equal meets it); keep its max-min solution. */
	int have = 0;
	memset(xt, 0, (size_t)nj * p->n_types * sizeof(*xt));
	for (int it = 0; it < 64 && (!have || hi - lo > GAVEL_FTF_TOL * hi); it++) {
		double r = have ? 0.5 * (lo + hi) : hi;
		int ok = 1;
		for (int j = 0; j < nj; j++) {
			w[j] = 0;
			if (!(iso[j] > 0) || !(p->total[j] > 0) || !(p->remaining[j] > 0))
				continue; /* nothing to finish: no constraint */
			double slack = r * ftf_base(p, iso, j) - p->elapsed_s[j];
			if (slack > 0)
				w[j] = slack / p->remaining[j];
			else
				ok = 0; /* it has already waited past r: no X meets r */
		}
		double z = 0;
		if (ok) {
			int rc = gavel_maxmin(p, w, xt, &z, err);
			(*lps)++;
			if (rc == RK_ENOMEM)
				return rc;
			/* A solver failure on these weights: count r as not met. */
			ok = rc == RK_OK && z >= 1 - 1e-9;
			if (rc)
				rk_error_clear(err);
		}
		if (ok || !have) {
			/* The first try is X^equal's level, feasible up to rounding;
			 * if the solver could not say, X^equal itself meets it. */
			if (ok)
				memcpy(x, xt, (size_t)nj * p->n_types * sizeof(*x));
			else
				equal_alloc(p, x);
			hi = r;
			have = 1;
		} else {
			lo = r;
		}
	}
	return RK_OK;
}

int gavel_allocate(const struct gavel_problem *p, enum gavel_objective obj, double *x, int *lps,
                   struct rk_error *err)
{
	*lps = 0;
	if (p->n_jobs < 0 || p->n_types < 1 || p->n_types > GAVEL_MAX_TYPES)
		return rk_error_set(err, RK_EINVAL, "gavel: %d jobs, %d GPU types (1..%d)",
		                    p->n_jobs, p->n_types, GAVEL_MAX_TYPES);
	if (obj == GAVEL_FTF && p->n_jobs > 0 && (!p->elapsed_s || !p->remaining || !p->total))
		return rk_error_set(err, RK_EINVAL,
		                    "gavel: finish-time fairness needs job progress");
	if (obj == GAVEL_MAKESPAN && p->n_jobs > 0 && !p->remaining)
		return rk_error_set(err, RK_EINVAL, "gavel: makespan needs the work left per job");
	if (obj < GAVEL_LAS || obj > GAVEL_MAKESPAN)
		return rk_error_set(err, RK_EINVAL, "gavel: unknown objective %d", (int)obj);
	if (p->n_jobs == 0)
		return RK_OK;
	if (obj == GAVEL_TPUT) {
		*lps = 1;
		return gavel_maxsum(p, x, err);
	}
	size_t nj = (size_t)p->n_jobs;
	double *iso = malloc(nj * sizeof(*iso));
	double *w = malloc(nj * sizeof(*w));
	double *xt = obj == GAVEL_FTF ? malloc(nj * p->n_types * sizeof(*xt)) : NULL;
	int rc = RK_OK;
	if (!iso || !w || (obj == GAVEL_FTF && !xt)) {
		rc = rk_error_set(err, RK_ENOMEM, "gavel: out of memory");
		goto out;
	}
	gavel_equal_share(p, iso);
	if (obj == GAVEL_LAS) {
		/* Gavel's weight: scale factor over the throughput under X^equal. */
		for (size_t j = 0; j < nj; j++)
			w[j] = iso[j] > 0 ? p->scale[j] / iso[j] : 0;
		double z;
		rc = gavel_maxmin(p, w, x, &z, err);
		*lps = 1;
	} else if (obj == GAVEL_MAKESPAN) {
		/* Weight 1 / R_j; a job with nothing left has no constraint. */
		for (size_t j = 0; j < nj; j++)
			w[j] = p->remaining[j] > 0 && isfinite(p->remaining[j]) ? 1.0 / p->remaining[j]
			                                                       : 0;
		double z;
		rc = gavel_maxmin(p, w, x, &z, err);
		*lps = 1;
	} else {
		rc = allocate_ftf(p, iso, w, x, xt, lps, err);
	}
out:
	free(iso);
	free(w);
	free(xt);
	return rc;
}
