/*
 * Every repetition in the reports (report.h, `rubick sim --seeds --out`):
 * jobs.csv prints each repetition's rows with a trailing `seed` column, only
 * under --seeds (without it the header and rows keep their bytes), a run
 * without kept outcomes prints its own rows under the first seed, and the
 * JSON seeds block carries gpu_util, gpu_hours and reconfigs when the seeds
 * do, after the three figures. The JCT CDF pools every kept repetition's jobs
 * and its caption says so; the figures and the table drawn from the first
 * seed's run alone say that.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four it needs */

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_fixture.h"
#include "rubick/report.h"
#include "sim/report/figure_internal.h"

/*
 * Not inlined (nor the other open_memstream writers here): at -O3 GCC 12 takes the
 * stream's buffer for the writer's local and warns (-Wdangling-pointer, an error under
 * --werror) wherever a test searches the text.
 */
__attribute__((noinline)) static char *jobs_csv(const struct rk_report *r, int want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct rk_error err;
	assert_int_equal(rk_report_write_jobs_csv(f, r, &err), want);
	fclose(f);
	return buf;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

struct fx {
	struct rk_job_outcome o[2][4]; /* repetition 0 (the run's own) and 1 */
	const struct rk_job_outcome *outc[2];
	int n_outc[2];
	uint64_t seed[2];
	double vals[RK_FIG_COUNT][2], extra[3][2]; /* gpu_util, gpu_hours, reconfigs */
	struct rk_report_seeds sd;
	struct rk_report_run runs[2];
	struct rk_report r;
};

/* Two policies; "a" kept both repetitions' outcomes (seeds 7 and 8), "b" none. */
static void fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	fixture_outcomes(f->o[0]);
	fixture_outcomes(f->o[1]);
	for (int j = 0; j < 4; j++) /* repetition 1 finishes every job 1 s later */
		f->o[1][j].finish_ms += 1000;
	f->outc[0] = f->o[0];
	f->outc[1] = f->o[1];
	f->n_outc[0] = f->n_outc[1] = 4;
	f->seed[0] = 7;
	f->seed[1] = 8;
	f->sd.n = 2;
	for (int k = 0; k < RK_FIG_COUNT; k++) {
		f->vals[k][0] = 100;
		f->vals[k][1] = 120;
		f->sd.values[k] = f->vals[k];
	}
	for (int k = 0; k < 3; k++) {
		f->extra[k][0] = 0.5 + k;
		f->extra[k][1] = 0.7 + k;
	}
	f->sd.gpu_util = f->extra[0];
	f->sd.gpu_hours = f->extra[1];
	f->sd.reconfigs = f->extra[2];
	f->sd.seed = f->seed;
	f->sd.outcomes = f->outc;
	f->sd.n_outcomes = f->n_outc;
	const char *names[2] = {"a", "b"};
	for (int i = 0; i < 2; i++) {
		f->runs[i].policy = names[i];
		f->runs[i].outcomes = f->o[0];
		f->runs[i].n_outcomes = 4;
	}
	f->runs[0].seeds = &f->sd;
	f->r.runs = f->runs;
	f->r.n_runs = 2;
	f->r.seeds_n = 2;
	f->r.seeds_first = 7;
	f->r.seeds_last = 8;
}

