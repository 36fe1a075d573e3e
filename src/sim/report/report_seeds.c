/*
 * Repetitions over seeds in reports (report.h, `rubick sim --seeds`): the
 * Student t interval of a figure over seeds and the table block that prints
 * it. Researchers report a mean with a 95% interval over a handful of seeds
 * (Sia, Pollux and Synergy each repeat their workloads); with n this small
 * the normal quantile 1.96 would understate the interval (12.7 at n = 2).
 */
#include "rubick/report.h"

#include "sim/report/report_internal.h"

#include <math.h>
#include <string.h>

/* t(0.975, df) for df = 1..30 (any statistics table, e.g. NIST/SEMATECH 1.3.6.7.2). */
static const double t975[30] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                2.060,  2.056, 2.052, 2.048, 2.045, 2.042};

double rk_report_t975(int df)
{
	if (df < 1)
		return NAN;
	if (df <= 30)
		return t975[df - 1];
	/*
	 * Cornish-Fisher expansion of the t quantile in 1/df (Abramowitz & Stegun
	 * 26.7.5); at df = 30 it gives 2.0423 against the table's 2.042.
	 */
	double z = 1.959963984540054, v = df, z2 = z * z;
	double g1 = (z2 * z + z) / 4.0;
	double g2 = (5 * z2 * z2 * z + 16 * z2 * z + 3 * z) / 96.0;
	double g3 = (3 * pow(z, 7) + 19 * pow(z, 5) + 17 * z2 * z - 15 * z) / 384.0;
	return z + g1 / v + g2 / (v * v) + g3 / (v * v * v);
}

int rk_report_stat_compute(const double *v, int n, struct rk_report_stat *st)
{
	if (!v || n < 1 || !st)
		return RK_EINVAL;
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += v[i];
	double mean = sum / n, ss = 0;
	for (int i = 0; i < n; i++)
		ss += (v[i] - mean) * (v[i] - mean);
	st->mean = mean;
	st->sd = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
	st->half95 = n > 1 ? rk_report_t975(n - 1) * st->sd / sqrt((double)n) : 0.0;
	return 0;
}

const char *rk_report_figure_name(enum rk_report_figure k)
{
	switch (k) {
	case RK_FIG_AVG_JCT:
		return "avg_jct_s";
	case RK_FIG_P99_JCT:
		return "p99_jct_s";
	case RK_FIG_MAKESPAN:
		return "makespan_s";
	default:
		return "?";
	}
}

double rk_report_figure_value(const struct rk_sim_summary *s, enum rk_report_figure k)
{
	switch (k) {
	case RK_FIG_AVG_JCT:
		return s->avg_jct_s;
	case RK_FIG_P99_JCT:
		return s->p99_jct_s;
	case RK_FIG_MAKESPAN:
		return s->makespan_s;
	default:
		return NAN;
	}
}

int report_seeds_table(FILE *f, const struct rk_report *r)
{
	if (r->seeds_n <= 0)
		return 0;
	fprintf(f,
	        "\nseeds %llu-%llu (%d runs per policy, %s seed%s varied): mean +- 95%% "
	        "Student t half-width\n",
	        (unsigned long long)r->seeds_first, (unsigned long long)r->seeds_last, r->seeds_n,
	        r->seeds_vary ? r->seeds_vary : "",
	        r->seeds_vary && strchr(r->seeds_vary, '+') ? "s" : "");
	fprintf(f, "%-12s", "policy");
	for (int k = 0; k < RK_FIG_COUNT; k++)
		fprintf(f, " %25s", rk_report_figure_name((enum rk_report_figure)k));
	fputc('\n', f);
	for (int i = 0; i < r->n_runs; i++) {
		const struct rk_report_run *u = &r->runs[i];
		if (!u->seeds)
			continue;
		fprintf(f, "%-12s", u->policy ? u->policy : "");
		for (int k = 0; k < RK_FIG_COUNT; k++) {
			struct rk_report_stat st;
			if (rk_report_stat_compute(u->seeds->values[k], u->seeds->n, &st))
				return RK_EINVAL;
			fprintf(f, " %12.1f +- %9.1f", st.mean, st.half95);
		}
		fputc('\n', f);
	}
	return 0;
}
