/*
 * Where everything of a figure goes (figure_draw.h): the page size, the
 * legend's rows above the plot, the margins the tick labels need, the axes
 * and their ticks thinned until no two labels overlap. Text is measured with
 * cairo on a recording surface, with hinting off, so the measures are those
 * the SVG and PDF surfaces draw with.
 */
#include "sim/report/figure_draw.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void fig_font(cairo_t *cr, double size_pt, int bold)
{
	cairo_select_font_face(cr, FIG_FONT, CAIRO_FONT_SLANT_NORMAL,
	                       bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(cr, size_pt);
	cairo_font_options_t *o = cairo_font_options_create();
	cairo_font_options_set_hint_metrics(o, CAIRO_HINT_METRICS_OFF);
	cairo_font_options_set_hint_style(o, CAIRO_HINT_STYLE_NONE);
	cairo_set_font_options(cr, o);
	cairo_font_options_destroy(o);
}

double fig_text_width(cairo_t *cr, const char *s)
{
	cairo_text_extents_t e;
	cairo_text_extents(cr, s, &e);
	return e.x_advance;
}

void fig_fit_text(cairo_t *cr, const char *s, double max_w, char *buf, size_t size)
{
	snprintf(buf, size, "%s", s ? s : "");
	if (fig_text_width(cr, buf) <= max_w)
		return;
	size_t n = strlen(buf);
	/* Cut whole UTF-8 characters and end with "..." until it fits (or nothing is left). */
	while (n > 0) {
		n--;
		while (n > 0 && ((unsigned char)buf[n] & 0xC0) == 0x80)
			n--;
		if (n + 4 > size)
			continue;
		memcpy(buf + n, "...", 4);
		if (fig_text_width(cr, buf) <= max_w)
			return;
	}
	buf[0] = '\0';
}

/* Widest tick label of axis a. */
static double widest_tick(cairo_t *cr, const struct fig_axis *a)
{
	double w = 0;
	char buf[64];
	for (int i = 0; i < a->n_ticks; i++) {
		fig_tick_label(a, a->tick[i], buf, sizeof(buf));
		double t = fig_text_width(cr, buf);
		w = t > w ? t : w;
	}
	return w;
}

/* The y axis: ticks at least FIG_TICK_PT + 4 apart, room above bars for value labels. */
static void layout_y(const struct rk_figure *fig, struct fig_layout *L, double plot_h)
{
	double lo, hi;
	if (fig->yfixed) {
		lo = fig->ylo;
		hi = fig->yhi;
	} else {
		fig_data_range(fig, 1, &lo, &hi);
	}
	if (fig->yscale == RK_FIGURE_LOG) {
		for (int every = 1; every < 64; every++) {
			fig_axis_log(&L->y, lo, hi, every);
			if (L->y.n_ticks < 2 || plot_h / (L->y.n_ticks - 1) >= FIG_TICK_PT + 4)
				break;
		}
		return;
	}
	if (fig->bars && !fig->yfixed && hi > lo) {
		/* The tallest mark keeps a value label's height of free frame above it. */
		double room = FIG_VALUE_PT + 3;
		hi += (hi - lo) * room / (plot_h - room);
	}
	for (int target = 6; target >= 1; target--) {
		fig_axis_linear(&L->y, lo, hi, target, !fig->yfixed);
		if (L->y.n_ticks < 2 || plot_h / (L->y.n_ticks - 1) >= FIG_TICK_PT + 4)
			break;
	}
}

/* The x axis of lines: labels at least 4 pt apart. */
static void layout_x(const struct rk_figure *fig, cairo_t *cr, struct fig_layout *L)
{
	double lo, hi, pw = L->x1 - L->x0;
	fig_data_range(fig, 0, &lo, &hi);
	if (fig->xscale == RK_FIGURE_LOG) {
		for (int every = 1; every < 64; every++) {
			fig_axis_log(&L->x, lo, hi, every);
			double w = widest_tick(cr, &L->x);
			if (L->x.n_ticks < 2 || pw / (L->x.n_ticks - 1) * every >= w + 4)
				break;
		}
		return;
	}
	for (int target = 7; target >= 1; target--) {
		fig_axis_linear(&L->x, lo, hi, target, 0);
		double w = widest_tick(cr, &L->x),
		       step = L->x.n_ticks > 1 ? L->x.tick[1] - L->x.tick[0] : L->x.hi - L->x.lo;
		if (L->x.n_ticks < 2 || pw * step / (L->x.hi - L->x.lo) >= w + 4)
			break;
	}
}

void fig_layout_compute(const struct rk_figure *fig, cairo_t *cr, struct fig_layout *L)
{
	memset(L, 0, sizeof(*L));
	L->w = FIG_W;
	/* Legend: entries in columns of equal width, as many as fit in a row. */
	int n = fig->n_series;
	fig_font(cr, FIG_LEGEND_PT, 0);
	double max_name = (FIG_W - 2 * FIG_PAD) / (n > 1 ? 2 : 1) - FIG_SWATCH - 8;
	double colw = 0;
	for (int i = 0; i < n; i++) {
		char buf[FIG_NAME_MAX];
		fig_fit_text(cr, fig->series[i].name, max_name, buf, sizeof(buf));
		double w = FIG_SWATCH + 3 + fig_text_width(cr, buf) + 6;
		colw = w > colw ? w : colw;
	}
	L->legend_cols = n > 0 ? (int)((FIG_W - 2 * FIG_PAD) / colw) : 0;
	if (n > 0 && L->legend_cols < 1)
		L->legend_cols = 1;
	if (L->legend_cols > n)
		L->legend_cols = n;
	L->legend_rows = n > 0 ? (n + L->legend_cols - 1) / L->legend_cols : 0;
	L->legend_colw = colw;
	L->legend_name_max = max_name;
	double top = FIG_PAD;
	if (fig->title) {
		L->title_y = top + FIG_TITLE_PT;
		top += FIG_TITLE_PT + 3;
	}
	L->legend_y = top;
	top += L->legend_rows * FIG_LEGEND_ROW + (n > 0 ? 2 : 0);
	L->y0 = top + FIG_TICK_PT / 2 + 1; /* the top tick label's upper half */
	/* The page grows with the legend; the plot keeps its height. */
	L->y1 = L->y0 + FIG_PLOT_H;
	L->h = L->y1 + FIG_TICK_LEN + 1.5 + FIG_TICK_PT + 3 + FIG_LABEL_PT + FIG_PAD;
	L->h = ceil(L->h);

	layout_y(fig, L, FIG_PLOT_H);
	fig_font(cr, FIG_TICK_PT, 0);
	double ytw = widest_tick(cr, &L->y);
	L->x0 = FIG_PAD + FIG_LABEL_PT * 1.25 + 2 + ytw + 2 + FIG_TICK_LEN;
	/* Right: a reference line's label, else half an x tick label. */
	double right = FIG_PAD + 4;
	fig_font(cr, FIG_VALUE_PT, 0);
	for (int i = 0; i < fig->n_hlines; i++)
		if (fig->hlines[i].label) {
			double w = fig_text_width(cr, fig->hlines[i].label) + 2 + FIG_PAD;
			right = w > right ? w : right;
		}
	L->x1 = FIG_W - right;
	if (fig->bars)
		return;
	fig_font(cr, FIG_TICK_PT, 0);
	layout_x(fig, cr, L);
	double half = 0;
	char buf[64];
	if (L->x.n_ticks > 0) {
		double last = L->x.tick[L->x.n_ticks - 1];
		fig_tick_label(&L->x, last, buf, sizeof(buf));
		double px = L->x0 + fig_axis_frac(&L->x, last) * (L->x1 - L->x0);
		half = px + fig_text_width(cr, buf) / 2 - (FIG_W - FIG_PAD);
	}
	if (half > 0) { /* the last tick label would run off the page: narrow the plot */
		L->x1 -= half;
		layout_x(fig, cr, L);
	}
}
