/*
 * Figures a paper can print (src/sim/report/figure*.c): a chart described as
 * data - lines (with optional 95% interval bands and whiskers), empirical
 * CDF steps, or grouped bars - then drawn with cairo into a standalone SVG
 * file, a PDF file, or SVG text the HTML report inlines. Every output is
 * sized for a paper's column (about 3.4 x 2.3 in at 100%), carries its own
 * fonts as outlines and its own xmlns, and keeps every mark inside the plot
 * frame: intervals are clipped to it, value and tick labels never overlap.
 * Axis titles carry the unit ("average JCT (s)"); the caller writes them so.
 *
 * Drawing depends only on the data, so identical figures give identical
 * bytes (the PDF's creation date is SOURCE_DATE_EPOCH when set).
 */
#ifndef RUBICK_FIGURE_H
#define RUBICK_FIGURE_H

#include "rubick/error.h"

#include <stddef.h>

struct rk_figure;

enum rk_figure_scale { RK_FIGURE_LINEAR, RK_FIGURE_LOG };

enum rk_figure_mark {
	RK_FIGURE_LINE,   /* points joined by straight segments, each point marked */
	RK_FIGURE_STEP,   /* an empirical CDF: horizontal then vertical steps, no marks */
};

/*
 * A new, empty figure. title may be NULL (no title is drawn: a paper's
 * caption says it); xlabel and ylabel name the quantity and its unit.
 * NULL when out of memory.
 */
struct rk_figure *rk_figure_new(const char *title, const char *xlabel, const char *ylabel);
void rk_figure_free(struct rk_figure *fig);

/* Axis scales (default linear); a log axis drops values <= 0 from its range. */
void rk_figure_xscale(struct rk_figure *fig, enum rk_figure_scale s);
void rk_figure_yscale(struct rk_figure *fig, enum rk_figure_scale s);
/* Fixed y range (default: from the data, 0 included for bars). */
void rk_figure_yrange(struct rk_figure *fig, double lo, double hi);

/*
 * One named series of n points (x ascending for LINE and STEP). lo and hi:
 * NULL, or n values each - the 95% interval of y at each point, drawn as a
 * shaded band with whiskers and clipped to the frame. Arrays are copied.
 */
int rk_figure_line(struct rk_figure *fig, const char *name, enum rk_figure_mark mark,
		   const double *x, const double *y, const double *lo, const double *hi, int n);

/*
 * Grouped bars: n categories along x (e.g. "avg JCT", "p99", "makespan"),
 * then one rk_figure_bar_series per group member (e.g. per policy), each with
 * n values and optional intervals (NULL or n values). A figure has lines or
 * bars, not both.
 */
int rk_figure_bars(struct rk_figure *fig, const char *const *categories, int n);
int rk_figure_bar_series(struct rk_figure *fig, const char *name, const double *value,
			 const double *lo, const double *hi);

/* A dashed horizontal reference line at y (e.g. 1.0 on normalised bars); label may be NULL. */
int rk_figure_hline(struct rk_figure *fig, double y, const char *label);

/* Write the figure as a standalone SVG or PDF file. err names the path on failure. */
int rk_figure_write_svg(const struct rk_figure *fig, const char *path, struct rk_error *err);
int rk_figure_write_pdf(const struct rk_figure *fig, const char *path, struct rk_error *err);
/*
 * The same SVG as text (for inlining in HTML). OUT: *svg (NUL-terminated, free()), *len.
 * It is the file without its <?xml?> line; its ids carry a prefix hashed from the
 * drawing, so several figures inlined in one page never share an id.
 */
int rk_figure_svg_text(const struct rk_figure *fig, char **svg, size_t *len, struct rk_error *err);

/* Series i's colour as "#RRGGBB" (20 distinct, then repeated), e.g. for a table's swatch. */
const char *rk_figure_colour(int series);

#endif
