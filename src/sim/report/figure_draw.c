/*
 * Drawing a laid-out figure with cairo (figure_draw.h): grid, the data
 * clipped to the plot frame (so an interval that runs below 0 stops at the
 * frame, never through the axis labels), the frame, ticks, axis titles,
 * bar value labels placed where they overlap nothing, legend and title.
 *
 * Styles: Okabe-Ito's colour-blind-safe eight (yellow darkened to read on
 * white), then Paul Tol's muted scheme and three neutrals - 20 colours -
 * with four dashes cycling on top, so up to 20 series differ in colour and
 * neighbours also in dash.
 */
#include "sim/report/figure_draw.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const unsigned palette[20] = {0x0072B2, 0xD55E00, 0x009E73, 0xCC79A7, 0xE69F00,
                                     0x56B4E9, 0x000000, 0xB8A200, 0x332288, 0x882255,
                                     0x44AA99, 0x117733, 0x999933, 0xCC6677, 0xAA4499,
                                     0x88CCEE, 0x666666, 0x8C564B, 0xDDCC77, 0x7F3C8D};

const char *rk_figure_colour(int series)
{
	static const char *const hex[20] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
	                                    "#56B4E9", "#000000", "#B8A200", "#332288", "#882255",
	                                    "#44AA99", "#117733", "#999933", "#CC6677", "#AA4499",
	                                    "#88CCEE", "#666666", "#8C564B", "#DDCC77", "#7F3C8D"};
	return hex[(unsigned)series % 20];
}

static void set_rgb(cairo_t *cr, unsigned rgb, double alpha)
{
	cairo_set_source_rgba(cr, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0,
	                      (rgb & 0xff) / 255.0, alpha);
}

static void set_style(cairo_t *cr, int i)
{
	static const double d1[] = {3.0, 1.5}, d2[] = {1.0, 1.0}, d3[] = {3.5, 1.2, 1.0, 1.2};
	static const double *const dash[4] = {NULL, d1, d2, d3};
	static const int nd[4] = {0, 2, 2, 4};
	set_rgb(cr, palette[i % 20], 1.0);
	cairo_set_dash(cr, dash[i % 4], nd[i % 4], 0);
	cairo_set_line_width(cr, 1.0);
}

static double px_x(const struct fig_layout *L, double v)
{
	return L->x0 + fig_axis_frac(&L->x, v) * (L->x1 - L->x0);
}

static double px_y(const struct fig_layout *L, double v)
{
	return L->y1 - fig_axis_frac(&L->y, v) * (L->y1 - L->y0);
}

static int usable(const struct fig_layout *L, double x, double y)
{
	return isfinite(x) && isfinite(y) && (!L->x.log || x > 0) && (!L->y.log || y > 0);
}

/* Text with its left edge at x and baseline at y. */
static void text_at(cairo_t *cr, double x, double y, const char *s)
{
	cairo_move_to(cr, x, y);
	cairo_show_text(cr, s);
}

/* Text centred on x (anchor 0.5) or ending at x (1.0), baseline y. */
static void text_anchor(cairo_t *cr, double x, double y, const char *s, double anchor)
{
	text_at(cr, x - fig_text_width(cr, s) * anchor, y, s);
}

static void grid_and_ticks(const struct rk_figure *fig, cairo_t *cr, const struct fig_layout *L)
{
	char buf[64];
	cairo_set_dash(cr, NULL, 0, 0);
	fig_font(cr, FIG_TICK_PT, 0);
	for (int i = 0; i < L->y.n_ticks; i++) {
		double py = px_y(L, L->y.tick[i]);
		set_rgb(cr, 0xe3e3e3, 1);
		cairo_set_line_width(cr, 0.4);
		cairo_move_to(cr, L->x0, py);
		cairo_line_to(cr, L->x1, py);
		cairo_stroke(cr);
		set_rgb(cr, 0x444444, 1);
		cairo_set_line_width(cr, 0.5);
		cairo_move_to(cr, L->x0 - FIG_TICK_LEN, py);
		cairo_line_to(cr, L->x0, py);
		cairo_stroke(cr);
		set_rgb(cr, 0x222222, 1);
		fig_tick_label(&L->y, L->y.tick[i], buf, sizeof(buf));
		text_anchor(cr, L->x0 - FIG_TICK_LEN - 1.5, py + FIG_TICK_PT * 0.36, buf, 1.0);
	}
	double ly = L->y1 + FIG_TICK_LEN + 1.5 + FIG_TICK_PT * 0.75;
	if (fig->bars) {
		double gw = (L->x1 - L->x0) / fig->n_categories;
		set_rgb(cr, 0x222222, 1);
		for (int c = 0; c < fig->n_categories; c++) {
			fig_fit_text(cr, fig->categories[c], gw - 2, buf, sizeof(buf));
			text_anchor(cr, L->x0 + gw * (c + 0.5), ly, buf, 0.5);
		}
		return;
	}
	for (int i = 0; i < L->x.n_ticks; i++) {
		double px = px_x(L, L->x.tick[i]);
		set_rgb(cr, 0xe3e3e3, 1);
		cairo_set_line_width(cr, 0.4);
		cairo_move_to(cr, px, L->y0);
		cairo_line_to(cr, px, L->y1);
		cairo_stroke(cr);
		set_rgb(cr, 0x444444, 1);
		cairo_set_line_width(cr, 0.5);
		cairo_move_to(cr, px, L->y1);
		cairo_line_to(cr, px, L->y1 + FIG_TICK_LEN);
		cairo_stroke(cr);
		set_rgb(cr, 0x222222, 1);
		fig_tick_label(&L->x, L->x.tick[i], buf, sizeof(buf));
		text_anchor(cr, px, ly, buf, 0.5);
	}
}

