/*
 * The self-contained HTML report (report.h): a summary table, then the
 * report's figures (report_figures.c) inlined as the same SVG that
 * `rubick sim --out` writes to fig-NAME.svg. No scripts, fonts, style sheets
 * or links: it opens in a browser with no network (the SVGs carry their
 * text as outlines). Every choice depends only on the data, so identical
 * runs give identical bytes.
 */
#include "rubick/figure.h"
#include "rubick/report.h"

#include "sim/report/report_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void rk_report_put_html_text(FILE *f, const char *s)
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

/* Under --seeds: mean and 95% interval per policy (the table above is the first seed). */
static void seeds_table(FILE *f, const struct rk_report *r)
{
	if (r->seeds_n <= 0)
		return;
	fprintf(f, "<h2>Over seeds %llu-%llu</h2>\n<p>%d runs per policy, ",
	        (unsigned long long)r->seeds_first, (unsigned long long)r->seeds_last, r->seeds_n);
	rk_report_put_html_text(f, r->seeds_vary);
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
		rk_report_put_html_text(f, u->policy);
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
	rk_report_put_html_text(f, m->version);
	fprintf(f, "; workload seed %llu, policy seed %llu</p>\n",
	        (unsigned long long)m->workload_seed, (unsigned long long)m->policy_seed);
	if (m->source) {
		fputs("<p>built from ", f);
		if (m->commit && *m->commit) {
			fputs("commit <code>", f);
			rk_report_put_html_text(f, m->commit);
			fputs(m->dirty > 0 ? "</code> with uncommitted changes" : "</code>", f);
		} else {
			fputs("release ", f);
			rk_report_put_html_text(f, m->version);
		}
		fputs(" (", f);
		rk_report_put_html_text(f, m->build_type);
		fputs(" build, sanitizers: ", f);
		rk_report_put_html_text(f, m->sanitize);
		fputs("); run at ", f);
		rk_report_put_html_text(f, m->timestamp);
		fputs(" on ", f);
		rk_report_put_html_text(f, m->host);
		fputs("</p>\n", f);
	}
	if (m->workload_seed_draws) {
		fputs("<p>The workload seed draws: ", f);
		rk_report_put_html_text(f, m->workload_seed_draws);
		fputs(".</p>\n", f);
	}
	fputs("<pre>", f);
	rk_report_put_html_text(f, m->command);
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
				rk_report_put_html_text(f, cell[c]);
				fputs("</td>", f);
			}
			fputs("</tr>\n", f);
		}
		fputs("</table>\n</details>\n", f);
	}
	fputs("<details><summary>every option</summary>\n<table>\n", f);
	for (int i = 0; i < m->n_options; i++) {
		fputs("<tr><td>", f);
		rk_report_put_html_text(f, m->option_keys[i]);
		fputs("</td><td style=\"text-align:left\">", f);
		rk_report_put_html_text(f, m->option_values[i]);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n</details>\n", f);
}

static void summary_table(FILE *f, const struct rk_report *r)
{
	/* Under --seeds its rows are one repetition's: say which, before the numbers. */
	if (r->seeds_n > 0)
		fprintf(f,
		        "<p>Seed %llu's run (the first of seeds %llu-%llu; the intervals over "
		        "every seed follow the table).</p>\n",
		        (unsigned long long)r->seeds_first, (unsigned long long)r->seeds_first,
		        (unsigned long long)r->seeds_last);
	fputs("<table>\n<tr><th>policy</th><th>avg JCT (s)</th><th>median (s)</th><th>p95 (s)</th>"
	      "<th>p99 (s)</th><th>makespan (s)</th><th>avg queue (s)</th><th>GPU util</th>"
	      "<th>GPU-hours</th><th>reconfigs/job</th><th>completed</th><th>unfinished</th>"
	      "<th>guaranteed below baseline</th><th>rejected</th><th>guaranteed preempted</th></tr>\n",
	      f);
	for (int i = 0; i < r->n_runs; i++) {
		const struct rk_sim_summary *s = &r->runs[i].summary;
		fprintf(f, "<tr><td><span class=\"sw\" style=\"background:%s\"></span>", rk_figure_colour(i));
		rk_report_put_html_text(f, r->runs[i].policy);
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
		rk_report_put_html_text(f, u->policy);
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
			rk_report_put_html_text(f, ts->gpu_type[0] ? ts->gpu_type : "untyped");
			fputs("</td>", f);
			for (int k = 0; k < RK_ORACLE_SRC_COUNT; k++)
				fprintf(f, "<td>%llu</td>", (unsigned long long)ts->by_source[k]);
			fputs("<td></td><td></td></tr>\n", f);
		}
	}
	fputs("</table>\n", f);
}

