/*
 * The runs of `rubick report` (report_sweep.h, docs/sim.md "Sweeps"): each
 * DIR of `rubick sim --out` gives its summary.json (per policy, the figures
 * of every seed) and jobs.csv (every seed's completed JCTs, and the submit
 * times an arrival rate is measured from). A sweep varies one option: the
 * runs' meta options must agree on everything else that changes results.
 */
#include "cli/report_sweep.h"

#include "cli/commands.h"
#include "cli/util.h"

#include "rubick/cluster.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define P "rubick report: "

static const char *const metric_key[RK_SW_COUNT] = {"avg_jct_s", "p99_jct_s", "makespan_s",
                                                    "gpu_util",  "gpu_hours", "reconfigs"};
static const char *const metric_label[RK_SW_COUNT] = {
    "average JCT (s)", "p99 JCT (s)",       "makespan (s)",
    "GPU utilisation", "GPU-hours (GPU h)", "reconfigurations per job"};

const char *rk_sweep_metric_name(enum rk_sweep_metric k)
{
	return k >= 0 && k < RK_SW_COUNT ? metric_key[k] : "?";
}

const char *rk_sweep_metric_label(enum rk_sweep_metric k)
{
	return k >= 0 && k < RK_SW_COUNT ? metric_label[k] : "?";
}

/*
 * Options that may differ between the runs of one sweep: what the runs
 * compare (the policies, their options), the seeds, and what changes no
 * result. Every other option must be equal, except the swept one(s).
 */
static int free_option(const char *key)
{
	static const char *const free_keys[] = {"policy",      "seeds",     "workload_seed",
	                                        "policy_seed", "normalize", "check"};
	for (size_t i = 0; i < sizeof(free_keys) / sizeof(free_keys[0]); i++)
		if (!strcmp(key, free_keys[i]))
			return 1;
	return !strncmp(key, "options[", 8);
}

/* The options each x sweeps: the one option --x auto looks for varying. */
static const struct {
	enum rk_sweep_x x;
	const char *name, *option, *label;
} sweeps[] = {
    {RK_SWEEP_LOAD, "load", "load", "load factor"},
    {RK_SWEEP_ARRIVAL, "arrival", "poisson", "arrival rate (jobs/h)"},
    {RK_SWEEP_GPUS, "gpus", "cluster", "cluster size (GPUs)"},
};
#define N_SWEEPS ((int)(sizeof(sweeps) / sizeof(sweeps[0])))

/* One DIR while it is read. */
struct run {
	const char *dir;
	json_t *root;    /* summary.json */
	json_t *options; /* borrowed from root: meta.options */
	int first_pt;    /* its points: pts[first_pt .. first_pt + n_pols) */
	int n_pols;
	double rate_jph; /* measured from jobs.csv: jobs per hour (arrival) */
	int seed_col;    /* jobs.csv has the seed column */
};

static const char *opt(const struct run *r, const char *key)
{
	return json_string_value(json_object_get(r->options, key));
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs(P, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return RK_EXIT_FAILURE;
}

static int is_dir(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) != 0)
		return fail("%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fail("%s: not a directory (expected a `rubick sim --out` folder)", dir);
	return 0;
}

static int file_exists(const char *dir, const char *name)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	struct stat st;
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		return 0;
	return fail("%s: no %s here (expected a `rubick sim --out DIR` folder: jobs.csv, "
	            "summary.json, ...)",
	            dir, name);
}

/* Append point storage; 0 or RK_ENOMEM. */
static int grow(void **p, int *cap, int need, size_t size)
{
	if (need <= *cap)
		return 0;
	int nc = *cap ? *cap * 2 : 8;
	while (nc < need)
		nc *= 2;
	void *q = realloc(*p, (size_t)nc * size);
	if (!q)
		return RK_ENOMEM;
	*p = q;
	*cap = nc;
	return 0;
}