static void axis_titles(const struct rk_figure *fig, cairo_t *cr, const struct fig_layout *L)
{
	set_rgb(cr, 0x000000, 1);
	fig_font(cr, FIG_LABEL_PT, 0);
	char buf[256];
	fig_fit_text(cr, fig->xlabel, L->w - 2 * FIG_PAD, buf, sizeof(buf));
	text_anchor(cr, (L->x0 + L->x1) / 2, L->h - FIG_PAD - FIG_LABEL_PT * 0.2, buf, 0.5);
	fig_fit_text(cr, fig->ylabel, L->h - 2 * FIG_PAD, buf, sizeof(buf));
	cairo_save(cr);
	cairo_translate(cr, FIG_PAD + FIG_LABEL_PT * 0.95, (L->y0 + L->y1) / 2);
	cairo_rotate(cr, -M_PI / 2);
	/* Centred on the frame, but kept on the page when the title is long. */
	double w = fig_text_width(cr, buf), c = 0;
	double half_room = (L->y1 + L->y0) / 2 - FIG_PAD;
	if (w / 2 > half_room)
		c = w / 2 - half_room;
	text_anchor(cr, c, 0, buf, 0.5);
	cairo_restore(cr);
	if (fig->title) {
		fig_font(cr, FIG_TITLE_PT, 1);
		fig_fit_text(cr, fig->title, L->w - 2 * FIG_PAD, buf, sizeof(buf));
		text_anchor(cr, L->w / 2, L->title_y, buf, 0.5);
	}
}

/* A small marker of shape i % 5 at (x, y). */
static void marker(cairo_t *cr, int i, double x, double y)
{
	double r = 1.5;
	cairo_new_sub_path(cr);
	switch (i % 5) {
	case 0:
		cairo_arc(cr, x, y, r, 0, 2 * M_PI);
		break;
	case 1:
		cairo_rectangle(cr, x - r, y - r, 2 * r, 2 * r);
		break;
	case 2:
		cairo_move_to(cr, x, y - r * 1.2);
		cairo_line_to(cr, x + r * 1.1, y + r * 0.8);
		cairo_line_to(cr, x - r * 1.1, y + r * 0.8);
		cairo_close_path(cr);
		break;
	case 3:
		cairo_move_to(cr, x, y - r * 1.3);
		cairo_line_to(cr, x + r, y);
		cairo_line_to(cr, x, y + r * 1.3);
		cairo_line_to(cr, x - r, y);
		cairo_close_path(cr);
		break;
	default:
		cairo_move_to(cr, x, y + r * 1.2);
		cairo_line_to(cr, x + r * 1.1, y - r * 0.8);
		cairo_line_to(cr, x - r * 1.1, y - r * 0.8);
		cairo_close_path(cr);
	}
	cairo_fill(cr);
}

/*
 * Path through points a..b (all usable) of one run: straight, or steps
 * (horizontal to the next x, then vertical). v is y, lo or hi.
 */
static void trace_run(cairo_t *cr, const struct fig_layout *L, const struct fig_series *s,
                      const double *v, int a, int b, int step, int reverse, int first)
{
	for (int q = 0; q <= b - a; q++) {
		int k = reverse ? b - q : a + q;
		double x = px_x(L, s->x[k]), y = px_y(L, v[k]);
		if (q == 0) {
			if (first)
				cairo_move_to(cr, x, y);
			else
				cairo_line_to(cr, x, y);
			continue;
		}
		if (step) {
			int prev = reverse ? k + 1 : k - 1;
			/* forwards: the previous value holds until this x; backwards the mirror */
			if (!reverse)
				cairo_line_to(cr, x, px_y(L, v[prev]));
			else
				cairo_line_to(cr, px_x(L, s->x[prev]), y);
		}
		cairo_line_to(cr, x, y);
	}
}

