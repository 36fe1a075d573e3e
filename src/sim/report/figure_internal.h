/*
 * What the two halves of include/rubick/figure.h share: the figure as data
 * and the pure arithmetic of its axes (figure.c), which the cairo half
 * (figure_cairo.c) lays out and draws. figure_cairo.c calls figure.c, never
 * the other way.
 */
#ifndef RUBICK_SIM_REPORT_FIGURE_INTERNAL_H
#define RUBICK_SIM_REPORT_FIGURE_INTERNAL_H

#include "rubick/figure.h"

#include <stddef.h>

struct fig_series {
	char *name;
	enum rk_figure_mark mark; /* lines only */
	double *x, *y, *lo, *hi;  /* n each (x NULL for bars; lo, hi may be NULL) */
	int n;
};

struct fig_hline {
	double y;
	char *label; /* NULL: none */
};

struct rk_figure {
	char *title, *xlabel, *ylabel; /* title may be NULL */
	enum rk_figure_scale xscale, yscale;
	int yfixed; /* 1: ylo..yhi were set by rk_figure_yrange */
	double ylo, yhi;
	int bars;          /* 1 once rk_figure_bars was called */
	char **categories; /* bars: n_categories labels */
	int n_categories;
	struct fig_series *series;
	int n_series, cap_series;
	struct fig_hline *hlines;
	int n_hlines;
};

/* An axis range and its ticks: values at `tick[0..n)`, printed with `decimals`. */
#define FIG_MAX_TICKS 64
struct fig_axis {
	double lo, hi;
	int log;
	double tick[FIG_MAX_TICKS];
	int n_ticks;
	int decimals; /* linear ticks; -1 on log axes (decades printed as 1, 10, ... 1e6) */
};

/*
 * The data range of the figure's x or y values (lines: points and their
 * intervals; bars: values and interval tops, 0 included; hlines included on
 * y). Non-finite values, and values <= 0 on a log axis, are ignored.
 * OUT: *lo, *hi. 0 when there was no value (then *lo = 0, *hi = 1).
 */
int fig_data_range(const struct rk_figure *fig, int yaxis, double *lo, double *hi);

/*
 * Tidy ticks over [lo, hi]: linear steps of 1, 2 or 5 times a power of ten,
 * about `target` of them (the layout lowers target until the labels fit).
 * `expand` = 1 widens the range to whole steps (y axes), 0 keeps it (x axes).
 * Log axes get a tick every `every` decades, the range widened to whole decades.
 */
void fig_axis_linear(struct fig_axis *a, double lo, double hi, int target, int expand);
void fig_axis_log(struct fig_axis *a, double lo, double hi, int every);

/* The next tidy step after `step` (1 -> 2 -> 5 -> 10). */
double fig_step_next(double step);

/* Tick label of v on axis a into buf (C locale digits, no "-0"). */
void fig_tick_label(const struct fig_axis *a, double v, char *buf, size_t size);

/* A value label with three significant figures ("0.97", "12.3", "1234"). */
void fig_value_label(double v, char *buf, size_t size);

/* The axis position of v in [0, 1] (log: of log10 v); v <= 0 on log maps to -inf. */
double fig_axis_frac(const struct fig_axis *a, double v);

#endif
