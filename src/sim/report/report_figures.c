/*
 * The report's figures (report.h): runs turned into figure.h figures that
 * the HTML page inlines and `rubick sim --out` writes as SVG and PDF, so
 * both show the same drawing. The per-policy bars are the headline figure
 * of the Rubick (Fig. 8), Sia (Fig. 6) and Pollux (Fig. 7) papers: each
 * policy's average JCT, p99 JCT and makespan over a reference policy's.
 * Under `--seeds` a bar is the mean over seeds and its error bar the 95%
 * Student t interval, both divided by the reference's mean, and the JCT CDF
 * pools every repetition's jobs; the time series stay the first seed's (its
 * repetitions keep no samples), and their captions say so.
 */
#include "rubick/figure.h"
#include "rubick/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CDFs longer than this are thinned to this many steps. */
#define MAX_POINTS 1200
/*
 * Time series are averaged over this many equal bins of the whole run (all
 * policies share the bins): per-event steps of a 10,000-job trace are an
 * unreadable smear, 200 bins read like the papers' utilisation plots.
 */
#define TIME_BINS 200

/* Mean and half-width over seeds of v (n values), else the single value one. */
static void seed_stat(const double *v, int n, double one, double *mean, double *half)
{
	struct rk_report_stat st;
	if (v && n > 0 && !rk_report_stat_compute(v, n, &st)) {
		*mean = st.mean;
		*half = st.half95;
		return;
	}
	*mean = one;
	*half = 0.0;
}

static void figure_stat(const struct rk_report_run *u, enum rk_report_figure k, double *mean,
                        double *half)
{
	seed_stat(u->seeds ? u->seeds->values[k] : NULL, u->seeds ? u->seeds->n : 0,
	          rk_report_figure_value(&u->summary, k), mean, half);
}

static const char *name_of(const char *s)
{
	return s ? s : "";
}

static int find_ref(const struct rk_report *r)
{
	if (!r->normalize)
		return 0;
	for (int i = 0; i < r->n_runs; i++)
		if (r->runs[i].policy && !strcmp(r->runs[i].policy, r->normalize))
			return i;
	return -1;
}

static struct rk_report_fig *next_fig(struct rk_report_figs *out, const char *name,
                                      const char *heading, const char *xlabel, const char *ylabel)
{
	struct rk_report_fig *f = &out->f[out->n];
	f->name = name;
	f->heading = heading;
	f->caption[0] = '\0';
	f->fig = rk_figure_new(NULL, xlabel, ylabel); /* the caption titles it */
	if (!f->fig)
		return NULL;
	out->n++;
	return f;
}

static int fig_bars(const struct rk_report *r, int ref, struct rk_report_figs *out)
{
	static const char *const cats[RK_FIG_COUNT] = {"avg JCT", "p99 JCT", "makespan"};
	double ref_mean[RK_FIG_COUNT], h;
	int rel = 1;
	for (int k = 0; k < RK_FIG_COUNT; k++) {
		figure_stat(&r->runs[ref], (enum rk_report_figure)k, &ref_mean[k], &h);
		/* A reference without completed jobs has no scale: plot seconds instead. */
		rel &= ref_mean[k] > 0 && isfinite(ref_mean[k]);
	}
	char ylabel[160];
	if (rel)
		snprintf(ylabel, sizeof(ylabel), "relative to %s", name_of(r->runs[ref].policy));
	else
		snprintf(ylabel, sizeof(ylabel), "time (s)");
	struct rk_report_fig *f =
	    next_fig(out, "bars", "Policies compared", "figure of merit", ylabel);
	if (!f || rk_figure_bars(f->fig, cats, RK_FIG_COUNT))
		return RK_ENOMEM;
	int seeds = 0;
	for (int i = 0; i < r->n_runs; i++) {
		double v[RK_FIG_COUNT], lo[RK_FIG_COUNT], hi[RK_FIG_COUNT];
		for (int k = 0; k < RK_FIG_COUNT; k++) {
			double m, half, s = rel ? ref_mean[k] : 1.0;
			figure_stat(&r->runs[i], (enum rk_report_figure)k, &m, &half);
			v[k] = m / s;
			lo[k] = (m - half) / s;
			hi[k] = (m + half) / s;
		}
		seeds |= r->runs[i].seeds != NULL;
		const int iv = r->runs[i].seeds != NULL;
		if (rk_figure_bar_series(f->fig, r->runs[i].policy, v, iv ? lo : NULL,
		                         iv ? hi : NULL))
			return RK_ENOMEM;
	}
	if (rel && rk_figure_hline(f->fig, 1.0, NULL))
		return RK_ENOMEM;
	int n = 0;
	if (rel)
		n = snprintf(f->caption, sizeof(f->caption),
		             "Average JCT, p99 JCT and makespan relative to %s "
		             "(%.1f s, %.1f s and %.1f s = 1)",
		             name_of(r->runs[ref].policy), ref_mean[0], ref_mean[1], ref_mean[2]);
	else
		n = snprintf(
		    f->caption, sizeof(f->caption),
		    "Average JCT, p99 JCT and makespan (s): the reference completed no job");
	if (seeds && r->seeds_n > 0 && n >= 0 && (size_t)n < sizeof(f->caption))
		snprintf(f->caption + n, sizeof(f->caption) - (size_t)n,
		         "; bars: mean over seeds %llu-%llu (%d runs each), error bars: 95%% "
		         "Student t interval of the mean",
		         (unsigned long long)r->seeds_first, (unsigned long long)r->seeds_last,
		         r->seeds_n);
	return 0;
}

