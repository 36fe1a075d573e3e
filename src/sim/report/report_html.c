/*
 * The self-contained HTML report (report.h): a summary table and three inline
 * SVG charts - JCT CDF, GPU utilisation over time, queue length over time -
 * one line per policy. No scripts, fonts, style sheets or links: it opens in
 * a browser with no network. Coordinates print with one decimal and every
 * choice (bucketing, ticks, colours) depends only on the data, so identical
 * runs give identical bytes.
 */
#include "rubick/report.h"

#include "sim/report/report_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Plot geometry (SVG user units). */
#define W  900.0
#define H 300.0
#define ML 70.0  /* left margin: y tick labels */
#define MR 210.0 /* the legend column right of the plot: up to 20 rows never cover data */
#define MT 16.0
#define MB 45.0 /* bottom margin: x tick labels and axis title */
#define PW (W - ML - MR)
#define PH (H - MT - MB)

/* CDFs longer than this are thinned to this many steps. */
#define MAX_POINTS 1200
/*
 * Time series are averaged over this many equal bins of the whole run (all
 * policies share the bins): per-event steps of a 10,000-job trace are an
 * unreadable smear, 200 bins read like the papers' utilisation plots.
 */
#define TIME_BINS 200

#define colour      report_colour
#define put_escaped report_put_escaped

/* A linear or log10 axis mapping data [lo, hi] onto pixels [p0, p1]. */
struct axis {
	double lo, hi;
	int log;
	double p0, p1;
};

static double ax_map(const struct axis *a, double v)
{
	double t;
	if (a->log) {
		double lv = log10(v > a->lo ? v : a->lo);
		t = (lv - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
	} else {
		t = (v - a->lo) / (a->hi - a->lo);
	}
	return a->p0 + t * (a->p1 - a->p0);
}

/* Round `x` up to 1, 2 or 5 times a power of ten: tidy linear tick steps. */
static double nice_step(double range, int ticks)
{
	double raw = range / ticks;
	double p = pow(10.0, floor(log10(raw)));
	double m = raw / p;
	double n = m <= 1.0 ? 1.0 : m <= 2.0 ? 2.0 : m <= 5.0 ? 5.0 : 10.0;
	return n * p;
}

/* Tick label: integers without decimals, others with up to 3 significant figures. */
static void put_num(FILE *f, double v)
{
	if (fabs(v - round(v)) < 1e-9 && fabs(v) < 1e15)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.3g", v);
}

static void svg_open(FILE *f, const char *title, const char *id)
{
	fprintf(f, "<h2>");
	put_escaped(f, title);
	fprintf(f, "</h2>\n<svg id=\"%s\" width=\"%.0f\" "
		   "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
		id, W, H, W, H);
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fff\" "
		   "stroke=\"#999\"/>\n",
		ML, MT, PW, PH);
}

static void svg_axes(FILE *f, const struct axis *x, const struct axis *y, const char *xtitle,
		     const char *ytitle)
{
	/* x ticks */
	if (x->log) {
		for (double d = pow(10.0, floor(log10(x->lo))); d <= x->hi * 1.0000001; d *= 10.0) {
			if (d < x->lo * 0.9999999)
				continue;
			double px = ax_map(x, d);
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
				   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
				px, MT, px, MT + PH, px, MT + PH + 16);
			put_num(f, d);
			fputs("</text>\n", f);
		}
	} else {
		double step = nice_step(x->hi - x->lo, 6);
		for (double v = ceil(x->lo / step) * step; v <= x->hi + step * 1e-9; v += step) {
			double px = ax_map(x, v);
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
				   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
				px, MT, px, MT + PH, px, MT + PH + 16);
			put_num(f, v);
			fputs("</text>\n", f);
		}
	}
	double ystep = nice_step(y->hi - y->lo, 5);
	for (double v = ceil(y->lo / ystep) * ystep; v <= y->hi + ystep * 1e-9; v += ystep) {
		double py = ax_map(y, v);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
			   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
			ML, py, ML + PW, py, ML - 6, py + 4);
		put_num(f, v);
		fputs("</text>\n", f);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", ML + PW / 2, H - 8);
	put_escaped(f, xtitle);
	fprintf(f, "</text>\n<text x=\"14\" y=\"%.1f\" text-anchor=\"middle\" "
		   "transform=\"rotate(-90 14 %.1f)\">",
		MT + PH / 2, MT + PH / 2);
	put_escaped(f, ytitle);
	fputs("</text>\n", f);
}

