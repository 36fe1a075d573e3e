/*
 * Trace readers: every public job trace the simulator replays (Rubick, Sia/Pollux,
 * Pollux philly.csv, Gavel/Shockwave, Muri, Synergy, Tiresias, Alibaba PAI 2023
 * and rubick's native CSV) and a site's own history (Slurm's `sacct -P`,
 * `rubick history --csv/--json`) parsed from a text buffer into one job record. The
 * format is auto-detected from the first line (the header, or the field layout
 * for header-less formats). Where a trace names no zoo model, a documented,
 * seeded mapping assigns one (docs/trace-format.md); the record says so.
 * No I/O: the caller reads the file and passes its bytes and name.
 */
#ifndef RUBICK_TRACE_H
#define RUBICK_TRACE_H

#include "rubick/error.h"
#include "rubick/job.h"
#include "rubick/model.h"
#include "rubick/plan.h"

#include <stddef.h>
#include <stdint.h>

struct rk_zoo; /* zoo.h */

#define RK_TRACE_FORMAT_MAX 16   /* "rubick", "philly", ... */
#define RK_TRACE_SOURCE_MAX 64   /* source job type, e.g. "ResNet-50 (batch size 64)" */
#define RK_TRACE_REASONS_MAX 4   /* skipped-line reasons kept */

/* One job as a trace describes it, before the driver turns it into an rk_job. */
struct rk_trace_job {
	char name[RK_JOB_NAME_MAX];     /* unique within the trace ("<format>-<line>" if none given;
					 * a repeated name becomes "<name>~<line>") */
	int64_t submit_ms;              /* arrival, relative to the trace start (>= 0) */
	double duration_s;              /* run time at the requested resources; 0 = unknown */
	int duration_estimated;         /* 1 = duration_s estimated by the reader (Sia/Pollux), not given */
	char model[RK_MODEL_NAME_MAX];  /* zoo key after mapping, e.g. "gpt2"; never empty */
	int model_mapped;               /* 1 = model assigned by the seeded mapping, 0 = given */
	int global_batch;               /* samples per iteration; 0 = the model's default */
	int gpus;                       /* GPUs requested (>= 1) */
	int gpu_milli;                  /* share of each GPU in 1/1000 (1000 = whole GPU; Alibaba < 1000) */
	int cpus;                       /* CPUs requested; 0 = not given (driver default) */
	int64_t mem_mb;                 /* host memory requested (MB); 0 = not given */
	double net_gbps;                /* network bandwidth requested (GB/s); 0 = none */
	char plan[RK_PLAN_TEXT_MAX];    /* plan text as given (canonical or artifact form); "" = none */
	struct rk_plan_space space;     /* plans the job's script can run (plan.h); zeroed = every
					 * plan; `plan` lies inside it */
	int64_t iters;                  /* iterations of `model` to finish; 0 = unknown */
	int64_t source_iters;           /* the trace's own iteration count (of its model); 0 = none */
	int source_batch;               /* the trace's own global batch of its application (Sia's
					 * batch_size), which the stand-in model does not take; 0 = none */
	int guaranteed;                 /* 1 = keeps its requested performance (SLA / guaranteed QoS) */
	char tenant[RK_TENANT_MAX];     /* tenant or virtual cluster; "" = none */
	int min_gpus, max_gpus;         /* elastic range; both == gpus when inelastic */
	int has_range;                  /* 1 = the record gave min_gpus or max_gpus */
	char source_type[RK_TRACE_SOURCE_MAX]; /* the trace's own model / job-type string */
	int line;                       /* 1-based line in the source text, for messages */
};

/* A parsed trace: jobs sorted by submit_ms (ties keep file order). */
struct rk_trace {
	struct rk_trace_job *jobs;      /* owned; n entries */
	size_t n, cap;
	char format[RK_TRACE_FORMAT_MAX]; /* the format read (detected or forced) */
	size_t n_lines;                 /* data lines read (header, blank and comment lines excluded) */
	size_t n_skipped;               /* bad lines skipped (only with skip_bad) */
	size_t n_filtered;              /* good lines dropped by the window / max_jobs options */
	size_t n_no_gpu;                /* rows requesting no GPU (Alibaba CPU-only pods), dropped */
	size_t n_steps;                 /* job steps (sacct 123.batch, 123.0) folded into their job */
	size_t n_unfinished;            /* jobs pending or running when exported (no end), dropped */
	size_t n_unstarted;             /* jobs that ended without running (cancelled before their
					 * start, 0 s elapsed), dropped */
	size_t n_mapped;                /* jobs whose model came from the seeded mapping */
	size_t n_renamed;               /* jobs whose name repeated an earlier one: now "<name>~<line>" */
	int n_reasons;                  /* entries used in `reasons` */
	char reasons[RK_TRACE_REASONS_MAX][256]; /* first skipped lines: "FILE:LINE:COL: why" */
};

