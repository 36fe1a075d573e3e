/*
 * Exact multiple-choice knapsack (MCKP) by dynamic programming, the phase-2
 * allocation of Aryl/Lyra (docs/references.md §2.4): each item
 * is an elastic job, its choices are "k extra workers" for k = 0..n_choices-1
 * with weight k and a value (the JCT reduction of adding k workers, restart
 * cost already subtracted); exactly one choice per item, total weight at most
 * the capacity (spare GPUs), total value maximal.
 */
#ifndef RUBICK_MCKP_H
#define RUBICK_MCKP_H

#include "rubick/error.h"

struct rk_mckp_item {
	int n_choices;       /* >= 1; choice k weighs k GPUs */
	const double *value; /* borrowed, n_choices entries; value[k] of taking k; -INFINITY
			      * marks a choice that is not allowed (value[0] must be finite) */
};

/*
 * Solve: choose k_i in 0..n_choices_i-1 per item with sum k_i <= capacity
 * maximising sum value_i[k_i]. Ties keep the smaller k (no scaling for
 * nothing): a choice replaces a lighter one only when strictly better by more
 * than 1e-12 relative. O(capacity x allowed (finite) choices) time, O(n x capacity)
 * bytes for the backtracking table. OUT: choice[n] (caller's storage), *best
 * (may be NULL). RK_EINVAL for bad arguments (naming the item), RK_ENOMEM.
 */
int rk_mckp_solve(const struct rk_mckp_item *items, int n, int capacity, int *choice,
		  double *best, struct rk_error *err);

#endif
