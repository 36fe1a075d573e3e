/*
 * Sia baseline, part 3 (see sia.c): the exact solver of a round's ILP when
 * the cluster has one GPU type. The ILP is then a multiple-choice knapsack
 * with one capacity row: every job takes at most one configuration, the
 * GPUs of the chosen ones fit the type's total. Dynamic programming over GPU
 * counts solves it exactly in O(jobs x configurations x GPUs), with none of
 * branch and bound's variance (GLPK took up to 9 s on rounds of 90 jobs on
 * 256x8 GPUs, proving a 1e-4 gap among near-equal solutions).
 *
 *   f_i(g) = max( f_{i-1}(g), max_k f_{i-1}(g - w_k) + b_k ),  f_0(g) = 0
 *
 * f_0 = 0 for every g makes the capacity an upper bound. Two rows of f; the
 * choice of every (job, g) is kept for the backtrack.
 */
#include "policy/sia_internal.h"

#include "rubick/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Largest choice table (entries of 2 bytes) the solver builds; above it the
 * caller keeps GLPK. 2^25 cells = 64 MiB, e.g. 4,096 jobs on 8,192 GPUs. */
#define SIA_DP_MAX_CELLS ((size_t)1 << 25)

/*
 * Benefits are sums of at most a few thousand terms of order 1: an absolute
 * margin absorbs rounding, and ties keep the state without the item (fewer
 * GPUs), so equal solutions resolve the same way every time.
 */
#define SIA_DP_EPS 1e-9

/*
 * One item of weight w, benefit bv, on cells w..s: cur[i] = max(cur[i],
 * prev[i] + bv) for i < n, where cur and a point w cells in. Branch-free on
 * distinct arrays (restrict), the DP's whole cost.
 */
static void relax(double *restrict cur, uint16_t *restrict a, const double *restrict prev, size_t n,
		  double bv, uint16_t k)
{
	for (size_t i = 0; i < n; i++) {
		double cand = prev[i] + bv, c = cur[i];
		int up = cand > c + SIA_DP_EPS;
		cur[i] = up ? cand : c;
		a[i] = up ? k : a[i];
	}
}

/* Smallest and largest GPUs of a class's usable variables (0, 0: none). */
static void class_span(const struct sia_dp_class *c, const int *w, const double *b, int *wmin,
		       int *wmax)
{
	*wmin = *wmax = 0;
	for (int k = c->first; k < c->first + c->n; k++)
		if (b[k] > 0 && w[k] >= 1) {
			if (*wmin == 0 || w[k] < *wmin)
				*wmin = w[k];
			if (w[k] > *wmax)
				*wmax = w[k];
		}
}

int sia_dp_solve(const struct sia_dp_class *cls, int n_cls, const int *w, const double *b,
		 int capacity, int *count)
{
	if (capacity < 0)
		return RK_ERANGE;
	size_t groups = 0;
	for (int c = 0; c < n_cls; c++) {
		if (cls[c].n > UINT16_MAX - 1)
			return RK_ERANGE; /* choices are kept as uint16 */
		for (int k = cls[c].first; k < cls[c].first + cls[c].n; k++)
			count[k] = 0;
		/* Members beyond what the capacity can hold at the class's smallest
		 * configuration never all get one: no need for more groups. */
		int wmin, wmax;
		class_span(&cls[c], w, b, &wmin, &wmax);
		if (wmin > 0)
			groups += (size_t)(cls[c].mult < capacity / wmin ? cls[c].mult : capacity / wmin);
	}
	size_t row = (size_t)capacity + 1;
	if (groups > 0 && row > SIA_DP_MAX_CELLS / groups)
		return RK_ERANGE;
	size_t ng = groups > 0 ? groups : 1;
	double *prev = malloc(row * sizeof(*prev)), *cur = malloc(row * sizeof(*cur));
	uint16_t *arg = malloc(ng * row * sizeof(*arg));
	int *owner = malloc(ng * sizeof(*owner)), *top = malloc(ng * sizeof(*top));
	if (!prev || !cur || !arg || !owner || !top) {
		free(prev);
		free(cur);
		free(arg);
		free(owner);
		free(top);
		return RK_ENOMEM;
	}
	/*
	 * Two rows, items outer: cur = prev, then each item improves cur from
	 * prev. Only g up to the sum of the groups' largest weights so far (top)
	 * is computed: above it f is flat, so the row is extended by its last
	 * value when the sum grows.
	 */
	size_t gi = 0, s = 0;
	prev[0] = 0;
	for (int c = 0; c < n_cls; c++) {
		int wmin, wmax;
		class_span(&cls[c], w, b, &wmin, &wmax);
		if (wmin == 0)
			continue;
		int copies = cls[c].mult < capacity / wmin ? cls[c].mult : capacity / wmin;
		for (int m = 0; m < copies; m++, gi++) {
			size_t ns = s + (size_t)wmax < (size_t)capacity ? s + (size_t)wmax : (size_t)capacity;
			for (size_t g = s + 1; g <= ns; g++)
				prev[g] = prev[s];
			s = ns;
			uint16_t *a = arg + gi * row;
			owner[gi] = c;
			top[gi] = (int)s;
			memcpy(cur, prev, (s + 1) * sizeof(*cur));
			memset(a, 0, (s + 1) * sizeof(*a));
			for (int k = 0; k < cls[c].n; k++) {
				int v = cls[c].first + k;
				if (b[v] <= 0 || w[v] < 1 || (size_t)w[v] > s)
					continue;
				relax(cur + w[v], a + w[v], prev, s + 1 - (size_t)w[v], b[v],
				      (uint16_t)(k + 1));
			}
			double *t = prev;
			prev = cur;
			cur = t;
		}
	}
	size_t g = s;
	while (gi-- > 0) {
		if (g > (size_t)top[gi])
			g = (size_t)top[gi]; /* flat above the group's top */
		int k = arg[gi * row + g];
		if (k > 0) {
			int v = cls[owner[gi]].first + k - 1;
			count[v]++;
			g -= (size_t)w[v];
		}
	}
	free(prev);
	free(cur);
	free(arg);
	free(owner);
	free(top);
	return RK_OK;
}
