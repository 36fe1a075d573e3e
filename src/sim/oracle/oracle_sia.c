/*
 * Sia/Pollux throughput profiles in the oracle (oracle.h; docs/references.md §6
 * D4/D6, §5.4). Each file gives measured step and sync times of plain data
 * parallelism per (placement or node/replica count, local batch). The lookup
 * follows the Pollux simulator's Application.get_throughput: the placement's
 * own rows interpolated over local batch when the placement was measured,
 * otherwise the rows with the same (nodes, replicas) from both files; we
 * replace its 3-D linear interpolation (scipy LinearNDInterpolator) by a
 * documented 1-D rule over replicas at the nearest node count, which agrees on
 * the measured grid and needs no triangulation. Iteration time with ga
 * accumulation steps is step + (ga - 1) * (step - sync) (the Pollux simulator:
 * accumulation steps skip the gradient synchronisation). Memory-saving flags of
 * the plan (ZeRO, offload, checkpointing) are not in these profiles and do not
 * change the answer.
 */
#include "sim/oracle/oracle_internal.h"

#include "rubick/csvline.h"
#include "rubick/gpu.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum scol { S_PLACEMENT, S_NODES, S_REPLICAS, S_BSZ, S_STEP, S_SYNC, S_N };

static const char *const scol_names[S_N] = {
	"placement", "num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time",
};

void oracle_sia_free(struct sia_profile *p)
{
	free(p->place);
	free(p->scale);
	memset(p, 0, sizeof(*p));
}

static void lower_copy(const char *s, char *out, size_t cap)
{
	size_t n = 0;
	for (; s && s[n] && n + 1 < cap; n++)
		out[n] = (char)tolower((unsigned char)s[n]);
	out[n] = '\0';
}

/* Common GPU names -> the Sia artifact's cluster names (its README). */
static const char *const gpu_alias[][2] = {
	{"t4", "aws"},       {"v100", "azure"}, {"a100", "dgx-ext"},
	{"rtx6000", "quad"}, {"2080ti", "rtx"}, {"rtx2080ti", "rtx"},
};

const struct sia_profile *oracle_sia_find(const struct rk_oracle *o, const char *model_key,
					  const char *gpu_type)
{
	char want[RK_GPU_TYPE_MAX];
	lower_copy(gpu_type ? gpu_type : "", want, sizeof(want));
	const char *alias = NULL;
	for (size_t i = 0; i < sizeof(gpu_alias) / sizeof(gpu_alias[0]); i++)
		if (!strcmp(want, gpu_alias[i][0]))
			alias = gpu_alias[i][1];
	/* No fallback to the untyped (Pollux T4) profile: a type without its own
	 * profile is scaled from another type's, and counted (oracle.c). */
	const struct sia_profile *by_alias = NULL;
	for (int i = 0; i < o->n_profiles; i++) {
		const struct sia_profile *p = &o->profiles[i];
		if (strcmp(p->model, model_key))
			continue;
		if (!strcmp(p->gpu_type, want))
			return p;
		if (alias && !strcmp(p->gpu_type, alias))
			by_alias = p;
	}
	return by_alias;
}

const struct sia_profile *oracle_sia_find_other(const struct rk_oracle *o, const char *model_key,
						const char *gpu_type)
{
	const struct rk_gpu_spec *to = rk_gpu_find(gpu_type && *gpu_type ? gpu_type
									  : RK_GPU_REFERENCE);
	if (!to)
		return NULL;
	const struct sia_profile *best = NULL;
	double best_d = 0;
	for (int i = 0; i < o->n_profiles; i++) {
		const struct sia_profile *p = &o->profiles[i];
		const char *name = oracle_gpu_of_profile(p->gpu_type);
		const struct rk_gpu_spec *g = name ? rk_gpu_find(name) : NULL;
		if (strcmp(p->model, model_key) || !g)
			continue;
		/* nearest FP32 peak in ratio (the profiles' precision, oracle_gpu.c);
		 * ties: the first loaded (name order) */
		double d = fabs(log(g->fp32_tflops / to->fp32_tflops));
		if (!best || d < best_d) {
			best = p;
			best_d = d;
		}
	}
	return best;
}

