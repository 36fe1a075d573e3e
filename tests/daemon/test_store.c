/* The rubickd store: schema migration, job rows, history, samples, meta, reopen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/store/store.h"

static char path[256];

static int setup(void **state)
{
	(void)state;
	char dir[] = "/tmp/rk-store-XXXXXX";
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/t.db", dir);
	return 0;
}

static struct rkd_job_row row(int64_t id, const char *name, const char *state)
{
	struct rkd_job_row r = {
		.id = id, .name = (char *)name, .tenant = (char *)"t1", .state = (char *)state,
		.spec_json = (char *)"{}", .model_text = (char *)"name = x", .alloc = (char *)"",
		.plan = (char *)"", .reason = (char *)"", .idem_key = (char *)"",
		.job_token = (char *)"tok", .gpu_ids = (char *)"", .submit_ms = 1000 + id,
		.first_start_ms = -1, .end_ms = -1, .iters_total = 10, .req_gpus = 2, .exit_status = -1,
	};
	return r;
}

static void roundtrip_and_reopen(void **state)
{
	(void)state;
	struct rkd_store *s;
	struct rk_error e;
	assert_int_equal(rkd_store_open(&s, path, RKD_SYNC_FULL, &e), 0);
	assert_true(rkd_store_schema_version(s) >= 1);
	assert_int_equal(rkd_store_max_job_id(s), 0);
	assert_int_equal(rkd_store_begin(s, &e), 0);
	struct rkd_job_row a = row(1, "a", "pending"), b = row(2, "b", "running");
	b.idem_key = (char *)"key-1";
	b.live_run = 3;
	assert_int_equal(rkd_store_job_insert(s, &a, &e), 0);
	assert_int_equal(rkd_store_job_insert(s, &b, &e), 0);
	assert_int_equal(rkd_store_job_insert(s, &a, &e), RK_EEXIST); /* duplicate id */
	assert_int_equal(rkd_store_history_add(s, 2, 5, 1, "0:2:0:0", "dp=2", "start", &e), 0);
	assert_int_equal(rkd_store_history_add(s, 2, 6, 2, "", "", "preempt", &e), 0);
	assert_int_equal(rkd_store_sample_add(s, 2, 7, 1, 3, 99.5, 2, "dp=2", &e), 0);
	assert_int_equal(rkd_store_event_add(s, 8, 2, "launch", "run 1", &e), 0);
	assert_int_equal(rkd_store_meta_set(s, "policy", "sjf", &e), 0);
	double k[7] = {1, 2, 3, 4, 5, 6, 7}, k2[7];
	int n;
	assert_int_equal(rkd_store_model_params_set(s, "bert", k, 4, 9, &e), 0);
	assert_int_equal(rkd_store_tenant_set(s, "alice", 8, 4, &e), 0);
	assert_int_equal(rkd_store_tenant_set(s, "alice", 8, 6, &e), 0); /* updated in place */
	assert_int_equal(rkd_store_tenant_set(s, "bob", -1, -1, &e), 0);
	assert_int_equal(rkd_store_commit(s, &e), 0);
	rkd_store_close(s);

	assert_int_equal(rkd_store_open(&s, path, RKD_SYNC_NORMAL, &e), 0);
	assert_int_equal(rkd_store_max_job_id(s), 2);
	int gq = 0, gg = 0;
	assert_int_equal(rkd_store_tenant_get(s, "alice", &gq, &gg), 0);
	assert_int_equal(gq, 8);
	assert_int_equal(gg, 6);
	assert_int_equal(rkd_store_tenant_get(s, "bob", &gq, &gg), 0);
	assert_int_equal(gg, -1);
	assert_int_equal(rkd_store_tenant_get(s, "carol", &gq, &gg), RK_ENOTFOUND);
	struct rkd_job_row got;
	assert_int_equal(rkd_store_job_get(s, 2, &got, &e), 0);
	assert_string_equal(got.name, "b");
	assert_string_equal(got.state, "running");
	assert_int_equal(got.live_run, 3);
	assert_int_equal(got.exit_status, -1);
	rkd_job_row_fini(&got);
	assert_int_equal(rkd_store_job_get(s, 9, &got, &e), RK_ENOTFOUND);
	assert_int_equal(rkd_store_job_by_key(s, "t1", "key-1"), 2);
	assert_int_equal(rkd_store_job_by_key(s, "t2", "key-1"), 0);
	struct rkd_hist_row *h;
	assert_int_equal(rkd_store_history_get(s, 2, &h, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_string_equal(h[0].reason, "start");
	assert_string_equal(h[0].plan, "dp=2");
	assert_int_equal(h[1].run, 2);
	free(h);
	assert_int_equal(rkd_store_sample_count(s, 2), 1);
	char buf[16];
	assert_int_equal(rkd_store_meta_get(s, "policy", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "sjf");
	assert_int_equal(rkd_store_meta_get(s, "policy", buf, 2), RK_ERANGE);
	assert_int_equal(rkd_store_meta_get(s, "nothing", buf, sizeof(buf)), RK_ENOTFOUND);
	assert_int_equal(rkd_store_model_params_get(s, "bert", k2, &n), 0);
	assert_true(k2[6] == 7 && n == 4);
	assert_int_equal(rkd_store_model_params_get(s, "gpt2", k2, &n), RK_ENOTFOUND);

	/* listing: filters, newest first, active set */
	struct rkd_job_row *rows;
	struct rkd_job_filter f = {.state = "running"};
	assert_int_equal(rkd_store_job_list(s, &f, &rows, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].id, 2);
	rkd_job_rows_free(rows, n);
	f = (struct rkd_job_filter){.limit = 1};
	assert_int_equal(rkd_store_job_list(s, &f, &rows, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].id, 2);
	rkd_job_rows_free(rows, n);
	f = (struct rkd_job_filter){.before_id = 2};
	assert_int_equal(rkd_store_job_list(s, &f, &rows, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].id, 1);
	rkd_job_rows_free(rows, n);

	/* update, then a finished job with a live run stays in the active set */
	assert_int_equal(rkd_store_begin(s, &e), 0);
	struct rkd_job_row c = row(2, "b", "cancelled");
	c.live_run = 1;
	assert_int_equal(rkd_store_job_update(s, &c, &e), 0);
	struct rkd_job_row d = row(1, "a", "done");
	assert_int_equal(rkd_store_job_update(s, &d, &e), 0);
	struct rkd_job_row missing = row(5, "m", "done");
	assert_int_equal(rkd_store_job_update(s, &missing, &e), RK_ENOTFOUND);
	assert_int_equal(rkd_store_commit(s, &e), 0);
	assert_int_equal(rkd_store_job_list_active(s, &rows, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].id, 2);
	rkd_job_rows_free(rows, n);

	/* a rolled-back transaction leaves nothing */
	assert_int_equal(rkd_store_begin(s, &e), 0);
	struct rkd_job_row x = row(7, "x", "pending");
	assert_int_equal(rkd_store_job_insert(s, &x, &e), 0);
	rkd_store_rollback(s);
	assert_int_equal(rkd_store_job_get(s, 7, &got, &e), RK_ENOTFOUND);
	rkd_store_close(s);
}

/* Schema 5: a job's hold, stored with the row (its pending reason is not). */
static void hold_stored(void **state)
{
	(void)state;
	char p5[300];
	snprintf(p5, sizeof(p5), "%s.hold.db", path);
	struct rkd_store *s;
	struct rk_error e;
	assert_int_equal(rkd_store_open(&s, p5, RKD_SYNC_FULL, &e), 0);
	assert_true(rkd_store_schema_version(s) >= 5);
	assert_int_equal(rkd_store_begin(s, &e), 0);
	struct rkd_job_row a = row(1, "a", "pending"), b = row(2, "b", "pending");
	snprintf(a.hold, sizeof(a.hold), "admin");
	snprintf(a.pending_reason, sizeof(a.pending_reason), "Held");
	assert_int_equal(rkd_store_job_insert(s, &a, &e), 0);
	assert_int_equal(rkd_store_job_insert(s, &b, &e), 0);
	snprintf(b.hold, sizeof(b.hold), "user"); /* a whole-row update writes it */
	assert_int_equal(rkd_store_job_update(s, &b, &e), 0);
	assert_int_equal(rkd_store_commit(s, &e), 0);
	rkd_store_close(s);
	assert_int_equal(rkd_store_open(&s, p5, RKD_SYNC_FULL, &e), 0);
	struct rkd_job_row *rows;
	int n;
	assert_int_equal(rkd_store_job_list_active(s, &rows, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].hold, "admin");
	assert_string_equal(rows[0].pending_reason, ""); /* the rounds' business */
	assert_string_equal(rows[1].hold, "user");
	rkd_job_rows_free(rows, n);
	assert_int_equal(rkd_store_begin(s, &e), 0);
	b.hold[0] = '\0';
	assert_int_equal(rkd_store_job_update(s, &b, &e), 0);
	assert_int_equal(rkd_store_commit(s, &e), 0);
	struct rkd_job_row got;
	assert_int_equal(rkd_store_job_get(s, 2, &got, &e), 0);
	assert_string_equal(got.hold, "");
	rkd_job_row_fini(&got);
	rkd_store_close(s);
}

static void open_errors(void **state)
{
	(void)state;
	struct rkd_store *s;
	struct rk_error e;
	assert_int_equal(rkd_store_open(&s, "/nonexistent-dir/x.db", RKD_SYNC_FULL, &e), RK_EIO);
	assert_non_null(strstr(e.msg, "/nonexistent-dir/x.db"));
	/* a file that is not a database */
	char bad[300];
	snprintf(bad, sizeof(bad), "%s.txt", path);
	FILE *f = fopen(bad, "w");
	assert_non_null(f);
	fputs("this is not an sqlite database, not at all, really not\n", f);
	fclose(f);
	assert_int_not_equal(rkd_store_open(&s, bad, RKD_SYNC_FULL, &e), 0);
	assert_non_null(strstr(e.msg, bad));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(roundtrip_and_reopen),
		cmocka_unit_test(hold_stored),
		cmocka_unit_test(open_errors),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
