/*
 * Fitting the performance model (docs/references.md §1.5), and the minimisers
 * other fits call (rk_fit_min1d, rk_fit_simplex). The only file that includes
 * GSL. See fit.h for the method.
 */
#include "rubick/fit.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_min.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NP 7
#define PRIOR_WEIGHT 1e-4
#define FWD_OUTLIER_RATIO 2.0
#define MAX_ITER 1500
/* Simplex sizes (transformed space) at which a start, and the final polish,
 * stop: starts only need to find the right basin. */
#define START_TOL 3e-3
#define POLISH_TOL 1e-4
#define MASK_NO_PHASES 1 /* sample's sync/opt split not fitted */
#define MASK_EXCLUDED 2  /* sample left out (iteration outlier) */
#define TRIM_MIN_SAMPLES 5

void rk_perf_params_default(enum rk_overlap_form form, struct rk_perf_params *k)
{
	/* Mid-range physical values: backward ~2x forward (§1.4.2 fits 1.3-2.3),
	 * moderate overlap, GPU Adam ~0.05 ms per Mi parameters, CPU Adam
	 * ~2 ms per Mi parameters per thread, 10 ms fixed overhead. */
	*k = (struct rk_perf_params){
		.k_bwd = 2.0, .k_sync = 2.0, .k_opt = 0.05, .k_os_offload = 2.0,
		.k_const = 10.0, .k_off = 2.0, .k_swap = 2.0, .fwd_fixed_ms = 0,
	};
	if (form == RK_OVERLAP_ADDITIVE)
		k->k_off = k->k_swap = 1.0;
}

void rk_perf_samples_init(struct rk_perf_samples *s)
{
	memset(s, 0, sizeof(*s));
}

