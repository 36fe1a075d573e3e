/*
 * Reader of the Rubick artifact's measured plan x placement tables
 * (placements.csv, docs/references.md §6 D1). See measured.h for the layouts and
 * the traps it handles.
 */
#include "rubick/measured.h"

#include "rubick/csvline.h"

#include <stdlib.h>
#include <string.h>

enum col { C_PLAN, C_PLACEMENT, C_ITER, C_FWD, C_SYNC, C_OPT, C_CPU, C_N };

static const char *const col_names[C_N] = {
	"exec_plan", "placement", "iter_time", "forward", "overlap_sync", "optimize", "cpu_threads",
};

void rk_measured_fini(struct rk_measured *t)
{
	if (!t)
		return;
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

int rk_measured_row_gpus(const struct rk_measured_row *r)
{
	int g = 0;
	for (int i = 0; i < r->placement.n_nodes; i++)
		g += r->placement.gpus[i];
	return g;
}

/* Placement as the artifact writes it: one digit 1..9 per node. */
static int parse_placement(const struct rk_csv *c, int i, const char *name,
			   struct rk_placement *pl, struct rk_error *err)
{
	const char *f = c->field[i];
	size_t n = strlen(f);
	if (n == 0)
		return rk_error_set(err, RK_EINVAL, "%s:%d:%d: placement: empty value", name,
				    c->line, c->col[i]);
	if (n > RK_PLACEMENT_MAX_NODES)
		return rk_error_set(err, RK_ERANGE, "%s:%d:%d: placement: %zu nodes, at most %d",
				    name, c->line, c->col[i], n, RK_PLACEMENT_MAX_NODES);
	memset(pl, 0, sizeof(*pl));
	for (size_t k = 0; k < n; k++) {
		if (f[k] < '1' || f[k] > '9')
			return rk_error_set(err, RK_EINVAL,
					    "%s:%d:%d: placement: '%c' is not a GPU count 1..9 "
					    "(one digit per node)",
					    name, c->line, c->col[i] + (int)k, f[k]);
		pl->gpus[k] = f[k] - '0';
	}
	pl->n_nodes = (int)n;
	return 0;
}

static int parse_header(const struct rk_csv *c, const char *name, int idx[C_N],
			struct rk_error *err)
{
	int rc = rk_csv_header(c, name, col_names, C_N, idx,
			       " (expected exec_plan, placement, iter_time, and optionally "
			       "forward, overlap_sync, optimize, cpu_threads)",
			       err);
	if (rc < 0)
		return rc;
	for (int k = C_PLAN; k <= C_ITER; k++)
		if (idx[k] < 0)
			return rk_error_set(err, RK_EINVAL, "%s:%d:1: missing column '%s'", name,
					    c->line, col_names[k]);
	int phases = (idx[C_FWD] >= 0) + (idx[C_SYNC] >= 0) + (idx[C_OPT] >= 0);
	if (phases != 0 && phases != 3)
		return rk_error_set(err, RK_EINVAL,
				    "%s:%d:1: forward, overlap_sync and optimize come together "
				    "(found %d of 3)",
				    name, c->line, phases);
	return 0;
}

static int parse_row(const struct rk_csv *c, const int idx[C_N], int n_cols, const char *name,
		     struct rk_measured_row *r, struct rk_error *err)
{
	int rc;
	memset(r, 0, sizeof(*r));
	r->line = c->line;
	if (c->n != n_cols)
		return rk_error_set(err, RK_EINVAL, "%s:%d:%d: %d fields, the header has %d", name,
				    c->line, c->n > n_cols ? c->col[n_cols] : 1, c->n, n_cols);
	const char *plan = c->field[idx[C_PLAN]];
	size_t pn = strlen(plan);
	if (pn == 0 || pn >= RK_MEASURED_PLAN_MAX)
		return rk_error_set(err, RK_EINVAL, "%s:%d:%d: exec_plan: %s", name, c->line,
				    c->col[idx[C_PLAN]], pn ? "too long" : "empty value");
	memcpy(r->plan, plan, pn + 1);
	if ((rc = parse_placement(c, idx[C_PLACEMENT], name, &r->placement, err)) < 0)
		return rc;
	if ((rc = rk_csv_double(c, idx[C_ITER], name, "iter_time", &r->iter_s, err)) < 0)
		return rc;
	r->failed = r->iter_s == 0;
	if (idx[C_CPU] >= 0) {
		long v;
		if ((rc = rk_csv_int(c, idx[C_CPU], name, "cpu_threads", 1, 1024, &v, err)) < 0)
			return rc;
		r->cpu_threads = (int)v;
	}
	if (idx[C_FWD] >= 0) {
		double f, s, o;
		if ((rc = rk_csv_double(c, idx[C_FWD], name, "forward", &f, err)) < 0 ||
		    (rc = rk_csv_double(c, idx[C_SYNC], name, "overlap_sync", &s, err)) < 0 ||
		    (rc = rk_csv_double(c, idx[C_OPT], name, "optimize", &o, err)) < 0)
			return rc;
		r->has_phases = 1;
		/* Unit by magnitude (measured.h): phases cannot exceed the iteration. */
		if (r->iter_s > 0 && f + s + o <= 2.0 * r->iter_s) {
			r->phases_in_s = 1;
			f *= 1000.0, s *= 1000.0, o *= 1000.0;
		}
		r->fwd_ms = f, r->sync_ms = s, r->opt_ms = o;
	}
	return 0;
}

int rk_measured_parse(const char *text, size_t len, const char *name, struct rk_measured *out,
		      struct rk_error *err)
{
	struct rk_csv c;
	int idx[C_N];
	int rc;
	struct rk_measured t = {0};
	int cap = 0;

	if (!name)
		name = "<measured>";
	if (!out)
		return rk_error_set(err, RK_EINVAL, "%s: no output table", name);
	memset(out, 0, sizeof(*out));
	rk_csv_init(&c, text, len, ',');
	rc = rk_csv_next(&c, 0, name, err);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return rk_error_set(err, RK_EINVAL, "%s:1:1: empty table (no header)", name);
	if ((rc = parse_header(&c, name, idx, err)) < 0)
		return rc;
	int n_cols = c.n;
	t.has_cpu_threads = idx[C_CPU] >= 0;
	t.has_phases = idx[C_FWD] >= 0;
	while ((rc = rk_csv_next(&c, 0, name, err)) > 0) {
		if (t.n_rows == cap) {
			int ncap = cap ? 2 * cap : 64;
			void *p = realloc(t.rows, (size_t)ncap * sizeof(*t.rows));
			if (!p) {
				rc = rk_error_set(err, RK_ENOMEM, "%s: out of memory", name);
				goto fail;
			}
			t.rows = p;
			cap = ncap;
		}
		struct rk_measured_row *r = &t.rows[t.n_rows];
		if ((rc = parse_row(&c, idx, n_cols, name, r, err)) < 0)
			goto fail;
		t.n_failed += r->failed;
		t.n_phases_in_s += r->phases_in_s;
		t.n_rows++;
	}
	if (rc < 0)
		goto fail;
	if (t.n_rows == 0) {
		rc = rk_error_set(err, RK_EINVAL, "%s:%d:1: no data rows after the header", name,
				  c.line + 1);
		goto fail;
	}
	*out = t;
	return 0;
fail:
	free(t.rows);
	return rc;
}
