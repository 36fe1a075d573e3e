/*
 * Internal: the option walker of the baseline policies (FIFO, SJF, SRTF,
 * Tiresias, AntMan, Synergy-TUNE), which all take `placement=MODE`
 * (rk_place_mode) and some take keys of their own. Not a public header.
 */
#ifndef RUBICK_POLICY_PLACE_OPTS_H
#define RUBICK_POLICY_PLACE_OPTS_H

#include "rubick/error.h"
#include "rubick/placement.h"

/*
 * A policy's own key: 0 when taken, 1 when `key` is not the policy's, else
 * a negative RK_E* code with `err` set (naming key, value and the rule).
 */
typedef int (*rk_place_opt_fn)(void *ctx, const char *key, const char *value, struct rk_error *err);

/*
 * Walk "k=v,k=v" (`options` may be NULL or empty). `placement=MODE` sets
 * *mode; other keys go to `extra` (may be NULL). An item without '=', an
 * unknown mode (the error lists RK_PLACE_MODE_NAMES) or a key neither knows
 * (the error lists "placement" and `extra_known`, e.g. "threshold_gpu_h") is
 * RK_EINVAL, messages prefixed with "policy NAME". *mode is written only
 * when the whole text parses; `extra` may have taken keys before a failure.
 */
int rk_place_opts_parse(const char *options, const char *name, enum rk_place_mode *mode,
                        rk_place_opt_fn extra, void *ctx, const char *extra_known,
                        struct rk_error *err);

#endif
