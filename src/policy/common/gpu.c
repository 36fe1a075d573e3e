/*
 * The GPU table (gpu.h). Figures are NVIDIA's datasheet peaks per GPU, dense
 * (no structured sparsity); docs/gpus.md cites the datasheet of every row.
 * Intra-node bandwidth counts both directions, as NVIDIA quotes NVLink (A800:
 * 400 GB/s, the Rubick testbed's figure); PCIe 3.0 x16 is 32 GB/s, 4.0 x16
 * 64 GB/s, 5.0 x16 128 GB/s the same way.
 */
#include "rubick/gpu.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const struct rk_gpu_spec table[] = {
    /* name, product, GiB, FP16, FP32, mem GB/s, link, link GB/s, PCIe GB/s */
    {"a800", "A800 SXM4 80GB", 80, 312, 19.5, 2039, RK_GPU_LINK_NVLINK, 400, 64},
    {"a100", "A100 SXM4 40GB", 40, 312, 19.5, 1555, RK_GPU_LINK_NVLINK, 600, 64},
    {"a100-80g", "A100 SXM4 80GB", 80, 312, 19.5, 2039, RK_GPU_LINK_NVLINK, 600, 64},
    {"h100", "H100 SXM5 80GB", 80, 989, 67, 3350, RK_GPU_LINK_NVLINK, 900, 128},
    {"h800", "H800 SXM5 80GB", 80, 989, 67, 3350, RK_GPU_LINK_NVLINK, 400, 128},
    {"v100", "V100 SXM2 32GB", 32, 125, 15.7, 900, RK_GPU_LINK_NVLINK, 300, 32},
    {"p100", "P100 PCIe 16GB", 16, 18.7, 9.3, 732, RK_GPU_LINK_PCIE, 32, 32},
    {"k80", "K80 (one GK210 of the board)", 12, 0, 4.37, 240, RK_GPU_LINK_PCIE, 32, 32},
    {"t4", "T4 16GB", 16, 65, 8.1, 320, RK_GPU_LINK_PCIE, 32, 32},
    {"2080ti", "GeForce RTX 2080 Ti 11GB", 11, 53.8, 13.4, 616, RK_GPU_LINK_PCIE, 32, 32},
    {"rtx6000", "Quadro RTX 6000 24GB", 24, 130.5, 16.3, 672, RK_GPU_LINK_PCIE, 32, 32},
};

static const struct {
	const char *alias, *name;
} aliases[] = {
    {"rtx2080ti", "2080ti"},
    {"a100-40g", "a100"},
};

#define N_TABLE ((int)(sizeof(table) / sizeof(table[0])))

static int name_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != *b)
			return 0;
	return *a == '\0' && *b == '\0';
}

const struct rk_gpu_spec *rk_gpu_find(const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < N_TABLE; i++)
		if (name_eq(name, table[i].name))
			return &table[i];
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (name_eq(name, aliases[i].alias))
			return rk_gpu_find(aliases[i].name);
	return NULL;
}

int rk_gpu_count(void)
{
	return N_TABLE;
}

const struct rk_gpu_spec *rk_gpu_at(int i)
{
	return i >= 0 && i < N_TABLE ? &table[i] : NULL;
}

int rk_gpu_list(char *buf, size_t size)
{
	int need = 0;
	for (int i = 0; i < N_TABLE; i++) {
		int n = snprintf(buf && (size_t)need < size ? buf + need : NULL,
		                 buf && (size_t)need < size ? size - (size_t)need : 0, "%s%s",
		                 i ? ", " : "", table[i].name);
		if (n < 0)
			return n;
		need += n;
	}
	if (buf && size > 0 && N_TABLE == 0)
		buf[0] = '\0';
	return need;
}

double rk_gpu_train_tflops(const struct rk_gpu_spec *g)
{
	return g->fp16_tflops > g->fp32_tflops ? g->fp16_tflops : g->fp32_tflops;
}
