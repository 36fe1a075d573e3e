/*
 * A tiny line/field scanner for comma- and space-separated tables: the ones
 * src/model reads (measured placements, profiles) and the simulator's oracle
 * tables (Sia profiles, validation targets). Works on a caller-owned buffer;
 * never allocates; tracks line and column for messages.
 */
#ifndef RUBICK_CSVLINE_H
#define RUBICK_CSVLINE_H

#include "rubick/error.h"

#include <stddef.h>

#define RK_CSV_FIELDS_MAX 24
#define RK_CSV_FIELD_MAX 128

struct rk_csv {
	const char *text;
	size_t len, pos;
	int line;     /* 1-based number of the line last read */
	char sep;     /* ',' or ' ' (space: runs of blanks/tabs separate) */
	/* the fields of the line last read, NUL-terminated copies */
	int n;
	char field[RK_CSV_FIELDS_MAX][RK_CSV_FIELD_MAX];
	int col[RK_CSV_FIELDS_MAX]; /* 1-based column where each field starts */
};

/* Start scanning; skips a UTF-8 byte-order mark. */
void rk_csv_init(struct rk_csv *c, const char *text, size_t len, char sep);

/*
 * Read the next line that is not blank (and, when skip_comments, not starting
 * with '#'). Returns 1 with fields filled, 0 at the end, or a negative RK_E*
 * code (too many fields, a field too long, a NUL byte) with err naming
 * name:line:col.
 */
int rk_csv_next(struct rk_csv *c, int skip_comments, const char *name, struct rk_error *err);

/*
 * Map the header line last read to columns: OUT idx[k] (n entries) is the
 * field index of names[k], or -1 when the header lacks it (callers decide which
 * columns are required). An unknown name is an error "name:line:col: unknown
 * column 'X'" followed by `hint` (may be "", e.g. " (expected a, b)"); a
 * repeated one "name:line:col: duplicate column 'X'".
 */
int rk_csv_header(const struct rk_csv *c, const char *name, const char *const *names, int n,
		  int *idx, const char *hint, struct rk_error *err);

/* Parse field i as a finite double >= 0. */
int rk_csv_double(const struct rk_csv *c, int i, const char *name, const char *what, double *out,
		  struct rk_error *err);

/* Parse field i as an integer in [lo, hi]. */
int rk_csv_int(const struct rk_csv *c, int i, const char *name, const char *what, long lo,
	       long hi, long *out, struct rk_error *err);

#endif
