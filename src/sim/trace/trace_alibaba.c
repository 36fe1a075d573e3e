/*
 * Alibaba PAI 2023 "openb" pod lists (traces/alibaba-pai-gpu-v2023/README.md):
 * name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
 * creation_time,deletion_time,scheduled_time (the multigpu* files stop after
 * gpu_milli and carry no times: every pod then arrives at 0).
 *
 * Mapping (documented in docs/trace-format.md):
 * - num_gpu == 0 (CPU-only pods) are dropped and counted in n_no_gpu;
 * - gpus = num_gpu; gpu_milli (1..1000, thousandths of one GPU) is kept per GPU:
 *   a fractional pod asks for one whole GPU in whole-GPU policies and its share
 *   for GPU-sharing ones (SJF-BSBF, docs/references.md §3);
 * - cpus = ceil(cpu_milli / 1000); mem_mb = memory_mib (rubick's _mb is MiB);
 * - submit = creation_time (s); duration = deletion_time - scheduled_time when
 *   the pod was scheduled, else 0 (unknown: Pending pods never ran);
 * - qos LS or Guaranteed -> guaranteed; BE and Burstable -> best effort;
 * - gpu_spec (allowed GPU types) is kept as source_type; the model comes from
 *   the seeded mapping by GPU count.
 */
#include "sim/trace/trace_internal.h"

enum { NAME, CPU, MEM, GPUS, GPU_MILLI, SPEC, QOS, CREATED, DELETED, SCHEDULED };

static const struct trace_col cols[] = {
	{"name", 1},	    {"cpu_milli", 1},	 {"memory_mib", 1},	{"num_gpu", 1},
	{"gpu_milli", 1},   {"gpu_spec", 0},	 {"qos", 0},		{"creation_time", 0},
	{"deletion_time", 0}, {"scheduled_time", 0}, {NULL, 0},
};

static int detect(const struct trace_row *first)
{
	return trace_header_matches(first, cols);
}

static int opt_f64(struct trace_ctx *ctx, const struct trace_row *r, int c, const char *col,
		   double *v, int *present)
{
	*present = trace_has(r, trace_idx(ctx, c));
	return *present ? trace_get_f64(ctx, r, trace_idx(ctx, c), col, 0, 1e12, v) : 0;
}

static int row(struct trace_ctx *ctx, const struct trace_row *r, struct rk_trace_job *job)
{
	int64_t cpu_milli;
	int gpu_milli, rc;
	if ((rc = trace_get_str(ctx, r, trace_idx(ctx, NAME), "name", job->name,
				sizeof(job->name), 0)) < 0 ||
	    (rc = trace_get_i64(ctx, r, trace_idx(ctx, CPU), "cpu_milli", 0, INT64_MAX / 2,
				&cpu_milli)) < 0 ||
	    (rc = trace_get_i64(ctx, r, trace_idx(ctx, MEM), "memory_mib", 0, INT64_MAX / 2,
				&job->mem_mb)) < 0 ||
	    (rc = trace_get_int(ctx, r, trace_idx(ctx, GPUS), "num_gpu", 0, 1 << 20,
				&job->gpus)) < 0 ||
	    (rc = trace_get_int(ctx, r, trace_idx(ctx, GPU_MILLI), "gpu_milli", 0, 1000,
				&gpu_milli)) < 0)
		return rc;
	if (job->gpus == 0)
		return 0; /* CPU-only pod: the dispatcher drops and counts it */
	if (gpu_milli == 0)
		return trace_fail(ctx, r, trace_idx(ctx, GPU_MILLI), RK_ERANGE,
				  "column 'gpu_milli': 0 for a pod asking for %d GPUs", job->gpus);
	if (gpu_milli < 1000 && job->gpus > 1)
		return trace_fail(ctx, r, trace_idx(ctx, GPU_MILLI), RK_ERANGE,
				  "column 'gpu_milli': a fraction (%d) only applies to 1-GPU pods",
				  gpu_milli);
	job->gpu_milli = gpu_milli;
	job->cpus = (int)((cpu_milli + 999) / 1000);
	double created = 0, deleted = 0, scheduled = 0;
	int has_c, has_d, has_s;
	if ((rc = opt_f64(ctx, r, CREATED, "creation_time", &created, &has_c)) < 0 ||
	    (rc = opt_f64(ctx, r, DELETED, "deletion_time", &deleted, &has_d)) < 0 ||
	    (rc = opt_f64(ctx, r, SCHEDULED, "scheduled_time", &scheduled, &has_s)) < 0)
		return rc;
	if (has_d && has_s) {
		if (deleted < scheduled)
			return trace_fail(ctx, r, trace_idx(ctx, DELETED), RK_ERANGE,
					  "column 'deletion_time': before scheduled_time");
		job->duration_s = deleted - scheduled;
	}
	job->submit_ms = trace_s_to_ms(created);
	int qi = trace_idx(ctx, QOS);
	job->guaranteed = trace_has(r, qi) && (trace_field_is(&r->f[qi], "LS") ||
					       trace_field_is(&r->f[qi], "Guaranteed"));
	if (trace_has(r, trace_idx(ctx, SPEC)) &&
	    (rc = trace_get_str(ctx, r, trace_idx(ctx, SPEC), "gpu_spec", job->source_type,
				sizeof(job->source_type), 1)) < 0)
		return rc;
	return 0;
}

const struct trace_reader rk_trace_reader_alibaba = {
	.name = "alibaba",
	.summary = "Alibaba PAI 2023 pod list (name,cpu_milli,memory_mib,num_gpu,gpu_milli,...; "
		   "fractional GPUs kept as gpu_milli)",
	.sep = ',',
	.has_header = 1,
	.cols = cols,
	.detect = detect,
	.row = row,
};
