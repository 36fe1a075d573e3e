/*
 * The HTML report's shared style and its per-policy comparison figure
 * (report.h, report_internal.h): average JCT, p99 JCT and makespan of every
 * policy relative to one reference policy, one bar per policy - the headline
 * figure of the Rubick (Fig. 8), Sia (Fig. 6) and Pollux (Fig. 7) papers.
 * Under `--seeds` a bar is the mean over seeds and its error bar the 95%
 * Student t interval, both divided by the reference's mean.
 */
#include "sim/report/report_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Okabe-Ito's colour-blind-safe eight first (as before, yellow darkened to
 * read on white), then Paul Tol's muted scheme and three neutrals: 20
 * distinct colours. Dashes cycle with period 4 on top, so neighbours in the
 * list also differ in dash and two policies never share both.
 */
static const char *const palette[20] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                        "#56B4E9", "#000000", "#B8A200", "#332288", "#882255",
                                        "#44AA99", "#117733", "#999933", "#CC6677", "#AA4499",
                                        "#88CCEE", "#666666", "#8C564B", "#DDCC77", "#7F3C8D"};
static const char *const dashes[4] = {"", "7 3", "2 2", "8 3 2 3"};

const char *report_colour(int i)
{
	return palette[(size_t)i % 20];
}

const char *report_dash(int i)
{
	return dashes[(size_t)i % 4];
}