/* GPU-hours or reconfigurations per job of every policy, one bar each. */
static int fig_per_policy(const struct rk_report *r, int reconfigs, struct rk_report_figs *out)
{
	const char *cat = "";
	struct rk_report_fig *f =
	    next_fig(out, reconfigs ? "reconfigs" : "gpu-hours",
	             reconfigs ? "Reconfigurations per job" : "GPU-hours", "policy",
	             reconfigs ? "reconfigurations per job" : "GPU time (GPU-hours)");
	if (!f || rk_figure_bars(f->fig, &cat, 1))
		return RK_ENOMEM;
	int seeds = 0;
	for (int i = 0; i < r->n_runs; i++) {
		const struct rk_report_run *u = &r->runs[i];
		const double *sv = !u->seeds   ? NULL
		                   : reconfigs ? u->seeds->reconfigs
		                               : u->seeds->gpu_hours;
		double m, half;
		seed_stat(sv, sv ? u->seeds->n : 0,
		          reconfigs ? u->summary.reconfigs_per_job : u->summary.gpu_hours, &m,
		          &half);
		double lo = m - half, hi = m + half;
		seeds |= sv != NULL;
		if (rk_figure_bar_series(f->fig, u->policy, &m, sv ? &lo : NULL, sv ? &hi : NULL))
			return RK_ENOMEM;
	}
	snprintf(f->caption, sizeof(f->caption), "%s per policy%s",
	         reconfigs ? "Reconfigurations per job" : "GPU-hours used (allocated GPUs x hours)",
	         seeds ? "; bars: mean over seeds, error bars: 95% Student t interval" : "");
	return 0;
}

/*
 * A run with nothing to draw in a line figure still gets its series (one
 * point, not a number: no mark, no range), so series i is run i in every
 * figure and a policy keeps its colour and dash across figures.
 */
