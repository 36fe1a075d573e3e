/*
 * The model zoo: the white-box description of a training job's model
 * (structure, global batch, measured forward time, fitted performance
 * parameters). Zoo entries are data files under data/zoo/; a job may also give
 * its structure inline or through its launch command (see launch.h).
 */
#ifndef RUBICK_MODEL_H
#define RUBICK_MODEL_H

#include "rubick/error.h"

#define RK_MODEL_NAME_MAX 32

/*
 * The 7 fitted parameters of the performance model (docs/references.md §1.4,
 * Rubick artifact pred_throughput.py). Dimensionless unless stated.
 */
struct rk_perf_params {
	double k_bwd;        /* backward time / forward time */
	double k_sync;       /* p-norm overlap exponent of backward vs gradient all-reduce (>= 1) */
	double k_opt;        /* GPU optimizer time per MiB of parameters (ms/MiB) */
	double k_os_offload; /* CPU optimizer time per MiB of parameters per thread (ms/MiB) */
	double k_const;      /* constant per-iteration overhead (ms) */
	double k_off;        /* overlap exponent (or additive constant) of offload transfer vs sync */
	double k_swap;       /* overlap exponent (or additive constant) of optimizer vs offload */
	/* Not one of the artifact's 7: the part of the forward time that does not
	 * shrink with the per-GPU batch (kernel launches, small-batch inefficiency),
	 * fitted from the profiles' forward times (docs/perf-model.md). 0 = forward
	 * time strictly proportional to the per-GPU batch, as in the artifact. */
	double fwd_fixed_ms;
};

struct rk_model {
	char name[RK_MODEL_NAME_MAX]; /* zoo key, lower case, e.g. "llama7" */
	int layers;                   /* transformer layers */
	int hidden;                   /* hidden size */
	int heads;                    /* attention heads */
	int seq_len;                  /* sequence length (tokens per sample) */
	int vocab;                    /* vocabulary size, 0 if not applicable (ViT) */
	double params;                /* parameter count */
	int global_batch;             /* samples per iteration the traces use */
	double fwd_ms;                /* measured forward time of one global batch on 1 GPU (ms); 0 = unknown */
	int allow_3d;                 /* 1 = may run tensor/pipeline-parallel plans */
	int perf_fitted;              /* 1 = `perf` holds fitted values */
	struct rk_perf_params perf;   /* fitted performance parameters */
};

#endif
