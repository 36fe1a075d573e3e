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
 *
 * Bounds (bound_dp) shrink the table without changing its answer: items and
 * cells that cannot be part of any solution within `margin` of the optimum
 * are left out. The DP's answer is decided by comparisons between partial
 * solutions within a few SIA_DP_EPS of it (ties keep the state without the
 * item); leaving out others only lowers values that lost those comparisons,
 * and the answer's own cells and items stay (margin > (groups + 2) x
 * SIA_DP_EPS, above the DP's own slack of groups x SIA_DP_EPS).
 * tests/unit/policy/test_sia_dp.c checks the answers against the unbounded
 * table on random instances.
 */
#include "policy/sia/sia_internal.h"

#include "rubick/error.h"

#include <math.h>
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

static int usable(const int *w, const double *b, int k)
{
	return b[k] > 0 && w[k] >= 1;
}

/* The item of class c with the largest b - lam*w > 0 (ties to fewer GPUs), or -1. */
static int best_at(const struct sia_dp_class *c, const int *w, const double *b, double lam)
{
	int best = -1;
	double r_best = 0;
	for (int k = c->first; k < c->first + c->n; k++) {
		if (!usable(w, b, k))
			continue;
		double r = b[k] - lam * w[k];
		if (r > r_best || (r == r_best && r > 0 && best >= 0 && w[k] < w[best])) {
			r_best = r;
			best = k;
		}
	}
	return best;
}

/*
 * Lagrangian relaxation of the GPU row (Pisinger, "A minimal algorithm for
 * the multiple-choice knapsack problem", EJOR 83, 1995, §2): for any price
 * lam >= 0 of a GPU,
 *   U(lam) = lam * C + sum_c copies_c * m_c(lam),  m_c(lam) = max(0, max_k b_k - lam w_k)
 * bounds every solution; one in which a member of class c takes item k by
 * U(lam) - (m_c(lam) - (b_k - lam w_k)), and one whose first groups reach
 * cell (i, g) with value f by f + lam (C - g) + (sum of m over the groups
 * after i).
 */
struct lagrange {
	double u_bound; /* U(lam) */
	double value;   /* benefit of the per-class best items */
	int64_t gpus;   /* their GPUs */
};

static struct lagrange lagrange_eval(const struct sia_dp_class *cls, int n_cls, const int *copies,
				     const int *w, const double *b, int capacity, double lam)
{
	struct lagrange l = {.u_bound = lam * capacity};
	for (int c = 0; c < n_cls; c++) {
		int k = best_at(&cls[c], w, b, lam);
		if (k < 0)
			continue;
		l.u_bound += copies[c] * (b[k] - lam * w[k]);
		l.value += copies[c] * b[k];
		l.gpus += (int64_t)copies[c] * w[k];
	}
	return l;
}

/*
 * A feasible solution better than the price's best items (which fit at
 * `lam`): one member at a time moves to the item with the most benefit per
 * extra GPU within the GPUs left, while one gains. O(groups x items); on
 * philly.csv's rounds it ends within ~0.002 of the optimum. Returns its
 * value, or `value` when out of memory.
 */
static double greedy_fill(const struct sia_dp_class *cls, int n_cls, const int *copies,
			  const int *w, const double *b, int capacity, double lam, double value)
{
	int64_t left = capacity;
	int *moved = calloc((size_t)n_cls + 1, sizeof(*moved));
	int *base = malloc(((size_t)n_cls + 1) * sizeof(*base));
	if (!moved || !base) {
		free(moved);
		free(base);
		return value;
	}
	for (int c = 0; c < n_cls; c++) {
		base[c] = best_at(&cls[c], w, b, lam);
		if (base[c] >= 0)
			left -= (int64_t)copies[c] * w[base[c]];
	}
	for (;;) {
		double ratio = 0, gain = 0;
		int bc = -1, bk = -1;
		for (int c = 0; c < n_cls; c++) {
			if (moved[c] >= copies[c])
				continue;
			int bw = base[c] >= 0 ? w[base[c]] : 0;
			double bv = base[c] >= 0 ? b[base[c]] : 0;
			for (int k = cls[c].first; k < cls[c].first + cls[c].n; k++) {
				if (!usable(w, b, k) || w[k] - bw > left || !(b[k] > bv))
					continue;
				double q = (b[k] - bv) / (w[k] > bw ? w[k] - bw : 1e-9);
				if (q > ratio) {
					ratio = q;
					gain = b[k] - bv;
					bc = c;
					bk = k;
				}
			}
		}
		if (bc < 0)
			break;
		moved[bc]++;
		left -= w[bk] - (base[bc] >= 0 ? w[base[bc]] : 0);
		value += gain;
	}
	free(moved);
	free(base);
	return value;
}

