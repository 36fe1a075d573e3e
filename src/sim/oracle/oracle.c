/*
 * The simulator's throughput oracle (oracle.h): measured Rubick tables with
 * the interpolation rules listed in oracle.h, Sia/Pollux profiles
 * (oracle_sia.c), and the analytic model (perf.h, oracle_model.c) as the last
 * resort. The core of src/sim/oracle: it dispatches a lookup to its parts,
 * which never call back (the graph is in oracle_internal.h).
 * References: docs/references.md §6 D1 (tables), §7 "Throughput oracle interface",
 * §1.4 (the model), §1.2 (plan families).
 */
#include "sim/oracle/oracle_internal.h"

#include "rubick/gpu.h"
#include "rubick/measured.h"
#include "rubick/perf.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


const char *rk_oracle_source_name(enum rk_oracle_source s)
{
	switch (s) {
	case RK_ORACLE_SRC_EXACT: return "exact";
	case RK_ORACLE_SRC_NEAREST: return "nearest";
	case RK_ORACLE_SRC_INTERP: return "interp";
	case RK_ORACLE_SRC_MODEL_SCALED: return "model-scaled";
	case RK_ORACLE_SRC_MODEL: return "model";
	case RK_ORACLE_SRC_NEAREST_POINT: return "nearest-point";
	case RK_ORACLE_SRC_BATCH_SCALED: return "batch-scaled";
	case RK_ORACLE_SRC_GAVEL: return "gavel";
	case RK_ORACLE_SRC_TYPE_SCALED: return "type-scaled";
	default: return "unknown";
	}
}

static int create(struct rk_oracle **out, const struct rk_perf_env *env, int measured,
		  enum rk_oracle_fallback fallback, struct rk_error *err)
{
	if (!out)
		return rk_error_set(err, RK_EINVAL, "oracle: out is NULL");
	*out = NULL;
	if (fallback != RK_ORACLE_FALLBACK_MODEL && fallback != RK_ORACLE_FALLBACK_NONE)
		return rk_error_set(err, RK_EINVAL, "oracle: unknown fallback %d", (int)fallback);
	struct rk_oracle *o = calloc(1, sizeof(*o));
	if (!o)
		return rk_error_set(err, RK_ENOMEM, "oracle: out of memory");
	o->measured = measured;
	o->fallback = fallback;
	o->env = env;
	*out = o;
	return 0;
}

int rk_oracle_create_model(struct rk_oracle **out, const struct rk_perf_env *env,
			   struct rk_error *err)
{
	if (out)
		*out = NULL;
	if (!env)
		return rk_error_set(err, RK_EINVAL, "oracle: the model oracle needs a performance env");
	return create(out, env, 0, RK_ORACLE_FALLBACK_MODEL, err);
}

int rk_oracle_create_measured(struct rk_oracle **out, const struct rk_perf_env *env,
			      enum rk_oracle_fallback fallback, struct rk_error *err)
{
	return create(out, env, 1, fallback, err);
}

void rk_oracle_destroy(struct rk_oracle *o)
{
	if (!o)
		return;
	for (int i = 0; i < o->n_tables; i++)
		free(o->tables[i].rows);
	free(o->tables);
	for (int i = 0; i < o->n_profiles; i++)
		oracle_sia_free(&o->profiles[i]);
	free(o->profiles);
	oracle_gavel_free(o->gavel);
	free(o->targets);
	oracle_cache_clear(&o->cache);
	free(o);
}

void rk_oracle_stats_reset(struct rk_oracle *o)
{
	if (o)
		memset(&o->stats, 0, sizeof(o->stats));
}

void rk_oracle_stats_get(const struct rk_oracle *o, struct rk_oracle_stats *out)
{
	if (!out)
		return;
	if (!o)
		memset(out, 0, sizeof(*out));
	else
		*out = o->stats;
}

/* ---- Rubick tables ---------------------------------------------------------- */

static const struct rubick_table *find_table(const struct rk_oracle *o, const char *key, int batch,
					     int default_batch)
{
	for (int i = 0; i < o->n_tables; i++) {
		const struct rubick_table *t = &o->tables[i];
		if (strcmp(t->model, key))
			continue;
		if (t->global_batch == batch || (t->global_batch == 0 && batch == default_batch))
			return t;
	}
	return NULL;
}

