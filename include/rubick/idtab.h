/*
 * A table of records keyed by job id, for the policies that keep jobs across
 * rounds (classic_inc.c, sjf_queue.c): open addressing with Fibonacci
 * hashing, at most half full, and backward-shift deletion, so a lookup never
 * walks tombstones. Every record starts with a struct rk_idtab_head. Records
 * move when the table grows: a pointer from rk_idtab_find is good until the
 * next rk_idtab_put.
 */
#ifndef RUBICK_IDTAB_H
#define RUBICK_IDTAB_H

#include <stddef.h>
#include <stdint.h>

struct rk_idtab_head {
	int64_t id;
	int used; /* 0: the slot is free */
};

struct rk_idtab {
	unsigned char *slots; /* 2^bits records of `size` bytes; NULL until the first put */
	size_t size;
	int bits, n;
};

/* An empty table of records of `rec_size` bytes (>= sizeof(struct rk_idtab_head)). */
void rk_idtab_init(struct rk_idtab *t, size_t rec_size);
/* Free the storage; the table is empty and usable again. */
void rk_idtab_fini(struct rk_idtab *t);
/* Drop every record, keep the storage. */
void rk_idtab_clear(struct rk_idtab *t);
/* The record of `id`, or NULL. */
void *rk_idtab_find(const struct rk_idtab *t, int64_t id);
/* Copy `rec` (its head's id set, not yet in the table) in. 0 or RK_ENOMEM. */
int rk_idtab_put(struct rk_idtab *t, const void *rec);
/* Remove `rec`, a pointer rk_idtab_find returned. */
void rk_idtab_del(struct rk_idtab *t, void *rec);

#endif
