/*
 * Text and JSON forms of jobs (codec.c): an allocation as the daemon stores
 * it, and a job's JSON as the API serves it (docs/api.md, "Job object"). It
 * reads the store's row types and calls nothing of the store.
 */
#ifndef RUBICKD_CODEC_H
#define RUBICKD_CODEC_H

#include "daemon/store/store.h"
#include "rubick/cluster.h"

#include <stddef.h>

/* "node:gpus:cpus:mem_mb[:gpu_mask];..." into buf; its length, or RK_ERANGE. */
int rkd_alloc_format(const struct rk_alloc *a, char *buf, size_t cap);
/* The inverse: 0 and *out (its old shares freed), or RK_EINVAL and *out unchanged. */
int rkd_alloc_parse(const char *text, struct rk_alloc *out);
/* The job's JSON (malloc'd, the caller frees it), with its history when with_hist. */
char *rkd_job_json(const struct rkd_job_row *row, int with_hist, const struct rkd_hist_row *hist,
		   int n_hist);

#endif
