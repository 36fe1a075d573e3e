/* Profile readers (profile.c): the artifact's config.csv + data.csv pair and
 * rubick's own format, with every documented error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "rubick/profile.h"

#include <stdio.h>
#include <string.h>

static const char *cfg_ok =
	"\xEF\xBB\xBFnodes,gpus,parameter_size,batch_size,seq_hid,num_cpu_threads,zero_type,is_tp,"
	"is_pp\r\n"
	"1,8,320.7,1,12582912,1,0,0,0\r\n"
	"1,4,320.7,1,12582912,4,1,0,0\r\n"
	"1,2,320.7,1,12582912,1,2,0,0";
static const char *dat_ok = "\xEF\xBB\xBF"
			    "forward_time,Tcc,Topt,iter_time,strategy\r\n"
			    "40,83,25,157,1100\r\n"
			    "63,158,148,376,1111\r\n"
			    "116,219,25,365,2102";

static int parse(const char *cfg, const char *dat, int batch, struct rk_profile *p,
		 struct rk_error *err)
{
	return rk_profile_parse_artifact(cfg, strlen(cfg), "c.csv", dat, strlen(dat), "d.csv",
					 batch, p, err);
}

static void test_artifact_pair(void **state)
{
	(void)state;
	struct rk_profile p;
	struct rk_error err;
	assert_int_equal(parse(cfg_ok, dat_ok, 32, &p, &err), 0);
	assert_int_equal(p.n, 3);
	assert_float_equal(p.param_mi, 320.7, 1e-9);
	assert_float_equal(p.seq_hid, 12582912, 0);
	const struct rk_perf_sample *s = p.samples;
	assert_int_equal(s[0].plan.dp, 8);
	assert_int_equal(s[0].plan.mb, 4);
	assert_int_equal(s[0].plan.zero, 0);
	assert_int_equal(s[0].cpus_per_gpu, 1);
	assert_float_equal(s[0].iter_ms, 157, 0);
	assert_int_equal(s[0].line, 2);
	assert_int_equal(s[1].plan.offload, 1); /* zero_type 1 = ZeRO-Offload */
	assert_int_equal(s[1].plan.zero, 2);
	assert_int_equal(s[1].cpus_per_gpu, 4);
	assert_int_equal(s[2].plan.zero, 2); /* zero_type 2 = ZeRO-DP */
	assert_int_equal(s[2].plan.offload, 0);
	assert_int_equal(s[2].plan.gc, 1); /* alpha_f 2 = checkpointing */
	assert_int_equal(s[2].placement.gpus[0], 2);
	rk_profile_fini(&p);
}

static void expect_error(const char *cfg, const char *dat, int batch, const char *where,
			 const char *what)
{
	struct rk_profile p;
	struct rk_error err = {0};
	assert_true(parse(cfg, dat, batch, &p, &err) < 0);
	if (!strstr(err.msg, where) || !strstr(err.msg, what))
		fail_msg("message '%s' lacks '%s' or '%s'", err.msg, where, what);
	assert_int_equal(p.n, 0);
	assert_null(p.samples);
}