void rk_perf_samples_fini(struct rk_perf_samples *s)
{
	if (!s)
		return;
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int check_sample(const struct rk_perf_sample *x, int idx, struct rk_error *err)
{
	const struct rk_plan *p = &x->plan;
	if (p->dp < 1 || p->tp < 1 || p->pp < 1 || p->mb < 1 || p->ga < 1)
		return rk_error_set(err, RK_EINVAL, "sample %d (line %d): plan degrees must be >= 1",
				    idx, x->line);
	int g = 0;
	if (x->placement.n_nodes < 1 || x->placement.n_nodes > RK_PLACEMENT_MAX_NODES)
		return rk_error_set(err, RK_EINVAL, "sample %d (line %d): empty placement", idx,
				    x->line);
	for (int i = 0; i < x->placement.n_nodes; i++) {
		if (x->placement.gpus[i] < 1)
			return rk_error_set(err, RK_EINVAL,
					    "sample %d (line %d): placement node %d has no GPU", idx,
					    x->line, i);
		g += x->placement.gpus[i];
	}
	if ((long)p->dp * p->tp * p->pp != g)
		return rk_error_set(err, RK_EINVAL,
				    "sample %d (line %d): dp*tp*pp = %ld but the placement has %d GPUs",
				    idx, x->line, (long)p->dp * p->tp * p->pp, g);
	if (x->cpus_per_gpu < 1)
		return rk_error_set(err, RK_EINVAL, "sample %d (line %d): cpus_per_gpu must be >= 1",
				    idx, x->line);
	if (!isfinite(x->iter_ms) || x->iter_ms <= 0)
		return rk_error_set(err, RK_EINVAL, "sample %d (line %d): iter_ms must be > 0", idx,
				    x->line);
	if (!isfinite(x->fwd_ms) || !isfinite(x->sync_ms) || !isfinite(x->opt_ms))
		return rk_error_set(err, RK_EINVAL, "sample %d (line %d): phase not finite", idx,
				    x->line);
	return 0;
}

int rk_perf_samples_add(struct rk_perf_samples *s, const struct rk_perf_sample *x,
			struct rk_error *err)
{
	int rc = check_sample(x, s->n, err);
	if (rc < 0)
		return rc;
	if (s->n == s->cap) {
		int ncap = s->cap ? 2 * s->cap : 16;
		void *p = realloc(s->v, (size_t)ncap * sizeof(*s->v));
		if (!p)
			return rk_error_set(err, RK_ENOMEM, "samples: out of memory");
		s->v = p;
		s->cap = ncap;
	}
	s->v[s->n++] = *x;
	return 0;
}

/* ---- forward time ------------------------------------------------------- */

/* Per-GPU samples of one iteration's forward (DP family only: 3D forward
 * times mix pipeline effects). */
static double local_batch(const struct rk_perf_sample *x)
{
	return (double)x->plan.mb * x->plan.ga;
}

static int fwd_usable(const struct rk_perf_sample *x)
{
	return x->fwd_ms > 0 && x->plan.tp == 1 && x->plan.pp == 1;
}

/* Relative least squares of y = a + r*b, a >= 0, over the usable samples
 * except `skip`: minimise sum ((a + r b - y)/y)^2. Returns 0 when there is no
 * sample to fit. */
static int fwd_ls(const struct rk_perf_sample *s, int n, int skip, const unsigned char *drop,
		  double *a, double *r)
{
	double S00 = 0, S01 = 0, S11 = 0, T0 = 0, T1 = 0;
	int cnt = 0;
	double b0 = -1;
	int distinct = 0;
	for (int i = 0; i < n; i++) {
		if (i == skip || drop[i] || !fwd_usable(&s[i]))
			continue;
		double b = local_batch(&s[i]), w = 1.0 / s[i].fwd_ms;
		/* rows weighted by 1/y: relative residuals */
		S00 += w * w, S01 += w * w * b, S11 += w * w * b * b;
		T0 += w, T1 += w * b;
		if (b0 < 0)
			b0 = b;
		else if (b != b0)
			distinct = 1;
		cnt++;
	}
	if (!cnt)
		return 0;
	double det = S00 * S11 - S01 * S01;
	if (distinct && det > 1e-12 * S00 * S11) {
		*a = (T0 * S11 - T1 * S01) / det;
		*r = (S00 * T1 - S01 * T0) / det;
		if (*a >= 0 && *r > 0)
			return cnt;
	}
	/* one batch size, or a negative intercept: proportional fit */
	*a = 0;
	*r = T1 / S11;
	return cnt;
}

/* Returns 0, or -1 when out of memory. */
static int fit_forward(const struct rk_model *m, const struct rk_perf_sample *s, int n,
		       struct rk_perf_fit_result *out)
{
	unsigned char *drop = calloc((size_t)n, 1);
	int nn = n;
	if (!drop)
		return -1;
	int usable = 0;
	for (int i = 0; i < nn; i++)
		usable += fwd_usable(&s[i]);
	/* Deletion screen (fit.h): the sample whose removal leaves the others
	 * best explained is the suspect; it is rejected when it is more than
	 * FWD_OUTLIER_RATIO off the fit of the others. One at a time, while at
	 * least 3 samples remain. */
	while (usable >= 3 && out->n_fwd_rejected < RK_FIT_REJECT_MAX) {
		int cand = -1;
		double cand_rest = INFINITY, cand_e = 0, cand_pred = 0;
		for (int i = 0; i < nn; i++) {
			if (drop[i] || !fwd_usable(&s[i]))
				continue;
			double a, r;
			if (!fwd_ls(s, nn, i, drop, &a, &r))
				continue;
			double rest = 0;
			for (int j = 0; j < nn; j++) {
				if (j == i || drop[j] || !fwd_usable(&s[j]))
					continue;
				double e = log(s[j].fwd_ms / (a + r * local_batch(&s[j])));
				rest += e * e;
			}
			if (rest < cand_rest) {
				double pred = a + r * local_batch(&s[i]);
				cand = i, cand_rest = rest, cand_pred = pred;
				cand_e = fabs(log(s[i].fwd_ms / pred));
			}
		}
		if (cand < 0 || cand_e <= log(FWD_OUTLIER_RATIO))
			break;
		drop[cand] = 1;
		out->fwd_rejected[out->n_fwd_rejected] = cand;
		out->fwd_rejected_ms[out->n_fwd_rejected] = s[cand].fwd_ms;
		out->fwd_expected_ms[out->n_fwd_rejected] = cand_pred;
		out->n_fwd_rejected++;
		usable--;
	}
	double a, r;
	if (fwd_ls(s, nn, -1, drop, &a, &r) && m->global_batch >= 1) {
		out->k.fwd_fixed_ms = a;
		out->fwd_ms = a + r * m->global_batch;
	}
	free(drop);
	return 0;
}

/* ---- the 7 parameters ------------------------------------------------------ */

struct fit_ctx {
	const struct rk_model *m;
	const struct rk_perf_env *env;
	const struct rk_perf_sample *s;
	int n;
	double lo[NP], hi[NP];
	double u0[NP];    /* transformed start, for the prior */
	double fwd_fixed; /* fitted forward, fixed during the search */
	const unsigned char *no_phases; /* per sample: ignore sync/opt */
};

static double sigmoid(double u)
{
	return 1.0 / (1.0 + exp(-u));
}

static void u_to_x(const struct fit_ctx *c, const double *u, double *x)
{
	for (int i = 0; i < NP; i++) {
		double l = log(c->lo[i]), h = log(c->hi[i]);
		x[i] = exp(l + (h - l) * sigmoid(u[i]));
	}
}

static void x_to_u(const struct fit_ctx *c, const double *x, double *u)
{
	for (int i = 0; i < NP; i++) {
		double l = log(c->lo[i]), h = log(c->hi[i]);
		double v = x[i];
		if (v < c->lo[i])
			v = c->lo[i];
		if (v > c->hi[i])
			v = c->hi[i];
		double t = (log(v) - l) / (h - l);
		if (t < 1e-6)
			t = 1e-6;
		if (t > 1 - 1e-6)
			t = 1 - 1e-6;
		u[i] = log(t / (1 - t));
	}
}

/* §1.5 objective: RMSE(log sync) + RMSE(log opt) + RMSE(log iter). */
static double objective_x(const struct fit_ctx *c, const double *x, double *iter_rmse)
{
	struct rk_perf_params k;
	rk_perf_params_from_array(x, &k);
	k.fwd_fixed_ms = c->fwd_fixed;
	double e_sync = 0, e_opt = 0, e_iter = 0;
	int n_sync = 0, n_opt = 0, n_iter = 0;
	for (int i = 0; i < c->n; i++) {
		const struct rk_perf_sample *x_ = &c->s[i];
		struct rk_perf_breakdown b;
		if (c->no_phases[i] & MASK_EXCLUDED)
			continue;
		if (rk_perf_predict_detail(c->m, &k, c->env, &x_->plan, &x_->placement,
					   x_->cpus_per_gpu, &b) < 0)
			return INFINITY;
		double d = log(b.iter_ms / x_->iter_ms);
		e_iter += d * d, n_iter++;
		if (c->no_phases[i] & MASK_NO_PHASES)
			continue;
		if (x_->sync_ms > 0 && b.sync_ms > 0) {
			d = log(b.sync_ms / x_->sync_ms);
			e_sync += d * d, n_sync++;
		}
		if (x_->opt_ms > 0 && b.opt_ms > 0) {
			d = log(b.opt_ms / x_->opt_ms);
			e_opt += d * d, n_opt++;
		}
	}
	if (iter_rmse)
		*iter_rmse = sqrt(e_iter / n_iter);
	double f = sqrt(e_iter / n_iter);
	if (n_sync)
		f += sqrt(e_sync / n_sync);
	if (n_opt)
		f += sqrt(e_opt / n_opt);
	return f;
}

static double objective_u(const gsl_vector *v, void *p)
{
	const struct fit_ctx *c = p;
	double u[NP], x[NP];
	double prior = 0;
	for (int i = 0; i < NP; i++) {
		u[i] = gsl_vector_get(v, i);
		prior += (u[i] - c->u0[i]) * (u[i] - c->u0[i]);
	}
	u_to_x(c, u, x);
	double f = objective_x(c, x, NULL);
	return isfinite(f) ? f + PRIOR_WEIGHT * prior : GSL_POSINF;
}

/* One Nelder-Mead run from x0; best point in xbest, value returned. */
static double run_simplex(struct fit_ctx *c, const double *x0, double tol, double *xbest)
{
	const gsl_multimin_fminimizer_type *T = gsl_multimin_fminimizer_nmsimplex2;
	gsl_multimin_fminimizer *mz = gsl_multimin_fminimizer_alloc(T, NP);
	gsl_vector *u = gsl_vector_alloc(NP), *step = gsl_vector_alloc(NP);
	double best = INFINITY;
	if (!mz || !u || !step)
		goto out;
	double uu[NP];
	x_to_u(c, x0, uu);
	for (int i = 0; i < NP; i++) {
		gsl_vector_set(u, i, uu[i]);
		gsl_vector_set(step, i, 1.0);
	}
	gsl_multimin_function fn = {.f = objective_u, .n = NP, .params = c};
	if (gsl_multimin_fminimizer_set(mz, &fn, u, step) != GSL_SUCCESS)
		goto out;
	for (int it = 0; it < MAX_ITER; it++) {
		if (gsl_multimin_fminimizer_iterate(mz) != GSL_SUCCESS)
			break;
		if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(mz), tol) == GSL_SUCCESS)
			break;
	}
	best = gsl_multimin_fminimizer_minimum(mz);
	const gsl_vector *ub = gsl_multimin_fminimizer_x(mz);
	for (int i = 0; i < NP; i++)
		uu[i] = gsl_vector_get(ub, i);
	u_to_x(c, uu, xbest);
