/*
 * Pollux's philly.csv (traces/pollux-osdi21/README.md): timestamp,duration,
 * num_gpus,gpu_time,cluster — 82,247 Microsoft Philly jobs. `timestamp` is the
 * wall-clock submission ("2017-10-09 07:01:55", UTC as in Philly; a plain
 * number of seconds is accepted too); the rows are not in time order, so
 * times become relative to the earliest submission once all lines are read.
 * `cluster` (the Philly virtual cluster) becomes the tenant. No model is given:
 * the seeded mapping picks one by GPU count.
 */
#include "sim/trace/trace_internal.h"

#include <stdio.h>

enum { STAMP, DURATION, GPUS, GPU_TIME, CLUSTER };

static const struct trace_col cols[] = {
	{"timestamp", 1}, {"duration", 1}, {"num_gpus", 1}, {"gpu_time", 0}, {"cluster", 0},
	{NULL, 0},
};

static int detect(const struct trace_row *first)
{
	return trace_header_matches(first, cols);
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

/* "YYYY-MM-DD HH:MM:SS" (or 'T' between) -> seconds since the Unix epoch. */
static int parse_stamp(const struct trace_field *f, int64_t *out_s)
{
	static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	const char *p = f->p, *end = f->p + f->len;
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

static int row(struct trace_ctx *ctx, const struct trace_row *r, struct rk_trace_job *job)
{
	int si = trace_idx(ctx, STAMP), rc;
	if (!trace_has(r, si))
		return trace_fail(ctx, r, si, RK_EINVAL, "column 'timestamp': empty or missing");
	int64_t stamp_s;
	double num_s;
	if (parse_stamp(&r->f[si], &stamp_s)) {
		job->submit_ms = stamp_s * 1000;
	} else if (trace_is_number(&r->f[si])) {
		if ((rc = trace_get_f64(ctx, r, si, "timestamp", 0, 1e12, &num_s)) < 0)
			return rc;
		job->submit_ms = trace_s_to_ms(num_s);
	} else {
		return trace_fail(ctx, r, si, RK_EINVAL,
				  "column 'timestamp': '%.*s' is not YYYY-MM-DD HH:MM:SS or seconds",
				  r->f[si].len > 40 ? 40 : (int)r->f[si].len, r->f[si].p);
	}
	if (job->submit_ms < 0)
		return trace_fail(ctx, r, si, RK_ERANGE, "column 'timestamp': before 1970");
	if ((rc = trace_get_f64(ctx, r, trace_idx(ctx, DURATION), "duration", 0, 1e12,
				&job->duration_s)) < 0 ||
	    (rc = trace_get_int(ctx, r, trace_idx(ctx, GPUS), "num_gpus", 1, 1 << 20,
				&job->gpus)) < 0)
		return rc;
	double gpu_time;
	if (trace_has(r, trace_idx(ctx, GPU_TIME)) &&
	    (rc = trace_get_f64(ctx, r, trace_idx(ctx, GPU_TIME), "gpu_time", 0, 1e15,
				&gpu_time)) < 0)
		return rc;
	if (trace_has(r, trace_idx(ctx, CLUSTER)) &&
	    (rc = trace_get_str(ctx, r, trace_idx(ctx, CLUSTER), "cluster", job->tenant,
				sizeof(job->tenant), 0)) < 0)
		return rc;
	return 0;
}

/* Wall clock -> relative to the earliest submission (the rows are not sorted). */
static void finish(struct rk_trace *t)
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

const struct trace_reader rk_trace_reader_philly = {
	.name = "philly",
	.summary = "Pollux philly.csv (timestamp,duration,num_gpus,gpu_time,cluster; wall clock "
		   "made relative)",
	.sep = ',',
	.has_header = 1,
	.cols = cols,
	.detect = detect,
	.row = row,
	.finish = finish,
};
