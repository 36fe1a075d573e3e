/* The binary ILP wrapper: known optima, bounds, fixing, infeasibility, input errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "rubick/lp.h"

/*
 * 0/1 knapsack, capacity 10: items (weight, value) = (5,10) (4,40) (6,30) (3,50).
 * Hand-checked optimum: items 1 and 3 (weight 7, value 90); adding item 0 would
 * need weight 12 and {1,2} gives only 70 at weight 10.
 */
static void knapsack_known_optimum(void **state)
{
	(void)state;
	struct rk_lp *lp;
	struct rk_error err;
	assert_int_equal(rk_lp_create(&lp, 4, RK_LP_MAXIMISE, &err), RK_OK);
	const double w[] = {5, 4, 6, 3}, v[] = {10, 40, 30, 50};
	const int vars[] = {0, 1, 2, 3};
	for (int i = 0; i < 4; i++)
		assert_int_equal(rk_lp_set_obj(lp, i, v[i], &err), RK_OK);
	assert_int_equal(rk_lp_add_row(lp, 4, vars, w, RK_LP_NO_BOUND, 10, &err), RK_OK);
	struct rk_lp_result res;
	struct rk_lp_opts opts = {.time_limit_ms = 10000, .mip_gap = 0};
	assert_int_equal(rk_lp_solve(lp, &opts, &res, &err), RK_OK);
	assert_int_equal(res.status, RK_LP_OPTIMAL);
	assert_float_equal(res.objective, 90, 1e-9);
	int want[] = {0, 1, 0, 1};
	for (int i = 0; i < 4; i++)
		assert_int_equal(rk_lp_value(lp, i), want[i]);

	/* With item 0 fixed in, weight 5 remains: item 3 alone (10+50 = 60) beats
	 * item 1 alone (10+40 = 50); both together weigh 7. */
	assert_int_equal(rk_lp_fix(lp, 0, 1, &err), RK_OK);
	assert_int_equal(rk_lp_solve(lp, &opts, &res, &err), RK_OK);
	assert_int_equal(res.status, RK_LP_OPTIMAL);
	assert_float_equal(res.objective, 60, 1e-9);
	assert_int_equal(rk_lp_value(lp, 0), 1);
	assert_int_equal(rk_lp_value(lp, 1), 0);
	assert_int_equal(rk_lp_value(lp, 3), 1);
	rk_lp_destroy(lp);
}

/*
 * The knapsack above, whose LP relaxation is fractional (items 3, 1, then half
 * of item 2), with a start: the optimum offered as start is taken as the
 * first incumbent, so even a one-node limit returns it; an infeasible start
 * is refused by the solver and the solve still finds the optimum; starts out
 * of bounds are errors that leave the problem unchanged.
 */
static void start_and_node_limit(void **state)
{
	(void)state;
	struct rk_lp *lp;
	struct rk_error err;
	assert_int_equal(rk_lp_create(&lp, 4, RK_LP_MAXIMISE, &err), RK_OK);
	const double w[] = {5, 4, 6, 3}, v[] = {10, 40, 30, 50};
	const int vars[] = {0, 1, 2, 3};
	for (int i = 0; i < 4; i++)
		assert_int_equal(rk_lp_set_obj(lp, i, v[i], &err), RK_OK);
	assert_int_equal(rk_lp_add_row(lp, 4, vars, w, RK_LP_NO_BOUND, 10, &err), RK_OK);
	const int best[] = {0, 1, 0, 1}, heavy[] = {1, 1, 1, 1}, bad[] = {0, 2, 0, 1};
	assert_int_equal(rk_lp_set_start(lp, bad, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "variable 1"));
	assert_int_equal(rk_lp_set_start(lp, best, &err), RK_OK);
	struct rk_lp_result res;
	struct rk_lp_opts opts = {.time_limit_ms = 10000, .mip_gap = 0, .max_nodes = 1};
	assert_int_equal(rk_lp_solve(lp, &opts, &res, &err), RK_OK);
	assert_true(res.status == RK_LP_OPTIMAL || res.status == RK_LP_FEASIBLE);
	assert_int_equal(res.start_used, 1);
	assert_float_equal(res.objective, 90, 1e-9);
	for (int i = 0; i < 4; i++)
		assert_int_equal(rk_lp_value(lp, i), best[i]);

	assert_int_equal(rk_lp_set_start(lp, heavy, &err), RK_OK); /* weight 18 > 10 */
	opts.max_nodes = 0;
	assert_int_equal(rk_lp_solve(lp, &opts, &res, &err), RK_OK);
	assert_int_equal(res.status, RK_LP_OPTIMAL);
	assert_int_equal(res.start_used, 0);
	assert_float_equal(res.objective, 90, 1e-9);
	assert_true(res.nodes >= 1);

	/* A fixed variable's start must equal its fixed value. */
	assert_int_equal(rk_lp_fix(lp, 0, 1, &err), RK_OK);
	assert_int_equal(rk_lp_set_start(lp, best, &err), RK_EINVAL);
	rk_lp_destroy(lp);
}

