/*
 * Every documented trace error: the code returned, "FILE:LINE:COL" and the
 * column or reason in the message, an empty result on failure, and --skip-bad
 * counting with the first reasons kept (issue 3: never silent).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "rubick/trace.h"

#define RUBICK_HDR                                                                        \
	"name,submission_time,duration,application,num_gpus,num_cpus,bandwidth,exec_plan,steps," \
	"is_sla\n"

/* Parse `text` expecting failure `code` with a message containing each of `want`. */
static void expect_fail(const char *text, const char *format, int code, const char *want1,
			const char *want2)
{
	struct rk_trace t;
	struct rk_error err;
	memset(&t, 0x5a, sizeof(t));
	int rc = rk_trace_parse(text, strlen(text), "bad.csv", format, NULL, &t, &err);
	if (rc != code || !strstr(err.msg, want1) || (want2 && !strstr(err.msg, want2)))
		print_message("rc=%d msg=%s\n", rc, err.msg);
	assert_int_equal(rc, code);
	assert_int_equal(err.code, code);
	assert_non_null(strstr(err.msg, want1));
	if (want2)
		assert_non_null(strstr(err.msg, want2));
	/* No side effects on failure: the output is empty and needs no fini. */
	assert_null(t.jobs);
	assert_int_equal(t.n, 0);
}

static void unknown_format(void **state)
{
	(void)state;
	expect_fail("a,b,c\n1,2,3\n", "auto", RK_EINVAL, "bad.csv:1:1: unknown trace format", NULL);
	expect_fail("a\n", "csv9", RK_ENOTFOUND, "--format: unknown trace format 'csv9'", NULL);
	expect_fail("", "auto", RK_EINVAL, "bad.csv: empty trace", NULL);
	expect_fail("\n\n# only a comment\n", "auto", RK_EINVAL, "empty trace", NULL);
}

static void missing_and_repeated_column(void **state)
{
	(void)state;
	/* Forced format, header without `steps`. */
	expect_fail("name,submission_time,duration,application,num_gpus,exec_plan\n"
		    "a,0,1,vit,1,ga\n",
		    "rubick", RK_EINVAL, "bad.csv:1:1: header: missing column 'steps'", NULL);
	expect_fail("submit_s,gpus,gpus\n0,1,1\n", "auto", RK_EINVAL, "bad.csv:1:",
		    "column 'gpus' appears twice");
	expect_fail("submit_s,gpus\n0,1,7\n", "auto", RK_EINVAL,
		    "bad.csv:2:1: line has 3 fields, the header has 2", NULL);
	expect_fail("submit_s,gpus,name\n0,1\n", "auto", RK_EINVAL, "bad.csv:2:1: line has 2 fields",
		    NULL);
}

static void not_a_number(void **state)
{
	(void)state;
	/* num_gpus starts at byte 18 of "vit-0,0,3163,vit,abc,...". */
	expect_fail(RUBICK_HDR "vit-0,0,3163,vit,abc,16,0,zero-dp,37239,0\n", "auto", RK_EINVAL,
		    "bad.csv:2:18: column 'num_gpus': 'abc' is not an integer", NULL);
	expect_fail(RUBICK_HDR "vit-0,0,31x3,vit,2,16,0,zero-dp,37239,0\n", "auto", RK_EINVAL,
		    "bad.csv:2:9: column 'duration': '31x3' is not a number", NULL);
	expect_fail(RUBICK_HDR "vit-0,0,nan,vit,2,16,0,zero-dp,37239,0\n", "auto", RK_EINVAL,
		    "column 'duration': 'nan' is not a number", NULL);
	expect_fail(RUBICK_HDR "vit-0,0,1,vit,2.5,16,0,zero-dp,37239,0\n", "auto", RK_EINVAL,
		    "column 'num_gpus': '2.5' is not an integer", NULL);
	expect_fail(RUBICK_HDR "vit-0,,1,vit,2,16,0,zero-dp,37239,0\n", "auto", RK_EINVAL,
		    "bad.csv:2:7: column 'submission_time': empty", NULL);
	expect_fail("0,res50,zero,10,1\n", "synergy", RK_EINVAL,
		    "bad.csv:1:9: column 'arrival_time': 'zero' is not a number", NULL);
}

