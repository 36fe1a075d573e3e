/* Pollux's goodput job model; see include/rubick/goodput.h (Pollux, OSDI'21, §3). */
#include "rubick/goodput.h"

#include <math.h>
#include <stdlib.h>

#include "rubick/error.h"
#include "rubick/fit.h"

/* Pollux samples this many total batches in geometric space (optimize()). */
#define GOODPUT_NCAND 50
/* Pollux's floor for parameters (lower bound and the value of pinned terms). */
#define GOODPUT_FLOOR 1e-8
/* Pollux's tolerance for the floor/ceil of batch splits. */
#define GOODPUT_EPS 1e-8

static bool nonneg(double x)
{
	return isfinite(x) && x >= 0.0;
}

static bool perf_ok(const struct rk_goodput_perf *p)
{
	return p && nonneg(p->alpha_c) && nonneg(p->beta_c) && nonneg(p->alpha_n) &&
	       nonneg(p->beta_n) && nonneg(p->alpha_r) && nonneg(p->beta_r) &&
	       isfinite(p->gamma) && p->gamma >= 1.0 && p->gamma <= 10.0;
}

static bool grad_ok(const struct rk_goodput_grad *g)
{
	return g && nonneg(g->sqr) && nonneg(g->var);
}

int rk_goodput_efficiency(const struct rk_goodput_grad *g, double init_batch, double batch,
			  double *out)
{
	if (!grad_ok(g) || !out || !(isfinite(init_batch) && init_batch > 0.0) ||
	    !(isfinite(batch) && batch > 0.0))
		return RK_EINVAL;
	/* eq. 5 as gain / r, equal to (phi + M0) / (phi + M) with phi = M0 var /
	 * sqr; this form stays finite when sqr = 0 (pure noise: E = 1 / r). */
	double r = batch / init_batch;
	double denom = g->var / r + g->sqr;
	double gain = denom > 0.0 ? (g->var + g->sqr) / denom : 1.0;
	*out = gain / r;
	return 0;
}

/* T_grad and T_sync (§3.2, eqs. 7-8); replicas = 1 syncs nothing. */
static double t_grad(const struct rk_goodput_perf *p, double m)
{
	return p->alpha_c + p->beta_c * m;
}

static double t_sync(const struct rk_goodput_perf *p, int nodes, int replicas)
{
	double extra = replicas > 2 ? (double)(replicas - 2) : 0.0;
	if (nodes > 1)
		return p->alpha_n + p->beta_n * extra;
	if (replicas > 1)
		return p->alpha_r + p->beta_r * extra;
	return 0.0;
}

/* eq. 9 with accumulation: s micro-steps of compute, then one overlapped step. */
static double t_iter(const struct rk_goodput_perf *p, int nodes, int replicas, double m, int s)
{
	double tg = t_grad(p, m), ts = t_sync(p, nodes, replicas);
	double overlap = ts > 0.0 ? pow(pow(tg, p->gamma) + pow(ts, p->gamma), 1.0 / p->gamma) : tg;
	return (double)s * tg + overlap;
}

int rk_goodput_step_time(const struct rk_goodput_perf *p, int nodes, int replicas,
			 double local_bsz, int accum_steps, double *out_s)
{
	if (!perf_ok(p) || !out_s || nodes < 1 || replicas < nodes ||
	    !(isfinite(local_bsz) && local_bsz > 0.0) || accum_steps < 0)
		return RK_EINVAL;
	*out_s = t_iter(p, nodes, replicas, local_bsz, accum_steps);
	return 0;
}

int rk_goodput_throughput(const struct rk_goodput_perf *p, int nodes, int replicas,
			  double local_bsz, int accum_steps, double *out_sps)
{
	double t;
	int rc = rk_goodput_step_time(p, nodes, replicas, local_bsz, accum_steps, &t);
	if (rc)
		return rc;
	if (!(t > 0.0))
		return RK_EINVAL;
	*out_sps = (double)replicas * local_bsz * (double)(accum_steps + 1) / t;
	return 0;
}

