/*
 * `rubick model validate`: fit the performance model from profiling runs,
 * predict every row of measured plan x placement tables and score the
 * predictions (issue 2, "Performance model and fitting"). Driver code: it
 * reads files; the model, fit and readers it calls are in src/model.
 */
#ifndef RUBICK_CLI_MODEL_VALIDATE_H
#define RUBICK_CLI_MODEL_VALIDATE_H

#include "rubick/error.h"
#include "rubick/fit.h"
#include "rubick/perf.h"
#include "rubick/zoo.h"

#include <stdint.h>
#include <stdio.h>

enum rk_vfamily { RK_VF_DP_SINGLE = 0, RK_VF_DP_MULTI = 1, RK_VF_3D = 2, RK_VF_N = 3 };

/* Placement classes of the training protocol's residual scales. */
enum rk_vclass {
	RK_VC_3D = 0,
	/* DP family without offload: one node; several nodes with even GPU counts;
	 * with single-GPU nodes (and no odd count >= 3); with an odd count >= 3 */
	RK_VC_DP_SINGLE, RK_VC_DP_EVEN, RK_VC_DP_ONES, RK_VC_DP_ODD,
	/* the same for ZeRO-Offload */
	RK_VC_OFF_SINGLE, RK_VC_OFF_EVEN, RK_VC_OFF_ONES, RK_VC_OFF_ODD,
	RK_VC_N
};

struct rk_validate_opts {
	struct rk_perf_env env;
	double train_fraction; /* 0 = strict protocol (profile only) */
	uint64_t seed;
	int cpus_per_gpu;      /* CPU threads per GPU for rows that do not say (default 4) */
	int64_t gpu_mem_mb;    /* GPU memory for the artifact plan names' micro-batch choice */
	int calibrate_loo;     /* --calibrate-internode loo (model_validate_calib.c) */
};

struct rk_validate_row {
	char dataset[32];      /* measured folder, e.g. "llama7b_bsz16" */
	int line;
	char plan[32];         /* exec_plan as written */
	char placement[72];
	char canon[96];        /* canonical plan ("" when it could not be read) */
	int family;            /* enum rk_vfamily */
	int cls;               /* enum rk_vclass */
	int train;             /* 1 = used for fitting (--train-fraction), not scored */
	int skipped;
	char reason[256];      /* why skipped */
	double meas_ms, pred_ms, ape;
	int n_nodes;           /* nodes of the placement (multi-node: > 1) */
	int fit;               /* index of its fit in rk_validate.fits */
	double pred0_ms, ape0; /* before --calibrate-internode (= pred_ms, ape without it) */
};

/* What a row was predicted from, kept beside rk_validate.rows so a row can be
 * re-predicted (the inter-node calibration); rows themselves stay text and numbers. */
struct rk_validate_input {
	struct rk_plan plan;
	struct rk_placement placement;
	int cpus;
};

struct rk_validate_fit {
	char dataset[32];
	char target[RK_MODEL_NAME_MAX];  /* model predicted */
	char source[RK_MODEL_NAME_MAX];  /* model whose samples were fitted */
	struct rk_perf_fit_result fit;
	double fwd_ms;                   /* forward time used for the target */
	char notes[24][320];              /* traps met and what was done */
	int n_notes;
	struct rk_model model;           /* the fitted target the rows were predicted with */
	int calibrated;                  /* 1: cal_gbps was fitted (leave this model out) */
	double cal_gbps;                 /* effective inter-node GB/s from the other models */
	int cal_rows;                    /* multi-node rows of the other models it used */
};

struct rk_validate {
	int n_rows, cap_rows;
	struct rk_validate_row *rows;
	struct rk_validate_input *inputs; /* parallel to rows */
	int n_fits, cap_fits;
	struct rk_validate_fit *fits;
	int calibrated;                   /* rk_validate_calibrate_loo ran */
};

struct rk_validate_stats {
	int rows, predicted, skipped;
	double mape, median_ape, max_ape, within_10pct, within_20pct; /* fractions */
};

void rk_validate_opts_default(struct rk_validate_opts *o);
void rk_validate_fini(struct rk_validate *v);

/*
 * One measured table against one profile. `profile_dir` holds the artifact's
 * config.csv + data.csv, or is a rubick-format profile file. `model_name`
 * NULL: the measured file's folder name. Appends rows and one fit to `v`.
 */
int rk_validate_dataset(struct rk_validate *v, const struct rk_zoo *zoo, const char *profile_dir,
			const char *measured_path, const char *model_name,
			const struct rk_validate_opts *o, struct rk_error *err);

/*
 * Every DIR/placements/<name>/placements.csv with its profile from
 * DIR/perf_model_profile/ (pairing rules in docs/perf-model.md).
 */
int rk_validate_traces(struct rk_validate *v, const struct rk_zoo *zoo, const char *dir,
		       const struct rk_validate_opts *o, struct rk_error *err);

/* Fit `model` from the profile at `ppath` only (no measured rows): one fit in `v`. */
int rk_validate_fit_only(struct rk_validate *v, const struct rk_zoo *zoo, const char *ppath,
			 const struct rk_model *model, const struct rk_validate_opts *o,
			 struct rk_error *err);

/* Statistics over the scored rows with `dataset` (NULL = any) and `family` (-1 = any). */
void rk_validate_stats(const struct rk_validate *v, const char *dataset, int family,
		       struct rk_validate_stats *out);

/*
 * Leave-one-model-out inter-node calibration (issue 22 item 6,
 * model_validate_calib.c): for each model M, fit the effective inter-node
 * bandwidth (rk_netcal_fit) on the scored multi-node rows of every other
 * model, then re-predict M's rows with it. Before-figures stay in pred0/ape0.
 */
int rk_validate_calibrate_loo(struct rk_validate *v, const struct rk_validate_opts *o,
			      struct rk_error *err);

/* MAPE over scored rows like rk_validate_stats, `multi` 1 = multi-node rows
 * only, `before` 1 = the uncalibrated predictions; -1 when no row matches. */
double rk_validate_mape(const struct rk_validate *v, const char *dataset, int family, int multi,
			int before);

void rk_validate_print_text(const struct rk_validate *v, FILE *out);
void rk_validate_print_json(const struct rk_validate *v, FILE *out);

#endif