static void negative_or_out_of_range(void **state)
{
	(void)state;
	expect_fail(RUBICK_HDR "vit-0,-5,1,vit,2,16,0,zero-dp,37239,0\n", "auto", RK_ERANGE,
		    "bad.csv:2:7: column 'submission_time': -5 is outside [0,", NULL);
	expect_fail(RUBICK_HDR "vit-0,0,1,vit,0,16,0,zero-dp,37239,0\n", "auto", RK_ERANGE,
		    "column 'num_gpus': 0 is outside [1,", NULL);
	expect_fail(RUBICK_HDR "vit-0,0,1,vit,2,16,0,zero-dp,37239,2\n", "auto", RK_ERANGE,
		    "column 'is_sla': 2 is outside [0, 1]", NULL);
	expect_fail("name,time,application,num_replicas,batch_size\nx,-1,bert,1,8\n", "auto",
		    RK_ERANGE, "bad.csv:2:3: column 'time'", NULL);
	expect_fail("job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,"
		    "iteration_time\n0,1,-1000,5,dqn,8,100,10\n",
		    "auto", RK_ERANGE, "bad.csv:2:5: column 'submit_time'", NULL);
	expect_fail("timestamp,duration,num_gpus\n2017-13-01 00:00:00,1,1\n", "auto", RK_EINVAL,
		    "bad.csv:2:1: column 'timestamp': '2017-13-01 00:00:00' is not", NULL);
	expect_fail("timestamp,duration,num_gpus\n2017-02-29 00:00:00,1,1\n", "auto", RK_EINVAL,
		    "column 'timestamp'", NULL);
	expect_fail("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,10,2,500\n", "auto",
		    RK_ERANGE, "bad.csv:2:", "only applies to 1-GPU pods");
	expect_fail("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,10,1,1500\n", "auto",
		    RK_ERANGE, "column 'gpu_milli': 1500 is outside [0, 1000]", NULL);
	expect_fail("submit_s,gpus,min_gpus,max_gpus\n0,2,4,8\n", "auto", RK_ERANGE,
		    "bad.csv:2:1: elastic range [4, 8] does not contain the 2 GPUs", NULL);
}

static void bad_plan_text(void **state)
{
	(void)state;
	/* exec_plan is field 8: "vit-0,0,1,vit,2,16,0," is 21 bytes. */
	expect_fail(RUBICK_HDR "vit-0,0,1,vit,2,16,0,zero-3,37239,0\n", "auto", RK_EINVAL,
		    "bad.csv:2:22: column 'exec_plan': plan 'zero-3': not ga, gc", NULL);
	/* Every artifact name the plan module reads is accepted. */
	struct rk_trace ok;
	const char *names = RUBICK_HDR "a,0,1,vit,1,8,0,zero-offload+gc,1,0\nb,0,1,vit,2,8,0,tp+ga,1,0\n";
	assert_int_equal(rk_trace_parse(names, strlen(names), "p.csv", "auto", NULL, &ok, NULL), 0);
	assert_int_equal(ok.n, 2);
	rk_trace_fini(&ok);
	expect_fail(RUBICK_HDR "l-0,0,1,llama7,8,64,0,344,64,0\n", "auto", RK_EINVAL,
		    "column 'exec_plan': plan '344': digits (pp, tp, dp) multiply to 48, but 8 GPUs",
		    NULL);
	expect_fail("submit_s,gpus,plan\n0,4,\"dp=2,tp=1,pp=1,mb=1,ga=1,gc=0,zero=0,offload=0\"\n",
		    "auto", RK_EINVAL, "bad.csv:2:", "column 'plan'");
	expect_fail("submit_s,gpus,plan\n0,4,\"dp=4,tp=1\n", "auto", RK_EINVAL,
		    "bad.csv:2:1: unbalanced double quote", NULL);
	expect_fail("submit_s,gpus,plan,global_batch\n0,2,\"dp=2,tp=1,pp=1,mb=3,ga=1,gc=0,zero=0,"
		    "offload=0\",16\n",
		    "auto", RK_EINVAL, "column 'plan'", NULL);
}