int rk_goodput_eval(const struct rk_goodput_perf *p, const struct rk_goodput_grad *g,
		    double init_batch, int nodes, int replicas, double local_bsz,
		    int accum_steps, double *out_sps)
{
	double tput, eff;
	int rc = rk_goodput_throughput(p, nodes, replicas, local_bsz, accum_steps, &tput);
	if (rc)
		return rc;
	rc = rk_goodput_efficiency(g, init_batch, (double)replicas * local_bsz * (accum_steps + 1),
				   &eff);
	if (rc)
		return rc;
	*out_sps = tput * eff;
	return 0;
}

static bool limits_ok(const struct rk_goodput_limits *l)
{
	return l && isfinite(l->init_batch) && l->init_batch > 0.0 && isfinite(l->max_batch) &&
	       l->max_batch >= l->init_batch && isfinite(l->min_local) && l->min_local >= 1.0 &&
	       isfinite(l->max_local) && l->max_local >= l->min_local;
}

int rk_goodput_optimize(const struct rk_goodput_perf *p, const struct rk_goodput_grad *g,
			const struct rk_goodput_limits *lim, int nodes, int replicas,
			struct rk_goodput_choice *out)
{
	if (!perf_ok(p) || !grad_ok(g) || !limits_ok(lim) || !out || nodes < 1 || replicas < nodes)
		return RK_EINVAL;
	double n = (double)replicas;
	double lo = fmax(lim->init_batch, lim->min_local * n), hi = lim->max_batch;
	struct rk_goodput_choice best = { 0 };
	bool found = false;
	for (int i = 0; i < GOODPUT_NCAND; i++) {
		/* numpy.geomspace(lo, hi, 50); lo > hi runs downwards as numpy does,
		 * and every candidate is then too large per GPU or exactly lo. */
		double f = (double)i / (GOODPUT_NCAND - 1);
		double batch = i == GOODPUT_NCAND - 1 ? hi : lo * pow(hi / lo, f);
		double local = batch / n;
		int s = 0;
		if (lim->accumulation) {
			s = (int)ceil(local / lim->max_local - GOODPUT_EPS) - 1;
			if (s < 0)
				s = 0;
			/* Pollux: one GPU above M0 needs two micro-batches to
			 * estimate the gradient statistics that scale its LR. */
			if (replicas == 1 && local > lim->init_batch && s < 1)
				s = 1;
		}
		double m = ceil(local / (s + 1) - GOODPUT_EPS);
		if (m < lim->min_local || m > lim->max_local)
			continue;
		double gp;
		int rc = rk_goodput_eval(p, g, lim->init_batch, nodes, replicas, m, s, &gp);
		if (rc)
			return rc;
		if (!found || gp > best.goodput) {
			best = (struct rk_goodput_choice){ .local_bsz = (int)m, .accum_steps = s,
							   .batch = n * m * (s + 1), .goodput = gp };
			found = true;
		}
	}
	if (!found)
		return RK_EINFEASIBLE;
	*out = best;
	return 0;
}

/* The fit (Pollux fit_perf_params). Parameter k of PerfParams is free or
 * pinned; a free positive term is FLOOR + exp(x) and gamma is 1 + 9 sigmoid(x),
 * so the bounds hold everywhere the simplex goes. */
#define NPARAM 7

struct fit_ctx {
	const struct rk_goodput_obs *obs;
	size_t n;
	double pinned[NPARAM];
	int free_at[NPARAM]; /* index into x, or -1 when pinned */
};

static double param_of(const struct fit_ctx *c, const double *x, int k)
{
	if (c->free_at[k] < 0)
		return c->pinned[k];
	double v = x[c->free_at[k]];
	if (k == NPARAM - 1)
		return 1.0 + 9.0 / (1.0 + exp(-v));
	return GOODPUT_FLOOR + exp(v);
}

static struct rk_goodput_perf perf_of(const struct fit_ctx *c, const double *x)
{
	return (struct rk_goodput_perf){
		.alpha_c = param_of(c, x, 0), .beta_c = param_of(c, x, 1),
		.alpha_n = param_of(c, x, 2), .beta_n = param_of(c, x, 3),
		.alpha_r = param_of(c, x, 4), .beta_r = param_of(c, x, 5),
		.gamma = param_of(c, x, 6),
	};
}

