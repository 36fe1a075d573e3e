/*
 * Fitting the performance model (docs/references.md §1.5): the 7 parameters of
 * struct rk_perf_params (plus the forward time and its fixed part) from a
 * handful of profiled or observed iterations, deterministically, under box
 * bounds; and the online variant: add an observed sample, refit warm-started.
 * GSL stays inside src/model/fit.c.
 */
#ifndef RUBICK_FIT_H
#define RUBICK_FIT_H

#include "rubick/error.h"
#include "rubick/model.h"
#include "rubick/perf.h"
#include "rubick/plan.h"

/* One measured iteration. Phases the run did not measure are < 0. */
struct rk_perf_sample {
	struct rk_plan plan;
	struct rk_placement placement;
	int cpus_per_gpu;  /* CPU threads per GPU (>= 1) */
	double fwd_ms;     /* forward phase, recompute excluded; < 0 = unknown */
	double sync_ms;    /* backward + gradient sync (+ recompute, offload overlap); < 0 = unknown */
	double opt_ms;     /* optimizer step (with offload overlap); < 0 = unknown */
	double iter_ms;    /* whole iteration; required, > 0 */
	int line;          /* source line for reports; 0 = none */
};

/* A growable set of samples (caller storage; init/fini). */
struct rk_perf_samples {
	int n, cap;
	struct rk_perf_sample *v; /* owned */
};

void rk_perf_samples_init(struct rk_perf_samples *s);
void rk_perf_samples_fini(struct rk_perf_samples *s);

/* Append a copy of `x`; RK_EINVAL (named field) for an unusable sample, RK_ENOMEM. */
int rk_perf_samples_add(struct rk_perf_samples *s, const struct rk_perf_sample *x,
			struct rk_error *err);

#define RK_FIT_REJECT_MAX 16
#define RK_FIT_MIN_OPT_MS_PER_MI 0.004

struct rk_perf_fit_result {
	struct rk_perf_params k; /* fitted parameters, fwd_fixed_ms included */
	double fwd_ms;           /* fitted forward time of the model's global batch on 1 GPU;
				    0 when the samples carry no forward times (model's kept) */
	double objective;        /* §1.5 objective at the optimum (sum of log-RMSEs) */
	double iter_rmse_log;    /* RMSE of log iteration time over the samples */
	int n_samples;           /* samples used */
	int n_starts;            /* optimiser starts run */
	int n_fwd_rejected;      /* forward times rejected as outliers */
	int fwd_rejected[RK_FIT_REJECT_MAX]; /* their sample indexes */
	double fwd_rejected_ms[RK_FIT_REJECT_MAX];  /* the rejected value */
	double fwd_expected_ms[RK_FIT_REJECT_MAX];  /* what the other samples predict there */
	int n_phase_ignored;     /* samples whose sync/opt split was ignored (implausible) */
	int phase_ignored[RK_FIT_REJECT_MAX];       /* their sample indexes */
	int n_iter_rejected;     /* samples left out as iteration-time outliers */
	int iter_rejected[RK_FIT_REJECT_MAX];       /* their sample indexes */
};

/*
 * Fit model `m`'s parameters on `n` samples with cluster constants `env`.
 * Forward: T_f(b) = fwd_fixed_ms + rate * b over the per-GPU batch b, by
 * relative least squares on the samples' forward times; a forward time more
 * than 2.5x off what the other samples predict (leave-one-out, >= 3 samples)
 * is rejected as an outlier and reported in the result. A sample whose
 * optimizer phase is faster than any optimizer can be (under
 * RK_FIT_MIN_OPT_MS_PER_MI per Mi parameters of the GPU's shard: Adam touches
 * >= 16 bytes per parameter, 4 TB/s would be needed) booked the optimizer in
 * another phase: its sync/opt split is ignored (iteration and forward kept)
 * and reported; so is the split of 3D samples (a pipeline interleaves the
 * phases). Then the 7 parameters
 * minimise the §1.5 objective, RMSE(log sync) + RMSE(log opt) + RMSE(log iter),
 * with GSL's Nelder-Mead (nmsimplex2) on a bounded log transform
 * (x = exp(log lo + (log hi - log lo) * sigmoid(u))), from a fixed set of
 * starts (or from `warm` only, when given: the online refit), plus a 1e-4
 * pull toward the start that only decides parameters the samples cannot
 * identify (e.g. k_os_offload without offload samples). With >= 5 samples,
 * those whose iteration time the fit misses by more than max(1.5x, 3x the
 * median miss) are left out, reported, and the fit rerun once (samples a
 * warm start misses that badly are left out before the fit). Deterministic.
 * Returns 0, RK_EINVAL (no usable samples, bad sample named by index/line),
 * RK_ENOCONV (no finite objective), RK_ENOMEM.
 */
int rk_perf_fit(const struct rk_model *m, const struct rk_perf_env *env,
		const struct rk_perf_sample *samples, int n, const struct rk_perf_params *warm,
		struct rk_perf_fit_result *out /* OUT */, struct rk_error *err);

/*
 * Online update: refit `m` (in/out: perf, perf_fitted and fwd_ms) on `set`,
 * warm-started from m->perf when m->perf_fitted. `m` is unchanged on failure.
 */
int rk_perf_refit(struct rk_model *m, const struct rk_perf_env *env,
		  const struct rk_perf_samples *set, struct rk_error *err);

/* Parameters the fit starts from when nothing is known (documented defaults). */
void rk_perf_params_default(enum rk_overlap_form form, struct rk_perf_params *k /* OUT */);

/* A scalar objective for rk_fit_min1d. */
typedef double (*rk_fit_fn1)(double x, void *ctx);

/*
 * Brent's method (GSL) on the bracket a < x < b, where f(x) = fx lies below
 * f(a) and f(b) (a grid search finds such a bracket). Stops when the bracket
 * is narrower than `tol` or after 100 iterations. On return *x_out / *f_out
 * hold the best point seen: Brent's minimum if it beats fx, else x itself.
 * Returns 0, RK_EINVAL for a bad bracket (outputs then hold x and fx).
 */
int rk_fit_min1d(rk_fit_fn1 f, void *ctx, double a, double x, double fx, double b, double tol,
		 double *x_out, double *f_out);

/* An objective over n unconstrained parameters, for rk_fit_simplex. */
typedef double (*rk_fit_fnv)(const double *x, void *ctx);

/*
 * Nelder-Mead (GSL's nmsimplex2) from x[0..n-1] with unit initial steps, run
 * `rounds` times, each restarted from the previous minimum (a restart guards
 * the simplex against collapsing early in a narrow valley); a round stops when
 * the simplex is smaller than `tol` or after max_iter iterations. On success
 * x holds the minimiser and *f_out its value. Returns 0, RK_EINVAL (n < 1,
 * rounds < 1, tol <= 0), RK_ENOMEM, RK_ENOCONV (no finite minimum; x then
 * holds the last point reached).
 */
int rk_fit_simplex(rk_fit_fnv f, void *ctx, int n, double *x, int rounds, int max_iter,
		   double tol, double *f_out);

#endif
