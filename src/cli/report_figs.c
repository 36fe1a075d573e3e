/*
 * The figures of `rubick report` (report_sweep.h, docs/sim.md "Sweeps"),
 * drawn through include/rubick/figure.h: per metric a line per policy
 * against x with its 95% interval band (as Pollux's Fig. 8 and Gavel's
 * Fig. 9 plot JCT against load), the JCT CDF over every seed at the most
 * contended x, and grouped bars of GPU-hours and reconfigurations per x and
 * policy. Each goes to fig-NAME.svg and fig-NAME.pdf, and index.html
 * inlines the SVGs: one self-contained page, no script, style or link
 * outside it.
 */
#include "cli/commands.h"
#include "cli/report_sweep.h"
#include "cli/util.h"

#include "rubick/figure.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A CDF keeps at most this many steps: beyond it a column-wide figure shows no more. */
#define CDF_POINTS_MAX 2000

struct fig_out {
	const char *name; /* fig-NAME.svg / .pdf */
	char caption[512];
	struct rk_figure *fig;
};

/* One line per policy of metric k against x, with its 95% interval band. */
static struct rk_figure *metric_lines(const struct rk_sweep *sw, enum rk_sweep_metric k)
{
	struct rk_figure *fig = rk_figure_new(NULL, sw->x_label, rk_sweep_metric_label(k));
	double *x = malloc((size_t)sw->n_xs * 4 * sizeof(double));
	if (!fig || !x) {
		rk_figure_free(fig);
		free(x);
		return NULL;
	}
	double *y = x + sw->n_xs, *lo = y + sw->n_xs, *hi = lo + sw->n_xs;
	if (k == RK_SW_GPU_UTIL)
		rk_figure_yrange(fig, 0, 1);
	int rc = 0;
	for (int p = 0; !rc && p < sw->n_policies; p++) {
		int n = 0;
		for (int i = 0; i < sw->n_xs; i++) {
			const struct rk_sweep_point *pt = rk_sweep_at(sw, p, i);
			if (!pt)
				continue;
			x[n] = pt->x;
			y[n] = pt->st[k].mean;
			lo[n] = pt->st[k].mean - pt->st[k].half95;
			hi[n] = pt->st[k].mean + pt->st[k].half95;
			n++;
		}
		if (n)
			rc = rk_figure_line(fig, sw->policies[p], RK_FIGURE_LINE, x, y, lo, hi, n);
	}
	free(x);
	if (rc) {
		rk_figure_free(fig);
		return NULL;
	}
	return fig;
}

/* The empirical CDF of every seed's completed JCTs at cdf_x, one step line per policy. */
static struct rk_figure *jct_cdf(const struct rk_sweep *sw)
{
	struct rk_figure *fig = rk_figure_new(NULL, "JCT (s)", "fraction of jobs");
	double *x = malloc(2 * CDF_POINTS_MAX * sizeof(double));
	if (!fig || !x) {
		rk_figure_free(fig);
		free(x);
		return NULL;
	}
	double *y = x + CDF_POINTS_MAX;
	rk_figure_xscale(fig, RK_FIGURE_LOG); /* JCTs span minutes to days */
	rk_figure_yrange(fig, 0, 1);
	int rc = 0, at = 0;
	while (at < sw->n_xs && sw->xs[at] != sw->cdf_x)
		at++;
	for (int p = 0; !rc && p < sw->n_policies; p++) {
		const struct rk_sweep_point *pt = rk_sweep_at(sw, p, at);
		if (!pt || pt->n_jct == 0)
			continue;
		/* every job, or CDF_POINTS_MAX evenly spaced ranks (the last always) */
		int n = pt->n_jct < CDF_POINTS_MAX ? pt->n_jct : CDF_POINTS_MAX;
		for (int i = 0; i < n; i++) {
			long r = n == pt->n_jct ? i : (long)((double)(i + 1) * pt->n_jct / n) - 1;
			x[i] = pt->jct[r];
			y[i] = (double)(r + 1) / pt->n_jct;
		}
		rc = rk_figure_line(fig, sw->policies[p], RK_FIGURE_STEP, x, y, NULL, NULL, n);
	}
	free(x);
	if (rc) {
		rk_figure_free(fig);
		return NULL;
	}
	return fig;
}