static double fit_objective(const double *x, void *arg)
{
	const struct fit_ctx *c = arg;
	struct rk_goodput_perf p = perf_of(c, x);
	double e1 = 0.0, e2 = 0.0;
	for (size_t i = 0; i < c->n; i++) {
		const struct rk_goodput_obs *o = &c->obs[i];
		double d1 = log(t_iter(&p, o->nodes, o->replicas, o->local_bsz, o->accum_steps)) -
			    log(o->step_s);
		double d2 = log(t_grad(&p, o->local_bsz)) - log(o->compute_s);
		e1 += d1 * d1;
		e2 += d2 * d2;
	}
	double nn = (double)c->n;
	double reg1 = 1e-3 * (p.gamma - 1.0) * (p.gamma - 1.0);
	double rn = p.beta_n / p.alpha_n, rr = p.beta_r / p.alpha_r;
	double reg2 = 1e-2 * (rn * rn + rr * rr);
	double f = sqrt(e1 / nn) + sqrt(e2 / nn) + reg1 + reg2;
	return isfinite(f) ? f : HUGE_VAL;
}

static bool obs_ok(const struct rk_goodput_obs *o)
{
	return o->nodes >= 1 && o->replicas >= o->nodes && isfinite(o->local_bsz) &&
	       o->local_bsz > 0.0 && o->accum_steps >= 0 && isfinite(o->step_s) && o->step_s > 0.0 &&
	       isfinite(o->compute_s) && o->compute_s > 0.0;
}

/* Pins what the rows cannot identify, as Pollux does; returns the free count. */
static int fit_pin(struct fit_ctx *c)
{
	bool one_bsz = true, multi_node = false, single_node_multi = false, over2 = false;
	double mean_compute = 0.0;
	for (size_t i = 0; i < c->n; i++) {
		const struct rk_goodput_obs *o = &c->obs[i];
		one_bsz = one_bsz && o->local_bsz == c->obs[0].local_bsz;
		multi_node = multi_node || o->nodes > 1;
		single_node_multi = single_node_multi || (o->nodes == 1 && o->replicas > 1);
		over2 = over2 || o->replicas > 2;
		mean_compute += o->compute_s / (double)c->n;
	}
	bool pin[NPARAM] = { false };
	for (int k = 0; k < NPARAM; k++)
		c->pinned[k] = GOODPUT_FLOOR;
	if (one_bsz) {
		pin[0] = true;
		c->pinned[0] = mean_compute / 2.0;
	}
	if (!multi_node)
		pin[2] = pin[3] = true;
	if (!single_node_multi)
		pin[4] = pin[5] = true;
	if (!over2)
		pin[3] = pin[5] = true;
	int nfree = 0;
	for (int k = 0; k < NPARAM; k++)
		c->free_at[k] = pin[k] ? -1 : nfree++;
	return nfree;
}

int rk_goodput_fit(const struct rk_goodput_obs *obs, size_t n, struct rk_goodput_perf *out)
{
	if (!obs || n == 0 || !out)
		return RK_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!obs_ok(&obs[i]))
			return RK_EINVAL;
	struct fit_ctx c = { .obs = obs, .n = n };
	int nfree = fit_pin(&c);
	/* Pollux's starting point: 0.1 and 0.01 for each (alpha, beta), gamma 1.001. */
	static const double start[NPARAM] = { 1e-1, 1e-2, 1e-1, 1e-2, 1e-1, 1e-2, 1.001 };
	double x[NPARAM];
	for (int k = 0; k < NPARAM; k++) {
		if (c.free_at[k] < 0)
			continue;
		x[c.free_at[k]] = k == NPARAM - 1 ? -log(9.0 / (start[k] - 1.0) - 1.0)
						  : log(start[k] - GOODPUT_FLOOR);
	}
	/* Nelder-Mead restarted from its own minimum, 4 rounds (rk_fit_simplex). */
	double f;
	int rc = nfree > 0 ? rk_fit_simplex(fit_objective, &c, nfree, x, 4, 20000, 1e-9, &f) : 0;
	if (rc == 0)
		*out = perf_of(&c, x);
	return rc;
}
