/*
 * A small integer-programming wrapper: binary variables (or bounded integers,
 * rk_lp_set_upper, or continuous ones, rk_lp_set_real), a linear
 * objective, sparse rows with lower/upper bounds, solved by branch-and-cut
 * under a time, node and relative-gap limit, optionally from a start solution. It exists so that exactly
 * one file (src/policy/solvers/lp.c) includes a solver header (GLPK); no solver type
 * appears here. Used by the Sia baseline (docs/references.md §5.1) and Gavel's
 * allocation LPs (src/policy/gavel).
 *
 * Typical use:
 *   struct rk_lp *lp;
 *   rk_lp_create(&lp, n_vars, RK_LP_MINIMISE, err);
 *   rk_lp_set_obj(lp, v, c);                          for each cost
 *   rk_lp_add_row(lp, n, vars, coefs, RK_LP_NO_BOUND, 1.0, err);
 *   rk_lp_solve(lp, &opts, &result, err);
 *   rk_lp_value(lp, v);                               0 or 1
 *   rk_lp_destroy(lp);
 *
 * Not thread-safe across threads sharing one rk_lp; distinct rk_lp objects may
 * be solved from distinct threads (GLPK keeps per-thread environments).
 */
#ifndef RUBICK_LP_H
#define RUBICK_LP_H

#include "rubick/error.h"

#include <math.h>

/* Bound value meaning "no bound on this side" (use as lo or hi). */
#define RK_LP_NO_BOUND HUGE_VAL

enum rk_lp_sense {
	RK_LP_MINIMISE = 0,
	RK_LP_MAXIMISE = 1,
};

enum rk_lp_status {
	RK_LP_OPTIMAL = 0,    /* proven optimal within the requested gap */
	RK_LP_FEASIBLE = 1,   /* a feasible solution, stopped by the time limit */
	RK_LP_INFEASIBLE = 2, /* no integer solution exists */
	RK_LP_NO_SOLUTION = 3 /* time limit reached before any integer solution */
};

struct rk_lp_opts {
	double time_limit_ms; /* wall-clock limit for the solve; <= 0 = no limit */
	double mip_gap;       /* relative gap at which to stop (e.g. 1e-4); < 0 = solver default */
	/* Branch-and-bound nodes after which the search stops with its incumbent
	 * (status FEASIBLE); <= 0 = no limit. Unlike the time limit it stops at
	 * the same point on any machine, so decisions stay reproducible. */
	int max_nodes;
};

struct rk_lp_result {
	enum rk_lp_status status;
	double objective; /* objective at the returned solution (NaN if none) */
	int nodes;        /* branch-and-bound nodes the search created */
	int start_used;   /* 1: the start (rk_lp_set_start) was accepted as incumbent */
};

struct rk_lp; /* opaque */

/*
 * Create a problem with `n_vars` binary variables (indices 0..n_vars-1), all
 * objective coefficients 0. OUT: *lp, freed with rk_lp_destroy. Returns 0,
 * RK_EINVAL (n_vars < 1 or bad sense) or RK_ENOMEM.
 */
int rk_lp_create(struct rk_lp **lp, int n_vars, enum rk_lp_sense sense, struct rk_error *err);

void rk_lp_destroy(struct rk_lp *lp);
/*
 * Free what the solver keeps per thread (GLPK's environment, allocated at a
 * thread's first solve and otherwise lost when that thread exits). Call on a
 * thread that ran rounds, before it exits; harmless when it solved nothing.
 */
void rk_lp_thread_exit(void);

int rk_lp_n_vars(const struct rk_lp *lp);

/* Set the objective coefficient of `var` (finite). Returns 0 or RK_EINVAL. */
int rk_lp_set_obj(struct rk_lp *lp, int var, double coef, struct rk_error *err);

/*
 * Add the row lo <= sum_i coefs[i] * x[vars[i]] <= hi. Either bound may be
 * RK_LP_NO_BOUND (lo is then -inf, hi +inf), not both. Each variable may appear
 * once per row; coefficients must be finite. The arrays are copied. Returns 0,
 * RK_EINVAL (naming the offending entry) or RK_ENOMEM; on failure the problem
 * is unchanged.
 */
int rk_lp_add_row(struct rk_lp *lp, int n, const int *vars, const double *coefs, double lo,
		  double hi, struct rk_error *err);

/* Fix binary `var` to `value` (0 or 1) in every later solve. Returns 0 or RK_EINVAL. */
int rk_lp_fix(struct rk_lp *lp, int var, int value, struct rk_error *err);

/*
 * Make `var` a general integer in 0..ub (ub >= 1; 1 keeps it binary), e.g.
 * "how many of these identical jobs take this configuration". Returns 0 or
 * RK_EINVAL (bad bound, or the variable is fixed).
 */
int rk_lp_set_upper(struct rk_lp *lp, int var, int ub, struct rk_error *err);

/*
 * Make `var` continuous in lo..hi (lo finite; hi may be RK_LP_NO_BOUND), e.g.
 * a share of time or a max-min level (Gavel's allocation LPs). A problem
 * whose variables are all continuous is solved by simplex alone. Returns 0
 * or RK_EINVAL (bad bounds, the variable is fixed, or a start is set).
 */
int rk_lp_set_real(struct rk_lp *lp, int var, double lo, double hi, struct rk_error *err);

/*
 * Offer values[v] (0..upper bound of v, for every variable) as the first
 * incumbent of every later solve, e.g. the previous round's solution. It must
 * satisfy every row; an infeasible start is ignored. Refused (RK_EINVAL) on
 * a problem with continuous variables (the solve
 * still runs). The array is copied. Returns 0, RK_EINVAL (a value out of its
 * bounds) or RK_ENOMEM; on failure nothing changes.
 */
int rk_lp_set_start(struct rk_lp *lp, const int *values, struct rk_error *err);

/*
 * Solve (the LP relaxation by simplex, then branch-and-cut from its basis,
 * with the start as first incumbent; solver output silenced). OUT: *res.
 * Returns 0 whenever the solver ran, whatever res->status says (infeasibility
 * is an answer, not an error); RK_ENOMEM or RK_EINTERNAL when the solver
 * failed. Values from rk_lp_value are valid when status is OPTIMAL or FEASIBLE.
 */
int rk_lp_solve(struct rk_lp *lp, const struct rk_lp_opts *opts, struct rk_lp_result *res,
		struct rk_error *err);

/* Value (0..upper bound) of `var` in the last solution; 0 if none or out of range
 * (a continuous variable's is rounded to the nearest integer). */
int rk_lp_value(const struct rk_lp *lp, int var);

/* Value of `var` in the last solution as a double (continuous or not); 0 if none. */
double rk_lp_value_real(const struct rk_lp *lp, int var);

#endif
