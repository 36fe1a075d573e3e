/* Strict validation of API bodies: every accepted field and every documented error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "daemon/job/jobspec.h"

static void good_spec(void **state)
{
	(void)state;
	const char *b = "{\"name\":\"n1\",\"model\":\"bert\",\"iterations\":10,\"gpus\":4,"
			"\"min_gpus\":2,\"max_gpus\":8,\"command\":\"run.sh\",\"cpus\":8,"
			"\"mem_mb\":1024,\"net_gbps\":1.5,\"guaranteed\":true,\"global_batch\":64,"
			"\"plan\":\"dp=4,tp=1,pp=1,mb=8,ga=2,gc=0,zero=1,offload=0\","
			"\"est_duration_s\":60,\"tenant\":\"t\",\"idempotency_key\":\"k1\","
			"\"env\":{\"Z_VAR\":\"a=b c\",\"NCCL_DEBUG\":\"INFO\"}}";
	struct rkd_spec s;
	struct rkd_verr v;
	assert_int_equal(rkd_spec_parse(b, strlen(b), &s, &v), 0);
	assert_string_equal(s.name, "n1");
	assert_int_equal(s.gpus, 4);
	assert_int_equal(s.min_gpus, 2);
	assert_int_equal(s.max_gpus, 8);
	assert_int_equal(s.plan.zero, 1);
	assert_true(s.guaranteed && s.has_plan);
	/* the canonical encoding parses back to the same spec */
	char *enc = rkd_spec_encode(&s);
	struct rkd_spec s2;
	assert_int_equal(rkd_spec_parse(enc, strlen(enc), &s2, &v), 0);
	assert_int_equal(s2.gpus, 4);
	assert_int_equal(s2.global_batch, 64);
	assert_string_equal(s2.command, "run.sh");
	assert_string_equal(s2.key, "k1");
	/* env: "K=V" in name order, through the encoding too */
	assert_int_equal(s2.n_env, 2);
	assert_string_equal(s2.env[0], "NCCL_DEBUG=INFO");
	assert_string_equal(s2.env[1], "Z_VAR=a=b c");
	free(enc);
	rkd_spec_fini(&s);
	rkd_spec_fini(&s2);
}

struct bad {
	const char *body;
	int code;
	const char *field;
};