/* Rule 6: the model's table at the batch nearest `batch` in ratio (ties: the larger). */
static const struct rubick_table *find_table_other_batch(const struct rk_oracle *o, const char *key,
							 int batch, int default_batch, int *b0)
{
	const struct rubick_table *best = NULL;
	double best_d = 0.0;
	for (int i = 0; i < o->n_tables; i++) {
		const struct rubick_table *t = &o->tables[i];
		int b = t->global_batch > 0 ? t->global_batch : default_batch;
		if (strcmp(t->model, key) || b < 1)
			continue;
		double d = fabs(log((double)b / (double)batch));
		if (!best || d < best_d || (d == best_d && b > *b0)) {
			best = t;
			best_d = d;
			*b0 = b;
		}
	}
	return best;
}

int rk_oracle_add_rubick_table(struct rk_oracle *o, const char *model_name, int global_batch,
			       const char *text, size_t len, const char *filename,
			       struct rk_error *err)
{
	const char *name = filename ? filename : "placements.csv";
	if (!o || !model_name || !*model_name || (!text && len > 0))
		return rk_error_set(err, RK_EINVAL, "%s: oracle: bad arguments", name);
	if (!o->measured)
		return rk_error_set(err, RK_EINVAL, "%s: the model oracle takes no measured tables", name);
	if (global_batch < 0)
		return rk_error_set(err, RK_ERANGE, "%s: global batch %d must be >= 0", name,
				    global_batch);
	char key[RK_MODEL_NAME_MAX];
	if (strlen(model_name) >= sizeof(key))
		return rk_error_set(err, RK_ERANGE, "%s: model name '%s' longer than %d characters",
				    name, model_name, RK_MODEL_NAME_MAX - 1);
	oracle_model_key(model_name, key, sizeof(key));
	for (int i = 0; i < o->n_tables; i++)
		if (!strcmp(o->tables[i].model, key) && o->tables[i].global_batch == global_batch)
			return rk_error_set(err, RK_EEXIST,
					    "%s: model '%s' at global batch %d already has a table (%s)",
					    name, model_name, global_batch, o->tables[i].file);

	struct rk_measured m;
	int rc = rk_measured_parse(text ? text : "", len, name, &m, err);
	if (rc)
		return rc;
	struct rubick_row *rows = calloc((size_t)m.n_rows, sizeof(*rows));
	if (!rows) {
		rk_measured_fini(&m);
		return rk_error_set(err, RK_ENOMEM, "%s: out of memory", name);
	}
	for (int i = 0; i < m.n_rows; i++) {
		const struct rk_measured_row *src = &m.rows[i];
		struct rubick_row *r = &rows[i];
		size_t fl = strlen(src->plan);
		if (fl >= RK_ORACLE_FAMILY_MAX) {
			rc = rk_error_set(err, RK_EINVAL, "%s:%d:1: exec_plan '%s' longer than %d characters",
					  name, src->line, src->plan, RK_ORACLE_FAMILY_MAX - 1);
			break;
		}
		for (size_t k = 0; k <= fl; k++)
			r->family[k] = (char)tolower((unsigned char)src->plan[k]);
		r->pl = src->placement;
		oracle_placement_canon(&r->pl);
		r->gpus = rk_measured_row_gpus(src);
		r->cpu_threads = src->cpu_threads;
		r->iter_s = src->failed ? 0.0 : src->iter_s;
		r->line = src->line;
	}
	int has_cpu = m.has_cpu_threads, n_rows = m.n_rows;
	rk_measured_fini(&m);
	if (rc) {
		free(rows);
		return rc;
	}
	struct rubick_table *nt = realloc(o->tables, (size_t)(o->n_tables + 1) * sizeof(*nt));
	if (!nt) {
		free(rows);
		return rk_error_set(err, RK_ENOMEM, "%s: out of memory", name);
	}
	o->tables = nt;
	struct rubick_table *t = &o->tables[o->n_tables++];
	memset(t, 0, sizeof(*t));
	snprintf(t->model, sizeof(t->model), "%s", key);
	snprintf(t->file, sizeof(t->file), "%s", name);
	t->global_batch = global_batch;
	t->has_cpu_threads = has_cpu;
	t->n = n_rows;
	t->rows = rows;
	oracle_cache_clear(&o->cache); /* answers may change with the new table */
	return 0;
}

/* ---- lookups ---------------------------------------------------------------------- */

