/*
 * rk_launch_default_space (issue 22): one case per rule of docs/launch.md
 * "Default plan space" — a job-library script, Megatron, DeepSpeed, both,
 * Megatron's distributed optimizer, Hugging Face with and without DeepSpeed,
 * an opaque command, look-alike paths, and the one error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "rubick/launch.h"

/* The default space of `cmd` must print as `want` and come from `from`. */
static void expect_space(const char *cmd, const char *want, enum rk_space_from from)
{
	struct rk_launch_space ls;
	struct rk_error e;
	rk_error_clear(&e);
	struct rk_launch_opts o = {.src = "cmd"};
	if (rk_launch_default_space(cmd, &o, &ls, &e))
		fail_msg("%s: %s", cmd, e.msg);
	char got[RK_PLAN_SPACE_TEXT_MAX];
	assert_true(rk_plan_space_format(&ls.space, got, sizeof(got)) > 0);
	if (strcmp(got, want) || ls.from != from)
		fail_msg("%s: got '%s' from %d, want '%s' from %d (%s)", cmd, got, (int)ls.from, want,
			 (int)from, ls.why);
	assert_true(ls.why[0] != '\0');
}

static void job_library_scripts(void **state)
{
	(void)state;
	/* the limits examples/train.py and train_cnn.py pass to Job.from_env */
	expect_space("/usr/bin/python3 /src/rubick/examples/train.py --threads 1 --layers 3",
		     "tp<=4,pp<=8", RK_SPACE_FROM_JOB_LIBRARY);
	expect_space("python3 examples/train_cnn.py", "tp<=4,pp=1",
		     RK_SPACE_FROM_JOB_LIBRARY);
	/* a look-alike is not the library's script: opaque */
	expect_space("python3 /x/myexamples/train.py", "tp=1,pp=1,zero=0,offload=no",
		     RK_SPACE_FROM_OPAQUE);
	expect_space("python3 train.py", "tp=1,pp=1,zero=0,offload=no", RK_SPACE_FROM_OPAQUE);
}

static void megatron_and_deepspeed(void **state)
{
	(void)state;
	/* Megatron-LM alone: any tp and pp, no ZeRO, no offload */
	expect_space("torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 2 "
		     "--pipeline-model-parallel-size 2 --num-layers 24",
		     "zero=0,offload=no", RK_SPACE_FROM_MEGATRON);
	expect_space("python pretrain_gpt.py --num_layers=12 --hidden-size 768",
		     "zero=0,offload=no", RK_SPACE_FROM_MEGATRON);
	/* its distributed optimizer shards optimizer state: ZeRO-1 */
	expect_space("python pretrain_gpt.py --num-layers 12 --use-distributed-optimizer",
		     "zero<=1,offload=no", RK_SPACE_FROM_MEGATRON);
	/* Megatron-DeepSpeed: everything */
	expect_space("deepspeed pretrain_gpt.py --num-layers 12 --deepspeed --deepspeed_config ds.json",
		     "all", RK_SPACE_FROM_MEGATRON);
	/* DeepSpeed without Megatron: any ZeRO stage and offload, no tp or pp */
	expect_space("deepspeed --num_gpus 8 train.py --model_name_or_path llama7 "
		     "--deepspeed ds_z3.json", "tp=1,pp=1", RK_SPACE_FROM_DEEPSPEED);
	expect_space("/opt/bin/deepspeed train.py", "tp=1,pp=1", RK_SPACE_FROM_DEEPSPEED);
	expect_space("python train.py --zero-stage=1", "tp=1,pp=1", RK_SPACE_FROM_DEEPSPEED);
	/* Hugging Face Trainer alone: data parallel (gc stays open) */
	expect_space("torchrun train.py --model_name_or_path gpt2 --gradient_checkpointing",
		     "tp=1,pp=1,zero=0,offload=no", RK_SPACE_FROM_OPAQUE);
}

static void opaque_and_errors(void **state)
{
	(void)state;
	expect_space("sh job.sh", "tp=1,pp=1,zero=0,offload=no", RK_SPACE_FROM_OPAQUE);
	expect_space("python3 main.py --data_dir=/data/imagenet --batch_size 64",
		     "tp=1,pp=1,zero=0,offload=no", RK_SPACE_FROM_OPAQUE);
	/* a quoted flag is still a word the reader sees */
	expect_space("python 'pretrain gpt.py' \"--tensor-model-parallel-size\" 2",
		     "zero=0,offload=no", RK_SPACE_FROM_MEGATRON);
	struct rk_launch_space ls;
	struct rk_error e;
	struct rk_launch_opts o = {.src = "job 3 command"};
	assert_int_equal(rk_launch_default_space("python 'x.py", &o, &ls, &e), RK_EINVAL);
	assert_non_null(strstr(e.msg, "job 3 command:1:"));
	assert_int_equal(rk_launch_default_space(NULL, &o, &ls, &e), RK_EINVAL);
	assert_non_null(strstr(e.msg, "job 3 command"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(job_library_scripts),
		cmocka_unit_test(megatron_and_deepspeed),
		cmocka_unit_test(opaque_and_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
