/*
 * Sia baseline, part 4 (see sia.c): goodput rows, built (sia_row_build)
 * and kept across rounds. Sia
 * caches each job's goodput estimates until what they depend on changes
 * (Jayaram Subramanya et al., SOSP 2023, §4.2: "goodput estimates are
 * updated only when a job's profile changes"); here a row is every valid
 * configuration of a request with its scaled plan, normalised goodput and
 * unscaled objective coefficient, keyed by the request's content
 * (sia_row_key), so equal requests share one row and a refitted model is a
 * new key; in goodput mode (sia_goodput.c) the key holds what the goodputs
 * depend on as well: the gradient statistics, the throughput models and what
 * the job has been seen to run, so a row is rebuilt when one of them moves
 * (the statistics change with the job's progress as the driver updates them)
 * and kept while none does. The rows hold for one configuration set,
 * GPU-type shape and performance environment: sia_cache_begin drops them all when one of these
 * differs from the last round's. What changes with time (the restart factor)
 * is applied by the caller to a copy.
 */
#include "policy/sia/sia_internal.h"

#include "policy/common/baseline.h"
#include "rubick/perf.h"
#include "rubick/placement.h"
#include "rubick/policy.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	uint64_t hash;
	struct sia_row_key key;
	int first, n; /* the row: vars[first .. first + n - 1] */
};

struct sia_cache {
	struct entry *slots; /* open addressing; n == -1 marks an empty slot */
	size_t cap, used;
	struct sia_row_var *vars;
	size_t n_vars, cap_vars;
	/* What every row depends on besides its key. */
	struct sia_type types[SIA_MAX_TYPES];
	int n_types;
	struct sia_cfg *cfg;
	int n_cfg, cap_cfg;
	struct rk_perf_env env;
	int have_env;
};

/*
 * The key's bytes (zero-padded: equal keys hash alike), eight at a time,
 * each word mixed in by a multiply and a rotation; the tail bytes last.
 */
