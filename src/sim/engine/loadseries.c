/*
 * Inference-load series: the file parser (line-numbered errors, no I/O) and
 * the seeded diurnal generator (docs/aryl.md). The diurnal shape is
 * our reconstruction: Aryl's ByteDance inference traces are proprietary
 * (docs/references.md §2.5); a raised cosine between a trough and a peak is the
 * usual first-order model of daily serving traffic.
 */
#include "rubick/loadseries.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void rk_load_series_fini(struct rk_load_series *s)
{
	if (!s)
		return;
	free(s->t_ms);
	free(s->need);
	memset(s, 0, sizeof *s);
}

static int push(struct rk_load_series *s, int *cap, int64_t t_ms, int need)
{
	if (s->n == *cap) {
		int nc = *cap ? *cap * 2 : 64;
		int64_t *t = realloc(s->t_ms, (size_t)nc * sizeof *t);
		if (!t)
			return RK_ENOMEM;
		s->t_ms = t;
		int *v = realloc(s->need, (size_t)nc * sizeof *v);
		if (!v)
			return RK_ENOMEM;
		s->need = v;
		*cap = nc;
	}
	s->t_ms[s->n] = t_ms;
	s->need[s->n] = need;
	s->n++;
	return 0;
}

/* A decimal integer field [p, end): 0 and *out, or -1. */
static int field_int(const char *p, const char *end, long long *out)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (p == end || end - p > 19)
		return -1;
	char buf[24];
	memcpy(buf, p, (size_t)(end - p));
	buf[end - p] = 0;
	char *e;
	errno = 0;
	long long v = strtoll(buf, &e, 10);
	if (*e || errno)
		return -1;
	*out = v;
	return 0;
}

/* The optional header line: exactly "t_s,servers_needed" (trailing blanks allowed). */
static int line_is_header(const char *p, const char *end)
{
	static const char h[] = "t_s,servers_needed";
	size_t n = sizeof h - 1;
	if ((size_t)(end - p) < n || memcmp(p, h, n))
		return 0;
	for (p += n; p < end; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r')
			return 0;
	return 1;
}

int rk_load_series_parse(struct rk_load_series *out, const char *text, const char *name,
			 struct rk_error *err)
{
	memset(out, 0, sizeof *out);
	if (!text)
		return rk_error_set(err, RK_EINVAL, "%s: no text", name);
	int cap = 0, line = 0, rc = 0;
	int64_t step = 0;
	for (const char *p = text; *p && !rc;) {
		const char *eol = strchr(p, '\n');
		if (!eol)
			eol = p + strlen(p);
		line++;
		const char *end = memchr(p, '#', (size_t)(eol - p));
		if (!end)
			end = eol;
		const char *q = p;
		while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q < end && !(out->n == 0 && line_is_header(q, end))) {
			const char *comma = memchr(q, ',', (size_t)(end - q));
			long long t, v;
			if (!comma)
				rc = rk_error_set(err, RK_EINVAL, "%s:%d:%d: expected t_s,servers_needed",
						  name, line, (int)(q - p) + 1);
			else if (field_int(q, comma, &t) || t < 0 || t > INT64_MAX / 1000)
				rc = rk_error_set(err, RK_EINVAL,
						  "%s:%d:%d: t_s must be an integer >= 0 (seconds)", name,
						  line, (int)(q - p) + 1);
			else if (field_int(comma + 1, end, &v) || v < 0 || v > 1000000)
				rc = rk_error_set(err, RK_EINVAL,
						  "%s:%d:%d: servers_needed must be an integer in 0..1000000"
						  " (negative loads are not allowed)",
						  name, line, (int)(comma + 1 - p) + 1);
			else if (out->n > 0 && t * 1000 <= out->t_ms[out->n - 1])
				rc = rk_error_set(err, RK_EINVAL,
						  "%s:%d:%d: time %lld s out of order (previous %lld s)",
						  name, line, (int)(q - p) + 1, t,
						  (long long)(out->t_ms[out->n - 1] / 1000));
			else if (out->n >= 2 && t * 1000 - out->t_ms[out->n - 1] != step)
				rc = rk_error_set(
					err, RK_EINVAL,
					t * 1000 - out->t_ms[out->n - 1] > step
						? "%s:%d:%d: gap: %lld s after the previous sample, the step is %lld s"
						: "%s:%d:%d: irregular sample: %lld s after the previous one, the step is %lld s",
					name, line, (int)(q - p) + 1,
					(long long)(t - out->t_ms[out->n - 1] / 1000), (long long)(step / 1000));
			else {
				if (out->n == 1)
					step = t * 1000 - out->t_ms[0];
				if (push(out, &cap, t * 1000, (int)v))
					rc = rk_error_set(err, RK_ENOMEM, "%s: out of memory", name);
			}
		}
		p = *eol ? eol + 1 : eol;
	}
	if (!rc && out->n == 0)
		rc = rk_error_set(err, RK_EINVAL, "%s: no samples (expected t_s,servers_needed lines)",
				  name);
	if (rc)
		rk_load_series_fini(out);
	return rc;
}

int rk_load_series_at(const struct rk_load_series *s, int64_t t_ms)
{
	if (!s || s->n == 0 || t_ms < s->t_ms[0])
		return 0;
	int lo = 0, hi = s->n - 1; /* last sample with t_ms[i] <= t */
	while (lo < hi) {
		int mid = lo + (hi - lo + 1) / 2;
		if (s->t_ms[mid] <= t_ms)
			lo = mid;
		else
			hi = mid - 1;
	}
	return s->need[lo];
}