/* One edge of a class's upper hull: `gpus` more GPUs for `slope` benefit each. */
struct seg {
	double slope;
	int64_t gpus; /* x the class's copies */
};

static int cmp_seg(const void *pa, const void *pb)
{
	const struct seg *a = pa, *b = pb;
	return (a->slope < b->slope) - (a->slope > b->slope); /* steepest first */
}

/*
 * The LP dual of the GPU row: the price at which the per-class best items
 * stop fitting. The LP relaxation takes the edges of every class's upper
 * concave hull of (GPUs, benefit) from (0, 0), steepest first, until the
 * GPUs run out (Sinha and Zoltners, "The multiple-choice knapsack problem",
 * Oper. Res. 27, 1979); the edge that does not fit whole sets the price
 * (0 when all fit). O(items log items). OUT: *lam.
 */
static int lp_price(const struct sia_dp_class *cls, int n_cls, const int *copies, const int *w,
		    const double *b, int capacity, double *lam)
{
	int n_items = 0;
	for (int c = 0; c < n_cls; c++)
		n_items += cls[c].n;
	struct seg *sg = malloc(((size_t)n_items + 1) * sizeof(*sg));
	int *hull = malloc(((size_t)n_items + 1) * sizeof(*hull));
	if (!sg || !hull) {
		free(sg);
		free(hull);
		return RK_ENOMEM;
	}
	int n_sg = 0;
	for (int c = 0; c < n_cls; c++) {
		if (copies[c] < 1)
			continue;
		/* usable items by GPUs (then benefit, descending): insertion sort, rows are short
		 */
		int n = 0;
		for (int k = cls[c].first; k < cls[c].first + cls[c].n; k++) {
			if (!usable(w, b, k))
				continue;
			int i = n++;
			while (i > 0 && (w[hull[i - 1]] > w[k] ||
					 (w[hull[i - 1]] == w[k] && b[hull[i - 1]] < b[k]))) {
				hull[i] = hull[i - 1];
				i--;
			}
			hull[i] = k;
		}
		/* upper hull from (0, 0): keep points that rise, drop those under a chord */
		int h = 0;
		for (int i = 0; i < n; i++) {
			int k = hull[i];
			double pb = h > 0 ? b[hull[h - 1]] : 0;
			if (!(b[k] > pb) || (h > 0 && w[k] == w[hull[h - 1]]))
				continue;
			while (h > 0) {
				int q = hull[h - 1];
				double qw = w[q], qb = b[q];
				double ow = h > 1 ? w[hull[h - 2]] : 0,
				       ob = h > 1 ? b[hull[h - 2]] : 0;
				/* q under or on the chord from o to k: (qb-ob)(kw-ow) <=
				 * (kb-ob)(qw-ow) */
				if ((qb - ob) * (w[k] - ow) <= (b[k] - ob) * (qw - ow))
					h--;
				else
					break;
			}
			hull[h++] = k;
		}
		for (int i = 0; i < h; i++) {
			double ow = i > 0 ? w[hull[i - 1]] : 0, ob = i > 0 ? b[hull[i - 1]] : 0;
			sg[n_sg++] = (struct seg){(b[hull[i]] - ob) / (w[hull[i]] - ow),
						  (int64_t)copies[c] * (int64_t)(w[hull[i]] - ow)};
		}
	}
	qsort(sg, (size_t)n_sg, sizeof(*sg), cmp_seg);
	int64_t used = 0;
	*lam = 0;
	for (int i = 0; i < n_sg; i++) {
		used += sg[i].gpus;
		if (used > capacity) {
			*lam = sg[i].slope;
			break;
		}
	}
	free(sg);
	free(hull);
	return RK_OK;
}

