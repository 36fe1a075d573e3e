/*
 * Tiresias job traces (traces/tiresias/README.md): job_id,num_gpu,submit_time,
 * iterations,model_name,duration,interval (60_job.csv), and the older
 * tf_job.csv header (job_id,num_gpu,submit_time,start_time,duration,
 * model_size,aggr_interval,model_name,model_scale); columns are found by name,
 * so both read the same way. Seconds. model_name (vgg*, resnet*, inception*,
 * alexnet, googlenet) is mapped onto the zoo.
 */
#include "sim/trace/trace_internal.h"

#include <stdio.h>

enum { ID, GPUS, SUBMIT, MODEL, DURATION, ITERS };

static const struct trace_col cols[] = {
	{"job_id", 1},	 {"num_gpu", 1}, {"submit_time", 1}, {"model_name", 1},
	{"duration", 1}, {"iterations", 0}, {NULL, 0},
};

static int detect(const struct trace_row *first)
{
	return trace_header_matches(first, cols);
}

static int row(struct trace_ctx *ctx, const struct trace_row *r, struct rk_trace_job *job)
{
	int64_t id;
	double submit_s;
	int rc;
	if ((rc = trace_get_i64(ctx, r, trace_idx(ctx, ID), "job_id", 0, INT64_MAX / 2, &id)) < 0 ||
	    (rc = trace_get_int(ctx, r, trace_idx(ctx, GPUS), "num_gpu", 1, 1 << 20,
				&job->gpus)) < 0 ||
	    (rc = trace_get_f64(ctx, r, trace_idx(ctx, SUBMIT), "submit_time", 0, 1e12,
				&submit_s)) < 0 ||
	    (rc = trace_get_str(ctx, r, trace_idx(ctx, MODEL), "model_name", job->source_type,
				sizeof(job->source_type), 1)) < 0 ||
	    (rc = trace_get_f64(ctx, r, trace_idx(ctx, DURATION), "duration", 0, 1e12,
				&job->duration_s)) < 0)
		return rc;
	if (trace_has(r, trace_idx(ctx, ITERS)) &&
	    (rc = trace_get_i64(ctx, r, trace_idx(ctx, ITERS), "iterations", 0, INT64_MAX / 2,
				&job->iters)) < 0)
		return rc;
	/* Source names are short; 40 bytes + id always fit RK_JOB_NAME_MAX. */
	snprintf(job->name, sizeof(job->name), "%.40s-%lld", job->source_type, (long long)id);
	job->submit_ms = trace_s_to_ms(submit_s);
	return 0;
}

const struct trace_reader rk_trace_reader_tiresias = {
	.name = "tiresias",
	.summary = "Tiresias job CSV (job_id,num_gpu,submit_time,iterations,model_name,duration,"
		   "interval)",
	.sep = ',',
	.has_header = 1,
	.cols = cols,
	.detect = detect,
	.row = row,
};
