/*
 * Interference tables from measured co-location throughputs (simulator floor,
 * jansson): Gavel's simulation_throughputs.json and Shockwave's
 * tacc_throughputs.json share one layout,
 *   {gpu_type: {"(job_type, sf)": {"null": isolated steps/s,
 *                                  "(other_type, sf)": [tput_self, tput_other]}}}
 * and give xi = isolated / co-located throughput (docs/references.md §3.2, §6).
 * The library part (sharing.h) takes the parsed table.
 */
#ifndef RUBICK_INTERFERENCE_H
#define RUBICK_INTERFERENCE_H

#include "rubick/sharing.h"

#include <stddef.h>

/* What a parse kept and dropped (never silent: the CLI prints it). */
struct rk_xi_parse_report {
	int pairs;        /* entries added */
	int no_corun;     /* pairs measured at 0 steps/s (cannot co-run): kept as such */
	int unmeasured;   /* 0 steps/s in a row with no pair above 0: never measured, not added */
	int clamped;      /* pairs measured faster than isolated: xi clamped to 1 */
	int no_isolated;  /* job types measured at 0 steps/s alone on a GPU type: skipped */
};

/*
 * Parse `text` (len bytes; `name` labels messages) and add one entry per
 * measured pair to `t` (not finished: call rk_xi_table_finish). Errors:
 * RK_EINVAL "NAME:LINE:COL: what is wrong" for malformed JSON, and
 * "NAME: GPU/KEY: what is wrong" for a key or value of the wrong shape.
 */
int rk_xi_parse_gavel(struct rk_xi_table *t, const char *text, size_t len, const char *name,
		      struct rk_xi_parse_report *rep, struct rk_error *err);

/* Split "('ResNet-50 (batch size 64)', 4)" into type and scale factor; RK_EINVAL. */
int rk_xi_parse_key(const char *key, char type[RK_XI_TYPE_MAX], int *sf);

#endif
