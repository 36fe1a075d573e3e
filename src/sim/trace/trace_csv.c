/*
 * Field splitting and typed field readers shared by every trace reader. Fields
 * stay slices of the caller's buffer; numbers are parsed from a small stack
 * copy, so a line costs no allocation (bench_trace: philly.csv's 82k lines in
 * well under 0.5 s).
 */
#include "sim/trace/trace_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest text a number field may have; longer is not a number we accept. */
#define NUM_TEXT_MAX 48

int trace_split(const char *line, size_t len, char sep, int lineno, struct trace_row *row)
{
	size_t i = 0;
	row->n = 0;
	row->line = lineno;
	for (;;) {
		if (row->n == TRACE_FIELDS_MAX)
			return RK_ERANGE;
		size_t a = i;
		/* Spaces around a field are padding, never data. */
		while (a < len && (line[a] == ' ' || (line[a] == '\t' && sep != '\t')))
			a++;
		size_t b, next;
		if (sep == ',' && a < len && line[a] == '"') {
			/* A quoted field (the native format's canonical plans hold commas);
			 * no doubled quotes inside, so the field stays a slice. */
			const char *q = memchr(line + a + 1, '"', len - a - 1);
			if (!q)
				return RK_EINVAL;
			b = (size_t)(q - line);
			next = b + 1;
			while (next < len && line[next] == ' ')
				next++;
			if (next < len && line[next] != sep)
				return RK_EINVAL;
			a++;
		} else {
			const char *q = memchr(line + a, sep, len - a);
			next = q ? (size_t)(q - line) : len;
			b = next;
			while (b > a && (line[b - 1] == ' ' || (line[b - 1] == '\t' && sep != '\t')))
				b--;
		}
		struct trace_field *f = &row->f[row->n++];
		f->p = line + a;
		f->len = b - a;
		f->col = (int)a + 1;
		if (next >= len)
			return 0;
		i = next + 1;
		if (i == len) { /* a trailing separator ends with one empty field */
			if (row->n == TRACE_FIELDS_MAX)
				return RK_ERANGE;
			row->f[row->n++] = (struct trace_field){line + len, 0, (int)len + 1};
			return 0;
		}
	}
}

int trace_fail(struct trace_ctx *ctx, const struct trace_row *r, int idx, int code,
	       const char *fmt, ...)
{
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	int col = (idx >= 0 && idx < r->n) ? r->f[idx].col : 1;
	return rk_error_set(ctx->err, code, "%s:%d:%d: %s", ctx->filename, r->line, col, what);
}

int trace_has(const struct trace_row *r, int idx)
{
	return idx >= 0 && idx < r->n && r->f[idx].len > 0;
}

int trace_field_is(const struct trace_field *f, const char *s)
{
	size_t n = strlen(s);
	if (n != f->len)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (tolower((unsigned char)f->p[i]) != tolower((unsigned char)s[i]))
			return 0;
	return 1;
}

/* Copy a field for strtod/strtoll; 0 if it is empty or too long to be a number. */
static int num_text(const struct trace_field *f, char buf[NUM_TEXT_MAX])
{
	if (f->len == 0 || f->len >= NUM_TEXT_MAX)
		return 0;
	memcpy(buf, f->p, f->len);
	buf[f->len] = '\0';
	return 1;
}

/* Parse a whole field as a finite double; 0 on any junk. */
static int parse_f64(const struct trace_field *f, double *out)
{
	char buf[NUM_TEXT_MAX];
	if (!num_text(f, buf) || isspace((unsigned char)buf[0]))
		return 0;
	char *end;
	errno = 0;
	double v = strtod(buf, &end);
	if (end == buf || *end != '\0' || errno == ERANGE || !isfinite(v))
		return 0;
	*out = v;
	return 1;
}

int trace_is_number(const struct trace_field *f)
{
	double v;
	return parse_f64(f, &v);
}

/* Show a field in a message: at most 40 bytes, so a junk line cannot flood it. */
static int shown_len(const struct trace_field *f)
{
	return f->len > 40 ? 40 : (int)f->len;
}

static int missing(struct trace_ctx *ctx, const struct trace_row *r, int idx, const char *col)
{
	if (idx < 0 || idx >= r->n)
		return trace_fail(ctx, r, -1, RK_EINVAL, "column '%s': missing (line has %d fields)",
				  col, r->n);
	return trace_fail(ctx, r, idx, RK_EINVAL, "column '%s': empty", col);
}

