/*
 * `rubick sim --policy` lists with per-policy options (docs/sim.md,
 * "Policies and their options"): NAME, NAME:KEY=VALUE (one key; the value
 * may hold ':' but not ','), or NAME[KEY=VALUE,KEY=VALUE...] (any number
 * of keys), comma-separated; `all` = every registered policy. An item's
 * keys override the same keys of --policy-options, which stays the default
 * of every policy. Kept apart from cmd_sim.c so the command gains it
 * through one call.
 */
#ifndef RUBICK_CLI_SIM_POLICIES_H
#define RUBICK_CLI_SIM_POLICIES_H

#include "rubick/policy.h"

#define RK_CLI_POLICY_NAME_MAX 128
#define RK_CLI_POLICY_OPTS_MAX 1024

struct rk_cli_policy {
	const struct rk_policy_ops *ops;
	char name[RK_CLI_POLICY_NAME_MAX];    /* output name: "sia", or "sia[p=-0.5]" */
	char options[RK_CLI_POLICY_OPTS_MAX]; /* what create() gets: defaults + the item's */
};

/*
 * Parse `list` into out[0..cap), merging `defaults` (--policy-options, may
 * be NULL), and check every entry by creating and destroying its policy
 * state, so an unknown policy, option key or value fails before any run
 * (the policy's message names it and the key). Names must be distinct.
 * OUT: *n. 0, or RK_EXIT_USAGE after printing the problem on stderr.
 */
int rk_cli_policies_parse(const char *list, const char *defaults, struct rk_cli_policy *out,
                          int cap, int *n);

#endif
