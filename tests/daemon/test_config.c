/* rubickd configuration: keys, tenants, every error with FILE:LINE:COL, token files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/identity/config.h"

static void parse_good(void **state)
{
	(void)state;
	struct rkd_config c;
	struct rk_error e;
	rkd_config_defaults(&c);
	const char *text = "# comment\nlisten = unix:/tmp/x.sock\npolicy = sjf  # trailing\n"
			   "sync = normal\ngrace_ms = 500\n[tenant alice]\ngpu_quota = 8\n"
			   "guaranteed_gpu_quota = 4\ntoken_file = /a.token\nuser = alice\n"
			   "group = staff\n[tenant bob]\nallow_root = yes\njob_user = x\n"
			   "[tenant carol]\n";
	/* job_user inside a section is a tenant key: unknown there */
	assert_int_not_equal(rkd_config_parse(&c, text, "r.conf", &e), 0);
	assert_non_null(strstr(e.msg, "r.conf:14:1: unknown tenant key 'job_user'"));
	rkd_config_defaults(&c);
	text = "# comment\nlisten = unix:/tmp/x.sock\npolicy = sjf  # trailing\n"
	       "sync = normal\ngrace_ms = 500\njob_user = nobody\nallow_root = no\n"
	       "[tenant alice]\ngpu_quota = 8\nguaranteed_gpu_quota = 4\ntoken_file = /a.token\n"
	       "user = alice\ngroup = staff\n[tenant bob]\nallow_root = yes\n";
	assert_int_equal(rkd_config_parse(&c, text, "r.conf", &e), 0);
	assert_string_equal(c.job_user, "nobody");
	assert_int_equal(c.allow_root, 0);
	assert_string_equal(c.tenant_user[0], "alice");
	assert_string_equal(c.tenant_group[0], "staff");
	assert_int_equal(c.tenant_allow_root[0], 0);
	assert_string_equal(c.tenant_user[1], "");
	assert_int_equal(c.tenant_allow_root[1], 1);
	assert_string_equal(c.listen, "unix:/tmp/x.sock");
	assert_string_equal(c.policy, "sjf");
	assert_string_equal(c.sync, "normal");
	assert_int_equal(c.grace_ms, 500);
	assert_int_equal(c.run_cgroup_off, 0); /* auto unless said */
	assert_int_equal(rkd_config_set(&c, "run_cgroup", "off", "r.conf:9", &e), 0);
	assert_int_equal(c.run_cgroup_off, 1);
	assert_int_equal(c.n_tenants, 2);
	assert_int_equal(c.tenants[0].gpu_quota, 8);
	assert_int_equal(c.tenants[1].gpu_quota, -1);
	assert_int_equal(c.tenants[0].guaranteed_gpu_quota, 4);
	assert_int_equal(c.tenants[1].guaranteed_gpu_quota, -1); /* none unless given */
	assert_string_equal(c.tenant_token_file[0], "/a.token");
	/* a flag overrides the file */
	assert_int_equal(rkd_config_set(&c, "grace_ms", "7", "--grace-ms", &e), 0);
	assert_int_equal(c.grace_ms, 7);
}

/* Issue 13: a tenant's Slurm defaults and what its submissions may name instead. */
static void slurm_keys(void **state)
{
	(void)state;
	struct rkd_config c;
	struct rk_error e;
	rkd_config_defaults(&c);
	const char *text = "[tenant phys]\nslurm_partition = long\nslurm_account = physics\n"
			   "slurm_qos = normal\nslurm_time_limit = 90\n"
			   "slurm_allowed_partitions = gpu, long\nslurm_allowed_accounts = physics\n"
			   "slurm_allowed_qos = normal,high\n";
	assert_int_equal(rkd_config_parse(&c, text, "r.conf", &e), 0);
	assert_string_equal(c.tenants[0].slurm_partition, "long");
	assert_int_equal(c.tenants[0].slurm_time_limit, 90);
	assert_string_equal(c.tenants[0].slurm_allowed_partitions, "gpu, long");
	assert_string_equal(c.tenants[0].slurm_allowed_accounts, "physics");
	assert_string_equal(c.tenants[0].slurm_allowed_qos, "normal,high");
	rkd_config_defaults(&c);
	assert_int_not_equal(rkd_config_parse(&c, "[tenant p]\nslurm_allowed_qos =\n", "r.conf", &e), 0);
	assert_non_null(strstr(e.msg, "slurm_allowed_qos"));
	rkd_config_defaults(&c);
	assert_int_not_equal(rkd_config_parse(&c, "[tenant p]\nslurm_allowd_qos = a\n", "r.conf", &e), 0);
	assert_non_null(strstr(e.msg, "slurm_allowed_qos")); /* the list of keys names it */
}