static int policy_index(struct rk_sweep *sw, const char *name, int *cap)
{
	for (int i = 0; i < sw->n_policies; i++)
		if (!strcmp(sw->policies[i], name))
			return i;
	char *d = strdup(name);
	if (!d || grow((void **)&sw->policies, cap, sw->n_policies + 1, sizeof(char *))) {
		free(d);
		return -1;
	}
	sw->policies[sw->n_policies] = d;
	return sw->n_policies++;
}

/* The per-seed values of metric k of one result: its "seeds" block, else its own value. */
static int result_values(const struct run *r, json_t *res, const char *pol, int k,
                         struct rk_sweep_point *pt)
{
	json_t *sd = json_object_get(res, "seeds");
	if (!sd) {
		json_t *v = json_object_get(res, metric_key[k]);
		if (!json_is_number(v))
			return fail("%s/summary.json: policy %s: no number '%s'", r->dir, pol,
			            metric_key[k]);
		pt->v[k][0] = json_number_value(v);
		return 0;
	}
	json_t *vals = json_object_get(json_object_get(sd, metric_key[k]), "values");
	if (!json_is_array(vals))
		return fail("%s/summary.json: policy %s: the seeds block has no '%s' values%s",
		            r->dir, pol, metric_key[k],
		            k >= RK_SW_GPU_UTIL ? " (written by an older rubick sim: run it again)"
		                                : "");
	if ((int)json_array_size(vals) != pt->n)
		return fail("%s/summary.json: policy %s: '%s' has %zu values for %d seeds", r->dir,
		            pol, metric_key[k], json_array_size(vals), pt->n);
	for (int i = 0; i < pt->n; i++) {
		json_t *v = json_array_get(vals, (size_t)i);
		if (!json_is_number(v))
			return fail("%s/summary.json: policy %s: '%s' value %d is not a number",
			            r->dir, pol, metric_key[k], i + 1);
		pt->v[k][i] = json_number_value(v);
	}
	return 0;
}

/* summary.json of one DIR: its options and one point per policy (x still unset). */
static int read_summary(struct run *r, struct rk_sweep *sw, int *pol_cap, int *pt_cap)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/summary.json", r->dir);
	json_error_t je;
	r->root = json_load_file(path, 0, &je);
	if (!r->root)
		return fail("%s:%d:%d: not valid JSON: %s", path, je.line, je.column, je.text);
	json_t *results = json_object_get(r->root, "results");
	r->options = json_object_get(json_object_get(r->root, "meta"), "options");
	if (!json_is_array(results) || json_array_size(results) == 0)
		return fail("%s: no \"results\" (not a `rubick sim` summary?)", path);
	if (!json_is_object(r->options))
		return fail("%s: no \"meta\" options (written by an older rubick sim, or without "
		            "--out: run it again with --out)",
		            path);
	r->first_pt = sw->n_pts;
	size_t i;
	json_t *res;
	json_array_foreach(results, i, res)
	{
		const char *pol = json_string_value(json_object_get(res, "policy"));
		if (!pol || !*pol)
			return fail("%s: results[%zu] has no policy name", path, i);
		json_t *sd = json_object_get(res, "seeds");
		json_int_t n = sd ? json_integer_value(json_object_get(sd, "n")) : 1;
		if (n < 1 || n > 100000)
			return fail("%s: policy %s: bad seed count %lld", path, pol, (long long)n);
		int p = policy_index(sw, pol, pol_cap);
		if (p < 0 || grow((void **)&sw->pts, pt_cap, sw->n_pts + 1, sizeof(*sw->pts)))
			return fail("out of memory");
		for (int q = r->first_pt; q < sw->n_pts; q++)
			if (sw->pts[q].policy == p)
				return fail("%s: policy %s appears twice", path, pol);
		struct rk_sweep_point *pt = &sw->pts[sw->n_pts++];
		memset(pt, 0, sizeof(*pt));
		pt->policy = p;
		pt->dir = r->dir;
		pt->n = (int)n;
		for (int k = 0; k < RK_SW_COUNT; k++) {
			pt->v[k] = calloc((size_t)n, sizeof(double));
			if (!pt->v[k])
				return fail("out of memory");
			if (result_values(r, res, pol, k, pt))
				return RK_EXIT_FAILURE;
			rk_report_stat_compute(pt->v[k], pt->n, &pt->st[k]);
		}
		r->n_pols++;
	}
	return 0;
}

