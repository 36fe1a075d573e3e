/*
 * Report parts of issue 14: the Student t interval (against tabulated
 * quantiles and a hand-computed case), the seeds block of the table and of
 * the JSON, the invocation record ("meta"), the per-policy bar chart
 * figure normalised to a chosen policy with error bars, the GPU-hours and
 * reconfiguration bars with their seed intervals, utilisation in 200 fixed
 * bins, and 20 policies with distinct colours.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four it needs */

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_fixture.h"
#include "rubick/figure.h"
#include "rubick/report.h"
#include "sim/report/figure_internal.h"

/*
 * Not inlined (nor the other open_memstream writers here): at -O3 GCC 12 takes the
 * stream's buffer for the writer's local and warns (-Wdangling-pointer, an error under
 * --werror) wherever a test searches the text.
 */
__attribute__((noinline)) static char *capture(int (*w)(FILE *, const struct rk_report *, struct rk_error *),
                     const struct rk_report *r, int want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct rk_error err;
	int rc = w(f, r, &err);
	fclose(f);
	assert_int_equal(rc, want);
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void student_t(void **state)
{
	(void)state;
	assert_float_equal(rk_report_t975(1), 12.706, 1e-9);
	assert_float_equal(rk_report_t975(4), 2.776, 1e-9);
	assert_float_equal(rk_report_t975(30), 2.042, 1e-9);
	/* the expansion beyond the table: t(0.975, 40) = 2.021, 120 -> 1.980, -> 1.96 */
	assert_float_equal(rk_report_t975(40), 2.021, 5e-4);
	assert_float_equal(rk_report_t975(120), 1.980, 5e-4);
	assert_float_equal(rk_report_t975(1000000), 1.95996, 1e-4);
	assert_true(isnan(rk_report_t975(0)));
	/* 10, 12, 14: mean 12, sd 2, half-width 4.303 * 2 / sqrt(3) = 4.9687 */
	const double v[3] = {10, 12, 14};
	struct rk_report_stat st;
	assert_int_equal(rk_report_stat_compute(v, 3, &st), 0);
	assert_float_equal(st.mean, 12.0, 1e-12);
	assert_float_equal(st.sd, 2.0, 1e-12);
	assert_float_equal(st.half95, 4.303 * 2.0 / sqrt(3.0), 1e-9);
	assert_int_equal(rk_report_stat_compute(v, 1, &st), 0);
	assert_float_equal(st.half95, 0.0, 0);
	assert_int_equal(rk_report_stat_compute(v, 0, &st), RK_EINVAL);
	assert_int_equal(rk_report_stat_compute(NULL, 3, &st), RK_EINVAL);
}

#define NP 20
struct fx {
	struct rk_job_outcome o[4];
	struct rk_report_run runs[NP];
	double vals[NP][RK_FIG_COUNT][3];
	struct rk_report_seeds seeds[NP];
	char names[NP][32];
	struct rk_report r;
};

/* n policies over three seeds: policy i's figures are (i + 1) x (90, 100, 110). */
static void fx_init(struct fx *f, int n)
{
	memset(f, 0, sizeof(*f));
	fixture_outcomes(f->o);
	for (int i = 0; i < n; i++) {
		struct rk_report_run *u = &f->runs[i];
		snprintf(f->names[i], sizeof(f->names[i]), "sia[p=%d]", i);
		u->policy = f->names[i];
		u->outcomes = f->o;
		u->n_outcomes = 4;
		u->samples = fixture_samples;
		u->n_samples = FIXTURE_NS;
		assert_int_equal(rk_metrics_summarize(f->o, 4, fixture_samples, FIXTURE_NS, 0,
		                                      320000, &u->summary, NULL),
		                 0);
		f->seeds[i].n = 3;
		for (int k = 0; k < RK_FIG_COUNT; k++) {
			for (int s = 0; s < 3; s++)
				f->vals[i][k][s] = (i + 1) * (90.0 + 10 * s);
			f->seeds[i].values[k] = f->vals[i][k];
		}
		u->seeds = &f->seeds[i];
	}
	f->r.trace = "t.csv";
	f->r.runs = f->runs;
	f->r.n_runs = n;
	f->r.seeds_n = 3;
	f->r.seeds_first = 4;
	f->r.seeds_last = 6;
	f->r.seeds_vary = "workload+policy";
}

static void seeds_table_json(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f, 2);
	char *t = capture(rk_report_write_table, &f.r, 0);
	assert_non_null(strstr(t, "seeds 4-6 (3 runs per policy, workload+policy seeds varied)"));
	/* policy 2: mean 200, sd 20, half 4.303 * 20 / sqrt(3) = 49.7 */
	assert_non_null(strstr(t, "sia[p=1]            200.0 +-      49.7"));
	free(t);

	char *s = NULL;
	struct rk_error err;
	assert_int_equal(rk_report_json_encode(&f.r, 0, &s, &err), 0);
	json_error_t je;
	json_t *root = json_loads(s, 0, &je);
	assert_non_null(root);
	json_t *top = json_object_get(root, "seeds");
	assert_int_equal(json_integer_value(json_object_get(top, "first")), 4);
	assert_int_equal(json_integer_value(json_object_get(top, "n")), 3);
	json_t *r1 = json_array_get(json_object_get(root, "results"), 1);
	json_t *mk = json_object_get(json_object_get(r1, "seeds"), "makespan_s");
	assert_float_equal(json_real_value(json_object_get(mk, "mean")), 200.0, 1e-9);
	double lo = json_real_value(json_object_get(mk, "ci95_lo"));
	double hi = json_real_value(json_object_get(mk, "ci95_hi"));
	assert_float_equal(hi - lo, 2 * 4.303 * 20 / sqrt(3.0), 1e-6);
	assert_int_equal(json_array_size(json_object_get(mk, "values")), 3);
	assert_null(json_object_get(root, "meta"));
	json_decref(root);
	free(s);

	/* without seeds nothing of them is printed */
	f.r.seeds_n = 0;
	f.runs[0].seeds = f.runs[1].seeds = NULL;
	t = capture(rk_report_write_table, &f.r, 0);
	assert_null(strstr(t, "seeds"));
	free(t);
	assert_int_equal(rk_report_json_encode(&f.r, 0, &s, &err), 0);
	assert_null(strstr(s, "seeds"));
	free(s);
}

