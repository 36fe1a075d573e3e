/*
 * `rubick report DIR...` (docs/sim.md, "Sweeps"): runs of `rubick sim --out`
 * read back (summary.json, jobs.csv), checked to differ in one option only,
 * and grouped into points, one per policy and x (report_runs.c); their
 * figures and page (report_figs.c). cmd_report.c drives both and prints.
 */
#ifndef RUBICK_CLI_REPORT_SWEEP_H
#define RUBICK_CLI_REPORT_SWEEP_H

#include "rubick/report.h"

/* What the x axis is: `--x load|arrival|gpus|auto`. */
enum rk_sweep_x { RK_SWEEP_AUTO, RK_SWEEP_LOAD, RK_SWEEP_ARRIVAL, RK_SWEEP_GPUS };

/* The figures of a point, in the order every output lists them. */
enum rk_sweep_metric {
	RK_SW_AVG_JCT,   /* avg_jct_s */
	RK_SW_P99_JCT,   /* p99_jct_s */
	RK_SW_MAKESPAN,  /* makespan_s */
	RK_SW_GPU_UTIL,  /* gpu_util, 0..1 */
	RK_SW_GPU_HOURS, /* gpu_hours */
	RK_SW_RECONFIGS, /* reconfigs per job */
	RK_SW_COUNT
};

/* The key of metric k in summary.json and in every output ("avg_jct_s", ...). */
const char *rk_sweep_metric_name(enum rk_sweep_metric k);
/* Its axis title with the unit ("average JCT (s)"). */
const char *rk_sweep_metric_label(enum rk_sweep_metric k);

/* One policy at one x: the run of one DIR, over its seeds. */
struct rk_sweep_point {
	int policy; /* index into rk_sweep.policies */
	double x;
	const char *dir;        /* borrowed from argv */
	int n;                  /* seeds (1 without --seeds) */
	double *v[RK_SW_COUNT]; /* n values each, seed order; owned */
	struct rk_report_stat st[RK_SW_COUNT];
	double *jct; /* completed jobs' JCTs of every seed, s, ascending; owned */
	int n_jct;
};

struct rk_sweep {
	enum rk_sweep_x x;   /* resolved: never RK_SWEEP_AUTO */
	const char *x_name;  /* "load", "arrival", "gpus" */
	const char *x_label; /* axis title with the unit */
	char **policies;     /* in order of first appearance; owned */
	int n_policies;
	double *xs; /* the distinct x values, ascending; owned */
	int n_xs;
	struct rk_sweep_point *pts; /* sorted by policy, then x; owned */
	int n_pts;
	double cdf_x;      /* where the CDF is drawn: the most contended x */
	int cdf_all_seeds; /* 1 = every jobs.csv there had the seed column */
};

/*
 * Read `dirs`, check them and build the sweep. 0, or RK_EXIT_FAILURE after
 * printing "rubick report: WHERE: PROBLEM" on stderr. fini is safe after
 * either.
 */
int rk_sweep_load(char *const *dirs, int n_dirs, enum rk_sweep_x x, struct rk_sweep *sw);
void rk_sweep_fini(struct rk_sweep *sw);
/* The point of policy p at x value index i, or NULL when that run has no such policy. */
const struct rk_sweep_point *rk_sweep_at(const struct rk_sweep *sw, int p, int i);

/*
 * Into `dir` (made with its parents): fig-NAME.svg and fig-NAME.pdf per
 * figure and index.html inlining them (report_figs.c). OUT: *n_figs. 0, or
 * RK_EXIT_FAILURE after printing the path and the problem.
 */
int rk_sweep_write_figures(const struct rk_sweep *sw, const char *dir, int *n_figs);

#endif
