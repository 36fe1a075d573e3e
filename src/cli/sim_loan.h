/*
 * `rubick sim` options of capacity loaning and elastic jobs (issue 5,
 * docs/aryl.md): --inference FILE|diurnal:KEY=VALUE,..., --reclaim-deadline
 * SECONDS, --elastic-share F. Kept apart from cmd_sim.c so that the command
 * gains them through a few calls.
 */
#ifndef RUBICK_CLI_SIM_LOAN_H
#define RUBICK_CLI_SIM_LOAN_H

#include "rubick/cluster.h"
#include "rubick/loadseries.h"
#include "rubick/report.h"
#include "rubick/sim.h"

#include <stdio.h>

struct rk_cli_loan {
	const char *inference;     /* NULL = no loaning */
	double deadline_s;         /* --reclaim-deadline, default 600 s */
	double elastic_share;      /* --elastic-share, default 0 */
	int n_elastic;             /* jobs the last rk_cli_loan_load made elastic */
	struct rk_load_series series;
};

extern const char rk_cli_loan_help[];

void rk_cli_loan_init(struct rk_cli_loan *c);
void rk_cli_loan_fini(struct rk_cli_loan *c);
/* As rk_cli_coloc_arg: 1 consumed, 0 not ours, RK_EXIT_USAGE after printing. */
int rk_cli_loan_arg(struct rk_cli_loan *c, int argc, char **argv, int *i);
/*
 * Mark the seeded elastic share of `jobs` and load the series (a file, or
 * the diurnal generator over the jobs' span with servers defaulting to the
 * cluster's inference servers). 0 or RK_EXIT_FAILURE after printing.
 */
int rk_cli_loan_load(struct rk_cli_loan *c, const struct rk_cluster *cl, struct rk_job *jobs,
		     int n, uint64_t seed);
void rk_cli_loan_config(const struct rk_cli_loan *c, struct rk_sim_config *cfg);
/* A run's loan figures (the table's loan line, --json's "loan" object). OUT: *out. */
void rk_cli_loan_stats(const struct rk_cli_loan *c, const struct rk_cluster *cl,
		       const struct rk_sim_result *r, struct rk_report_loan *out);
/* One line per run: loans, reclaims, preemptions per reclaimed server, usage. */
void rk_cli_loan_report(FILE *f, const char *policy, const struct rk_report_loan *l);

#endif
