/*
 * Muri CSV (traces/muri/README.md): job_id,num_gpu,submit_time,iterations,
 * model_name,batch_size,duration,interval,iteration_time,resource_time_0..2,
 * priority. All times in MILLISECONDS (the Muri simulator divides by 1000).
 * priority 0 = resource-guaranteed (AntMan baseline), 1 = opportunistic.
 * model_name is Muri's profile (vgg16, dqn, bert, gpt2, ...), mapped onto the
 * zoo; Muri's batch_size is its profile's, so the zoo model's batch is kept.
 */
#include "sim/trace/trace_internal.h"

#include <stdio.h>

enum { ID, GPUS, SUBMIT, ITERS, MODEL, BATCH, DURATION, ITER_TIME, PRIORITY };

static const struct trace_col cols[] = {
	{"job_id", 1},	   {"num_gpu", 1},  {"submit_time", 1},	   {"iterations", 1},
	{"model_name", 1}, {"batch_size", 1}, {"duration", 1}, {"iteration_time", 1},
	{"priority", 0},   {NULL, 0},
};

static int detect(const struct trace_row *first)
{
	return trace_header_matches(first, cols);
}

static int row(struct trace_ctx *ctx, const struct trace_row *r, struct rk_trace_job *job)
{
	int64_t id, submit_ms;
	double dur_ms, iter_ms;
	int batch, prio = 1, rc;
	if ((rc = trace_get_i64(ctx, r, trace_idx(ctx, ID), "job_id", 0, INT64_MAX / 2, &id)) < 0 ||
	    (rc = trace_get_int(ctx, r, trace_idx(ctx, GPUS), "num_gpu", 1, 1 << 20,
				&job->gpus)) < 0 ||
	    (rc = trace_get_i64(ctx, r, trace_idx(ctx, SUBMIT), "submit_time", 0,
				INT64_MAX / 4, &submit_ms)) < 0 ||
	    (rc = trace_get_i64(ctx, r, trace_idx(ctx, ITERS), "iterations", 0, INT64_MAX / 2,
				&job->iters)) < 0 ||
	    (rc = trace_get_str(ctx, r, trace_idx(ctx, MODEL), "model_name", job->source_type,
				sizeof(job->source_type), 1)) < 0 ||
	    (rc = trace_get_int(ctx, r, trace_idx(ctx, BATCH), "batch_size", 1, 1 << 30,
				&batch)) < 0 ||
	    (rc = trace_get_f64(ctx, r, trace_idx(ctx, DURATION), "duration", 0, 1e15,
				&dur_ms)) < 0 ||
	    (rc = trace_get_f64(ctx, r, trace_idx(ctx, ITER_TIME), "iteration_time", 0, 1e12,
				&iter_ms)) < 0)
		return rc;
	if (trace_has(r, trace_idx(ctx, PRIORITY)) &&
	    (rc = trace_get_int(ctx, r, trace_idx(ctx, PRIORITY), "priority", 0, 1, &prio)) < 0)
		return rc;
	/* Source names are short; 40 bytes + id always fit RK_JOB_NAME_MAX. */
	snprintf(job->name, sizeof(job->name), "%.40s-%lld", job->source_type, (long long)id);
	job->submit_ms = submit_ms;
	job->duration_s = dur_ms / 1000.0;
	job->guaranteed = prio == 0;
	return 0;
}

const struct trace_reader rk_trace_reader_muri = {
	.name = "muri",
	.summary = "Muri CSV, milliseconds (job_id,num_gpu,submit_time,iterations,model_name,"
		   "batch_size,duration,...,priority)",
	.sep = ',',
	.has_header = 1,
	.cols = cols,
	.detect = detect,
	.row = row,
};
