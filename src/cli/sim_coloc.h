/*
 * `rubick sim` options of the co-location physics (issue 6, docs/sharing.md):
 * --sharing on|off, --contention on|off, --interference gavel|tacc|FILE and
 * --contention-overhead MS. Kept apart from cmd_sim.c so that the command
 * gains them through a few calls.
 */
#ifndef RUBICK_CLI_SIM_COLOC_H
#define RUBICK_CLI_SIM_COLOC_H

#include "rubick/cluster.h"
#include "rubick/sharing.h"
#include "rubick/sim.h"

struct rk_perf_env;

struct rk_cli_coloc {
	int sharing, contention;
	const char *interference; /* NULL = gavel */
	double overhead_ms;
	struct rk_xi_table xi;    /* loaded when sharing is on */
	char path[4096];          /* the interference file read; "" = none */
};

/* The help lines of these options. */
extern const char rk_cli_coloc_help[];

void rk_cli_coloc_init(struct rk_cli_coloc *c);
void rk_cli_coloc_fini(struct rk_cli_coloc *c);
/*
 * If argv[*i] is one of the options, consume it and its value (advancing *i)
 * and return 1; 0 when it is not; RK_EXIT_USAGE after printing
 * "rubick sim: FLAG: what is wrong" for a bad or missing value.
 */
int rk_cli_coloc_arg(struct rk_cli_coloc *c, int argc, char **argv, int *i);
/*
 * Load the interference table (sharing on), and with contention on make the
 * (call before the oracle is created: it keeps `env` and memoises answers)
 * performance model's NIC bandwidth the cluster's (net= split over the
 * env's NICs per node, slowest node) so that a bandwidth sweep moves both
 * the oracle and the contention term. Prints what it loaded and skipped.
 * Returns 0 or RK_EXIT_FAILURE after printing the error.
 */
int rk_cli_coloc_load(struct rk_cli_coloc *c, const char *cluster_arg, struct rk_perf_env *env);
/* Copy the switches into a simulator configuration. */
void rk_cli_coloc_config(const struct rk_cli_coloc *c, struct rk_sim_config *cfg);

#endif