/*
 * The placement, CPU threads per GPU and GPU type of an allocation. Shares
 * without GPUs do not count as nodes of the placement. Mixed GPU types take
 * the first share's (a gang runs at the pace of its slowest member, and the
 * simulator's policies never mix types within one job).
 */
static int alloc_shape(const struct rk_job *job, const struct rk_alloc *alloc,
		       const struct rk_cluster *cluster, struct rk_placement *pl, int *cpus_per_gpu,
		       const char **gpu_type, struct rk_error *err)
{
	if (!alloc || alloc->n <= 0 || !alloc->shares)
		return rk_error_set(err, RK_EINVAL, "job %lld: oracle asked about an empty allocation",
				    (long long)job->id);
	memset(pl, 0, sizeof(*pl));
	long cpus = 0, gpus = 0;
	*gpu_type = "";
	for (int i = 0; i < alloc->n; i++) {
		const struct rk_share *s = &alloc->shares[i];
		if (!cluster || s->node < 0 || s->node >= cluster->n_nodes)
			return rk_error_set(err, RK_EINVAL, "job %lld: share %d on unknown node %d",
					    (long long)job->id, i, s->node);
		if (s->gpus < 0 || s->cpus < 0)
			return rk_error_set(err, RK_EINVAL, "job %lld: share %d has negative GPUs or CPUs",
					    (long long)job->id, i);
		cpus += s->cpus;
		if (s->gpus == 0)
			continue;
		if (pl->n_nodes == RK_PLACEMENT_MAX_NODES)
			return rk_error_set(err, RK_ERANGE, "job %lld: allocation spans more than %d nodes",
					    (long long)job->id, RK_PLACEMENT_MAX_NODES);
		if (pl->n_nodes == 0)
			*gpu_type = cluster->nodes[s->node].gpu_type;
		pl->gpus[pl->n_nodes++] = s->gpus;
		gpus += s->gpus;
	}
	if (gpus == 0)
		return rk_error_set(err, RK_EINVAL, "job %lld: allocation holds no GPU",
				    (long long)job->id);
	oracle_placement_canon(pl);
	/* Whole threads per GPU; a job always has at least one host thread per GPU. */
	long c = cpus / gpus;
	*cpus_per_gpu = c < 1 ? 1 : (int)(c > 1024 ? 1024 : c);
	return 0;
}

static int answer(const struct rk_oracle *o, const struct rk_job *job, const struct rk_plan *plan,
		  const struct rk_placement *plp, int cpus, const char *gpu_type,
		  struct rk_oracle_result *res, struct rk_error *err);

static int lookup(struct rk_oracle *o, const struct rk_job *job, const struct rk_plan *plan,
		  const struct rk_alloc *alloc, const struct rk_cluster *cluster,
		  struct rk_oracle_result *res, const char **type_out, struct rk_error *err)
{
	if (!job || !job->model || !plan || !res)
		return rk_error_set(err, RK_EINVAL, "oracle: job, its model, plan and result are required");
	const struct rk_model *m = job->model;
	struct rk_placement pl;
	int cpus = 1;
	const char *gpu_type = "";
	int rc = alloc_shape(job, alloc, cluster, &pl, &cpus, &gpu_type, err);
	if (rc)
		return rc;
	*type_out = gpu_type;
	long g = 0;
	for (int i = 0; i < pl.n_nodes; i++)
		g += pl.gpus[i];
	if ((long)plan->dp * plan->tp * plan->pp != g || plan->dp < 1 || plan->tp < 1 || plan->pp < 1)
		return rk_error_set(err, RK_EINVAL,
				    "job %lld (%s): plan uses dp*tp*pp = %d*%d*%d GPUs but the "
				    "allocation holds %ld",
				    (long long)job->id, m->name, plan->dp, plan->tp, plan->pp, g);
	if (o->gavel && (rc = oracle_gavel_lookup(o->gavel, job, alloc, cluster, &pl, res, err)) !=
			       RK_ENOTFOUND)
		return rc; /* trace-native speeds first (oracle_gavel.c) */
	struct oracle_ckey ck;
	oracle_ckey_init(&ck, job, plan, &pl, cpus, gpu_type);
	if (oracle_cache_get(&o->cache, &ck, res))
		return 0;
	memset(res, 0, sizeof(*res));
	if (rk_placement_format(&pl, res->placement, sizeof(res->placement)) < 0)
		res->placement[0] = '\0'; /* nodes with > 9 GPUs: the comma form may not fit */
	rc = answer(o, job, plan, &pl, cpus, gpu_type, res, err);
	if (rc == 0)
		oracle_cache_put(&o->cache, &ck, res);
	return rc;
}

