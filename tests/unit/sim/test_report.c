/*
 * Reports: the JSON summary parses back (jansson) with the fields and
 * values, output is byte-identical across calls, the HTML page is
 * self-contained (one standalone <svg> per figure, no link out, escaped names), the CSVs
 * hold the exact per-job and per-sample values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_fixture.h"
#include "rubick/figure.h"
#include "rubick/report.h"
#include "rubick/sim.h"
#include "sim/report/figure_internal.h"

struct fx {
	struct rk_job_outcome o[4];
	struct rk_report_run runs[2];
	struct rk_report r;
};

static void fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	fixture_outcomes(f->o);
	for (int i = 0; i < 2; i++) {
		struct rk_report_run *u = &f->runs[i];
		u->policy = i == 0 ? "fifo" : "srtf";
		u->outcomes = f->o;
		u->n_outcomes = 4;
		u->samples = fixture_samples;
		u->n_samples = FIXTURE_NS;
		u->wall_s = 0.25 * (i + 1);
		assert_int_equal(rk_metrics_summarize(f->o, 4, fixture_samples, FIXTURE_NS, 0, 320000,
						      &u->summary, NULL),
				 0);
	}
	f->runs[1].has_oracle_stats = 1;
	f->runs[1].oracle_stats.lookups = 12;
	f->runs[1].oracle_stats.by_source[RK_ORACLE_SRC_EXACT] = 10;
	f->runs[1].oracle_stats.by_source[RK_ORACLE_SRC_INTERP] = 2;
	f->runs[1].oracle_stats.n_types = 2; /* per GPU type (docs/oracle.md "GPU types") */
	snprintf(f->runs[1].oracle_stats.types[0].gpu_type, RK_GPU_TYPE_MAX, "t4");
	f->runs[1].oracle_stats.types[0].lookups = 9;
	f->runs[1].oracle_stats.types[0].by_source[RK_ORACLE_SRC_EXACT] = 9;
	snprintf(f->runs[1].oracle_stats.types[1].gpu_type, RK_GPU_TYPE_MAX, "a100");
	f->runs[1].oracle_stats.types[1].lookups = 3;
	f->runs[1].oracle_stats.types[1].by_source[RK_ORACLE_SRC_EXACT] = 1;
	f->runs[1].oracle_stats.types[1].by_source[RK_ORACLE_SRC_INTERP] = 2;
	f->r.trace = "workload-base.csv";
	f->r.jobs = 4;
	f->r.cluster = "8x8:a800";
	f->r.oracle = "measured=data/measured/rubick";
	f->r.interval_s = 60;
	f->r.restart_cost_s = 260;
	f->r.seed = 1;
	f->r.runs = f->runs;
	f->r.n_runs = 2;
}

/* Run a writer into a memory buffer; returns the malloc'd text. */
/*
 * Not inlined (nor the other open_memstream writers here): at -O3 GCC 12 takes the
 * stream's buffer for the writer's local and warns (-Wdangling-pointer, an error under
 * --werror) wherever a test searches the text.
 */
__attribute__((noinline)) static char *capture(int (*w)(FILE *, const struct rk_report *, struct rk_error *),
		     const struct rk_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct rk_error err;
	int rc = w(f, r, &err);
	fclose(f);
	assert_int_equal(rc, 0);
	return buf;
}

static double num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	assert_non_null(v);
	assert_true(json_is_number(v));
	return json_number_value(v);
}