static void every_error(void **state)
{
	(void)state;
	static const struct {
		const char *text, *where;
		int code;
	} cases[] = {
		{"colour = red\n", "r.conf:1:1: unknown key", RK_EINVAL},
		{"\n  grace_ms = x\n", "r.conf:2:3: grace_ms", RK_EINVAL},
		{"grace_ms = -5\n", "r.conf:1:1: grace_ms", RK_ERANGE},
		{"listen\n", "r.conf:1:1: expected KEY = VALUE", RK_EINVAL},
		{"[tenant]\n", "r.conf:1:1: expected [tenant NAME]", RK_EINVAL},
		{"[tenant a]\n[tenant a]\n", "r.conf:2:1: tenant 'a' given twice", RK_EEXIST},
		{"[tenant a]\ncolour = 1\n", "r.conf:2:1: unknown tenant key", RK_EINVAL},
		{"[tenant a]\ngpu_quota = -2\n", "r.conf:2:1: gpu_quota", RK_ERANGE},
		{"[tenant a]\nguaranteed_gpu_quota = -2\n", "r.conf:2:1: guaranteed_gpu_quota",
		 RK_ERANGE},
		{"[tenant a]\nguaranteed_gpu_quota = many\n", "r.conf:2:1: guaranteed_gpu_quota",
		 RK_EINVAL},
		{"sync = sometimes\n", "r.conf:1:1: sync", RK_EINVAL},
		{"allow_root = maybe\n", "r.conf:1:1: allow_root: 'maybe' is not yes or no", RK_EINVAL},
		{"run_cgroup = on\n", "r.conf:1:1: run_cgroup: 'on' is not auto or off", RK_EINVAL},
		{"[tenant a]\nallow_root = 1\n", "r.conf:2:1: allow_root", RK_EINVAL},
		{"[tenant a]\nuser =\n", "r.conf:2:1: user", RK_ERANGE},
		{"db = \n", "r.conf:1:1: db", RK_ERANGE},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rkd_config c;
		struct rk_error e;
		rkd_config_defaults(&c);
		int rc = rkd_config_parse(&c, cases[i].text, "r.conf", &e);
		if (rc != cases[i].code || strncmp(e.msg, cases[i].where, strlen(cases[i].where)))
			fail_msg("case %zu: got %d '%s'", i, rc, e.msg);
	}
}

static void token_files(void **state)
{
	(void)state;
	char dir[] = "/tmp/rk-conf-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char adm[300], ten[300];
	snprintf(adm, sizeof(adm), "%s/admin", dir);
	snprintf(ten, sizeof(ten), "%s/alice", dir);
	FILE *f = fopen(adm, "w");
	fputs("admin-0123456789abcdef\n", f);
	fclose(f);
	f = fopen(ten, "w");
	fputs("alice-0123456789abcdef\n", f);
	fclose(f);
	chmod(adm, 0600);
	chmod(ten, 0644);
	struct rkd_config c;
	struct rk_error e;
	struct rkd_token t[4];
	int n;
	rkd_config_defaults(&c);
	assert_int_equal(rkd_config_tokens(&c, t, 4, &n, &e), RK_EINVAL); /* none given */
	snprintf(c.admin_token_file, sizeof(c.admin_token_file), "%s", adm);
	c.n_tenants = 1;
	snprintf(c.tenants[0].name, sizeof(c.tenants[0].name), "alice");
	snprintf(c.tenant_token_file[0], sizeof(c.tenant_token_file[0]), "%s", ten);
	assert_int_equal(rkd_config_tokens(&c, t, 4, &n, &e), RK_EPERM); /* world-readable */
	assert_non_null(strstr(e.msg, ten));
	chmod(ten, 0600);
	assert_int_equal(rkd_config_tokens(&c, t, 4, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_true(t[0].admin && !t[1].admin);
	assert_string_equal(t[1].tenant, "alice");
	assert_string_equal(t[1].token, "alice-0123456789abcdef");
	f = fopen(ten, "w");
	fputs("short\n", f);
	fclose(f);
	assert_int_equal(rkd_config_tokens(&c, t, 4, &n, &e), RK_ERANGE);
	f = fopen(ten, "w");
	fputs("admin-0123456789abcdef\n", f);
	fclose(f);
	assert_int_equal(rkd_config_tokens(&c, t, 4, &n, &e), RK_EEXIST); /* same as admin */
	unlink(adm);
	unlink(ten);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_good),
		cmocka_unit_test(every_error),
		cmocka_unit_test(slurm_keys),
		cmocka_unit_test(token_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