static void every_seed_in_jobs_csv(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	char *t = jobs_csv(&f.r, 0);
	assert_non_null(strstr(t, ",rejected,reason,seed\n"));
	assert_int_equal(count(t, "\n"), 1 + 4 + 4 + 4);
	/* a's two repetitions: j1 finishes at 100 s, then at 101 s */
	assert_non_null(strstr(t, "\na,1,j1,bert,4,0.000,0.000,100.000,100.000,0.000,0,0,1,400.000,"
	                          "0,0.000,0,,7\n"));
	assert_non_null(strstr(t, "\na,1,j1,bert,4,0.000,0.000,101.000,101.000,0.000,0,0,1,400.000,"
	                          "0,0.000,0,,8\n"));
	assert_int_equal(count(t, ",,7\n"), 4 + 4); /* a's first repetition and b's own rows */
	assert_int_equal(count(t, ",,8\n"), 4);
	assert_int_equal(count(t, "\nb,"), 4);
	free(t);

	/* without --seeds: no column, one repetition's rows, even with kept outcomes */
	f.r.seeds_n = 0;
	t = jobs_csv(&f.r, 0);
	assert_non_null(strstr(t, ",rejected,reason\n"));
	assert_null(strstr(t, "seed"));
	assert_int_equal(count(t, "\n"), 1 + 4 + 4);
	assert_int_equal(count(t, ",0.000,0,\n"), 8); /* rows end at `reason` */
	free(t);

	/* a repetition's list that cannot be read is refused, naming the run */
	f.r.seeds_n = 2;
	f.outc[1] = NULL;
	t = jobs_csv(&f.r, RK_EINVAL);
	free(t);
}

static void extra_figures_in_json(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	char *s = NULL;
	struct rk_error err;
	assert_int_equal(rk_report_json_encode(&f.r, 0, &s, &err), 0);
	/* after the three figures, in this order */
	const char *mk = strstr(s, "\"makespan_s\":{\"mean\"");
	const char *gu = strstr(s, "\"gpu_util\":{\"mean\"");
	const char *gh = strstr(s, "\"gpu_hours\":{\"mean\"");
	const char *rc = strstr(s, "\"reconfigs\":{\"mean\"");
	assert_true(mk && gu && gh && rc && mk < gu && gu < gh && gh < rc);
	json_error_t je;
	json_t *root = json_loads(s, 0, &je);
	assert_non_null(root);
	json_t *sd = json_object_get(json_array_get(json_object_get(root, "results"), 0), "seeds");
	json_t *g = json_object_get(sd, "gpu_hours");
	assert_float_equal(json_real_value(json_object_get(g, "mean")), 1.6,
	                   1e-9); /* 1.5 and 1.7 */
	assert_int_equal(json_array_size(json_object_get(g, "values")), 2);
	json_decref(root);
	free(s);

	/* seeds without the extra figures print the three alone */
	f.sd.gpu_util = f.sd.gpu_hours = f.sd.reconfigs = NULL;
	assert_int_equal(rk_report_json_encode(&f.r, 0, &s, &err), 0);
	assert_null(strstr(s, "\"gpu_util\":{"));
	assert_non_null(strstr(s, "\"makespan_s\":{\"mean\""));
	free(s);
}

__attribute__((noinline)) static char *html(const struct rk_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct rk_error err;
	assert_int_equal(rk_report_write_html(f, r, &err), 0);
	fclose(f);
	return buf;
}

/* Figure `name` of figs. */
static const struct rk_report_fig *fig_named(const struct rk_report_figs *figs, const char *name)
{
	for (int i = 0; i < figs->n; i++)
		if (!strcmp(figs->f[i].name, name))
			return &figs->f[i];
	fail_msg("no figure %s", name);
	return NULL;
}

