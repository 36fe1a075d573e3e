/*
 * Helpers shared by the white-box subcommands (`rubick plan`, `rubick curve`,
 * `rubick demo`): flag values, loading the zoo and choosing a model's
 * performance parameters. They print their own "rubick CMD: ..." messages and
 * return exit codes (commands.h).
 */
#ifndef RUBICK_CLI_WHITEBOX_H
#define RUBICK_CLI_WHITEBOX_H

#include "rubick/model.h"
#include "rubick/perf.h"
#include "rubick/plan.h"
#include "rubick/zoo.h"

#include <stdio.h>

/*
 * Parse the decimal integer `val` of `flag` into *out, lo..hi. On error prints
 * "rubick CMD: FLAG: 'VAL' must be an integer in LO..HI" and returns
 * RK_EXIT_USAGE; 0 on success.
 */
int rk_wb_int(const char *cmd, const char *flag, const char *val, long lo, long hi, long *out);

/*
 * Parse --space's value (a plan space, plan.h) into *out. On error prints
 * "rubick CMD: --space:1:COL: what is wrong" and returns RK_EXIT_USAGE.
 */
int rk_wb_space(const char *cmd, const char *val, struct rk_plan_space *out);

/*
 * The flag handling every white-box command shares, for argv[*i]: --help or -h
 * prints usage(stdout) and returns -1; --json sets *json and returns 0 with
 * *val NULL; a flag named in `valued` (NULL-terminated) takes the next
 * argument (advancing *i) and returns 0 with *val set. Anything else returns
 * RK_EXIT_USAGE after printing "rubick CMD: unknown option 'F' (see --help)"
 * or "rubick CMD: F: missing value".
 */
int rk_wb_flag(const char *cmd, void (*usage)(FILE *), const char *const *valued, int argc,
	       char **argv, int *i, int *json, const char **val /* OUT */);

/* Load the zoo (--zoo DIR, RUBICK_ZOO, compiled-in default) into `zoo`
 * (initialised here). 0, or RK_EXIT_FAILURE after printing why. */
int rk_wb_zoo(const char *cmd, const char *zoo_flag, struct rk_zoo *zoo);

/* The model named by --model, or NULL after printing that it is not in the zoo
 * (with the names that are). */
const struct rk_model *rk_wb_model(const char *cmd, const struct rk_zoo *zoo, const char *name);

/*
 * The performance parameters to predict with: the model's fitted ones when it
 * has them (returns 1), else the documented defaults of fit.h (returns 0) —
 * callers say which in their output, never silently.
 */
int rk_wb_params(const struct rk_model *m, const struct rk_perf_env *env,
		 struct rk_perf_params *k /* OUT */);

#endif
