/*
 * Simulation reports: per-job CSV, time-series CSV, the JSON summary of
 * issue 3, print-ready figures (SVG and PDF, figure.h) and a self-contained
 * HTML page with a summary table and the same figures inline. One
 * report covers every policy run on the same trace. Writers take a FILE* (the
 * simulator floor may do I/O) and produce byte-identical output for identical
 * input: numbers are printed with fixed formats, never with the locale.
 */
#ifndef RUBICK_REPORT_H
#define RUBICK_REPORT_H

#include "rubick/error.h"
#include "rubick/metrics.h"
#include "rubick/oracle.h"

#include <stdint.h>
#include <stdio.h>

struct rk_sim_plan_change; /* sim.h */

/*
 * Capacity loaning over one run (issue 5, docs/aryl.md): what `rubick sim
 * --inference` prints on its "loan" line. Usage is over the arrival window
 * (first to last submit), as fractions: training = training GPUs held / GPUs
 * available to training (training + lent); cluster = (training GPUs held +
 * inference's needed GPUs) / all cluster_gpus.
 */
struct rk_report_loan {
	int64_t servers_lent;        /* loan events, servers */
	int64_t servers_reclaimed;   /* servers given back */
	int64_t reclaim_preemptions; /* jobs preempted to give servers back */
	int64_t reclaim_scale_ins;   /* elastic jobs scaled in instead */
	double preemptions_per_reclaimed_server; /* 0 when none was reclaimed */
	double lent_gpu_hours;       /* GPU-hours of lent servers up */
	double window_days;          /* the arrival window */
	double training_usage;       /* 0..1 */
	double cluster_usage;        /* 0..1 */
	int cluster_gpus;            /* training + inference */
};

/* One policy's run on the trace. All pointers borrowed. */
struct rk_report_run {
	const char *policy;                    /* registry name, e.g. "fifo" */
	struct rk_sim_summary summary;
	double wall_s;                         /* wall-clock seconds the run took (0 = not measured) */
	const struct rk_job_outcome *outcomes; /* per job, in trace order */
	int n_outcomes;
	const struct rk_sim_sample *samples;   /* sorted by t_ms */
	int n_samples;
	const struct rk_sim_plan_change *plans; /* sim.h: the plans applied, in order; NULL = none */
	int n_plans;
	int has_oracle_stats;                  /* 1 = oracle_stats is filled */
	struct rk_oracle_stats oracle_stats;
	const struct rk_report_loan *loan;     /* NULL: the run had no capacity loaning */
	const struct rk_report_seeds *seeds;   /* NULL: one seed (no `--seeds`) */
};

/*
 * Repetitions over seeds (`rubick sim --seeds A-B`, src/sim/report/report_seeds.c):
 * one value per seed of the figures a paper compares, in seed order. The
 * run's own summary, outcomes and samples are those of the first seed.
 */
enum rk_report_figure { RK_FIG_AVG_JCT, RK_FIG_P99_JCT, RK_FIG_MAKESPAN, RK_FIG_COUNT };

struct rk_report_seeds {
	int n;                              /* seeds run, >= 1 */
	const double *values[RK_FIG_COUNT]; /* n values each, seconds */
	/* n values each, or NULL (not recorded): the report's bars then have no interval */
	const double *gpu_hours;            /* GPU-hours */
	const double *reconfigs;            /* reconfigurations per job */
	const double *gpu_util;             /* GPU utilisation, 0..1 */
	const uint64_t *seed;               /* n: the --seeds value of each repetition, or NULL */
	/* n arrays, or NULL: each repetition's per-job outcomes ([0] is the run's own);
	 * with `seed`, jobs.csv prints every repetition's rows. */
	const struct rk_job_outcome *const *outcomes;
	const int *n_outcomes;
};

/* Mean and 95% interval of n values: mean ± t(0.975, n-1) · sd / √n (Student t). */
struct rk_report_stat {
	double mean, sd; /* sd: sample standard deviation (n - 1); 0 when n < 2 */
	double half95;   /* half-width of the interval; 0 when n < 2 */
};

