/*
 * Interference lookups by interned keys (sharing.h, rk_xi_pairs): each side
 * of a pair (GPU type, job type, GPUs) becomes a small id once, and a pair
 * of ids is then one probe of an open-addressing table of integers. A
 * policy asks the same few pairs millions of times per simulation (every
 * waiting job against every partner, every round); the string memo
 * (rk_xi_lookup_memo_h) compares three strings per question and evicts on
 * collision. Answers are rk_xi_lookup's, so callers decide exactly as with it.
 */
#include "rubick/sharing.h"

#include <stdlib.h>
#include <string.h>

struct rk_xi_side {
	uint64_t h; /* hash of the whole key */
	int sf;
	char gpu[RK_XI_GPU_MAX], type[RK_XI_TYPE_MAX];
};

struct rk_xi_pair_slot {
	uint64_t key; /* (a << 32 | b) + 1; 0 = empty */
	double xi;
	int corun; /* rk_xi_corun of the pair */
};

void rk_xi_pairs_init(struct rk_xi_pairs *p)
{
	memset(p, 0, sizeof(*p));
}

void rk_xi_pairs_fini(struct rk_xi_pairs *p)
{
	if (!p)
		return;
	free(p->sides);
	free(p->side_ix);
	free(p->slot);
	rk_xi_pairs_init(p);
}

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

static uint64_t side_hash(const char *gpu, const char *type, int sf)
{
	uint64_t h = rk_xi_hash(type) * 0x9e3779b97f4a7c15ULL;
	h ^= rk_xi_hash(gpu) + (uint64_t)(unsigned)sf * 0xbf58476d1ce4e5b9ULL;
	return mix(h);
}

/* Rebuild the side index at `cap` slots (a power of two, > 2 x sides). */
static int side_index(struct rk_xi_pairs *p, int cap)
{
	int *ix = malloc((size_t)cap * sizeof(*ix));
	if (!ix)
		return RK_ENOMEM;
	for (int i = 0; i < cap; i++)
		ix[i] = -1;
	for (int s = 0; s < p->n_sides; s++) {
		int k = (int)(p->sides[s].h & (uint64_t)(cap - 1));
		while (ix[k] >= 0)
			k = (k + 1) & (cap - 1);
		ix[k] = s;
	}
	free(p->side_ix);
	p->side_ix = ix;
	p->side_cap = cap;
	return 0;
}

int rk_xi_pairs_side(struct rk_xi_pairs *p, const char *gpu_type, const char *type, int sf)
{
	size_t lg = strlen(gpu_type), lt = strlen(type);
	if (lg >= RK_XI_GPU_MAX || lt >= RK_XI_TYPE_MAX)
		return RK_EINVAL; /* not kept: the caller asks rk_xi_lookup */
	uint64_t h = side_hash(gpu_type, type, sf);
	if (p->side_cap) {
		for (int k = (int)(h & (uint64_t)(p->side_cap - 1)); p->side_ix[k] >= 0;
		     k = (k + 1) & (p->side_cap - 1)) {
			const struct rk_xi_side *s = &p->sides[p->side_ix[k]];
			if (s->h == h && s->sf == sf && !strcmp(s->type, type) &&
			    !strcmp(s->gpu, gpu_type))
				return p->side_ix[k];
		}
	}
	if (p->n_sides == p->cap_sides) {
		int ncap = p->cap_sides ? 2 * p->cap_sides : 64;
		struct rk_xi_side *v = realloc(p->sides, (size_t)ncap * sizeof(*v));
		if (!v)
			return RK_ENOMEM;
		p->sides = v;
		p->cap_sides = ncap;
	}
	struct rk_xi_side *s = &p->sides[p->n_sides++];
	s->h = h;
	s->sf = sf;
	memcpy(s->gpu, gpu_type, lg + 1); /* lengths checked above */
	memcpy(s->type, type, lt + 1);
	if (2 * p->n_sides > p->side_cap) {
		if (side_index(p, p->side_cap ? 2 * p->side_cap : 128)) {
			p->n_sides--;
			return RK_ENOMEM;
		}
	} else {
		int k = (int)(h & (uint64_t)(p->side_cap - 1));
		while (p->side_ix[k] >= 0)
			k = (k + 1) & (p->side_cap - 1);
		p->side_ix[k] = p->n_sides - 1;
	}
	return p->n_sides - 1;
}

/* Grow the pair table to `cap` slots (a power of two), keeping its answers. */
static int pair_grow(struct rk_xi_pairs *p, int cap)
{
	struct rk_xi_pair_slot *v = calloc((size_t)cap, sizeof(*v));
	if (!v)
		return RK_ENOMEM;
	for (int i = 0; i < p->n_slots; i++) {
		if (!p->slot[i].key)
			continue;
		int k = (int)(mix(p->slot[i].key) & (uint64_t)(cap - 1));
		while (v[k].key)
			k = (k + 1) & (cap - 1);
		v[k] = p->slot[i];
	}
	free(p->slot);
	p->slot = v;
	p->n_slots = cap;
	return 0;
}

/* The answers for (a, b), kept in the pair table (or in *tmp when it cannot grow). */
static const struct rk_xi_pair_slot *pair_of(struct rk_xi_pairs *p, const struct rk_xi_table *t,
                                             int a, int b, struct rk_xi_pair_slot *tmp)
{
	const struct rk_xi_side *x = &p->sides[a], *y = &p->sides[b];
	if (p->table != t) { /* answers belong to one table */
		if (p->slot)
			memset(p->slot, 0, (size_t)p->n_slots * sizeof(*p->slot));
		p->used = 0;
		p->table = t;
	}
	uint64_t key = ((uint64_t)(unsigned)a << 32 | (unsigned)b) + 1;
	int k = 0;
	if (p->n_slots) {
		for (k = (int)(mix(key) & (uint64_t)(p->n_slots - 1)); p->slot[k].key;
		     k = (k + 1) & (p->n_slots - 1))
			if (p->slot[k].key == key)
				return &p->slot[k];
	}
	*tmp = (struct rk_xi_pair_slot){
	    .key = key,
	    .xi = rk_xi_lookup(t, x->gpu, x->type, x->sf, y->type, y->sf, NULL),
	    .corun = rk_xi_corun(t, x->gpu, x->type, x->sf, y->type, y->sf)};
	if (2 * (p->used + 1) > p->n_slots) {
		if (pair_grow(p, p->n_slots ? 2 * p->n_slots : 256))
			return tmp; /* answered, not kept */
		for (k = (int)(mix(key) & (uint64_t)(p->n_slots - 1)); p->slot[k].key;
		     k = (k + 1) & (p->n_slots - 1))
			;
	}
	p->slot[k] = *tmp;
	p->used++;
	return &p->slot[k];
}

double rk_xi_pairs_get(struct rk_xi_pairs *p, const struct rk_xi_table *t, int a, int b)
{
	struct rk_xi_pair_slot tmp;
	return pair_of(p, t, a, b, &tmp)->xi;
}

int rk_xi_pairs_corun(struct rk_xi_pairs *p, const struct rk_xi_table *t, int a, int b)
{
	struct rk_xi_pair_slot tmp;
	return pair_of(p, t, a, b, &tmp)->corun;
}