/* Bars of metric k: one group per x, one bar per policy, whiskers the 95% interval. */
static struct rk_figure *metric_bars(const struct rk_sweep *sw, enum rk_sweep_metric k)
{
	struct rk_figure *fig = rk_figure_new(NULL, sw->x_label, rk_sweep_metric_label(k));
	char(*names)[32] = calloc((size_t)sw->n_xs, sizeof(*names));
	const char **cats = calloc((size_t)sw->n_xs, sizeof(*cats));
	double *v = malloc((size_t)sw->n_xs * 3 * sizeof(double));
	int rc = !fig || !names || !cats || !v;
	for (int i = 0; !rc && i < sw->n_xs; i++) {
		snprintf(names[i], sizeof(names[i]), "%g", sw->xs[i]);
		cats[i] = names[i];
	}
	if (!rc)
		rc = rk_figure_bars(fig, cats, sw->n_xs);
	for (int p = 0; !rc && p < sw->n_policies; p++) {
		double *lo = v + sw->n_xs, *hi = lo + sw->n_xs;
		for (int i = 0; i < sw->n_xs; i++) {
			const struct rk_sweep_point *pt = rk_sweep_at(sw, p, i);
			/* a policy missing at one x draws no bar there (NAN), not a zero */
			v[i] = pt ? pt->st[k].mean : NAN;
			lo[i] = pt ? pt->st[k].mean - pt->st[k].half95 : NAN;
			hi[i] = pt ? pt->st[k].mean + pt->st[k].half95 : NAN;
		}
		rc = rk_figure_bar_series(fig, sw->policies[p], v, lo, hi);
	}
	free(names);
	free(cats);
	free(v);
	if (rc) {
		rk_figure_free(fig);
		return NULL;
	}
	return fig;
}

/* The sweep's numbers as a table: policy, x, n, mean ± half-width per metric. */
static void html_table(FILE *f, const struct rk_sweep *sw)
{
	fputs("<table>\n<tr><th>policy</th><th>", f);
	rk_report_put_html_text(f, sw->x_name);
	fputs("</th><th>seeds</th>", f);
	for (int k = 0; k < RK_SW_COUNT; k++)
		fprintf(f, "<th>%s</th>", rk_sweep_metric_name((enum rk_sweep_metric)k));
	fputs("</tr>\n", f);
	for (int i = 0; i < sw->n_pts; i++) {
		const struct rk_sweep_point *pt = &sw->pts[i];
		fputs("<tr><td>", f);
		rk_report_put_html_text(f, sw->policies[pt->policy]);
		fprintf(f, "</td><td>%g</td><td>%d</td>", pt->x, pt->n);
		for (int k = 0; k < RK_SW_COUNT; k++) {
			int dec = k < RK_SW_GPU_UTIL ? 1 : k == RK_SW_GPU_HOURS ? 2 : 3;
			fprintf(f, "<td>%.*f &plusmn; %.*f</td>", dec, pt->st[k].mean, dec,
			        pt->st[k].half95);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static int write_index(const char *dir, const struct rk_sweep *sw, const struct fig_out *figs,
                       int n)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/index.html", dir);
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "rubick report: --out: %s: %s\n", path, strerror(errno));
		return RK_EXIT_FAILURE;
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<title>rubick report: sweep</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:2em;max-width:70em}\n"
	      "table{border-collapse:collapse;font-size:90%}\n"
	      "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\n"
	      "td:first-child,th:first-child{text-align:left}\n"
	      "figure{display:inline-block;margin:1em;vertical-align:top;max-width:30em}\n"
	      "</style></head><body>\n<h1>Sweep over ",
	      f);
	rk_report_put_html_text(f, sw->x_label);
	fputs("</h1>\n<p>Per policy and ", f);
	rk_report_put_html_text(f, sw->x_name);
	fputs(": mean over the run's seeds &plusmn; the half-width of the 95% Student t "
	      "interval, t(0.975, n&minus;1)&middot;sd/&radic;n. Runs:",
	      f);
	for (int i = 0; i < sw->n_pts; i++) {
		int first = 1;
		for (int j = 0; j < i && first; j++)
			first = strcmp(sw->pts[j].dir, sw->pts[i].dir) != 0;
		if (!first)
			continue;
		fputs(i ? ", <code>" : " <code>", f);
		rk_report_put_html_text(f, sw->pts[i].dir);
		fprintf(f, "</code> (%s %g)", sw->x_name, sw->pts[i].x);
	}
	fputs(".</p>\n", f);
	html_table(f, sw);
	int rc = 0;
	for (int i = 0; !rc && i < n; i++) {
		char *svg = NULL;
		size_t len = 0;
		struct rk_error err;
		if (rk_figure_svg_text(figs[i].fig, &svg, &len, &err)) {
			fprintf(stderr, "rubick report: %s: %s\n", figs[i].name, err.msg);
			rc = RK_EXIT_FAILURE;
			break;
		}
		fprintf(f, "<figure id=\"%s\">\n", figs[i].name);
		fwrite(svg, 1, len, f);
		fputs("\n<figcaption>", f);
		rk_report_put_html_text(f, figs[i].caption);
		fprintf(f,
		        " (<code>fig-%s.svg</code>, <code>fig-%s.pdf</code>)</figcaption>\n"
		        "</figure>\n",
		        figs[i].name, figs[i].name);
		free(svg);
	}
	fputs("</body></html>\n", f);
	int bad = ferror(f);
	if (fclose(f) || bad) {
		fprintf(stderr, "rubick report: --out: %s: write failed\n", path);
		rc = RK_EXIT_FAILURE;
	}
	return rc;
}