/* The two-sided 95% Student t quantile t(0.975, df), df >= 1. */
double rk_report_t975(int df);
/* Statistics of v[0..n) (n >= 1). OUT: *st. RK_EINVAL when n < 1 or v is NULL. */
int rk_report_stat_compute(const double *v, int n, struct rk_report_stat *st);
/* Figure names as printed: "avg_jct_s", "p99_jct_s", "makespan_s". */
const char *rk_report_figure_name(enum rk_report_figure k);
/* Figure k of a summary. */
double rk_report_figure_value(const struct rk_sim_summary *s, enum rk_report_figure k);

/* One input a run read, by its content (docs/sim.md "Provenance"). */
struct rk_report_input {
	const char *role;   /* "trace", "oracle", "zoo", "cluster", "interference", ... */
	const char *path;   /* as the run opened it */
	const char *kind;   /* "file" or "dir" */
	const char *sha256; /* 64 hex digits: a file's bytes, a folder's manifest */
};

/*
 * What a report records about the invocation that produced it (summary.json's
 * "meta", the HTML header): everything needed to rerun it, and to tell which
 * source, data and seeds made it. The provenance part is optional: NULL
 * strings and zero counts are left out of both outputs.
 */
struct rk_report_meta {
	const char *version;              /* rubick's version */
	const char *command;              /* the command line, shell-quoted */
	const char *const *option_keys;   /* every option with its effective value ... */
	const char *const *option_values; /* ... (defaults included), n_options of each */
	int n_options;
	uint64_t workload_seed, policy_seed; /* of the first (or only) run */
	/* Provenance. */
	const char *source;     /* "git" (built from a checkout) or "release" (from a tarball) */
	const char *commit;     /* the checkout's HEAD, 40 hex digits; "" for a release */
	int dirty;              /* 1 = tracked files differed from HEAD; 0 = clean; -1 = unknown */
	const char *build_type; /* meson's buildtype, e.g. "debugoptimized" */
	const char *sanitize;   /* meson's b_sanitize, e.g. "none", "address,undefined" */
	const char *timestamp;  /* UTC, ISO 8601: "2026-12-02T05:01:02Z" */
	const char *host;       /* the node name (uname -n) */
	const struct rk_report_input *inputs; /* every input read, n_inputs of them */
	int n_inputs;
	const uint64_t *rep_workload_seeds; /* per repetition, in run order, n_reps of each */
	const uint64_t *rep_policy_seeds;   /* (one without --seeds) */
	int n_reps;
	const char *workload_seed_draws; /* what the workload seed changes on this trace */
};

/* The whole report. All pointers borrowed; strings may be NULL (printed as ""). */
struct rk_report {
	const char *trace;   /* trace file or name */
	int jobs;            /* jobs in the trace */
	const char *cluster; /* cluster spec as given */
	const char *oracle;  /* "model" or "measured=DIR" */
	double interval_s;   /* scheduling interval */
	double restart_cost_s;
	uint64_t seed;
	const struct rk_report_run *runs;
	int n_runs;
	/* Optional parts (zero/NULL = absent, and nothing of them is printed). */
	const struct rk_report_meta *meta; /* summary.json "meta", HTML header */
	const char *normalize; /* policy the HTML bars are relative to; NULL = the first run */
	int seeds_n;           /* > 0: runs repeated over seeds seeds_first..seeds_last */
	uint64_t seeds_first, seeds_last;
	const char *seeds_vary; /* which seeds the range sets: "workload+policy", ... */
};