static void json_round_trip(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	char *s = NULL;
	struct rk_error err;
	assert_int_equal(rk_report_json_encode(&f.r, 0, &s, &err), 0);
	json_error_t je;
	json_t *root = json_loads(s, 0, &je);
	assert_non_null(root);
	assert_string_equal(json_string_value(json_object_get(root, "trace")), "workload-base.csv");
	assert_int_equal(json_integer_value(json_object_get(root, "jobs")), 4);
	assert_string_equal(json_string_value(json_object_get(root, "oracle")),
			    "measured=data/measured/rubick");
	json_t *res = json_object_get(root, "results");
	assert_true(json_is_array(res));
	assert_int_equal(json_array_size(res), 2);
	json_t *a = json_array_get(res, 0);
	assert_string_equal(json_string_value(json_object_get(a, "policy")), "fifo");
	assert_true(num(a, "avg_jct_s") == 140.0);
	assert_true(num(a, "median_jct_s") == 100.0);
	assert_true(num(a, "p95_jct_s") == 300.0);
	assert_true(num(a, "p99_jct_s") == 300.0);
	assert_true(num(a, "makespan_s") == 320.0);
	assert_true(num(a, "avg_queue_s") == 27.5);
	assert_true(num(a, "gpu_util") == 0.4296875);
	assert_true(num(a, "reconfigs") == 0.75);
	assert_true(num(a, "wall_s") == 0.25);
	assert_int_equal(json_integer_value(json_object_get(a, "completed")), 4);
	assert_int_equal(json_integer_value(json_object_get(a, "unfinished")), 0);
	/* guaranteed-job fields are always there (the fixture has none) */
	assert_int_equal(json_integer_value(json_object_get(a, "rejected")), 0);
	assert_int_equal(json_integer_value(json_object_get(a, "guaranteed")), 0);
	assert_int_equal(json_integer_value(json_object_get(a, "sla_violations")), 0);
	assert_true(num(a, "sla_violation_s") == 0.0);
	assert_true(num(a, "sla_worst_ratio") == 0.0);
	assert_null(json_object_get(a, "oracle_lookups"));
	json_t *b = json_array_get(res, 1);
	json_t *ol = json_object_get(b, "oracle_lookups");
	assert_non_null(ol);
	assert_int_equal(json_integer_value(json_object_get(ol, "exact")), 10);
	assert_int_equal(json_integer_value(json_object_get(ol, "interp")), 2);
	assert_int_equal(json_integer_value(json_object_get(ol, "model-scaled")), 0);
	json_t *bt = json_object_get(ol, "by_gpu_type");
	assert_int_equal(json_object_size(bt), 2);
	json_t *a100 = json_object_get(bt, "a100");
	assert_int_equal(json_integer_value(json_object_get(a100, "lookups")), 3);
	assert_int_equal(json_integer_value(json_object_get(a100, "interp")), 2);
	assert_null(json_object_get(a100, "model")); /* sources a type never used are left out */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(bt, "t4"), "exact")), 9);
	json_decref(root);
	/* keys in the documented order */
	assert_true(strncmp(s, "{\"trace\":", 9) == 0);
	assert_true(strstr(s, "\"jobs\":4") < strstr(s, "\"results\":"));

	/* same input, same bytes; pretty output parses too */
	char *s2 = NULL;
	assert_int_equal(rk_report_json_encode(&f.r, 0, &s2, &err), 0);
	assert_string_equal(s, s2);
	free(s2);
	assert_int_equal(rk_report_json_encode(&f.r, 1, &s2, &err), 0);
	root = json_loads(s2, 0, &je);
	assert_non_null(root);
	json_decref(root);
	free(s2);
	free(s);

	assert_int_equal(rk_report_json_encode(NULL, 0, &s, &err), RK_EINVAL);
	f.r.n_runs = -1;
	assert_int_equal(rk_report_json_encode(&f.r, 0, &s, &err), RK_EINVAL);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void html_self_contained(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	f.runs[1].policy = "srtf<script>";
	char *h = capture(rk_report_write_html, &f.r);
	assert_true(strncmp(h, "<!DOCTYPE html>", 15) == 0);
	/* the six figures of rk_report_figures, each an inline standalone SVG */
	assert_int_equal(count(h, "<svg"), 6);
	assert_int_equal(count(h, "</svg>"), 6);
	assert_int_equal(count(h, "<svg xmlns=\"http://www.w3.org/2000/svg\""), 6);
	const char *ids[6] = {"bars", "jct-cdf", "gpu-util", "queue", "gpu-hours", "reconfigs"};
	const char *prev = h;
	for (int i = 0; i < 6; i++) { /* in this order, each once */
		char id[48];
		snprintf(id, sizeof(id), "<figure id=\"fig-%s\">\n<svg", ids[i]);
		const char *p = strstr(h, id);
		assert_non_null(p);
		assert_true(p > prev);
		prev = p;
	}
	/* no link out: the only "http" are the SVG and XLink namespace names */
	assert_int_equal(count(h, "http"), 6 * 2);
	assert_int_equal(count(h, "xmlns:xlink=\"http://www.w3.org/1999/xlink\""), 6);
	assert_null(strstr(h, "href=\"http"));
	assert_null(strstr(h, "<script"));
	assert_null(strstr(h, "<link"));
	assert_null(strstr(h, "@import"));
	assert_null(strstr(h, "<?xml"));
	assert_non_null(strstr(h, "srtf&lt;script&gt;"));
	/* one line per policy in each line figure */
	struct rk_report_figs figs;
	struct rk_error err;
	assert_int_equal(rk_report_figures(&f.r, &figs, &err), 0);
	assert_int_equal(figs.n, 6);
	for (int i = 1; i <= 3; i++) {
		assert_int_equal(figs.f[i].fig->n_series, 2);
		assert_false(figs.f[i].fig->bars);
	}
	assert_string_equal(figs.f[1].fig->series[1].name, "srtf<script>");
	rk_report_figures_fini(&figs);
	/* a run with nothing to draw keeps its series (and so its colour): series i is run i */
	f.runs[0].n_samples = 0;
	assert_int_equal(rk_report_figures(&f.r, &figs, &err), 0);
	const struct rk_figure *u = figs.f[2].fig;
	assert_int_equal(u->n_series, 2);
	assert_int_equal(u->series[0].n, 1);
	assert_true(isnan(u->series[0].y[0]));
	assert_string_equal(u->series[1].name, "srtf<script>");
	char *svg = NULL;
	size_t len = 0;
	assert_int_equal(rk_figure_svg_text(u, &svg, &len, &err), 0);
	free(svg);
	rk_report_figures_fini(&figs);
	f.runs[0].n_samples = FIXTURE_NS;
	/* the summary table carries the figures */
	assert_non_null(strstr(h, "<td>140.0</td>"));
	assert_non_null(strstr(h, "<td>0.430</td>"));
	/* provenance of the run that reports it: 10 exact, 0 nearest, 2 interp, ... */
	assert_non_null(strstr(h, "<th>model-scaled</th>"));
	assert_non_null(strstr(h, "</td><td>10</td><td>0</td><td>2</td><td>0</td>"));
	/* and per GPU type: a100 1 exact, 0 nearest, 2 interp */
	assert_non_null(strstr(h, "<th>type-scaled</th>"));
	assert_non_null(strstr(h, "on a100</td><td>1</td><td>0</td><td>2</td>"));
	assert_non_null(strstr(h, "</html>\n"));
	char *h2 = capture(rk_report_write_html, &f.r);
	assert_string_equal(h, h2);
	free(h2);
	free(h);
}