/* Each figure under its heading, as <figure id="fig-NAME">: the SVG of fig-NAME.svg, its caption. */
static int put_figures(FILE *f, const struct rk_report_figs *figs, struct rk_error *err)
{
	for (int i = 0; i < figs->n; i++) {
		char *svg = NULL;
		size_t len = 0;
		int rc = rk_figure_svg_text(figs->f[i].fig, &svg, &len, err);
		if (rc) {
			rk_error_prefix(err, "HTML report: figure %s", figs->f[i].name);
			return rc;
		}
		fputs("<h2>", f);
		rk_report_put_html_text(f, figs->f[i].heading);
		fprintf(f, "</h2>\n<figure id=\"fig-%s\">\n", figs->f[i].name);
		fwrite(svg, 1, len, f);
		fprintf(f, "<figcaption>fig-%s: ", figs->f[i].name);
		rk_report_put_html_text(f, figs->f[i].caption);
		fputs("</figcaption>\n</figure>\n", f);
		free(svg);
	}
	return 0;
}

int rk_report_write_html(FILE *f, const struct rk_report *r, struct rk_error *err)
{
	if (!f || !r || r->n_runs < 0 || (r->n_runs > 0 && !r->runs))
		return rk_error_set(err, RK_EINVAL, "report: bad arguments");
	struct rk_report_figs figs; /* first: a bad report writes nothing */
	int rc = rk_report_figures(r, &figs, err);
	if (rc)
		return rc;
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>rubick sim: ",
	      f);
	rk_report_put_html_text(f, r->trace);
	fputs("</title>\n<style>\nbody{font-family:sans-serif;margin:2em;color:#222}\n"
	      "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:3px 8px;"
	      "text-align:right}td:first-child,th:first-child{text-align:left}\n"
	      "svg{font-size:11px;display:block;margin-bottom:1em}\n"
	      "figure{margin:0 0 1.5em 0}figure svg{width:40em;max-width:100%;height:auto;"
	      "margin:0}figcaption{max-width:40em;font-size:90%}\n"
	      "pre{white-space:pre-wrap;background:#f4f4f4;padding:4px}\n"
	      ".sw{display:inline-block;width:10px;height:10px;margin-right:6px}\n"
	      "</style>\n</head>\n<body>\n<h1>rubick sim</h1>\n<p>trace <b>",
	      f);
	rk_report_put_html_text(f, r->trace);
	fprintf(f, "</b>, %d jobs; cluster <b>", r->jobs);
	rk_report_put_html_text(f, r->cluster);
	fputs("</b>; oracle <b>", f);
	rk_report_put_html_text(f, r->oracle);
	fprintf(f, "</b>; interval %.0f s; restart cost %.0f s; workload seed %llu</p>\n", r->interval_s,
		r->restart_cost_s, (unsigned long long)r->seed);
	meta_block(f, r->meta);
	summary_table(f, r);
	rc = put_figures(f, &figs, err);
	rk_report_figures_fini(&figs);
	if (rc)
		return rc;
	fputs("</body>\n</html>\n", f);
	if (fflush(f) != 0 || ferror(f))
		return rk_error_set(err, RK_EIO, "HTML report: write failed: %s", strerror(errno));
	return 0;
}
