/*
 * The figure as data (include/rubick/figure.h): series, bars, reference
 * lines, and the axis arithmetic that needs no drawing - data ranges, tidy
 * ticks (1/2/5 steps, log decades) and number labels. Everything here is a
 * pure function of the figure, so identical figures lay out identically.
 * Labels are printed with snprintf in the C locale the library runs in.
 */
#include "sim/report/figure_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s, int *oom)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*oom = 1;
	return d;
}

struct rk_figure *rk_figure_new(const char *title, const char *xlabel, const char *ylabel)
{
	struct rk_figure *fig = calloc(1, sizeof(*fig));
	if (!fig)
		return NULL;
	int oom = 0;
	fig->title = dup_or_null(title, &oom);
	fig->xlabel = dup_or_null(xlabel ? xlabel : "", &oom);
	fig->ylabel = dup_or_null(ylabel ? ylabel : "", &oom);
	if (oom) {
		rk_figure_free(fig);
		return NULL;
	}
	return fig;
}

static void series_fini(struct fig_series *s)
{
	free(s->name);
	free(s->x);
	free(s->y);
	free(s->lo);
	free(s->hi);
}

void rk_figure_free(struct rk_figure *fig)
{
	if (!fig)
		return;
	for (int i = 0; i < fig->n_series; i++)
		series_fini(&fig->series[i]);
	free(fig->series);
	for (int i = 0; i < fig->n_categories; i++)
		free(fig->categories[i]);
	free(fig->categories);
	for (int i = 0; i < fig->n_hlines; i++)
		free(fig->hlines[i].label);
	free(fig->hlines);
	free(fig->title);
	free(fig->xlabel);
	free(fig->ylabel);
	free(fig);
}

void rk_figure_xscale(struct rk_figure *fig, enum rk_figure_scale s)
{
	if (fig)
		fig->xscale = s == RK_FIGURE_LOG ? RK_FIGURE_LOG : RK_FIGURE_LINEAR;
}

void rk_figure_yscale(struct rk_figure *fig, enum rk_figure_scale s)
{
	if (fig)
		fig->yscale = s == RK_FIGURE_LOG ? RK_FIGURE_LOG : RK_FIGURE_LINEAR;
}

void rk_figure_yrange(struct rk_figure *fig, double lo, double hi)
{
	if (!fig || !isfinite(lo) || !isfinite(hi) || !(hi > lo))
		return;
	fig->yfixed = 1;
	fig->ylo = lo;
	fig->yhi = hi;
}

static double *copy_values(const double *v, int n, int *oom)
{
	if (!v)
		return NULL;
	double *c = malloc((size_t)n * sizeof(*c));
	if (!c) {
		*oom = 1;
		return NULL;
	}
	memcpy(c, v, (size_t)n * sizeof(*c));
	return c;
}

/* Append a series built aside (nothing changes on failure). */
static int add_series(struct rk_figure *fig, const char *name, enum rk_figure_mark mark,
                      const double *x, const double *y, const double *lo, const double *hi, int n)
{
	if (fig->n_series == fig->cap_series) {
		int cap = fig->cap_series ? fig->cap_series * 2 : 8;
		struct fig_series *g = realloc(fig->series, (size_t)cap * sizeof(*g));
		if (!g)
			return RK_ENOMEM;
		fig->series = g;
		fig->cap_series = cap;
	}
	int oom = 0;
	struct fig_series s = {.name = dup_or_null(name ? name : "", &oom),
	                       .mark = mark,
	                       .x = copy_values(x, n, &oom),
	                       .y = copy_values(y, n, &oom),
	                       .lo = copy_values(lo, n, &oom),
	                       .hi = copy_values(hi, n, &oom),
	                       .n = n};
	if (oom) {
		series_fini(&s);
		return RK_ENOMEM;
	}
	fig->series[fig->n_series++] = s;
	return 0;
}

int rk_figure_line(struct rk_figure *fig, const char *name, enum rk_figure_mark mark,
                   const double *x, const double *y, const double *lo, const double *hi, int n)
{
	if (!fig || fig->bars || n < 1 || !x || !y || (!lo) != (!hi) ||
	    (mark != RK_FIGURE_LINE && mark != RK_FIGURE_STEP))
		return RK_EINVAL;
	return add_series(fig, name, mark, x, y, lo, hi, n);
}

int rk_figure_bars(struct rk_figure *fig, const char *const *categories, int n)
{
	if (!fig || fig->bars || fig->n_series > 0 || n < 1 || !categories)
		return RK_EINVAL;
	char **c = calloc((size_t)n, sizeof(*c));
	if (!c)
		return RK_ENOMEM;
	int oom = 0;
	for (int i = 0; i < n; i++)
		c[i] = dup_or_null(categories[i] ? categories[i] : "", &oom);
	if (oom) {
		for (int i = 0; i < n; i++)
			free(c[i]);
		free(c);
		return RK_ENOMEM;
	}
	fig->categories = c;
	fig->n_categories = n;
	fig->bars = 1;
	return 0;
}

int rk_figure_bar_series(struct rk_figure *fig, const char *name, const double *value,
                         const double *lo, const double *hi)
{
	if (!fig || !fig->bars || !value || (!lo) != (!hi))
		return RK_EINVAL;
	return add_series(fig, name, RK_FIGURE_LINE, NULL, value, lo, hi, fig->n_categories);
}

int rk_figure_hline(struct rk_figure *fig, double y, const char *label)
{
	if (!fig || !isfinite(y))
		return RK_EINVAL;
	struct fig_hline *h = realloc(fig->hlines, (size_t)(fig->n_hlines + 1) * sizeof(*h));
	if (!h)
		return RK_ENOMEM;
	fig->hlines = h;
	int oom = 0;
	char *l = dup_or_null(label, &oom);
	if (oom)
		return RK_ENOMEM;
	fig->hlines[fig->n_hlines++] = (struct fig_hline){.y = y, .label = l};
	return 0;
}

