/*
 * The memory model: GPU memory per GPU and host memory per GPU process of one
 * plan, so that infeasible plans are never predicted or launched. Formulas and
 * sources are in docs/memory-model.md (ZeRO, Rajbhandari et al. 2020;
 * ZeRO-Offload, Ren et al. 2021; activations, Korthikanti et al. 2022).
 */
#ifndef RUBICK_MEMORY_H
#define RUBICK_MEMORY_H

#include "rubick/error.h"
#include "rubick/model.h"
#include "rubick/plan.h"

#include <stdint.h>

/* Pass as a memory limit to skip that check. */
#define RK_MEM_UNLIMITED INT64_MAX

/*
 * Memory every GPU process holds besides the model: CUDA context, cuBLAS/cuDNN
 * workspaces, NCCL buffers and the caching allocator's fragmentation (MiB).
 * See docs/memory-model.md for how it was chosen.
 */
#define RK_MEM_RESERVE_MB 4096.0

/*
 * DeepSpeed's default reduce/all-gather bucket (5e8 elements of fp16): the
 * gradient staging buffer ZeRO-Offload keeps on the GPU (MiB).
 */
#define RK_MEM_OFFLOAD_BUCKET_MB (5e8 * 2.0 / 1048576.0)

/* Per-GPU memory of a plan; all MiB. For 3D plans the worst (first) stage. */
struct rk_mem_usage {
	double weights_mb;     /* fp16 parameters resident on the GPU */
	double grads_mb;       /* fp16 gradients (or the offload staging bucket) */
	double optim_mb;       /* fp32 master weights + Adam moments on the GPU */
	double activ_mb;       /* activations kept for backward, micro-batches in flight */
	double reserve_mb;     /* RK_MEM_RESERVE_MB */
	double gpu_mb;         /* sum of the above: peak GPU memory of one GPU */
	double host_mb;        /* host memory of one GPU process (offloaded states) */
};

/*
 * Estimate the memory of `plan` for `model` (structure fields layers, hidden,
 * heads, seq_len, vocab, params must be positive; vocab may be 0). Writes *out
 * on success. Returns 0 or RK_EINVAL naming the bad model field or plan.
 */
int rk_memory_estimate(const struct rk_model *model, const struct rk_plan *plan,
		       struct rk_mem_usage *out, struct rk_error *err);

/*
 * Whether `plan` fits: gpu_mb <= gpu_mem_mb, and host_mb times the most GPUs
 * on one node of `pl` <= host_mem_mb (host memory the job may use per node).
 * `pl` may be NULL when host_mem_mb is RK_MEM_UNLIMITED. Fills *out (may be
 * NULL) in every case the estimate succeeds. Returns 0, RK_EINFEASIBLE with the
 * numbers in the message, or RK_EINVAL.
 */
int rk_memory_check(const struct rk_model *model, const struct rk_plan *plan,
		    const struct rk_placement *pl, int64_t gpu_mem_mb, int64_t host_mem_mb,
		    struct rk_mem_usage *out, struct rk_error *err);

#endif
