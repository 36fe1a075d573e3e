/*
 * The performance model: predicted iteration time of one execution plan on one
 * placement, from the model's structure, its 7 fitted parameters
 * (struct rk_perf_params, model.h) and the cluster-level constants below
 * (docs/references.md §1.4). Pure arithmetic: no I/O, no state.
 *
 * Units: times in ms, data volumes in MB (2^20 bytes), bandwidths in GB/s,
 * which the model treats as MB/ms (the artifact's convention, §1.4).
 */
#ifndef RUBICK_PERF_H
#define RUBICK_PERF_H

#include "rubick/error.h"
#include "rubick/model.h"
#include "rubick/plan.h"

/* How two phases that can run concurrently combine (§1.4.1 "Overlap functions"). */
enum rk_overlap_form {
	RK_OVERLAP_PNORM = 0,    /* OV(a,b;k) = (a^k + b^k)^(1/k), k >= 1 (default; Pollux form) */
	RK_OVERLAP_ADDITIVE = 1, /* OV_off(a,b) = a + k_off + b, OV_swap = a + k_swap + b (artifact main branch) */
};

/*
 * Cluster-level constants. A deployment measures them once with a
 * micro-benchmark (all-reduce, host copy, GEMM); they are the same for every
 * model. rk_perf_env_a800() returns the values calibrated for the A800 testbed
 * of the Rubick traces (docs/perf-model.md says how).
 */
struct rk_perf_env {
	double nvlink_gbps;      /* intra-node all-reduce bus bandwidth seen by one GPU (GB/s) */
	double pcie_gbps;        /* host <-> GPU copy bandwidth of one GPU (GB/s) */
	double host_mem_gbps;    /* effective host bandwidth at which each ZeRO-Offload process
				    touches the whole model's fp32 states (16 bytes/parameter)
				    once per step, whatever its shard (GB/s) */
	double net_gbps;         /* bandwidth of one inter-node NIC (GB/s) */
	int nics_per_node;       /* NICs per node; GPUs share them in equal groups */
	int gpus_per_node;       /* GPUs in a full node (maps a GPU to its NIC group) */
	double gpu_tflops;       /* effective dense rate of one GPU (TFLOP/s); derives forward
				    time from the structure when the model has no fwd_ms */
	double recompute_factor; /* extra forward passes with checkpointing: forward costs (1+r)x */
	double tp_eff;           /* tensor-parallel efficiency per doubling of tp:
				    eff_tp(tp) = tp * tp_eff^log2(tp) (speedup, §1.4.3 note) */
	double grad_bytes;       /* bytes per gradient element on the wire (4 = fp32 all-reduce) */
	double act_bytes;        /* bytes per activation element (2 = fp16/bf16) */
	enum rk_overlap_form overlap;
};

/* Calibrated A800 defaults (8 GPUs per node). Never fails. */
void rk_perf_env_a800(struct rk_perf_env *env /* OUT */);

/* Check every field is finite and in range; names the field at fault. */
int rk_perf_env_check(const struct rk_perf_env *env, struct rk_error *err);

/* The predicted phases of one iteration (ms). */
struct rk_perf_breakdown {
	double fwd_ms;   /* forward work, recompute included (alpha_f * T_f) */
	double sync_ms;  /* backward overlapped with gradient sync and offload (the profiles' Tcc) */
	double opt_ms;   /* optimizer step overlapped with offload transfer (Topt) */
	double comm_ms;  /* exposed non-overlapped communication (TP, PP), included in sync_ms */
	double iter_ms;  /* whole iteration (k_const included) */
};

/*
 * Predict one iteration of `plan` on placement `pl` with `cpus_per_gpu` CPU
 * threads per GPU (used by ZeRO-Offload's host optimizer; >= 1).
 * Returns 0, RK_EINVAL (plan, placement or inputs inconsistent) or RK_ERANGE
 * (a parameter outside its bounds). `out` may be NULL.
 */
int rk_perf_predict_detail(const struct rk_model *m, const struct rk_perf_params *k,
			   const struct rk_perf_env *env, const struct rk_plan *plan,
			   const struct rk_placement *pl, int cpus_per_gpu,
			   struct rk_perf_breakdown *out /* OUT */);

/* Same, iteration time only. */
int rk_perf_predict(const struct rk_model *m, const struct rk_perf_params *k,
		    const struct rk_perf_env *env, const struct rk_plan *plan,
		    const struct rk_placement *pl, int cpus_per_gpu, double *iter_ms /* OUT */);

/* Forward FLOPs of one sample from the structure (Kaplan et al. 2020:
 * seq * (2 params + 2 layers seq hidden)); used when a model has no measured
 * forward time and to carry a forward time from one model to another. */
double rk_perf_fwd_flops(const struct rk_model *m);

/* Bounds the fit keeps each parameter in (§1.5, p-norm form): lo[i] <= x[i] <= hi[i]
 * in the order k_bwd, k_sync, k_opt, k_os_offload, k_const, k_off, k_swap. */
void rk_perf_params_bounds(enum rk_overlap_form form, double lo[7] /* OUT */, double hi[7] /* OUT */);

/* Parameters as an array in the order above, and back. */
void rk_perf_params_to_array(const struct rk_perf_params *k, double x[7] /* OUT */);
void rk_perf_params_from_array(const double x[7], struct rk_perf_params *k /* OUT */);

#endif