/*
 * Per-job CSV, one row per (policy, job):
 * policy,id,name,model,req_gpus,submit_s,first_start_s,finish_s,jct_s,queue_s,
 * restarts,preemptions,completed,gpu_s,guaranteed,sla_below_s,rejected,reason
 * (sla_below_s: running seconds below the guaranteed baseline; reason: why
 * the job was rejected at submission, else empty). Unknown times are empty
 * fields. Under --seeds (r->seeds_n > 0) a last column `seed` follows: the
 * repetition's seed from the range (the workload seed, unless
 * --workload-seed pins it, then the policy seed), and a run whose seeds
 * carry every repetition's outcomes prints them all, repetition by
 * repetition (else its own rows, under seeds_first).
 * Strings containing ',' '"' or newlines are quoted (RFC 4180).
 */
int rk_report_write_jobs_csv(FILE *f, const struct rk_report *r, struct rk_error *err);

/* Time series CSV: policy,t_s,gpus_alloc,gpus_total,queue_len,running. */
int rk_report_write_samples_csv(FILE *f, const struct rk_report *r, struct rk_error *err);

/*
 * Plan log CSV, one row per start, resume or reconfiguration a run applied
 * (rk_sim_result.plans): policy,t_s,id,name,gpus,plan with the plan in
 * canonical form (quoted: it holds commas) and the name from the run's
 * outcomes. Shows which plans each policy really ran.
 */
int rk_report_write_plans_csv(FILE *f, const struct rk_report *r, struct rk_error *err);

/*
 * The summary object: {"trace":..., "jobs":N, "cluster":..., "oracle":...,
 * "interval_s":..., "restart_cost_s":..., "seed":N, "results":[{"policy":...,
 * "avg_jct_s":..., "median_jct_s":..., "p95_jct_s":..., "p99_jct_s":...,
 * "max_jct_s":..., "makespan_s":..., "avg_queue_s":..., "gpu_util":...,
 * "gpu_hours":..., "reconfigs":..., "preemptions":..., "completed":N,
 * "unfinished":N, "never_started":N, "avg_queue_len":..., "max_queue_len":N,
 * "wall_s":..., "rejected":N, "guaranteed":N, "sla_violations":N,
 * "sla_violation_s":..., "sla_worst_ratio":..., "oracle_lookups":{"exact":N,...},
 * "loan":{"servers_lent":N, "servers_reclaimed":N, "reclaim_preemptions":N,
 * "reclaim_scale_ins":N, "preemptions_per_reclaimed_server":..., "lent_gpu_hours":...,
 * "window_days":..., "training_usage":..., "cluster_usage":..., "cluster_gpus":N}}]}
 * (metrics.h defines the guaranteed-job fields). "reconfigs" is
 * reconfigurations per job; "oracle_lookups" appears when the run has oracle
 * stats, "seeds" when it has repetitions ({"n":N, "avg_jct_s":{"mean":...,
 * "sd":..., "ci95_lo":..., "ci95_hi":..., "half95":..., "values":[...]},
 * "p99_jct_s":{...}, "makespan_s":{...}, then "gpu_util", "gpu_hours" and
 * "reconfigs" alike when the seeds carry them}; the top level then has "seeds":
 * {"first":A, "last":B, "n":N, "vary":...}), "meta" (last) when r->meta is set
 * ({"version":..., "command":..., "workload_seed":N, "policy_seed":N,
 * "source":{"from":"git"|"release", "commit":..., "dirty":true|false|null},
 * "build":{"type":..., "sanitize":...}, "timestamp":..., "host":...,
 * "repetitions":[{"run":1, "workload_seed":N, "policy_seed":N},...],
 * "workload_seed_draws":..., "inputs":[{"role":..., "path":..., "kind":"file"|"dir",
 * "sha256":...},...], "options":{KEY:VALUE,...}}: each provenance key only
 * when struct rk_report_meta has it; docs/sim.md "Provenance"), "loan" when
 * it has loan figures (struct rk_report_loan). Reals are
 * printed with 12 significant digits, keys in this order. OUT: *json, a NUL-terminated string the
 * caller frees with free(). `pretty` = 1 indents by 2.
 */
int rk_report_json_encode(const struct rk_report *r, int pretty, char **json,
			  struct rk_error *err);