/*
 * Sia-shaped instance (docs/references.md §5.1, p < 0 form): 3 jobs, configs of 1, 2
 * and 4 GPUs, 4 GPUs in all, minimise sum x*(G^p - lambda). Costs chosen so the
 * optimum is job0:2, job1:1, job2:1 (cost -0.9-0.6-0.6 = -2.1) rather than
 * giving one job 4 GPUs (-1.2) or two jobs 2 GPUs (-1.8).
 */
static void multiple_choice_with_capacity(void **state)
{
	(void)state;
	struct rk_lp *lp;
	assert_int_equal(rk_lp_create(&lp, 9, RK_LP_MINIMISE, NULL), RK_OK);
	const double cost[9] = {-0.5, -0.9, -1.2, -0.6, -0.9, -1.0, -0.6, -0.8, -0.95};
	const double gpus[9] = {1, 2, 4, 1, 2, 4, 1, 2, 4};
	int all[9];
	for (int i = 0; i < 9; i++) {
		all[i] = i;
		assert_int_equal(rk_lp_set_obj(lp, i, cost[i], NULL), RK_OK);
	}
	const double ones[3] = {1, 1, 1};
	for (int j = 0; j < 3; j++) {
		int v[3] = {3 * j, 3 * j + 1, 3 * j + 2};
		assert_int_equal(rk_lp_add_row(lp, 3, v, ones, RK_LP_NO_BOUND, 1, NULL), RK_OK);
	}
	assert_int_equal(rk_lp_add_row(lp, 9, all, gpus, RK_LP_NO_BOUND, 4, NULL), RK_OK);
	struct rk_lp_result res;
	struct rk_lp_opts opts = {.time_limit_ms = 10000, .mip_gap = 0};
	assert_int_equal(rk_lp_solve(lp, &opts, &res, NULL), RK_OK);
	assert_int_equal(res.status, RK_LP_OPTIMAL);
	assert_float_equal(res.objective, -2.1, 1e-9);
	int want[9] = {0, 1, 0, 1, 0, 0, 1, 0, 0};
	for (int i = 0; i < 9; i++)
		assert_int_equal(rk_lp_value(lp, i), want[i]);
	rk_lp_destroy(lp);
}