static uint64_t hash_key(const struct sia_row_key *k)
{
	const unsigned char *p = (const unsigned char *)k;
	uint64_t h = 0x9e3779b97f4a7c15ull;
	size_t i = 0;
	for (; i + 8 <= sizeof(*k); i += 8) {
		uint64_t x;
		memcpy(&x, p + i, 8);
		h = (h ^ x) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	for (; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static void clear_rows(struct sia_cache *c)
{
	for (size_t i = 0; i < c->cap; i++)
		c->slots[i].n = -1;
	c->used = 0;
	c->n_vars = 0;
}

int sia_cache_create(struct sia_cache **out)
{
	*out = NULL;
	struct sia_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return RK_ENOMEM;
	c->cap = 256;
	c->slots = malloc(c->cap * sizeof(*c->slots));
	if (!c->slots) {
		free(c);
		return RK_ENOMEM;
	}
	clear_rows(c);
	*out = c;
	return RK_OK;
}

void sia_cache_destroy(struct sia_cache *c)
{
	if (!c)
		return;
	free(c->slots);
	free(c->vars);
	free(c->cfg);
	free(c);
}

static int same_types(const struct sia_type *a, const struct sia_type *b, int n)
{
	for (int k = 0; k < n; k++)
		if (a[k].node_gpus != b[k].node_gpus || a[k].n_nodes != b[k].n_nodes ||
		    a[k].total_gpus != b[k].total_gpus || a[k].cpus_per_gpu != b[k].cpus_per_gpu ||
		    a[k].mem_mb_per_gpu != b[k].mem_mb_per_gpu)
			return 0;
	return 1;
}

int sia_cache_begin(struct sia_cache *c, const struct sia_type *t, int n_types,
		    const struct sia_cfg *cfg, int n_cfg, const struct rk_perf_env *env,
		    size_t max_rows)
{
	int same = n_types == c->n_types && same_types(t, c->types, n_types) && n_cfg == c->n_cfg &&
		   !memcmp(cfg, c->cfg, (size_t)n_cfg * sizeof(*cfg)) && env && c->have_env &&
		   !memcmp(env, &c->env, sizeof(*env));
	/* Rows of requests long gone (finished jobs, old refits) are dropped
	 * wholesale once they outnumber what a round needs. */
	if (same && c->used <= max_rows)
		return RK_OK;
	if (n_cfg > c->cap_cfg) {
		struct sia_cfg *nc = realloc(c->cfg, (size_t)n_cfg * sizeof(*nc));
		if (!nc)
			return RK_ENOMEM;
		c->cfg = nc;
		c->cap_cfg = n_cfg;
	}
	clear_rows(c);
	memcpy(c->types, t, (size_t)n_types * sizeof(*t));
	c->n_types = n_types;
	if (n_cfg > 0)
		memcpy(c->cfg, cfg, (size_t)n_cfg * sizeof(*cfg));
	c->n_cfg = n_cfg;
	c->have_env = env != NULL;
	if (env)
		c->env = *env;
	return RK_OK;
}

const struct sia_row_var *sia_cache_find(const struct sia_cache *c, const struct sia_row_key *key,
					 int *n)
{
	uint64_t h = hash_key(key);
	for (size_t i = h & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
		const struct entry *e = &c->slots[i];
		if (e->n < 0)
			return NULL;
		if (e->hash == h && !memcmp(&e->key, key, sizeof(*key))) {
			*n = e->n;
			return c->vars + e->first;
		}
	}
}

static int grow_slots(struct sia_cache *c)
{
	size_t cap = 2 * c->cap;
	struct entry *s = malloc(cap * sizeof(*s));
	if (!s)
		return RK_ENOMEM;
	for (size_t i = 0; i < cap; i++)
		s[i].n = -1;
	for (size_t i = 0; i < c->cap; i++) {
		if (c->slots[i].n < 0)
			continue;
		size_t j = c->slots[i].hash & (cap - 1);
		while (s[j].n >= 0)
			j = (j + 1) & (cap - 1);
		s[j] = c->slots[i];
	}
	free(c->slots);
	c->slots = s;
	c->cap = cap;
	return RK_OK;
}

int sia_cache_put(struct sia_cache *c, const struct sia_row_key *key, const struct sia_row_var *v,
		  int n)
{
	if (2 * (c->used + 1) > c->cap && grow_slots(c))
		return RK_ENOMEM;
	if (c->n_vars + (size_t)n > c->cap_vars) {
		size_t cap = c->cap_vars ? c->cap_vars : 1024;
		while (cap < c->n_vars + (size_t)n)
			cap *= 2;
		struct sia_row_var *nv = realloc(c->vars, cap * sizeof(*nv));
		if (!nv)
			return RK_ENOMEM;
		c->vars = nv;
		c->cap_vars = cap;
	}
	uint64_t h = hash_key(key);
	size_t i = h & (c->cap - 1);
	while (c->slots[i].n >= 0)
		i = (i + 1) & (c->cap - 1);
	if (n > 0)
		memcpy(c->vars + c->n_vars, v, (size_t)n * sizeof(*v));
	c->slots[i].hash = h;
	memcpy(&c->slots[i].key, key, sizeof(*key)); /* padding too: keys compare bytewise */
	c->slots[i].first = (int)c->n_vars;
	c->slots[i].n = n;
	c->n_vars += (size_t)n;
	c->used++;
	return RK_OK;
}

/* Sia's objective coefficient of normalised goodput g (floored as invalid ones). */
double sia_cost(const struct sia_opts *o, double g)
{
	if (g < SIA_MIN_GOODPUT)
		g = SIA_MIN_GOODPUT;
	return o->p < 0 ? pow(g, o->p) - o->lambda_n : pow(g, o->p) + o->lambda_n;
}

void sia_row_build(const struct sia_opts *o, const struct rk_sched_input *in,
		   const struct sia_type *types, int n_types, const struct sia_cfg *cfg,
		   int n_cfg, const struct rk_job *j, int gq, const struct sia_gp_key *gk,
		   struct sia_row_var *row, int *n_out)
{
	int n = 0;
	double min_tput = HUGE_VAL;
	int native = rk_baseline_is_native(j), goodput = gk->perf_sig != 0;
	/* No configuration above the tenant's gpu_quota (the driver bounds what is held). */
	for (int c = 0; c < n_cfg; c++) {
		const struct sia_cfg *cf = &cfg[c];
		if (gq >= 0 && cf->gpus > gq && cf->gpus > j->req_gpus)
			continue;
		if (o->range_job) {
			int lo, hi;
			rk_job_gpu_range(j, &lo, &hi);
			if (cf->gpus < lo || cf->gpus > hi)
				continue;
		}
		struct sia_row_var v = {.cfg = c};
		struct rk_placement pl;
		if (sia_cfg_placement(cf, &types[cf->type], &pl))
			continue;
		if (rk_baseline_plan_scale(&j->req_plan, j->global_batch, cf->gpus, &v.plan))
			continue;
		/* A tensor-parallel group must stay inside a node. */
		if (rk_plan_check_placement(&v.plan, &pl, NULL))
			continue;
		/* Measured speeds at every count when the job has them, never mixed
		 * with the model's scale (baseline.h rk_baseline_is_native). */
		double tput = 0;
		if (goodput) {
			/* Goodput with batch-size adaptation, bootstrapped (sia_goodput.c). */
			struct rk_goodput_choice ch;
			if (sia_gp_price(j, gk, types, n_types, cf, v.plan.dp, &ch))
				continue;
			tput = ch.goodput;
			v.local_bsz = ch.local_bsz;
			v.accum_steps = ch.accum_steps;
		} else if (native)
			tput = rk_baseline_native_sps(j, cf->gpus);
		else if (rk_baseline_tput_sps(j, &v.plan, &pl,
		                              sia_job_cpus_per_gpu(j, &types[cf->type]), in->env,
		                              &tput))
			continue;
		if (!(tput > 0))
			continue;
		v.g = tput; /* raw goodput until the row is normalised below */
		if (tput < min_tput)
			min_tput = tput;
		row[n++] = v;
	}
	if (n == 0) {
		/*
		 * The model predicts no configuration (e.g. an unfitted model): Sia
		 * then treats the job as rigid, as its artifact does jobs without
		 * profiles: the requested GPU count and plan, goodput 1.
		 */
		for (int c = 0; c < n_cfg; c++) {
			const struct sia_cfg *cf = &cfg[c];
			struct rk_placement pl;
			if (cf->gpus != j->req_gpus ||
			    sia_cfg_placement(cf, &types[cf->type], &pl) ||
			    rk_plan_check_placement(&j->req_plan, &pl, NULL))
				continue;
			row[n++] = (struct sia_row_var){.cfg = c, .plan = j->req_plan, .g = 1.0};
			min_tput = 1.0;
			break;
		}
	}
	for (int k = 0; k < n; k++) {
		double g = row[k].g / min_tput;
		row[k].g = g > SIA_MAX_GOODPUT ? SIA_MAX_GOODPUT : g;
		row[k].cost = sia_cost(o, row[k].g);
	}
	*n_out = n;
}

void sia_row_key_init(struct sia_row_key *k, const struct sia_opts *o,
		      const struct rk_sched_input *in, const struct sia_seen *seen,
		      const struct rk_job *j)
{
	memset(k, 0, sizeof(*k)); /* padding: keys compare bytewise */
	memcpy(&k->model, j->model, sizeof(k->model));
	k->plan = j->req_plan;
	k->req_mem_mb = j->req_mem_mb;
	k->global_batch = j->global_batch;
	k->req_gpus = j->req_gpus;
	k->req_cpus = j->req_cpus;
	k->min_gpus = o->range_job ? j->min_gpus : 0;
	k->max_gpus = o->range_job ? j->max_gpus : 0;
	k->gpu_quota = rk_tenant_gpu_quota(in, j->tenant);
	if (rk_baseline_is_native(j)) {
		/* FNV-1a over the table's bytes: equal tables share a row. */
		uint64_t h = 0xcbf29ce484222325ull;
		const unsigned char *p = (const unsigned char *)(j->native_sps + 1);
		for (size_t i = 0; i < (size_t)j->native_max * sizeof(double); i++)
			h = (h ^ p[i]) * 0x100000001b3ull;
		k->native_sig = h | 1;
		k->native_max = j->native_max;
	}
	sia_gp_key_init(&k->gp, seen, j);
}