static void bad_plan_space(void **state)
{
	(void)state;
	/* The item at fault, at its column in the file: "pq" begins at byte 12. */
	expect_fail("submit_s,gpus,space\n0,1,\"tp<=2,pq<=3\"\n", "auto", RK_EINVAL,
		    "bad.csv:2:12: column 'space': ", "pq");
	expect_fail("submit_s,gpus,space\n0,1,zero<=7\n", "auto", RK_ERANGE,
		    "bad.csv:2:11: column 'space': ", "zero");
	/* A requested plan outside the job's own space names the job and the dimension. */
	expect_fail("name,submit_s,gpus,plan,space\n"
		    "j1,0,4,\"dp=2,tp=2,pp=1,mb=1,ga=1,gc=0,zero=0,offload=0\",tp=1\n",
		    "auto", RK_EINVAL, "bad.csv:2:9: job j1: its plan", "outside its own space 'tp=1' (tp)");
	/* The Rubick artifact format takes the same column. */
	expect_fail("name,submission_time,duration,application,num_gpus,exec_plan,steps,space\n"
		    "a,0,1,vit,1,ga,10,offload=maybe\n",
		    "rubick", RK_EINVAL, "bad.csv:2:", "column 'space'");
}

static void unknown_model(void **state)
{
	(void)state;
	/* Rubick and native name zoo models: an unknown one is never remapped. */
	expect_fail(RUBICK_HDR "r-0,0,1,resnet,2,16,0,ga,10,0\n", "auto", RK_ENOTFOUND,
		    "bad.csv:2:9: column 'application': unknown model 'resnet' (zoo: vit,", NULL);
	expect_fail("submit_s,gpus,model\n0,1,mixtral\n", "auto", RK_ENOTFOUND,
		    "bad.csv:2:5: column 'model': unknown model 'mixtral'", NULL);
	/* A restricted zoo: the mapping has nothing to map onto. */
	static const char *const none[] = {NULL};
	struct rk_trace_options o = rk_trace_options_default();
	o.models = none;
	struct rk_trace t;
	struct rk_error err;
	const char *text = "0,res50,0,10,1\n";
	assert_int_equal(rk_trace_parse(text, strlen(text), "s.log", "auto", &o, &t, &err),
			 RK_ENOTFOUND);
	assert_non_null(strstr(err.msg, "s.log:1:1: no zoo model to map job type 'res50' onto"));
}

static void duplicate_name_and_misc(void **state)
{
	(void)state;
	/* A repeated name is kept under "<name>~<line>" and counted; only a clash
	 * of that name too is an error. */
	struct rk_trace r;
	struct rk_error e;
	const char *dup = "submit_s,gpus,name\n0,1,a\n1,1,b\n2,1,a\n";
	assert_int_equal(rk_trace_parse(dup, strlen(dup), "d.csv", "auto", NULL, &r, &e), 0);
	assert_int_equal(r.n, 3);
	assert_int_equal(r.n_renamed, 1);
	assert_string_equal(r.jobs[2].name, "a~4");
	rk_trace_fini(&r);
	expect_fail("submit_s,gpus,name\n0,1,a~4\n1,1,a\n2,1,a\n", "auto", RK_EEXIST,
		    "bad.csv:4:1: job name 'a' already used on line 3, and 'a~4' too", NULL);
	expect_fail("A3C\tpython3 main.py\t-n\t1\t10\t0\t1\nA3C\tx\t-n\t1\t10\t0\n", "auto",
		    RK_EINVAL, "bad.csv:2:1: line has 6 tab-separated fields, the first line has 7",
		    NULL);
	static const char nul[] = "submit_s,gpus\n0,1\n0\0,1\n";
	struct rk_trace t;
	struct rk_error err;
	assert_int_equal(rk_trace_parse(nul, sizeof(nul) - 1, "n.csv", "auto", NULL, &t, &err),
			 RK_EINVAL);
	assert_non_null(strstr(err.msg, "n.csv:3:1: NUL byte"));
	struct rk_trace_options o = rk_trace_options_default();
	o.window_start_ms = 10;
	o.window_end_ms = 5;
	assert_int_equal(rk_trace_parse("submit_s,gpus\n0,1\n", 17, "w.csv", "auto", &o, &t, &err),
			 RK_EINVAL);
	assert_non_null(strstr(err.msg, "time window"));
	/* A NULL error report is allowed. */
	assert_int_equal(rk_trace_parse("x\n", 2, "x", "auto", NULL, &t, NULL), RK_EINVAL);
}

