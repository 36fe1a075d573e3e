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

static int row(struct trace_ctx *ctx, const struct trace_row *r, struct rk_trace_job *job)
{
	int si = trace_idx(ctx, STAMP), rc;
	if (!trace_has(r, si))
		return trace_fail(ctx, r, si, RK_EINVAL, "column 'timestamp': empty or missing");
	int64_t stamp_s;
	double num_s;
	if (trace_parse_datetime(&r->f[si], &stamp_s)) {
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

const struct trace_reader rk_trace_reader_philly = {
	.name = "philly",
	.summary = "Pollux philly.csv (timestamp,duration,num_gpus,gpu_time,cluster; wall clock "
		   "made relative)",
	.sep = ',',
	.has_header = 1,
	.cols = cols,
	.detect = detect,
	.row = row,
	.finish = trace_finish_relative,
};
