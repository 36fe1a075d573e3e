/*
 * Trace-native speeds for Gavel and Shockwave traces: the per-GPU-type
 * throughput files those traces were made with (traces/gavel/README.md,
 * `simulation_throughputs.json`; traces/shockwave/README.md,
 * `tacc_throughputs.json`). Layout: {gpu_type: {"('JOB TYPE', SF)": {"null":
 * isolated steps/s, ...pairs...}}}.
 *
 * How Gavel's simulator uses them (stanford-futuredata/gavel @ c4fa400,
 * scheduler/scheduler.py): add_job keys a job by (job_type, scale_factor),
 * _read_throughputs_for_job_type takes oracle_throughputs[worker_type][key]
 * ["null"], and _get_num_steps advances the job by that many steps per
 * second of a round on `worker_type`. The figure is the whole job's steps/s
 * on `scale_factor` GPUs, and it does not depend on which servers the
 * workers sit on (the `*_unconsolidated` types are only used when a cluster
 * names them). We do the same:
 *
 *  - iteration time = 1 / throughput[node's GPU type][(job_type, GPUs held)]
 *    (the slowest type held, for a job spread over several);
 *  - the placement (one node or several) does not change it;
 *  - GPUs held with no measured key (the Philly VC traces ask for 2-8 GPU
 *    Recommendation, A3C and CycleGAN jobs the file measured on 1 GPU only):
 *    the nearest measured count s below (else above) scaled by GPUs / s,
 *    i.e. perfect data-parallel scaling in the number of workers, the
 *    assumption behind Gavel's scale_factor-weighted effective throughput;
 *    counted in `scaled`;
 *  - a node type the file does not have (a800, t4, ...): the reference type
 *    the caller names (v100: Gavel's `cluster_specs.json` is 500 V100, and
 *    Shockwave's durations equal total_steps / v100 throughput), counted in
 *    `other_type`;
 *  - a measured throughput of 0 (the job does not fit that GPU): infeasible.
 *
 * Jobs whose job_type the file does not hold fall through to the other rules.
 * No I/O: the caller hands the text.
 */
#include "sim/oracle/oracle_internal.h"

#include "rubick/interference.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define GAVEL_TYPES_MAX 16 /* GPU types in one file (Gavel: 3, plus 3 unconsolidated) */

struct gavel_entry {
	char type[RK_JOB_TYPE_MAX]; /* "ResNet-50 (batch size 64)" */
	int gpu;                    /* index into gavel_table.gpus */
	int sf;                     /* scale factor: GPUs */
	double tput;                /* steps per second of the whole job; 0 = cannot run */
};

struct gavel_table {
	char file[128];
	int n_gpus;
	char gpus[GAVEL_TYPES_MAX][RK_GPU_TYPE_MAX];
	int ref; /* reference type index */
	int n;
	struct gavel_entry *e; /* sorted by (type, gpu, sf) */
	struct rk_oracle_gavel_stats stats;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct gavel_entry *x = a, *y = b;
	int c = strcmp(x->type, y->type);
	if (c)
		return c;
	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	return (x->sf > y->sf) - (x->sf < y->sf);
}

/* The file's keys are the interference table's, "('TYPE', SF)": one reader
 * (rk_xi_parse_key) for both, into a job type's buffer. */
_Static_assert(RK_XI_TYPE_MAX == RK_JOB_TYPE_MAX, "a Gavel job type fits a job's type");

static int find_gpu(const struct gavel_table *t, const char *gpu_type)
{
	for (int i = 0; i < t->n_gpus; i++)
		if (!strcasecmp(t->gpus[i], gpu_type))
			return i;
	return -1;
}

static void table_free(struct gavel_table *t)
{
	if (t) {
		free(t->e);
		free(t);
	}
}

void oracle_gavel_free(struct gavel_table *t)
{
	table_free(t);
}

