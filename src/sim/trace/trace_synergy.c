/*
 * Synergy replay traces (traces/synergy/README.md): no header, comma-separated
 * job_id,model_name,arrival_time,num_iters,gpu_demand (upstream
 * simulator/jobs/workload.py:populate_from_trace). Seconds. model_name is a
 * Synergy profile (alexnet, res18, gnmt, transformer, deepspeech, ...), mapped
 * onto the zoo.
 *
 * Job length: Synergy's simulator (msr-fiddle/synergy @ 1bb2bed,
 * simulator/jobs/workload.py add_synergy_profile) runs num_iters iterations of
 * the model's fair-share iteration time (1 GPU's share of a 24-CPU, 500 GB,
 * 8-GPU server), whatever the job's GPU count ("Model carries per gpu
 * iteration time for fair share"). Those times are Synergy's profiles
 * (simulator/models/<model>_1.py iter_time, the same figures as
 * jobs/model.py use_real_scores), so the reader turns the iterations into the
 * run time at the request, duration_s = num_iters x iter_time, and the
 * stand-in only prices other resources (docs/oracle.md, "Job length"). A
 * model Synergy has no profile for keeps its iterations (steps of the
 * stand-in; rubick sim and rubick trace warn).
 */
#include "sim/trace/trace_internal.h"

#include <stdio.h>
#include <string.h>

enum { ID, MODEL, ARRIVAL, ITERS, GPUS, NFIELDS };

/* Fair-share seconds per iteration (Synergy's simulator/models/<model>_1.py). */
static const struct {
	const char *model;
	double iter_s;
} profiles[] = {
	{"alexnet", 0.6},      {"res18", 0.64},       {"res50", 0.78},   {"mobilenet", 0.71},
	{"shufflenet", 0.615}, {"deepspeech", 0.757}, {"m5", 0.486},     {"transformer", 0.67},
	{"gnmt", 0.12},        {"lstm", 0.011},
};

static double profile_iter_s(const char *model)
{
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (!strcmp(profiles[i].model, model))
			return profiles[i].iter_s;
	return 0;
}

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
	/* The dispatcher moves iters to source_iters once the duration is set. */
	double it = profile_iter_s(job->source_type);
	if (it > 0)
		job->duration_s = (double)job->iters * it;
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