static void cdf_pools_every_seed(void **state)
{
	(void)state;
	struct fx f;
	fx_init(&f);
	struct rk_report_figs figs;
	struct rk_error err;
	/* "a" kept both repetitions: 8 JCTs, 60 61 100 100 101 101 300 301 s; "b" its own 4 */
	assert_int_equal(rk_report_figures(&f.r, &figs, &err), 0);
	const struct rk_report_fig *c = fig_named(&figs, "jct-cdf");
	assert_int_equal(c->fig->n_series, 2);
	const struct fig_series *a = &c->fig->series[0], *b = &c->fig->series[1];
	assert_int_equal(a->n, 1 + 8); /* the step from 0, then one per job */
	assert_float_equal(a->x[0], 60.0, 1e-9);
	assert_float_equal(a->y[0], 0.0, 1e-9);
	assert_float_equal(a->x[2], 61.0, 1e-9);
	assert_float_equal(a->y[2], 2.0 / 8, 1e-9);
	assert_float_equal(a->x[8], 301.0, 1e-9); /* the pooled maximum: seed 8's j3 */
	assert_float_equal(a->y[8], 1.0, 1e-9);
	assert_int_equal(b->n, 1 + 4);
	assert_float_equal(b->x[4], 300.0, 1e-9);
	assert_non_null(
	    strstr(c->caption, "; all 2 seeds pooled (7-8) for the policies that kept"));
	assert_non_null(strstr(c->caption, "seed 7's run only for the others"));
	/* the time series are seed 7's alone, and say so */
	assert_non_null(strstr(fig_named(&figs, "gpu-util")->caption,
	                       "of seed 7 (the first of seeds 7-8; repetitions keep no samples)"));
	assert_non_null(strstr(fig_named(&figs, "queue")->caption, "of seed 7 (the first"));
	rk_report_figures_fini(&figs);

	/* both policies pooled: one line each over 8 jobs, the caption says every seed */
	f.runs[1].seeds = &f.sd;
	assert_int_equal(rk_report_figures(&f.r, &figs, &err), 0);
	c = fig_named(&figs, "jct-cdf");
	assert_int_equal(c->fig->n_series, 2);
	assert_int_equal(c->fig->series[1].n, 1 + 8);
	assert_float_equal(c->fig->series[1].x[8], 301.0, 1e-9);
	assert_string_equal(c->caption, "Fraction of each policy's completed jobs finished within "
	                                "a JCT; all 2 seeds pooled (7-8)");
	rk_report_figures_fini(&figs);
	char *h = html(&f.r);
	assert_non_null(strstr(h, "<figcaption>fig-jct-cdf: Fraction of each policy&#39;s "
	                          "completed jobs finished within a JCT; all 2 seeds pooled "
	                          "(7-8)</figcaption>"));
	/* the summary table is one repetition's: labelled before its rows */
	const char *lab = strstr(h, "<p>Seed 7's run (the first of seeds 7-8;");
	const char *tab = strstr(h, "<tr><th>policy</th><th>avg JCT (s)</th>");
	assert_true(lab && tab && lab < tab);
	free(h);

	/* no repetition kept: the first seed's jobs, and the caption says that */
	f.runs[0].seeds = f.runs[1].seeds = NULL;
	assert_int_equal(rk_report_figures(&f.r, &figs, &err), 0);
	c = fig_named(&figs, "jct-cdf");
	assert_int_equal(c->fig->series[0].n, 1 + 4);
	assert_non_null(strstr(c->caption, "; seed 7's run only (the first of seeds 7-8)"));
	rk_report_figures_fini(&figs);

	/* without --seeds: the first repetition's jobs even with more kept; captions as before */
	f.runs[0].seeds = f.runs[1].seeds = &f.sd;
	f.r.seeds_n = 0;
	assert_int_equal(rk_report_figures(&f.r, &figs, &err), 0);
	c = fig_named(&figs, "jct-cdf");
	assert_int_equal(c->fig->series[0].n, 1 + 4);
	assert_float_equal(c->fig->series[0].x[4], 300.0, 1e-9);
	assert_string_equal(c->caption,
	                    "Fraction of each policy's completed jobs finished within a JCT");
	assert_string_equal(fig_named(&figs, "gpu-util")->caption,
	                    "Allocated / total GPUs, averaged over 200 equal time bins of the run");
	rk_report_figures_fini(&figs);
	h = html(&f.r);
	assert_null(strstr(h, "Seed 7's run"));
	free(h);

	/* a repetition's list that cannot be read is refused, naming the run */
	f.r.seeds_n = 2;
	f.outc[1] = NULL;
	assert_int_equal(rk_report_figures(&f.r, &figs, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "run 0: bad outcome list of repetition 1"));
	assert_int_equal(figs.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_seed_in_jobs_csv),
	    cmocka_unit_test(extra_figures_in_json),
	    cmocka_unit_test(cdf_pools_every_seed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