static int parse_header(const struct rk_csv *c, enum rk_sia_kind kind, const char *name,
			int idx[S_N], struct rk_error *err)
{
	int rc = rk_csv_header(c, name, scol_names, S_N, idx, "", err);
	if (rc < 0)
		return rc;
	static const int need_place[] = {S_PLACEMENT, S_BSZ, S_STEP, S_SYNC};
	static const int need_scale[] = {S_NODES, S_REPLICAS, S_BSZ, S_STEP, S_SYNC};
	const int *need = kind == RK_SIA_PLACEMENTS ? need_place : need_scale;
	int n_need = kind == RK_SIA_PLACEMENTS ? 4 : 5;
	for (int k = 0; k < n_need; k++)
		if (idx[need[k]] < 0)
			return rk_error_set(err, RK_EINVAL, "%s:%d:1: missing column '%s' (a %s file)",
					    name, c->line, scol_names[need[k]],
					    kind == RK_SIA_PLACEMENTS ? "placements" : "scalability");
	return 0;
}

static int parse_row(const struct rk_csv *c, const int idx[S_N], int n_cols,
		     enum rk_sia_kind kind, const char *name, struct sia_row *r,
		     struct rk_error *err)
{
	int rc;
	memset(r, 0, sizeof(*r));
	if (c->n != n_cols)
		return rk_error_set(err, RK_EINVAL, "%s:%d:%d: %d fields, the header has %d", name,
				    c->line, c->n > n_cols ? c->col[n_cols] : 1, c->n, n_cols);
	if (kind == RK_SIA_PLACEMENTS) {
		const char *f = c->field[idx[S_PLACEMENT]];
		size_t n = strlen(f);
		if (n == 0 || n > RK_PLACEMENT_MAX_NODES)
			return rk_error_set(err, RK_EINVAL, "%s:%d:%d: placement: %s", name, c->line,
					    c->col[idx[S_PLACEMENT]], n ? "too many nodes" : "empty value");
		for (size_t k = 0; k < n; k++) {
			if (f[k] < '1' || f[k] > '9')
				return rk_error_set(err, RK_EINVAL,
						    "%s:%d:%d: placement: '%c' is not a GPU count 1..9 "
						    "(one digit per node)",
						    name, c->line, c->col[idx[S_PLACEMENT]] + (int)k, f[k]);
			r->pl.gpus[k] = f[k] - '0';
			r->replicas += r->pl.gpus[k];
		}
		r->pl.n_nodes = (int)n;
		r->nodes = (int)n;
		oracle_placement_canon(&r->pl);
	} else {
		long v;
		if ((rc = rk_csv_int(c, idx[S_NODES], name, "num_nodes", 1, RK_PLACEMENT_MAX_NODES * 16,
				     &v, err)) < 0)
			return rc;
		r->nodes = (int)v;
		if ((rc = rk_csv_int(c, idx[S_REPLICAS], name, "num_replicas", 1, 1 << 20, &v, err)) < 0)
			return rc;
		r->replicas = (int)v;
		if (r->replicas < r->nodes)
			return rk_error_set(err, RK_EINVAL, "%s:%d:%d: num_replicas %d < num_nodes %d",
					    name, c->line, c->col[idx[S_REPLICAS]], r->replicas,
					    r->nodes);
	}
	if ((rc = rk_csv_double(c, idx[S_BSZ], name, "local_bsz", &r->local_bsz, err)) < 0 ||
	    (rc = rk_csv_double(c, idx[S_STEP], name, "step_time", &r->step_s, err)) < 0 ||
	    (rc = rk_csv_double(c, idx[S_SYNC], name, "sync_time", &r->sync_s, err)) < 0)
		return rc;
	if (r->local_bsz <= 0)
		return rk_error_set(err, RK_ERANGE, "%s:%d:%d: local_bsz must be > 0", name, c->line,
				    c->col[idx[S_BSZ]]);
	if (r->step_s <= 0)
		return rk_error_set(err, RK_ERANGE, "%s:%d:%d: step_time must be > 0", name, c->line,
				    c->col[idx[S_STEP]]);
	return 0;
}

static int parse_profile(const char *text, size_t len, enum rk_sia_kind kind, const char *name,
			 struct sia_row **rows_out, int *n_out, struct rk_error *err)
{
	struct rk_csv c;
	int idx[S_N], rc, n = 0, cap = 0;
	struct sia_row *rows = NULL;
	rk_csv_init(&c, text, len, ',');
	rc = rk_csv_next(&c, 0, name, err);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return rk_error_set(err, RK_EINVAL, "%s:1:1: empty profile (no header)", name);
	if ((rc = parse_header(&c, kind, name, idx, err)) < 0)
		return rc;
	int n_cols = c.n;
	while ((rc = rk_csv_next(&c, 0, name, err)) > 0) {
		if (n == cap) {
			int ncap = cap ? 2 * cap : 64;
			struct sia_row *p = realloc(rows, (size_t)ncap * sizeof(*p));
			if (!p) {
				rc = rk_error_set(err, RK_ENOMEM, "%s: out of memory", name);
				goto fail;
			}
			rows = p;
			cap = ncap;
		}
		if ((rc = parse_row(&c, idx, n_cols, kind, name, &rows[n], err)) < 0)
			goto fail;
		n++;
	}
	if (rc < 0)
		goto fail;
	if (n == 0) {
		rc = rk_error_set(err, RK_EINVAL, "%s:%d:1: no data rows after the header", name,
				  c.line + 1);
		goto fail;
	}
	*rows_out = rows;
	*n_out = n;
	return 0;
fail:
	free(rows);
	return rc;
}