/* rk_report_json_encode written to `f` with a final newline. */
int rk_report_write_json(FILE *f, const struct rk_report *r, int pretty, struct rk_error *err);

/*
 * The report's figures (src/sim/report/report_figures.c), drawn through
 * figure.h, in this order and under these names (file stems fig-NAME):
 *   bars       average JCT, p99 JCT and makespan of each policy relative to
 *              `normalize` (the first run when NULL; seconds when that run
 *              completed nothing); under --seeds the mean over seeds with
 *              the 95% Student t interval as error bars, dashed line at 1
 *   jct-cdf    empirical CDF of completed jobs' JCT (log x when JCTs span
 *              more than 100x); under --seeds one line per policy over every
 *              repetition's jobs pooled when its seeds carry their outcomes
 *              (else the first seed's), the caption says which
 *   gpu-util   allocated / total GPUs over time, 200 time bins
 *   queue      pending jobs over time, 200 time bins (both the first seed's
 *              run under --seeds: repetitions keep no samples)
 *   gpu-hours  GPU-hours each policy used (seed interval when recorded)
 *   reconfigs  reconfigurations per job (seed interval when recorded)
 * A report without runs has only the three line figures.
 */
#define RK_REPORT_FIGS_MAX 8

struct rk_figure;

struct rk_report_fig {
	const char *name;    /* "bars", "jct-cdf", ... (static) */
	const char *heading; /* "Policies compared", "JCT CDF", ... (static) */
	char caption[768];   /* what the figure shows, units and reference (plain text) */
	struct rk_figure *fig;
};

struct rk_report_figs {
	struct rk_report_fig f[RK_REPORT_FIGS_MAX];
	int n;
};

/*
 * Build the figures of r. OUT: *out (release with rk_report_figures_fini,
 * also after a failure). RK_EINVAL when `normalize` names no run or a run's
 * lists (or a repetition's outcomes) are bad, RK_ENOMEM.
 */
int rk_report_figures(const struct rk_report *r, struct rk_report_figs *out,
		      struct rk_error *err);
void rk_report_figures_fini(struct rk_report_figs *figs);

/*
 * Write every figure of r as DIR/fig-NAME.svg and DIR/fig-NAME.pdf (DIR
 * exists). err names the file that failed and why.
 */
int rk_report_write_figures(const char *dir, const struct rk_report *r, struct rk_error *err);

/*
 * Self-contained HTML page (no external scripts, fonts, styles or links):
 * the invocation (meta: command, source, build, time, host, what the
 * workload seed draws, every run's seeds, the inputs' sha256) when given, a summary table (with the seed
 * intervals under --seeds), the oracle's lookups by rule for runs that carry
 * them, then the figures of rk_report_figures, each the same SVG as its
 * fig-NAME.svg file (rk_figure_svg_text: its own xmlns, text as outlines,
 * ids prefixed per figure) under a heading with its caption.
 */
int rk_report_write_html(FILE *f, const struct rk_report *r, struct rk_error *err);

/*
 * Plain-text comparison table (what `rubick sim` prints without --json): one
 * row per policy with the main figures; `sla_viol` is "V/G" (guaranteed
 * jobs that ran below their baseline / guaranteed jobs), `rejected` the jobs
 * rejected over a quota. New columns are appended (scripts read by position).
 * Under --seeds a second block follows: per policy, mean ± 95% half-width of
 * avg_jct_s, p99_jct_s and makespan_s over the seeds.
 */
int rk_report_write_table(FILE *f, const struct rk_report *r, struct rk_error *err);

/* s as HTML text: its five special characters escaped (NULL prints nothing). */
void rk_report_put_html_text(FILE *f, const char *s);
/* s as one CSV field, quoted (RFC 4180) when it holds a comma, a quote or a line break
 * (a policy name like sia[p=1,lambda_n=0.5] does); NULL prints an empty field. */
void rk_report_put_csv_field(FILE *f, const char *s);

#endif
