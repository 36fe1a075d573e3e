/*
 * `rubick sim`'s warnings about runs that cannot do what the command line
 * names (docs/sim.md, "Warnings"): a policy missing what it needs to act as
 * named (rk_policy_ops.needs), and a Sia/Pollux workload replayed with the
 * reader's estimated run times. One line each on stderr, once per
 * invocation: stdout is what scripts and golden tests compare. The library
 * only says what a policy needs; deciding to warn is the command's.
 */
#ifndef RUBICK_CLI_SIM_WARN_H
#define RUBICK_CLI_SIM_WARN_H

#include "cli/sim_policies.h"

#include "rubick/job.h"
#include "rubick/trace.h"

#include <stdio.h>

/* What the warnings read of the run: its inputs after loading, and the options. */
struct rk_cli_sim_warn_in {
	const struct rk_cli_policy *pols;
	int n_pols;
	const struct rk_job *jobs; /* the jobs the engine replays */
	int n_jobs;
	const struct rk_trace *trace; /* as read, before the jobs were made */
	const char *trace_path;
	int sharing;           /* --sharing on */
	int sia_target;        /* --job-length sia-target */
};

/* Print every warning that applies to `f`, one line each. Returns how many. */
int rk_cli_sim_warn(const struct rk_cli_sim_warn_in *in, FILE *f);

/*
 * A site's own history (rk_trace_format_is_history: sacct, history): the lines
 * that are no job (steps folded, unfinished, never ran) and the black-box
 * share (docs/replay.md), one line each on `f`. Nothing for other formats.
 */
void rk_cli_sim_history_note(const struct rk_trace *t, const char *path, FILE *f);

#endif
