/*
 * The GPU table: what rubick knows about each GPU type a cluster spec may name
 * (memory, peak dense FP16/FP32 rates, memory bandwidth, intra-node link).
 * The cluster parser rejects types that are not in it, and the simulator's
 * oracle scales answers measured on one type to another with it
 * (docs/gpus.md gives every figure's source and the scaling rule).
 */
#ifndef RUBICK_GPU_H
#define RUBICK_GPU_H

#include <stddef.h>
#include <stdint.h>

/* How the GPUs of one node talk to each other. */
enum rk_gpu_link {
	RK_GPU_LINK_NVLINK = 0,
	RK_GPU_LINK_PCIE = 1,
};

struct rk_gpu_spec {
	const char *name;      /* lower case, as a cluster spec writes it: "a800", "t4" */
	const char *product;   /* the product the figures are for, e.g. "A800 SXM4 80GB" */
	int mem_gib;           /* memory of one GPU (GiB) */
	double fp16_tflops;    /* peak dense FP16 (tensor cores with FP32 accumulate where the
	                        * GPU has them); 0 = no FP16 rate above FP32 (K80) */
	double fp32_tflops;    /* peak FP32 */
	double mem_gbps;       /* memory bandwidth (GB/s) */
	enum rk_gpu_link link; /* intra-node GPU-GPU link */
	double link_gbps;      /* intra-node bandwidth of one GPU, both directions (GB/s) */
	double pcie_gbps;      /* host link of one GPU, both directions (GB/s) */
};

/* The spec of `name` (case-insensitive; aliases such as "rtx2080ti" -> "2080ti"
 * resolve to the canonical entry), or NULL when the type is unknown. Borrowed, static. */
const struct rk_gpu_spec *rk_gpu_find(const char *name);

/* Entry i of the table (0..rk_gpu_count()-1), canonical names only. */
const struct rk_gpu_spec *rk_gpu_at(int i);
int rk_gpu_count(void);

/* "a800, a100, ..." into buf (for messages). Returns the length it needed, as snprintf. */
int rk_gpu_list(char *buf, size_t size);

/*
 * The rate training runs at for scaling compute time between types: the FP16
 * peak where the GPU has a faster FP16 path than FP32, else FP32 (TFLOP/s).
 */
double rk_gpu_train_tflops(const struct rk_gpu_spec *g);

/* The type the Rubick artifact measured on and the perf model is calibrated for. */
#define RK_GPU_REFERENCE "a800"

#endif