static void infeasible_and_equalities(void **state)
{
	(void)state;
	struct rk_lp *lp;
	assert_int_equal(rk_lp_create(&lp, 2, RK_LP_MINIMISE, NULL), RK_OK);
	const int v[2] = {0, 1};
	const double c[2] = {1, 1};
	/* x0 + x1 == 1 and x0 + x1 >= 2 cannot both hold. */
	assert_int_equal(rk_lp_add_row(lp, 2, v, c, 1, 1, NULL), RK_OK);
	assert_int_equal(rk_lp_solve(lp, NULL, &(struct rk_lp_result){0}, NULL), RK_OK);
	assert_int_equal(rk_lp_add_row(lp, 2, v, c, 2, RK_LP_NO_BOUND, NULL), RK_OK);
	struct rk_lp_result res;
	assert_int_equal(rk_lp_solve(lp, NULL, &res, NULL), RK_OK);
	assert_int_equal(res.status, RK_LP_INFEASIBLE);
	assert_true(isnan(res.objective));
	assert_int_equal(rk_lp_value(lp, 0), 0);
	rk_lp_destroy(lp);
}

static void bad_inputs_are_reported(void **state)
{
	(void)state;
	struct rk_lp *lp = (struct rk_lp *)&lp;
	struct rk_error err;
	assert_int_equal(rk_lp_create(&lp, 0, RK_LP_MINIMISE, &err), RK_EINVAL);
	assert_null(lp);
	assert_non_null(strstr(err.msg, "at least one variable"));
	assert_int_equal(rk_lp_create(&lp, 3, RK_LP_MINIMISE, &err), RK_OK);
	assert_int_equal(rk_lp_set_obj(lp, 3, 1, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "variable 3 out of range 0..2"));
	assert_int_equal(rk_lp_set_obj(lp, 0, NAN, &err), RK_EINVAL);
	assert_int_equal(rk_lp_fix(lp, 1, 2, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "must be 0 or 1"));
	const int dup[2] = {1, 1};
	const double c[2] = {1, 2};
	assert_int_equal(rk_lp_add_row(lp, 2, dup, c, 0, 1, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "row 0: variable 1 appears twice"));
	const int v[2] = {0, 2};
	assert_int_equal(rk_lp_add_row(lp, 2, v, c, RK_LP_NO_BOUND, RK_LP_NO_BOUND, &err),
			 RK_EINVAL);
	assert_non_null(strstr(err.msg, "neither"));
	assert_int_equal(rk_lp_add_row(lp, 2, v, c, 3, 1, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "above upper bound"));
	const double inf_c[2] = {1, INFINITY};
	assert_int_equal(rk_lp_add_row(lp, 2, v, inf_c, 0, 1, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "entry 1"));
	const int out[1] = {7};
	assert_int_equal(rk_lp_add_row(lp, 1, out, c, 0, 1, &err), RK_EINVAL);
	assert_int_equal(rk_lp_add_row(lp, 0, v, c, 0, 1, &err), RK_EINVAL);
	/* None of the rejected rows was added: the problem is still unconstrained. */
	assert_int_equal(rk_lp_set_obj(lp, 0, -1, &err), RK_OK);
	assert_int_equal(rk_lp_set_obj(lp, 2, -1, &err), RK_OK);
	struct rk_lp_result res;
	assert_int_equal(rk_lp_solve(lp, NULL, &res, &err), RK_OK);
	assert_int_equal(res.status, RK_LP_OPTIMAL);
	assert_float_equal(res.objective, -2, 1e-9);
	assert_int_equal(rk_lp_value(lp, 99), 0);
	rk_lp_destroy(lp);
}

