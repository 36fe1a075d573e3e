/*
 * Shared machinery of the trace readers (src/sim/trace/trace_*.c): a line split into
 * fields in place (no allocation), typed field readers that report
 * "FILE:LINE:COL: column 'x': why", header-to-column mapping, and the reader
 * table entry each format file exports. Not a public header.
 */
#ifndef RUBICK_SIM_TRACE_INTERNAL_H
#define RUBICK_SIM_TRACE_INTERNAL_H

#include "rubick/trace.h"

#include <stddef.h>
#include <stdint.h>

/* Most fields one line may have: the widest trace formats have 12, but `sacct -P -o ALL`
 * prints over 100. */
#define TRACE_FIELDS_MAX 128

/* One field: a slice of the caller's buffer, not NUL-terminated. */
struct trace_field {
	const char *p;
	size_t len;
	int col; /* 1-based byte column of the field's first character */
};

struct trace_row {
	struct trace_field f[TRACE_FIELDS_MAX];
	int n;    /* fields on the line */
	int line; /* 1-based line number */
};

/* A column a header-based format reads; `name` as it appears in the header. */
struct trace_col {
	const char *name;
	int required; /* 1 = the header must have it */
};

/* A place in a source text (1-based). */
struct trace_pos {
	int line, col;
};

/* Parse state shared by the dispatcher and one reader. */
struct trace_ctx {
	const char *filename;
	const struct rk_trace_options *opt;
	const char *const *models; /* allowed zoo keys, NULL-terminated, never NULL */
	struct rk_error *err;      /* where row errors go */
	int col_of[TRACE_FIELDS_MAX]; /* reader column index -> field index, -1 = absent */
	int n_header;              /* fields in the header line, 0 when header-less */
	int variant;               /* reader-specific layout choice made from the first line */
	/* Lines rendered from a whole document (rd->doc): src[k] is where line k came from in
	 * the file the user gave, so messages point there. NULL for line formats. */
	const struct trace_pos *src;
	size_t n_src;
};

struct trace_reader {
	const char *name;
	const char *summary;  /* one line for --help */
	char sep;             /* field separator */
	int has_header;       /* 1 = first line names the columns */
	const struct trace_col *cols; /* header formats: columns, terminated by {NULL, 0} */
	/* 1 if `first` (the first non-blank line, split by `sep`) belongs to this format. */
	int (*detect)(const struct trace_row *first);
	/*
	 * Header-less formats: choose ctx->variant from the first data line. Header
	 * formats: called with the header once it is mapped, to reject a header that
	 * lacks every column of a group (sacct: Elapsed or Start and End). NULL = none.
	 */
	int (*begin)(struct trace_ctx *ctx, const struct trace_row *first);
	/*
	 * Fill `job` (pre-set to defaults: gpu_milli 1000, all else 0/"") from one
	 * data line. Returns 0, a TRACE_ROW_* code (> 0) for a line that is no job
	 * to replay, or a negative RK_E* code with ctx->err filled.
	 */
	int (*row)(struct trace_ctx *ctx, const struct trace_row *r, struct rk_trace_job *job);
	/*
	 * Whole-document formats (a JSON export whose first line is "{"): render
	 * `text` as lines of this reader's header format, OUT: *lines (*n bytes,
	 * caller frees) and *src (caller frees): src[k] = the place in `text` of
	 * rendered line k (1-based; line 1 is the header). NULL = lines only.
	 */
	int (*doc)(struct trace_ctx *ctx, const char *text, size_t len, char **lines, size_t *n,
		   struct trace_pos **src);
	/* After all lines: e.g. make wall-clock times relative. May be NULL. */
	void (*finish)(struct rk_trace *t);
};

/*
 * What a reader's row() may return for a good line that carries no job to
 * replay; the dispatcher counts each in its rk_trace counter.
 */
enum {
	TRACE_ROW_STEP = 1,       /* a job step (sacct 123.batch), folded into its job: n_steps */
	TRACE_ROW_UNFINISHED = 2, /* pending or running when exported (no end): n_unfinished */
	TRACE_ROW_UNSTARTED = 3,  /* ended without running (cancelled before start): n_unstarted */
};

extern const struct trace_reader rk_trace_reader_rubick;
extern const struct trace_reader rk_trace_reader_sia;
extern const struct trace_reader rk_trace_reader_philly;
extern const struct trace_reader rk_trace_reader_gavel;
extern const struct trace_reader rk_trace_reader_muri;
extern const struct trace_reader rk_trace_reader_synergy;
extern const struct trace_reader rk_trace_reader_tiresias;
extern const struct trace_reader rk_trace_reader_alibaba;
extern const struct trace_reader rk_trace_reader_native;
extern const struct trace_reader rk_trace_reader_sacct;
extern const struct trace_reader rk_trace_reader_history;

/*
 * Split `len` bytes at `line` by `sep` into `row`. With sep ',' a field may be
 * double-quoted (no quotes inside). Returns 0, RK_ERANGE past TRACE_FIELDS_MAX
 * fields, or RK_EINVAL for an unterminated quote or text after a closing one.
 */
