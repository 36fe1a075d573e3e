/*
 * Gavel trace TSV (traces/gavel/README.md) and Shockwave's traces in the same
 * family (traces/shockwave/README.md). No header; the field count tells the
 * layout (upstream parsers cited in the READMEs):
 *   7  Philly per-VC traces (msr/seed0): job_type, command, num_steps_arg,
 *      needs_data_dir, total_steps, arrival_time, scale_factor
 *   10 physical-cluster traces: job_type, command, working_directory,
 *      num_steps_arg, needs_data_dir, total_steps, scale_factor,
 *      priority_weight, SLO, arrival_time
 *   12 Shockwave: the 10 above with mode after scale_factor and duration
 *      before arrival_time
 * Times in seconds; scale_factor = GPUs; SLO > 0 marks a guaranteed job. The
 * job type ("ResNet-50 (batch size 64)") is kept as source_type.
 *
 * The model: when the caller gives its zoo, the command goes through the
 * launch-command reader (launch.h; Megatron/DeepSpeed/HF flags). A command
 * naming a zoo model gives that model, its global batch and requested plan; a
 * command that describes its own structure gives the zoo model nearest in
 * parameter count (model_mapped = 1: the record holds zoo keys only).
 * Gavel's own commands (python3 main.py --batch_size 64) carry no structure:
 * the reader answers "not found" and the seeded mapping picks the model from
 * the job type. A command the reader rejects as malformed is a bad line.
 */
#include "sim/trace/trace_internal.h"

#include "rubick/launch.h"
#include "rubick/zoo.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Longest command handed to the launch reader; longer ones fall back to the mapping. */
#define COMMAND_MAX 4096

/* Zoo model nearest to `params` on a log scale; NULL for an empty zoo. */
static const struct rk_model *nearest_by_params(const struct trace_ctx *ctx, double params)
{
	const struct rk_model *best = NULL;
	double best_d = INFINITY;
	for (size_t i = 0; i < ctx->opt->zoo->n_models; i++) {
		const struct rk_model *m = &ctx->opt->zoo->models[i];
		if (!(m->params > 0) || !trace_model_known(ctx, m->name))
			continue;
		double d = fabs(log(m->params / params));
		if (d < best_d) {
			best_d = d;
			best = m;
		}
	}
	return best;
}

/* Read the command with the launch reader; 1 = the job got its model, 0 = fall back. */
static int from_command(struct trace_ctx *ctx, const struct trace_row *r, int idx,
			struct rk_trace_job *job, int *rc)
{
	*rc = 0;
	const struct trace_field *f = &r->f[idx];
	if (!ctx->opt->zoo || f->len == 0 || f->len >= COMMAND_MAX)
		return 0;
	char cmd[COMMAND_MAX];
	memcpy(cmd, f->p, f->len);
	cmd[f->len] = '\0';
	char src[160];
	snprintf(src, sizeof(src), "%.100s:%d command", ctx->filename, r->line);
	struct rk_launch_opts o = {.src = src, .gpus = job->gpus, .zoo = ctx->opt->zoo};
	struct rk_launch L;
	struct rk_error e;
	int lrc = rk_launch_parse(cmd, &o, &L, &e);
	if (lrc == RK_ENOTFOUND)
		return 0;
	if (lrc < 0) {
		*rc = trace_fail(ctx, r, idx, lrc, "column 'command': %s", e.msg);
		return 0;
	}
	const struct rk_model *m = L.from_zoo ? &L.model : nearest_by_params(ctx, L.model.params);
	if (!m || !trace_model_known(ctx, m->name))
		return 0;
	snprintf(job->model, sizeof(job->model), "%s", m->name);
	job->model_mapped = !L.from_zoo;
	job->global_batch = L.global_batch;
	if (rk_plan_format(&L.plan, job->plan, sizeof(job->plan)) < 0)
		job->plan[0] = '\0';
	return 1;
}

/* Field positions per layout. -1 = not in this layout. */
struct layout {
	int n, type, steps, arrival, scale, slo, duration;
};

static const struct layout layouts[] = {
	{7, 0, 4, 5, 6, -1, -1},
	{10, 0, 5, 9, 6, 8, -1},
	{12, 0, 5, 11, 6, 9, 10},
};
#define N_LAYOUTS ((int)(sizeof(layouts) / sizeof(layouts[0])))

static int layout_of(int n)
{
	for (int i = 0; i < N_LAYOUTS; i++)
		if (layouts[i].n == n)
			return i;
	return -1;
}

static int detect(const struct trace_row *first)
{
	int l = layout_of(first->n);
	if (l < 0)
		return 0;
	const struct layout *L = &layouts[l];
	return first->f[L->type].len > 0 && !trace_is_number(&first->f[L->type]) &&
	       trace_is_number(&first->f[L->steps]) && trace_is_number(&first->f[L->arrival]) &&
	       trace_is_number(&first->f[L->scale]);
}

static int begin(struct trace_ctx *ctx, const struct trace_row *first)
{
	ctx->variant = layout_of(first->n);
	if (ctx->variant < 0)
		return trace_fail(ctx, first, -1, RK_EINVAL,
				  "gavel: %d tab-separated fields; expected 7 (Philly), 10 "
				  "(physical cluster) or 12 (Shockwave)",
				  first->n);
	return 0;
}

static int row(struct trace_ctx *ctx, const struct trace_row *r, struct rk_trace_job *job)
{
	const struct layout *L = &layouts[ctx->variant];
	if (r->n != L->n)
		return trace_fail(ctx, r, -1, RK_EINVAL,
				  "line has %d tab-separated fields, the first line has %d", r->n,
				  L->n);
	double arrival_s, slo = -1;
	int rc;
	if ((rc = trace_get_str(ctx, r, L->type, "job_type", job->source_type,
				sizeof(job->source_type), 1)) < 0 ||
	    (rc = trace_get_i64(ctx, r, L->steps, "total_steps", 1, INT64_MAX / 2, &job->iters)) < 0 ||
	    (rc = trace_get_f64(ctx, r, L->arrival, "arrival_time", 0, 1e12, &arrival_s)) < 0 ||
	    (rc = trace_get_int(ctx, r, L->scale, "scale_factor", 1, 1 << 20, &job->gpus)) < 0)
		return rc;
	if (L->slo >= 0 && (rc = trace_get_f64(ctx, r, L->slo, "SLO", -1, 1e12, &slo)) < 0)
		return rc;
	if (L->duration >= 0 &&
	    (rc = trace_get_f64(ctx, r, L->duration, "duration", 0, 1e12, &job->duration_s)) < 0)
		return rc;
	job->submit_ms = trace_s_to_ms(arrival_s);
	job->guaranteed = slo > 0;
	from_command(ctx, r, 1, job, &rc);
	return rc;
}

const struct trace_reader rk_trace_reader_gavel = {
	.name = "gavel",
	.summary = "Gavel/Shockwave trace TSV, no header (job_type, command, ..., total_steps, "
		   "scale_factor, ..., arrival_time)",
	.sep = '\t',
	.has_header = 0,
	.detect = detect,
	.begin = begin,
	.row = row,
};