int trace_get_f64(struct trace_ctx *ctx, const struct trace_row *r, int idx, const char *col,
		  double min, double max, double *out)
{
	if (!trace_has(r, idx))
		return missing(ctx, r, idx, col);
	const struct trace_field *f = &r->f[idx];
	double v;
	if (!parse_f64(f, &v))
		return trace_fail(ctx, r, idx, RK_EINVAL, "column '%s': '%.*s' is not a number", col,
				  shown_len(f), f->p);
	if (v < min || v > max)
		return trace_fail(ctx, r, idx, RK_ERANGE, "column '%s': %.*s is outside [%g, %g]",
				  col, shown_len(f), f->p, min, max);
	*out = v;
	return 0;
}

int trace_get_i64(struct trace_ctx *ctx, const struct trace_row *r, int idx, const char *col,
		  int64_t min, int64_t max, int64_t *out)
{
	if (!trace_has(r, idx))
		return missing(ctx, r, idx, col);
	const struct trace_field *f = &r->f[idx];
	char buf[NUM_TEXT_MAX];
	int64_t v = 0;
	int ok = 0;
	if (num_text(f, buf) && !isspace((unsigned char)buf[0])) {
		char *end;
		errno = 0;
		long long ll = strtoll(buf, &end, 10);
		if (end != buf && *end == '\0' && errno != ERANGE) {
			v = ll;
			ok = 1;
		} else {
			/* Several traces write counts as "66.0": accept integral decimals. */
			double d;
			if (parse_f64(f, &d) && d == floor(d) && fabs(d) < 9.0e15) {
				v = (int64_t)d;
				ok = 1;
			}
		}
	}
	if (!ok)
		return trace_fail(ctx, r, idx, RK_EINVAL, "column '%s': '%.*s' is not an integer",
				  col, shown_len(f), f->p);
	if (v < min || v > max)
		return trace_fail(ctx, r, idx, RK_ERANGE,
				  "column '%s': %lld is outside [%lld, %lld]", col, (long long)v,
				  (long long)min, (long long)max);
	*out = v;
	return 0;
}

int trace_get_int(struct trace_ctx *ctx, const struct trace_row *r, int idx, const char *col,
		  int min, int max, int *out)
{
	int64_t v;
	int rc = trace_get_i64(ctx, r, idx, col, min, max, &v);
	if (rc == 0)
		*out = (int)v;
	return rc;
}

int trace_get_str(struct trace_ctx *ctx, const struct trace_row *r, int idx, const char *col,
		  char *dst, size_t cap, int truncate)
{
	if (!trace_has(r, idx))
		return missing(ctx, r, idx, col);
	const struct trace_field *f = &r->f[idx];
	size_t n = f->len;
	if (n >= cap) {
		if (!truncate)
			return trace_fail(ctx, r, idx, RK_ERANGE,
					  "column '%s': '%.*s...' is longer than %zu characters",
					  col, shown_len(f), f->p, cap - 1);
		n = cap - 1;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)f->p[i] < 0x20)
			return trace_fail(ctx, r, idx, RK_EINVAL,
					  "column '%s': control character 0x%02x", col,
					  (unsigned)(unsigned char)f->p[i]);
	memcpy(dst, f->p, n);
	dst[n] = '\0';
	return 0;
}

int trace_header_matches(const struct trace_row *hdr, const struct trace_col *cols)
{
	for (const struct trace_col *c = cols; c->name; c++) {
		if (!c->required)
			continue;
		int found = 0;
		for (int i = 0; i < hdr->n && !found; i++)
			found = trace_field_is(&hdr->f[i], c->name);
		if (!found)
			return 0;
	}
	return 1;
}

int trace_header_map(struct trace_ctx *ctx, const struct trace_reader *rd,
		     const struct trace_row *hdr)
{
	int k = 0;
	for (const struct trace_col *c = rd->cols; c->name; c++, k++) {
		ctx->col_of[k] = -1;
		for (int i = 0; i < hdr->n; i++) {
			if (!trace_field_is(&hdr->f[i], c->name))
				continue;
			if (ctx->col_of[k] >= 0)
				return trace_fail(ctx, hdr, i, RK_EINVAL,
						  "header: column '%s' appears twice", c->name);
			ctx->col_of[k] = i;
		}
		if (ctx->col_of[k] < 0 && c->required)
			return trace_fail(ctx, hdr, -1, RK_EINVAL,
					  "header: missing column '%s' (format %s)", c->name,
					  rd->name);
	}
	ctx->n_header = hdr->n;
	return 0;
}

