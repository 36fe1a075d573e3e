/*
 * Memo of answered oracle lookups. A simulation asks the same question (one
 * model, batch, plan and canonical placement) many times - every event that
 * touches a job re-reads its speed - and each answer scans a table, so the
 * answers are kept. Results never depend on the cache: a hit returns the
 * bytes the miss computed, and clearing it (when tables change or it fills)
 * only costs time. Keys are compared in full (no hash-only matches).
 */
#include "sim/oracle/oracle_internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Bounded so a long run cannot grow it without limit (~15 MiB at most). */
#define CACHE_MAX_SLOTS 32768

struct oracle_centry {
	int used;
	struct oracle_ckey key;
	struct rk_oracle_result res;
};

void oracle_ckey_init(struct oracle_ckey *k, const struct rk_job *job, const struct rk_plan *plan,
		      const struct rk_placement *pl, int cpus_per_gpu, const char *gpu_type)
{
	/* Zeroed first so padding bytes compare equal. */
	memset(k, 0, sizeof(*k));
	const struct rk_model *m = job->model;
	k->model = m;
	memcpy(k->model_name, m->name, sizeof(k->model_name));
	oracle_model_key(job->job_type, k->app, sizeof(k->app));
	k->app_batch = job->app_batch;
	k->model_batch = m->global_batch;
	k->perf_fitted = m->perf_fitted;
	k->perf = m->perf;
	k->batch = job->global_batch;
	k->plan = *plan;
	k->n_nodes = pl->n_nodes;
	memcpy(k->gpus, pl->gpus, (size_t)pl->n_nodes * sizeof(k->gpus[0]));
	k->cpus = cpus_per_gpu;
	size_t tl = strnlen(gpu_type, sizeof(k->gpu_type) - 1);
	memcpy(k->gpu_type, gpu_type, tl);
}

/* Bytes of a key that matter: everything up to the last used placement entry. */
static size_t key_len(const struct oracle_ckey *k)
{
	return offsetof(struct oracle_ckey, gpus) + (size_t)k->n_nodes * sizeof(k->gpus[0]);
}

static uint64_t hash_key(const struct oracle_ckey *k)
{
	/* 8 bytes at a time, multiply-xorshift mixing; padding is zeroed. */
	const unsigned char *p = (const unsigned char *)k;
	size_t n = key_len(k);
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static int key_equal(const struct oracle_ckey *a, const struct oracle_ckey *b)
{
	/* n_nodes is inside the compared prefix, so equal lengths are implied. */
	return a->n_nodes == b->n_nodes && !memcmp(a, b, key_len(a));
}

void oracle_cache_clear(struct oracle_cache *c)
{
	free(c->slots);
	memset(c, 0, sizeof(*c));
}

int oracle_cache_get(const struct oracle_cache *c, const struct oracle_ckey *k,
		     struct rk_oracle_result *out)
{
	if (c->cap == 0)
		return 0;
	size_t mask = (size_t)c->cap - 1;
	for (size_t i = hash_key(k) & mask;; i = (i + 1) & mask) {
		const struct oracle_centry *e = &c->slots[i];
		if (!e->used)
			return 0;
		if (key_equal(&e->key, k)) {
			*out = e->res;
			return 1;
		}
	}
}

static void insert(struct oracle_cache *c, const struct oracle_ckey *k,
		   const struct rk_oracle_result *r)
{
	size_t mask = (size_t)c->cap - 1;
	size_t i = hash_key(k) & mask;
	while (c->slots[i].used)
		i = (i + 1) & mask;
	c->slots[i].used = 1;
	c->slots[i].key = *k;
	c->slots[i].res = *r;
	c->n++;
}

void oracle_cache_put(struct oracle_cache *c, const struct oracle_ckey *k,
		      const struct rk_oracle_result *r)
{
	/* Keep the load under 1/2 so probes stay short. */
	if (2 * (c->n + 1) > c->cap) {
		if (c->cap >= CACHE_MAX_SLOTS) {
			oracle_cache_clear(c); /* full: start over rather than grow */
		}
		int ncap = c->cap ? 2 * c->cap : 256;
		struct oracle_centry *ns = calloc((size_t)ncap, sizeof(*ns));
		if (!ns)
			return; /* a cache that cannot grow only costs time */
		struct oracle_centry *old = c->slots;
		int ocap = c->cap;
		c->slots = ns;
		c->cap = ncap;
		c->n = 0;
		for (int i = 0; i < ocap; i++)
			if (old[i].used)
				insert(c, &old[i].key, &old[i].res);
		free(old);
	}
	insert(c, k, r);
}
