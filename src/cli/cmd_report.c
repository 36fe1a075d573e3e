/*
 * `rubick report [--x load|arrival|gpus|auto] [--out DIR] [--json] DIR...`:
 * a sweep across runs of `rubick sim --out` (docs/sim.md, "Sweeps"), as
 * Pollux (OSDI'21 §5.3) and Gavel (OSDI'20 §7) plot a metric against load
 * or arrival rate: per policy and x, mean and 95% Student t interval over
 * the seeds. Reading and checking the runs is report_runs.c; figures and
 * their page are report_figs.c.
 */
#include "cli/commands.h"
#include "cli/report_sweep.h"
#include "cli/util.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fputs("usage: rubick report [--x load|arrival|gpus|auto] [--out DIR] [--json] DIR...\n"
	      "\n"
	      "Combine runs of `rubick sim --out DIR` into a sweep: per policy and x, the mean\n"
	      "and 95% Student t interval over each run's seeds of average JCT, p99 JCT,\n"
	      "makespan, GPU utilisation, GPU-hours and reconfigurations per job.\n"
	      "\n"
	      "  --x WHAT    the x of each run, from its summary.json (default auto):\n"
	      "                load     its --load factor (1 without one)\n"
	      "                arrival  jobs per hour: --poisson RATE x --load when a rate is\n"
	      "                         set, else measured from jobs.csv: (N - 1) jobs over\n"
	      "                         the first to the last submit, averaged over seeds\n"
	      "                gpus     the GPUs of its --cluster (read as rubick sim did)\n"
	      "                auto     the one of load, poisson, cluster that differs\n"
	      "              Every other option of the runs must be the same (the policies,\n"
	      "              their options and the seeds may differ).\n"
	      "  --out DIR   write sweep.csv (policy,x,metric,n,mean,sd,ci95_lo,ci95_hi),\n"
	      "              sweep.json, fig-NAME.svg and fig-NAME.pdf per figure and an\n"
	      "              index.html showing them (made with its parents)\n"
	      "  --json      print the sweep as JSON instead of the table\n"
	      "\n"
	      "Each DIR is one run (jobs.csv, summary.json); at least two. The JCT CDF pools\n"
	      "every seed's completed jobs at the most contended x: the highest load or\n"
	      "rate, the smallest cluster.\n"
	      "\n"
	      "example:\n"
	      "  for l in 0.5 1 2; do rubick sim --trace T.csv --cluster 8x8 --policy fifo,sia \\\n"
	      "      --poisson mean --load $l --seeds 1-5 --out runs/load-$l; done\n"
	      "  rubick report runs/load-* --out sweep\n",
	      f);
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("rubick report: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (try `rubick report --help`)\n", stderr);
	return RK_EXIT_USAGE;
}

/* The statistics of one metric of one point, as sweep.json and --json print them. */
static json_t *stat_json(const struct rk_sweep_point *pt, int k)
{
	const struct rk_report_stat *st = &pt->st[k];
	json_t *o = json_object(), *vals = json_array();
	for (int i = 0; vals && i < pt->n; i++)
		json_array_append_new(vals, json_real(pt->v[k][i]));
	json_object_set_new(o, "mean", json_real(st->mean));
	json_object_set_new(o, "sd", json_real(st->sd));
	json_object_set_new(o, "half95", json_real(st->half95));
	json_object_set_new(o, "ci95_lo", json_real(st->mean - st->half95));
	json_object_set_new(o, "ci95_hi", json_real(st->mean + st->half95));
	json_object_set_new(o, "values", vals);
	return o;
}

/*
 * {"x":"load", "x_label":..., "xs":[...], "policies":[...], "cdf_x":...,
 *  "cdf_seeds":"all"|"first", "points":[{"policy":..., "x":..., "dir":...,
 *  "n":N, "jobs_completed":N, "avg_jct_s":{"mean", "sd", "half95", "ci95_lo",
 *  "ci95_hi", "values"}, "p99_jct_s":..., ..., "reconfigs":...}]}
 */
