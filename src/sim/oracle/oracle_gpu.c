/*
 * GPU types in the oracle (docs/oracle.md "GPU types", docs/gpus.md): how an
 * answer measured or modelled on one GPU type is carried to another with the
 * GPU table (gpu.h). The rule, term by term:
 *  - compute (forward, backward, recompute): time x the ratio of peak rates,
 *    from / to, at the precision the measured workload trained in: FP16
 *    (tensor cores; FP32 where a GPU has no faster FP16 path) for the Rubick
 *    tables and the model (mixed precision, perf env act/grad bytes 2), FP32
 *    for the Sia/Pollux profiles (their PyTorch apps train in FP32: on their
 *    own per-type measurements the FP32 peaks predict the median T4/A100 and
 *    T4/2080 Ti ratios within 6%, the FP16 peaks get the 2080 Ti/T4 order
 *    wrong; docs/oracle.md "GPU types");
 *  - the optimizer step, memory-bound (it streams parameters, gradients and
 *    states once): time x the ratio of memory bandwidths;
 *  - intra-node collectives: bandwidth x the ratio of intra-node links (NVLink
 *    or PCIe); the host link (offload copies) x the ratio of PCIe links;
 *  - inter-node networking and host-side terms (CPU Adam, k_const): unchanged,
 *    they do not run on the GPU.
 * Peaks overstate how much faster a big GPU runs a small kernel, so a table
 * measured on the type itself always wins over this scaling.
 */
#include "sim/oracle/oracle_internal.h"

#include "rubick/gpu.h"
#include "rubick/perf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Sia artifact cluster names -> GPU table names (traces/sia-artifacts/README.md). */
static const char *const sia_names[][2] = {
    {"aws", "t4"},       {"azure", "v100"}, {"dgx-ext", "a100"}, {"dgx", "a100"},
    {"quad", "rtx6000"}, {"rtx", "2080ti"}, {"", "t4"}, /* untyped = the Pollux T4 cluster */
};

const char *oracle_gpu_of_profile(const char *profile_type)
{
	for (size_t i = 0; i < sizeof(sia_names) / sizeof(sia_names[0]); i++)
		if (!strcmp(profile_type, sia_names[i][0]))
			return sia_names[i][1];
	const struct rk_gpu_spec *g = rk_gpu_find(profile_type);
	return g ? g->name : NULL;
}

int oracle_gpu_scale(const char *from, const char *to, int fp32, struct oracle_gpu_scale *s,
		     struct rk_error *err)
{
	const struct rk_gpu_spec *a = rk_gpu_find(from), *b = rk_gpu_find(to);
	if (!a || !b)
		return rk_error_set(err, RK_ENOTFOUND,
		                    "GPU type '%s' is not in the GPU table (docs/gpus.md): cannot "
		                    "scale an answer to it",
		                    a ? to : from);
	s->same = a == b;
	s->compute = fp32 ? a->fp32_tflops / b->fp32_tflops
			  : rk_gpu_train_tflops(a) / rk_gpu_train_tflops(b);
	s->mem = a->mem_gbps / b->mem_gbps;
	s->link = a->link_gbps / b->link_gbps;
	s->pcie = a->pcie_gbps / b->pcie_gbps;
	return 0;
}

int oracle_model_iter_typed(const struct rk_oracle *o, const struct rk_model *m,
                            const struct rk_plan *plan, const struct rk_placement *pl,
                            int cpus_per_gpu, const char *gpu_type, double *iter_s,
                            struct rk_error *err)
{
	/* Untyped nodes (clusters built without the parser) run as the reference. */
	const char *to = gpu_type && *gpu_type ? gpu_type : RK_GPU_REFERENCE;
	struct oracle_gpu_scale s;
	int rc = oracle_gpu_scale(RK_GPU_REFERENCE, to, 0, &s, err);
	if (rc)
		return rc;
	if (s.same || !o->env)
		return oracle_model_iter_s(o, m, plan, pl, cpus_per_gpu, iter_s, err);
	/* The model's forward time and fitted constants are the reference's (zoo.md,
	 * perf-model.md: calibrated on the A800 testbed); carry them to `to`. */
	struct rk_model mt = *m;
	mt.fwd_ms *= s.compute;
	mt.perf.fwd_fixed_ms *= s.compute;
	mt.perf.k_opt *= s.mem;
	struct rk_perf_env env = *o->env;
	env.gpu_tflops /= s.compute;
	env.nvlink_gbps /= s.link;
	env.pcie_gbps /= s.pcie;
	struct rk_oracle tmp = *o;
	tmp.env = &env;
	return oracle_model_iter_s(&tmp, &mt, plan, pl, cpus_per_gpu, iter_s, err);
}
