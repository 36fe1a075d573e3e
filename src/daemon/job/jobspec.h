/*
 * Job submissions, updates and progress reports as the API receives them:
 * strict JSON validation (unknown fields, wrong types and out-of-range values
 * are errors naming the field) into plain C structs, and the canonical JSON
 * a validated spec is stored as. Runs on request threads: no shared state.
 */
#ifndef RUBICKD_JOBSPEC_H
#define RUBICKD_JOBSPEC_H

#include "rubick/error.h"
#include "rubick/job.h"
#include "rubick/model.h"
#include "rubick/plan.h"

#include <stddef.h>
#include <stdint.h>

struct rk_zoo;

#define RKD_FIELD_MAX 64
#define RKD_COMMAND_MAX 8192
#define RKD_MODEL_TEXT_MAX 4096
#define RKD_KEY_MAX 64
#define RKD_ENV_MAX 64          /* variables a submission's `env` may set */
#define RKD_ENV_NAME_MAX 128
#define RKD_ENV_VALUE_MAX 4096
#define RKD_SLURM_NAME_MAX 64   /* a Slurm partition, account or QOS name, with its NUL */

/* A validation failure: the RK_E* code, the message and the JSON field at fault. */
struct rkd_verr {
	struct rk_error e;
	char field[RKD_FIELD_MAX]; /* "" when the body as a whole is at fault */
};

int rkd_verr_set(struct rkd_verr *v, int code, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A validated submission (POST /v1/jobs). Strings are owned. */
struct rkd_spec {
	char name[RK_JOB_NAME_MAX];
	char tenant[RK_TENANT_MAX];       /* "" = the caller's tenant */
	char model[RK_MODEL_NAME_MAX];    /* zoo name, or "" */
	char *model_spec;                 /* inline zoo-format text, or NULL */
	char *launch;                     /* launch command read for the structure, or NULL */
	char *command;                    /* what the engine runs; NULL = `launch` */
	int global_batch;                 /* 0 = the model's */
	double iterations;
	int gpus;
	int cpus;
	int64_t mem_mb;
	double net_gbps;
	int has_plan;
	struct rk_plan plan;
	/*
	 * `plan_space`: the plans the job's script can run (plan.h). has_space 0 =
	 * not given: the daemon derives one at submission (rkd_spec_default_space)
	 * and stores it, so a stored spec without it is a job accepted before
	 * spaces existed, which keeps every plan.
	 */
	int has_space;
	struct rk_plan_space space;
	int guaranteed;
	int min_gpus, max_gpus;
	double est_duration_s;
	char key[RKD_KEY_MAX];            /* idempotency key, "" = none */
	/* submit held (sbatch --hold): state, not request, so never in the encoded spec;
	 * the stored row's hold keeps it (sched_hold.c) */
	int hold;
	/*
	 * `env`: variables the job gets on top of the clean environment
	 * (identity.h), "NAME=value", in name order; none may be one rubick or
	 * Slurm sets (RUBICK_*, CUDA_VISIBLE_DEVICES, SLURM_*).
	 */
	char **env;
	int n_env;
	/*
	 * --engine slurm: the job's partition, account and QOS ("" = the tenant's,
	 * else Slurm's default) and time limit in minutes (0 = the tenant's, else
	 * the partition's); checked against the tenant's allow-lists at submission
	 * (sched_slurm_opts.c, docs/slurm.md).
	 */
	char slurm_partition[RKD_SLURM_NAME_MAX], slurm_account[RKD_SLURM_NAME_MAX];
	char slurm_qos[RKD_SLURM_NAME_MAX];
	int slurm_time_limit;
};

void rkd_spec_fini(struct rkd_spec *s);

/* Parse and validate a submission body. OUT: *out (rkd_spec_fini). */
int rkd_spec_parse(const char *body, size_t len, struct rkd_spec *out, struct rkd_verr *v);

/* The canonical JSON of a spec (caller frees); NULL on allocation failure. */
char *rkd_spec_encode(const struct rkd_spec *s);

/*
 * The white box of a spec: the zoo entry, the inline structure or the model
 * read from the launch command. OUT: *model. Errors name the spec field.
 */
int rkd_spec_model(const struct rkd_spec *s, const struct rk_zoo *zoo, struct rk_model *model,
		   struct rkd_verr *v);

/*
 * When the submission declares no `plan_space`, the one its command shows
 * (rk_launch_default_space over `launch`, else `command`), widened to admit a
 * submitted `plan`: the submitter's own plan is what the job says it runs.
 * Sets has_space. Never fails: a command the reader cannot read is opaque.
 */
void rkd_spec_default_space(struct rkd_spec *s);
/*
 * 0 when `plan` lies in the spec's plan space (or the spec has none: a job
 * accepted before spaces existed); else RK_EINVAL naming field "plan" and the
 * dimension (rk_plan_space_check).
 */
int rkd_spec_plan_check(const struct rkd_spec *s, const struct rk_plan *plan, struct rkd_verr *v);

/* A change to a job's request (PUT /v1/jobs/{id}); has_* say which fields came. */
struct rkd_update {
	int has_gpus, gpus;
	int has_min_gpus, min_gpus;
	int has_max_gpus, max_gpus;
	int has_plan, clear_plan;
	struct rk_plan plan;
	int has_guaranteed, guaranteed;
};

int rkd_update_parse(const char *body, size_t len, struct rkd_update *out, struct rkd_verr *v);

/*
 * The body of POST /v1/jobs/{id}/hold, /release and /requeue: empty, {} or,
 * where `hold` is not NULL (requeue), {"hold": BOOL} (OUT: *hold, 0 when
 * absent). Any other field is RK_EINVAL naming it.
 */
int rkd_job_op_parse(const char *body, size_t len, int *hold, struct rkd_verr *v);

/* A progress report (POST /v1/jobs/{id}/report). */
struct rkd_report {
	double iters_done;
	double tput_sps; /* samples per second; < 0 when not reported */
	int run;         /* the run reporting; 0 = current */
};

int rkd_report_parse(const char *body, size_t len, struct rkd_report *out, struct rkd_verr *v);

/* A policy change (PUT /v1/policy). */
struct rkd_policy_req {
	char name[64];
	char options[512];
};

int rkd_policy_req_parse(const char *body, size_t len, struct rkd_policy_req *out,
			 struct rkd_verr *v);

#endif
