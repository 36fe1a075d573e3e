/*
 * Internal to `rubick model validate` (model_validate*.c): helpers the
 * driver and its training-protocol file share. Calls go one way:
 *
 *   model_validate.c        -> train fit   (the driver: reads files, pairs, scores)
 *   model_validate_train.c  -> fit         (the training protocol)
 *   model_validate_fit.c                   (a leaf: what both build a fit from)
 *
 * model_validate_print.c (statistics and output) calls none of them.
 */
#ifndef RUBICK_CLI_MODEL_VALIDATE_INTERNAL_H
#define RUBICK_CLI_MODEL_VALIDATE_INTERNAL_H

#include "cli/model_validate.h"
#include "rubick/measured.h"
#include "rubick/profile.h"

/* ---- model_validate_fit.c ---- */

/* Append a note (trap met, decision taken) to a fit's report; at most 24. */
void rk_validate_note(struct rk_validate_fit *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A measured row as a fit sample (phases only where measured). */
void rk_validate_row_sample(const struct rk_measured_row *mr, const struct rk_plan *plan,
			    const struct rk_validate_opts *o, struct rk_perf_sample *s);

/* qsort comparator of doubles, ascending. */
int rk_validate_cmp_dbl(const void *a, const void *b);

/* ---- model_validate_train.c ---- */

/* enum rk_vclass of a plan on a placement. */
int rk_validate_placement_class(const struct rk_plan *p, const struct rk_placement *pl);

/* Training protocol (model_validate_train.c, docs/perf-model.md). `plans` are
 * the strict protocol's reading, `alt` the plan reader's (3D micro-batches of 1). */
void rk_validate_choose_microbatching(const struct rk_measured *t, struct rk_plan *plans,
				      const struct rk_plan *alt, const unsigned char *is_train,
				      const struct rk_validate_opts *o, const struct rk_model *m,
				      struct rk_validate_fit *f);
int rk_validate_train_refit(const struct rk_measured *t, const struct rk_plan *plans,
			    const unsigned char *is_train, const struct rk_profile *prof,
			    const char *mpath, const struct rk_validate_opts *o, int have_profile,
			    int warm, struct rk_model *tgt, struct rk_validate_fit *f,
			    struct rk_error *err);
/* Apply the training rows' class scales to the scored rows from index `first`. */
void rk_validate_class_scales(struct rk_validate *v, int first, struct rk_validate_fit *f);

#endif