int rk_oracle_add_sia_profile(struct rk_oracle *o, const char *model_name, const char *gpu_type,
			      enum rk_sia_kind kind, const char *text, size_t len,
			      const char *filename, struct rk_error *err)
{
	const char *name = filename ? filename : "profile.csv";
	if (!o || !model_name || !*model_name || (!text && len > 0))
		return rk_error_set(err, RK_EINVAL, "%s: oracle: bad arguments", name);
	if (!o->measured)
		return rk_error_set(err, RK_EINVAL, "%s: the model oracle takes no measured profiles",
				    name);
	if (kind != RK_SIA_PLACEMENTS && kind != RK_SIA_SCALABILITY)
		return rk_error_set(err, RK_EINVAL, "%s: unknown profile kind %d", name, (int)kind);
	if (strlen(model_name) >= RK_MODEL_NAME_MAX || (gpu_type && strlen(gpu_type) >= RK_GPU_TYPE_MAX))
		return rk_error_set(err, RK_ERANGE, "%s: model or GPU type name too long", name);
	char key[RK_MODEL_NAME_MAX], type[RK_GPU_TYPE_MAX];
	oracle_model_key(model_name, key, sizeof(key));
	lower_copy(gpu_type ? gpu_type : "", type, sizeof(type));
	struct sia_profile *p = NULL;
	for (int i = 0; i < o->n_profiles; i++)
		if (!strcmp(o->profiles[i].model, key) && !strcmp(o->profiles[i].gpu_type, type))
			p = &o->profiles[i];
	if (p && (kind == RK_SIA_PLACEMENTS ? p->place != NULL : p->scale != NULL))
		return rk_error_set(err, RK_EEXIST, "%s: model '%s' on GPU type '%s' already has a %s profile",
				    name, model_name, type,
				    kind == RK_SIA_PLACEMENTS ? "placements" : "scalability");
	struct sia_row *rows = NULL;
	int n = 0;
	int rc = parse_profile(text ? text : "", len, kind, name, &rows, &n, err);
	if (rc)
		return rc;
	if (!p) {
		struct sia_profile *np =
			realloc(o->profiles, (size_t)(o->n_profiles + 1) * sizeof(*np));
		if (!np) {
			free(rows);
			return rk_error_set(err, RK_ENOMEM, "%s: out of memory", name);
		}
		o->profiles = np;
		p = &o->profiles[o->n_profiles++];
		memset(p, 0, sizeof(*p));
		snprintf(p->model, sizeof(p->model), "%s", key);
		snprintf(p->gpu_type, sizeof(p->gpu_type), "%s", type);
	}
	if (kind == RK_SIA_PLACEMENTS) {
		p->place = rows;
		p->n_place = n;
	} else {
		p->scale = rows;
		p->n_scale = n;
	}
	oracle_cache_clear(&o->cache); /* answers may change with the new profile */
	return 0;
}

/* ---- lookup ------------------------------------------------------------------- */

void oracle_sia_batch_range(const struct sia_profile *p, double *lo, double *hi)
{
	*lo = *hi = 0;
	int any = 0;
	for (int pass = 0; pass < 2; pass++) {
		const struct sia_row *rows = pass == 0 ? p->place : p->scale;
		int nr = pass == 0 ? p->n_place : p->n_scale;
		for (int i = 0; i < nr; i++) {
			double b = rows[i].local_bsz;
			if (!any || b < *lo)
				*lo = b;
			if (!any || b > *hi)
				*hi = b;
			any = 1;
		}
	}
}

/* Which rows a group holds: the placement's own, or every row with (nodes, replicas). */
struct group {
	const struct rk_placement *pl; /* non-NULL: rows of this canonical placement only */
	int nodes, replicas;
};