/*
 * Measured sources for the node's own GPU type, tried before the A800 tables:
 * the Sia/Pollux profile of the job's trace application or of its model on
 * this type, else one of another type scaled to it. Further per-type sources
 * (Gavel's per-type throughputs) belong here. Returns 0 answered, 1 when no
 * source of this kind knows the job, or a negative error.
 */
static int answer_typed(const struct rk_oracle *o, const char *key, const struct rk_job *job,
			const struct rk_plan *plan, const struct rk_placement *pl, const char *type,
			struct rk_oracle_result *res, struct rk_error *err)
{
	if (plan->tp != 1 || plan->pp != 1 || o->n_profiles == 0)
		return 1;
	/* The trace's own application first (a Sia workload's "cifar10" runs on
	 * a stand-in zoo model, but Sia measured cifar10), then the model. */
	char app[RK_MODEL_NAME_MAX];
	oracle_model_key(job->job_type, app, sizeof(app));
	const char *keys[2] = {app, key};
	for (int k = 0; k < 2; k++) {
		if (!keys[k][0] || (k == 1 && !strcmp(keys[0], keys[1])))
			continue;
		const struct sia_profile *p = oracle_sia_find(o, keys[k], type);
		struct oracle_gpu_scale sc = {.same = 1};
		if (!p && (p = oracle_sia_find_other(o, keys[k], type))) {
			int rc = oracle_gpu_scale(oracle_gpu_of_profile(p->gpu_type), type, 1, &sc,
						  err);
			if (rc)
				return rc;
		}
		if (!p)
			continue;
		struct rk_plan q = *plan;
		if (k == 0 && strcmp(app, key)) {
			/* A stand-in's local batch means nothing to the application's
			 * profile: read it at the application's own batch over these
			 * replicas (Sia's fixed-batch jobs), with gradient accumulation
			 * where that exceeds the largest measured local batch; without one,
			 * at the stand-in's local batch capped at the largest measured (its
			 * length then comes from its run time, so only ratios matter). */
			double lo, hi;
			oracle_sia_batch_range(p, &lo, &hi);
			int cap = hi >= 1 ? (int)hi : 1;
			if (job->app_batch > 0) {
				/* the fewest accumulation steps this placement's rows fit */
				long reps = (long)plan->dp;
				long local = (job->app_batch + reps - 1) / reps;
				for (long ga = (local + cap - 1) / cap; ga <= local; ga++) {
					q.ga = (int)ga;
					q.mb = (int)((local + ga - 1) / ga);
					int rc = oracle_sia_lookup(p, job, &q, pl, &sc, res, err);
					if (rc != RK_EINFEASIBLE)
						return rc;
				}
				return RK_EINFEASIBLE; /* err says why (the last try) */
			}
			if (q.mb > cap)
				q.mb = cap;
		}
		return oracle_sia_lookup(p, job, &q, pl, &sc, res, err);
	}
	return 1;
}

/* Carry an answer of the A800 tables to `type`: by the model's own ratio when
 * it has one, else by the training peaks (the iteration taken as compute). */
static int carry_to_type(const struct rk_oracle *o, const struct rk_model *m,
			 const struct rk_plan *plan, const struct rk_placement *pl, int cpus,
			 const char *type, const struct oracle_gpu_scale *sc,
			 struct rk_oracle_result *res, struct rk_error *err)
{
	if (sc->same)
		return 0;
	double ratio = sc->compute;
	if (oracle_model_usable(o, m)) {
		double at_ref, at_type;
		int rc = oracle_model_iter_s(o, m, plan, pl, cpus, &at_ref, err);
		if (!rc)
			rc = oracle_model_iter_typed(o, m, plan, pl, cpus, type, &at_type, err);
		if (rc)
			return rc;
		ratio = at_type / at_ref;
	}
	res->iter_s *= ratio;
	res->source = RK_ORACLE_SRC_TYPE_SCALED;
	return 0;
}