/* A larger random-looking but deterministic knapsack checked against brute force. */
static void matches_brute_force(void **state)
{
	(void)state;
	enum { N = 14 };
	double w[N], v[N];
	int vars[N];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < N; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		w[i] = 1 + (double)((x >> 33) % 20);
		v[i] = 1 + (double)((x >> 13) % 50);
		vars[i] = i;
	}
	const double cap = 60;
	double best = 0;
	for (unsigned m = 0; m < (1u << N); m++) {
		double sw = 0, sv = 0;
		for (int i = 0; i < N; i++)
			if (m & (1u << i)) {
				sw += w[i];
				sv += v[i];
			}
		if (sw <= cap && sv > best)
			best = sv;
	}
	struct rk_lp *lp;
	assert_int_equal(rk_lp_create(&lp, N, RK_LP_MAXIMISE, NULL), RK_OK);
	for (int i = 0; i < N; i++)
		assert_int_equal(rk_lp_set_obj(lp, i, v[i], NULL), RK_OK);
	assert_int_equal(rk_lp_add_row(lp, N, vars, w, RK_LP_NO_BOUND, cap, NULL), RK_OK);
	struct rk_lp_result res;
	struct rk_lp_opts opts = {.time_limit_ms = 0, .mip_gap = 0};
	assert_int_equal(rk_lp_solve(lp, &opts, &res, NULL), RK_OK);
	assert_int_equal(res.status, RK_LP_OPTIMAL);
	assert_float_equal(res.objective, best, 1e-9);
	double sw = 0;
	for (int i = 0; i < N; i++)
		sw += rk_lp_value(lp, i) * w[i];
	assert_true(sw <= cap);
	rk_lp_destroy(lp);
}

/*
 * General integers: maximise 3x + 2y with x in 0..4, y in 0..10 and
 * 2x + y <= 9. On that row the objective is 18 - x, so the optimum is x = 0,
 * y = 9 (18); with y capped at 5 it becomes x = 2, y = 5 (16).
 */
static void bounded_integers(void **state)
{
	(void)state;
	struct rk_lp *lp;
	struct rk_error err;
	assert_int_equal(rk_lp_create(&lp, 2, RK_LP_MAXIMISE, &err), RK_OK);
	assert_int_equal(rk_lp_set_upper(lp, 0, 4, &err), RK_OK);
	assert_int_equal(rk_lp_set_upper(lp, 1, 10, &err), RK_OK);
	assert_int_equal(rk_lp_set_obj(lp, 0, 3, &err), RK_OK);
	assert_int_equal(rk_lp_set_obj(lp, 1, 2, &err), RK_OK);
	const int v[2] = {0, 1};
	const double c[2] = {2, 1};
	assert_int_equal(rk_lp_add_row(lp, 2, v, c, RK_LP_NO_BOUND, 9, &err), RK_OK);
	struct rk_lp_result res;
	assert_int_equal(rk_lp_solve(lp, NULL, &res, &err), RK_OK);
	assert_int_equal(res.status, RK_LP_OPTIMAL);
	assert_float_equal(res.objective, 18, 1e-9);
	assert_int_equal(rk_lp_value(lp, 0), 0);
	assert_int_equal(rk_lp_value(lp, 1), 9);
	assert_int_equal(rk_lp_set_upper(lp, 1, 5, &err), RK_OK);
	assert_int_equal(rk_lp_solve(lp, NULL, &res, &err), RK_OK);
	assert_float_equal(res.objective, 16, 1e-9);
	assert_int_equal(rk_lp_value(lp, 0), 2);
	assert_int_equal(rk_lp_value(lp, 1), 5);
	/* Errors: a bound below 1; fixing a general integer; widening a fixed binary. */
	assert_int_equal(rk_lp_set_upper(lp, 0, 0, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "upper bound 0"));
	assert_int_equal(rk_lp_fix(lp, 0, 1, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "not binary"));
	rk_lp_destroy(lp);
	assert_int_equal(rk_lp_create(&lp, 1, RK_LP_MAXIMISE, &err), RK_OK);
	assert_int_equal(rk_lp_fix(lp, 0, 1, &err), RK_OK);
	assert_int_equal(rk_lp_set_upper(lp, 0, 3, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "fixed"));
	rk_lp_destroy(lp);
}

/* Continuous variables: max x + y, x + 2y <= 4, 3x + y <= 6, 0 <= x, y: the vertex (1.6, 1.2);
 * a mixed problem keeps its reals fractional; misuse is refused. */