/* Calls fn on every maximal run [a, b] of usable points (and usable intervals when band). */
static int next_run(const struct fig_layout *L, const struct fig_series *s, int from, int band,
                    int *a, int *b)
{
	int k = from;
	for (;; k++) {
		if (k >= s->n)
			return 0;
		if (usable(L, s->x[k], s->y[k]) &&
		    (!band || (usable(L, s->x[k], s->lo[k]) && usable(L, s->x[k], s->hi[k]))))
			break;
	}
	*a = k;
	while (k + 1 < s->n && usable(L, s->x[k + 1], s->y[k + 1]) &&
	       (!band ||
	        (usable(L, s->x[k + 1], s->lo[k + 1]) && usable(L, s->x[k + 1], s->hi[k + 1]))))
		k++;
	*b = k;
	return 1;
}

static void draw_line_series(cairo_t *cr, const struct fig_layout *L, const struct fig_series *s,
                             int i)
{
	int step = s->mark == RK_FIGURE_STEP, a, b;
	if (s->lo) { /* the band: hi forwards, lo back */
		for (int from = 0; next_run(L, s, from, 1, &a, &b); from = b + 1) {
			trace_run(cr, L, s, s->hi, a, b, step, 0, 1);
			trace_run(cr, L, s, s->lo, a, b, step, 1, 0);
			cairo_close_path(cr);
			set_rgb(cr, palette[i % 20], 0.18);
			cairo_fill(cr);
		}
	}
	set_style(cr, i);
	for (int from = 0; next_run(L, s, from, 0, &a, &b); from = b + 1) {
		trace_run(cr, L, s, s->y, a, b, step, 0, 1);
		cairo_stroke(cr);
	}
	if (step)
		return;
	cairo_set_dash(cr, NULL, 0, 0);
	for (int k = 0; k < s->n; k++) {
		if (!usable(L, s->x[k], s->y[k]))
			continue;
		double x = px_x(L, s->x[k]);
		if (s->lo && usable(L, s->x[k], s->lo[k]) && usable(L, s->x[k], s->hi[k])) {
			double ylo = px_y(L, s->lo[k]), yhi = px_y(L, s->hi[k]);
			cairo_set_line_width(cr, 0.6);
			cairo_move_to(cr, x, ylo);
			cairo_line_to(cr, x, yhi);
			cairo_move_to(cr, x - 1.5, ylo);
			cairo_line_to(cr, x + 1.5, ylo);
			cairo_move_to(cr, x - 1.5, yhi);
			cairo_line_to(cr, x + 1.5, yhi);
			cairo_stroke(cr);
		}
		marker(cr, i, x, px_y(L, s->y[k]));
	}
}

/* Bar geometry: group c's bar i spans [*left, *left + *w]; *slot is its share of the group. */
static void bar_box(const struct rk_figure *fig, const struct fig_layout *L, int c, int i,
                    double *left, double *w, double *slot)
{
	double gw = (L->x1 - L->x0) / fig->n_categories;
	*slot = gw * 0.84 / fig->n_series;
	*left = L->x0 + gw * c + gw * 0.08 + *slot * i + *slot * 0.06;
	*w = *slot * 0.88;
}

static double bar_base(const struct fig_layout *L)
{
	if (L->y.log)
		return L->y1;
	return px_y(L, L->y.lo > 0 ? L->y.lo : L->y.hi < 0 ? L->y.hi : 0.0);
}

