/*
 * The launch-command reader: turns a training job's command line (Megatron-LM,
 * Megatron-DeepSpeed, DeepSpeed and Hugging Face Trainer flags, shell-like
 * quoting) and its DeepSpeed JSON config into the model structure, the plan the
 * user asked for and the global batch. The library does no I/O: the caller
 * supplies the text of every config file the command names through a callback
 * (or the ready-made table lookup below). Flags and rules: docs/launch.md.
 */
#ifndef RUBICK_LAUNCH_H
#define RUBICK_LAUNCH_H

#include "rubick/error.h"
#include "rubick/model.h"
#include "rubick/plan.h"

#include <stddef.h>

struct rk_zoo; /* zoo.h */

/* Which family of flags described the model. */
enum rk_launch_kind {
	RK_LAUNCH_MEGATRON = 1, /* Megatron-LM / Megatron-DeepSpeed (--num-layers ...) */
	RK_LAUNCH_HF = 2,       /* Hugging Face Trainer (--model_name_or_path ...) */
};

/*
 * Look up the text of a file the command names (--deepspeed_config PATH).
 * Return 0 and set OUT: *text (borrowed, valid until rk_launch_parse returns)
 * and *len; or a negative RK_E* code (RK_ENOTFOUND when the caller does not
 * have it), optionally filling err.
 */
typedef int (*rk_launch_file_fn)(void *ctx, const char *path, const char **text, size_t *len,
				 struct rk_error *err);

/* One entry of a caller-built path -> text table (see rk_launch_files_lookup). */
struct rk_launch_file {
	const char *path; /* exactly as the command names it */
	const char *text;
	size_t len;
};

/* A table of files, terminated by an entry with path == NULL. */
struct rk_launch_files {
	const struct rk_launch_file *files;
};

/* rk_launch_file_fn over a struct rk_launch_files passed as ctx. */
int rk_launch_files_lookup(void *ctx, const char *path, const char **text, size_t *len,
			   struct rk_error *err);

struct rk_launch_opts {
	const char *src;        /* names the command in messages ("job 12 command"); NULL = "<command>" */
	const char *model_name; /* name for a model described by flags; NULL = "launch" */
	int gpus;               /* GPUs the job runs on; 0 = from the launcher flags */
	const struct rk_zoo *zoo;   /* to map --model_name_or_path and known names; may be NULL */
	rk_launch_file_fn read_file; /* NULL = no config files available */
	void *read_ctx;
};

struct rk_launch {
	enum rk_launch_kind kind;
	struct rk_model model; /* validated; params estimated when not from the zoo */
	int from_zoo;          /* 1 = structure (and params, fwd_ms, fits) from a zoo entry */
	int params_estimated;  /* 1 = params is rk_model_params_estimate() of the structure */
	struct rk_plan plan;   /* the requested plan: dp*tp*pp == gpus, mb*ga*dp == global_batch */
	int global_batch;      /* samples per iteration */
	int gpus;              /* world size the plan is for */
	long iterations;       /* --train-iters / --max_steps; 0 = not given */
};

/*
 * Read `cmd` (NUL-terminated). Returns 0 and fills OUT: *out; or
 *  RK_ENOTFOUND  not a white-box launch command (no structure flags and no
 *                known model name: e.g. Gavel's `python3 main.py --batch_size 64`),
 *                so the caller can fall back to a black-box model;
 *  RK_EINVAL / RK_ERANGE  malformed quoting, bad or missing values, or values
 *                that contradict each other or the DeepSpeed config; the message
 *                names the flag(s) or config key ("SRC:1:COL: --flag: ...").
 * *out is written only on success.
 */
int rk_launch_parse(const char *cmd, const struct rk_launch_opts *opts, struct rk_launch *out,
		    struct rk_error *err);

/* ---- the default plan space (launch_space.c) ---- */

/* What decided a default plan space. */
enum rk_space_from {
	RK_SPACE_FROM_OPAQUE = 0,      /* nothing the reader knows: data parallel only */
	RK_SPACE_FROM_MEGATRON = 1,    /* Megatron tp/pp or structure flags: tp and pp any */
	RK_SPACE_FROM_DEEPSPEED = 2,   /* DeepSpeed launcher, config or ZeRO flag: ZeRO 0-3, offload */
	RK_SPACE_FROM_JOB_LIBRARY = 3, /* one of the repository's rubick_job scripts */
};

struct rk_launch_space {
	struct rk_plan_space space;
	enum rk_space_from from;
	char why[200]; /* one line naming what in the command decided it */
};

/*
 * The plan space a job run by `cmd` supports, for a job that declares none
 * (docs/launch.md, "Default plan space"): a repository job-library script
 * (examples/train.py, examples/train_cnn.py) its declared limits; Megatron
 * flags (--tensor-model-parallel-size, --pipeline-model-parallel-size,
 * --num-layers) any tp and pp; DeepSpeed (the `deepspeed` launcher,
 * --deepspeed[_config], --zero-stage) any ZeRO stage and offload, else no
 * ZeRO (ZeRO-1 with Megatron's --use-distributed-optimizer) and no offload;
 * neither, tp = pp = 1; anything else (an opaque command) "dp". Only the words
 * are read (opts->src names the command; other opts are not used). Returns 0
 * and fills OUT: *out, or RK_EINVAL when the command does not split into
 * words (an unterminated quote), naming where.
 */
int rk_launch_default_space(const char *cmd, const struct rk_launch_opts *opts,
			    struct rk_launch_space *out, struct rk_error *err);

/* ---- DeepSpeed JSON config (launch_ds.c) ---- */

/* The fields of a DeepSpeed config that decide the plan; 0 / -1 = absent or "auto". */
struct rk_ds_config {
	int train_batch_size; /* global batch; 0 = absent */
	int micro_batch;      /* train_micro_batch_size_per_gpu; 0 = absent */
	int grad_accum;       /* gradient_accumulation_steps; 0 = absent */
	int zero_stage;       /* zero_optimization.stage 0..3; -1 = absent */
	int offload;          /* 1 = optimizer states on the CPU, 0 = not, -1 = absent */
};

/*
 * Parse DeepSpeed config JSON `text` (`len` bytes). `src` names it in messages.
 * Unknown keys are ignored; a known key of the wrong type or range is an error
 * naming it ("ds.json: zero_optimization.stage: 4 is not a ZeRO stage (0-3)").
 */
int rk_ds_config_parse(const char *text, size_t len, const char *src, struct rk_ds_config *out,
		       struct rk_error *err);

#endif