static void continuous_variables(void **state)
{
	(void)state;
	struct rk_lp *lp;
	struct rk_error err;
	assert_int_equal(rk_lp_create(&lp, 2, RK_LP_MAXIMISE, &err), RK_OK);
	for (int v = 0; v < 2; v++) {
		assert_int_equal(rk_lp_set_real(lp, v, 0.0, RK_LP_NO_BOUND, &err), RK_OK);
		assert_int_equal(rk_lp_set_obj(lp, v, 1.0, &err), RK_OK);
	}
	const int vars[] = {0, 1};
	const double a[] = {1, 2}, b[] = {3, 1};
	assert_int_equal(rk_lp_add_row(lp, 2, vars, a, RK_LP_NO_BOUND, 4, &err), RK_OK);
	assert_int_equal(rk_lp_add_row(lp, 2, vars, b, RK_LP_NO_BOUND, 6, &err), RK_OK);
	struct rk_lp_result res;
	assert_int_equal(rk_lp_solve(lp, NULL, &res, &err), RK_OK);
	assert_int_equal(res.status, RK_LP_OPTIMAL);
	assert_true(fabs(rk_lp_value_real(lp, 0) - 1.6) < 1e-9);
	assert_true(fabs(rk_lp_value_real(lp, 1) - 1.2) < 1e-9);
	assert_true(fabs(res.objective - 2.8) < 1e-9);
	assert_int_equal(rk_lp_fix(lp, 0, 1, &err), RK_EINVAL);
	assert_int_equal(rk_lp_set_upper(lp, 0, 3, &err), RK_EINVAL);
	int start[2] = {0, 0};
	assert_int_equal(rk_lp_set_start(lp, start, &err), RK_EINVAL);
	assert_int_equal(rk_lp_set_real(lp, 0, 1.0, 0.5, &err), RK_EINVAL);
	rk_lp_destroy(lp);

	/* Mixed: binary y, real x <= 2.5 y, max x - y: y = 1, x = 2.5. */
	assert_int_equal(rk_lp_create(&lp, 2, RK_LP_MAXIMISE, &err), RK_OK);
	assert_int_equal(rk_lp_set_real(lp, 0, 0.0, 10.0, &err), RK_OK);
	assert_int_equal(rk_lp_set_obj(lp, 0, 1.0, &err), RK_OK);
	assert_int_equal(rk_lp_set_obj(lp, 1, -1.0, &err), RK_OK);
	const double c[] = {1, -2.5};
	assert_int_equal(rk_lp_add_row(lp, 2, vars, c, RK_LP_NO_BOUND, 0, &err), RK_OK);
	assert_int_equal(rk_lp_solve(lp, NULL, &res, &err), RK_OK);
	assert_int_equal(res.status, RK_LP_OPTIMAL);
	assert_int_equal(rk_lp_value(lp, 1), 1);
	assert_true(fabs(rk_lp_value_real(lp, 0) - 2.5) < 1e-9);
	rk_lp_destroy(lp);

	/* Infeasible pure LP: x >= 2 and x <= 1. */
	assert_int_equal(rk_lp_create(&lp, 1, RK_LP_MINIMISE, &err), RK_OK);
	assert_int_equal(rk_lp_set_real(lp, 0, 0.0, 1.0, &err), RK_OK);
	const int v0[] = {0};
	const double one[] = {1};
	assert_int_equal(rk_lp_add_row(lp, 1, v0, one, 2, RK_LP_NO_BOUND, &err), RK_OK);
	assert_int_equal(rk_lp_solve(lp, NULL, &res, &err), RK_OK);
	assert_int_equal(res.status, RK_LP_INFEASIBLE);
	rk_lp_destroy(lp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(knapsack_known_optimum),
		cmocka_unit_test(multiple_choice_with_capacity),
		cmocka_unit_test(start_and_node_limit),
		cmocka_unit_test(infeasible_and_equalities),
		cmocka_unit_test(bad_inputs_are_reported),
		cmocka_unit_test(matches_brute_force),
		cmocka_unit_test(bounded_integers),
		cmocka_unit_test(continuous_variables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