static void draw_bars(const struct rk_figure *fig, cairo_t *cr, const struct fig_layout *L)
{
	for (int i = 0; i < fig->n_series; i++) {
		const struct fig_series *s = &fig->series[i];
		for (int c = 0; c < s->n; c++) {
			if (!isfinite(s->y[c]) || (L->y.log && s->y[c] <= 0))
				continue;
			double left, w, slot, top = px_y(L, s->y[c]), base = bar_base(L);
			bar_box(fig, L, c, i, &left, &w, &slot);
			set_rgb(cr, palette[i % 20], 1);
			cairo_rectangle(cr, left, fmin(top, base), w, fabs(base - top));
			cairo_fill(cr);
			if (!s->lo || !isfinite(s->lo[c]) || !isfinite(s->hi[c]) ||
			    !(s->hi[c] > s->lo[c]))
				continue;
			/* Whisker: any part outside the frame is clipped away with it. */
			double cx = left + w / 2, cap = fmin(w / 2, 6.0) / 2;
			double ylo = L->y.log && s->lo[c] <= 0 ? L->y1 + 10 : px_y(L, s->lo[c]);
			double yhi = px_y(L, s->hi[c]);
			set_rgb(cr, 0x222222, 1);
			cairo_set_dash(cr, NULL, 0, 0);
			cairo_set_line_width(cr, 0.7);
			cairo_move_to(cr, cx, ylo);
			cairo_line_to(cr, cx, yhi);
			cairo_move_to(cr, cx - cap, ylo);
			cairo_line_to(cr, cx + cap, ylo);
			cairo_move_to(cr, cx - cap, yhi);
			cairo_line_to(cr, cx + cap, yhi);
			cairo_stroke(cr);
		}
	}
}