static int in_group(const struct sia_row *r, const struct group *g, int from_place)
{
	if (g->pl) {
		if (!from_place || r->pl.n_nodes != g->pl->n_nodes)
			return 0;
		for (int i = 0; i < r->pl.n_nodes; i++)
			if (r->pl.gpus[i] != g->pl->gpus[i])
				return 0;
		return 1;
	}
	return r->nodes == g->nodes && r->replicas == g->replicas;
}

/*
 * Mean step/sync of a group's rows at local batch exactly b. Returns the
 * number of rows averaged.
 */
static int mean_at(const struct sia_profile *p, const struct group *g, double b, double *step,
		   double *sync)
{
	int n = 0;
	double st = 0, sy = 0;
	for (int pass = 0; pass < 2; pass++) {
		const struct sia_row *rows = pass == 0 ? p->place : p->scale;
		int nr = pass == 0 ? p->n_place : p->n_scale;
		for (int i = 0; i < nr; i++)
			if (in_group(&rows[i], g, pass == 0) && rows[i].local_bsz == b) {
				st += rows[i].step_s;
				sy += rows[i].sync_s;
				n++;
			}
	}
	if (n) {
		*step = st / n;
		*sync = sy / n;
	}
	return n;
}

/*
 * Step and sync of a group at local batch b: exact (returns 2), linear between
 * the nearest measured batches around b (returns 1), at the smallest measured
 * batch when b is below it (returns 1: a smaller batch never steps slower), 0
 * when the group has no rows, RK_EINFEASIBLE when b is above the largest
 * measured batch (the profiles stop at the largest batch that fits).
 */
static int group_at(const struct sia_profile *p, const struct group *g, double b, double *step,
		    double *sync, double *max_b)
{
	double lo = -1, hi = -1, min_b = -1;
	*max_b = -1;
	for (int pass = 0; pass < 2; pass++) {
		const struct sia_row *rows = pass == 0 ? p->place : p->scale;
		int nr = pass == 0 ? p->n_place : p->n_scale;
		for (int i = 0; i < nr; i++) {
			if (!in_group(&rows[i], g, pass == 0))
				continue;
			double x = rows[i].local_bsz;
			if (min_b < 0 || x < min_b)
				min_b = x;
			if (x > *max_b)
				*max_b = x;
			if (x <= b && x > lo)
				lo = x;
			if (x >= b && (hi < 0 || x < hi))
				hi = x;
		}
	}
	if (min_b < 0)
		return 0;
	if (lo == b)
		return mean_at(p, g, b, step, sync) ? 2 : 0;
	if (b > *max_b)
		return RK_EINFEASIBLE;
	if (lo < 0)
		return mean_at(p, g, min_b, step, sync) ? 1 : 0;
	double s0, y0, s1, y1;
	mean_at(p, g, lo, &s0, &y0);
	mean_at(p, g, hi, &s1, &y1);
	double w = (b - lo) / (hi - lo);
	*step = s0 + w * (s1 - s0);
	*sync = y0 + w * (y1 - y0);
	return 1;
}

static int too_big(const struct rk_job *job, double b, double max_b, struct rk_error *err)
{
	return rk_error_set(err, RK_EINFEASIBLE,
			    "job %lld (%s): local batch %g above the largest measured (%g) in the "
			    "Sia/Pollux profile",
			    (long long)job->id, job->model->name, b, max_b);
}

/* Replica counts around `replicas` measured at node count nn. OUT: *lo, *hi (0 = none). */
static void bracket_replicas(const struct sia_profile *p, int nn, int replicas, int *lo, int *hi)
{
	*lo = *hi = 0;
	for (int pass = 0; pass < 2; pass++) {
		const struct sia_row *rows = pass == 0 ? p->place : p->scale;
		int nr = pass == 0 ? p->n_place : p->n_scale;
		for (int i = 0; i < nr; i++) {
			if (rows[i].nodes != nn)
				continue;
			int r = rows[i].replicas;
			if (r < replicas && r > *lo)
				*lo = r;
			if (r > replicas && (*hi == 0 || r < *hi))
				*hi = r;
		}
	}
}

/*
 * Rule 3 for profiles: at the node count nearest to the query's (ties: fewer
 * nodes) that measured this replica count, its rows; else that brackets it,
 * linear in replicas between the nearest measured replica counts. Returns 1 with step/sync, 0 when nothing brackets it, or
 * RK_ENOMEM.
 */
