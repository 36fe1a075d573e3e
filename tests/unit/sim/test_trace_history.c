/*
 * A site's own history as a trace (docs/trace-format.md "sacct", "history"):
 * sacct -P header variants, steps folded, GPUs from AllocTRES / typed GRES /
 * ReqTRES, unfinished, never-run and CPU jobs counted, bad rows with
 * FILE:LINE:COL and --skip-bad; `rubick history --csv` and `--json`, white and
 * black boxes, JSON errors pointing into the document; the black-box share.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "rubick/trace.h"

static int parse(const char *text, const char *format, int skip_bad, struct rk_trace *t,
		 struct rk_error *err)
{
	struct rk_trace_options o = rk_trace_options_default();
	o.skip_bad = skip_bad;
	return rk_trace_parse(text, strlen(text), "acct.txt", format, &o, t, err);
}

static const struct rk_trace_job *find(const struct rk_trace *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->jobs[i].name, name))
			return &t->jobs[i];
	return NULL;
}

#define SACCT_HDR                                                                              \
	"JobID|JobName|User|Account|Partition|Submit|Start|End|Elapsed|State|ExitCode|AllocTRES|" \
	"ReqTRES\n"

static const char sacct_text[] =
    SACCT_HDR
    "100|bert-ft|alice|physics|gpu|2026-11-01T10:00:00|2026-11-01T10:00:05|2026-11-01T11:00:05|"
    "01:00:00|COMPLETED|0:0|billing=8,cpu=8,gres/gpu=2,mem=32G,node=1|cpu=8,gres/gpu=2\n"
    "100.batch|batch||physics||2026-11-01T10:00:05|2026-11-01T10:00:05|2026-11-01T11:00:05|"
    "01:00:00|COMPLETED|0:0|cpu=8,gres/gpu=2,mem=32G,node=1|\n"
    "100.extern|extern||physics||2026-11-01T10:00:05|2026-11-01T10:00:05|2026-11-01T11:00:05|"
    "01:00:00|COMPLETED|0:0|cpu=8,gres/gpu=2|\n"
    "101_3|train|bob||gpu|2026-11-01T10:10:00|2026-11-01T10:20:00|2026-11-02T12:20:00|"
    "1-02:00:00|FAILED|1:0|cpu=16,gres/gpu:a100=4,mem=64000M,node=1|\n"
    "101_3.0|python||||2026-11-01T10:20:00|2026-11-01T10:20:00|2026-11-02T12:20:00|"
    "1-02:00:00|FAILED|1:0|cpu=16,gres/gpu:a100=4|\n"
    "102|cpu|bob|||2026-11-01T10:11:00|2026-11-01T10:11:00|2026-11-01T10:21:00|00:10:00|"
    "COMPLETED|0:0|cpu=2,mem=4G,node=1|\n"
    "103|wait|bob|||2026-11-01T10:12:00|Unknown|Unknown|00:00:00|PENDING|0:0||gres/gpu=1\n"
    "104|gone|bob|||2026-11-01T10:13:00|None|2026-11-01T10:14:00|00:00:00|CANCELLED by 0|0:0||"
    "gres/gpu=1\n"
    "105|run|bob|||2026-11-01T10:14:00|2026-11-01T10:15:00|Unknown|00:05:00|RUNNING|0:0|"
    "gres/gpu=1|gres/gpu=1\n"
    "106|req|carol|||2026-11-01T10:15:00|2026-11-01T10:16:00|2026-11-01T10:46:00|00:30:00|"
    "TIMEOUT|0:0||gres/gpu=8\n"
    "107|quick|carol|||2026-11-01T10:15:00|2026-11-01T10:16:00|2026-11-01T10:16:00|00:00:00|"
    "COMPLETED|0:0|gres/gpu=1|\n";

static void sacct_jobs_steps_and_counts(void **state)
{
	(void)state;
	struct rk_trace t;
	struct rk_error err;
	assert_int_equal(parse(sacct_text, "auto", 0, &t, &err), 0);
	assert_string_equal(t.format, "sacct");
	assert_int_equal(t.n_lines, 11);
	assert_int_equal(t.n, 3);
	assert_int_equal(t.n_steps, 3);      /* 100.batch, 100.extern, 101_3.0 */
	assert_int_equal(t.n_no_gpu, 1);     /* 102: a CPU job */
	assert_int_equal(t.n_unfinished, 2); /* 103 pending, 105 running */
	assert_int_equal(t.n_unstarted, 2);  /* 104 cancelled before start, 107 ran 0 s */
	const struct rk_trace_job *a = find(&t, "100"), *b = find(&t, "101_3"), *c = find(&t, "106");
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	/* Times relative to the earliest submission; Elapsed is the run time. */
	assert_int_equal(a->submit_ms, 0);
	assert_int_equal(b->submit_ms, 600000);
	assert_int_equal(c->submit_ms, 900000);
	assert_true(a->duration_s == 3600 && b->duration_s == 93600 && c->duration_s == 1800);
	/* GPUs: gres/gpu=N; typed counts summed; an empty AllocTRES falls back to ReqTRES. */
	assert_int_equal(a->gpus, 2);
	assert_int_equal(b->gpus, 4);
	assert_int_equal(c->gpus, 8);
	assert_int_equal(a->cpus, 8);
	assert_int_equal(a->mem_mb, 32768);
	assert_int_equal(b->mem_mb, 64000);
	/* Tenant = Account, else User; JobName is the job type the mapping reads. */
	assert_string_equal(a->tenant, "physics");
	assert_string_equal(b->tenant, "bob");
	assert_string_equal(a->source_type, "bert-ft");
	assert_true(!strcmp(a->model, "bert") || !strcmp(a->model, "roberta")); /* bert family */
	/* Every sacct job is a black box. */
	assert_int_equal(t.n_mapped, 3);
	double bb = 0, all = 0;
	assert_int_equal(rk_trace_black_box(&t, &bb, &all), 3);
	assert_true(all == 2.0 + 104.0 + 4.0 && bb == all);
	assert_true(rk_trace_format_is_history(t.format));
	rk_trace_fini(&t);
}