int rk_sweep_write_figures(const struct rk_sweep *sw, const char *dir, int *n_figs)
{
	static const struct {
		const char *name;
		enum rk_sweep_metric k;
		int bars;
	} plan[] = {
	    {"avg-jct", RK_SW_AVG_JCT, 0},     {"p99-jct", RK_SW_P99_JCT, 0},
	    {"makespan", RK_SW_MAKESPAN, 0},   {"gpu-util", RK_SW_GPU_UTIL, 0},
	    {"jct-cdf", RK_SW_AVG_JCT, 2},     {"gpu-hours", RK_SW_GPU_HOURS, 1},
	    {"reconfigs", RK_SW_RECONFIGS, 1},
	};
	enum { N = sizeof(plan) / sizeof(plan[0]) };
	struct fig_out figs[N];
	memset(figs, 0, sizeof(figs));
	int rc = 0;
	for (int i = 0; !rc && i < N; i++) {
		figs[i].name = plan[i].name;
		const char *what = rk_sweep_metric_label(plan[i].k);
		if (plan[i].bars == 2) {
			figs[i].fig = jct_cdf(sw);
			snprintf(
			    figs[i].caption, sizeof(figs[i].caption),
			    "CDF of the JCT of completed jobs at %s %g, %s seeds pooled per policy",
			    sw->x_name, sw->cdf_x, sw->cdf_all_seeds ? "all" : "the first of the");
		} else if (plan[i].bars) {
			figs[i].fig = metric_bars(sw, plan[i].k);
			snprintf(figs[i].caption, sizeof(figs[i].caption),
			         "%s per policy and %s; whiskers: 95%% interval over seeds", what,
			         sw->x_name);
		} else {
			figs[i].fig = metric_lines(sw, plan[i].k);
			snprintf(figs[i].caption, sizeof(figs[i].caption),
			         "%s against %s; bands: 95%% interval over seeds", what,
			         sw->x_label);
		}
		if (!figs[i].fig) {
			fprintf(stderr, "rubick report: fig-%s: out of memory\n", plan[i].name);
			rc = RK_EXIT_FAILURE;
		}
	}
	for (int i = 0; !rc && i < N; i++) {
		char path[4200];
		struct rk_error err;
		snprintf(path, sizeof(path), "%s/fig-%s.svg", dir, figs[i].name);
		int e = rk_figure_write_svg(figs[i].fig, path, &err);
		if (!e) {
			snprintf(path, sizeof(path), "%s/fig-%s.pdf", dir, figs[i].name);
			e = rk_figure_write_pdf(figs[i].fig, path, &err);
		}
		if (e) {
			fprintf(stderr, "rubick report: --out: %s\n", err.msg);
			rc = RK_EXIT_FAILURE;
		}
	}
	if (!rc)
		rc = write_index(dir, sw, figs, N);
	for (int i = 0; i < N; i++)
		rk_figure_free(figs[i].fig);
	*n_figs = rc ? 0 : N;
	return rc;
}
