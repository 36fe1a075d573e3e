/* `rubick model validate` on the shared Rubick traces: the strict-protocol
 * targets of issue 2 hold, the traps are reported, results are deterministic.
 * Reads $RK_SHARED_DIR/traces/rubick and $RK_DATA_DIR/zoo. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cli/model_validate.h"
#include "cli/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char traces[1024], zoo_dir[1024];

static int setup(void **state)
{
	(void)state;
	const char *sh = getenv("RK_SHARED_DIR"), *dd = getenv("RK_DATA_DIR");
	if (!sh || !dd)
		return -1;
	snprintf(traces, sizeof(traces), "%s/traces/rubick", sh);
	snprintf(zoo_dir, sizeof(zoo_dir), "%s/zoo", dd);
	return 0;
}

static void run(struct rk_validate *v, double fraction, uint64_t seed)
{
	struct rk_zoo zoo;
	struct rk_error err = {0};
	rk_zoo_init(&zoo);
	if (rk_cli_zoo_load(zoo_dir, &zoo, &err) < 0)
		fail_msg("zoo: %s", err.msg);
	struct rk_validate_opts o;
	rk_validate_opts_default(&o);
	o.train_fraction = fraction;
	o.seed = seed;
	memset(v, 0, sizeof(*v));
	if (rk_validate_traces(v, &zoo, traces, &o, &err) < 0)
		fail_msg("validate: %s", err.msg);
	rk_zoo_fini(&zoo);
}

static int has_note(const struct rk_validate *v, const char *dataset, const char *text)
{
	for (int i = 0; i < v->n_fits; i++)
		if (!strcmp(v->fits[i].dataset, dataset))
			for (int j = 0; j < v->fits[i].n_notes; j++)
				if (strstr(v->fits[i].notes[j], text))
					return 1;
	return 0;
}

static void test_strict_targets(void **state)
{
	(void)state;
	struct rk_validate v;
	run(&v, 0, 1);
	struct rk_validate_stats s;
	rk_validate_stats(&v, NULL, -1, &s);
	print_message("strict: rows %d predicted %d skipped %d mape %.3f median %.3f "
		      "within10 %.3f\n",
		      s.rows, s.predicted, s.skipped, s.mape, s.median_ape, s.within_10pct);
	/* every measured row is accounted for; only the 4 failed runs skip */
	assert_int_equal(s.rows, 539);
	assert_int_equal(s.skipped, 4);
	assert_int_equal(s.predicted, 535);
	/* issue 2 targets, strict protocol */
	assert_true(s.mape <= 0.25);
	assert_true(s.median_ape <= 0.12);
	assert_true(s.within_10pct >= 0.45);
	assert_true(s.within_20pct >= s.within_10pct);
	/* families are all scored */
	for (int f = 0; f < RK_VF_N; f++) {
		rk_validate_stats(&v, NULL, f, &s);
		assert_true(s.predicted > 50);
	}
	/* traps, reported */
	assert_true(has_note(&v, "llama30", "it is not llama30's profile"));
	assert_true(has_note(&v, "t5", "forward_time 4 ms rejected as an outlier"));
	assert_true(has_note(&v, "t5_3B", "has no profile of its own"));
	assert_true(has_note(&v, "vit", "phase columns in seconds"));
	int failed = 0;
	for (int i = 0; i < v.n_rows; i++)
		if (v.rows[i].skipped) {
			assert_string_equal(v.rows[i].dataset, "llama7b_bsz16");
			assert_non_null(strstr(v.rows[i].reason, "iter_time = 0"));
			failed++;
		}
	assert_int_equal(failed, 4);
	rk_validate_fini(&v);
}

static void test_train_protocol_deterministic(void **state)
{
	(void)state;
	struct rk_validate a, b;
	run(&a, 0.3, 7);
	run(&b, 0.3, 7);
	struct rk_validate_stats sa, sb;
	rk_validate_stats(&a, NULL, -1, &sa);
	rk_validate_stats(&b, NULL, -1, &sb);
	assert_memory_equal(&sa, &sb, sizeof(sa));
	print_message("train 0.3 seed 7: rows %d mape %.3f median %.3f within10 %.3f\n", sa.rows,
		      sa.mape, sa.median_ape, sa.within_10pct);
	/* issue 2 targets, 30% training protocol */
	assert_true(sa.mape <= 0.15);
	assert_true(sa.within_10pct >= 0.60);
	/* 30% of each model's usable rows train and are not scored */
	int train = 0;
	for (int i = 0; i < a.n_rows; i++)
		train += a.rows[i].train;
	assert_true(train > 140 && train < 180);
	assert_int_equal(sa.rows + train, 539);
	rk_validate_fini(&a);
	rk_validate_fini(&b);
}

static int fit_of(const struct rk_validate *v, const char *dataset)
{
	for (int i = 0; i < v->n_fits; i++)
		if (!strcmp(v->fits[i].dataset, dataset))
			return i;
	fail_msg("no fit for %s", dataset);
	return -1;
}

/* --calibrate-internode loo keeps the strict protocol: a model's bandwidth is
 * fitted on exactly the other models' multi-node rows, and changing its own
 * measured times does not move it (issue 22 item 6). */
static void test_calibrate_loo_strict(void **state)
{
	(void)state;
	struct rk_validate v;
	run(&v, 0, 1);
	struct rk_validate_stats before;
	rk_validate_stats(&v, NULL, -1, &before);
	struct rk_validate_opts o;
	rk_validate_opts_default(&o);
	struct rk_error err = {0};
	assert_int_equal(rk_validate_calibrate_loo(&v, &o, &err), 0);
	/* "before" is the uncalibrated strict figure */
	assert_float_equal(rk_validate_mape(&v, NULL, -1, 0, 1), before.mape, 1e-12);
	for (int m = 0; m < v.n_fits; m++) {
		int own = 0, all = 0;
		for (int i = 0; i < v.n_rows; i++) {
			const struct rk_validate_row *r = &v.rows[i];
			if (r->skipped || r->train || r->n_nodes <= 1)
				continue;
			all++;
			own += !strcmp(v.fits[r->fit].target, v.fits[m].target);
		}
		assert_true(v.fits[m].calibrated);
		assert_int_equal(v.fits[m].cal_rows, all - own);
	}
	int vit = fit_of(&v, "vit"), bert = fit_of(&v, "bert");
	double g_vit = v.fits[vit].cal_gbps, g_bert = v.fits[bert].cal_gbps;
	print_message("loo B_eff: vit %.3f bert %.3f GB/s; vit multi-node %.3f -> %.3f\n", g_vit,
		      g_bert, rk_validate_mape(&v, "vit", -1, 1, 1),
		      rk_validate_mape(&v, "vit", -1, 1, 0));
	for (int i = 0; i < v.n_rows; i++)
		if (!strcmp(v.rows[i].dataset, "vit"))
			v.rows[i].meas_ms *= 3;
	assert_int_equal(rk_validate_calibrate_loo(&v, &o, &err), 0);
	assert_float_equal(v.fits[vit].cal_gbps, g_vit, 0);
	assert_true(v.fits[bert].cal_gbps != g_bert); /* ViT's rows do enter bert's fit */
	rk_validate_fini(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strict_targets),
		cmocka_unit_test(test_train_protocol_deterministic),
		cmocka_unit_test(test_calibrate_loo_strict),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