static void sacct_header_variants(void **state)
{
	(void)state;
	struct rk_trace t;
	struct rk_error err;
	/* sacct -p: a trailing '|' on every line; lower-case names; a minimal subset. */
	const char *p = "jobid|submit|elapsed|alloctres|\n"
			"9|2026-01-01T00:00:00|00:02:00|gres/gpu=3|\n";
	assert_int_equal(parse(p, "auto", 0, &t, &err), 0);
	assert_string_equal(t.format, "sacct");
	assert_true(t.n == 1 && t.jobs[0].gpus == 3 && t.jobs[0].duration_s == 120);
	rk_trace_fini(&t);
	/* Start and End without Elapsed; ElapsedRaw in seconds wins over Elapsed. */
	p = "JobID|Submit|Start|End|ReqTRES\n"
	    "1|2026-01-01T00:00:00|2026-01-01T00:00:10|2026-01-01T00:05:10|gres/gpu=1\n";
	assert_int_equal(parse(p, "auto", 0, &t, &err), 0);
	assert_true(t.n == 1 && t.jobs[0].duration_s == 300);
	rk_trace_fini(&t);
	p = "JobID|Submit|Elapsed|ElapsedRaw|AllocGRES\n"
	    "1|2026-01-01T00:00:00|00:00:01|42|gpu:v100:2(IDX:0-1)\n"
	    "2|2026-01-01T00:00:00|00:00:01|7|gpu:1\n";
	assert_int_equal(parse(p, "auto", 0, &t, &err), 0);
	assert_true(t.n == 2 && t.jobs[0].duration_s == 42 && t.jobs[0].gpus == 2 &&
		    t.jobs[1].gpus == 1);
	rk_trace_fini(&t);
	/* A wide export (sacct -o ALL prints over 100 fields). */
	char wide[4096] = "JobID|Submit|Elapsed|AllocTRES";
	char row[4096] = "5|2026-01-01T00:00:00|00:00:09|gres/gpu=1";
	for (int i = 0; i < 100; i++) {
		size_t n = strlen(wide), m = strlen(row);
		snprintf(wide + n, sizeof(wide) - n, "|X%d", i);
		snprintf(row + m, sizeof(row) - m, "|v");
	}
	char text[8400];
	snprintf(text, sizeof(text), "%s\n%s\n", wide, row);
	assert_int_equal(parse(text, "auto", 0, &t, &err), 0);
	assert_true(t.n == 1 && t.jobs[0].duration_s == 9);
	rk_trace_fini(&t);
}

static void expect_fail(const char *text, int skip_bad, int code, const char *want)
{
	struct rk_trace t;
	struct rk_error err;
	int rc = parse(text, "auto", skip_bad, &t, &err);
	if (rc != code || !strstr(err.msg, want))
		print_message("rc=%d msg=%s\n", rc, err.msg);
	assert_int_equal(rc, code);
	assert_non_null(strstr(err.msg, want));
	assert_null(t.jobs);
}