struct rk_trace_options {
	int skip_bad;            /* 1 = skip and count bad lines; 0 = the first one fails the parse */
	uint64_t seed;           /* seed of the model mapping: same seed -> same models */
	int64_t window_start_ms; /* keep jobs submitted in [start, end) and shift them by -start */
	int64_t window_end_ms;   /* 0 = no end */
	size_t max_jobs;         /* keep the first N jobs by submit time; 0 = all */
	/*
	 * Zoo keys a trace may name and the mapping may assign, NULL-terminated;
	 * NULL = the bundled zoo (vit, roberta, bert, t5, t5_3b, gpt2, llama7, llama30).
	 */
	const char *const *models;
	/*
	 * The loaded zoo (borrowed), or NULL. When set and `models` is NULL, its
	 * names are the allowed models; Gavel commands are then read with the
	 * launch-command reader (launch.h) against it.
	 */
	const struct rk_zoo *zoo;
};

/* Options with every field at its default (fail on bad lines, seed 0, no window). */
struct rk_trace_options rk_trace_options_default(void);

/*
 * Parse `len` bytes of `text` (need not be NUL-terminated) named `filename` in
 * messages. `format` is "auto" (or NULL) to detect from the first line, or one
 * of rk_trace_formats(). `opt` may be NULL for defaults. On success fills `out`
 * (caller's storage; release with rk_trace_fini). On failure returns a negative
 * RK_E* code, leaves `out` empty and fills `err` with "FILE:LINE:COL: what".
 */
int rk_trace_parse(const char *text, size_t len, const char *filename, const char *format,
		   const struct rk_trace_options *opt, struct rk_trace *out, struct rk_error *err);

/* Release what rk_trace_parse allocated; `t` becomes empty. NULL is allowed. */
void rk_trace_fini(struct rk_trace *t);

/*
 * The black-box share of `t`: jobs whose trace names no zoo model
 * (model_mapped; every sacct job, history jobs without one) run their run time
 * at the request through a stand-in (docs/oracle.md, "Job length"). Returns
 * how many; OUT: *gpu_h their GPU-hours at the request (run time x GPUs x GPU
 * share), *total_gpu_h those of every job with a run time. Either may be NULL.
 */
size_t rk_trace_black_box(const struct rk_trace *t, double *gpu_h, double *total_gpu_h);

/* 1 if format `name` is a site's own history (sacct, history): replays that report
 * their black-box share (docs/replay.md). */
int rk_trace_format_is_history(const char *name);

/* The format names, NULL-terminated, in detection order ("rubick", "sia", ...). */
const char *const *rk_trace_formats(void);

/* One line describing format `name` for --help; NULL if unknown. */
const char *rk_trace_format_summary(const char *name);

/*
 * Write `t` in the native CSV format (docs/trace-format.md) into a new buffer:
 * OUT: *text (NUL-terminated, caller frees) and *len. Parsing the result gives
 * the same jobs (with model_mapped 0: the model is now given). A '"' inside a
 * text field is written as '\''; fields holding commas are quoted. Returns 0 or
 * RK_ENOMEM.
 */
int rk_trace_write_native(const struct rk_trace *t, char **text, size_t *len,
			  struct rk_error *err);

/*
 * The seeded model mapping (docs/trace-format.md, "Model mapping"): the zoo
 * model for a job whose trace gives only `source_type` (a job type such as
 * "ResNet-50 (batch size 64)", "deepspeech2", may be "") and `gpus`. Writes the
 * key into `model` (RK_MODEL_NAME_MAX bytes). `job_key` (the job's name) makes
 * the draw independent of parse order. Returns 0, or RK_ENOTFOUND when no
 * allowed model fits.
 */
int rk_trace_map_model(const char *source_type, int gpus, const char *job_key, uint64_t seed,
		       const char *const *models, char model[RK_MODEL_NAME_MAX]);

/*
 * Load sweeps (src/sim/trace/trace_arrivals.c, `rubick trace --load/--poisson`).
 * rk_trace_scale_load divides every inter-arrival time by `factor` (2 =
 * twice the arrival rate, half the span; the first arrival stays).
 * rk_trace_poisson replaces the arrivals by a Poisson process of
 * `rate_per_h` jobs per hour from the first arrival, drawn from `seed`
 * (same seed, same times), jobs in their trace order. Both keep t sorted and
 * change nothing else; RK_EINVAL for a rate or factor <= 0 or not finite,
 * RK_ERANGE when times would overflow (t unchanged on failure).
 * rk_trace_mean_rate_per_h: (n - 1) jobs over the arrival span (0 when the
 * trace has fewer than two jobs or one instant).
 */
int rk_trace_scale_load(struct rk_trace *t, double factor, struct rk_error *err);
int rk_trace_poisson(struct rk_trace *t, double rate_per_h, uint64_t seed, struct rk_error *err);
double rk_trace_mean_rate_per_h(const struct rk_trace *t);

#endif