out:
	gsl_vector_free(u);
	gsl_vector_free(step);
	gsl_multimin_fminimizer_free(mz);
	return best;
}

/* Iteration-time misses |log(pred/meas)| of every sample at x (NAN if a
 * prediction fails). */
static void iter_errors(const struct fit_ctx *c, const double *x, double *e)
{
	struct rk_perf_params k;
	rk_perf_params_from_array(x, &k);
	k.fwd_fixed_ms = c->fwd_fixed;
	for (int i = 0; i < c->n; i++) {
		double t;
		const struct rk_perf_sample *s = &c->s[i];
		if (rk_perf_predict(c->m, &k, c->env, &s->plan, &s->placement, s->cpus_per_gpu, &t) <
		    0)
			e[i] = NAN;
		else
			e[i] = fabs(log(t / s->iter_ms));
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Mark samples whose iteration time the parameters x miss by more than
 * max(1.5x, 3x the median miss) as excluded; returns how many. */
static int trim(const struct fit_ctx *c, unsigned char *mask, const double *x,
		struct rk_perf_fit_result *r)
{
	double *e = malloc(sizeof(double) * 2 * (size_t)c->n);
	if (!e)
		return 0;
	double *sorted = e + c->n;
	iter_errors(c, x, e);
	int m = 0;
	for (int i = 0; i < c->n; i++)
		if (isfinite(e[i]) && !(mask[i] & MASK_EXCLUDED))
			sorted[m++] = e[i];
	int dropped = 0;
	if (m >= TRIM_MIN_SAMPLES) {
		qsort(sorted, (size_t)m, sizeof(double), cmp_double);
		double med = m % 2 ? sorted[m / 2] : 0.5 * (sorted[m / 2 - 1] + sorted[m / 2]);
		double thr = fmax(log(1.5), 3.0 * med);
		for (int i = 0; i < c->n; i++) {
			if ((mask[i] & MASK_EXCLUDED) || !(e[i] > thr) ||
			    m - dropped <= TRIM_MIN_SAMPLES - 1)
				continue;
			mask[i] |= MASK_EXCLUDED;
			if (r->n_iter_rejected < RK_FIT_REJECT_MAX)
				r->iter_rejected[r->n_iter_rejected++] = i;
			dropped++;
		}
	}
	free(e);
	return dropped;
}

int rk_perf_fit(const struct rk_model *m, const struct rk_perf_env *env,
		const struct rk_perf_sample *samples, int n, const struct rk_perf_params *warm,
		struct rk_perf_fit_result *out, struct rk_error *err)
{
	int rc;
	if (!m || !env || !out || (!samples && n))
		return rk_error_set(err, RK_EINVAL, "fit: missing argument");
	if ((rc = rk_perf_env_check(env, err)) < 0)
		return rc;
	if (n < 1)
		return rk_error_set(err, RK_EINVAL, "fit: model '%s': no samples", m->name);
	for (int i = 0; i < n; i++)
		if ((rc = check_sample(&samples[i], i, err)) < 0)
			return rc;

	gsl_error_handler_t *old = gsl_set_error_handler_off();
	struct rk_perf_fit_result r;
	memset(&r, 0, sizeof(r));
	struct rk_perf_params start;
	if (warm)
		start = *warm;
	else
		rk_perf_params_default(env->overlap, &start);
	r.k.fwd_fixed_ms = start.fwd_fixed_ms;
	if (fit_forward(m, samples, n, &r) < 0) {
		gsl_set_error_handler(old);
		return rk_error_set(err, RK_ENOMEM, "fit: out of memory");
	}

	unsigned char *no_phases = calloc((size_t)n, 1); /* MASK_* per sample */
	if (!no_phases) {
		gsl_set_error_handler(old);
		return rk_error_set(err, RK_ENOMEM, "fit: out of memory");
	}
	for (int i = 0; i < n; i++) {
		const struct rk_perf_sample *x = &samples[i];
		/* A pipeline interleaves forward and backward micro-batches: a 3D
		 * run's phases are not separable the way §1.5 splits them, so only
		 * its iteration time is fitted. */
		if (x->plan.tp > 1 || x->plan.pp > 1)
			no_phases[i] |= MASK_NO_PHASES;
		if (!(x->opt_ms > 0))
			continue;
		double shard = m->params / (1024.0 * 1024.0);
		if (x->plan.tp > 1 || x->plan.pp > 1)
			shard /= (double)x->plan.tp * x->plan.pp;
		else if (x->plan.zero >= 1 || x->plan.offload)
			shard /= x->plan.dp;
		if (x->opt_ms < RK_FIT_MIN_OPT_MS_PER_MI * shard) {
			no_phases[i] |= MASK_NO_PHASES;
			if (r.n_phase_ignored < RK_FIT_REJECT_MAX)
				r.phase_ignored[r.n_phase_ignored++] = i;
		}
	}

	/* The search runs on a model whose forward time is the fitted one. */
	struct rk_model mm = *m;
	if (r.fwd_ms > 0)
		mm.fwd_ms = r.fwd_ms;
	struct fit_ctx c = {.m = &mm, .env = env, .s = samples, .n = n,
			    .fwd_fixed = r.k.fwd_fixed_ms, .no_phases = no_phases};
	rk_perf_params_bounds(env->overlap, c.lo, c.hi);
	double x0[NP];
	rk_perf_params_to_array(&start, x0);
	x_to_u(&c, x0, c.u0);

	/* Starts: the given point, then (cold fits only) spread variants that
	 * move the overlap exponents and the backward ratio, the parameters with
	 * the most local minima. Ties keep the earlier start: deterministic. */
	static const double mult[][NP] = {
		{1, 1, 1, 1, 1, 1, 1},
		{0.6, 5, 1, 1, 0.3, 5, 5},
		{1.5, 1, 3, 3, 3, 1, 1},
		{0.8, 20, 0.3, 0.3, 1, 20, 20},
	};
	int n_starts = warm ? 1 : (int)(sizeof(mult) / sizeof(mult[0]));
	/* A warm start already describes the job: samples it misses badly are
	 * judged against it before they can drag the refit. */
	if (warm && n >= TRIM_MIN_SAMPLES)
		trim(&c, no_phases, x0, &r);
	double best = INFINITY, xbest[NP] = {0};
	for (int s = 0; s < n_starts; s++) {
		double xs[NP], xo[NP];
		for (int i = 0; i < NP; i++)
			xs[i] = x0[i] * mult[s][i];
		double f = run_simplex(&c, xs, START_TOL, xo);
		if (f < best) {
			best = f;
			memcpy(xbest, xo, sizeof(xbest));
		}
	}
	/* Polish: restart from the best point (Nelder-Mead can stall on a
	 * degenerate simplex). */
	if (isfinite(best)) {
		double xo[NP];
		double f = run_simplex(&c, xbest, POLISH_TOL, xo);
		if (f < best) {
			best = f;
			memcpy(xbest, xo, sizeof(xbest));
		}
	}
	/* Trim (fit.h): with enough samples, iteration times the fitted model
	 * misses by more than max(1.5x, 3x the median miss) are runs the model
	 * cannot describe; leave them out, report them and refit once. */
	if (isfinite(best) && n >= TRIM_MIN_SAMPLES && trim(&c, no_phases, xbest, &r) > 0) {
		double xo[NP];
		double f = run_simplex(&c, xbest, POLISH_TOL, xo);
		if (isfinite(f)) {
			best = f;
			memcpy(xbest, xo, sizeof(xbest));
		}
	}
	gsl_set_error_handler(old);
	if (!isfinite(best)) {
		free(no_phases);
		return rk_error_set(err, RK_ENOCONV,
				    "fit: model '%s': no parameter set gives a finite objective "
				    "(are the samples consistent with the model?)",
				    m->name);
	}
	double fwd_fixed = r.k.fwd_fixed_ms;
	rk_perf_params_from_array(xbest, &r.k);
	r.k.fwd_fixed_ms = fwd_fixed;
	r.objective = objective_x(&c, xbest, &r.iter_rmse_log);
	free(no_phases);
	r.n_samples = n;
	r.n_starts = n_starts + 1;
	*out = r;
	return 0;
}

int rk_perf_refit(struct rk_model *m, const struct rk_perf_env *env,
		  const struct rk_perf_samples *set, struct rk_error *err)
{
	if (!m || !set)
		return rk_error_set(err, RK_EINVAL, "refit: missing argument");
	struct rk_perf_fit_result r;
	int rc = rk_perf_fit(m, env, set->v, set->n, m->perf_fitted ? &m->perf : NULL, &r, err);
	if (rc < 0)
		return rc;
	m->perf = r.k;
	m->perf_fitted = 1;
	if (r.fwd_ms > 0)
		m->fwd_ms = r.fwd_ms;
	return 0;
}

struct min1d_ctx {
	rk_fit_fn1 f;
	void *ctx;
};

static double min1d_eval(double x, void *p)
{
	const struct min1d_ctx *c = p;
	return c->f(x, c->ctx);
}

int rk_fit_min1d(rk_fit_fn1 f, void *ctx, double a, double x, double fx, double b, double tol,
		 double *x_out, double *f_out)
{
	if (x_out)
		*x_out = x;
	if (f_out)
		*f_out = fx;
	if (!f || !x_out || !f_out || !(a < x && x < b) || !(tol > 0.0))
		return RK_EINVAL;
	struct min1d_ctx c = { f, ctx };
	gsl_function F = { min1d_eval, &c };
	gsl_error_handler_t *old = gsl_set_error_handler_off();
	gsl_min_fminimizer *m = gsl_min_fminimizer_alloc(gsl_min_fminimizer_brent);
	/* GSL refuses a bracket whose middle is not below both ends: x stays best. */
	if (m && gsl_min_fminimizer_set_with_values(m, &F, x, fx, a, f(a, ctx), b, f(b, ctx)) ==
			 GSL_SUCCESS) {
		for (int it = 0; it < 100; it++) {
			if (gsl_min_fminimizer_iterate(m) != GSL_SUCCESS)
				break;
			if (gsl_min_test_interval(gsl_min_fminimizer_x_lower(m),
						  gsl_min_fminimizer_x_upper(m), tol, 0.0) == GSL_SUCCESS)
				break;
		}
		double xm = gsl_min_fminimizer_x_minimum(m), fm = f(xm, ctx);
		if (fm <= fx) {
			*x_out = xm;
			*f_out = fm;
		}
	}
	gsl_min_fminimizer_free(m);
	gsl_set_error_handler(old);
	return 0;
}

struct simplex_ctx {
	rk_fit_fnv f;
	void *ctx;
};

static double simplex_eval(const gsl_vector *v, void *p)
{
	const struct simplex_ctx *c = p;
	return c->f(gsl_vector_const_ptr(v, 0), c->ctx);
}

int rk_fit_simplex(rk_fit_fnv f, void *ctx, int n, double *x, int rounds, int max_iter,
		   double tol, double *f_out)
{
	if (!f || !x || !f_out || n < 1 || rounds < 1 || !(tol > 0.0))
		return RK_EINVAL;
	struct simplex_ctx c = { f, ctx };
	gsl_error_handler_t *old = gsl_set_error_handler_off();
	gsl_vector *u = gsl_vector_alloc((size_t)n), *step = gsl_vector_alloc((size_t)n);
	gsl_multimin_fminimizer *mz =
		gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, (size_t)n);
	int rc = RK_ENOMEM;
	if (!u || !step || !mz)
		goto out;
	for (int i = 0; i < n; i++)
		gsl_vector_set(u, (size_t)i, x[i]);
	gsl_multimin_function fn = { .f = simplex_eval, .n = (size_t)n, .params = &c };
	rc = RK_ENOCONV;
	for (int round = 0; round < rounds; round++) {
		gsl_vector_set_all(step, 1.0);
		if (gsl_multimin_fminimizer_set(mz, &fn, u, step) != GSL_SUCCESS)
			goto out;
		int status = GSL_CONTINUE;
		for (int it = 0; it < max_iter && status == GSL_CONTINUE; it++) {
			if (gsl_multimin_fminimizer_iterate(mz) != GSL_SUCCESS)
				break;
			status = gsl_multimin_test_size(gsl_multimin_fminimizer_size(mz), tol);
		}
		gsl_vector_memcpy(u, gsl_multimin_fminimizer_x(mz));
	}
	for (int i = 0; i < n; i++)
		x[i] = gsl_vector_get(u, (size_t)i);
	*f_out = gsl_multimin_fminimizer_minimum(mz);
	if (isfinite(*f_out))
		rc = 0;
out:
	if (mz)
		gsl_multimin_fminimizer_free(mz);
	if (u)
		gsl_vector_free(u);
	if (step)
		gsl_vector_free(step);
	gsl_set_error_handler(old);
	return rc;
}
