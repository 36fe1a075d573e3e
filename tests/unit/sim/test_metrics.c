/*
 * Metrics: a hand-computed 4-job example (metrics_fixture.h), the nearest-rank
 * percentile rule, unfinished jobs, and every input error.
 *
 * Hand computation: JCTs sorted 60, 100, 100, 300 s -> mean 140; nearest rank
 * median = x[ceil(0.5*4)-1] = x[1] = 100; p95 = x[ceil(3.8)-1] = x[3] = 300;
 * p99 = 300. Queueing (0+10+30+70)/4 = 27.5 s. Makespan 320 s. Allocated GPUs:
 * 4*10+4*10+6*10+6*20+8*20+6*30+4*30+2*190 = 1100 GPU-s of 8*320 = 2560 ->
 * 0.4296875. Queue: 1*10+1*10+2*20+1*20+1*30 = 110 job-s over 320 s = 0.34375.
 * GPU-hours 1100/3600; reconfigurations 3/4; preemptions 1/4.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "metrics_fixture.h"
#include "rubick/metrics.h"

static void four_jobs(void **state)
{
	(void)state;
	struct rk_job_outcome o[4];
	fixture_outcomes(o);
	struct rk_sim_summary s;
	struct rk_error err;
	assert_int_equal(rk_metrics_summarize(o, 4, fixture_samples, FIXTURE_NS, 0, 320000, &s, &err), 0);
	assert_int_equal(s.jobs, 4);
	assert_int_equal(s.completed, 4);
	assert_int_equal(s.unfinished, 0);
	assert_int_equal(s.never_started, 0);
	assert_true(s.avg_jct_s == 140.0);
	assert_true(s.median_jct_s == 100.0);
	assert_true(s.p95_jct_s == 300.0);
	assert_true(s.p99_jct_s == 300.0);
	assert_true(s.max_jct_s == 300.0);
	assert_true(s.makespan_s == 320.0);
	assert_true(s.avg_queue_s == 27.5);
	assert_true(s.gpu_util == 0.4296875);
	assert_true(s.gpu_hours == 1100.0 / 3600.0);
	assert_true(s.reconfigs_per_job == 0.75);
	assert_true(s.preemptions_per_job == 0.25);
	assert_true(s.avg_queue_len == 0.34375);
	assert_int_equal(s.max_queue_len, 2);

	/* order of the outcomes does not matter: bit-identical summary */
	struct rk_job_outcome r[4] = {o[3], o[1], o[0], o[2]};
	struct rk_sim_summary s2;
	assert_int_equal(rk_metrics_summarize(r, 4, fixture_samples, FIXTURE_NS, 0, 320000, &s2, &err), 0);
	assert_memory_equal(&s, &s2, sizeof(s));
}

static void unfinished_and_empty(void **state)
{
	(void)state;
	struct rk_job_outcome o[5];
	fixture_outcomes(o);
	/* a fifth job submitted at 300 s that never starts */
	fixture_outcome(&o[4], 5, "j5", 8, 300000, -1, -1, 0, 0, 0.0);
	struct rk_sim_summary s;
	assert_int_equal(rk_metrics_summarize(o, 5, fixture_samples, FIXTURE_NS, 0, 400000, &s, NULL), 0);
	assert_int_equal(s.completed, 4);
	assert_int_equal(s.unfinished, 1);
	assert_int_equal(s.never_started, 1);
	assert_true(s.avg_jct_s == 140.0);    /* over completed jobs only */
	assert_true(s.makespan_s == 400.0);   /* run stopped at the horizon */
	assert_true(s.avg_queue_s == 27.5);   /* over started jobs only */
	assert_true(s.reconfigs_per_job == 3.0 / 5.0);
	/* last sample (0 of 8) now holds until 400 s: 1100 / 3200 */
	assert_true(s.gpu_util == 1100.0 / 3200.0);

	/* no jobs, no samples: all zero, no NaN */
	assert_int_equal(rk_metrics_summarize(NULL, 0, NULL, 0, 0, 0, &s, NULL), 0);
	assert_int_equal(s.jobs, 0);
	assert_true(s.avg_jct_s == 0.0 && s.gpu_util == 0.0 && s.makespan_s == 0.0);
	assert_true(s.avg_queue_len == 0.0);
}

