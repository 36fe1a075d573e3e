/* Records keyed by job id (idtab.h). */
#include "rubick/idtab.h"

#include "rubick/error.h"

#include <stdlib.h>
#include <string.h>

static size_t id_slot(int64_t id, int bits)
{
	return (size_t)(((uint64_t)id * 0x9e3779b97f4a7c15ULL) >> (64 - bits));
}

static struct rk_idtab_head *at(const struct rk_idtab *t, size_t i)
{
	return (struct rk_idtab_head *)(t->slots + i * t->size);
}

void rk_idtab_init(struct rk_idtab *t, size_t rec_size)
{
	memset(t, 0, sizeof(*t));
	t->size = rec_size;
}

void rk_idtab_fini(struct rk_idtab *t)
{
	free(t->slots);
	rk_idtab_init(t, t->size);
}

void rk_idtab_clear(struct rk_idtab *t)
{
	if (t->slots)
		memset(t->slots, 0, ((size_t)1 << t->bits) * t->size);
	t->n = 0;
}

void *rk_idtab_find(const struct rk_idtab *t, int64_t id)
{
	if (!t->slots)
		return NULL;
	size_t mask = ((size_t)1 << t->bits) - 1;
	for (size_t h = id_slot(id, t->bits);; h = (h + 1) & mask) {
		struct rk_idtab_head *r = at(t, h);
		if (!r->used)
			return NULL;
		if (r->id == id)
			return r;
	}
}

int rk_idtab_put(struct rk_idtab *t, const void *rec)
{
	if (!t->slots || 2 * (t->n + 1) > (1 << t->bits)) {
		struct rk_idtab old = *t;
		int bits = t->slots ? t->bits + 1 : 10;
		unsigned char *s = calloc((size_t)1 << bits, t->size);
		if (!s)
			return RK_ENOMEM;
		t->slots = s;
		t->bits = bits;
		t->n = 0;
		int oldn = old.slots ? 1 << old.bits : 0;
		for (int i = 0; i < oldn; i++)
			if (at(&old, (size_t)i)->used)
				rk_idtab_put(t, at(&old, (size_t)i)); /* cannot grow again: half empty */
		free(old.slots);
	}
	const struct rk_idtab_head *r = rec;
	size_t mask = ((size_t)1 << t->bits) - 1, h = id_slot(r->id, t->bits);
	while (at(t, h)->used)
		h = (h + 1) & mask;
	memcpy(at(t, h), rec, t->size);
	at(t, h)->used = 1;
	t->n++;
	return 0;
}

void rk_idtab_del(struct rk_idtab *t, void *rec)
{
	size_t mask = ((size_t)1 << t->bits) - 1;
	size_t i = (size_t)((unsigned char *)rec - t->slots) / t->size, j = i;
	at(t, i)->used = 0;
	for (;;) {
		j = (j + 1) & mask;
		if (!at(t, j)->used)
			break;
		size_t home = id_slot(at(t, j)->id, t->bits);
		/* Move j back to the hole i unless its home lies cyclically in (i, j]. */
		int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
		if (!stays) {
			memcpy(at(t, i), at(t, j), t->size);
			at(t, j)->used = 0;
			i = j;
		}
	}
	t->n--;
}
