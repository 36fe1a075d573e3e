/*
 * The model zoo: an owned, ordered set of struct rk_model read from the
 * `key = value` text format of docs/zoo.md (zoo files under data/zoo/, and the
 * same text inline in a job spec). The library never reads files: callers pass
 * the text and a name used in messages ("data/zoo/bert.model", "job 12 spec").
 */
#ifndef RUBICK_ZOO_H
#define RUBICK_ZOO_H

#include "rubick/error.h"
#include "rubick/model.h"

#include <stddef.h>

/* Longest text rk_model_format writes for any valid model (bytes, NUL included). */
#define RK_MODEL_TEXT_MAX 1024

struct rk_zoo {
	struct rk_model *models; /* owned array, in insertion order */
	size_t n_models;         /* entries in use */
	size_t cap;              /* entries allocated */
};

/* Initialise an empty zoo in caller storage; never fails. */
void rk_zoo_init(struct rk_zoo *zoo);

/* Free what the zoo owns; the zoo is empty (and reusable) afterwards. */
void rk_zoo_fini(struct rk_zoo *zoo);

/*
 * Parse one model from `text` (`len` bytes, need not be NUL-terminated) in the
 * zoo format. `src` names the text in messages ("data/zoo/bert.model"); NULL
 * reads as "<model>". Lines end at '\n'; ';' also ends a statement so an inline
 * spec may sit on one line. On success fills OUT: *out and returns 0; on error
 * returns RK_EINVAL or RK_ERANGE, leaves *out untouched and fills `err` with
 * "SRC:LINE:COL: key 'K': what is wrong".
 */
int rk_model_parse(const char *text, size_t len, const char *src, struct rk_model *out,
		   struct rk_error *err);

/*
 * Check the invariants of a model built in code (e.g. from a launch command):
 * a valid name, every size in range, heads divide hidden. Returns 0 or
 * RK_EINVAL/RK_ERANGE with "model 'NAME': key 'K': what is wrong".
 */
int rk_model_validate(const struct rk_model *m, struct rk_error *err);

/*
 * Write `m` in the zoo format to buf (cap bytes, always NUL-terminated when
 * cap > 0). Returns the length the full text needs (excluding the NUL), as
 * snprintf does, so a result >= cap means truncation; RK_EINVAL if m is NULL.
 * rk_model_parse of the output gives back a model equal field by field.
 */
int rk_model_format(const struct rk_model *m, char *buf, size_t cap);

/*
 * Copy a valid model into the zoo. RK_EEXIST when a model of the same name
 * (case-insensitive) is present, RK_EINVAL when invalid, RK_ENOMEM; the zoo is
 * unchanged on failure.
 */
int rk_zoo_add(struct rk_zoo *zoo, const struct rk_model *m, struct rk_error *err);

/* rk_model_parse then rk_zoo_add; errors are prefixed as rk_model_parse's are. */
int rk_zoo_add_text(struct rk_zoo *zoo, const char *text, size_t len, const char *src,
		    struct rk_error *err);

/*
 * Find a model by name: exact (case-insensitive) first, then through the alias
 * table of docs/zoo.md (the names traces and measured folders use: "llama7b",
 * "t5_3B", "gpt-2", "meta-llama/Llama-2-7b-hf", ...). Returns a pointer into
 * the zoo (borrowed; valid until the zoo changes) or NULL.
 */
const struct rk_model *rk_zoo_find(const struct rk_zoo *zoo, const char *name);

/*
 * Resolve a measured-data folder name such as "llama7b_bsz16" or "t5_3B": the
 * model (as rk_zoo_find) and OUT: *global_batch (the "_bszN" suffix, else the
 * model's own global batch). Returns 0 or RK_ENOTFOUND with a message.
 */
int rk_zoo_resolve(const struct rk_zoo *zoo, const char *name, const struct rk_model **model,
		   int *global_batch, struct rk_error *err);

/*
 * Canonical zoo name for an alias ("LLaMA-2-7B" -> "llama7"), or NULL when
 * `name` is no known alias. Static string; does not need a zoo.
 */
const char *rk_zoo_alias_canonical(const char *name);

/*
 * Parameter count derived from the structure when none is given:
 * 12*layers*hidden^2 (attention 4h^2 + MLP 8h^2 per block) + vocab*hidden
 * (tied embedding), as Megatron-LM's estimate (Narayanan et al., SC'21, eq. 2,
 * without the small seq/bias terms). See docs/zoo.md.
 */
double rk_model_params_estimate(int layers, int hidden, int vocab);

#endif