static void skip_bad_counts_and_keeps_reasons(void **state)
{
	(void)state;
	const char *text = RUBICK_HDR
		"ok-1,0,1,vit,1,8,0,ga,10,0\n"
		"bad-2,x,1,vit,1,8,0,ga,10,0\n"
		"bad-3,0,1,nosuch,1,8,0,ga,10,0\n"
		"ok-4,5,1,bert,2,16,0,gc,10,1\n"
		"bad-5,0,1,vit,1,8,0,999,10,0\n"
		"bad-6,0,1,vit,-1,8,0,ga,10,0\n"
		"ok-1,9,1,vit,1,8,0,ga,10,0\n"
		"bad-8,0,1,vit\n";
	struct rk_trace_options o = rk_trace_options_default();
	o.skip_bad = 1;
	struct rk_trace t;
	struct rk_error err;
	assert_int_equal(rk_trace_parse(text, strlen(text), "s.csv", "auto", &o, &t, &err), 0);
	assert_int_equal(t.n, 3); /* the second ok-1 (line 8) is kept as ok-1~8 */
	assert_int_equal(t.n_renamed, 1);
	assert_int_equal(t.n_lines, 8);
	assert_int_equal(t.n_skipped, 5);
	assert_int_equal(t.n_reasons, RK_TRACE_REASONS_MAX);
	assert_non_null(strstr(t.reasons[0], "s.csv:3:7: column 'submission_time'"));
	assert_non_null(strstr(t.reasons[1], "s.csv:4:"));
	assert_non_null(strstr(t.reasons[1], "unknown model 'nosuch'"));
	assert_non_null(strstr(t.reasons[2], "s.csv:6:"));
	assert_non_null(strstr(t.reasons[3], "s.csv:7:"));
	assert_string_equal(t.jobs[0].name, "ok-1");
	assert_string_equal(t.jobs[1].name, "ok-4");
	assert_string_equal(t.jobs[2].name, "ok-1~8");
	rk_trace_fini(&t);
	/* Without skip_bad the first bad line fails the parse. */
	assert_int_equal(rk_trace_parse(text, strlen(text), "s.csv", "auto", NULL, &t, &err),
			 RK_EINVAL);
	assert_non_null(strstr(err.msg, "s.csv:3:7:"));
	/* A NUL byte is a bad line like any other (found by fuzz_trace). */
	static const char nul[] = "submit_s,gpus\n0,1\n0\0,1\n";
	assert_int_equal(rk_trace_parse(nul, sizeof(nul) - 1, "z.csv", "auto", &o, &t, &err), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.n_skipped, 1);
	assert_non_null(strstr(t.reasons[0], "z.csv:3:1: NUL byte"));
	rk_trace_fini(&t);
	/* A bad header is fatal even with skip_bad. */
	const char *hdr = "name,submission_time,duration,application,num_gpus,exec_plan\nx,0,1,vit,1,ga\n";
	assert_int_equal(rk_trace_parse(hdr, strlen(hdr), "h.csv", "rubick", &o, &t, &err),
			 RK_EINVAL);
	assert_non_null(strstr(err.msg, "h.csv:1:1: header: missing column"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unknown_format),
		cmocka_unit_test(missing_and_repeated_column),
		cmocka_unit_test(not_a_number),
		cmocka_unit_test(negative_or_out_of_range),
		cmocka_unit_test(bad_plan_text),
		cmocka_unit_test(bad_plan_space),
		cmocka_unit_test(unknown_model),
		cmocka_unit_test(duplicate_name_and_misc),
		cmocka_unit_test(skip_bad_counts_and_keeps_reasons),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
