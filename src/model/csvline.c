/* Line/field scanner for src/model's tables (see csvline.h). */
#include "rubick/csvline.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void rk_csv_init(struct rk_csv *c, const char *text, size_t len, char sep)
{
	memset(c, 0, sizeof(*c));
	c->text = text;
	c->len = text ? len : 0;
	c->sep = sep;
	if (c->len >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
	    (unsigned char)text[2] == 0xBF)
		c->pos = 3;
}

static int is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

/* Split [s, e) into fields; `col0` is the column of s. */
static int split(struct rk_csv *c, const char *s, const char *e, const char *name,
		 struct rk_error *err)
{
	c->n = 0;
	const char *p = s;
	for (;;) {
		if (c->sep == ' ')
			while (p < e && is_blank(*p))
				p++;
		if (c->sep == ' ' && p >= e)
			break;
		const char *f = p;
		while (p < e && (c->sep == ' ' ? !is_blank(*p) : *p != c->sep))
			p++;
		const char *fe = p;
		if (c->sep == ',') /* trim blanks and the CR of CRLF around a field */
			while (fe > f && is_blank(fe[-1]))
				fe--;
		if (c->sep == ',')
			while (f < fe && is_blank(*f))
				f++;
		if (c->n >= RK_CSV_FIELDS_MAX)
			return rk_error_set(err, RK_EINVAL, "%s:%d:%d: more than %d fields", name,
					    c->line, (int)(f - s) + 1, RK_CSV_FIELDS_MAX);
		size_t fl = (size_t)(fe - f);
		if (fl >= RK_CSV_FIELD_MAX)
			return rk_error_set(err, RK_EINVAL, "%s:%d:%d: field longer than %d bytes",
					    name, c->line, (int)(f - s) + 1, RK_CSV_FIELD_MAX - 1);
		memcpy(c->field[c->n], f, fl);
		c->field[c->n][fl] = '\0';
		c->col[c->n] = (int)(f - s) + 1;
		c->n++;
		if (c->sep == ',') {
			if (p >= e)
				break;
			p++; /* past the comma: a trailing comma yields an empty last field */
		}
	}
	return 0;
}

int rk_csv_next(struct rk_csv *c, int skip_comments, const char *name, struct rk_error *err)
{
	while (c->pos < c->len) {
		const char *s = c->text + c->pos;
		const char *nl = memchr(s, '\n', c->len - c->pos);
		const char *e = nl ? nl : c->text + c->len;
		c->pos = (size_t)(e - c->text) + (nl ? 1 : 0);
		c->line++;
		const char *z = memchr(s, '\0', (size_t)(e - s));
		if (z)
			return rk_error_set(err, RK_EINVAL, "%s:%d:%d: NUL byte in text", name,
					    c->line, (int)(z - s) + 1);
		const char *p = s;
		while (p < e && is_blank(*p))
			p++;
		if (p == e)
			continue;
		if (skip_comments && *p == '#')
			continue;
		int rc = split(c, s, e, name, err);
		if (rc < 0)
			return rc;
		return 1;
	}
	return 0;
}

int rk_csv_header(const struct rk_csv *c, const char *name, const char *const *names, int n,
		  int *idx, const char *hint, struct rk_error *err)
{
	for (int k = 0; k < n; k++)
		idx[k] = -1;
	for (int i = 0; i < c->n; i++) {
		int k = 0;
		while (k < n && strcmp(c->field[i], names[k]))
			k++;
		if (k == n)
			return rk_error_set(err, RK_EINVAL, "%s:%d:%d: unknown column '%s'%s", name,
					    c->line, c->col[i], c->field[i], hint);
		if (idx[k] >= 0)
			return rk_error_set(err, RK_EINVAL, "%s:%d:%d: duplicate column '%s'", name,
					    c->line, c->col[i], c->field[i]);
		idx[k] = i;
	}
	return 0;
}

int rk_csv_double(const struct rk_csv *c, int i, const char *name, const char *what, double *out,
		  struct rk_error *err)
{
	const char *f = c->field[i];
	if (!*f)
		return rk_error_set(err, RK_EINVAL, "%s:%d:%d: %s: empty value", name, c->line,
				    c->col[i], what);
	char *end = NULL;
	errno = 0;
	double v = strtod(f, &end);
	if (end == f || *end)
		return rk_error_set(err, RK_EINVAL, "%s:%d:%d: %s: '%s' is not a number", name,
				    c->line, c->col[i], what, f);
	if (errno == ERANGE || !isfinite(v))
		return rk_error_set(err, RK_ERANGE, "%s:%d:%d: %s: '%s' is not a finite number",
				    name, c->line, c->col[i], what, f);
	if (v < 0)
		return rk_error_set(err, RK_ERANGE, "%s:%d:%d: %s: %s is negative", name, c->line,
				    c->col[i], what, f);
	*out = v;
	return 0;
}

int rk_csv_int(const struct rk_csv *c, int i, const char *name, const char *what, long lo,
	       long hi, long *out, struct rk_error *err)
{
	const char *f = c->field[i];
	if (!*f)
		return rk_error_set(err, RK_EINVAL, "%s:%d:%d: %s: empty value", name, c->line,
				    c->col[i], what);
	char *end = NULL;
	errno = 0;
	long v = strtol(f, &end, 10);
	if (end == f || *end)
		return rk_error_set(err, RK_EINVAL, "%s:%d:%d: %s: '%s' is not an integer", name,
				    c->line, c->col[i], what, f);
	if (errno == ERANGE || v < lo || v > hi)
		return rk_error_set(err, RK_ERANGE, "%s:%d:%d: %s: %s is outside %ld..%ld", name,
				    c->line, c->col[i], what, f, lo, hi);
	*out = v;
	return 0;
}