static void every_spec_error(void **state)
{
	(void)state;
	static const struct bad cases[] = {
		{"{", RK_EINVAL, ""},
		{"[1]", RK_EINVAL, ""},
		{"{\"a\":1,\"a\":1}", RK_EINVAL, ""},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":1,\"command\":\"x\",\"zz\":1}", RK_EINVAL, "zz"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":\"1\",\"command\":\"x\"}", RK_EINVAL, "gpus"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":0,\"command\":\"x\"}", RK_ERANGE, "gpus"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":1,\"command\":\"x\",\"env\":[]}", RK_EINVAL, "env"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":1,\"command\":\"x\",\"env\":{\"A\":1}}", RK_EINVAL,
		 "env"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":1,\"command\":\"x\",\"env\":{\"RUBICK_URL\":\"u\"}}",
		 RK_EINVAL, "env"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":1,\"command\":\"x\",\"env\":{\"SLURM_CONF\":\"u\"}}",
		 RK_EINVAL, "env"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":1,\"command\":\"x\","
		 "\"env\":{\"CUDA_VISIBLE_DEVICES\":\"0\"}}",
		 RK_EINVAL, "env"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":1,\"command\":\"x\",\"env\":{\"1A\":\"u\"}}",
		 RK_EINVAL, "env"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":1,\"command\":\"x\",\"env\":{\"A-B\":\"u\"}}",
		 RK_EINVAL, "env"},
		{"{\"model\":\"b\",\"iterations\":1.5,\"gpus\":1,\"command\":\"x\"}", RK_EINVAL, "iterations"},
		{"{\"model\":\"b\",\"gpus\":1,\"command\":\"x\"}", RK_EINVAL, "iterations"},
		{"{\"model\":\"b\",\"iterations\":1,\"command\":\"x\"}", RK_EINVAL, "gpus"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":1}", RK_EINVAL, "command"},
		{"{\"iterations\":1,\"gpus\":1,\"command\":\"x\"}", RK_EINVAL, "model"},
		{"{\"model\":\"b\",\"launch\":\"l\",\"iterations\":1,\"gpus\":1}", RK_EINVAL, "model"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":2,\"min_gpus\":3,\"command\":\"x\"}", RK_ERANGE, "min_gpus"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":2,\"max_gpus\":1,\"command\":\"x\"}", RK_ERANGE, "max_gpus"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":2,\"plan\":\"dp=2\",\"command\":\"x\"}", RK_EINVAL, "plan"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":2,\"command\":\"x\","
		 "\"plan\":\"dp=4,tp=1,pp=1,mb=8,ga=1,gc=0,zero=0,offload=0\"}", RK_EINVAL, "plan"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":2,\"name\":\"a b\",\"command\":\"x\"}", RK_EINVAL, "name"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":2,\"name\":\"\",\"command\":\"x\"}", RK_ERANGE, "name"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":2,\"guaranteed\":1,\"command\":\"x\"}", RK_EINVAL, "guaranteed"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":2,\"net_gbps\":-1,\"command\":\"x\"}", RK_ERANGE, "net_gbps"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":2,\"tenant\":\"-x\",\"command\":\"x\"}", RK_EINVAL, "tenant"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rkd_spec s;
		struct rkd_verr v;
		memset(&v, 0, sizeof(v));
		int rc = rkd_spec_parse(cases[i].body, strlen(cases[i].body), &s, &v);
		if (rc != cases[i].code || strcmp(v.field, cases[i].field))
			fail_msg("case %zu (%s): got %d field '%s' (%s)", i, cases[i].body, rc, v.field,
				 v.e.msg);
		assert_true(v.e.msg[0] != '\0');
	}
}

/* Issue 13: a submission's own Slurm options, through the stored encoding, and their errors. */
static void slurm_options(void **state)
{
	(void)state;
	const char *b = "{\"model\":\"bert\",\"tenant\":\"t\",\"iterations\":1,\"gpus\":1,\"command\":\"x\","
			"\"slurm_partition\":\"long\",\"slurm_account\":\"phys-1\","
			"\"slurm_qos\":\"high.q\",\"slurm_time_limit\":90}";
	struct rkd_spec s, s2;
	struct rkd_verr v;
	assert_int_equal(rkd_spec_parse(b, strlen(b), &s, &v), 0);
	char *enc = rkd_spec_encode(&s);
	assert_int_equal(rkd_spec_parse(enc, strlen(enc), &s2, &v), 0);
	assert_string_equal(s2.slurm_partition, "long");
	assert_string_equal(s2.slurm_account, "phys-1");
	assert_string_equal(s2.slurm_qos, "high.q");
	assert_int_equal(s2.slurm_time_limit, 90);
	free(enc);
	rkd_spec_fini(&s);
	rkd_spec_fini(&s2);
	/* none given: none stored */
	b = "{\"model\":\"bert\",\"iterations\":1,\"gpus\":1,\"command\":\"x\"}";
	assert_int_equal(rkd_spec_parse(b, strlen(b), &s, &v), 0);
	enc = rkd_spec_encode(&s);
	assert_null(strstr(enc, "slurm_"));
	assert_true(!s.slurm_partition[0] && !s.slurm_time_limit);
	free(enc);
	rkd_spec_fini(&s);
	static const struct bad cases[] = {
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":1,\"command\":\"x\",\"slurm_qos\":\"a b\"}",
		 RK_EINVAL, "slurm_qos"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":1,\"command\":\"x\",\"slurm_account\":7}",
		 RK_EINVAL, "slurm_account"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":1,\"command\":\"x\",\"slurm_partition\":\"\"}",
		 RK_ERANGE, "slurm_partition"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":1,\"command\":\"x\",\"slurm_time_limit\":0}",
		 RK_ERANGE, "slurm_time_limit"},
		{"{\"model\":\"b\",\"iterations\":1,\"gpus\":1,\"command\":\"x\","
		 "\"slurm_account\":\"a234567890123456789012345678901234567890123456789012345678901234\"}",
		 RK_ERANGE, "slurm_account"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&v, 0, sizeof(v));
		int rc = rkd_spec_parse(cases[i].body, strlen(cases[i].body), &s, &v);
		if (rc != cases[i].code || strcmp(v.field, cases[i].field))
			fail_msg("case %zu (%s): got %d field '%s' (%s)", i, cases[i].body, rc, v.field,
				 v.e.msg);
	}
}