/*
 * One RFC 4180 row of `text` from *pos: OUT fields (start offsets and
 * lengths into text, quotes kept), *n. 1 with a row, 0 at the end.
 */
#define MAX_COLS 40
struct span {
	size_t at, len;
};

static int csv_row(const char *text, size_t len, size_t *pos, struct span *f, int *n)
{
	size_t i = *pos;
	if (i >= len)
		return 0;
	*n = 0;
	for (;;) {
		size_t start = i;
		int quoted = text[i] == '"';
		if (quoted) {
			for (i++; i < len; i++) {
				if (text[i] == '"' && i + 1 < len && text[i + 1] == '"')
					i++;
				else if (text[i] == '"')
					break;
			}
			if (i < len)
				i++;
		}
		while (i < len && text[i] != ',' && text[i] != '\n')
			i++;
		if (*n < MAX_COLS)
			f[(*n)++] = (struct span){start, i - start};
		if (i >= len || text[i] == '\n')
			break;
		i++;
	}
	*pos = i < len ? i + 1 : i;
	return 1;
}

/* Field s of `text` unquoted into buf (cap bytes, truncated). */
static const char *field(const char *text, struct span s, char *buf, size_t cap)
{
	size_t o = 0;
	const char *p = text + s.at, *end = p + s.len;
	if (s.len && *p == '"') {
		p++;
		if (end > p && end[-1] == '"')
			end--;
	}
	for (; p < end && o + 1 < cap; p++) {
		if (*p == '"' && p + 1 < end && p[1] == '"')
			p++;
		if (*p != '\r')
			buf[o++] = *p;
	}
	buf[o] = '\0';
	return buf;
}

/* Submit times of the first policy per seed: what an arrival rate is measured from. */
struct span_of {
	char seed[32];
	long n;
	double lo, hi;
};