static void test_artifact_errors(void **state)
{
	(void)state;
	const char *ch = "nodes,gpus,parameter_size,batch_size,seq_hid,num_cpu_threads,zero_type,"
			 "is_tp,is_pp\n";
	const char *dh = "forward_time,Tcc,Topt,iter_time,strategy\n";
	char c[512], d[512];
	expect_error("", dat_ok, 32, "c.csv:1:1", "empty");
	expect_error(cfg_ok, "", 32, "d.csv:1:1", "empty");
	expect_error("nodes,gpus\n1,1\n", dat_ok, 32, "c.csv:1:1", "missing column");
	expect_error(cfg_ok, "forward_time,Tcc,Topt,iter_time,strategy,extra\n", 32, "d.csv:1:42",
		     "unknown column 'extra'");
	snprintf(c, sizeof(c), "%s1,8,320.7,1,1,1,0,0,0\n1,4,320.7,1,1,1,0,0,0\n", ch);
	snprintf(d, sizeof(d), "%s40,83,25,157,1100\n", dh);
	expect_error(c, d, 32, "d.csv:3:1", "row count differs");
	snprintf(c, sizeof(c), "%s1,8,320.7,1,1,1,0,0,0\n", ch);
	snprintf(d, sizeof(d), "%s40,83,25,157,1100\n41,80,20,150,1100\n", dh);
	expect_error(c, d, 32, "c.csv:3:1", "row count differs");
	snprintf(d, sizeof(d), "%s40,83,25,0,1100\n", dh);
	expect_error(c, d, 32, "d.csv:2:10", "iter_time must be > 0");
	snprintf(d, sizeof(d), "%s40,x,25,157,1100\n", dh);
	expect_error(c, d, 32, "d.csv:2:4", "Tcc");
	snprintf(d, sizeof(d), "%s40,83,25,157,110\n", dh);
	expect_error(c, d, 32, "d.csv:2:14", "not 4 digits");
	snprintf(d, sizeof(d), "%s40,83,25,157,3100\n", dh);
	expect_error(c, d, 32, "d.csv:2:14", "alpha_f");
	snprintf(d, sizeof(d), "%s40,83,25,157,1101\n", dh);
	expect_error(c, d, 32, "d.csv:2:17", "but the config row (c.csv:2) says 0");
	snprintf(d, sizeof(d), "%s40,83,25,157,1100\n", dh);
	expect_error(c, d, 12, "c.csv:2:3", "do not divide the global batch 12");
	snprintf(c, sizeof(c), "%s1,8,320.7,1,1,1,0,1,0\n", ch);
	expect_error(c, d, 32, "c.csv:2:", "tensor/pipeline");
	snprintf(c, sizeof(c), "%s1,8,320.7,1,1,1,3,0,0\n", ch);
	expect_error(c, d, 32, "c.csv:2:", "zero_type");
	snprintf(c, sizeof(c), "%s0,8,320.7,1,1,1,0,0,0\n", ch);
	expect_error(c, d, 32, "c.csv:2:1", "nodes");
	snprintf(c, sizeof(c), "%s1,8,320.7,1,1,1,0,0,0\n1,4,999,1,1,1,0,0,0\n", ch);
	snprintf(d, sizeof(d), "%s40,83,25,157,1100\n65,130,24,225,1100\n", dh);
	expect_error(c, d, 32, "c.csv:3:", "parameter_size");
	snprintf(c, sizeof(c), "%s1,8,320.7,1,-1,1,0,0,0\n", ch);
	snprintf(d, sizeof(d), "%s40,83,25,157,1100\n", dh);
	expect_error(c, d, 32, "c.csv:2:", "negative");
	snprintf(c, sizeof(c), "%s1,8,320.7,1,1,1,0,0\n", ch);
	expect_error(c, d, 32, "c.csv:2:1", "8 fields");
	expect_error(cfg_ok, dat_ok, 0, "c.csv", "global batch");
}

static const char *native_ok =
	"# bert profile\n"
	"model = bert\n"
	"global_batch = 32\n"
	"param_mi=320.7\n"
	"# plan placement cpus_per_gpu fwd_ms sync_ms opt_ms iter_ms\n"
	"dp=8,tp=1,pp=1,mb=4,ga=1,gc=0,zero=0,offload=0   8  1  40  83  25  157\n"
	"dp=4,tp=1,pp=1,mb=8,ga=1,gc=0,zero=2,offload=1   4  4  63  -   148 376\n"
	"dp=8,tp=1,pp=1,mb=2,ga=2,gc=1,zero=0,offload=0   44 1  -   -   -   210\n";