static void take(double v, int log, double *lo, double *hi, int *any)
{
	if (!isfinite(v) || (log && v <= 0))
		return;
	if (!*any || v < *lo)
		*lo = v;
	if (!*any || v > *hi)
		*hi = v;
	*any = 1;
}

int fig_data_range(const struct rk_figure *fig, int yaxis, double *lo, double *hi)
{
	int log = (yaxis ? fig->yscale : fig->xscale) == RK_FIGURE_LOG, any = 0;
	*lo = 0;
	*hi = 1;
	for (int i = 0; i < fig->n_series; i++) {
		const struct fig_series *s = &fig->series[i];
		for (int k = 0; k < s->n; k++) {
			if (!yaxis) {
				take(s->x[k], log, lo, hi, &any);
				continue;
			}
			take(s->y[k], log, lo, hi, &any);
			/*
			 * Bars keep their frame at the values and the interval tops: a low
			 * end below 0 is clipped, never a reason to draw negative seconds.
			 */
			if (s->hi && isfinite(s->y[k]))
				take(s->hi[k], log, lo, hi, &any);
			if (s->lo && !fig->bars && isfinite(s->y[k]))
				take(s->lo[k], log, lo, hi, &any);
		}
	}
	if (yaxis) {
		for (int i = 0; i < fig->n_hlines; i++)
			take(fig->hlines[i].y, log, lo, hi, &any);
		if (fig->bars && !log)
			take(0.0, 0, lo, hi, &any);
	}
	if (!any) {
		*lo = log ? 1 : 0;
		*hi = log ? 10 : 1;
	}
	return any;
}

/* The smallest tidy step (1, 2 or 5 times a power of ten) >= raw. */
static double step_at_least(double raw)
{
	double p = pow(10.0, floor(log10(raw)));
	double m = raw / p;
	double n = m <= 1.0 + 1e-9 ? 1.0 : m <= 2.0 + 1e-9 ? 2.0 : m <= 5.0 + 1e-9 ? 5.0 : 10.0;
	return n * p;
}

double fig_step_next(double step)
{
	return step_at_least(step * 1.5);
}

static int step_decimals(double step)
{
	int d = (int)-floor(log10(step) + 1e-9);
	return d > 0 ? d : 0;
}

void fig_axis_linear(struct fig_axis *a, double lo, double hi, int target, int expand)
{
	if (!(hi > lo)) { /* one value: a unit around it (or 0..1 at 0) */
		double c = lo;
		lo = c == 0 ? 0 : c - fabs(c) * 0.5;
		hi = c == 0 ? 1 : c + fabs(c) * 0.5;
	}
	if (target < 1)
		target = 1;
	double step = step_at_least((hi - lo) / target);
	while ((hi - lo) / step > FIG_MAX_TICKS - 2)
		step = fig_step_next(step);
	if (expand) {
		lo = floor(lo / step + 1e-9) * step;
		hi = ceil(hi / step - 1e-9) * step;
	}
	a->lo = lo;
	a->hi = hi;
	a->log = 0;
	a->decimals = step_decimals(step);
	a->n_ticks = 0;
	for (double k = ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k += 1.0) {
		if (a->n_ticks == FIG_MAX_TICKS)
			break;
		double v = k * step;
		a->tick[a->n_ticks++] = fabs(v) < step * 1e-9 ? 0.0 : v;
	}
}

void fig_axis_log(struct fig_axis *a, double lo, double hi, int every)
{
	if (!(lo > 0))
		lo = 1;
	if (!(hi > lo))
		hi = lo * 10;
	double e0 = floor(log10(lo) + 1e-9), e1 = ceil(log10(hi) - 1e-9);
	if (e1 <= e0)
		e1 = e0 + 1;
	a->lo = pow(10.0, e0);
	a->hi = pow(10.0, e1);
	a->log = 1;
	a->decimals = -1;
	a->n_ticks = 0;
	if (every < 1)
		every = 1;
	for (double e = e0; e <= e1 && a->n_ticks < FIG_MAX_TICKS; e += every)
		a->tick[a->n_ticks++] = pow(10.0, e);
}

void fig_tick_label(const struct fig_axis *a, double v, char *buf, size_t size)
{
	if (a->log) {
		int e = (int)lround(log10(v));
		if (e >= 0 && e <= 5)
			snprintf(buf, size, "%.0f", pow(10.0, e));
		else if (e < 0 && e >= -3)
			snprintf(buf, size, "%.*f", -e, pow(10.0, e));
		else
			snprintf(buf, size, "1e%d", e);
		return;
	}
	if (fabs(v) >= 1e7) {
		snprintf(buf, size, "%.3g", v);
		return;
	}
	snprintf(buf, size, "%.*f", a->decimals, v == 0 ? 0.0 : v);
	if (!strncmp(buf, "-0", 2) && strspn(buf + 1, "0.") == strlen(buf + 1))
		memmove(buf, buf + 1, strlen(buf)); /* "-0.0" -> "0.0" */
}

void fig_value_label(double v, char *buf, size_t size)
{
	double a = fabs(v);
	if (a >= 1e6)
		snprintf(buf, size, "%.3g", v);
	else if (a >= 100)
		snprintf(buf, size, "%.0f", v);
	else if (a >= 10)
		snprintf(buf, size, "%.1f", v);
	else
		snprintf(buf, size, "%.2f", v);
}

double fig_axis_frac(const struct fig_axis *a, double v)
{
	if (a->log) {
		if (!(v > 0))
			return -INFINITY;
		return (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
	}
	return (v - a->lo) / (a->hi - a->lo);
}
