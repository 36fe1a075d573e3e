/*
 * Internal to `rubick sim` (cmd_sim.c): its options, their help text and
 * their parser (sim_opts.c). Not a public header.
 */
#ifndef RUBICK_CLI_SIM_OPTS_H
#define RUBICK_CLI_SIM_OPTS_H

#include "cli/sim_coloc.h"
#include "cli/sim_loan.h"

#include "rubick/sim.h"

#include <stdint.h>
#include <stdio.h>

#define MAX_OVERRIDES 32

struct opts {
	const char *trace, *format, *cluster, *policies, *oracle, *out, *zoo, *policy_options;
	const char *quota;       /* --quota TENANT:GPUS[/...] */
	const char *throughputs; /* --throughputs (sim_native.h); NULL = auto */
	const char *trace_gpu;   /* --trace-gpu TYPE|cluster; NULL = the trace format's own type */
	const char *job_length;  /* --job-length trace|sia-target; NULL = trace */
	const char *first_start; /* --first-start free|paid; NULL = free */
	const char *gpu_range;   /* --gpu-range free|request; NULL = free */
	double interval_s, restart_s, horizon_s;
	struct rk_sim_restart_override overrides[MAX_OVERRIDES];
	int n_overrides;
	const char *seeds, *normalize; /* --seeds A-B, --normalize POLICY */
	double load;                   /* --load F (0 = the trace's arrivals) */
	const char *poisson;           /* --poisson RATE|mean */
	uint64_t seed, workload_seed, policy_seed;
	int have_seed, have_workload_seed, have_policy_seed;
	int json, skip_bad, check, no_timing, refit;
	struct rk_cli_coloc coloc; /* --sharing, --contention, ... (sim_coloc.h) */
	struct rk_cli_loan loan; /* --inference, --reclaim-deadline, --elastic-share (sim_loan.h) */
};

/* The usage text, to `f`. */
void rk_cli_sim_help(FILE *f);

/* "rubick sim: FLAG: WHAT (try ...)" on stderr; returns RK_EXIT_USAGE. */
int rk_cli_sim_usage_error(const char *flag, const char *what);

/*
 * Fill `o` (zeroed by the caller) from the command line: 0, RK_EXIT_OK
 * after --help (printed), or the exit code of a usage error (printed).
 */
int rk_cli_sim_parse(int argc, char **argv, struct opts *o);

#endif