/* Read every consolidated GPU type of `root` into `t`; 0 or an RK_E* code with `err` set. */
static int read_types(struct gavel_table *t, json_t *root, const char *name, struct rk_error *err)
{
	const char *gpu;
	json_t *rows;
	size_t cap = 0;
	json_object_foreach(root, gpu, rows)
	{
		if (!json_is_object(rows))
			return rk_error_set(err, RK_EINVAL,
			                    "%s: %s: expected an object of job types", name, gpu);
		if (strstr(gpu, "_unconsolidated"))
			continue; /* Gavel's simulator prices a job the same wherever it sits */
		if (strlen(gpu) >= RK_GPU_TYPE_MAX || t->n_gpus == GAVEL_TYPES_MAX)
			return rk_error_set(err, RK_EINVAL,
			                    "%s: GPU type '%.40s': name too long or "
			                    "more than %d types",
			                    name, gpu, GAVEL_TYPES_MAX);
		int g = t->n_gpus++;
		snprintf(t->gpus[g], sizeof(t->gpus[g]), "%s", gpu);
		const char *key;
		json_t *row;
		json_object_foreach(rows, key, row)
		{
			struct gavel_entry e = {.gpu = g};
			if (rk_xi_parse_key(key, e.type, &e.sf))
				return rk_error_set(err, RK_EINVAL,
				                    "%s: %s/%.80s: expected a key "
				                    "\"('JOB TYPE', GPUS)\"",
				                    name, gpu, key);
			json_t *iso = json_is_object(row) ? json_object_get(row, "null") : NULL;
			if (!json_is_number(iso) || !(json_number_value(iso) >= 0) ||
			    !isfinite(json_number_value(iso)))
				return rk_error_set(err, RK_EINVAL,
				                    "%s: %s/%.80s: missing or negative "
				                    "isolated throughput \"null\"",
				                    name, gpu, key);
			e.tput = json_number_value(iso);
			if ((size_t)t->n == cap) {
				cap = cap ? 2 * cap : 256;
				void *p = realloc(t->e, cap * sizeof(*t->e));
				if (!p)
					return rk_error_set(err, RK_ENOMEM, "%s: out of memory",
					                    name);
				t->e = p;
			}
			t->e[t->n++] = e;
		}
	}
	return 0;
}

int rk_oracle_add_gavel_throughputs(struct rk_oracle *o, const char *text, size_t len,
                                    const char *filename, const char *ref_gpu_type,
                                    struct rk_error *err)
{
	const char *name = filename ? filename : "throughputs";
	if (!o || !text || !ref_gpu_type)
		return rk_error_set(err, RK_EINVAL,
		                    "%s: oracle, text and reference type are required", name);
	if (o->gavel)
		return rk_error_set(err, RK_EEXIST,
		                    "%s: the oracle already holds throughputs from %s", name,
		                    o->gavel->file);
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return rk_error_set(err, RK_EINVAL, "%s:%d:%d: %s", name, je.line, je.column,
		                    je.text);
	struct gavel_table *t = calloc(1, sizeof(*t));
	int rc;
	if (!t)
		rc = rk_error_set(err, RK_ENOMEM, "%s: out of memory", name);
	else if (!json_is_object(root))
		rc = rk_error_set(err, RK_EINVAL, "%s:1:1: expected an object of GPU types", name);
	else
		rc = read_types(t, root, name, err);
	json_decref(root);
	if (!rc && t->n == 0)
		rc = rk_error_set(err, RK_ENOTFOUND, "%s: no throughputs", name);
	if (!rc && (t->ref = find_gpu(t, ref_gpu_type)) < 0)
		rc = rk_error_set(err, RK_ENOTFOUND,
		                  "%s: reference GPU type '%s' is not in the file", name,
		                  ref_gpu_type);
	if (rc) {
		table_free(t);
		return rc;
	}
	qsort(t->e, (size_t)t->n, sizeof(*t->e), entry_cmp);
	for (int i = 1; i < t->n; i++)
		if (!entry_cmp(&t->e[i - 1], &t->e[i])) {
			rc = rk_error_set(err, RK_EEXIST, "%s: %s: ('%s', %d) given twice", name,
			                  t->gpus[t->e[i].gpu], t->e[i].type, t->e[i].sf);
			table_free(t);
			return rc;
		}
	snprintf(t->file, sizeof(t->file), "%.127s", name);
	o->gavel = t;
	oracle_cache_clear(&o->cache);
	return 0;
}

/* First entry of (type, gpu), or -1. */
static int first_of(const struct gavel_table *t, const char *type, int gpu)
{
	int lo = 0, hi = t->n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int c = strcmp(t->e[mid].type, type);
		if (c < 0 || (c == 0 && t->e[mid].gpu < gpu))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->n && !strcmp(t->e[lo].type, type) && t->e[lo].gpu == gpu)
		return lo;
	return -1;
}

/*
 * Steps per second of `type` on `gpus` GPUs of type index `g`; *scaled = 1
 * when no key measures that count. RK_ENOTFOUND when the file lacks the type.
 */