/* Right of the plot area, so no data hides behind it. */
static void svg_legend(FILE *f, const struct rk_report *r)
{
	report_legend(f, r, ML + PW + 14, MT + 10, 0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Sorted JCTs (s) of a run's completed jobs; *n = count. NULL with *n = 0 when none. */
static double *sorted_jcts(const struct rk_report_run *u, int *n, int *oom)
{
	*n = 0;
	if (u->n_outcomes == 0)
		return NULL;
	double *v = malloc((size_t)u->n_outcomes * sizeof(*v));
	if (!v) {
		*oom = 1;
		return NULL;
	}
	for (int j = 0; j < u->n_outcomes; j++)
		if (u->outcomes[j].completed)
			v[(*n)++] = (double)(u->outcomes[j].finish_ms - u->outcomes[j].submit_ms) / 1000.0;
	qsort(v, (size_t)*n, sizeof(*v), cmp_double);
	return v;
}

static int chart_cdf(FILE *f, const struct rk_report *r)
{
	double lo = INFINITY, hi = 0.0;
	int oom = 0;
	for (int i = 0; i < r->n_runs; i++)
		for (int j = 0; j < r->runs[i].n_outcomes; j++) {
			const struct rk_job_outcome *o = &r->runs[i].outcomes[j];
			if (!o->completed)
				continue;
			double v = (double)(o->finish_ms - o->submit_ms) / 1000.0;
			if (v > hi)
				hi = v;
			if (v > 0 && v < lo)
				lo = v;
		}
	struct axis x = {.lo = 0, .hi = 1, .log = 0, .p0 = ML, .p1 = ML + PW};
	if (hi > 0) {
		/* JCTs span orders of magnitude in real traces: log scale when they do. */
		if (isfinite(lo) && hi / lo > 100.0) {
			x.log = 1;
			x.lo = pow(10.0, floor(log10(lo)));
			x.hi = pow(10.0, ceil(log10(hi)));
		} else {
			x.hi = hi;
		}
	}
	struct axis y = {.lo = 0, .hi = 1, .log = 0, .p0 = MT + PH, .p1 = MT};
	svg_open(f, "JCT CDF", "jct-cdf");
	svg_axes(f, &x, &y, x.log ? "job completion time (s, log scale)" : "job completion time (s)",
		 "fraction of completed jobs");
	for (int i = 0; i < r->n_runs; i++) {
		int n = 0;
		double *v = sorted_jcts(&r->runs[i], &n, &oom);
		if (oom)
			return RK_ENOMEM;
		if (n > 0) {
			/* Empirical CDF as a step line; long runs are thinned to MAX_POINTS steps. */
			int stride = n > MAX_POINTS ? (n + MAX_POINTS - 1) / MAX_POINTS : 1;
			fprintf(f,
			        "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
			        "stroke-dasharray=\"%s\" points=\"",
			        colour(i), report_dash(i));
			double prev_y = ax_map(&y, 0.0);
			for (int k = 0; k < n; k += stride) {
				int last = k + stride - 1 < n - 1 ? k + stride - 1 : n - 1;
				double px = ax_map(&x, v[last]);
				double py = ax_map(&y, (double)(last + 1) / (double)n);
				fprintf(f, "%.1f,%.1f %.1f,%.1f ", px, prev_y, px, py);
				prev_y = py;
			}
			fputs("\"/>\n", f);
		}
		free(v);
	}
	svg_legend(f, r);
	fputs("</svg>\n", f);
	return 0;
}

enum series { SERIES_UTIL, SERIES_QUEUE };

static double series_value(const struct rk_sim_sample *s, enum series k)
{
	if (k == SERIES_QUEUE)
		return s->queue_len;
	return s->gpus_total > 0 ? (double)s->gpus_alloc / (double)s->gpus_total : 0.0;
}

/*
 * One run's series over TIME_BINS equal bins of [t0, t1] (the span of every
 * run, so policies share bins): each bin shows the time-weighted average of
 * the piecewise-constant samples in it (the area under the line is kept).
 * Bins outside the run's own first..last sample are not drawn.
 */
static void series_line(FILE *f, const struct rk_report_run *u, enum series k, const struct axis *x,
                        const struct axis *y, int i, double t0, double t1)
{
	if (u->n_samples == 0)
		return;
	const struct rk_sim_sample *s = u->samples;
	int n = u->n_samples;
	double r0 = (double)s[0].t_ms / 1000.0, r1 = (double)s[n - 1].t_ms / 1000.0;
	fprintf(f,
	        "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
	        "stroke-dasharray=\"%s\" points=\"",
	        colour(i), report_dash(i));
	if (r1 <= r0) {
		double py = ax_map(y, series_value(&s[n - 1], k));
		fprintf(f, "%.1f,%.1f %.1f,%.1f", ax_map(x, r0), py, ax_map(x, r0), py);
		fputs("\"/>\n", f);
		return;
	}
	double width = (t1 - t0) / TIME_BINS;
	int j = 0;
	for (int b = 0; b < TIME_BINS; b++) {
		double b0 = t0 + width * b, b1 = b + 1 == TIME_BINS ? t1 : b0 + width;
		b0 = b0 > r0 ? b0 : r0;
		b1 = b1 < r1 ? b1 : r1;
		if (b1 <= b0)
			continue;
		double area = 0.0;
		/* samples j.. overlap the bin; sample j holds until sample j+1 */
		while (j + 1 < n && (double)s[j + 1].t_ms / 1000.0 <= b0)
			j++;
		for (int q = j; q < n - 1; q++) {
			double a0 = (double)s[q].t_ms / 1000.0, a1 = (double)s[q + 1].t_ms / 1000.0;
			if (a0 >= b1)
				break;
			double lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
			if (hi > lo)
				area += (hi - lo) * series_value(&s[q], k);
		}
		double v = area / (b1 - b0);
		fprintf(f, "%.1f,%.1f %.1f,%.1f ", ax_map(x, b0), ax_map(y, v), ax_map(x, b1),
		        ax_map(y, v));
	}
	fputs("\"/>\n", f);
}

static void chart_series(FILE *f, const struct rk_report *r, enum series k)
{
	double tmin = INFINITY, tmax = -INFINITY, vmax = 0.0;
	for (int i = 0; i < r->n_runs; i++)
		for (int j = 0; j < r->runs[i].n_samples; j++) {
			const struct rk_sim_sample *s = &r->runs[i].samples[j];
			double t = (double)s->t_ms / 1000.0;
			tmin = t < tmin ? t : tmin;
			tmax = t > tmax ? t : tmax;
			double v = series_value(s, k);
			vmax = v > vmax ? v : vmax;
		}
	if (!isfinite(tmin)) {
		tmin = 0.0;
		tmax = 1.0;
	}
	if (tmax <= tmin)
		tmax = tmin + 1.0;
	/* Hours read better than seconds once a run is longer than two hours. */
	int hours = tmax - tmin > 7200.0;
	double scale = hours ? 3600.0 : 1.0;
	struct axis x = {.lo = tmin, .hi = tmax, .log = 0, .p0 = ML, .p1 = ML + PW};
	struct axis xl = {.lo = tmin / scale, .hi = tmax / scale, .log = 0, .p0 = ML, .p1 = ML + PW};
	double yhi = k == SERIES_UTIL ? 1.0 : (vmax > 0 ? vmax : 1.0);
	struct axis y = {.lo = 0, .hi = yhi, .log = 0, .p0 = MT + PH, .p1 = MT};
	if (k == SERIES_UTIL)
		svg_open(f, "GPU utilisation over time", "gpu-util");
	else
		svg_open(f, "Queue length over time", "queue-len");
	svg_axes(f, &xl, &y, hours ? "time (h)" : "time (s)",
		 k == SERIES_UTIL ? "allocated / total GPUs" : "pending jobs");
	for (int i = 0; i < r->n_runs; i++)
		series_line(f, &r->runs[i], k, &x, &y, i, tmin, tmax);
	svg_legend(f, r);
	fputs("</svg>\n", f);
}

/* Under --seeds: mean and 95% interval per policy (the table above is the first seed). */
static void seeds_table(FILE *f, const struct rk_report *r)
{
	if (r->seeds_n <= 0)
		return;
	fprintf(f, "<h2>Over seeds %llu-%llu</h2>\n<p>%d runs per policy, ",
	        (unsigned long long)r->seeds_first, (unsigned long long)r->seeds_last, r->seeds_n);
	put_escaped(f, r->seeds_vary);
	fputs(" seed(s) varied; mean &plusmn; half-width of the 95% Student t interval (the "
	      "table above is the first seed's run).</p>\n<table>\n<tr><th>policy</th>",
	      f);
	for (int k = 0; k < RK_FIG_COUNT; k++)
		fprintf(f, "<th>%s</th>", rk_report_figure_name((enum rk_report_figure)k));
	fputs("</tr>\n", f);
	for (int i = 0; i < r->n_runs; i++) {
		const struct rk_report_run *u = &r->runs[i];
		if (!u->seeds)
			continue;
		fputs("<tr><td>", f);
		put_escaped(f, u->policy);
		fputs("</td>", f);
		for (int k = 0; k < RK_FIG_COUNT; k++) {
			struct rk_report_stat st;
			if (rk_report_stat_compute(u->seeds->values[k], u->seeds->n, &st))
				st.mean = st.half95 = NAN;
			fprintf(f, "<td>%.1f &plusmn; %.1f</td>", st.mean, st.half95);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

/*
 * The invocation: version, command line, provenance (source, build, time,
 * host, what the workload seed draws, every repetition's seeds, the inputs'
 * sha256; docs/sim.md "Provenance") and every option.
 */
static void meta_block(FILE *f, const struct rk_report_meta *m)
{
	if (!m)
		return;
	fputs("<p>rubick ", f);
	put_escaped(f, m->version);
	fprintf(f, "; workload seed %llu, policy seed %llu</p>\n",
	        (unsigned long long)m->workload_seed, (unsigned long long)m->policy_seed);
	if (m->source) {
		fputs("<p>built from ", f);
		if (m->commit && *m->commit) {
			fputs("commit <code>", f);
			put_escaped(f, m->commit);
			fputs(m->dirty > 0 ? "</code> with uncommitted changes" : "</code>", f);
		} else {
			fputs("release ", f);
			put_escaped(f, m->version);
		}
		fputs(" (", f);
		put_escaped(f, m->build_type);
		fputs(" build, sanitizers: ", f);
		put_escaped(f, m->sanitize);
		fputs("); run at ", f);
		put_escaped(f, m->timestamp);
		fputs(" on ", f);
		put_escaped(f, m->host);
		fputs("</p>\n", f);
	}
	if (m->workload_seed_draws) {
		fputs("<p>The workload seed draws: ", f);
		put_escaped(f, m->workload_seed_draws);
		fputs(".</p>\n", f);
	}
	fputs("<pre>", f);
	put_escaped(f, m->command);
	fputs("</pre>\n", f);
	if (m->n_reps > 1) {
		fputs("<details><summary>seeds of every run</summary>\n<table>\n<tr><th>run</th>"
		      "<th>workload seed</th><th>policy seed</th></tr>\n", f);
		for (int i = 0; i < m->n_reps; i++)
			fprintf(f, "<tr><td>%d</td><td>%llu</td><td>%llu</td></tr>\n", i + 1,
			        (unsigned long long)m->rep_workload_seeds[i],
			        (unsigned long long)m->rep_policy_seeds[i]);
		fputs("</table>\n</details>\n", f);
	}
	if (m->n_inputs > 0) {
		fputs("<details><summary>inputs (sha256)</summary>\n<table>\n", f);
		for (int i = 0; i < m->n_inputs; i++) {
			const struct rk_report_input *x = &m->inputs[i];
			const char *cell[] = {x->role, x->kind, x->path, x->sha256};
			fputs("<tr>", f);
			for (int c = 0; c < 4; c++) {
				fputs(c ? "<td style=\"text-align:left\">" : "<td>", f);
				put_escaped(f, cell[c]);
				fputs("</td>", f);
			}
			fputs("</tr>\n", f);
		}
		fputs("</table>\n</details>\n", f);
	}
	fputs("<details><summary>every option</summary>\n<table>\n", f);
	for (int i = 0; i < m->n_options; i++) {
		fputs("<tr><td>", f);
		put_escaped(f, m->option_keys[i]);
		fputs("</td><td style=\"text-align:left\">", f);
		put_escaped(f, m->option_values[i]);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n</details>\n", f);
}

static void summary_table(FILE *f, const struct rk_report *r)
{
	fputs("<table>\n<tr><th>policy</th><th>avg JCT (s)</th><th>median (s)</th><th>p95 (s)</th>"
	      "<th>p99 (s)</th><th>makespan (s)</th><th>avg queue (s)</th><th>GPU util</th>"
	      "<th>GPU-hours</th><th>reconfigs/job</th><th>completed</th><th>unfinished</th>"
	      "<th>guaranteed below baseline</th><th>rejected</th><th>guaranteed preempted</th></tr>\n",
	      f);
	for (int i = 0; i < r->n_runs; i++) {
		const struct rk_sim_summary *s = &r->runs[i].summary;
		fprintf(f, "<tr><td><span class=\"sw\" style=\"background:%s\"></span>", colour(i));
		put_escaped(f, r->runs[i].policy);
		fprintf(f, "</td><td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%.1f</td>"
			   "<td>%.1f</td><td>%.3f</td><td>%.2f</td><td>%.3f</td><td>%d</td><td>%d</td>"
			   "<td>%d/%d</td><td>%d</td><td>%d/%d</td></tr>\n",
			s->avg_jct_s, s->median_jct_s, s->p95_jct_s, s->p99_jct_s, s->makespan_s,
			s->avg_queue_s, s->gpu_util, s->gpu_hours, s->reconfigs_per_job, s->completed,
			s->unfinished, s->sla_violations, s->guaranteed, s->rejected, s->sla_preempted,
			s->guaranteed);
	}
	fputs("</table>\n", f);
	seeds_table(f, r);
	/* Where the simulated speeds came from (oracle.h rules), for runs that report it. */
	int any = 0;
	for (int i = 0; i < r->n_runs; i++)
		any |= r->runs[i].has_oracle_stats;
	if (!any)
		return;
	fputs("<h2>Throughput oracle lookups</h2>\n<table>\n<tr><th>policy</th>", f);
	for (int k = 0; k < RK_ORACLE_SRC_COUNT; k++)
		fprintf(f, "<th>%s</th>", rk_oracle_source_name((enum rk_oracle_source)k));
	fputs("<th>infeasible</th><th>failed</th></tr>\n", f);
	for (int i = 0; i < r->n_runs; i++) {
		const struct rk_report_run *u = &r->runs[i];
		if (!u->has_oracle_stats)
			continue;
		fputs("<tr><td>", f);
		put_escaped(f, u->policy);
		fputs("</td>", f);
		for (int k = 0; k < RK_ORACLE_SRC_COUNT; k++)
			fprintf(f, "<td>%llu</td>", (unsigned long long)u->oracle_stats.by_source[k]);
		fprintf(f, "<td>%llu</td><td>%llu</td></tr>\n",
			(unsigned long long)u->oracle_stats.infeasible,
			(unsigned long long)u->oracle_stats.failed);
		/* one row per GPU type when the cluster has several */
		for (int t = 0; u->oracle_stats.n_types > 1 && t < u->oracle_stats.n_types; t++) {
			const struct rk_oracle_type_stats *ts = &u->oracle_stats.types[t];
			fputs("<tr><td>&nbsp;&nbsp;on ", f);
			put_escaped(f, ts->gpu_type[0] ? ts->gpu_type : "untyped");
			fputs("</td>", f);
			for (int k = 0; k < RK_ORACLE_SRC_COUNT; k++)
				fprintf(f, "<td>%llu</td>", (unsigned long long)ts->by_source[k]);
			fputs("<td></td><td></td></tr>\n", f);
		}
	}
	fputs("</table>\n", f);
}

int rk_report_write_html(FILE *f, const struct rk_report *r, struct rk_error *err)
{
	if (!f || !r || r->n_runs < 0 || (r->n_runs > 0 && !r->runs))
		return rk_error_set(err, RK_EINVAL, "report: bad arguments");
	for (int i = 0; i < r->n_runs; i++)
		if (r->runs[i].n_outcomes < 0 || (r->runs[i].n_outcomes > 0 && !r->runs[i].outcomes) ||
		    r->runs[i].n_samples < 0 || (r->runs[i].n_samples > 0 && !r->runs[i].samples))
			return rk_error_set(err, RK_EINVAL, "report: run %d: bad outcome or sample list", i);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>rubick sim: ",
	      f);
	put_escaped(f, r->trace);
	fputs("</title>\n<style>\nbody{font-family:sans-serif;margin:2em;color:#222}\n"
	      "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:3px 8px;"
	      "text-align:right}td:first-child,th:first-child{text-align:left}\n"
	      "svg{font-size:11px;display:block;margin-bottom:1em}\n"
	      "pre{white-space:pre-wrap;background:#f4f4f4;padding:4px}\n"
	      ".sw{display:inline-block;width:10px;height:10px;margin-right:6px}\n"
	      "</style>\n</head>\n<body>\n<h1>rubick sim</h1>\n<p>trace <b>",
	      f);
	put_escaped(f, r->trace);
	fprintf(f, "</b>, %d jobs; cluster <b>", r->jobs);
	put_escaped(f, r->cluster);
	fputs("</b>; oracle <b>", f);
	put_escaped(f, r->oracle);
	fprintf(f, "</b>; interval %.0f s; restart cost %.0f s; workload seed %llu</p>\n", r->interval_s,
		r->restart_cost_s, (unsigned long long)r->seed);
	meta_block(f, r->meta);
	summary_table(f, r);
	if (report_chart_bars(f, r) != 0)
		return rk_error_set(err, RK_EINVAL, "report: --normalize: no run named '%s'",
		                    r->normalize ? r->normalize : "");
	if (chart_cdf(f, r) != 0)
		return rk_error_set(err, RK_ENOMEM, "report: out of memory");
	chart_series(f, r, SERIES_UTIL);
	chart_series(f, r, SERIES_QUEUE);
	fputs("</body>\n</html>\n", f);
	if (fflush(f) != 0 || ferror(f))
		return rk_error_set(err, RK_EIO, "HTML report: write failed: %s", strerror(errno));
	return 0;
}
