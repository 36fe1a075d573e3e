/*
 * Cluster-level calibration of the effective inter-node bandwidth (issue 22,
 * item 6). In the Rubick performance model (Rubick, OSDI'25, §4, the
 * communication terms of T_sync and the tp/pp exchanges) the inter-node part of
 * every collective is volume / bandwidth, so one effective bandwidth B_eff
 * replaces the nominal NIC figure: the smallest physically meaningful form
 * (a per-message latency needs message counts the artifact tables lack).
 *
 * B_eff is fitted once per held-out model from the multi-node rows of the
 * OTHER models (leave-one-model-out), minimising the sum of squared relative
 * errors sum_i ((pred_i(B) - meas_i) / meas_i)^2 over log B: a coarse grid
 * first (the objective need not be unimodal), then Brent's method in the
 * best grid bracket (rk_fit_min1d: GSL stays inside src/model/fit.c).
 */
#ifndef RUBICK_NETCAL_H
#define RUBICK_NETCAL_H

#include <stddef.h>

/* The prediction of row `i` at effective inter-node bandwidth `gbps`
 * (GB/s), in ms; a non-finite or non-positive result marks the row invalid. */
typedef double (*rk_netcal_predict_fn)(size_t i, double gbps, void *ctx);

struct rk_netcal_result {
	double gbps;     /* fitted effective inter-node bandwidth (GB/s) */
	double sse_rel;  /* sum of squared relative errors at gbps */
	size_t n_used;   /* rows with a positive measurement */
};

/*
 * Fits B_eff in [lo_gbps, hi_gbps] (0 < lo < hi) on rows 0..n-1 whose
 * measured times are meas_ms[i]; rows with use != NULL && !use[i] are skipped
 * (the held-out model's rows). Returns 0, RK_EINVAL on bad bounds or no usable
 * row (`out` untouched).
 */
int rk_netcal_fit(size_t n, const double *meas_ms, const unsigned char *use,
		  rk_netcal_predict_fn predict, void *ctx, double lo_gbps, double hi_gbps,
		  struct rk_netcal_result *out);

#endif
