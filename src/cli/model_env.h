/* --env KEY=V,... onto cluster constants, shared by the `rubick model` subcommands. */
#ifndef RK_CLI_MODEL_ENV_H
#define RK_CLI_MODEL_ENV_H

#include "rubick/perf.h"

/* Apply `text` (nvlink_gbps=..., see perf.h) to `env`; 0, or -1 after printing why. */
int rk_cli_model_parse_env(const char *text, struct rk_perf_env *env);

#endif
