/*
 * Exact MCKP by dynamic programming (algorithms.md §2.4 lines 6-9):
 *   V[i][g] = max_{k <= min(g, K_i)} V[i-1][g-k] + value(i, k),  V[0][g] = 0
 * V[0][g] = 0 for every g makes the capacity an upper bound ("at most F
 * spare GPUs"), not an exact fill. Two rolling rows of V; the argmax k of
 * every (i, g) is kept in a uint16 table for the backtrack, which walks the
 * items from last to first subtracting the chosen weights.
 */
#include "rubick/mckp.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Choices are GPU counts; uint16 keeps the backtrack table at 2 bytes a cell. */
#define MCKP_MAX_CHOICES 65535

static int better(double cand, double cur)
{
	/* Strict improvement with a relative tolerance, so rounding noise in the
	 * values never makes a job scale for nothing (no thrash). */
	return cand > cur + 1e-12 * (fabs(cur) > 1.0 ? fabs(cur) : 1.0);
}

int rk_mckp_solve(const struct rk_mckp_item *items, int n, int capacity, int *choice,
		  double *best, struct rk_error *err)
{
	if (n < 0 || capacity < 0 || (n > 0 && (!items || !choice)))
		return rk_error_set(err, RK_EINVAL, "mckp: bad arguments (n %d, capacity %d)",
				    n, capacity);
	for (int i = 0; i < n; i++) {
		if (items[i].n_choices < 1 || items[i].n_choices > MCKP_MAX_CHOICES ||
		    !items[i].value)
			return rk_error_set(err, RK_EINVAL,
					    "mckp: item %d: n_choices %d not in 1..%d or no values",
					    i, items[i].n_choices, MCKP_MAX_CHOICES);
		if (!isfinite(items[i].value[0]))
			return rk_error_set(err, RK_EINVAL,
					    "mckp: item %d: value of choice 0 must be finite", i);
		for (int k = 1; k < items[i].n_choices; k++)
			if (isnan(items[i].value[k]) || items[i].value[k] == INFINITY)
				return rk_error_set(err, RK_EINVAL,
						    "mckp: item %d: value of choice %d is %g", i, k,
						    items[i].value[k]);
	}
	if (n == 0) {
		if (best)
			*best = 0;
		return 0;
	}
	size_t row = (size_t)capacity + 1;
	double *prev = malloc(row * sizeof *prev);
	double *cur = malloc(row * sizeof *cur);
	uint16_t *arg = malloc((size_t)n * row * sizeof *arg);
	if (!prev || !cur || !arg) {
		free(prev);
		free(cur);
		free(arg);
		return rk_error_set(err, RK_ENOMEM, "mckp: out of memory (%d items x %d GPUs)", n,
				    capacity);
	}
	for (size_t g = 0; g < row; g++)
		prev[g] = 0.0;
	for (int i = 0; i < n; i++) {
		const double *v = items[i].value;
		int kmax = items[i].n_choices - 1;
		uint16_t *a = arg + (size_t)i * row;
		for (size_t g = 0; g < row; g++) {
			/* k = 0 always allowed: V[i-1][g] is finite by induction. */
			double bv = prev[g] + v[0];
			int bk = 0;
			int lim = (int)g < kmax ? (int)g : kmax;
			for (int k = 1; k <= lim; k++) {
				if (v[k] == -INFINITY)
					continue;
				double c = prev[g - (size_t)k] + v[k];
				if (better(c, bv)) {
					bv = c;
					bk = k;
				}
			}
			cur[g] = bv;
			a[g] = (uint16_t)bk;
		}
		double *t = prev;
		prev = cur;
		cur = t;
	}
	if (best)
		*best = prev[capacity];
	size_t g = (size_t)capacity;
	for (int i = n - 1; i >= 0; i--) {
		int k = arg[(size_t)i * row + g];
		choice[i] = k;
		g -= (size_t)k;
	}
	free(prev);
	free(cur);
	free(arg);
	return 0;
}