static char *sweep_json(const struct rk_sweep *sw, int pretty)
{
	json_t *root = json_object(), *xs = json_array(), *pols = json_array(), *pts = json_array();
	json_object_set_new(root, "x", json_string(sw->x_name));
	json_object_set_new(root, "x_label", json_string(sw->x_label));
	for (int i = 0; i < sw->n_xs; i++)
		json_array_append_new(xs, json_real(sw->xs[i]));
	json_object_set_new(root, "xs", xs);
	for (int p = 0; p < sw->n_policies; p++)
		json_array_append_new(pols, json_string(sw->policies[p]));
	json_object_set_new(root, "policies", pols);
	json_object_set_new(root, "cdf_x", json_real(sw->cdf_x));
	json_object_set_new(root, "cdf_seeds", json_string(sw->cdf_all_seeds ? "all" : "first"));
	for (int i = 0; i < sw->n_pts; i++) {
		const struct rk_sweep_point *pt = &sw->pts[i];
		json_t *o = json_object();
		json_object_set_new(o, "policy", json_string(sw->policies[pt->policy]));
		json_object_set_new(o, "x", json_real(pt->x));
		json_object_set_new(o, "dir", json_string(pt->dir));
		json_object_set_new(o, "n", json_integer(pt->n));
		json_object_set_new(o, "jobs_completed", json_integer(pt->n_jct));
		for (int k = 0; k < RK_SW_COUNT; k++)
			json_object_set_new(o, rk_sweep_metric_name((enum rk_sweep_metric)k),
			                    stat_json(pt, k));
		json_array_append_new(pts, o);
	}
	json_object_set_new(root, "points", pts);
	size_t flags = JSON_REAL_PRECISION(12) | (pretty ? JSON_INDENT(2) : JSON_COMPACT);
	char *s = json_dumps(root, flags);
	json_decref(root);
	return s;
}

/* Widths of the table's mean and half-width per metric, and their decimals. */
static const struct {
	int w, hw, dec;
} cols[RK_SW_COUNT] = {{12, 9, 1}, {12, 9, 1}, {12, 9, 1}, {7, 6, 3}, {10, 8, 2}, {7, 6, 3}};

static void print_table(FILE *f, const struct rk_sweep *sw)
{
	fprintf(f,
	        "sweep over %s (%d values, %d policies): mean +- 95%% Student t half-width over "
	        "seeds\n",
	        sw->x_label, sw->n_xs, sw->n_policies);
	fprintf(f, "%-24s %10s %4s", "policy", sw->x_name, "n");
	for (int k = 0; k < RK_SW_COUNT; k++)
		fprintf(f, " %*s", cols[k].w + 4 + cols[k].hw,
		        rk_sweep_metric_name((enum rk_sweep_metric)k));
	fputc('\n', f);
	for (int i = 0; i < sw->n_pts; i++) {
		const struct rk_sweep_point *pt = &sw->pts[i];
		fprintf(f, "%-24s %10.4g %4d", sw->policies[pt->policy], pt->x, pt->n);
		for (int k = 0; k < RK_SW_COUNT; k++)
			fprintf(f, " %*.*f +- %*.*f", cols[k].w, cols[k].dec, pt->st[k].mean,
			        cols[k].hw, cols[k].dec, pt->st[k].half95);
		fputc('\n', f);
	}
}

/* The tidy table: one row per policy, x and metric. */
static void write_csv(FILE *f, const struct rk_sweep *sw)
{
	fputs("policy,x,metric,n,mean,sd,ci95_lo,ci95_hi\n", f);
	for (int i = 0; i < sw->n_pts; i++) {
		const struct rk_sweep_point *pt = &sw->pts[i];
		for (int k = 0; k < RK_SW_COUNT; k++) {
			const struct rk_report_stat *st = &pt->st[k];
			rk_report_put_csv_field(f, sw->policies[pt->policy]);
			fprintf(f, ",%.12g,%s,%d,%.12g,%.12g,%.12g,%.12g\n", pt->x,
			        rk_sweep_metric_name((enum rk_sweep_metric)k), pt->n, st->mean,
			        st->sd, st->mean - st->half95, st->mean + st->half95);
		}
	}
}

