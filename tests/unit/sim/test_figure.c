/*
 * Figures (include/rubick/figure.h): tidy ticks (1/2/5 steps, decades), the
 * bars' range (0 included, an interval's low end below 0 ignored), SVG text
 * that is standalone and byte-identical call after call (cairo's
 * process-wide surface numbers renumbered; ids prefixed per figure), the
 * file it writes, the PDF's date from SOURCE_DATE_EPOCH, value labels clear
 * of each other and of the dashed line, the legend above the frame, and
 * every documented error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four it needs */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rubick/figure.h"
#include "sim/report/figure_draw.h"
#include "sim/report/figure_internal.h"

static void ticks_tidy(void **state)
{
	(void)state;
	struct fig_axis a;
	fig_axis_linear(&a, 0, 7.3, 5, 1);
	assert_int_equal(a.n_ticks, 5);
	assert_true(a.lo == 0 && a.hi == 8);
	assert_true(a.tick[1] == 2 && a.tick[4] == 8);
	char buf[32];
	fig_tick_label(&a, a.tick[2], buf, sizeof(buf));
	assert_string_equal(buf, "4");
	fig_axis_linear(&a, 0, 1, 4, 1); /* step 0.25 -> 0.5 */
	assert_int_equal(a.n_ticks, 3);
	fig_tick_label(&a, a.tick[1], buf, sizeof(buf));
	assert_string_equal(buf, "0.5");
	fig_axis_linear(&a, -0.9, 0.9, 4, 1); /* a tick at 0 prints "0.0"... as 0 */
	for (int i = 0; i < a.n_ticks; i++) {
		fig_tick_label(&a, a.tick[i], buf, sizeof(buf));
		assert_true(strncmp(buf, "-0.0", 4) != 0 || strlen(buf) > 4);
	}
	fig_axis_log(&a, 3, 4.2e4, 1);
	assert_int_equal(a.n_ticks, 6);
	assert_true(a.lo == 1 && a.hi == 1e5);
	fig_tick_label(&a, a.tick[5], buf, sizeof(buf));
	assert_string_equal(buf, "100000");
	fig_axis_log(&a, 3, 4.2e7, 2);
	fig_tick_label(&a, a.tick[a.n_ticks - 1], buf, sizeof(buf));
	assert_string_equal(buf, "1e8");
	assert_true(fig_step_next(1) == 2 && fig_step_next(2) == 5 && fig_step_next(5) == 10);
	fig_value_label(0.974, buf, sizeof(buf));
	assert_string_equal(buf, "0.97");
	fig_value_label(1234.4, buf, sizeof(buf));
	assert_string_equal(buf, "1234");
}

static struct rk_figure *bars_figure(double low_end)
{
	struct rk_figure *f = rk_figure_new(NULL, "figure", "relative to fifo");
	assert_non_null(f);
	const char *cats[3] = {"avg JCT", "p99 JCT", "makespan"};
	assert_int_equal(rk_figure_bars(f, cats, 3), 0);
	double v1[3] = {1, 1, 1}, l1[3] = {0.9, 0.8, 0.95}, h1[3] = {1.1, 1.2, 1.05};
	double v2[3] = {0.97, 1.6, 0.5}, l2[3] = {0.7, 1.2, low_end}, h2[3] = {1.24, 2.0, 1.8};
	assert_int_equal(rk_figure_bar_series(f, "fifo", v1, l1, h1), 0);
	assert_int_equal(rk_figure_bar_series(f, "rubick", v2, l2, h2), 0);
	assert_int_equal(rk_figure_hline(f, 1.0, NULL), 0);
	return f;
}

