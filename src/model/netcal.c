/* Effective inter-node bandwidth calibration; see include/rubick/netcal.h. */
#include "rubick/netcal.h"

#include <math.h>

#include "rubick/error.h"
#include "rubick/fit.h"

#define NETCAL_GRID 64

struct netcal_ctx {
	size_t n;
	const double *meas;
	const unsigned char *use;
	rk_netcal_predict_fn predict;
	void *ctx;
};

/* Objective over x = ln B; an invalid prediction counts as a 100% miss so the
 * search is pushed away from it rather than ignoring it. */
static double netcal_sse(double x, void *p)
{
	const struct netcal_ctx *c = p;
	double gbps = exp(x), s = 0.0;

	for (size_t i = 0; i < c->n; i++) {
		if ((c->use && !c->use[i]) || !(c->meas[i] > 0.0))
			continue;
		double pr = c->predict(i, gbps, c->ctx);
		double r = (isfinite(pr) && pr > 0.0) ? (pr - c->meas[i]) / c->meas[i] : 1.0;
		s += r * r;
	}
	return s;
}

int rk_netcal_fit(size_t n, const double *meas_ms, const unsigned char *use,
		  rk_netcal_predict_fn predict, void *ctx, double lo_gbps, double hi_gbps,
		  struct rk_netcal_result *out)
{
	if (!meas_ms || !predict || !out || !(lo_gbps > 0.0) || !(hi_gbps > lo_gbps) ||
	    !isfinite(hi_gbps))
		return RK_EINVAL;
	size_t used = 0;
	for (size_t i = 0; i < n; i++)
		if ((!use || use[i]) && meas_ms[i] > 0.0)
			used++;
	if (used == 0)
		return RK_EINVAL;

	struct netcal_ctx c = { n, meas_ms, use, predict, ctx };
	double xlo = log(lo_gbps), xhi = log(hi_gbps), step = (xhi - xlo) / (NETCAL_GRID - 1);
	size_t best = 0;
	double fbest = INFINITY;
	for (size_t k = 0; k < NETCAL_GRID; k++) {
		double f = netcal_sse(xlo + step * (double)k, &c);
		if (f < fbest) {
			fbest = f;
			best = k;
		}
	}
	double xbest = xlo + step * (double)best;

	/* Brent needs f(mid) below both ends: only an interior grid minimum qualifies. */
	if (best > 0 && best + 1 < NETCAL_GRID)
		(void)rk_fit_min1d(netcal_sse, &c, xbest - step, xbest, fbest, xbest + step, 1e-10,
				   &xbest, &fbest);
	out->gbps = exp(xbest);
	out->sse_rel = fbest;
	out->n_used = used;
	return 0;
}
