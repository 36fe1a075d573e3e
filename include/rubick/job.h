/*
 * A job as every policy sees it: the white-box description (model, global
 * batch, request) and the live state a driver (simulator or daemon) keeps.
 */
#ifndef RUBICK_JOB_H
#define RUBICK_JOB_H

#include "rubick/cluster.h"
#include "rubick/goodput.h"
#include "rubick/model.h"
#include "rubick/plan.h"

#include <stdint.h>

#define RK_JOB_NAME_MAX 64
#define RK_TENANT_MAX 32
#define RK_JOB_TYPE_MAX 64
#define RK_JOB_GOODPUT_TYPES 8

enum rk_job_state {
	RK_JOB_PENDING = 0,  /* waiting for resources (also after preemption) */
	RK_JOB_RUNNING,      /* holds an allocation and makes progress */
	RK_JOB_RESTARTING,   /* holds an allocation, paying the reconfiguration delay */
	RK_JOB_DONE,
	RK_JOB_FAILED,
	RK_JOB_CANCELLED,
};

/*
 * A job's goodput model (goodput.h; Pollux, Qiao et al., OSDI'21, §3), kept by
 * a driver that runs one (the simulator's goodput oracle, docs/oracle.md).
 * The driver updates `grad` and `progress` as the job trains; a policy reads
 * them to choose each allocation's per-GPU batch and accumulation steps
 * (rk_goodput_optimize) and sets them on its decision (policy.h).
 */
struct rk_job_goodput {
	struct rk_goodput_limits limits; /* the application's batch limits */
	struct rk_goodput_grad grad;     /* gradient statistics at the current progress */
	int trace_batch;                 /* the trace's total batch: what a policy that does not
					  * adapt batch sizes runs (local batch = trace_batch / replicas) */
	int local_bsz;                   /* the per-GPU batch the job runs now (0 = trace_batch / GPUs) */
	int accum_steps;                 /* the accumulation steps it runs now (0 = none) */
	double progress;                 /* statistical progress so far (samples at init_batch) */
	double target;                   /* progress at which the job reaches its validation target */
	int n_types;                     /* GPU types with a throughput model, <= RK_JOB_GOODPUT_TYPES */
	char gpu_type[RK_JOB_GOODPUT_TYPES][RK_GPU_TYPE_MAX];
	struct rk_goodput_perf perf[RK_JOB_GOODPUT_TYPES]; /* perf[i] on nodes of gpu_type[i] */
};

struct rk_job {
	int64_t id;
	char name[RK_JOB_NAME_MAX];
	char tenant[RK_TENANT_MAX];
	const struct rk_model *model; /* borrowed white box; never NULL */
	int global_batch;             /* samples per iteration; invariant for the job's life */
	double iters_total;           /* iterations to finish */
	double iters_done;
	int64_t submit_ms;

	/* what the user asked for */
	int req_gpus;
	int req_cpus;
	int64_t req_mem_mb;
	double req_net_gbps;
	struct rk_plan req_plan;
	struct rk_plan_space space;   /* plans the job's script can run (plan.h); zeroed = every
				       * plan. Every policy keeps to it (rk_decisions_check). */
	int guaranteed;               /* 1 = keeps its performance baseline */
	int min_gpus, max_gpus;       /* elastic range, a bound every policy keeps (rk_job_gpu_range);
				       * both == req_gpus when inelastic */
	double est_duration_s;        /* run time at the request, for SJF-like ordering; 0 = unknown */

	/* live state, written only by the driver */
	enum rk_job_state state;
	struct rk_alloc alloc;        /* owned */
	struct rk_plan plan;          /* plan now running (valid when alloc.n > 0) */
	int restarts;                 /* reconfigurations and preemptions so far */
	int64_t first_start_ms;       /* -1 until first started */
	int64_t last_change_ms;       /* last start, resize, re-plan or preemption */
	double attained_gpu_s;        /* GPU-seconds of service so far (Tiresias) */
	double baseline_sps;          /* guaranteed baseline throughput (samples/s), 0 if none */
	/* Online refit (rubick/refit.h), written by a driver that refits `model`
	 * from this job's observed iterations (the simulator with refit on, rubickd from reports); all 0
	 * where none does. Only what the job really ran: nothing about a plan it
	 * did not run. */
	int model_refits;             /* refits of `model` from the job's own observed runs */
	double observed_sps;          /* observed under the current plan and allocation, 0 = none */
	double model_miss;            /* largest |predicted - observed| / observed before a refit */
	/* the trace's own job type (e.g. "ResNet-50 (batch size 64)", "vgg16"): the key of
	 * the interference tables (sharing.h); "" = use the model name */
	char job_type[RK_JOB_TYPE_MAX];
	/* The GPU type the trace's run time was measured on (gpu.h names): the
	 * simulator turns a run time into work (iterations) on nodes of this type,
	 * so the same work runs faster on faster GPUs (docs/oracle.md "Job length").
	 * "" = on the cluster the job runs on. */
	char ref_gpu_type[RK_GPU_TYPE_MAX];
	/* Global batch of the trace's own application (job_type) when the trace
	 * gives one the stand-in model does not take (Sia's batch_size): a profile
	 * of that application is read at app_batch / replicas. 0 = none. */
	int app_batch;
	/* Trace-native speeds (docs/oracle.md "Trace-native speeds"): the whole
	 * job's steps per second on g GPUs, native_sps[g] for g = 1..native_max
	 * (index 0 unused), as the driver's measured throughput file gives them
	 * on its reference GPU type, where the job runs at those speeds (Gavel,
	 * Shockwave). Gavel's own policies read this matrix; model-driven
	 * policies may use it in place of a stand-in model's scaling. Borrowed
	 * from the driver, which keeps it for the job's life; NULL / 0 = none. */
	const double *native_sps;
	int native_max;
	/* The goodput model of the job where the driver runs one (the goodput
	 * oracle), borrowed from the driver for the job's life; NULL = none, and
	 * the job runs its trace's batch whatever a decision asks. */
	const struct rk_job_goodput *goodput;
};

#endif