static void bars_range(void **state)
{
	(void)state;
	struct rk_figure *f = bars_figure(-0.8);
	double lo, hi;
	assert_int_equal(fig_data_range(f, 1, &lo, &hi), 1);
	assert_true(lo == 0.0); /* 0 included; the interval's -0.8 is clipped, not plotted */
	assert_true(hi == 2.0); /* the tallest whisker */
	rk_figure_free(f);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The 9 characters "fHHHHHHHH" of the first id (the figure's prefix). */
static void id_prefix(const char *svg, char out[10])
{
	const char *p = strstr(svg, "id=\"");
	assert_non_null(p);
	memcpy(out, p + 4, 9);
	out[9] = '\0';
	assert_int_equal(p[13], '-');
}

static void svg_standalone_same_bytes(void **state)
{
	(void)state;
	struct rk_figure *f = bars_figure(-0.8);
	struct rk_error err;
	char *a = NULL, *b = NULL;
	size_t la = 0, lb = 0;
	assert_int_equal(rk_figure_svg_text(f, &a, &la, &err), 0);
	/* a line figure drawn between: cairo's surface counter moves on */
	struct rk_figure *g = rk_figure_new("T", "time (s)", "queue length (jobs)");
	double x[3] = {0, 1, 2}, y[3] = {1, 3, 2};
	assert_int_equal(rk_figure_line(g, "a", RK_FIGURE_STEP, x, y, NULL, NULL, 3), 0);
	char *c = NULL;
	size_t lc = 0;
	assert_int_equal(rk_figure_svg_text(g, &c, &lc, &err), 0);
	assert_int_equal(rk_figure_svg_text(f, &b, &lb, &err), 0);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	assert_int_equal(strlen(a), la);
	assert_true(!strncmp(a, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39));
	assert_true(strstr(a, "width=\"245pt\"") != NULL);
	assert_null(strstr(a, "<?xml"));
	assert_int_equal(count(a, "<svg"), 1);
	assert_true(strstr(a, "</svg>") != NULL);
	assert_true(strstr(a, "clip-path=") != NULL); /* the data are clipped to the frame */
	/* every id carries the figure's prefix; two figures' prefixes differ */
	char pa[10], pc[10];
	id_prefix(a, pa);
	id_prefix(c, pc);
	assert_string_not_equal(pa, pc);
	char want[32];
	snprintf(want, sizeof(want), "id=\"%s-", pa);
	assert_true(count(a, "id=\"") > 10);
	assert_int_equal(count(a, "id=\""), count(a, want));
	snprintf(want, sizeof(want), "href=\"#%s-", pa);
	assert_int_equal(count(a, "href=\"#"), count(a, want));
	assert_true(strstr(a, "surface1\"") != NULL);
	/* the file is the same SVG with its XML declaration */
	char path[] = "/tmp/rk_test_figure_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rk_figure_write_svg(f, path, &err), 0);
	FILE *in = fopen(path, "rb");
	assert_non_null(in);
	char *file = calloc(1, la + 256);
	size_t got = fread(file, 1, la + 255, in);
	fclose(in);
	const char *nl = strchr(file, '\n');
	assert_true(!strncmp(file, "<?xml", 5) && nl);
	assert_int_equal(got - (size_t)(nl + 1 - file), la);
	assert_memory_equal(nl + 1, a, la);
	unlink(path);
	free(file);
	free(a);
	free(b);
	free(c);
	rk_figure_free(f);
	rk_figure_free(g);
}

static char *slurp(const char *path, size_t *n)
{
	FILE *in = fopen(path, "rb");
	assert_non_null(in);
	char *buf = malloc(1 << 20);
	*n = fread(buf, 1, (1 << 20) - 1, in);
	buf[*n] = '\0';
	fclose(in);
	return buf;
}

static int has_bytes(const char *p, size_t n, const char *s)
{
	size_t m = strlen(s);
	for (size_t i = 0; i + m <= n; i++)
		if (!memcmp(p + i, s, m))
			return 1;
	return 0;
}

static void pdf_source_date(void **state)
{
	(void)state;
	struct rk_figure *f = bars_figure(0.2);
	struct rk_error err;
	char path[] = "/tmp/rk_test_figure_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	setenv("SOURCE_DATE_EPOCH", "1600000000", 1);
	assert_int_equal(rk_figure_write_pdf(f, path, &err), 0);
	size_t n1, n2;
	char *p1 = slurp(path, &n1);
	assert_int_equal(rk_figure_write_pdf(f, path, &err), 0);
	char *p2 = slurp(path, &n2);
	unsetenv("SOURCE_DATE_EPOCH");
	assert_true(!strncmp(p1, "%PDF-", 5));
	assert_int_equal(n1, n2);
	assert_memory_equal(p1, p2, n1);
	assert_true(has_bytes(p1, n1, "20200913122640Z")); /* 2020-09-13T12:26:40Z */
	unlink(path);
	free(p1);
	free(p2);
	rk_figure_free(f);
}

/*
 * Value labels: a bar just under the dashed 1.0 line gets its label moved
 * above the line, a whisker past the frame's top loses its label, and no
 * label crosses the line, another label or the frame. The legend, with 20
 * entries, stays above the frame.
 */
static void labels_clear(void **state)
{
	(void)state;
	struct rk_figure *f = rk_figure_new(NULL, "figure", "relative to a");
	const char *cats[3] = {"avg JCT", "p99 JCT", "makespan"};
	assert_int_equal(rk_figure_bars(f, cats, 3), 0);
	double a[3] = {1, 1, 1}, b[3] = {0.97, 1.5, 0.99}, c[3] = {0.5, 1.02, 1.9};
	double clo[3] = {0.4, 0.9, 1.0}, chi[3] = {0.6, 1.1, 5.0};
	assert_int_equal(rk_figure_bar_series(f, "a", a, NULL, NULL), 0);
	assert_int_equal(rk_figure_bar_series(f, "b", b, NULL, NULL), 0);
	assert_int_equal(rk_figure_bar_series(f, "c", c, clo, chi), 0);
	assert_int_equal(rk_figure_hline(f, 1.0, NULL), 0);
	rk_figure_yrange(f, 0, 2);
	cairo_surface_t *ms = cairo_recording_surface_create(CAIRO_CONTENT_COLOR_ALPHA, NULL);
	cairo_t *cr = cairo_create(ms);
	struct fig_layout L;
	fig_layout_compute(f, cr, &L);
	struct fig_label lab[FIG_MAX_LABELS];
	int n = fig_place_value_labels(f, cr, &L, lab, FIG_MAX_LABELS);
	double hy = fig_px_y(&L, 1.0);
	int b0 = -1, b2 = -1, c2 = -1;
	for (int k = 0; k < n; k++) {
		assert_false(hy > lab[k].y0 - 1.0 && hy < lab[k].y1 + 1.0); /* clear of the line */
		assert_true(lab[k].y0 >= L.y0 && lab[k].y1 <= L.y1);
		assert_true(lab[k].x0 >= L.x0 && lab[k].x1 <= L.x1);
		for (int j = 0; j < k; j++)
			assert_false(lab[k].x0 < lab[j].x1 && lab[j].x0 < lab[k].x1 &&
			             lab[k].y0 < lab[j].y1 && lab[j].y0 < lab[k].y1);
		if (lab[k].series == 1 && lab[k].category == 0)
			b0 = k;
		if (lab[k].series == 1 && lab[k].category == 2)
			b2 = k;
		if (lab[k].series == 2 && lab[k].category == 2)
			c2 = k;
	}
	/* 0.97 sits just under the line: its label went above the line */
	assert_true(b0 >= 0);
	assert_string_equal(lab[b0].text, "0.97");
	assert_true(lab[b0].y1 < hy);
	assert_true(b2 >= 0 && lab[b2].y1 < hy);
	/* c's makespan whisker runs past the frame's top (5 on a 0..2 axis): no place left */
	assert_int_equal(c2, -1);
	assert_int_equal(n, 8);
	cairo_destroy(cr);
	rk_figure_free(f);

	/* 20 series: the legend's rows end above the frame, within the page */
	struct rk_figure *g = rk_figure_new(NULL, "t (s)", "y");
	double x[2] = {0, 1}, y[2] = {0, 1};
	for (int i = 0; i < 20; i++) {
		char name[32];
		snprintf(name, sizeof(name), "policy-number-%d", i);
		assert_int_equal(rk_figure_line(g, name, RK_FIGURE_LINE, x, y, NULL, NULL, 2), 0);
	}
	cr = cairo_create(ms);
	fig_layout_compute(g, cr, &L);
	assert_true(L.legend_rows >= 2);
	assert_true(L.legend_rows * L.legend_cols >= 20);
	assert_true(L.legend_y + L.legend_rows * FIG_LEGEND_ROW <= L.y0);
	assert_true(L.legend_cols * L.legend_colw <= L.w);
	assert_true(L.y1 - L.y0 == FIG_PLOT_H && L.h > 162);
	cairo_destroy(cr);
	cairo_surface_destroy(ms);
	rk_figure_free(g);
}

static void errors(void **state)
{
	(void)state;
	struct rk_error err;
	struct rk_figure *f = bars_figure(0.2);
	double x[2] = {1, 2}, y[2] = {1, 2};
	/* a figure has lines or bars, not both */
	assert_int_equal(rk_figure_line(f, "l", RK_FIGURE_LINE, x, y, NULL, NULL, 2), RK_EINVAL);
	const char *cats[1] = {"c"};
	assert_int_equal(rk_figure_bars(f, cats, 1), RK_EINVAL);
	assert_int_equal(rk_figure_bar_series(f, "s", NULL, NULL, NULL), RK_EINVAL);
	assert_int_equal(rk_figure_bar_series(f, "s", y, y, NULL), RK_EINVAL);
	/* writing where it cannot: the path and the reason */
	assert_int_equal(rk_figure_write_svg(f, "/nonexistent-rk-dir/fig.svg", &err), RK_EIO);
	assert_non_null(strstr(err.msg, "/nonexistent-rk-dir/fig.svg"));
	assert_non_null(strstr(err.msg, "No such file or directory"));
	assert_int_equal(rk_figure_write_pdf(f, "/nonexistent-rk-dir/fig.pdf", &err), RK_EIO);
	assert_non_null(strstr(err.msg, "/nonexistent-rk-dir/fig.pdf"));
	assert_int_equal(rk_figure_write_svg(f, "", &err), RK_EINVAL);
	assert_int_equal(rk_figure_svg_text(f, NULL, NULL, &err), RK_EINVAL);
	assert_int_equal(rk_figure_svg_text(NULL, NULL, NULL, &err), RK_EINVAL);
	char *s = NULL;
	size_t n = 0;
	assert_int_equal(rk_figure_svg_text(NULL, &s, &n, &err), RK_EINVAL);
	assert_int_equal(rk_figure_hline(f, INFINITY, NULL), RK_EINVAL);
	rk_figure_free(f);
	struct rk_figure *g = rk_figure_new(NULL, "x", "y");
	assert_int_equal(rk_figure_line(g, "l", RK_FIGURE_LINE, x, y, NULL, NULL, 0), RK_EINVAL);
	assert_int_equal(rk_figure_line(g, "l", RK_FIGURE_LINE, NULL, y, NULL, NULL, 2), RK_EINVAL);
	assert_int_equal(rk_figure_line(g, "l", RK_FIGURE_LINE, x, y, y, NULL, 2), RK_EINVAL);
	assert_int_equal(rk_figure_line(g, "l", RK_FIGURE_LINE, x, y, NULL, NULL, 2), 0);
	assert_int_equal(rk_figure_bars(g, cats, 1), RK_EINVAL); /* lines first: no bars */
	rk_figure_free(g);
	rk_figure_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(ticks_tidy),
	    cmocka_unit_test(bars_range),
	    cmocka_unit_test(svg_standalone_same_bytes),
	    cmocka_unit_test(pdf_source_date),
	    cmocka_unit_test(labels_clear),
	    cmocka_unit_test(errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
