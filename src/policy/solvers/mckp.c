/*
 * Exact MCKP by dynamic programming (docs/references.md §2.4 lines 6-9):
 *   V[i][g] = max_{k <= min(g, K_i)} V[i-1][g-k] + value(i, k),  V[0][g] = 0
 * V[0][g] = 0 for every g makes the capacity an upper bound ("at most F
 * spare GPUs"), not an exact fill. Two rolling rows of V; the argmax k of
 * every (i, g) is kept in a uint16 table for the backtrack, which walks the
 * items from last to first subtracting the chosen weights.
 *
 * Speed: Aryl's items allow only the GPU counts that divide the
 * job's global batch (rk_aryl_plan_for), so most of an item's F + 1 choices
 * are -INFINITY. Each item's allowed k >= 1 are gathered once, in increasing
 * k, and the inner loop visits only those: the same candidates compared in
 * the same order as a scan of every k that skips the -INFINITY ones, so the
 * table and the choices are bit for bit those of the full scan, at
 * O(capacity x allowed choices) instead of O(capacity x n_choices). The
 * tolerance bound of better() is recomputed only when the incumbent changes.
 */
#include "rubick/mckp.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Choices are GPU counts; uint16 keeps the backtrack table at 2 bytes a cell. */
#define MCKP_MAX_CHOICES 65535

/* A candidate replaces incumbent `cur` only when strictly above this bound: a
 * relative tolerance, so rounding noise in the values never makes a job scale
 * for nothing (no thrash). */
static double better_bound(double cur)
{
	return cur + 1e-12 * (fabs(cur) > 1.0 ? fabs(cur) : 1.0);
}

int rk_mckp_solve(const struct rk_mckp_item *items, int n, int capacity, int *choice, double *best,
                  struct rk_error *err)
{
	if (n < 0 || capacity < 0 || (n > 0 && (!items || !choice)))
		return rk_error_set(err, RK_EINVAL, "mckp: bad arguments (n %d, capacity %d)", n,
		                    capacity);
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
	int kcap = 1; /* the most choices k >= 1 any item can use */
	for (int i = 0; i < n; i++)
		if (items[i].n_choices - 1 > kcap)
			kcap = items[i].n_choices - 1;
	if (kcap > capacity)
		kcap = capacity > 0 ? capacity : 1;
	double *prev = malloc(row * sizeof *prev);
	double *cur = malloc(row * sizeof *cur);
	uint16_t *arg = malloc((size_t)n * row * sizeof *arg);
	int *ks = malloc((size_t)kcap * sizeof *ks);    /* allowed k >= 1 of one item */
	double *vs = malloc((size_t)kcap * sizeof *vs); /* their values */
	if (!prev || !cur || !arg || !ks || !vs) {
		free(prev);
		free(cur);
		free(arg);
		free(ks);
		free(vs);
		return rk_error_set(err, RK_ENOMEM, "mckp: out of memory (%d items x %d GPUs)", n,
		                    capacity);
	}
	for (size_t g = 0; g < row; g++)
		prev[g] = 0.0;
	for (int i = 0; i < n; i++) {
		const double *v = items[i].value;
		int kmax = items[i].n_choices - 1 < capacity ? items[i].n_choices - 1 : capacity;
		int nk = 0;
		for (int k = 1; k <= kmax; k++)
			if (v[k] != -INFINITY) {
				ks[nk] = k;
				vs[nk++] = v[k];
			}
		uint16_t *a = arg + (size_t)i * row;
		for (size_t g = 0; g < row; g++) {
			/* k = 0 always allowed: V[i-1][g] is finite by induction. */
			double bv = prev[g] + v[0];
			double bound = better_bound(bv);
			int bk = 0;
			for (int t = 0; t < nk && (size_t)ks[t] <= g; t++) {
				double c = prev[g - (size_t)ks[t]] + vs[t];
				if (c > bound) {
					bv = c;
					bk = ks[t];
					bound = better_bound(bv);
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
	free(ks);
	free(vs);
	return 0;
}