static int interp_replicas(const struct sia_profile *p, int nodes, int replicas, double b,
			   double *step, double *sync)
{
	int total = p->n_place + p->n_scale, nn_count = 0;
	int *nn = malloc((size_t)(total > 0 ? total : 1) * sizeof(*nn));
	if (!nn)
		return RK_ENOMEM;
	for (int pass = 0; pass < 2; pass++) {
		const struct sia_row *rows = pass == 0 ? p->place : p->scale;
		int nr = pass == 0 ? p->n_place : p->n_scale;
		for (int i = 0; i < nr; i++) {
			int v = rows[i].nodes, k = 0;
			while (k < nn_count && nn[k] != v)
				k++;
			if (k < nn_count)
				continue;
			/* insertion by (distance to `nodes`, node count) */
			int j = nn_count++;
			for (; j > 0 && (abs(nn[j - 1] - nodes) > abs(v - nodes) ||
					 (abs(nn[j - 1] - nodes) == abs(v - nodes) && nn[j - 1] > v));
			     j--)
				nn[j] = nn[j - 1];
			nn[j] = v;
		}
	}
	int found = 0;
	for (int k = 0; k < nn_count && !found; k++) {
		struct group ge = {NULL, nn[k], replicas};
		double mx;
		int rc = group_at(p, &ge, b, step, sync, &mx);
		if (rc > 0) { /* this replica count measured at another node count */
			found = 1;
			break;
		}
		int lo, hi;
		bracket_replicas(p, nn[k], replicas, &lo, &hi);
		if (lo == 0 || hi == 0)
			continue;
		struct group gl = {NULL, nn[k], lo}, gh = {NULL, nn[k], hi};
		double sl, yl, sh, yh;
		if (group_at(p, &gl, b, &sl, &yl, &mx) <= 0 || group_at(p, &gh, b, &sh, &yh, &mx) <= 0)
			continue;
		double w = (double)(replicas - lo) / (double)(hi - lo);
		*step = sl + w * (sh - sl);
		*sync = yl + w * (yh - yl);
		found = 1;
	}
	free(nn);
	return found;
}

int oracle_sia_lookup(const struct sia_profile *p, const struct rk_job *job,
		      const struct rk_plan *plan, const struct rk_placement *pl,
		      const struct oracle_gpu_scale *scale, struct rk_oracle_result *res,
		      struct rk_error *err)
{
	int replicas = 0;
	for (int i = 0; i < pl->n_nodes; i++)
		replicas += pl->gpus[i];
	double b = plan->mb, step = 0, sync = 0, max_b = 0;
	snprintf(res->family, sizeof(res->family), "dp");
	struct group own = {pl, pl->n_nodes, replicas};
	int rc = group_at(p, &own, b, &step, &sync, &max_b);
	if (rc == RK_EINFEASIBLE)
		return too_big(job, b, max_b, err);
	if (rc > 0) {
		res->source = rc == 2 ? RK_ORACLE_SRC_EXACT : RK_ORACLE_SRC_INTERP;
	} else {
		struct group same = {NULL, pl->n_nodes, replicas};
		rc = group_at(p, &same, b, &step, &sync, &max_b);
		if (rc == RK_EINFEASIBLE)
			return too_big(job, b, max_b, err);
		if (rc > 0) {
			res->source = RK_ORACLE_SRC_NEAREST;
		} else if ((rc = interp_replicas(p, pl->n_nodes, replicas, b, &step, &sync)) < 0) {
			return rk_error_set(err, rc, "oracle: out of memory");
		} else if (rc == 1) {
			res->source = RK_ORACLE_SRC_INTERP;
		} else {
			return rk_error_set(err, RK_ENOTFOUND,
					    "job %lld (%s): %d GPUs on %d nodes at local batch %d is "
					    "outside the Sia/Pollux profile%s%s",
					    (long long)job->id, job->model->name, replicas, pl->n_nodes,
					    plan->mb, p->gpu_type[0] ? " for GPU type " : "", p->gpu_type);
		}
	}
	if (scale && !scale->same) {
		/* Another type's profile (oracle_gpu.c): the compute part by the training
		 * peaks, a one-node all-reduce by the intra-node links; across nodes the
		 * NICs, not the GPUs, set the sync time. */
		double comp = step - sync > 0 ? step - sync : 0;
		double sy = step - comp;
		step = comp * scale->compute + (pl->n_nodes == 1 ? sy * scale->link : sy);
		sync = pl->n_nodes == 1 ? sync * scale->link : sync;
		res->source = RK_ORACLE_SRC_TYPE_SCALED;
	}
	double accum = step - sync > 0 ? step - sync : 0;
	res->iter_s = step + (plan->ga - 1) * accum;
	return 0;
}