static void html_long_series(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	enum { N = 20000 };
	struct rk_sim_sample *s = calloc(N, sizeof(*s));
	assert_non_null(s);
	for (int i = 0; i < N; i++)
		s[i] = (struct rk_sim_sample)SAMPLE((int64_t)i * 1000, i % 9, 8 + (i % 9 == 8), i % 7, 1);
	f.r.n_runs = 1;
	char *few = capture(rk_report_write_html, &f.r); /* the fixture's few samples */
	f.runs[0].samples = s;
	f.runs[0].n_samples = N;
	char *h = capture(rk_report_write_html, &f.r);
	assert_int_equal(count(h, "<svg"), 6);
	/* 20,000 samples are bucketed into 200 bins: the page grows by a bounded amount */
	assert_true(strlen(h) < strlen(few) + 40000);
	free(few);
	free(h);
	free(s);

	/* no runs at all still gives the three (empty) line figures, and no bars */
	f.r.n_runs = 0;
	h = capture(rk_report_write_html, &f.r);
	assert_int_equal(count(h, "<svg"), 3);
	free(h);
}

static void csv_files(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	strncpy(f.o[1].name, "a,\"b\"", sizeof(f.o[1].name) - 1);
	fixture_outcome(&f.o[3], 4, "j4", 2, 30000, -1, -1, 0, 0, 0.0); /* never ran */
	/* job 1 guaranteed, 12.5 s below its baseline; job 4 rejected at submission */
	f.o[0].guaranteed = 1;
	f.o[0].sla_below_s = 12.5;
	f.o[0].sla_worst_ratio = 0.5;
	f.o[3].guaranteed = 1;
	f.o[3].rejected = 1;
	snprintf(f.o[3].reason, sizeof(f.o[3].reason), "tenant 'a' guaranteed quota is 4 GPUs; "
		 "4 held by active guaranteed jobs, 2 requested");
	char *c = capture(rk_report_write_jobs_csv, &f.r);
	const char *hdr = "policy,id,name,model,req_gpus,submit_s,first_start_s,finish_s,jct_s,"
			  "queue_s,restarts,preemptions,completed,gpu_s,guaranteed,sla_below_s,"
			  "rejected,reason\n";
	assert_true(strncmp(c, hdr, strlen(hdr)) == 0);
	assert_non_null(strstr(c, "\nfifo,1,j1,bert,4,0.000,0.000,100.000,100.000,0.000,0,0,1,400.000,"
				  "1,12.500,0,\n"));
	assert_non_null(strstr(c, "\nfifo,2,\"a,\"\"b\"\"\",bert,2,10.000,20.000,70.000,60.000,10.000,1,0,1,"
				  "100.000,0,0.000,0,\n"));
	assert_non_null(strstr(c, "\nsrtf,4,j4,bert,2,30.000,,,,,0,0,0,0.000,1,0.000,1,\"tenant 'a' "
				  "guaranteed quota is 4 GPUs; 4 held by active guaranteed jobs, "
				  "2 requested\"\n"));
	assert_int_equal(count(c, "\n"), 1 + 8);
	free(c);

	c = capture(rk_report_write_samples_csv, &f.r);
	assert_true(strncmp(c, "policy,t_s,gpus_alloc,gpus_total,queue_len,running\n", 51) == 0);
	assert_non_null(strstr(c, "\nsrtf,320.000,0,8,0,0\n"));
	assert_int_equal(count(c, "\n"), 1 + 2 * FIXTURE_NS);
	free(c);

	/* The plan log: one row per applied plan, the name from the outcomes, the plan quoted. */
	struct rk_sim_plan_change pc[2] = {
	    {.t_ms = 20000, .job_id = 2, .gpus = 2,
	     .plan = {.dp = 2, .tp = 1, .pp = 1, .mb = 1, .ga = 1, .zero = 1}},
	    {.t_ms = 40500, .job_id = 1, .gpus = 4,
	     .plan = {.dp = 1, .tp = 4, .pp = 1, .mb = 2, .ga = 1}},
	};
	f.runs[1].plans = pc;
	f.runs[1].n_plans = 2;
	c = capture(rk_report_write_plans_csv, &f.r);
	assert_string_equal(c, "policy,t_s,id,name,gpus,plan\n"
			       "srtf,20.000,2,\"a,\"\"b\"\"\",2,\"dp=2,tp=1,pp=1,mb=1,ga=1,gc=0,zero=1,offload=0\"\n"
			       "srtf,40.500,1,j1,4,\"dp=1,tp=4,pp=1,mb=2,ga=1,gc=0,zero=0,offload=0\"\n");
	free(c);
	f.runs[1].plans = NULL;
	f.runs[1].n_plans = 0;

	/* the table's last columns: sla_viol = violating/guaranteed, then rejected,
	 * then sla_preempt = preempted/guaranteed (job 2, made guaranteed here) */
	f.o[1].guaranteed = 1;
	f.o[1].preemptions = 1;
	assert_int_equal(rk_metrics_summarize(f.o, 4, fixture_samples, FIXTURE_NS, 0, 320000,
					      &f.runs[0].summary, NULL), 0);
	c = capture(rk_report_write_table, &f.r);
	assert_int_equal(f.runs[0].summary.sla_preempted, 1);
	assert_non_null(strstr(c, " wall_s   sla_viol rejected sla_preempt\n"));
	assert_non_null(strstr(c, "    1/3           1         1/3\n"));
	free(c);
	c = capture(rk_report_write_html, &f.r);
	assert_non_null(strstr(c, "<th>guaranteed below baseline</th><th>rejected</th>"
				  "<th>guaranteed preempted</th></tr>"));
	assert_non_null(strstr(c, "<td>1/3</td><td>1</td><td>1/3</td></tr>"));
	assert_non_null(strstr(c, "fifo"));
	assert_non_null(strstr(c, "srtf"));
	assert_non_null(strstr(c, "workload-base.csv"));
	free(c);

	struct rk_error err;
	assert_int_equal(rk_report_write_jobs_csv(NULL, &f.r, &err), RK_EINVAL);
	f.runs[0].n_outcomes = 3;
	f.runs[0].outcomes = NULL;
	assert_int_equal(rk_report_write_jobs_csv(stdout, &f.r, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "fifo"));
	assert_int_equal(rk_report_write_html(stdout, &f.r, &err), RK_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_round_trip),
		cmocka_unit_test(html_self_contained),
		cmocka_unit_test(html_long_series),
		cmocka_unit_test(csv_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