static int no_data(struct rk_figure *fig, const char *policy)
{
	const double nan = NAN;
	return rk_figure_line(fig, policy, RK_FIGURE_STEP, &nan, &nan, NULL, NULL, 1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double jct_s(const struct rk_job_outcome *o)
{
	return (double)(o->finish_ms - o->submit_ms) / 1000.0;
}

/*
 * Under --seeds a run whose seeds kept every repetition's outcomes has one
 * list per seed ([0] is the run's own, as jobs.csv prints them); else its
 * own list is the only one.
 */
static int pooled(const struct rk_report *r, const struct rk_report_run *u)
{
	const struct rk_report_seeds *sd = u->seeds;
	return r->seeds_n > 0 && sd && sd->n > 0 && sd->outcomes && sd->n_outcomes;
}

static int n_lists(const struct rk_report *r, const struct rk_report_run *u)
{
	return pooled(r, u) ? u->seeds->n : 1;
}

/* List k of run u (k < n_lists). OUT: *n, its length. */
static const struct rk_job_outcome *list_at(const struct rk_report *r,
                                            const struct rk_report_run *u, int k, int *n)
{
	if (!pooled(r, u)) {
		*n = u->n_outcomes;
		return u->outcomes;
	}
	*n = u->seeds->n_outcomes[k];
	return u->seeds->outcomes[k];
}

/* What the CDF covers under --seeds, appended to its caption at c (size left). */
static void cdf_seeds_caption(const struct rk_report *r, char *c, size_t size)
{
	if (r->seeds_n <= 0)
		return;
	int all = r->n_runs > 0, some = 0;
	for (int i = 0; i < r->n_runs; i++) {
		all &= pooled(r, &r->runs[i]);
		some |= pooled(r, &r->runs[i]);
	}
	unsigned long long a = r->seeds_first, b = r->seeds_last;
	if (all)
		snprintf(c, size, "; all %d seeds pooled (%llu-%llu)", r->seeds_n, a, b);
	else if (some)
		snprintf(c, size,
		         "; all %d seeds pooled (%llu-%llu) for the policies that kept every "
		         "repetition's jobs, seed %llu's run only for the others",
		         r->seeds_n, a, b, a);
	else
		snprintf(c, size, "; seed %llu's run only (the first of seeds %llu-%llu)", a, a, b);
}

static int fig_cdf(const struct rk_report *r, struct rk_report_figs *out)
{
	double lo = INFINITY, hi = 0.0;
	size_t most = 0;
	for (int i = 0; i < r->n_runs; i++) {
		const struct rk_report_run *u = &r->runs[i];
		size_t all = 0;
		for (int k = 0; k < n_lists(r, u); k++) {
			int n;
			const struct rk_job_outcome *o = list_at(r, u, k, &n);
			all += (size_t)n;
			for (int j = 0; j < n; j++) {
				if (!o[j].completed)
					continue;
				double v = jct_s(&o[j]);
				hi = v > hi ? v : hi;
				lo = v > 0 && v < lo ? v : lo;
			}
		}
		most = all > most ? all : most;
	}
	/* JCTs span orders of magnitude in real traces: log scale when they do. */
	int log = hi > 0 && isfinite(lo) && hi / lo > 100.0;
	struct rk_report_fig *f =
	    next_fig(out, "jct-cdf", "JCT CDF",
	             log ? "job completion time (s, log scale)" : "job completion time (s)",
	             "fraction of completed jobs");
	if (!f)
		return RK_ENOMEM;
	int w = snprintf(f->caption, sizeof(f->caption),
	                 "Fraction of each policy's completed jobs finished within a JCT%s",
	                 log ? " (log scale: JCTs span more than 100x)" : "");
	if (w >= 0 && (size_t)w < sizeof(f->caption))
		cdf_seeds_caption(r, f->caption + w, sizeof(f->caption) - (size_t)w);
	rk_figure_xscale(f->fig, log ? RK_FIGURE_LOG : RK_FIGURE_LINEAR);
	rk_figure_yrange(f->fig, 0, 1);
	double *v = malloc((most + 1) * sizeof(*v));
	double *x = malloc(((size_t)MAX_POINTS + 2) * sizeof(*x));
	double *y = malloc(((size_t)MAX_POINTS + 2) * sizeof(*y));
	int rc = v && x && y ? 0 : RK_ENOMEM;
	for (int i = 0; !rc && i < r->n_runs; i++) {
		const struct rk_report_run *u = &r->runs[i];
		size_t n = 0;
		for (int k = 0; k < n_lists(r, u); k++) {
			int len;
			const struct rk_job_outcome *o = list_at(r, u, k, &len);
			for (int j = 0; j < len; j++)
				if (o[j].completed)
					v[n++] = jct_s(&o[j]);
		}
		if (n == 0) { /* nothing to draw: the legend keeps its entry and the colours stay */
			rc = no_data(f->fig, u->policy);
			continue;
		}
		qsort(v, n, sizeof(*v), cmp_double);
		/* Empirical CDF from 0 at the shortest JCT; long runs thinned to MAX_POINTS steps.
		 */
		size_t stride = n > MAX_POINTS ? (n + MAX_POINTS - 1) / MAX_POINTS : 1;
		int m = 0;
		x[m] = v[0];
		y[m++] = 0.0;
		for (size_t k = 0; k < n; k += stride) {
			size_t last = k + stride - 1 < n - 1 ? k + stride - 1 : n - 1;
			x[m] = v[last];
			y[m++] = (double)(last + 1) / (double)n;
		}
		rc = rk_figure_line(f->fig, u->policy, RK_FIGURE_STEP, x, y, NULL, NULL, m);
	}
	free(v);
	free(x);
	free(y);
	return rc;
}

enum series { SERIES_UTIL, SERIES_QUEUE };

static double series_value(const struct rk_sim_sample *s, enum series k)
{
	if (k == SERIES_QUEUE)
		return s->queue_len;
	return s->gpus_total > 0 ? (double)s->gpus_alloc / (double)s->gpus_total : 0.0;
}

/*
 * One run's series over TIME_BINS equal bins of [t0, t1] (the span of every
 * run, so policies share bins): each bin holds the time-weighted average of
 * the piecewise-constant samples in it (the area under the line is kept), as
 * step points at the bins' starts plus the last bin's end. Bins outside the
 * run's own first..last sample are left out. OUT: x, y (TIME_BINS + 1 room),
 * the count.
 */
static int series_bins(const struct rk_report_run *u, enum series k, double t0, double t1,
                       double scale, double *x, double *y)
{
	const struct rk_sim_sample *s = u->samples;
	int n = u->n_samples, m = 0;
	double r0 = (double)s[0].t_ms / 1000.0, r1 = (double)s[n - 1].t_ms / 1000.0;
	if (r1 <= r0) {
		x[0] = r0 / scale;
		y[0] = series_value(&s[n - 1], k);
		return 1;
	}
	double width = (t1 - t0) / TIME_BINS, end = r0;
	int j = 0;
	for (int b = 0; b < TIME_BINS; b++) {
		double b0 = t0 + width * b, b1 = b + 1 == TIME_BINS ? t1 : b0 + width;
		b0 = b0 > r0 ? b0 : r0;
		b1 = b1 < r1 ? b1 : r1;
		if (b1 <= b0)
			continue;
		double area = 0.0;
		/* samples j.. overlap the bin; sample j holds until sample j+1 */
		while (j + 1 < n && (double)s[j + 1].t_ms / 1000.0 <= b0)
			j++;
		for (int q = j; q < n - 1; q++) {
			double a0 = (double)s[q].t_ms / 1000.0, a1 = (double)s[q + 1].t_ms / 1000.0;
			if (a0 >= b1)
				break;
			double lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
			if (hi > lo)
				area += (hi - lo) * series_value(&s[q], k);
		}
		x[m] = b0 / scale;
		y[m++] = area / (b1 - b0);
		end = b1;
	}
	x[m] = end / scale; /* the last bin's end, at its value */
	y[m] = m > 0 ? y[m - 1] : 0.0;
	return m + 1;
}

static int fig_series(const struct rk_report *r, enum series k, struct rk_report_figs *out)
{
	double tmin = INFINITY, tmax = -INFINITY, vmax = 0.0;
	for (int i = 0; i < r->n_runs; i++)
		for (int j = 0; j < r->runs[i].n_samples; j++) {
			const struct rk_sim_sample *s = &r->runs[i].samples[j];
			double t = (double)s->t_ms / 1000.0, v = series_value(s, k);
			tmin = t < tmin ? t : tmin;
			tmax = t > tmax ? t : tmax;
			vmax = v > vmax ? v : vmax;
		}
	if (!isfinite(tmin)) {
		tmin = 0.0;
		tmax = 1.0;
	}
	if (tmax <= tmin)
		tmax = tmin + 1.0;
	/* Hours read better than seconds once a run is longer than two hours. */
	int hours = tmax - tmin > 7200.0;
	struct rk_report_fig *f = next_fig(
	    out, k == SERIES_UTIL ? "gpu-util" : "queue",
	    k == SERIES_UTIL ? "GPU utilisation over time" : "Queue length over time",
	    hours ? "time (h)" : "time (s)",
	    k == SERIES_UTIL ? "GPU utilisation (allocated / total)" : "queue length (jobs)");
	if (!f)
		return RK_ENOMEM;
	int w = snprintf(f->caption, sizeof(f->caption),
	                 "%s, averaged over %d equal time bins of the run",
	                 k == SERIES_UTIL ? "Allocated / total GPUs" : "Pending jobs", TIME_BINS);
	/* Repetitions keep no samples (src/cli/sim_seeds.h): say whose run this is. */
	if (r->seeds_n > 0 && w >= 0 && (size_t)w < sizeof(f->caption))
		snprintf(
		    f->caption + w, sizeof(f->caption) - (size_t)w,
		    " of seed %llu (the first of seeds %llu-%llu; repetitions keep no samples)",
		    (unsigned long long)r->seeds_first, (unsigned long long)r->seeds_first,
		    (unsigned long long)r->seeds_last);
	rk_figure_yrange(f->fig, 0, k == SERIES_UTIL ? 1.0 : (vmax > 0 ? vmax : 1.0));
	double x[TIME_BINS + 1], y[TIME_BINS + 1];
	for (int i = 0; i < r->n_runs; i++) {
		if (r->runs[i].n_samples == 0) {
			if (no_data(f->fig, r->runs[i].policy))
				return RK_ENOMEM;
			continue;
		}
		int m = series_bins(&r->runs[i], k, tmin, tmax, hours ? 3600.0 : 1.0, x, y);
		if (rk_figure_line(f->fig, r->runs[i].policy, RK_FIGURE_STEP, x, y, NULL, NULL, m))
			return RK_ENOMEM;
	}
	return 0;
}

void rk_report_figures_fini(struct rk_report_figs *figs)
{
	for (int i = 0; i < figs->n; i++)
		rk_figure_free(figs->f[i].fig);
	figs->n = 0;
}

int rk_report_figures(const struct rk_report *r, struct rk_report_figs *out, struct rk_error *err)
{
	out->n = 0;
	if (!r || r->n_runs < 0 || (r->n_runs > 0 && !r->runs))
		return rk_error_set(err, RK_EINVAL, "report: bad arguments");
	for (int i = 0; i < r->n_runs; i++) {
		const struct rk_report_run *u = &r->runs[i];
		if (u->n_outcomes < 0 || (u->n_outcomes > 0 && !u->outcomes) || u->n_samples < 0 ||
		    (u->n_samples > 0 && !u->samples))
			return rk_error_set(err, RK_EINVAL,
			                    "report: run %d: bad outcome or sample list", i);
		for (int k = 0; pooled(r, u) && k < u->seeds->n; k++)
			if (u->seeds->n_outcomes[k] < 0 ||
			    (u->seeds->n_outcomes[k] > 0 && !u->seeds->outcomes[k]))
				return rk_error_set(
				    err, RK_EINVAL,
				    "report: run %d: bad outcome list of repetition %d", i, k);
	}
	int ref = find_ref(r);
	if (r->n_runs > 0 && ref < 0)
		return rk_error_set(err, RK_EINVAL, "report: --normalize: no run named '%s'",
		                    r->normalize);
	int rc = r->n_runs > 0 ? fig_bars(r, ref, out) : 0;
	if (!rc)
		rc = fig_cdf(r, out);
	if (!rc)
		rc = fig_series(r, SERIES_UTIL, out);
	if (!rc)
		rc = fig_series(r, SERIES_QUEUE, out);
	if (!rc && r->n_runs > 0)
		rc = fig_per_policy(r, 0, out);
	if (!rc && r->n_runs > 0)
		rc = fig_per_policy(r, 1, out);
	if (rc) {
		rk_report_figures_fini(out);
		return rk_error_set(err, rc, "report: figures: out of memory");
	}
	return 0;
}

int rk_report_write_figures(const char *dir, const struct rk_report *r, struct rk_error *err)
{
	if (!dir)
		return rk_error_set(err, RK_EINVAL, "report: figures: no directory");
	struct rk_report_figs figs;
	int rc = rk_report_figures(r, &figs, err);
	for (int i = 0; !rc && i < figs.n; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/fig-%s.svg", dir, figs.f[i].name);
		rc = rk_figure_write_svg(figs.f[i].fig, path, err);
		snprintf(path, sizeof(path), "%s/fig-%s.pdf", dir, figs.f[i].name);
		if (!rc)
			rc = rk_figure_write_pdf(figs.f[i].fig, path, err);
	}
	rk_report_figures_fini(&figs);
	return rc;
}
