/*
 * Sia / Pollux workload CSV (traces/sia-artifacts/README.md,
 * traces/pollux-osdi21/README.md): name,time,application,num_replicas,batch_size.
 * `time` in seconds from trace start; `application` is a Pollux job type
 * (cifar10, imagenet, deepspeech2, bert, yolov3, ncf, gpt_pmp), mapped onto the
 * zoo by the seeded mapping; the run time is not in the trace (0 = unknown).
 * `batch_size` belongs to the Pollux model, not to the zoo stand-in, so the
 * record keeps the zoo model's own global batch.
 *
 * Run time estimate (duration_estimated = 1): Pollux's generator
 * (traces/pollux-osdi21/README.md, upstream simulator/workload.py) picked the
 * application from the Philly job's GPU time: < 1 GPU-h -> cifar10 or ncf,
 * < 10 -> deepspeech2 (half switched to bert), < 100 -> yolov3, else imagenet
 * (kept < 1000 GPU-h, and run time >= 60 s). So the application bounds the
 * original GPU time; we draw it log-uniformly inside its bucket (seeded by
 * job name) and divide by num_replicas (perfect scaling). Sia's own simulator
 * instead runs each job to a validation target with its goodput profiles;
 * other applications (gpt_pmp) keep duration 0 = unknown.
 */
#include "sim/trace/trace_internal.h"

#include <math.h>
#include <string.h>

/* GPU-hour bucket of each Pollux application (workload.py). */
static const struct {
	const char *app;
	double lo_gpu_h, hi_gpu_h;
} buckets[] = {
	{"cifar10", 60.0 / 3600.0, 1}, {"ncf", 60.0 / 3600.0, 1}, {"deepspeech2", 1, 10},
	{"bert", 1, 10},	       {"yolov3", 10, 100},	    {"imagenet", 100, 1000},
};

static void estimate_duration(struct trace_ctx *ctx, struct rk_trace_job *job)
{
	for (size_t i = 0; i < sizeof(buckets) / sizeof(buckets[0]); i++) {
		if (strcmp(job->source_type, buckets[i].app) != 0)
			continue;
		double u = trace_unit_draw(ctx->opt->seed, job->name);
		double gpu_h = buckets[i].lo_gpu_h *
			       pow(buckets[i].hi_gpu_h / buckets[i].lo_gpu_h, u);
		job->duration_s = gpu_h * 3600.0 / job->gpus;
		job->duration_estimated = 1;
		return;
	}
}

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
	/* Kept as the application's batch (the stand-in keeps its own): the
	 * oracle reads the application's profile at it, and Sia's job targets are
	 * per batch (docs/oracle.md "Sia's heterogeneous experiment"). */
	if (trace_has(r, trace_idx(ctx, BATCH))) {
		if ((rc = trace_get_int(ctx, r, trace_idx(ctx, BATCH), "batch_size", 1, 1 << 30,
					&batch)) < 0)
			return rc;
		job->source_batch = batch;
	}
	job->submit_ms = trace_s_to_ms(submit_s);
	estimate_duration(ctx, job);
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
