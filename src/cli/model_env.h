/* --env KEY=V,... onto cluster constants and number flags, shared by the `rubick model`
 * subcommands. */
#ifndef RK_CLI_MODEL_ENV_H
#define RK_CLI_MODEL_ENV_H

#include "rubick/perf.h"

/* Apply `text` (nvlink_gbps=..., see perf.h) to `env`; 0, or -1 after printing why. */
int rk_cli_model_parse_env(const char *text, struct rk_perf_env *env);

/* The value `s` of `flag` as a number in the open interval (lo, hi), or an
 * integer in lo..hi; 0, or -1 after printing "rubick model: FLAG: 'S' must be ...". */
int rk_cli_model_parse_double(const char *flag, const char *s, double lo, double hi, double *out);
int rk_cli_model_parse_long(const char *flag, const char *s, long lo, long hi, long *out);

#endif