static int add_jct(struct rk_sweep_point *pt, double v, int *cap)
{
	if (grow((void **)&pt->jct, cap, pt->n_jct + 1, sizeof(double)))
		return RK_ENOMEM;
	pt->jct[pt->n_jct++] = v;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* jobs.csv of one DIR: its points' JCTs (every seed) and the measured arrival rate. */
static int read_jobs(struct run *r, struct rk_sweep *sw)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/jobs.csv", r->dir);
	char *text;
	size_t len;
	struct rk_error err;
	if (rk_cli_read_file(path, &text, &len, &err))
		return fail("%s", err.msg);
	static const char *const want[] = {"policy", "submit_s", "jct_s", "completed", "seed"};
	int col[5] = {-1, -1, -1, -1, -1};
	struct span f[MAX_COLS];
	int n, rc = 0, line = 1;
	size_t pos = 0;
	char buf[512], first_pol[512] = "";
	struct span_of *spans = NULL;
	int n_spans = 0, spans_cap = 0;
	int *caps = calloc((size_t)r->n_pols, sizeof(int));
	if (!caps || !csv_row(text, len, &pos, f, &n)) {
		rc = caps ? fail("%s: empty (no header)", path) : fail("out of memory");
		goto out;
	}
	for (int c = 0; c < n; c++)
		for (int k = 0; k < 5; k++)
			if (!strcmp(field(text, f[c], buf, sizeof(buf)), want[k]))
				col[k] = c;
	for (int k = 0; k < 4; k++)
		if (col[k] < 0) {
			rc = fail("%s:1: no column '%s' (not a `rubick sim` jobs.csv?)", path,
			          want[k]);
			goto out;
		}
	r->seed_col = col[4] >= 0;
	while (!rc && csv_row(text, len, &pos, f, &n)) {
		line++;
		if (n == 1 && f[0].len == 0)
			continue; /* a blank line */
		if (n <= col[0] || n <= col[1] || n <= col[2] || n <= col[3] ||
		    (r->seed_col && n <= col[4])) {
			rc = fail("%s:%d: %d fields, fewer than the header names", path, line, n);
			break;
		}
		const char *pol = field(text, f[col[0]], buf, sizeof(buf));
		int pt = -1;
		for (int q = 0; q < r->n_pols; q++)
			if (!strcmp(sw->policies[sw->pts[r->first_pt + q].policy], pol))
				pt = q;
		if (pt < 0) {
			rc = fail("%s:%d: policy '%s' is not in summary.json", path, line, pol);
			break;
		}
		char num[64];
		char *e;
		if (!strcmp(field(text, f[col[3]], num, sizeof(num)), "1")) {
			double jct = strtod(field(text, f[col[2]], num, sizeof(num)), &e);
			if (e == num || *e || !isfinite(jct) || jct < 0) {
				rc = fail("%s:%d: jct_s '%s' is not a time in seconds", path, line,
				          num);
				break;
			}
			if (add_jct(&sw->pts[r->first_pt + pt], jct, &caps[pt])) {
				rc = fail("out of memory");
				break;
			}
		}
		if (!first_pol[0])
			snprintf(first_pol, sizeof(first_pol), "%s", pol);
		if (strcmp(pol, first_pol))
			continue;
		double t = strtod(field(text, f[col[1]], num, sizeof(num)), &e);
		if (e == num || *e || !isfinite(t)) {
			rc = fail("%s:%d: submit_s '%s' is not a time in seconds", path, line, num);
			break;
		}
		char seed[32] = "";
		if (r->seed_col)
			field(text, f[col[4]], seed, sizeof(seed));
		int s = 0;
		while (s < n_spans && strcmp(spans[s].seed, seed))
			s++;
		if (s == n_spans) {
			if (grow((void **)&spans, &spans_cap, n_spans + 1, sizeof(*spans))) {
				rc = fail("out of memory");
				break;
			}
			spans[n_spans++] = (struct span_of){.n = 0, .lo = t, .hi = t};
			snprintf(spans[s].seed, sizeof(spans[s].seed), "%s", seed);
		}
		spans[s].n++;
		spans[s].lo = fmin(spans[s].lo, t);
		spans[s].hi = fmax(spans[s].hi, t);
	}
	/*
	 * Jobs per hour of a seed's arrivals: (N - 1) gaps over the span from the
	 * first submit to the last (the rate estimate of N arrivals), averaged over
	 * the seeds.
	 */
	double sum = 0;
	int used = 0;
	for (int s = 0; s < n_spans; s++)
		if (spans[s].n > 1 && spans[s].hi > spans[s].lo) {
			sum += (double)(spans[s].n - 1) * 3600.0 / (spans[s].hi - spans[s].lo);
			used++;
		}
	r->rate_jph = used ? sum / used : NAN;
	for (int q = 0; !rc && q < r->n_pols; q++) {
		struct rk_sweep_point *p = &sw->pts[r->first_pt + q];
		if (p->n_jct)
			qsort(p->jct, (size_t)p->n_jct, sizeof(double), cmp_double);
	}
out:
	free(spans);
	free(caps);
	free(text);
	return rc;
}