static void percentiles(void **state)
{
	(void)state;
	const double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
	assert_true(rk_metrics_percentile(v, 10, 50) == 5);  /* rank ceil(5) = 5 */
	assert_true(rk_metrics_percentile(v, 10, 95) == 10); /* rank ceil(9.5) = 10 */
	assert_true(rk_metrics_percentile(v, 10, 90) == 9);
	assert_true(rk_metrics_percentile(v, 10, 91) == 10);
	assert_true(rk_metrics_percentile(v, 10, 10) == 1);
	assert_true(rk_metrics_percentile(v, 10, 11) == 2);
	assert_true(rk_metrics_percentile(v, 10, 100) == 10);
	assert_true(rk_metrics_percentile(v, 10, 250) == 10); /* clamped */
	assert_true(rk_metrics_percentile(v, 10, 0) == 1);
	assert_true(rk_metrics_percentile(v, 10, NAN) == 1);
	assert_true(rk_metrics_percentile(v, 0, 50) == 0);
	assert_true(rk_metrics_percentile(v, 1, 99) == 1);
}

static void errors(void **state)
{
	(void)state;
	struct rk_job_outcome o[4];
	struct rk_sim_summary s, keep;
	struct rk_error err;
	memset(&keep, 0x5a, sizeof(keep));

	fixture_outcomes(o);
	o[2].finish_ms = 10000; /* before its submit at 20 s */
	s = keep;
	assert_int_equal(rk_metrics_summarize(o, 4, NULL, 0, 0, 320000, &s, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "outcome 2 (job 3)"));
	assert_non_null(strstr(err.msg, "before submit_ms"));
	assert_memory_equal(&s, &keep, sizeof(s)); /* untouched on failure */

	fixture_outcomes(o);
	o[1].first_start_ms = 5000;
	assert_int_equal(rk_metrics_summarize(o, 4, NULL, 0, 0, 320000, &s, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "first_start_ms 5000 before submit_ms 10000"));

	fixture_outcomes(o);
	o[0].finish_ms = -1; /* completed without a finish */
	assert_int_equal(rk_metrics_summarize(o, 4, NULL, 0, 0, 320000, &s, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "without a finish"));

	fixture_outcomes(o);
	o[3].gpu_s = -1;
	assert_int_equal(rk_metrics_summarize(o, 4, NULL, 0, 0, 320000, &s, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "gpu_s"));

	fixture_outcomes(o);
	assert_int_equal(rk_metrics_summarize(o, 4, NULL, 0, 0, 200000, &s, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "after end_ms"));
	assert_int_equal(rk_metrics_summarize(o, 4, NULL, 0, 10, 5, &s, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "before start_ms"));
	assert_int_equal(rk_metrics_summarize(o, -1, NULL, 0, 0, 5, &s, &err), RK_EINVAL);

	struct rk_sim_sample bad[2] = {SAMPLE(1000, 2, 8, 0, 1), SAMPLE(500, 2, 8, 0, 1)};
	assert_int_equal(rk_metrics_summarize(NULL, 0, bad, 2, 0, 2000, &s, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "sample 1"));
	bad[1] = (struct rk_sim_sample)SAMPLE(1500, 9, 8, 0, 1);
	assert_int_equal(rk_metrics_summarize(NULL, 0, bad, 2, 0, 2000, &s, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "gpus_alloc 9 > gpus_total 8"));
	bad[1] = (struct rk_sim_sample)SAMPLE(3000, 1, 8, 0, 1);
	assert_int_equal(rk_metrics_summarize(NULL, 0, bad, 2, 0, 2000, &s, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "outside the run"));
	bad[1] = (struct rk_sim_sample)SAMPLE(1500, 1, 8, -1, 1);
	assert_int_equal(rk_metrics_summarize(NULL, 0, bad, 2, 0, 2000, &s, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "negative"));
}

static void outcome_from_job(void **state)
{
	(void)state;
	struct rk_model m = {.name = "gpt2"};
	struct rk_job j = {.id = 42, .name = "train-1", .model = &m, .req_gpus = 8,
			   .submit_ms = 1000, .first_start_ms = 2000, .restarts = 3,
			   .state = RK_JOB_DONE};
	struct rk_job_outcome o;
	rk_job_outcome_from_job(&j, 9000, 1, 64.0, &o);
	assert_int_equal(o.id, 42);
	assert_string_equal(o.name, "train-1");
	assert_string_equal(o.model, "gpt2");
	assert_int_equal(o.completed, 1);
	assert_int_equal(o.finish_ms, 9000);
	assert_int_equal(o.restarts, 3);
	assert_int_equal(o.preemptions, 1);
	assert_true(o.gpu_s == 64.0);
	j.state = RK_JOB_RUNNING;
	rk_job_outcome_from_job(&j, 9000, 0, 1.0, &o);
	assert_int_equal(o.completed, 0);
	assert_int_equal(o.finish_ms, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(four_jobs), cmocka_unit_test(unfinished_and_empty),
		cmocka_unit_test(percentiles), cmocka_unit_test(errors),
		cmocka_unit_test(outcome_from_job),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