static void sacct_bad_rows(void **state)
{
	(void)state;
	expect_fail("JobID|Submit|AllocTRES\n1|2026-01-01T00:00:00|gres/gpu=1\n", 0, RK_EINVAL,
		    "acct.txt:1:1: header: no run time (needs Elapsed");
	expect_fail("JobID|Submit|Elapsed\n1|2026-01-01T00:00:00|00:00:01\n", 0, RK_EINVAL,
		    "acct.txt:1:1: header: no GPU count");
	/* FILE:LINE:COL and the column. */
	expect_fail("JobID|Submit|Elapsed|AllocTRES\n1|2026-01-01 00:00|00:00:01|gres/gpu=1\n", 0,
		    RK_EINVAL, "acct.txt:2:3: column 'Submit': '2026-01-01 00:00' is not");
	expect_fail("JobID|Submit|Elapsed|AllocTRES\n1|2026-01-01T00:00:00|1:2:3:4|gres/gpu=1\n", 0,
		    RK_EINVAL, "acct.txt:2:23: column 'Elapsed': '1:2:3:4' is not [D-]HH:MM:SS");
	expect_fail("JobID|Submit|Elapsed|AllocTRES\n1|2026-01-01T00:00:00|00:00:01|gres/gpu=x\n",
		    0, RK_EINVAL, "acct.txt:2:32: column 'AllocTRES': 'gres/gpu=x' is not a count");
	expect_fail("JobID|Submit|Start|End|AllocTRES\n"
		    "1|2026-01-01T00:00:00|2026-01-01T00:00:09|2026-01-01T00:00:08|gres/gpu=1\n",
		    0, RK_ERANGE, "acct.txt:2:43: column 'End': before Start");
	expect_fail("JobID|Submit|Elapsed|AllocTRES\n1|Unknown|00:00:01|gres/gpu=1\n", 0, RK_EINVAL,
		    "acct.txt:2:3: column 'Submit': no submit time");
	expect_fail("JobID|Submit|Elapsed|AllocTRES\n1|2026-01-01T00:00:00|00:00:01\n", 0, RK_EINVAL,
		    "acct.txt:2:1: line has 3 fields, the header has 4");
	/* --skip-bad: skipped, counted, the reason kept with its place. */
	struct rk_trace t;
	struct rk_error err;
	const char *text = "JobID|Submit|Elapsed|AllocTRES\n"
			   "1|2026-01-01T00:00:00|00:00:01|gres/gpu=1\n"
			   "2|2026-01-01T00:00:00|soon|gres/gpu=1\n"
			   "3|2026-01-01T00:00:10|00:01:00|gres/gpu=2\n";
	assert_int_equal(parse(text, "auto", 1, &t, &err), 0);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.n_skipped, 1);
	assert_non_null(strstr(t.reasons[0], "acct.txt:3:23: column 'Elapsed': 'soon'"));
	rk_trace_fini(&t);
}

static const char history_csv[] =
    "id,name,tenant,state,exit,submit,start,end,elapsed,wait,gpu_hours,gpus\n"
    "3,bert-ft,alice,done,0,2026-12-01T10:00:00Z,2026-12-01T10:00:02Z,2026-12-01T10:30:02Z,"
    "00:30:00,00:00:02,1.0000,2\n"
    "2,x,bob,cancelled,-,2026-12-01T09:59:00Z,-,2026-12-01T10:00:00Z,-,-,0.0000,1\n"
    "1,y,bob,failed,1,2026-12-01T09:58:00Z,2026-12-01T09:58:01Z,2026-12-01T09:59:01Z,00:01:00,"
    "00:00:01,0.0000,1\n";

static void history_csv_black_boxes(void **state)
{
	(void)state;
	struct rk_trace t;
	struct rk_error err;
	assert_int_equal(parse(history_csv, "auto", 0, &t, &err), 0);
	assert_string_equal(t.format, "history");
	assert_int_equal(t.n, 2);
	assert_int_equal(t.n_unstarted, 1); /* 2: cancelled before it started */
	const struct rk_trace_job *a = find(&t, "3"), *b = find(&t, "1");
	assert_non_null(a);
	assert_non_null(b);
	/* GPU-hours / GPUs; elapsed where it got no GPU-seconds. */
	assert_true(a->duration_s == 1800 && a->gpus == 2 && b->duration_s == 60);
	assert_int_equal(a->submit_ms, 120000);
	assert_string_equal(a->tenant, "alice");
	assert_string_equal(a->source_type, "bert-ft");
	assert_int_equal(t.n_mapped, 2); /* the CSV names no model */
	rk_trace_fini(&t);
	expect_fail("id,name,tenant,state,exit,submit,start,end,elapsed,wait,gpu_hours,gpus\n"
		    "3,a,t,done,0,2026-12-01T10:00:00Z,2026-12-01T10:00:02Z,2026-12-01T10:30:02Z,"
		    "00:30:00,00:00:02,lots,2\n",
		    0, RK_EINVAL, "acct.txt:2:95: column 'gpu_hours': 'lots' is not a number");
}