/* The rules of oracle.h for one canonical query (lookup() checked and cached it). */
static int answer(const struct rk_oracle *o, const struct rk_job *job, const struct rk_plan *plan,
		  const struct rk_placement *plp, int cpus, const char *gpu_type,
		  struct rk_oracle_result *res, struct rk_error *err)
{
	const struct rk_model *m = job->model;
	const struct rk_placement pl = *plp;
	const char *type = gpu_type && *gpu_type ? gpu_type : RK_GPU_REFERENCE;
	int rc;
	char key[RK_MODEL_NAME_MAX];
	oracle_model_key(m->name, key, sizeof(key));
	if (o->measured) {
		rc = answer_typed(o, key, job, plan, &pl, type, res, err);
		if (rc <= 0)
			return rc;
		/* The Rubick tables were measured on the A800 testbed. */
		struct oracle_gpu_scale sc;
		if ((rc = oracle_gpu_scale(RK_GPU_REFERENCE, type, 0, &sc, err)))
			return rk_error_prefix(err, "job %lld", (long long)job->id);
		const struct rubick_table *t = find_table(o, key, job->global_batch, m->global_batch);
		if (t) {
			rc = oracle_rubick_lookup(o, t, job, plan, &pl, cpus, res, err);
			return rc ? rc : carry_to_type(o, m, plan, &pl, cpus, type, &sc, res, err);
		}
		int b0 = 0;
		if (!oracle_model_usable(o, m) && job->global_batch > 0 &&
		    (t = find_table_other_batch(o, key, job->global_batch, m->global_batch, &b0))) {
			rc = oracle_rubick_lookup(o, t, job, plan, &pl, cpus, res, err);
			if (rc == 0) {
				res->iter_s *= (double)job->global_batch / (double)b0;
				res->source = RK_ORACLE_SRC_BATCH_SCALED;
				rc = carry_to_type(o, m, plan, &pl, cpus, type, &sc, res, err);
			}
			return rc;
		}
		if (!oracle_model_usable(o, m))
			return rk_error_set(err, RK_ENOTFOUND,
					    "job %lld: no measured table for model '%s' at global batch "
					    "%d%s",
					    (long long)job->id, m->name, job->global_batch,
					    o->fallback == RK_ORACLE_FALLBACK_NONE
						    ? " and the model fallback is off"
						    : " and no fitted model to fall back on");
	}
	rc = oracle_model_iter_typed(o, m, plan, &pl, cpus, type, &res->iter_s, err);
	if (rc) {
		rk_error_prefix(err, "job %lld", (long long)job->id);
		return rc;
	}
	res->source = RK_ORACLE_SRC_MODEL;
	return 0;
}

/* Count a successful lookup in the totals and under its GPU type. */
static void count(struct rk_oracle_stats *st, const char *type, enum rk_oracle_source src)
{
	st->lookups++;
	st->by_source[src]++;
	int i = 0;
	while (i < st->n_types && strcmp(st->types[i].gpu_type, type))
		i++;
	if (i == st->n_types) {
		if (i == RK_ORACLE_STATS_TYPES || strlen(type) >= RK_GPU_TYPE_MAX)
			return;
		st->n_types++;
		memset(&st->types[i], 0, sizeof(st->types[i]));
		memcpy(st->types[i].gpu_type, type, strlen(type) + 1);
	}
	st->types[i].lookups++;
	st->types[i].by_source[src]++;
}

int rk_oracle_lookup(struct rk_oracle *o, const struct rk_job *job, const struct rk_plan *plan,
		     const struct rk_alloc *alloc, const struct rk_cluster *cluster,
		     struct rk_oracle_result *res, struct rk_error *err)
{
	if (!o)
		return rk_error_set(err, RK_EINVAL, "oracle: NULL oracle");
	struct rk_oracle_result tmp;
	const char *type = "";
	int rc = lookup(o, job, plan, alloc, cluster, &tmp, &type, err);
	if (rc == 0) {
		count(&o->stats, type, tmp.source);
		if (res)
			*res = tmp;
	} else if (rc == RK_EINFEASIBLE) {
		o->stats.infeasible++;
	} else {
		o->stats.failed++;
	}
	return rc;
}

int rk_oracle_iter_s(struct rk_oracle *o, const struct rk_job *job, const struct rk_plan *plan,
		     const struct rk_alloc *alloc, const struct rk_cluster *cluster,
		     double *iter_s, struct rk_error *err)
{
	if (!iter_s)
		return rk_error_set(err, RK_EINVAL, "oracle: iter_s is NULL");
	struct rk_oracle_result res;
	int rc = rk_oracle_lookup(o, job, plan, alloc, cluster, &res, err);
	if (rc == 0)
		*iter_s = res.iter_s;
	return rc;
}
