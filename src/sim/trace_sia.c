/*
 * Sia / Pollux workload CSV (traces/sia-artifacts/README.md,
 * traces/pollux-osdi21/README.md): name,time,application,num_replicas,batch_size.
 * `time` in seconds from trace start; `application` is a Pollux job type
 * (cifar10, imagenet, deepspeech2, bert, yolov3, ncf, gpt_pmp), mapped onto the
 * zoo by the seeded mapping; the run time is not in the trace (0 = unknown).
 * `batch_size` belongs to the Pollux model, not to the zoo stand-in, so the
 * record keeps the zoo model's own global batch.
 */
#include "sim/trace_internal.h"

enum { NAME, TIME, APP, REPLICAS, BATCH };

static const struct trace_col cols[] = {
	{"name", 1}, {"time", 1}, {"application", 1}, {"num_replicas", 1}, {"batch_size", 0},
	{NULL, 0},
};

static int detect(const struct trace_row *first)
{
	return trace_header_matches(first, cols);
}

static int row(struct trace_ctx *ctx, const struct trace_row *r, struct rk_trace_job *job)
{
	double submit_s;
	int batch, rc;
	if ((rc = trace_get_str(ctx, r, trace_idx(ctx, NAME), "name", job->name,
				sizeof(job->name), 0)) < 0 ||
	    (rc = trace_get_f64(ctx, r, trace_idx(ctx, TIME), "time", 0, 1e12, &submit_s)) < 0 ||
	    (rc = trace_get_str(ctx, r, trace_idx(ctx, APP), "application", job->source_type,
				sizeof(job->source_type), 1)) < 0 ||
	    (rc = trace_get_int(ctx, r, trace_idx(ctx, REPLICAS), "num_replicas", 1, 1 << 20,
				&job->gpus)) < 0)
		return rc;
	/* Validated although not kept: a corrupt batch means a corrupt line. */
	if (trace_has(r, trace_idx(ctx, BATCH)) &&
	    (rc = trace_get_int(ctx, r, trace_idx(ctx, BATCH), "batch_size", 1, 1 << 30,
				&batch)) < 0)
		return rc;
	job->submit_ms = trace_s_to_ms(submit_s);
	return 0;
}

const struct trace_reader rk_trace_reader_sia = {
	.name = "sia",
	.summary = "Sia/Pollux workload CSV (name,time,application,num_replicas,batch_size)",
	.sep = ',',
	.has_header = 1,
	.cols = cols,
	.detect = detect,
	.row = row,
};
