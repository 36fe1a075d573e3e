/*
 * Each job's speedup table for the Pollux policy (pollux.c): for every GPU
 * type and GPU count it may run, the speedup over one GPU (Qiao et al.,
 * OSDI 2021, §4.2; the artifact's SpeedupFunction divides by the goodput at
 * one node and one replica) and, with a goodput model, the per-GPU batch
 * and accumulation steps that reach it (rk_goodput_optimize, §3).
 *
 * Counts: g = d * tp * pp for every divisor d of the global batch, so that
 * the user's plan scales to g without re-planning (rk_baseline_plan_scale:
 * decisions carry a plan valid for the trace's batch, which the driver runs
 * where the job has no goodput model), within the job's GPU range, the
 * type's GPUs and POLLUX_MAX_NODES_PER_JOB nodes of the type, packed on the
 * fewest nodes (ceil(g / node GPUs)).
 *
 * Speed: with a goodput model (rk_job.goodput, the goodput oracle) the
 * goodput at the optimal batch on the type's throughput model (perf[] of the
 * type; a type the job has no model for is not a candidate); without one,
 * the job's throughput at its trace batch: its measured speeds where it has
 * them (rk_baseline_native_sps), else the fitted performance model
 * (rk_baseline_tput_sps) with efficiency 1. The base is the best one-GPU
 * speed over the types (the smallest count's speed per GPU when one GPU is
 * not a candidate).
 *
 * A table depends only on the key (pollux_speed_key): the gradient
 * statistics, the model's refits, the GPU range, the batch and the round's
 * types; rounds reuse it until the key changes.
 */
#include "policy/pollux/pollux_internal.h"

#include "policy/common/baseline.h"
#include "rubick/plan.h"
#include "rubick/policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL; /* FNV-1a */
	return h;
}

uint64_t pollux_speed_key(const struct rk_job *j, uint64_t types_key)
{
	uint64_t h = types_key ^ 0xcbf29ce484222325ULL;
	if (j->goodput) {
		h = mix(h, &j->goodput->grad.sqr, sizeof(double));
		h = mix(h, &j->goodput->grad.var, sizeof(double));
	}
	h = mix(h, &j->model_refits, sizeof(int));
	h = mix(h, &j->min_gpus, sizeof(int));
	h = mix(h, &j->max_gpus, sizeof(int));
	h = mix(h, &j->global_batch, sizeof(int));
	return h | 1; /* never 0: 0 marks an empty record */
}

uint64_t pollux_types_key(const struct pollux_types *t)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (int k = 0; k < t->n; k++) {
		h = mix(h, t->name[k], strlen(t->name[k]));
		h = mix(h, &t->cap[k], sizeof(int));
		h = mix(h, &t->node_gpus[k], sizeof(int));
	}
	return h;
}

static int goodput_index(const struct rk_job_goodput *gp, const char *type)
{
	for (int i = 0; i < gp->n_types && i < RK_JOB_GOODPUT_TYPES; i++)
		if (!strcmp(gp->gpu_type[i], type))
			return i;
	return -1;
}

/* Speed of j on g GPUs of type k (samples/s; 0 = cannot run), and the batch. */
static double speed_at(const struct rk_job *j, const struct pollux_types *ty, int k, int g,
		       int nodes, const struct rk_perf_env *env, int *local_bsz, int *accum)
{
	*local_bsz = 0;
	*accum = 0;
	struct rk_plan plan;
	struct rk_placement pl;
	if (rk_baseline_plan_scale(&j->req_plan, j->global_batch, g, &plan) ||
	    rk_placement_consolidated(g, ty->node_gpus[k], &pl, NULL) ||
	    rk_plan_check_placement(&plan, &pl, NULL))
		return 0;
	if (j->goodput) {
		int gi = goodput_index(j->goodput, ty->name[k]);
		struct rk_goodput_choice ch;
		if (gi < 0 || rk_goodput_optimize(&j->goodput->perf[gi], &j->goodput->grad,
						  &j->goodput->limits, nodes, g, &ch))
			return 0;
		*local_bsz = ch.local_bsz;
		*accum = ch.accum_steps;
		return ch.goodput > 0 && isfinite(ch.goodput) ? ch.goodput : 0;
	}
	if (rk_baseline_is_native(j))
		return rk_baseline_native_sps(j, g);
	double t = 0;
	if (rk_baseline_tput_sps(j, &plan, &pl, ty->cpus_per_gpu[k], env, &t))
		return 0;
	return t > 0 && isfinite(t) ? t : 0;
}

int pollux_speed_build(const struct rk_job *j, const struct pollux_types *ty,
		       const struct rk_perf_env *env, struct pollux_jspeed *out, struct rk_error *err)
{
	int lo, hi;
	rk_job_gpu_range(j, &lo, &hi);
	int w = (j->req_plan.tp > 1 ? j->req_plan.tp : 1) * (j->req_plan.pp > 1 ? j->req_plan.pp : 1);
	int B = j->global_batch > 0 ? j->global_batch : 1;
	int max_c = 0, n_div = 0;
	for (int d = 1; (long long)d * d <= B; d++)
		if (B % d == 0)
			n_div += d * d == B ? 1 : 2;
	max_c = n_div * ty->n + 1;
	struct pollux_cand *c = malloc(sizeof(*c) * (size_t)max_c);
	int *bsz = malloc(sizeof(int) * 2 * (size_t)max_c);
	int *divs = malloc(sizeof(int) * (size_t)(n_div > 0 ? n_div : 1));
	if (!c || !bsz || !divs) {
		free(c);
		free(bsz);
		free(divs);
		return rk_error_set(err, RK_ENOMEM, "pollux: out of memory for job %lld's speedups",
				    (long long)j->id);
	}
	/* Divisors ascending: the small ones up, then their cofactors down. */
	int nd = 0;
	for (int d = 1; (long long)d * d <= B; d++)
		if (B % d == 0)
			divs[nd++] = d;
	for (int i = nd - 1; i >= 0; i--)
		if (divs[i] != B / divs[i])
			divs[nd++] = B / divs[i];
	int n = 0;
	double base = 0, per_gpu = 0;
	for (int k = 0; k < ty->n; k++) {
		for (int i = 0; i < nd; i++) {
			long long gl = (long long)divs[i] * w;
			if (gl < lo || gl > hi || gl > ty->cap[k])
				continue;
			int g = (int)gl, nodes = (g + ty->node_gpus[k] - 1) / ty->node_gpus[k];
			if (nodes > POLLUX_MAX_NODES_PER_JOB)
				break;
			int m, s;
			double v = speed_at(j, ty, k, g, nodes, env, &m, &s);
			if (!(v > 0))
				continue;
			if (g == 1 && v > base)
				base = v;
			if (v / g > per_gpu && (n == 0 || c[n - 1].type != k))
				per_gpu = v / g; /* the type's smallest count */
			bsz[2 * n] = m;
			bsz[2 * n + 1] = s;
			c[n++] = (struct pollux_cand){k, g, nodes, v};
		}
	}
	if (!(base > 0))
		base = per_gpu > 0 ? per_gpu : 1;
	for (int i = 0; i < n; i++)
		c[i].value /= base;
	free(divs);
	free(out->c);
	free(out->bsz);
	out->c = c;
	out->bsz = bsz;
	out->n = n;
	return RK_OK;
}