/* What bound_dp hands the DP. */
struct dp_bound {
	double lam;    /* the price of a GPU */
	double low;    /* value of a feasible solution */
	double margin; /* what a kept item or cell may fall short of `low` by */
	double *m;     /* per class: m_c(lam) over the items left */
};

/*
 * The price that minimises U (the LP dual, lp_price); a feasible value
 * `low` (greedy_fill from the per-class best items at that price, which
 * fit); then every item whose bound is below low - margin is dropped
 * (bb[k] = 0; else bb[k] = b[k]). Typically most of a job's configurations
 * go. Fills o->m (n_cls entries, caller's storage). RK_ENOMEM: no bounds.
 */
static int bound_dp(const struct sia_dp_class *cls, int n_cls, const int *copies, size_t groups,
		    const int *w, const double *b, int capacity, double *bb, struct dp_bound *o)
{
	for (int c = 0; c < n_cls; c++)
		for (int k = cls[c].first; k < cls[c].first + cls[c].n; k++)
			bb[k] = b[k];
	double lam;
	int rc = lp_price(cls, n_cls, copies, w, b, capacity, &lam);
	if (rc)
		return rc;
	/*
	 * At the LP price the per-class best items fit (ties go to fewer GPUs);
	 * should rounding of the hull's slopes say otherwise, a slightly higher
	 * price, and at worst the price at which nothing is worth a GPU.
	 */
	struct lagrange l = lagrange_eval(cls, n_cls, copies, w, b, capacity, lam);
	double u_min = l.u_bound, hi = lam;
	for (int i = 0; l.gpus > capacity && i < 3; i++) {
		hi = hi * (1 + 1e-12) + 1e-300;
		l = lagrange_eval(cls, n_cls, copies, w, b, capacity, hi);
	}
	if (l.gpus > capacity) {
		hi = 0;
		for (int c = 0; c < n_cls; c++)
			for (int k = cls[c].first; k < cls[c].first + cls[c].n; k++)
				if (usable(w, b, k) && 2 * b[k] / w[k] > hi)
					hi = 2 * b[k] / w[k];
		l = lagrange_eval(cls, n_cls, copies, w, b, capacity, hi);
	}
	double low = l.value;
	double fill = greedy_fill(cls, n_cls, copies, w, b, capacity, hi, low);
	o->lam = lam;
	o->low = fill > low ? fill : low;
	o->margin = 4.0 * ((double)groups + 2) * SIA_DP_EPS + 1e-9 * (1 + fabs(u_min));
	for (int c = 0; c < n_cls; c++) {
		int kb = best_at(&cls[c], w, b, lam);
		double m = kb >= 0 ? b[kb] - lam * w[kb] : 0, m_left = 0;
		for (int k = cls[c].first; k < cls[c].first + cls[c].n; k++) {
			if (!usable(w, b, k))
				continue;
			double r = b[k] - lam * w[k];
			if (u_min - (m - r) < o->low - o->margin)
				bb[k] = 0;
			else if (r > m_left)
				m_left = r;
		}
		o->m[c] = m_left;
	}
	return RK_OK;
}

/* Smallest and largest GPUs of a class's usable variables (0, 0: none). */
static void class_span(const struct sia_dp_class *c, const int *w, const double *b, int *wmin,
		       int *wmax)
{
	*wmin = *wmax = 0;
	for (int k = c->first; k < c->first + c->n; k++)
		if (usable(w, b, k)) {
			if (*wmin == 0 || w[k] < *wmin)
				*wmin = w[k];
			if (w[k] > *wmax)
				*wmax = w[k];
		}
}