/* DIR/name written by fn (text) or holding `text`. 0 or RK_EXIT_FAILURE after printing. */
static int write_text(const char *dir, const char *name, const struct rk_sweep *sw,
                      void (*fn)(FILE *, const struct rk_sweep *), const char *text)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "rubick report: --out: %s: %s\n", path, strerror(errno));
		return RK_EXIT_FAILURE;
	}
	if (fn)
		fn(f, sw);
	else
		fprintf(f, "%s\n", text);
	int bad = ferror(f);
	if (fclose(f) || bad) {
		fprintf(stderr, "rubick report: --out: %s: write failed: %s\n", path,
		        strerror(errno));
		return RK_EXIT_FAILURE;
	}
	return 0;
}

static int write_out(const char *dir, const struct rk_sweep *sw)
{
	char failed[4096];
	int e = rk_cli_mkdirs(dir, failed, sizeof(failed));
	if (e) {
		fprintf(stderr, "rubick report: --out: cannot create '%s': '%s': %s\n", dir, failed,
		        strerror(e));
		return RK_EXIT_FAILURE;
	}
	char *js = sweep_json(sw, 1);
	if (!js) {
		fprintf(stderr, "rubick report: out of memory encoding sweep.json\n");
		return RK_EXIT_FAILURE;
	}
	int rc = write_text(dir, "sweep.csv", sw, write_csv, NULL);
	if (!rc)
		rc = write_text(dir, "sweep.json", sw, NULL, js);
	free(js);
	int n_figs = 0;
	if (!rc)
		rc = rk_sweep_write_figures(sw, dir, &n_figs);
	/* stderr, so stdout stays the table or JSON; the one line that says where it wrote */
	if (!rc)
		fprintf(stderr,
		        "rubick report: wrote sweep.csv, sweep.json, %d figures (fig-*.svg, "
		        "fig-*.pdf) and index.html to %s\n",
		        n_figs, dir);
	return rc;
}

int rk_cmd_report(int argc, char **argv)
{
	enum rk_sweep_x x = RK_SWEEP_AUTO;
	const char *out = NULL;
	int json = 0, n = 0, dashdash = 0;
	char **dirs = calloc((size_t)argc, sizeof(char *));
	if (!dirs) {
		fprintf(stderr, "rubick report: out of memory\n");
		return RK_EXIT_FAILURE;
	}
	/* Options before or after the DIRs (`rubick report runs/load-1 runs/load-2 --out sweep`);
	 * `--` ends them. */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (dashdash || a[0] != '-' || !a[1]) {
			dirs[n++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			dashdash = 1;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			free(dirs);
			return RK_EXIT_OK;
		}
		if (!strcmp(a, "--json")) {
			json = 1;
			continue;
		}
		int bad = 0;
		if (strcmp(a, "--x") && strcmp(a, "--out"))
			bad = usage_error("%s: unknown option", a);
		else if (i + 1 >= argc || !argv[i + 1][0])
			bad = usage_error("%s: missing value", a);
		const char *v = bad ? NULL : argv[++i];
		if (bad)
			;
		else if (!strcmp(a, "--out"))
			out = v;
		else if (!strcmp(v, "load"))
			x = RK_SWEEP_LOAD;
		else if (!strcmp(v, "arrival"))
			x = RK_SWEEP_ARRIVAL;
		else if (!strcmp(v, "gpus"))
			x = RK_SWEEP_GPUS;
		else if (!strcmp(v, "auto"))
			x = RK_SWEEP_AUTO;
		else
			bad = usage_error("--x: expected load, arrival, gpus or auto, got '%s'", v);
		if (bad) {
			free(dirs);
			return bad;
		}
	}
	if (n < 2) {
		free(dirs);
		return usage_error("%s", n ? "one run only: a sweep needs at least two DIRs"
		                           : "no DIR given: a sweep needs at least two runs");
	}
	struct rk_sweep sw;
	int rc = rk_sweep_load(dirs, n, x, &sw);
	if (!rc) {
		if (json) {
			char *s = sweep_json(&sw, 0);
			if (s)
				puts(s);
			else
				rc = RK_EXIT_FAILURE;
			free(s);
		} else {
			print_table(stdout, &sw);
		}
		if (fflush(stdout) || ferror(stdout))
			rc = RK_EXIT_FAILURE;
	}
	if (!rc && out)
		rc = write_out(out, &sw);
	rk_sweep_fini(&sw);
	free(dirs);
	return rc;
}
