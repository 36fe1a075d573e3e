/*
 * rubick's native trace CSV (docs/trace-format.md): a header naming the
 * columns, in any order, units in the names. Required: submit_s, gpus.
 * Optional: name, duration_s, model (a zoo key; empty -> the seeded mapping
 * from job_type), job_type, global_batch, cpus, mem_mb, net_gbps, gpu_milli,
 * plan (canonical or artifact form), space (the declared plan space, plan.h),
 * iters, guaranteed, tenant, min_gpus, max_gpus. A model that is not in the zoo is an error, never remapped.
 */
#include "sim/trace/trace_internal.h"

enum {
	SUBMIT, GPUS, NAME, DURATION, MODEL, JOB_TYPE, BATCH, CPUS, MEM, NET, GPU_MILLI, PLAN,
	ITERS, GUARANTEED, TENANT, MIN_GPUS, MAX_GPUS, SPACE,
};

static const struct trace_col cols[] = {
	{"submit_s", 1},   {"gpus", 1},		{"name", 0},	   {"duration_s", 0},
	{"model", 0},	   {"job_type", 0},	{"global_batch", 0}, {"cpus", 0},
	{"mem_mb", 0},	   {"net_gbps", 0},	{"gpu_milli", 0},  {"plan", 0},
	{"iters", 0},	   {"guaranteed", 0},	{"tenant", 0},	   {"min_gpus", 0},
	{"max_gpus", 0},   {"space", 0},	{NULL, 0},
};

static int detect(const struct trace_row *first)
{
	return trace_header_matches(first, cols);
}

/* Read optional integer column `c` into *v when the field is present and non-empty. */
static int opt_int(struct trace_ctx *ctx, const struct trace_row *r, int c, int min, int max,
		   int *v)
{
	int i = trace_idx(ctx, c);
	return trace_has(r, i) ? trace_get_int(ctx, r, i, cols[c].name, min, max, v) : 0;
}

static int row(struct trace_ctx *ctx, const struct trace_row *r, struct rk_trace_job *job)
{
	double submit_s;
	int rc;
	if ((rc = trace_get_f64(ctx, r, trace_idx(ctx, SUBMIT), "submit_s", 0, 1e12,
				&submit_s)) < 0 ||
	    (rc = trace_get_int(ctx, r, trace_idx(ctx, GPUS), "gpus", 1, 1 << 20, &job->gpus)) < 0)
		return rc;
	job->submit_ms = trace_s_to_ms(submit_s);
	if (trace_has(r, trace_idx(ctx, NAME)) &&
	    (rc = trace_get_str(ctx, r, trace_idx(ctx, NAME), "name", job->name,
				sizeof(job->name), 0)) < 0)
		return rc;
	if (trace_has(r, trace_idx(ctx, DURATION)) &&
	    (rc = trace_get_f64(ctx, r, trace_idx(ctx, DURATION), "duration_s", 0, 1e12,
				&job->duration_s)) < 0)
		return rc;
	if (trace_has(r, trace_idx(ctx, MODEL))) {
		if ((rc = trace_get_model(ctx, r, trace_idx(ctx, MODEL), "model", job)) < 0)
			return rc;
		job->source_type[0] = '\0'; /* the native source string is job_type alone */
	}
	/* job_type (a report string, and the mapping's input when model is empty) wins. */
	if (trace_has(r, trace_idx(ctx, JOB_TYPE)) &&
	    (rc = trace_get_str(ctx, r, trace_idx(ctx, JOB_TYPE), "job_type", job->source_type,
				sizeof(job->source_type), 1)) < 0)
		return rc;
	int64_t iters = 0;
	if ((rc = opt_int(ctx, r, BATCH, 1, 1 << 30, &job->global_batch)) < 0 ||
	    (rc = opt_int(ctx, r, CPUS, 0, 1 << 24, &job->cpus)) < 0 ||
	    (rc = opt_int(ctx, r, GPU_MILLI, 1, 1000, &job->gpu_milli)) < 0 ||
	    (rc = opt_int(ctx, r, GUARANTEED, 0, 1, &job->guaranteed)) < 0 ||
	    (rc = opt_int(ctx, r, MIN_GPUS, 1, 1 << 20, &job->min_gpus)) < 0 ||
	    (rc = opt_int(ctx, r, MAX_GPUS, 1, 1 << 20, &job->max_gpus)) < 0)
		return rc;
	if (job->gpu_milli < 1000 && job->gpus > 1)
		return trace_fail(ctx, r, trace_idx(ctx, GPU_MILLI), RK_ERANGE,
				  "column 'gpu_milli': a fraction only applies to 1-GPU jobs");
	if (trace_has(r, trace_idx(ctx, MEM)) &&
	    (rc = trace_get_i64(ctx, r, trace_idx(ctx, MEM), "mem_mb", 0, INT64_MAX / 2,
				&job->mem_mb)) < 0)
		return rc;
	if (trace_has(r, trace_idx(ctx, NET)) &&
	    (rc = trace_get_f64(ctx, r, trace_idx(ctx, NET), "net_gbps", 0, 1e6,
				&job->net_gbps)) < 0)
		return rc;
	if (trace_has(r, trace_idx(ctx, ITERS)) &&
	    (rc = trace_get_i64(ctx, r, trace_idx(ctx, ITERS), "iters", 0, INT64_MAX / 2,
				&iters)) < 0)
		return rc;
	job->iters = iters;
	if (trace_has(r, trace_idx(ctx, TENANT)) &&
	    (rc = trace_get_str(ctx, r, trace_idx(ctx, TENANT), "tenant", job->tenant,
				sizeof(job->tenant), 0)) < 0)
		return rc;
	int pi = trace_idx(ctx, PLAN);
	if (trace_has(r, pi)) {
		char why[200];
		if ((rc = trace_get_str(ctx, r, pi, "plan", job->plan, sizeof(job->plan), 0)) < 0)
			return rc;
		if (trace_plan_check(job->plan, job->gpus, job->global_batch, why, sizeof(why)) < 0)
			return trace_fail(ctx, r, pi, RK_EINVAL, "column 'plan': %s", why);
	}
	return trace_get_space(ctx, r, trace_idx(ctx, SPACE), "space", pi, job);
}

const struct trace_reader rk_trace_reader_native = {
	.name = "native",
	.summary = "rubick native CSV (header with submit_s, gpus and optional model, plan, "
		   "iters, ...; docs/trace-format.md)",
	.sep = ',',
	.has_header = 1,
	.cols = cols,
	.detect = detect,
	.row = row,
};