/* The DP's working storage. */
struct dp_work {
	double *prev, *cur, *bb, *m, *rest;
	uint16_t *arg;
	int *owner, *top, *copies, *lo, *hi;
};

static void work_fini(struct dp_work *t)
{
	free(t->prev);
	free(t->cur);
	free(t->bb);
	free(t->m);
	free(t->rest);
	free(t->arg);
	free(t->owner);
	free(t->top);
	free(t->copies);
	free(t->lo);
	free(t->hi);
}

/*
 * The table, group by group, over the live cells [lo, hi] of each row
 * (cells outside are -inf: no solution through them comes within the
 * margin). Only g up to the sum of the groups' largest weights so far (top)
 * exists: above it f is flat, so the row is extended by its last value when
 * the sum grows. Returns the number of groups filled.
 */
static size_t fill_table(const struct sia_dp_class *cls, int n_cls, const int *w, const double *b,
			 int capacity, size_t row, const struct dp_bound *bd, struct dp_work *t)
{
	size_t gi = 0, s = 0, lo = 0, hi = 0;
	double *prev = t->prev, *cur = t->cur;
	prev[0] = 0;
	for (int c = 0; c < n_cls; c++) {
		int wmin, wmax;
		class_span(&cls[c], w, b, &wmin, &wmax);
		if (wmin == 0)
			continue; /* every item dropped: these groups would change nothing */
		for (int m = 0; m < t->copies[c]; m++, gi++) {
			size_t ns = s + (size_t)wmax < (size_t)capacity ? s + (size_t)wmax
									: (size_t)capacity;
			if (hi == s) { /* the flat part is live only if its first cell is */
				for (size_t g = s + 1; g <= ns; g++)
					prev[g] = prev[s];
				hi = ns;
			}
			s = ns;
			size_t nhi = hi + (size_t)wmax < s ? hi + (size_t)wmax : s;
			uint16_t *a = t->arg + gi * row;
			t->owner[gi] = c;
			t->top[gi] = (int)s;
			memcpy(cur + lo, prev + lo, (hi - lo + 1) * sizeof(*cur));
			for (size_t g = hi + 1; g <= nhi; g++)
				cur[g] = -INFINITY;
			memset(a + lo, 0, (nhi - lo + 1) * sizeof(*a));
			for (int k = 0; k < cls[c].n; k++) {
				int v = cls[c].first + k;
				size_t wv = (size_t)w[v];
				if (!usable(w, b, v) || lo + wv > nhi)
					continue;
				size_t end = hi + wv < nhi ? hi + wv : nhi;
				relax(cur + lo + wv, a + lo + wv, prev + lo, end - (lo + wv) + 1,
				      b[v], (uint16_t)(k + 1));
			}
			/* Trim the dead ends: f + lam (C - g) + what the later groups can add. */
			double after = t->rest[c] + (double)(t->copies[c] - m - 1) * bd->m[c];
			double need = bd->low - bd->margin - after - bd->lam * capacity;
			while (lo < nhi && !(cur[lo] - bd->lam * (double)lo >= need))
				lo++;
			while (nhi > lo && !(cur[nhi] - bd->lam * (double)nhi >= need))
				nhi--;
			hi = nhi;
			t->lo[gi] = (int)lo;
			t->hi[gi] = (int)hi;
			double *tmp = prev;
			prev = cur;
			cur = tmp;
		}
	}
	t->prev = prev;
	t->cur = cur;
	return gi;
}