static void test_native(void **state)
{
	(void)state;
	struct rk_profile p;
	struct rk_error err;
	assert_int_equal(rk_profile_parse(native_ok, strlen(native_ok), "b.prof", &p, &err), 0);
	assert_string_equal(p.model, "bert");
	assert_int_equal(p.global_batch, 32);
	assert_float_equal(p.param_mi, 320.7, 1e-12);
	assert_int_equal(p.n, 3);
	assert_int_equal(p.samples[1].plan.offload, 1);
	assert_float_equal(p.samples[1].sync_ms, -1, 0);
	assert_int_equal(p.samples[1].cpus_per_gpu, 4);
	assert_int_equal(p.samples[2].placement.n_nodes, 2);
	assert_int_equal(p.samples[2].plan.ga, 2);
	assert_int_equal(p.samples[2].line, 8);
	rk_profile_fini(&p);
}

static void native_error(const char *text, const char *where, const char *what)
{
	struct rk_profile p;
	struct rk_error err = {0};
	assert_true(rk_profile_parse(text, strlen(text), "b.prof", &p, &err) < 0);
	if (!strstr(err.msg, where) || !strstr(err.msg, what))
		fail_msg("message '%s' lacks '%s' or '%s'", err.msg, where, what);
	assert_null(p.samples);
}

static void test_native_errors(void **state)
{
	(void)state;
	const char *row = "dp=8,tp=1,pp=1,mb=4,ga=1,gc=0,zero=0,offload=0 8 1 40 83 25 157\n";
	char buf[512];
	native_error("", "b.prof:1:1", "no samples");
	native_error("global_batch = 32\n", "b.prof:2:1", "no samples");
	native_error(row, "b.prof:1:1", "global_batch");
	native_error("speed = 3\n", "b.prof:1:1", "unknown key 'speed'");
	native_error("global_batch = x\n", "b.prof:1:16", "global_batch");
	native_error("global_batch = 0\n", "b.prof:1:16", "global_batch");
	snprintf(buf, sizeof(buf), "global_batch = 32\n%smodel = bert\n", row);
	native_error(buf, "b.prof:3:1", "keys come before");
	native_error("global_batch = 32\ndp=8,tp=1,pp=1,mb=4,ga=1,gc=0,zero=0,offload=0 8 1 40\n",
		     "b.prof:2:", "4 fields");
	native_error("global_batch = 32\ndp=8,tp=1,pp=1,mb=4,ga=1,gc=0,zero=0 8 1 40 83 25 157\n",
		     "b.prof:2", "plan at column 1");
	native_error("global_batch = 32\ndp=8,tp=1,pp=1,mb=4,ga=1,gc=0,zero=0,offload=0 8x 1 40 83 "
		     "25 157\n",
		     "b.prof:2", "placement at column 48");
	native_error("global_batch = 32\ndp=8,tp=1,pp=1,mb=4,ga=1,gc=0,zero=0,offload=0 4 1 40 83 "
		     "25 157\n",
		     "b.prof:2:48", "the placement has 4");
	native_error("global_batch = 16\ndp=8,tp=1,pp=1,mb=4,ga=1,gc=0,zero=0,offload=0 8 1 40 83 "
		     "25 157\n",
		     "b.prof:2:1", "global_batch is 16");
	native_error("global_batch = 32\ndp=8,tp=1,pp=1,mb=4,ga=1,gc=0,zero=0,offload=0 8 0 40 83 "
		     "25 157\n",
		     "b.prof:2:50", "cpus_per_gpu");
	native_error("global_batch = 32\ndp=8,tp=1,pp=1,mb=4,ga=1,gc=0,zero=0,offload=0 8 1 40 83 "
		     "25 0\n",
		     "b.prof:2:", "iter_ms must be > 0");
	native_error("global_batch = 32\ndp=8,tp=1,pp=1,mb=4,ga=1,gc=0,zero=0,offload=0 8 1 40 ? "
		     "25 9\n",
		     "b.prof:2:", "sync_ms");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_artifact_pair),
		cmocka_unit_test(test_artifact_errors),
		cmocka_unit_test(test_native),
		cmocka_unit_test(test_native_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