static void updates_reports_policy(void **state)
{
	(void)state;
	struct rkd_update u;
	struct rkd_verr v;
	const char *b = "{\"gpus\":4,\"plan\":null}";
	assert_int_equal(rkd_update_parse(b, strlen(b), &u, &v), 0);
	assert_true(u.has_gpus && u.gpus == 4 && u.has_plan && u.clear_plan);
	assert_int_equal(rkd_update_parse("{}", 2, &u, &v), RK_EINVAL);
	assert_int_equal(rkd_update_parse("{\"iters\":1}", 11, &u, &v), RK_EINVAL);
	assert_string_equal(v.field, "iters");
	struct rkd_report r;
	b = "{\"iters_done\":5,\"throughput_sps\":2.5,\"run\":2}";
	assert_int_equal(rkd_report_parse(b, strlen(b), &r, &v), 0);
	assert_true(r.iters_done == 5 && r.tput_sps == 2.5 && r.run == 2);
	b = "{\"throughput_sps\":2.5}";
	assert_int_equal(rkd_report_parse(b, strlen(b), &r, &v), RK_EINVAL);
	assert_string_equal(v.field, "iters_done");
	b = "{\"iters_done\":-1}";
	assert_int_equal(rkd_report_parse(b, strlen(b), &r, &v), RK_ERANGE);
	struct rkd_policy_req p;
	b = "{\"name\":\"sjf\",\"options\":\"a=1\"}";
	assert_int_equal(rkd_policy_req_parse(b, strlen(b), &p, &v), 0);
	assert_string_equal(p.options, "a=1");
	b = "{\"options\":\"a=1\"}";
	assert_int_equal(rkd_policy_req_parse(b, strlen(b), &p, &v), RK_EINVAL);
	assert_string_equal(v.field, "name");
}

