/*
 * Synergy replay traces (traces/synergy/README.md): no header, comma-separated
 * job_id,model_name,arrival_time,num_iters,gpu_demand (upstream
 * simulator/jobs/workload.py:populate_from_trace). Seconds. model_name is a
 * Synergy profile (alexnet, res18, gnmt, transformer, deepspeech, ...), mapped
 * onto the zoo.
 */
#include "sim/trace_internal.h"

#include <stdio.h>

enum { ID, MODEL, ARRIVAL, ITERS, GPUS, NFIELDS };

static int detect(const struct trace_row *first)
{
	return first->n == NFIELDS && trace_is_number(&first->f[ID]) &&
	       first->f[MODEL].len > 0 && !trace_is_number(&first->f[MODEL]) &&
	       trace_is_number(&first->f[ARRIVAL]) && trace_is_number(&first->f[ITERS]) &&
	       trace_is_number(&first->f[GPUS]);
}

static int row(struct trace_ctx *ctx, const struct trace_row *r, struct rk_trace_job *job)
{
	if (r->n != NFIELDS)
		return trace_fail(ctx, r, -1, RK_EINVAL,
				  "line has %d fields; synergy traces have 5 (job_id,model_name,"
				  "arrival_time,num_iters,gpu_demand)",
				  r->n);
	int64_t id;
	double arrival_s;
	int rc;
	if ((rc = trace_get_i64(ctx, r, ID, "job_id", 0, INT64_MAX / 2, &id)) < 0 ||
	    (rc = trace_get_str(ctx, r, MODEL, "model_name", job->source_type,
				sizeof(job->source_type), 1)) < 0 ||
	    (rc = trace_get_f64(ctx, r, ARRIVAL, "arrival_time", 0, 1e12, &arrival_s)) < 0 ||
	    (rc = trace_get_i64(ctx, r, ITERS, "num_iters", 1, INT64_MAX / 2, &job->iters)) < 0 ||
	    (rc = trace_get_int(ctx, r, GPUS, "gpu_demand", 1, 1 << 20, &job->gpus)) < 0)
		return rc;
	/* Source names are short; 40 bytes + id always fit RK_JOB_NAME_MAX. */
	snprintf(job->name, sizeof(job->name), "%.40s-%lld", job->source_type, (long long)id);
	job->submit_ms = trace_s_to_ms(arrival_s);
	return 0;
}

const struct trace_reader rk_trace_reader_synergy = {
	.name = "synergy",
	.summary = "Synergy replay trace, no header (job_id,model_name,arrival_time,num_iters,"
		   "gpu_demand)",
	.sep = ',',
	.has_header = 0,
	.detect = detect,
	.row = row,
};