static int parse_number(const char *s, double *out)
{
	if (!s || !*s)
		return -1;
	char *e;
	errno = 0;
	double v = strtod(s, &e);
	if (errno || *e || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

/* The x of one run (report_sweep.h, docs/sim.md "Sweeps"). */
static int run_x(const struct run *r, enum rk_sweep_x x, double *out)
{
	const char *load = opt(r, "load"), *poisson = opt(r, "poisson");
	double lf = 1, rate;
	if (load && *load && parse_number(load, &lf))
		return fail("%s/summary.json: option load '%s' is not a number", r->dir, load);
	switch (x) {
	case RK_SWEEP_LOAD:
		*out = lf;
		return 0;
	case RK_SWEEP_ARRIVAL:
		/* --poisson RATE draws RATE jobs/h, then --load multiplies the rate */
		if (poisson && *poisson && strcmp(poisson, "mean") &&
		    !parse_number(poisson, &rate)) {
			*out = rate * lf;
			return 0;
		}
		if (!isfinite(r->rate_jph))
			return fail(
			    "%s/jobs.csv: no arrival rate: fewer than two distinct submit times",
			    r->dir);
		*out = r->rate_jph;
		return 0;
	case RK_SWEEP_GPUS: {
		const char *spec = opt(r, "cluster");
		struct rk_cluster cl;
		struct rk_error err;
		if (!spec || !*spec)
			return fail("%s/summary.json: no cluster option", r->dir);
		if (rk_cli_cluster_read(spec, &cl, &err))
			return fail("%s: cluster '%s' (read from here, as given to rubick sim): %s",
			            r->dir, spec, err.msg);
		*out = rk_cluster_total_gpus(&cl);
		rk_cluster_fini(&cl);
		return 0;
	}
	default:
		return fail("internal: no x");
	}
}

/* Does option `key` take more than one value over the runs? OUT: the two runs that differ. */
static int varies(const struct run *runs, int n, const char *key, int *a, int *b)
{
	for (int i = 1; i < n; i++) {
		const char *x = opt(&runs[0], key), *y = opt(&runs[i], key);
		if ((!x) != (!y) || (x && strcmp(x, y))) {
			*a = 0;
			*b = i;
			return 1;
		}
	}
	return 0;
}

static int swept_by(enum rk_sweep_x x, const char *key)
{
	if (x == RK_SWEEP_LOAD)
		return !strcmp(key, "load");
	if (x == RK_SWEEP_ARRIVAL) /* a rate is set by --poisson and scaled by --load */
		return !strcmp(key, "poisson") || !strcmp(key, "load");
	return x == RK_SWEEP_GPUS && !strcmp(key, "cluster");
}

static const char *shown(const char *v)
{
	return v ? v : "(unset)";
}

/* --x auto: the one of load, poisson, cluster that varies. */
static int pick_x(const struct run *runs, int n, enum rk_sweep_x *x)
{
	int found = -1, a, b;
	char names[128] = "";
	for (int s = 0; s < N_SWEEPS; s++) {
		if (!varies(runs, n, sweeps[s].option, &a, &b))
			continue;
		size_t l = strlen(names);
		snprintf(names + l, sizeof(names) - l, "%s%s", l ? ", " : "", sweeps[s].option);
		found = found == -1 ? s : -2;
	}
	if (found == -1)
		return fail("--x auto: none of load, poisson, cluster differs between the %d runs "
		            "(%s, ...): nothing to sweep",
		            n, runs[0].dir);
	if (found == -2)
		return fail("--x auto: several options differ between the runs (%s): pick one with "
		            "--x load|arrival|gpus, or sweep one option at a time",
		            names);
	*x = sweeps[found].x;
	return 0;
}

/* Every option outside the free ones and the swept ones is the same in every run. */
static int check_same(const struct run *runs, int n, enum rk_sweep_x x)
{
	for (int i = 0; i < n; i++) {
		const char *key;
		json_t *v;
		json_object_foreach(runs[i].options, key, v)
		{
			int a, b;
			if (free_option(key) || swept_by(x, key) || !varies(runs, n, key, &a, &b))
				continue;
			return fail(
			    "the runs differ in '%s' (%s: %s; %s: %s): a sweep varies only its "
			    "x (--x %s: %s) and the policies; rerun them alike",
			    key, runs[a].dir, shown(opt(&runs[a], key)), runs[b].dir,
			    shown(opt(&runs[b], key)), sweeps[x - 1].name,
			    x == RK_SWEEP_ARRIVAL ? "poisson and load" : sweeps[x - 1].option);
		}
	}
	return 0;
}

static int cmp_point(const void *a, const void *b)
{
	const struct rk_sweep_point *p = a, *q = b;
	if (p->policy != q->policy)
		return (p->policy > q->policy) - (p->policy < q->policy);
	return (p->x > q->x) - (p->x < q->x);
}

int rk_sweep_load(char *const *dirs, int n_dirs, enum rk_sweep_x x, struct rk_sweep *sw)
{
	memset(sw, 0, sizeof(*sw));
	struct run *runs = calloc((size_t)n_dirs, sizeof(*runs));
	if (!runs)
		return fail("out of memory");
	int rc = 0, pol_cap = 0, pt_cap = 0;
	for (int i = 0; !rc && i < n_dirs; i++) {
		runs[i].dir = dirs[i];
		rc = is_dir(dirs[i]);
		if (!rc)
			rc = file_exists(dirs[i], "summary.json");
		if (!rc)
			rc = file_exists(dirs[i], "jobs.csv");
		if (!rc)
			rc = read_summary(&runs[i], sw, &pol_cap, &pt_cap);
		if (!rc)
			rc = read_jobs(&runs[i], sw);
	}
	if (!rc && x == RK_SWEEP_AUTO)
		rc = pick_x(runs, n_dirs, &x);
	if (!rc)
		rc = check_same(runs, n_dirs, x);
	for (int i = 0; !rc && i < n_dirs; i++) {
		double v;
		rc = run_x(&runs[i], x, &v);
		for (int q = 0; !rc && q < runs[i].n_pols; q++)
			sw->pts[runs[i].first_pt + q].x = v;
	}
	sw->cdf_all_seeds = 1; /* before the sort: first_pt indexes the points as read */
	for (int i = 0; !rc && i < n_dirs; i++)
		for (int q = 0; q < runs[i].n_pols; q++)
			if (!runs[i].seed_col && sw->pts[runs[i].first_pt + q].n > 1)
				sw->cdf_all_seeds = 0;
	if (!rc) {
		sw->x = x;
		sw->x_name = sweeps[x - 1].name;
		sw->x_label = sweeps[x - 1].label;
		qsort(sw->pts, (size_t)sw->n_pts, sizeof(*sw->pts), cmp_point);
		for (int i = 1; !rc && i < sw->n_pts; i++)
			if (sw->pts[i].policy == sw->pts[i - 1].policy &&
			    sw->pts[i].x == sw->pts[i - 1].x)
				rc =
				    fail("%s and %s both run %s at %s %g: one run per policy and x",
				         sw->pts[i - 1].dir, sw->pts[i].dir,
				         sw->policies[sw->pts[i].policy], sw->x_name, sw->pts[i].x);
	}
	/* the distinct x values */
	sw->xs = rc ? NULL : malloc((size_t)sw->n_pts * sizeof(double));
	if (!rc && !sw->xs)
		rc = fail("out of memory");
	for (int i = 0; !rc && i < sw->n_pts; i++)
		sw->xs[sw->n_xs++] = sw->pts[i].x;
	if (!rc) {
		qsort(sw->xs, (size_t)sw->n_xs, sizeof(double), cmp_double);
		int m = 0;
		for (int i = 0; i < sw->n_xs; i++)
			if (!m || sw->xs[i] != sw->xs[m - 1])
				sw->xs[m++] = sw->xs[i];
		sw->n_xs = m;
		if (m < 2)
			rc = fail("every run has %s %g: a sweep needs two values of its x",
			          sw->x_name, sw->xs[0]);
	}
	if (!rc) {
		/* the most contended point: the highest load or rate, the smallest cluster */
		sw->cdf_x = x == RK_SWEEP_GPUS ? sw->xs[0] : sw->xs[sw->n_xs - 1];
	}
	for (int i = 0; i < n_dirs; i++)
		json_decref(runs[i].root);
	free(runs);
	return rc;
}

void rk_sweep_fini(struct rk_sweep *sw)
{
	for (int i = 0; i < sw->n_policies; i++)
		free(sw->policies[i]);
	for (int i = 0; i < sw->n_pts; i++) {
		for (int k = 0; k < RK_SW_COUNT; k++)
			free(sw->pts[i].v[k]);
		free(sw->pts[i].jct);
	}
	free(sw->policies);
	free(sw->pts);
	free(sw->xs);
	memset(sw, 0, sizeof(*sw));
}

const struct rk_sweep_point *rk_sweep_at(const struct rk_sweep *sw, int p, int i)
{
	for (int q = 0; q < sw->n_pts; q++)
		if (sw->pts[q].policy == p && sw->pts[q].x == sw->xs[i])
			return &sw->pts[q];
	return NULL;
}