int trace_split(const char *line, size_t len, char sep, int lineno, struct trace_row *row);

/* Report a trace_split failure `rc` for line `lineno`. */
int trace_split_fail(struct trace_ctx *ctx, int lineno, int rc);

/* Fill ctx->err with "FILE:LINE:COL: <fmt>" pointing at field `idx` of `r` (-1 = line). */
int trace_fail(struct trace_ctx *ctx, const struct trace_row *r, int idx, int code,
	       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Field index of reader column `c` in this file, -1 if absent. */
static inline int trace_idx(const struct trace_ctx *ctx, int c)
{
	return ctx->col_of[c];
}

/* 1 if field `idx` exists and is non-empty. */
int trace_has(const struct trace_row *r, int idx);

/* Case-insensitive comparison of a field with a NUL-terminated string. */
int trace_field_is(const struct trace_field *f, const char *s);

/*
 * Typed readers of field `idx`, named `col` in messages. Empty, non-numeric,
 * out-of-[min, max] values fail with the column and the offending text.
 */
int trace_get_i64(struct trace_ctx *ctx, const struct trace_row *r, int idx, const char *col,
		  int64_t min, int64_t max, int64_t *out);
int trace_get_int(struct trace_ctx *ctx, const struct trace_row *r, int idx, const char *col,
		  int min, int max, int *out);
int trace_get_f64(struct trace_ctx *ctx, const struct trace_row *r, int idx, const char *col,
		  double min, double max, double *out);
/* Copy field `idx` into `dst` (`cap` bytes); longer than cap-1 fails unless `truncate`. */
int trace_get_str(struct trace_ctx *ctx, const struct trace_row *r, int idx, const char *col,
		  char *dst, size_t cap, int truncate);

/* 1 if the text of `f` parses completely as a finite number. */
int trace_is_number(const struct trace_field *f);

/* Header formats: 1 if the header row holds every required column of `cols`. */
int trace_header_matches(const struct trace_row *hdr, const struct trace_col *cols);

/* Fill ctx->col_of from the header; a missing required column fails at line 1. */
int trace_header_map(struct trace_ctx *ctx, const struct trace_reader *rd,
		     const struct trace_row *hdr);

/* The bundled zoo's keys, NULL-terminated: the default of rk_trace_options.models. */
extern const char *const trace_default_models[];

/* Seconds (may be fractional) to integer milliseconds, rounded to nearest. */
int64_t trace_s_to_ms(double s);

/* 1 if `name` is one of ctx->models (case-sensitive zoo keys). */
int trace_model_known(const struct trace_ctx *ctx, const char *name);

/*
 * Check plan text for `gpus` GPUs and global batch `batch` (0 = unknown):
 * artifact forms ga, gc, zero-dp, zero-offload, a 3-digit (PP,TP,DP) code whose
 * digits multiply to `gpus`, or canonical "dp=..,tp=..,...". On failure writes
 * the reason into `why` (`cap` bytes) and returns RK_EINVAL.
 */
int trace_plan_check(const char *plan, int gpus, int batch, char *why, size_t cap);

/*
 * Read optional field `idx` (column `col`) as a plan space (rk_plan_space_parse)
 * into job->space; absent or empty leaves every plan. A bad item fails at its
 * own column ("FILE:LINE:COL: column 'space': ..."). A canonical job->plan
 * (already read, from field `plan_idx`) outside the space fails naming the
 * job and the dimension; artifact plans are checked once resolved
 * (rk_sim_jobs_from_trace).
 */
int trace_get_space(struct trace_ctx *ctx, const struct trace_row *r, int idx, const char *col,
		    int plan_idx, struct rk_trace_job *job);

/*
 * Take field `idx` as a zoo key (lower-cased) into job->model and
 * job->source_type; a name outside ctx->models fails with RK_ENOTFOUND.
 */
int trace_get_model(struct trace_ctx *ctx, const struct trace_row *r, int idx, const char *col,
		    struct rk_trace_job *job);

/* A uniform draw in [0, 1) from (seed, key): deterministic, independent of parse order. */
double trace_unit_draw(uint64_t seed, const char *key);

/* Give `job` a zoo model through the seeded mapping from its source_type. */
int trace_assign_model(struct trace_ctx *ctx, const struct trace_row *r, int idx,
		       struct rk_trace_job *job);

/*
 * "YYYY-MM-DD HH:MM:SS" or "YYYY-MM-DDTHH:MM:SS" with an optional trailing 'Z'
 * -> seconds since the Unix epoch (the clock is taken as UTC: only differences
 * matter to a replay). 1 on success, 0 if `f` is not such a date.
 */
int trace_parse_datetime(const struct trace_field *f, int64_t *out_s);

/* "[D-]HH:MM:SS" or "MM:SS[.mmm]" (sacct's Elapsed) -> seconds; 0 if not one. */
int trace_parse_hms(const struct trace_field *f, double *out_s);

/* A finish() for wall-clock formats: times become relative to the earliest submission. */
void trace_finish_relative(struct rk_trace *t);

#endif
