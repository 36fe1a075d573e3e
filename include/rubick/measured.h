/*
 * Measured plan x placement tables: the Rubick artifact's `placements.csv`
 * (`placements/<model>/`, docs/references.md §6 D1), the
 * ground truth the performance model is validated against and the simulator's
 * oracle reads. The parser takes a text buffer plus a name for messages; it
 * does no I/O.
 *
 * Accepted layouts (header names, any column order, extra columns rejected):
 *   exec_plan,placement,iter_time,forward,overlap_sync,optimize   (most models)
 *   exec_plan,placement,cpu_threads,iter_time                     (llama7b_bsz16)
 *   exec_plan,placement,iter_time                                 (t5_3B)
 * exec_plan and placement are required, iter_time is required; the three
 * phase columns come together or not at all.
 *
 * Known traps, handled visibly (each row carries what was done to it):
 *  - iter_time == 0 marks a failed run (OOM): the row is kept with
 *    `failed = 1` so callers can list it as skipped with its reason.
 *  - Phase columns are in seconds in some files and rows, milliseconds in
 *    others. The unit is decided per row by magnitude: the phases of one
 *    iteration cannot sum to more than the iteration, so when
 *    forward + overlap_sync + optimize <= 2 * iter_time (in seconds) they are
 *    seconds, otherwise milliseconds. Rows read as seconds have
 *    `phases_in_s = 1`; the stored values are always ms.
 *  - A UTF-8 byte-order mark and CRLF line ends are accepted.
 */
#ifndef RUBICK_MEASURED_H
#define RUBICK_MEASURED_H

#include "rubick/error.h"
#include "rubick/plan.h"

#include <stddef.h>

#define RK_MEASURED_PLAN_MAX 32

struct rk_measured_row {
	int line;                         /* 1-based line in the source text */
	char plan[RK_MEASURED_PLAN_MAX];  /* exec_plan as written: "ga", "244", "zero-offload+gc" */
	struct rk_placement placement;    /* GPUs per node, in file order */
	int cpu_threads;                  /* CPU threads per GPU; 0 = column absent */
	double iter_s;                    /* seconds per iteration; 0 = failed run */
	int failed;                       /* 1 when iter_time == 0 */
	int has_phases;                   /* 1 when the phase columns are present */
	int phases_in_s;                  /* 1 when the row's phases were read as seconds */
	double fwd_ms, sync_ms, opt_ms;   /* phases in ms (0 when absent) */
};

struct rk_measured {
	int n_rows;
	struct rk_measured_row *rows; /* owned */
	int has_cpu_threads;          /* the cpu_threads column is present */
	int has_phases;               /* the phase columns are present */
	int n_failed;                 /* rows with iter_time == 0 */
	int n_phases_in_s;            /* rows whose phases were read as seconds */
};

/*
 * Parse `text` (`len` bytes) named `name` in messages. On success fills OUT:
 * *out (free with rk_measured_fini) and returns 0. Errors (RK_EINVAL, RK_ERANGE,
 * RK_ENOMEM) read "NAME:LINE:COL: what is wrong" and leave *out empty: unknown
 * or duplicate or missing header column, wrong field count, empty or overlong
 * plan, bad placement (digits 1..9, at most RK_PLACEMENT_MAX_NODES nodes), a
 * number that is not finite or is negative, cpu_threads not a positive
 * integer, no data rows.
 */
int rk_measured_parse(const char *text, size_t len, const char *name, struct rk_measured *out,
		      struct rk_error *err);

/* Free what `t` owns; `t` is empty afterwards. NULL is fine. */
void rk_measured_fini(struct rk_measured *t);

/* Total GPUs of a row's placement. */
int rk_measured_row_gpus(const struct rk_measured_row *r);

#endif