void rk_diurnal_default(struct rk_diurnal *d)
{
	*d = (struct rk_diurnal){.servers = 32, .peak = 0.9, .trough = 0.3, .period_s = 86400,
				 .step_s = 900, .noise = 0.05, .seed = 1};
}

int rk_diurnal_parse(struct rk_diurnal *d, const char *text, const char *name,
		     struct rk_error *err)
{
	const char *p = text ? text : "";
	int pos = 0;
	while (*p) {
		pos++;
		const char *end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		const char *eq = memchr(p, '=', (size_t)(end - p));
		char key[16], val[32];
		if (end == p)
			return rk_error_set(err, RK_EINVAL, "%s: item %d is empty (drop the extra ',')",
					    name, pos);
		if (!eq || eq - p >= (long)sizeof key || end - eq - 1 >= (long)sizeof val ||
		    end == eq + 1)
			return rk_error_set(err, RK_EINVAL, "%s: '%.*s' is not key=value", name,
					    (int)(end - p), p);
		memcpy(key, p, (size_t)(eq - p));
		key[eq - p] = 0;
		memcpy(val, eq + 1, (size_t)(end - eq - 1));
		val[end - eq - 1] = 0;
		char *e;
		errno = 0;
		double x = strtod(val, &e);
		if (*e || errno || !isfinite(x))
			return rk_error_set(err, RK_EINVAL, "%s: %s=%s is not a number", name, key, val);
		if (!strcmp(key, "servers") && x >= 1 && x <= 100000 && x == floor(x))
			d->servers = (int)x;
		else if (!strcmp(key, "peak") && x >= 0 && x <= 1)
			d->peak = x;
		else if (!strcmp(key, "trough") && x >= 0 && x <= 1)
			d->trough = x;
		else if (!strcmp(key, "period") && x >= 60 && x <= 1e9 && x == floor(x))
			d->period_s = (int64_t)x;
		else if (!strcmp(key, "step") && x >= 1 && x <= 1e9 && x == floor(x))
			d->step_s = (int64_t)x;
		else if (!strcmp(key, "noise") && x >= 0 && x <= 1)
			d->noise = x;
		else if (!strcmp(key, "seed") && x >= 0 && x <= 9007199254740992.0 && x == floor(x))
			d->seed = (uint64_t)x;
		else if (strcmp(key, "servers") && strcmp(key, "peak") && strcmp(key, "trough") &&
			 strcmp(key, "period") && strcmp(key, "step") && strcmp(key, "noise") &&
			 strcmp(key, "seed"))
			return rk_error_set(err, RK_EINVAL,
					    "%s: unknown key '%s' (servers, peak, trough, period, step,"
					    " noise, seed)", name, key);
		else
			return rk_error_set(err, RK_EINVAL,
					    "%s: %s=%s out of range (servers 1..100000, peak/trough/noise"
					    " 0..1, period >= 60 s, step >= 1 s, whole numbers where"
					    " counted)", name, key, val);
		if (*end && !end[1]) /* "servers=4,": the same empty item as ",servers=4" */
			return rk_error_set(err, RK_EINVAL, "%s: item %d is empty (drop the extra ',')",
					    name, pos + 1);
		p = *end ? end + 1 : end;
	}
	if (d->trough > d->peak)
		return rk_error_set(err, RK_EINVAL, "%s: trough %g is above peak %g", name,
				    d->trough, d->peak);
	return 0;
}

int rk_diurnal_generate(const struct rk_diurnal *d, int64_t horizon_s,
			struct rk_load_series *out, struct rk_error *err)
{
	memset(out, 0, sizeof *out);
	if (d->servers < 1 || d->step_s < 1 || d->period_s < 1 || horizon_s < 0 ||
	    d->trough > d->peak)
		return rk_error_set(err, RK_EINVAL, "diurnal load: bad parameters");
	int64_t n = horizon_s / d->step_s + 1;
	if (n > 10000000)
		return rk_error_set(err, RK_ERANGE, "diurnal load: %lld samples are too many",
				    (long long)n);
	out->t_ms = malloc((size_t)n * sizeof *out->t_ms);
	out->need = malloc((size_t)n * sizeof *out->need);
	if (!out->t_ms || !out->need) {
		rk_load_series_fini(out);
		return rk_error_set(err, RK_ENOMEM, "diurnal load: out of memory");
	}
	uint64_t x = d->seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
	for (int64_t i = 0; i < n; i++) {
		int64_t t = i * d->step_s;
		double ph = 2.0 * M_PI * (double)(t % d->period_s) / (double)d->period_s;
		double f = d->trough + (d->peak - d->trough) * (1.0 - cos(ph)) / 2.0;
		/* splitmix64 step: uniform in [-1, 1) */
		x += 0x9e3779b97f4a7c15ull;
		uint64_t z = x;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		double u = (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0;
		double v = d->servers * (f + d->noise * u);
		long need = lround(v);
		if (need < 0)
			need = 0;
		if (need > d->servers)
			need = d->servers;
		out->t_ms[i] = t * 1000;
		out->need[i] = (int)need;
	}
	out->n = (int)n;
	return 0;
}