static const char history_json[] =
    "{\n"
    "  \"jobs\": [\n"
    "    {\n"
    "      \"id\": 3,\n"
    "      \"name\": \"bert-ft\",\n"
    "      \"tenant\": \"alice\",\n"
    "      \"state\": \"done\",\n"
    "      \"gpus\": 2,\n"
    "      \"iters_done\": 120.0,\n"
    "      \"submit_ms\": 1764583200000,\n"
    "      \"first_start_ms\": 1764583202000,\n"
    "      \"end_ms\": 1764585002000,\n"
    "      \"attained_gpu_s\": 3600.0,\n"
    "      \"spec\": {\"model\": \"bert\", \"global_batch\": 32, \"gpus\": 2,\n"
    "                 \"plan\": \"dp=2,tp=1,pp=1,mb=16,ga=1,gc=0,zero=0,offload=0\",\n"
    "                 \"min_gpus\": 1, \"max_gpus\": 4, \"guaranteed\": true},\n"
    "      \"gpu_hours\": 1.0\n"
    "    },\n"
    "    {\n"
    "      \"id\": 2, \"name\": \"x\", \"tenant\": \"bob\", \"state\": \"done\", \"gpus\": 1,\n"
    "      \"submit_ms\": 1764583100000, \"first_start_ms\": 1764583101000,\n"
    "      \"end_ms\": 1764583201000, \"attained_gpu_s\": 90.0,\n"
    "      \"spec\": {\"model_spec\": \"inline\", \"gpus\": 1, \"min_gpus\": 1, \"max_gpus\": 1}\n"
    "    }\n"
    "  ],\n"
    "  \"count\": 2,\n"
    "  \"truncated\": false\n"
    "}\n";

static void history_json_white_and_black(void **state)
{
	(void)state;
	struct rk_trace t;
	struct rk_error err;
	assert_int_equal(parse(history_json, "auto", 0, &t, &err), 0);
	assert_string_equal(t.format, "history");
	assert_int_equal(t.n, 2);
	const struct rk_trace_job *w = find(&t, "3"), *b = find(&t, "2");
	assert_non_null(w);
	assert_non_null(b);
	/* White box: the zoo model, batch, plan, iterations done, range, guarantee. */
	assert_string_equal(w->model, "bert");
	assert_int_equal(w->model_mapped, 0);
	assert_int_equal(w->global_batch, 32);
	assert_string_equal(w->plan, "dp=2,tp=1,pp=1,mb=16,ga=1,gc=0,zero=0,offload=0");
	assert_int_equal(w->iters, 120);
	assert_true(w->duration_s == 1800);
	assert_true(w->min_gpus == 1 && w->max_gpus == 4 && w->has_range && w->guaranteed);
	assert_int_equal(w->line, 3); /* the job object's line in the document */
	/* An inline model is no zoo key: a black box; [gpus, gpus] is rubickd's "no range". */
	assert_int_equal(b->model_mapped, 1);
	assert_true(b->duration_s == 90 && !b->has_range);
	assert_int_equal(b->submit_ms, 0);
	assert_int_equal(w->submit_ms, 100000);
	double bb = 0, all = 0;
	assert_int_equal(rk_trace_black_box(&t, &bb, &all), 1);
	assert_true(all == 1.0 + 0.025 && bb == 0.025);
	rk_trace_fini(&t);
}

static void history_json_errors(void **state)
{
	(void)state;
	char bad[sizeof(history_json) + 16];
	/* A value of the wrong type: the job object's line and column. */
	snprintf(bad, sizeof(bad), "%s", history_json);
	char *g = strstr(bad, "\"gpus\": 1,");
	memcpy(g, "\"gpus\": \"\",", 11);
	expect_fail(bad, 0, RK_EINVAL, "acct.txt:19:5: jobs[1]: key 'gpus' is missing or of the");
	/* A plan that does not fit its GPUs: the job's place and the column. */
	snprintf(bad, sizeof(bad), "%s", history_json);
	memcpy(strstr(bad, "dp=2,"), "dp=4,", 5);
	expect_fail(bad, 0, RK_EINVAL, "acct.txt:3:5: column 'plan':");
	/* Not JSON, not ours. */
	expect_fail("{\n  \"jobs\": [\n", 0, RK_EINVAL, "acct.txt:3:");
	expect_fail("{\"count\": 0}\n", 0, RK_EINVAL, "acct.txt:1:1: no \"jobs\" array");
	/* An empty history reads as no jobs, as a CSV with only its header does. */
	struct rk_trace t;
	struct rk_error err;
	assert_int_equal(parse("{\"jobs\": [], \"count\": 0, \"truncated\": false}\n", "auto", 0,
			       &t, &err),
			 0);
	assert_true(t.n == 0 && !strcmp(t.format, "history"));
	rk_trace_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sacct_jobs_steps_and_counts),
		cmocka_unit_test(sacct_header_variants),
		cmocka_unit_test(sacct_bad_rows),
		cmocka_unit_test(history_csv_black_boxes),
		cmocka_unit_test(history_json_white_and_black),
		cmocka_unit_test(history_json_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