int64_t trace_s_to_ms(double s)
{
	return (int64_t)llround(s * 1000.0);
}

int trace_model_known(const struct trace_ctx *ctx, const char *name)
{
	for (const char *const *m = ctx->models; *m; m++)
		if (strcmp(*m, name) == 0)
			return 1;
	return 0;
}

int trace_split_fail(struct trace_ctx *ctx, int lineno, int rc)
{
	if (rc == RK_ERANGE)
		return rk_error_set(ctx->err, rc, "%s:%d:1: more than %d fields", ctx->filename,
				    lineno, TRACE_FIELDS_MAX);
	return rk_error_set(ctx->err, RK_EINVAL,
			    "%s:%d:1: unbalanced double quote (a quoted field must end in '\"' "
			    "followed by the separator)",
			    ctx->filename, lineno);
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant, "chrono-compatible
 * low-level date algorithms", days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* Read exactly `n` digits at *p into *v. */
static int digits(const char **p, const char *end, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (*p >= end || **p < '0' || **p > '9')
			return 0;
		*v = *v * 10 + (**p - '0');
	}
	return 1;
}

int trace_parse_datetime(const struct trace_field *f, int64_t *out_s)
{
	static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	const char *p = f->p, *end = f->p + f->len;
	if (end > p && end[-1] == 'Z')
		end--; /* `rubick history` writes UTC with a Z */
	int y, mo, d, h, mi, s;
	if (!digits(&p, end, 4, &y) || p >= end || *p++ != '-' || !digits(&p, end, 2, &mo) ||
	    p >= end || *p++ != '-' || !digits(&p, end, 2, &d) || p >= end ||
	    (*p != ' ' && *p != 'T'))
		return 0;
	p++;
	if (!digits(&p, end, 2, &h) || p >= end || *p++ != ':' || !digits(&p, end, 2, &mi) ||
	    p >= end || *p++ != ':' || !digits(&p, end, 2, &s) || p != end)
		return 0;
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap) ||
	    h > 23 || mi > 59 || s > 60)
		return 0;
	*out_s = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
	return 1;
}

int trace_parse_hms(const struct trace_field *f, double *out_s)
{
	const char *p = f->p, *end = f->p + f->len;
	int64_t days = 0, part[3];
	int n = 0, has_days = 0;
	const char *dash = memchr(p, '-', f->len);
	if (dash) {
		if (dash == p || dash - p > 6)
			return 0;
		for (; p < dash; p++) {
			if (*p < '0' || *p > '9')
				return 0;
			days = days * 10 + (*p - '0');
		}
		p++;
		has_days = 1;
	}
	double frac = 0;
	for (;;) {
		const char *q = p;
		int64_t v = 0;
		while (q < end && *q >= '0' && *q <= '9' && q - p < 9)
			v = v * 10 + (*q++ - '0');
		if (q == p || n == 3)
			return 0;
		part[n++] = v;
		if (q < end && *q == '.') { /* MM:SS.mmm: sacct's short steps */
			double scale = 0.1;
			for (q++; q < end && *q >= '0' && *q <= '9'; q++, scale /= 10)
				frac += (*q - '0') * scale;
			if (q != end)
				return 0;
		}
		if (q == end)
			break;
		if (*q != ':')
			return 0;
		p = q + 1;
	}
	/* [D-]HH:MM:SS or MM:SS[.mmm]: minutes and seconds below 60 */
	if (n < 2 || (has_days && n != 3) || part[n - 1] > 59 || (n == 3 && part[1] > 59))
		return 0;
	int64_t s = n == 3 ? part[0] * 3600 + part[1] * 60 + part[2] : part[0] * 60 + part[1];
	*out_s = (double)(days * 86400 + s) + frac;
	return 1;
}

void trace_finish_relative(struct rk_trace *t)
{
	if (t->n == 0)
		return;
	int64_t first = t->jobs[0].submit_ms;
	for (size_t i = 1; i < t->n; i++)
		if (t->jobs[i].submit_ms < first)
			first = t->jobs[i].submit_ms;
	for (size_t i = 0; i < t->n; i++)
		t->jobs[i].submit_ms -= first;
}