static int tput_of(const struct gavel_table *t, const char *type, int g, int gpus, double *tput,
                   int *scaled)
{
	int i = first_of(t, type, g);
	if (i < 0)
		return RK_ENOTFOUND;
	int below = -1, above = -1;
	for (; i < t->n && t->e[i].gpu == g && !strcmp(t->e[i].type, type); i++) {
		if (t->e[i].sf == gpus) {
			*tput = t->e[i].tput;
			*scaled = 0;
			return 0;
		}
		if (t->e[i].sf < gpus)
			below = i; /* sorted by sf: the last one below is the nearest */
		else if (above < 0)
			above = i;
	}
	int k = below >= 0 ? below : above;
	*tput = t->e[k].tput * gpus / t->e[k].sf;
	*scaled = 1;
	return 0;
}

/* Steps/s of the job on GPU type index `g`; RK_EINFEASIBLE with `err` set when none. */
static int tput_on(const struct gavel_table *t, const struct rk_job *job, int g, int gpus,
                   double *tput, int *scaled, struct rk_error *err)
{
	if (tput_of(t, job->job_type, g, gpus, tput, scaled))
		return rk_error_set(err, RK_EINFEASIBLE,
		                    "job %lld (%s): %s has no throughput on %s", (long long)job->id,
		                    job->job_type, t->file, t->gpus[g]);
	if (!(*tput > 0) || !isfinite(*tput))
		return rk_error_set(err, RK_EINFEASIBLE,
		                    "job %lld (%s): %s measures no throughput on %d %s GPUs "
		                    "(does not fit)",
		                    (long long)job->id, job->job_type, t->file, gpus, t->gpus[g]);
	return 0;
}

int oracle_gavel_lookup(struct gavel_table *t, const struct rk_job *job,
                        const struct rk_alloc *alloc, const struct rk_cluster *cluster,
                        const struct rk_placement *pl, struct rk_oracle_result *res,
                        struct rk_error *err)
{
	if (!t || !job->job_type[0] || first_of(t, job->job_type, t->ref) < 0)
		return RK_ENOTFOUND;
	int gpus = 0;
	for (int i = 0; i < pl->n_nodes; i++)
		gpus += pl->gpus[i];
	/*
	 * Gavel never mixes GPU types in one job; a synchronous job that spans types
	 * goes at the pace of its slowest one, so the smallest figure over the
	 * types it holds answers.
	 */
	double tput = INFINITY;
	int scaled = 0, other = 0;
	for (int i = 0; i < alloc->n; i++) {
		if (alloc->shares[i].gpus <= 0)
			continue;
		int g = find_gpu(t, cluster->nodes[alloc->shares[i].node].gpu_type);
		if (g < 0) {
			other = 1;
			g = t->ref;
		}
		double x;
		int sc;
		int rc = tput_on(t, job, g, gpus, &x, &sc, err);
		if (rc)
			return rc;
		if (x < tput) {
			tput = x;
			scaled = sc;
		}
	}
	if (!isfinite(tput))
		return rk_error_set(err, RK_EINVAL, "job %lld: allocation holds no GPU",
		                    (long long)job->id);
	memset(res, 0, sizeof(*res));
	res->iter_s = 1.0 / tput;
	res->source = RK_ORACLE_SRC_GAVEL;
	snprintf(res->family, sizeof(res->family), "%s", "gavel");
	if (rk_placement_format(pl, res->placement, sizeof(res->placement)) < 0)
		res->placement[0] = '\0';
	t->stats.lookups++;
	t->stats.scaled += (uint64_t)scaled;
	t->stats.other_type += (uint64_t)other;
	return 0;
}

int rk_oracle_gavel_ref_iter_s(const struct rk_oracle *o, const char *job_type, int gpus,
                               double *iter_s)
{
	const struct gavel_table *t = o ? o->gavel : NULL;
	if (!t || !job_type || gpus < 1)
		return RK_ENOTFOUND;
	double tput;
	int scaled;
	int rc = tput_of(t, job_type, t->ref, gpus, &tput, &scaled);
	if (rc)
		return rc;
	if (!(tput > 0) || !isfinite(tput))
		return RK_EINFEASIBLE;
	*iter_s = 1.0 / tput;
	return 0;
}

int rk_oracle_gavel_knows(const struct rk_oracle *o, const char *job_type)
{
	return o && o->gavel && job_type && first_of(o->gavel, job_type, o->gavel->ref) >= 0;
}

void rk_oracle_gavel_stats_get(const struct rk_oracle *o, struct rk_oracle_gavel_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (o && o->gavel)
		*out = o->gavel->stats;
}

int rk_oracle_gavel_has_type(const struct rk_oracle *o, const char *gpu_type)
{
	return o && o->gavel && gpu_type && find_gpu(o->gavel, gpu_type) >= 0;
}

const char *rk_oracle_gavel_ref_type(const struct rk_oracle *o)
{
	return o && o->gavel ? o->gavel->gpus[o->gavel->ref] : NULL;
}