static int boxes_overlap(const struct fig_label *a, const struct fig_label *b)
{
	return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* Whether a value label may go at b: inside the frame, clear of every hline and placed label. */
static int box_free(const struct rk_figure *fig, const struct fig_layout *L,
                    const struct fig_label *b, const struct fig_label *placed, int n_placed)
{
	if (b->y0 < L->y0 + 0.5 || b->y1 > L->y1 - 0.5 || b->x0 < L->x0 || b->x1 > L->x1)
		return 0;
	for (int h = 0; h < fig->n_hlines; h++) {
		double hy = px_y(L, fig->hlines[h].y);
		if (hy > b->y0 - 1.0 && hy < b->y1 + 1.0)
			return 0;
	}
	for (int k = 0; k < n_placed; k++)
		if (boxes_overlap(b, &placed[k]))
			return 0;
	return 1;
}

double fig_px_y(const struct fig_layout *L, double v)
{
	return px_y(L, v);
}

int fig_place_value_labels(const struct rk_figure *fig, cairo_t *cr, const struct fig_layout *L,
                           struct fig_label *out, int max)
{
	int n_placed = 0;
	fig_font(cr, FIG_VALUE_PT, 0);
	cairo_font_extents_t fe;
	cairo_font_extents(cr, &fe);
	double th = fe.ascent * 0.8; /* digits' height; the box is that plus a descent's margin */
	for (int i = 0; fig->bars && i < fig->n_series; i++) {
		const struct fig_series *s = &fig->series[i];
		for (int c = 0; c < s->n && n_placed < max; c++) {
			if (!isfinite(s->y[c]) || (L->y.log && s->y[c] <= 0))
				continue;
			char buf[sizeof(out->text)];
			fig_value_label(s->y[c], buf, sizeof(buf));
			double left, w, slot, tw = fig_text_width(cr, buf);
			bar_box(fig, L, c, i, &left, &w, &slot);
			if (tw > slot)
				continue;
			double cx = left + w / 2, top = px_y(L, s->y[c]);
			int whisker = s->lo && isfinite(s->lo[c]) && isfinite(s->hi[c]) &&
			              s->hi[c] > s->lo[c];
			/* a negative bar hangs below the base: its label goes above the base */
			double bar_top = fmin(top, bar_base(L));
			double mark = whisker ? fmin(bar_top, px_y(L, s->hi[c])) : bar_top;
			struct fig_label cand[3];
			int nc = 0;
			cand[nc++] = (struct fig_label){
			    cx - tw / 2, cx + tw / 2, mark - 1.5 - th - 1, mark - 1.5, i, c, 0, ""};
			for (int h = 0; h < fig->n_hlines; h++) {
				double hy = px_y(L, fig->hlines[h].y);
				if (hy <= mark && hy > cand[0].y0 - 1.0 && nc < 2)
					cand[nc++] = (struct fig_label){
					    cx - tw / 2, cx + tw / 2, hy - 1.5 - th - 1,
					    hy - 1.5,    i,           c,
					    0,           ""};
			}
			if (!whisker && s->y[c] > 0)
				cand[nc++] = (struct fig_label){
				    cx - tw / 2, cx + tw / 2, top + 1.5, top + 1.5 + th + 1,
				    i,           c,           1,         ""};
			for (int k = 0; k < nc; k++) {
				if (cand[k].inside && cand[k].y1 > bar_base(L) - 1)
					continue;
				if (!box_free(fig, L, &cand[k], out, n_placed))
					continue;
				out[n_placed] = cand[k];
				memcpy(out[n_placed].text, buf, sizeof(buf));
				n_placed++;
				break;
			}
		}
	}
	return n_placed;
}

/* The bars' value labels where fig_place_value_labels puts them. */
static void value_labels(const struct rk_figure *fig, cairo_t *cr, const struct fig_layout *L)
{
	struct fig_label placed[FIG_MAX_LABELS];
	int n = fig_place_value_labels(fig, cr, L, placed, FIG_MAX_LABELS);
	fig_font(cr, FIG_VALUE_PT, 0);
	for (int k = 0; k < n; k++) {
		set_rgb(cr, placed[k].inside ? 0xffffff : 0x222222, 1);
		text_at(cr, placed[k].x0, placed[k].y1 - 1, placed[k].text);
	}
}

static void draw_hlines(const struct rk_figure *fig, cairo_t *cr, const struct fig_layout *L,
                        int labels)
{
	static const double dash[] = {2.5, 1.5};
	fig_font(cr, FIG_VALUE_PT, 0);
	for (int h = 0; h < fig->n_hlines; h++) {
		double hy = px_y(L, fig->hlines[h].y);
		if (!(hy >= L->y0 && hy <= L->y1))
			continue;
		set_rgb(cr, 0x444444, 1);
		if (labels) {
			if (fig->hlines[h].label)
				text_at(cr, L->x1 + 2, hy + FIG_VALUE_PT * 0.35,
				        fig->hlines[h].label);
			continue;
		}
		cairo_set_dash(cr, dash, 2, 0);
		cairo_set_line_width(cr, 0.6);
		cairo_move_to(cr, L->x0, hy);
		cairo_line_to(cr, L->x1, hy);
		cairo_stroke(cr);
	}
	cairo_set_dash(cr, NULL, 0, 0);
}

/* Above the frame, in rows: it never covers data. */
static void legend(const struct rk_figure *fig, cairo_t *cr, const struct fig_layout *L)
{
	fig_font(cr, FIG_LEGEND_PT, 0);
	double total = L->legend_cols * L->legend_colw;
	double x_start = (L->w - total) / 2;
	for (int i = 0; i < fig->n_series; i++) {
		int row = i / L->legend_cols, col = i % L->legend_cols;
		double x = x_start + col * L->legend_colw, y = L->legend_y + row * FIG_LEGEND_ROW;
		double mid = y + FIG_LEGEND_ROW / 2;
		if (fig->bars) {
			set_rgb(cr, palette[i % 20], 1);
			cairo_rectangle(cr, x + 2, mid - 2.8, FIG_SWATCH - 4, 5.0);
			cairo_fill(cr);
		} else {
			set_style(cr, i);
			cairo_set_line_width(cr, 1.2);
			cairo_move_to(cr, x, mid);
			cairo_line_to(cr, x + FIG_SWATCH, mid);
			cairo_stroke(cr);
			cairo_set_dash(cr, NULL, 0, 0);
			if (fig->series[i].mark == RK_FIGURE_LINE)
				marker(cr, i, x + FIG_SWATCH / 2, mid);
		}
		char buf[FIG_NAME_MAX];
		fig_fit_text(cr, fig->series[i].name, L->legend_name_max, buf, sizeof(buf));
		set_rgb(cr, 0x222222, 1);
		text_at(cr, x + FIG_SWATCH + 3, mid + FIG_LEGEND_PT * 0.35, buf);
	}
}

void fig_draw(const struct rk_figure *fig, cairo_t *cr, const struct fig_layout *L)
{
	set_rgb(cr, 0xffffff, 1);
	cairo_paint(cr);
	cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
	cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
	grid_and_ticks(fig, cr, L);
	/* Everything of the data stays inside the frame. */
	cairo_save(cr);
	cairo_rectangle(cr, L->x0, L->y0, L->x1 - L->x0, L->y1 - L->y0);
	cairo_clip(cr);
	if (fig->bars)
		draw_bars(fig, cr, L);
	else
		for (int i = 0; i < fig->n_series; i++)
			draw_line_series(cr, L, &fig->series[i], i);
	draw_hlines(fig, cr, L, 0);
	cairo_restore(cr);
	set_rgb(cr, 0x555555, 1);
	cairo_set_dash(cr, NULL, 0, 0);
	cairo_set_line_width(cr, 0.6);
	cairo_rectangle(cr, L->x0, L->y0, L->x1 - L->x0, L->y1 - L->y0);
	cairo_stroke(cr);
	draw_hlines(fig, cr, L, 1);
	if (fig->bars)
		value_labels(fig, cr, L);
	axis_titles(fig, cr, L);
	legend(fig, cr, L);
}