static void meta_record(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f, 1);
	const char *keys[] = {"trace", "policy_seed"}, *vals[] = {"t.csv", "7"};
	struct rk_report_meta m = {.version = "0.1.0",
	                           .command = "rubick sim --trace t.csv --policy 'sia[p=0]'",
	                           .option_keys = keys,
	                           .option_values = vals,
	                           .n_options = 2,
	                           .workload_seed = 3,
	                           .policy_seed = 7};
	f.r.meta = &m;
	char *s = NULL;
	struct rk_error err;
	assert_int_equal(rk_report_json_encode(&f.r, 1, &s, &err), 0);
	json_error_t je;
	json_t *root = json_loads(s, 0, &je);
	json_t *mo = json_object_get(root, "meta");
	assert_string_equal(json_string_value(json_object_get(mo, "version")), "0.1.0");
	assert_int_equal(json_integer_value(json_object_get(mo, "workload_seed")), 3);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(mo, "options"), "policy_seed")), "7");
	json_decref(root);
	free(s);
	char *h = capture(rk_report_write_html, &f.r, 0);
	assert_non_null(strstr(h, "rubick sim --trace t.csv --policy &#39;sia[p=0]&#39;"));
	assert_non_null(strstr(h, "workload seed 3, policy seed 7"));
	free(h);
}

/* cmocka's assert_float_equal compares floats: doubles to 1e-9 need this. */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* The report's figures of f (asserting they build). */
static void figures_of(const struct rk_report *r, struct rk_report_figs *figs)
{
	struct rk_error err;
	assert_int_equal(rk_report_figures(r, figs, &err), 0);
	assert_int_equal(figs->n, 6);
	assert_string_equal(figs->f[0].name, "bars");
	assert_string_equal(figs->f[4].name, "gpu-hours");
	assert_string_equal(figs->f[5].name, "reconfigs");
}

