/*
 * Pollux's goodput job model (Qiao et al., "Pollux: Co-adaptive Cluster
 * Scheduling for Goodput-Optimized Deep Learning", OSDI'21, §3): a pure
 * library with no I/O, used by the goodput oracle and by the Pollux and Sia
 * policies (issue 23).
 *
 *   GOODPUT(a, m, s) = THROUGHPUT(a, m, s) x EFFICIENCY(M)          (§3, eq. 1)
 *
 * with a = (nodes, replicas), m the per-GPU (atomic) batch, s the number of
 * gradient-accumulation steps and M = replicas * m * (s + 1) the total batch.
 *
 * Statistical efficiency (§3.1, eq. 5): with the gradient statistics sqr =
 * |g|^2 and var = tr(Sigma) measured at the initial batch M0, the
 * pre-conditioned gradient noise scale is phi = M0 * var / sqr and
 *
 *   E(M) = (phi + M0) / (phi + M)
 *
 * (written, as Pollux's code does, as gain / r with r = M / M0 and
 * gain = (var + sqr) / (var / r + sqr); E(M0) = 1, and E = 1/r when sqr = 0).
 *
 * Throughput (§3.2, eqs. 6-9), Pollux's PerfParams:
 *   T_grad(m)   = alpha_c + beta_c * m
 *   T_sync(a)   = alpha_n + beta_n * max(replicas - 2, 0)  if nodes > 1
 *               = alpha_r + beta_r * max(replicas - 2, 0)  if nodes = 1, replicas > 1
 *               = 0                                          if replicas = 1
 *   T_iter      = s * T_grad + (T_grad^gamma + T_sync^gamma)^(1/gamma)
 *   THROUGHPUT  = M / T_iter  (samples per second)
 * gamma in [1, 10] models the overlap of computation and communication:
 * 1 is none (a sum), large gamma tends to max(T_grad, T_sync).
 *
 * All times are seconds; batches are samples. Every function is pure and
 * thread-safe; none allocates except rk_goodput_fit's scratch, freed on return.
 */
#ifndef RUBICK_GOODPUT_H
#define RUBICK_GOODPUT_H

#include <stdbool.h>
#include <stddef.h>

/* Pollux's PerfParams (adaptdl goodput.py), seconds and seconds per sample. */
struct rk_goodput_perf {
	double alpha_c; /* constant compute time per step (s) */
	double beta_c;  /* compute time per sample of local batch (s) */
	double alpha_n; /* constant inter-node sync time (s) */
	double beta_n;  /* inter-node sync retrogression per replica beyond 2 (s) */
	double alpha_r; /* constant intra-node sync time (s) */
	double beta_r;  /* intra-node sync retrogression per replica beyond 2 (s) */
	double gamma;   /* compute/sync overlap exponent, in [1, 10] */
};

/* Gradient statistics at the initial batch (Pollux GradParams). */
struct rk_goodput_grad {
	double sqr; /* squared norm of the true gradient, >= 0 */
	double var; /* trace of the gradient covariance, >= 0 */
};

/* An application's batch limits for the optimiser (Pollux optimize()). */
struct rk_goodput_limits {
	double init_batch;   /* M0: the batch the statistics refer to (samples, > 0) */
	double max_batch;    /* largest total batch allowed (>= init_batch) */
	double min_local;    /* smallest per-GPU batch (>= 1) */
	double max_local;    /* largest per-GPU batch that fits in memory (>= min_local) */
	bool accumulation;   /* whether gradient accumulation may be used */
};

/* One configuration chosen by rk_goodput_optimize. */
struct rk_goodput_choice {
	int local_bsz;    /* per-GPU (atomic) batch m */
	int accum_steps;  /* accumulation steps s (0 = none) */
	double batch;     /* total batch M = replicas * m * (s + 1) */
	double goodput;   /* THROUGHPUT x EFFICIENCY at (m, s), samples/s */
};

