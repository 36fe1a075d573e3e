/* src/cli/squeue*.c: state names, TIME, host lists and the -o format (squeue.h). */
#include "cli/squeue.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_states(void **state)
{
	(void)state;
	assert_string_equal(rk_sq_state_long("pending"), "PENDING");
	assert_string_equal(rk_sq_state_short("running"), "R");
	assert_string_equal(rk_sq_state_short("cancelled"), "CA");
	assert_string_equal(rk_sq_state_long("done"), "COMPLETED");
	assert_string_equal(rk_sq_state_long("weird"), "weird");
	assert_string_equal(rk_sq_state_parse("PD"), "pending");
	assert_string_equal(rk_sq_state_parse("running"), "running");
	assert_string_equal(rk_sq_state_parse("Completed"), "done");
	assert_string_equal(rk_sq_state_parse("f"), "failed");
	assert_null(rk_sq_state_parse("XX"));
	assert_null(rk_sq_state_parse(""));
	assert_null(rk_sq_state_name(RK_SQ_N_STATES));
	for (int i = 0; i < RK_SQ_N_STATES; i++)
		assert_string_equal(rk_sq_state_parse(rk_sq_state_short(rk_sq_state_name(i))),
		                    rk_sq_state_name(i));
}

static void test_time(void **state)
{
	(void)state;
	char b[32];
	assert_string_equal(rk_sq_time(-5, b, sizeof(b)), "0:00");
	assert_string_equal(rk_sq_time(0, b, sizeof(b)), "0:00");
	assert_string_equal(rk_sq_time(61999, b, sizeof(b)), "1:01");
	assert_string_equal(rk_sq_time(3599000, b, sizeof(b)), "59:59");
	assert_string_equal(rk_sq_time(3600000, b, sizeof(b)), "1:00:00");
	assert_string_equal(rk_sq_time(86399000, b, sizeof(b)), "23:59:59");
	assert_string_equal(rk_sq_time(2LL * 86400000 + 3723000, b, sizeof(b)), "2-01:02:03");
}

static void hl(const char *want, int n, ...)
{
	const char *v[16];
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		v[i] = va_arg(ap, const char *);
	va_end(ap);
	char b[128];
	assert_int_equal(rk_sq_hostlist(v, n, b, sizeof(b)), 0);
	assert_string_equal(b, want);
}

static void test_hostlist(void **state)
{
	(void)state;
	hl("", 0);
	hl("n1", 1, "n1");
	hl("n[1-3,5]", 4, "n3", "n1", "n2", "n5");
	hl("n[1-2]", 3, "n1", "n2", "n1");
	hl("n[01-03]", 3, "n01", "n02", "n03");
	hl("gpu[1,10],cpu7", 3, "gpu1", "cpu7", "gpu10");
	hl("login,n[1-2]", 3, "login", "n1", "n2");
	hl("a[1-2,10]", 3, "a1", "a2", "a10");
	hl("a[01-02],a[1,3]", 4, "a01", "a1", "a02", "a3");
	const char *v[] = {"node1", "node3"};
	char b[6];
	assert_int_equal(rk_sq_hostlist(v, 2, b, sizeof(b)), -1);
	assert_true(strlen(b) < sizeof(b));
}

static char *render(const char *fmt, const struct rk_sq_job *j, int header)
{
	struct rk_sq_format f;
	char why[128];
	assert_int_equal(rk_sq_format_parse(fmt, &f, why, sizeof(why)), 0);
	char *s = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&s, &n);
	assert_non_null(m);
	if (header)
		rk_sq_print_header(&f, m);
	else
		rk_sq_print_job(&f, j, 100000, m);
	fclose(m);
	return s;
}

static void expect(const char *fmt, const struct rk_sq_job *j, int header, const char *want)
{
	char *s = render(fmt, j, header);
	assert_string_equal(s, want);
	free(s);
}

static void test_format(void **state)
{
	(void)state;
	struct rk_sq_job run = {.id = 7,
	                        .name = "bert",
	                        .user = "alice",
	                        .state = "running",
	                        .submit_ms = 0,
	                        .start_ms = 10000,
	                        .end_ms = -1,
	                        .gpus = 4,
	                        .alloc_gpus = 4,
	                        .n_nodes = 2,
	                        .nodelist = "n[0-1]",
	                        .plan = "dp=2,tp=2,pp=1,ga=1",
	                        .iters_done = 3,
	                        .iters = 10};
	struct rk_sq_job pend = {.id = 8,
	                         .name = "gpt",
	                         .user = "bob",
	                         .state = "pending",
	                         .submit_ms = 5000,
	                         .start_ms = -1,
	                         .end_ms = -1,
	                         .gpus = 8,
	                         .reason = "JobHeldAdmin"};
	expect("%i|%j|%u|%T|%t", &run, 0, "7|bert|alice|RUNNING|R");
	expect("%.5i|%-6j|%6u|", &run, 0, "    7|bert  |alice |");
	expect("%.4t %M %D %N %b %{alloc_gpus}", &run, 0, "   R 1:30 2 n[0-1] 4 4");
	expect("%M %R %r %D %{alloc_gpus}", &pend, 0, "0:00 (JobHeldAdmin) JobHeldAdmin 0 0");
	expect("%R|%r", &run, 0, "n[0-1]|None");
	expect("%2{plan}|%{iters}", &run, 0, "dp=2,tp=2,pp=1,ga=1|3/10");
	expect("%{plan} %S", &pend, 0, "- N/A");
	expect("%V", &run, 0, "1970-01-01T00:00:00Z");
	expect("100%% %i", &run, 0, "100% 7");
	expect(RK_SQ_DEFAULT_FORMAT, NULL, 1,
	       "   JOBID NAME             USER       ST       TIME NODES GPUS ALLOC_GPUS PLAN "
	       "                NODELIST(REASON)");
	expect("%.8T %{gpu_ids} %{restarts}", NULL, 1, "   STATE GPU_IDS RESTARTS");
}

static void bad(const char *fmt, const char *in_why)
{
	struct rk_sq_format f = {.n = 99};
	char why[160];
	assert_int_equal(rk_sq_format_parse(fmt, &f, why, sizeof(why)), -1);
	assert_non_null(strstr(why, in_why));
	assert_int_equal(f.n, 99); /* untouched on failure */
}

static void test_format_errors(void **state)
{
	(void)state;
	bad("%i %Q", "'%Q' at 4 is not a field");
	bad("%.10{bogus}", "'%.10{bogus}' at 1 is not a field");
	bad("%{plan", "'%{' at 1");
	bad("%i %", "'%' at 4");
	bad("%5000i", "width above 1000");
	char many[400] = "";
	for (int i = 0; i < RK_SQ_MAX_FIELDS + 1; i++)
		strcat(many, "%i");
	bad(many, "more than");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_states),        cmocka_unit_test(test_time),
	    cmocka_unit_test(test_hostlist),      cmocka_unit_test(test_format),
	    cmocka_unit_test(test_format_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