/* Issue 22: plan_space, its errors, the submitted plan against it, the default and the encoding. */
static void plan_spaces(void **state)
{
	(void)state;
	struct rkd_spec s;
	struct rkd_verr v;
	const char *b = "{\"model\":\"b\",\"iterations\":1,\"gpus\":2,\"command\":\"x\","
			"\"plan_space\":\"zero<=2,tp<=2\",\"tenant\":\"t\"}";
	assert_int_equal(rkd_spec_parse(b, strlen(b), &s, &v), 0);
	assert_true(s.has_space && s.space.limited && s.space.tp_max == 2 && s.space.zero_max == 2);
	char *enc = rkd_spec_encode(&s);
	assert_non_null(strstr(enc, "\"plan_space\":\"tp<=2,zero<=2\""));
	struct rkd_spec s2;
	if (rkd_spec_parse(enc, strlen(enc), &s2, &v))
		fail_msg("%s: %s", enc, v.e.msg);
	assert_true(s2.has_space && rk_plan_space_equal(&s.space, &s2.space));
	free(enc);
	rkd_spec_fini(&s2);
	/* declared: the default leaves it */
	rkd_spec_default_space(&s);
	assert_int_equal(s.space.tp_max, 2);
	rkd_spec_fini(&s);
	/* a bad text names the field and the item's column */
	b = "{\"model\":\"b\",\"iterations\":1,\"gpus\":2,\"command\":\"x\",\"plan_space\":\"tp<=2,xx<=1\"}";
	assert_int_equal(rkd_spec_parse(b, strlen(b), &s, &v), RK_EINVAL);
	assert_string_equal(v.field, "plan_space");
	assert_non_null(strstr(v.e.msg, "plan_space:1:7:"));
	b = "{\"model\":\"b\",\"iterations\":1,\"gpus\":2,\"command\":\"x\",\"plan_space\":3}";
	assert_int_equal(rkd_spec_parse(b, strlen(b), &s, &v), RK_EINVAL);
	assert_string_equal(v.field, "plan_space");
	/* a plan outside the declared space: field plan, the dimension named */
	b = "{\"model\":\"b\",\"iterations\":1,\"gpus\":2,\"command\":\"x\",\"plan_space\":\"tp=1\","
	    "\"plan\":\"dp=1,tp=2,pp=1,mb=8,ga=1,gc=0,zero=0,offload=0\"}";
	assert_int_equal(rkd_spec_parse(b, strlen(b), &s, &v), RK_EINVAL);
	assert_string_equal(v.field, "plan");
	assert_non_null(strstr(v.e.msg, "dimension tp"));
	/* none declared: an opaque command gets "dp", stored in the encoding */
	b = "{\"model\":\"b\",\"iterations\":1,\"gpus\":2,\"command\":\"sh run.sh\"}";
	assert_int_equal(rkd_spec_parse(b, strlen(b), &s, &v), 0);
	assert_false(s.has_space);
	enc = rkd_spec_encode(&s);
	assert_null(strstr(enc, "plan_space")); /* a stored spec without it: accepted before spaces */
	free(enc);
	rkd_spec_default_space(&s);
	enc = rkd_spec_encode(&s);
	assert_non_null(strstr(enc, "\"plan_space\":\"tp=1,pp=1,zero=0,offload=no\""));
	free(enc);
	rkd_spec_fini(&s);
	/* ... widened by the submitter's own plan */
	b = "{\"model\":\"b\",\"iterations\":1,\"gpus\":2,\"command\":\"sh run.sh\","
	    "\"plan\":\"dp=1,tp=2,pp=1,mb=8,ga=1,gc=0,zero=0,offload=0\"}";
	assert_int_equal(rkd_spec_parse(b, strlen(b), &s, &v), 0);
	rkd_spec_default_space(&s);
	assert_true(s.has_space && s.space.tp_max == 2 && s.space.pp_max == 1 && !s.space.offload);
	assert_int_equal(rkd_spec_plan_check(&s, &s.plan, &v), 0);
	struct rk_plan p = s.plan;
	p.tp = 4;
	assert_int_equal(rkd_spec_plan_check(&s, &p, &v), RK_EINVAL);
	assert_string_equal(v.field, "plan");
	rkd_spec_fini(&s);
	/* a Megatron launch: tp and pp free, no ZeRO without DeepSpeed */
	b = "{\"model\":\"b\",\"iterations\":1,\"gpus\":2,"
	    "\"command\":\"torchrun pretrain_gpt.py --tensor-model-parallel-size 2\"}";
	assert_int_equal(rkd_spec_parse(b, strlen(b), &s, &v), 0);
	rkd_spec_default_space(&s);
	assert_true(s.space.limited && s.space.tp_max == RK_PLAN_DEGREE_MAX && s.space.zero_max == 0);
	rkd_spec_fini(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_spec),
		cmocka_unit_test(every_spec_error),
		cmocka_unit_test(slurm_options),
		cmocka_unit_test(updates_reports_policy),
		cmocka_unit_test(plan_spaces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
