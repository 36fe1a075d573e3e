/*
 * `--load F` and `--poisson RATE|mean` of `rubick trace` and `rubick sim`
 * (docs/sim.md, "Load sweeps"): the options and their application to a
 * parsed trace, kept apart so each command gains them through two calls.
 * `cmd` ("rubick sim") starts every message.
 */
#ifndef RUBICK_CLI_TRACE_ARRIVALS_H
#define RUBICK_CLI_TRACE_ARRIVALS_H

#include "rubick/trace.h"

#include <stddef.h>
#include <stdint.h>

/* Parse `flag` (--load or --poisson) = v into *load or *poisson. 0 or RK_EXIT_USAGE. */
int rk_cli_trace_arrivals_arg(const char *cmd, const char *flag, const char *v, double *load,
			      const char **poisson);

/*
 * Poisson arrivals first (when `poisson` is set; "mean" = the trace's mean
 * rate, seeded by `seed`), then the load factor (when > 0). OUT: `note`, a
 * line saying what changed ("" when nothing did). 0, or RK_EXIT_FAILURE
 * after printing why.
 */
int rk_cli_trace_arrivals_apply(const char *cmd, struct rk_trace *t, double load,
				const char *poisson, uint64_t seed, char *note, size_t cap);

#endif