/* One measured step, for rk_goodput_fit. */
struct rk_goodput_obs {
	int nodes, replicas; /* placement (nodes >= 1, replicas >= nodes) */
	double local_bsz;    /* per-GPU batch (> 0) */
	int accum_steps;     /* accumulation steps in the measured step (>= 0) */
	double step_s;       /* measured time of the whole step (s, > 0) */
	double compute_s;    /* measured compute (forward + backward) time of one micro-step (s, > 0) */
};

/* Statistical efficiency E(M) of total batch `batch` against init_batch
 * (§3.1, eq. 5). Returns 0, or RK_EINVAL (out untouched) when a batch is not
 * positive or a statistic is negative or not finite. */
int rk_goodput_efficiency(const struct rk_goodput_grad *g, double init_batch, double batch,
			  double *out /* OUT: E in (0, 1] for batch >= init_batch */);

/* Step time T_iter (s) of (nodes, replicas, local_bsz, accum_steps) (§3.2).
 * Returns 0, or RK_EINVAL when perf is invalid (a negative or non-finite
 * term, gamma outside [1, 10]), nodes < 1, replicas < nodes, local_bsz <= 0
 * or accum_steps < 0. */
int rk_goodput_step_time(const struct rk_goodput_perf *p, int nodes, int replicas,
			 double local_bsz, int accum_steps, double *out_s /* OUT */);

/* THROUGHPUT = replicas * local_bsz * (accum_steps + 1) / T_iter, samples/s.
 * Errors as rk_goodput_step_time, plus RK_EINVAL when T_iter is 0. */
int rk_goodput_throughput(const struct rk_goodput_perf *p, int nodes, int replicas,
			  double local_bsz, int accum_steps, double *out_sps /* OUT */);

/* GOODPUT = THROUGHPUT x EFFICIENCY (§3, eq. 1), samples/s. */
int rk_goodput_eval(const struct rk_goodput_perf *p, const struct rk_goodput_grad *g,
		    double init_batch, int nodes, int replicas, double local_bsz,
		    int accum_steps, double *out_sps /* OUT */);

/*
 * The goodput-optimal (m, s) for allocation (nodes, replicas) within `lim`, as
 * Pollux's optimize(): 50 total batches geometrically spaced over
 * [max(M0, min_local * replicas), max_batch]; for each, the accumulation
 * steps s = ceil(M / replicas / max_local) - 1 (at least 1 on one GPU when
 * M / replicas > M0, since the statistics need two micro-batches) when
 * accumulation is allowed, else 0; m = ceil(M / replicas / (s + 1)); configs
 * with m outside [min_local, max_local] are invalid. Ties keep the smallest
 * batch. Returns 0; RK_EINVAL on bad arguments or limits; RK_EINFEASIBLE when
 * no candidate is valid (out untouched).
 */
int rk_goodput_optimize(const struct rk_goodput_perf *p, const struct rk_goodput_grad *g,
			const struct rk_goodput_limits *lim, int nodes, int replicas,
			struct rk_goodput_choice *out /* OUT */);

/*
 * Fits PerfParams to n measured steps as Pollux's fit_perf_params: minimise
 *   rmse(log T_iter_pred, log step_s) + rmse(log T_grad_pred, log compute_s)
 *   + 1e-3 (gamma - 1)^2 + 1e-2 ((beta_n/alpha_n)^2 + (beta_r/alpha_r)^2)
 * over alpha, beta >= 1e-8 and gamma in [1, 10] (Nelder-Mead on log-scaled
 * parameters, GSL). As Pollux does, terms the data cannot identify are pinned:
 * alpha_c = mean(compute_s) / 2 with one distinct local batch; alpha_n, beta_n
 * at the floor with no multi-node row; alpha_r, beta_r with no single-node
 * multi-GPU row; beta_n, beta_r with no row of more than 2 replicas.
 * Returns 0; RK_EINVAL (naming nothing: the caller names the profile) on
 * n == 0 or an invalid row; RK_ENOMEM; RK_ENOCONV when the search fails.
 */
int rk_goodput_fit(const struct rk_goodput_obs *obs, size_t n,
		   struct rk_goodput_perf *out /* OUT */);

#endif