void report_put_escaped(FILE *f, const char *s)
{
	for (s = s ? s : ""; *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

/* A policy name cut to `max` characters with "..." (the table has it whole). */
static void put_short(FILE *f, const char *s, size_t max)
{
	char buf[64];
	s = s ? s : "";
	if (strlen(s) <= max || max + 4 > sizeof(buf)) {
		report_put_escaped(f, s);
		return;
	}
	memcpy(buf, s, max - 3);
	memcpy(buf + max - 3, "...", 4);
	report_put_escaped(f, buf);
}

void report_legend(FILE *f, const struct rk_report *r, double x, double y, int bars)
{
	for (int i = 0; i < r->n_runs; i++) {
		double yy = y + 12.5 * i;
		if (bars)
			fprintf(
			    f,
			    "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"8\" fill=\"%s\"/>",
			    x + 3, yy - 8, report_colour(i));
		else
			fprintf(
			    f,
			    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
			    "stroke-width=\"2.5\" stroke-dasharray=\"%s\"/>",
			    x, yy - 4, x + 22, yy - 4, report_colour(i), report_dash(i));
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x + 26, yy);
		put_short(f, r->runs[i].policy, 28);
		fputs("</text>\n", f);
	}
}

/* Bar chart geometry: room under the plot for policy names at -40 degrees. */
#define BW  900.0
#define BH  280.0
#define BML 70.0
#define BMR 40.0
#define BMT 16.0
#define BMB 100.0
#define BPW (BW - BML - BMR)
#define BPH (BH - BMT - BMB)

/* Mean and half-width of figure k of run i (its one value without seeds). */
static void figure(const struct rk_report_run *u, enum rk_report_figure k, double *mean,
                   double *half)
{
	struct rk_report_stat st;
	if (u->seeds && !rk_report_stat_compute(u->seeds->values[k], u->seeds->n, &st)) {
		*mean = st.mean;
		*half = st.half95;
		return;
	}
	*mean = rk_report_figure_value(&u->summary, k);
	*half = 0.0;
}

static double tick_step(double range)
{
	double raw = range / 5, p = pow(10.0, floor(log10(raw))), m = raw / p;
	return (m <= 1.0 ? 1.0 : m <= 2.0 ? 2.0 : m <= 5.0 ? 5.0 : 10.0) * p;
}

static void one_chart(FILE *f, const struct rk_report *r, int ref, enum rk_report_figure k)
{
	static const char *const titles[RK_FIG_COUNT] = {"Average JCT", "p99 JCT", "Makespan"};
	double ref_mean, ref_half, vmax = 0;
	figure(&r->runs[ref], k, &ref_mean, &ref_half);
	/* A reference without completed jobs has no scale: plot seconds instead. */
	int rel = ref_mean > 0 && isfinite(ref_mean);
	double scale = rel ? ref_mean : 1.0;
	for (int i = 0; i < r->n_runs; i++) {
		double m, h;
		figure(&r->runs[i], k, &m, &h);
		if (isfinite(m + h) && (m + h) / scale > vmax)
			vmax = (m + h) / scale;
	}
	if (!(vmax > 0))
		vmax = 1.0;
	double step = tick_step(vmax * 1.1), yhi = ceil(vmax * 1.1 / step) * step;
	fputs("<h3>", f);
	fputs(titles[k], f);
	if (rel) {
		fputs(" relative to ", f);
		report_put_escaped(f, r->runs[ref].policy);
		fprintf(f, " (%.1f s = 1)", ref_mean);
	} else {
		fputs(" (s)", f);
	}
	fprintf(f,
	        "</h3>\n<svg id=\"bars-%s\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f "
	        "%.0f\" role=\"img\">\n",
	        rk_report_figure_name(k), BW, BH, BW, BH);
	fprintf(f,
	        "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fff\" "
	        "stroke=\"#999\"/>\n",
	        BML, BMT, BPW, BPH);
	for (double v = 0; v <= yhi + step * 1e-9; v += step) {
		double py = BMT + BPH - v / yhi * BPH;
		fprintf(f,
		        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
		        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.3g</text>\n",
		        BML, py, BML + BPW, py, BML - 6, py + 4, v);
	}
	double slot = BPW / r->n_runs, bw = slot * 0.7 < 60 ? slot * 0.7 : 60;
	for (int i = 0; i < r->n_runs; i++) {
		double m, h;
		figure(&r->runs[i], k, &m, &h);
		double cx = BML + slot * (i + 0.5), v = isfinite(m) ? m / scale : 0;
		double top = BMT + BPH - v / yhi * BPH;
		fprintf(
		    f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
		    cx - bw / 2, top, bw, BMT + BPH - top, report_colour(i));
		if (h > 0) {
			double lo = BMT + BPH - (m - h) / scale / yhi * BPH;
			double hi = BMT + BPH - (m + h) / scale / yhi * BPH;
			fprintf(f,
			        "<path d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\" "
			        "stroke=\"#222\" stroke-width=\"1.2\" fill=\"none\"/>\n",
			        cx, lo, hi, cx - bw / 4, lo, cx + bw / 4, cx - bw / 4, hi,
			        cx + bw / 4);
			top = hi;
		}
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.2f</text>\n", cx,
		        top - 4, v);
		double ly = BMT + BPH + 12;
		fprintf(f,
		        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
		        "transform=\"rotate(-40 %.1f %.1f)\">",
		        cx, ly, cx, ly);
		put_short(f, r->runs[i].policy, 28);
		fputs("</text>\n", f);
	}
	if (rel) { /* the reference's level */
		double py = BMT + BPH - 1.0 / yhi * BPH;
		fprintf(f,
		        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\" "
		        "stroke-dasharray=\"4 3\"/>\n",
		        BML, py, BML + BPW, py);
	}
	fputs("</svg>\n", f);
}

int report_chart_bars(FILE *f, const struct rk_report *r)
{
	if (r->n_runs == 0)
		return 0;
	int ref = 0;
	if (r->normalize) {
		ref = -1;
		for (int i = 0; i < r->n_runs && ref < 0; i++)
			if (r->runs[i].policy && !strcmp(r->runs[i].policy, r->normalize))
				ref = i;
		if (ref < 0)
			return RK_EINVAL;
	}
	fputs("<h2>Policies compared</h2>\n", f);
	if (r->seeds_n > 0)
		fprintf(f,
		        "<p>Bars: mean over seeds %llu-%llu (%d runs each); error bars: 95%% "
		        "Student t interval of the mean.</p>\n",
		        (unsigned long long)r->seeds_first, (unsigned long long)r->seeds_last,
		        r->seeds_n);
	for (int k = 0; k < RK_FIG_COUNT; k++)
		one_chart(f, r, ref, (enum rk_report_figure)k);
	return 0;
}
