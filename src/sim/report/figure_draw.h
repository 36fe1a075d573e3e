/*
 * The cairo half of include/rubick/figure.h: page geometry in points
 * (a paper column, 3.4 x 2.3 in), fonts, the layout (figure_layout.c), the
 * drawing (figure_draw.c) and the SVG/PDF writers (figure_cairo.c). Calls go
 * figure_cairo.c -> figure_draw.c -> figure_layout.c -> figure.c.
 */
#ifndef RUBICK_SIM_REPORT_FIGURE_DRAW_H
#define RUBICK_SIM_REPORT_FIGURE_DRAW_H

#include "sim/report/figure_internal.h"

#include <cairo.h>
#include <stddef.h>

/* Page and text sizes, points (1/72 in). */
#define FIG_W          245.0 /* 3.4 in */
#define FIG_PLOT_H     118.0 /* the frame's height; the page is 2.3 in with one legend row */
#define FIG_PAD        3.0
#define FIG_FONT       "DejaVu Sans"
#define FIG_TICK_PT    7.0
#define FIG_LABEL_PT   8.0
#define FIG_TITLE_PT   8.5
#define FIG_LEGEND_PT  7.0
#define FIG_VALUE_PT   6.0
#define FIG_LEGEND_ROW 9.0
#define FIG_SWATCH     12.0 /* legend sample's width */
#define FIG_TICK_LEN   2.5
#define FIG_NAME_MAX   128 /* bytes of a legend or category label as drawn */

struct fig_layout {
	double w, h;           /* page */
	double x0, y0, x1, y1; /* the plot frame (y0 top) */
	struct fig_axis x, y;  /* x unused on bars */
	double title_y;        /* baseline of the title */
	double legend_y;       /* top of the legend's first row */
	int legend_rows, legend_cols;
	double legend_colw, legend_name_max;
};

/* Select DejaVu Sans at size_pt with hinting off (metrics identical on every surface). */
void fig_font(cairo_t *cr, double size_pt, int bold);
double fig_text_width(cairo_t *cr, const char *s);
/* s, cut with "..." to at most max_w wide in the current font, into buf. */
void fig_fit_text(cairo_t *cr, const char *s, double max_w, char *buf, size_t size);

/* Lay fig out, measuring text with cr. OUT: *L. */
void fig_layout_compute(const struct rk_figure *fig, cairo_t *cr, struct fig_layout *L);

/* A bar's value label as placed: its box (points, y0 top) and text. */
struct fig_label {
	double x0, x1, y0, y1;
	int series, category;
	int inside; /* 1: inside the bar's top (drawn white) */
	char text[32];
};
#define FIG_MAX_LABELS 512

/*
 * The bars' value labels, in series then category order: above the bar's
 * highest mark (its top or its whisker's), else just above a reference line
 * that crosses that place, else inside the bar's top when it has no whisker
 * through it; a label wider than its bar's slot or with no free place is
 * dropped. Every candidate is checked against the frame, every reference line
 * (1 pt clear) and every label placed before, so labels never overlap each
 * other or a line. OUT: out[0..return), at most max.
 */
int fig_place_value_labels(const struct rk_figure *fig, cairo_t *cr, const struct fig_layout *L,
                           struct fig_label *out, int max);

/* The page y of data value v on L's y axis. */
double fig_px_y(const struct fig_layout *L, double v);

/* Draw fig on cr laid out by L (the surface is L->w x L->h points). */
void fig_draw(const struct rk_figure *fig, cairo_t *cr, const struct fig_layout *L);

#endif