int sia_dp_solve_bounded(const struct sia_dp_class *cls, int n_cls, const int *w, const double *b,
			 int capacity, int bounds, int *count)
{
	if (capacity < 0)
		return RK_ERANGE;
	size_t groups = 0, n_items = 0;
	for (int c = 0; c < n_cls; c++) {
		if (cls[c].n > UINT16_MAX - 1)
			return RK_ERANGE; /* choices are kept as uint16 */
		if ((size_t)cls[c].first + (size_t)cls[c].n > n_items)
			n_items = (size_t)cls[c].first + (size_t)cls[c].n;
	}
	struct dp_work t = {
	    .copies = malloc(((size_t)n_cls + 1) * sizeof(*t.copies)),
	    .bb = malloc((n_items + 1) * sizeof(*t.bb)),
	    .m = malloc(((size_t)n_cls + 1) * sizeof(*t.m)),
	    .rest = malloc(((size_t)n_cls + 1) * sizeof(*t.rest)),
	};
	if (!t.copies || !t.bb || !t.m || !t.rest) {
		work_fini(&t);
		return RK_ENOMEM;
	}
	for (int c = 0; c < n_cls; c++) {
		/* Members beyond what the capacity can hold at the class's smallest
		 * configuration never all get one: no need for more groups. */
		int wmin, wmax;
		class_span(&cls[c], w, b, &wmin, &wmax);
		t.copies[c] =
		    wmin > 0 ? (cls[c].mult < capacity / wmin ? cls[c].mult : capacity / wmin) : 0;
		groups += (size_t)t.copies[c];
	}
	size_t row = (size_t)capacity + 1;
	if (groups > 0 && row > SIA_DP_MAX_CELLS / groups) {
		work_fini(&t);
		return RK_ERANGE;
	}
	struct dp_bound bd = {.low = -INFINITY, .m = t.m};
	if (bounds && bound_dp(cls, n_cls, t.copies, groups, w, b, capacity, t.bb, &bd) == RK_OK) {
		/* items and cells bounded */
	} else {
		bd.low = -INFINITY;
		bd.lam = 0;
		for (size_t k = 0; k < n_items; k++)
			t.bb[k] = b[k];
		for (int c = 0; c < n_cls; c++)
			t.m[c] = 0;
	}
	/* rest[c]: what the classes after c can add at the price (copies stay
	 * those of every item, so groups are the same with or without bounds). */
	double acc = 0;
	for (int c = n_cls - 1; c >= 0; c--) {
		t.rest[c] = acc;
		acc += t.copies[c] * bd.m[c];
	}
	size_t ng = groups > 0 ? groups : 1;
	t.prev = malloc(row * sizeof(*t.prev));
	t.cur = malloc(row * sizeof(*t.cur));
	t.arg = malloc(ng * row * sizeof(*t.arg));
	t.owner = malloc(ng * sizeof(*t.owner));
	t.top = malloc(ng * sizeof(*t.top));
	t.lo = malloc(ng * sizeof(*t.lo));
	t.hi = malloc(ng * sizeof(*t.hi));
	if (!t.prev || !t.cur || !t.arg || !t.owner || !t.top || !t.lo || !t.hi) {
		work_fini(&t);
		return RK_ENOMEM;
	}
	for (size_t k = 0; k < n_items; k++)
		count[k] = 0;
	size_t gi = fill_table(cls, n_cls, w, t.bb, capacity, row, &bd, &t);
	size_t g = gi > 0 ? (size_t)t.top[gi - 1] : 0;
	while (gi-- > 0) {
		if (g > (size_t)t.top[gi])
			g = (size_t)t.top[gi]; /* flat above the group's top */
		if (g < (size_t)t.lo[gi] || g > (size_t)t.hi[gi]) {
			/* Not expected (the answer's cells are live, see the file
			 * comment); should rounding ever prove it wrong, solve again
			 * without bounds rather than answer from a dead cell. */
			work_fini(&t);
			return bounds ? sia_dp_solve_bounded(cls, n_cls, w, b, capacity, 0, count)
				      : RK_ERANGE;
		}
		int k = t.arg[gi * row + g];
		if (k > 0) {
			int v = cls[t.owner[gi]].first + k - 1;
			count[v]++;
			g -= (size_t)w[v];
		}
	}
	work_fini(&t);
	return RK_OK;
}

int sia_dp_solve(const struct sia_dp_class *cls, int n_cls, const int *w, const double *b,
		 int capacity, int *count)
{
	return sia_dp_solve_bounded(cls, n_cls, w, b, capacity, 1, count);
}
