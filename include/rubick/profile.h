/*
 * Profiling runs the performance model is fitted on (docs/references.md §1.5),
 * read into fit samples (fit.h). Two formats, both parsed from text buffers
 * (no I/O in the library):
 *  - the Rubick artifact's pair perf_model_profile/<model>/config.csv +
 *    data.csv (UTF-8 BOM, CRLF accepted), row i of one matching row i of the
 *    other;
 *  - rubick's own single-file format, docs/profile-format.md.
 */
#ifndef RUBICK_PROFILE_H
#define RUBICK_PROFILE_H

#include "rubick/error.h"
#include "rubick/fit.h"
#include "rubick/model.h"

#include <stddef.h>

struct rk_profile {
	char model[RK_MODEL_NAME_MAX]; /* model the file names ("" when it does not) */
	double param_mi;   /* parameters / 2^20 the profile states (artifact parameter_size); 0 = unknown */
	double seq_hid;    /* seq_len * hidden the profile states; 0 = unknown */
	int global_batch;  /* global batch the runs used */
	int n;
	struct rk_perf_sample *samples; /* owned, n entries, line = data line */
};

void rk_profile_fini(struct rk_profile *p);

/*
 * The artifact pair. config columns (any order): nodes, gpus (per node),
 * parameter_size (Mi parameters), batch_size, seq_hid, num_cpu_threads,
 * zero_type (0 none, 1 ZeRO-Offload, 2 ZeRO-DP), is_tp, is_pp; data columns:
 * forward_time, Tcc, Topt, iter_time (ms), strategy (4 digits alpha_f alpha_b
 * alpha_c zero_type, §1.2: alpha_f 2 = checkpointing). Runs are DP-family
 * with per-GPU batch global_batch / GPUs, no accumulation. Rejected with
 * "FILE:LINE:COL: ...": missing/unknown/duplicate columns, row count
 * mismatch, non-numeric or negative values, GPUs not dividing the global
 * batch, is_tp/is_pp rows (degrees unknown), a strategy whose zero digit
 * contradicts zero_type, parameter_size or seq_hid varying between rows,
 * iter_time 0.
 */
int rk_profile_parse_artifact(const char *config, size_t config_len, const char *config_name,
			      const char *data, size_t data_len, const char *data_name,
			      int global_batch, struct rk_profile *out /* OUT */,
			      struct rk_error *err);

/* rubick's format (docs/profile-format.md). */
int rk_profile_parse(const char *text, size_t len, const char *name,
		     struct rk_profile *out /* OUT */, struct rk_error *err);

#endif