static void bars_normalised(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f, 3);
	struct rk_report_figs figs;
	figures_of(&f.r, &figs);
	/* relative to the first: 1, 2, 3; an interval per policy per figure of merit */
	const struct rk_figure *b = figs.f[0].fig;
	assert_non_null(strstr(figs.f[0].caption, "relative to sia[p=0] (100.0 s, 100.0 s and "
						  "100.0 s = 1)"));
	assert_non_null(strstr(figs.f[0].caption, "mean over seeds 4-6 (3 runs each)"));
	assert_string_equal(b->ylabel, "relative to sia[p=0]");
	assert_int_equal(b->n_series, 3);
	assert_int_equal(b->n_categories, RK_FIG_COUNT);
	assert_near(b->series[1].y[RK_FIG_P99_JCT], 2.0, 1e-12);
	/* policy 1: sd 20 s over the seeds, half-width 4.303 * 20 / sqrt(3), over 100 s */
	double half = 4.303 * 20 / sqrt(3.0) / 100.0;
	assert_non_null(b->series[1].lo);
	assert_near(b->series[1].lo[RK_FIG_MAKESPAN], 2.0 - half, 1e-9);
	assert_near(b->series[1].hi[RK_FIG_MAKESPAN], 2.0 + half, 1e-9);
	assert_int_equal(b->n_hlines, 1);
	assert_true(b->hlines[0].y == 1.0);
	rk_report_figures_fini(&figs);
	char *h = capture(rk_report_write_html, &f.r, 0);
	assert_non_null(strstr(h, "Average JCT, p99 JCT and makespan relative "
				  "to sia[p=0]"));
	free(h);

	f.r.normalize = "sia[p=2]";
	figures_of(&f.r, &figs);
	assert_near(figs.f[0].fig->series[0].y[RK_FIG_MAKESPAN], 1.0 / 3.0, 1e-12);
	assert_non_null(strstr(figs.f[0].caption, "relative to sia[p=2] (300.0 s"));
	rk_report_figures_fini(&figs);
	f.r.normalize = "nope";
	h = capture(rk_report_write_html, &f.r, RK_EINVAL);
	free(h);
	struct rk_error err;
	assert_int_equal(rk_report_figures(&f.r, &figs, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "'nope'"));
	assert_int_equal(figs.n, 0);

	/* GPU-hours and reconfigurations: the seed interval when it was recorded */
	f.r.normalize = NULL;
	double gh[3][3], rc[3][3];
	for (int i = 0; i < 3; i++) {
		for (int s = 0; s < 3; s++) {
			gh[i][s] = 10.0 * (i + 1) + s;
			rc[i][s] = 0.5;
		}
		f.seeds[i].gpu_hours = gh[i];
		f.seeds[i].reconfigs = rc[i];
	}
	figures_of(&f.r, &figs);
	const struct rk_figure *g = figs.f[4].fig;
	assert_true(g->bars && g->n_series == 3 && g->n_categories == 1);
	assert_near(g->series[2].y[0], 31.0, 1e-12);
	assert_near(g->series[2].hi[0] - g->series[2].y[0], 4.303 / sqrt(3.0), 1e-9);
	assert_near(figs.f[5].fig->series[0].y[0], 0.5, 1e-12);
	assert_near(figs.f[5].fig->series[0].lo[0], 0.5, 1e-12); /* sd 0 */
	rk_report_figures_fini(&figs);

	/* without seeds: no intervals anywhere, GPU-hours from the run's summary */
	for (int i = 0; i < 3; i++)
		f.runs[i].seeds = NULL;
	f.r.seeds_n = 0;
	figures_of(&f.r, &figs);
	for (int k = 0; k < 6; k++)
		for (int i = 0; i < figs.f[k].fig->n_series; i++)
			assert_null(figs.f[k].fig->series[i].lo);
	assert_near(figs.f[4].fig->series[0].y[0], f.runs[0].summary.gpu_hours, 1e-12);
	assert_null(strstr(figs.f[0].caption, "seeds"));
	rk_report_figures_fini(&figs);
}

static void twenty_policies_binned(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f, NP);
	enum { N = 5000 };
	struct rk_sim_sample *s = calloc(N, sizeof(*s));
	assert_non_null(s);
	for (int i = 0; i < N; i++)
		s[i] = (struct rk_sim_sample)SAMPLE((int64_t)i * 1000, i % 9, 8, i % 7, 1);
	f.runs[0].samples = s;
	f.runs[0].n_samples = N;
	/* 20 distinct colours for the 20 policies (figure.h draws dashes on top) */
	for (int i = 0; i < NP; i++)
		for (int j = 0; j < i; j++)
			assert_string_not_equal(rk_figure_colour(i), rk_figure_colour(j));
	struct rk_report_figs figs;
	figures_of(&f.r, &figs);
	const struct rk_figure *u = figs.f[2].fig;
	assert_string_equal(figs.f[2].name, "gpu-util");
	assert_int_equal(u->n_series, NP);
	/* run 0's long series: 200 bins, each a step from its start, then the last bin's end */
	assert_int_equal(u->series[0].n, 200 + 1);
	assert_int_equal(u->series[0].mark, RK_FIGURE_STEP);
	/* utilisation stays a fraction: (0..8)/8 averaged per bin */
	for (int k = 0; k < u->series[0].n; k++)
		assert_true(u->series[0].y[k] >= 0 && u->series[0].y[k] <= 1);
	assert_true(u->yfixed && u->ylo == 0 && u->yhi == 1);
	rk_report_figures_fini(&figs);
	char *h = capture(rk_report_write_html, &f.r, 0);
	assert_int_equal(count(h, "<svg"), 6);
	free(h);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(student_t),
	    cmocka_unit_test(seeds_table_json),
	    cmocka_unit_test(meta_record),
	    cmocka_unit_test(bars_normalised),
	    cmocka_unit_test(twenty_policies_binned),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
