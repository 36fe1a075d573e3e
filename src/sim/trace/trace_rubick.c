/*
 * Rubick workload CSV (traces/rubick/README.md; docs/references.md §1.3):
 * name,submission_time,duration,application,num_gpus,num_cpus,bandwidth,
 * exec_plan,steps,is_sla. Times in seconds; `application` is a zoo key;
 * `exec_plan` the user's plan in artifact form (ga, gc, zero-dp, zero-offload,
 * or a PP-TP-DP digit code); `is_sla` 1 = guaranteed. rubick's own optional
 * `space` column (the plans the job's script can run, plan.h) may follow.
 */
#include "sim/trace/trace_internal.h"

#include <stdio.h>

enum { NAME, SUBMIT, DURATION, APP, GPUS, CPUS, BW, PLAN, STEPS, SLA, SPACE };

static const struct trace_col cols[] = {
	{"name", 1},	 {"submission_time", 1}, {"duration", 1}, {"application", 1},
	{"num_gpus", 1}, {"num_cpus", 0},	 {"bandwidth", 0}, {"exec_plan", 1},
	{"steps", 1},	 {"is_sla", 0},		 {"space", 0},	   {NULL, 0},
};

static int detect(const struct trace_row *first)
{
	return trace_header_matches(first, cols);
}

static int row(struct trace_ctx *ctx, const struct trace_row *r, struct rk_trace_job *job)
{
	double submit_s, bw = 0;
	int rc;
	if ((rc = trace_get_str(ctx, r, trace_idx(ctx, NAME), "name", job->name,
				sizeof(job->name), 0)) < 0 ||
	    (rc = trace_get_f64(ctx, r, trace_idx(ctx, SUBMIT), "submission_time", 0, 1e12,
				&submit_s)) < 0 ||
	    (rc = trace_get_f64(ctx, r, trace_idx(ctx, DURATION), "duration", 0, 1e12,
				&job->duration_s)) < 0 ||
	    (rc = trace_get_model(ctx, r, trace_idx(ctx, APP), "application", job)) < 0 ||
	    (rc = trace_get_int(ctx, r, trace_idx(ctx, GPUS), "num_gpus", 1, 1 << 20,
				&job->gpus)) < 0 ||
	    (rc = trace_get_i64(ctx, r, trace_idx(ctx, STEPS), "steps", 0, INT64_MAX / 2,
				&job->iters)) < 0)
		return rc;
	if (trace_has(r, trace_idx(ctx, CPUS)) &&
	    (rc = trace_get_int(ctx, r, trace_idx(ctx, CPUS), "num_cpus", 0, 1 << 24,
				&job->cpus)) < 0)
		return rc;
	if (trace_has(r, trace_idx(ctx, BW)) &&
	    (rc = trace_get_f64(ctx, r, trace_idx(ctx, BW), "bandwidth", 0, 1e6, &bw)) < 0)
		return rc;
	if (trace_has(r, trace_idx(ctx, SLA)) &&
	    (rc = trace_get_int(ctx, r, trace_idx(ctx, SLA), "is_sla", 0, 1, &job->guaranteed)) < 0)
		return rc;
	int pi = trace_idx(ctx, PLAN);
	if (trace_has(r, pi)) {
		char why[200];
		if ((rc = trace_get_str(ctx, r, pi, "exec_plan", job->plan, sizeof(job->plan), 0)) < 0)
			return rc;
		if (trace_plan_check(job->plan, job->gpus, 0, why, sizeof(why)) < 0)
			return trace_fail(ctx, r, pi, RK_EINVAL, "column 'exec_plan': %s", why);
	}
	job->submit_ms = trace_s_to_ms(submit_s);
	job->net_gbps = bw;
	return trace_get_space(ctx, r, trace_idx(ctx, SPACE), "space", pi, job);
}

const struct trace_reader rk_trace_reader_rubick = {
	.name = "rubick",
	.summary = "Rubick workload CSV (name,submission_time,duration,application,num_gpus,...,"
		   "exec_plan,steps,is_sla)",
	.sep = ',',
	.has_header = 1,
	.cols = cols,
	.detect = detect,
	.row = row,
};
