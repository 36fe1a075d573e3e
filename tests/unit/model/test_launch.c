/*
 * The launch-command reader: real Megatron-LM, DeepSpeed and Hugging Face
 * commands, the DeepSpeed config reader, and one test per documented error
 * (docs/launch.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util.h"
#include "rubick/launch.h"
#include "rubick/zoo.h"

static struct rk_zoo zoo;

static int setup(void **state)
{
	(void)state;
	const char *d = getenv("RK_DATA_DIR");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/zoo", d ? d : RK_DEFAULT_DATA_DIR);
	struct rk_error err;
	rk_zoo_init(&zoo);
	return rk_cli_zoo_load(dir, &zoo, &err);
}

static int teardown(void **state)
{
	(void)state;
	rk_zoo_fini(&zoo);
	return 0;
}

/* A DeepSpeed config in the shape Megatron-DeepSpeed's GPT example ships. */
static const char ds_gpt[] = "{\n"
			     "  \"train_batch_size\": 16,\n"
			     "  \"train_micro_batch_size_per_gpu\": 2,\n"
			     "  \"gradient_accumulation_steps\": 2,\n"
			     "  \"optimizer\": {\"type\": \"AdamW\", \"params\": {\"lr\": 0.00015}},\n"
			     "  \"zero_optimization\": {\n"
			     "    \"stage\": 2,\n"
			     "    \"offload_optimizer\": {\"device\": \"cpu\", \"pin_memory\": true},\n"
			     "    \"overlap_comm\": true\n"
			     "  },\n"
			     "  \"fp16\": {\"enabled\": false}\n"
			     "}\n";

/* ZeRO-3 with optimizer and parameter offload, batch sizes left to the HF flags. */
static const char ds_z3[] = "{\n"
			    "  \"train_batch_size\": \"auto\",\n"
			    "  \"train_micro_batch_size_per_gpu\": \"auto\",\n"
			    "  \"gradient_accumulation_steps\": \"auto\",\n"
			    "  \"bf16\": {\"enabled\": true},\n"
			    "  \"zero_optimization\": {\n"
			    "    \"stage\": 3,\n"
			    "    \"offload_optimizer\": {\"device\": \"cpu\", \"pin_memory\": true},\n"
			    "    \"offload_param\": {\"device\": \"cpu\", \"pin_memory\": true},\n"
			    "    \"stage3_gather_16bit_weights_on_model_save\": true\n"
			    "  }\n"
			    "}\n";

static struct rk_launch_file files_tab[8];
static struct rk_launch_files files = {files_tab};

static void set_files(const char *p1, const char *t1, const char *p2, const char *t2)
{
	memset(files_tab, 0, sizeof(files_tab));
	files_tab[0] = (struct rk_launch_file){p1, t1, t1 ? strlen(t1) : 0};
	if (p2)
		files_tab[1] = (struct rk_launch_file){p2, t2, strlen(t2)};
}

static struct rk_launch_opts opts_for(int gpus)
{
	return (struct rk_launch_opts){"cmd", NULL, gpus, &zoo, rk_launch_files_lookup, &files};
}

static void expect_plan(const struct rk_plan *p, int dp, int tp, int pp, int mb, int ga, int gc,
			int zero, int offload)
{
	struct rk_plan want = {dp, tp, pp, mb, ga, gc, zero, offload};
	if (memcmp(p, &want, sizeof(want)))
		fail_msg("plan dp=%d,tp=%d,pp=%d,mb=%d,ga=%d,gc=%d,zero=%d,offload=%d", p->dp, p->tp,
			 p->pp, p->mb, p->ga, p->gc, p->zero, p->offload);
}

static void megatron_gpt2_deepspeed(void **state)
{
	(void)state;
	/* As the Rubick artifact's GPT-2 job runs it, variables filled in. */
	const char *cmd =
		"OMP_NUM_THREADS=4 python -m torch.distributed.launch --nproc_per_node=4 --nnodes=1 "
		"--node_rank=0 --master_addr=localhost --master_port=9001 pretrain_gpt.py \\\n"
		"  --override-lr-scheduler --adam-beta1 0.9 --tensor-model-parallel-size 1 \\\n"
		"  --micro-batch-size 2 --global-batch-size 16 --num-layers 16 --hidden-size 1280 \\\n"
		"  --num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024 \\\n"
		"  --train-iters 500000 --lr 0.00015 --split 949,50,1 \\\n"
		"  --vocab-file /mnt/nasdata/wikidata/gpt2-vocab.json --data-impl mmap \\\n"
		"  --cpu-optimizer --deepspeed --deepspeed_config /mnt/ds_config_gpt.json \\\n"
		"  --zero-stage 2 --no-pipeline-parallel";
	set_files("/mnt/ds_config_gpt.json", ds_gpt, NULL, NULL);
	struct rk_launch_opts o = opts_for(0);
	o.model_name = "GPT-Pile";
	struct rk_launch L;
	struct rk_error err;
	int rc = rk_launch_parse(cmd, &o, &L, &err);
	if (rc)
		fail_msg("%s", err.msg);
	assert_int_equal(L.kind, RK_LAUNCH_MEGATRON);
	assert_int_equal(L.from_zoo, 0);
	assert_int_equal(L.params_estimated, 1);
	assert_string_equal(L.model.name, "gpt-pile");
	assert_int_equal(L.model.layers, 16);
	assert_int_equal(L.model.hidden, 1280);
	assert_int_equal(L.model.heads, 16);
	assert_int_equal(L.model.seq_len, 1024);
	assert_int_equal(L.model.vocab, 50257);
	assert_true(L.model.params == 12.0 * 16 * 1280 * 1280 + 50257.0 * 1280);
	assert_int_equal(L.model.allow_3d, 1);
	assert_int_equal(L.gpus, 4);
	assert_int_equal(L.global_batch, 16);
	assert_int_equal(L.model.global_batch, 16);
	assert_int_equal(L.iterations, 500000);
	expect_plan(&L.plan, 4, 1, 1, 2, 2, 0, 2, 1);
}

static void megatron_3d_torchrun(void **state)
{
	(void)state;
	const char *cmd = "torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py "
			  "--tensor_model_parallel_size=2 --pipeline-model-parallel-size=2 "
			  "--num-layers=48 --hidden-size=1600 --num-attention-heads=32 "
			  "--seq-length=\"1024\" --micro-batch-size '1' --global-batch-size 16 "
			  "--recompute-activations --vocab-size 50257";
	struct rk_launch_opts o = opts_for(16);
	struct rk_launch L;
	struct rk_error err;
	int rc = rk_launch_parse(cmd, &o, &L, &err);
	if (rc)
		fail_msg("%s", err.msg);
	assert_string_equal(L.model.name, "launch");
	assert_int_equal(L.gpus, 16);
	expect_plan(&L.plan, 4, 2, 2, 1, 4, 1, 0, 0);
	assert_int_equal(L.plan.mb * L.plan.ga * L.plan.dp, L.global_batch);
	assert_int_equal(L.plan.dp * L.plan.tp * L.plan.pp, L.gpus);
}

static void llama_deepspeed_zero3_offload(void **state)
{
	(void)state;
	const char *cmd = "deepspeed --num_gpus 8 train.py "
			  "--model_name_or_path meta-llama/Llama-2-7b-hf "
			  "--per_device_train_batch_size 1 --gradient_accumulation_steps 1 "
			  "--deepspeed configs/ds_z3_offload.json --gradient_checkpointing True "
			  "--bf16 True --max_steps 100 --output_dir /tmp/out";
	set_files("configs/ds_z3_offload.json", ds_z3, NULL, NULL);
	struct rk_launch_opts o = opts_for(0);
	struct rk_launch L;
	struct rk_error err;
	int rc = rk_launch_parse(cmd, &o, &L, &err);
	if (rc)
		fail_msg("%s", err.msg);
	assert_int_equal(L.kind, RK_LAUNCH_HF);
	assert_int_equal(L.from_zoo, 1);
	assert_int_equal(L.params_estimated, 0);
	assert_string_equal(L.model.name, "llama7");
	assert_true(L.model.params == 6.738e9);
	assert_true(L.model.fwd_ms == 1000); /* same global batch (8) as the zoo */
	assert_int_equal(L.global_batch, 8);
	assert_int_equal(L.iterations, 100);
	expect_plan(&L.plan, 8, 1, 1, 1, 1, 1, 3, 1);

	/* Same job at global batch 16 (the measured llama7b_bsz16): forward time scales. */
	const char *cmd16 = "deepspeed --num_gpus 8 train.py --model_name_or_path llama7b "
			    "--per_device_train_batch_size 2 --deepspeed configs/ds_z3_offload.json";
	rc = rk_launch_parse(cmd16, &o, &L, &err);
	if (rc)
		fail_msg("%s", err.msg);
	assert_int_equal(L.global_batch, 16);
	assert_true(L.model.fwd_ms == 2000);
	/* A longer sequence than measured: the forward time becomes unknown. */
	const char *cmdseq = "deepspeed --num_gpus 8 train.py --model_name_or_path llama7b "
			     "--per_device_train_batch_size 1 --max_seq_length 4096";
	rc = rk_launch_parse(cmdseq, &o, &L, &err);
	if (rc)
		fail_msg("%s", err.msg);
	assert_int_equal(L.model.seq_len, 4096);
	assert_true(L.model.fwd_ms == 0);
}

static void hf_trainer_command(void **state)
{
	(void)state;
	const char *cmd = "torchrun --nproc_per_node=4 run_mlm.py --model_name_or_path roberta-large "
			  "--dataset_name wikitext --per_device_train_batch_size 16 "
			  "--gradient_accumulation_steps=1 --do_train --save_strategy no";
	struct rk_launch_opts o = opts_for(4);
	struct rk_launch L;
	struct rk_error err;
	int rc = rk_launch_parse(cmd, &o, &L, &err);
	if (rc)
		fail_msg("%s", err.msg);
	assert_int_equal(L.kind, RK_LAUNCH_HF);
	assert_string_equal(L.model.name, "roberta");
	assert_int_equal(L.model.allow_3d, 0);
	assert_int_equal(L.global_batch, 64);
	expect_plan(&L.plan, 4, 1, 1, 16, 1, 0, 0, 0);
	/* The world size may also come from the DeepSpeed identity alone. */
	set_files("ds.json", ds_gpt, NULL, NULL);
	const char *c2 = "python train.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 "
			 "--seq-length 128 --deepspeed_config ds.json --cpu-optimizer";
	o = opts_for(0);
	rc = rk_launch_parse(c2, &o, &L, &err);
	if (rc)
		fail_msg("%s", err.msg);
	assert_int_equal(L.gpus, 4);
	expect_plan(&L.plan, 4, 1, 1, 2, 2, 0, 2, 1);
	/* torchrun counts GPUs at run time with "auto": the job's count decides. */
	const char *c3 = "torchrun --nproc_per_node auto run_clm.py --model_name_or_path gpt2-xl "
			 "--per_device_train_batch_size 2 --gradient_accumulation_steps 2";
	o = opts_for(4);
	rc = rk_launch_parse(c3, &o, &L, &err);
	if (rc)
		fail_msg("%s", err.msg);
	assert_string_equal(L.model.name, "gpt2");
	assert_int_equal(L.global_batch, 16);
	expect_plan(&L.plan, 4, 1, 1, 2, 2, 0, 0, 0);
	o = opts_for(0);
	assert_int_equal(rk_launch_parse(c3, &o, &L, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "number of GPUs unknown"));
	/* The artifact's job template: the launcher's counts are variables the
	 * scheduler fills, so the job's GPU count decides. */
	const char *c4 = "python -m torch.distributed.launch --nproc_per_node=$NPROC "
			 "--nnodes=$NNODES --node_rank=$RANK pretrain_bert.py "
			 "--tensor-model-parallel-size 1 --micro-batch-size 4 --num-layers 24 "
			 "--hidden-size 1536 --num-attention-heads 16 --seq-length 1024 "
			 "--max-position-embeddings 1024 --train-iters $STEPS";
	o = opts_for(8);
	assert_int_equal(rk_launch_parse(c4, &o, &L, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "--train-iters $STEPS: not an integer (an unexpanded "
					"shell variable?)"));
	char c5[1024];
	snprintf(c5, sizeof(c5), "%.*s 100", (int)(strlen(c4) - strlen("$STEPS")), c4);
	rc = rk_launch_parse(c5, &o, &L, &err);
	if (rc)
		fail_msg("%s", err.msg);
	assert_int_equal(L.gpus, 8);
	assert_int_equal(L.global_batch, 32);
	expect_plan(&L.plan, 8, 1, 1, 4, 1, 0, 0, 0);
}

static void not_white_box(void **state)
{
	(void)state;
	/* Gavel's command column: a black-box job, reported so the caller can fall back. */
	const char *gavel = "python3 main.py --data_dir=%s/data/imagenet/pytorch --batch_size 64 "
			    "--num_epochs 90";
	struct rk_launch_opts o = opts_for(1);
	struct rk_launch L;
	struct rk_error err;
	memset(&L, 0x77, sizeof(L));
	struct rk_launch before = L;
	assert_int_equal(rk_launch_parse(gavel, &o, &L, &err), RK_ENOTFOUND);
	assert_non_null(strstr(err.msg, "not a white-box launch command"));
	assert_memory_equal(&L, &before, sizeof(L));
	assert_int_equal(rk_launch_parse("", &o, &L, &err), RK_ENOTFOUND);
	const char *unknown = "python run_clm.py --model_name_or_path EleutherAI/gpt-neox-20b "
			      "--per_device_train_batch_size 1";
	assert_int_equal(rk_launch_parse(unknown, &o, &L, &err), RK_ENOTFOUND);
	assert_non_null(strstr(err.msg, "cmd:1:19: --model_name_or_path EleutherAI/gpt-neox-20b: "
					"not a zoo model"));
	/* Without a zoo, a known name is not enough either. */
	o.zoo = NULL;
	assert_int_equal(rk_launch_parse("x --model_name_or_path gpt2-xl", &o, &L, &err),
			 RK_ENOTFOUND);
	assert_int_equal(rk_launch_parse(NULL, &o, &L, &err), RK_EINVAL);
}

/* Parse cmd with `gpus` GPUs; expect `code` and `want` inside the message. */
static void expect_err(const char *cmd, int gpus, int code, const char *want)
{
	struct rk_launch_opts o = opts_for(gpus);
	struct rk_launch L;
	struct rk_error err;
	rk_error_clear(&err);
	int rc = rk_launch_parse(cmd, &o, &L, &err);
	if (rc != code || !strstr(err.msg, want))
		fail_msg("cmd [%s]: rc %d (want %d), msg [%s] (want [%s])", cmd, rc, code, err.msg,
			 want);
}

#define S "--num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 512 "

static void command_errors(void **state)
{
	(void)state;
	/* Quoting and flag syntax. */
	expect_err("python x.py --num-layers '24", 1, RK_EINVAL, "cmd:1:26: unterminated ' quote");
	expect_err("python x.py \\\n --num-layers \"24", 1, RK_EINVAL,
		   "cmd:2:15: unterminated \" quote");
	expect_err(S "--micro-batch-size", 1, RK_EINVAL, "--micro-batch-size: missing value");
	expect_err(S "--micro-batch-size --fp16", 1, RK_EINVAL, "--micro-batch-size: missing value");
	expect_err(S "--micro-batch-size 1 --cpu-optimizer=1", 1, RK_EINVAL,
		   "--cpu-optimizer takes no value");
	expect_err(S "--micro-batch-size 1 --gradient_checkpointing=maybe", 1, RK_EINVAL,
		   "--gradient_checkpointing maybe: not a boolean");
	expect_err(S "--micro-batch-size 1 --micro_batch_size 2", 1, RK_EINVAL,
		   "--micro_batch_size 2 contradicts --micro-batch-size 1 given before");
	/* Values. */
	expect_err(S "--micro-batch-size $BATCH_SIZE", 1, RK_EINVAL,
		   "--micro-batch-size $BATCH_SIZE: not an integer (an unexpanded shell variable?)");
	expect_err(S "--micro-batch-size 2x", 1, RK_EINVAL, "--micro-batch-size 2x: not an integer");
	expect_err(S "--micro-batch-size 0", 1, RK_ERANGE, "--micro-batch-size 0: out of range");
	expect_err(S "--micro-batch-size 99999999999999999999999", 1, RK_ERANGE, "out of range");
	expect_err(S "--micro-batch-size 1 --zero-stage 4", 1, RK_ERANGE, "--zero-stage 4: out of range [0, 3]");
	expect_err(S "--micro-batch-size 1 --recompute-granularity some", 1, RK_EINVAL,
		   "--recompute-granularity some: must be full or selective");
	/* Structure. */
	expect_err("--num-layers 24 --num-attention-heads 16 --seq-length 512", 1, RK_EINVAL,
		   "--hidden-size missing");
	expect_err("--num-layers 24 --hidden-size 1024 --num-attention-heads 16", 1, RK_EINVAL,
		   "--seq-length missing");
	expect_err(S "--max-position-embeddings 256 --micro-batch-size 1", 1, RK_EINVAL,
		   "--max-position-embeddings 256: is shorter than the sequence length 512");
	expect_err("--num-layers 2 --hidden-size 100 --num-attention-heads 16 --seq-length 8", 1,
		   RK_EINVAL, "--num-attention-heads 16: does not divide --hidden-size 100");
	expect_err("--model_name_or_path llama7b --num-layers 30 --per_device_train_batch_size 1", 1,
		   RK_EINVAL, "--num-layers 30: contradicts --model_name_or_path llama7b of the zoo "
			      "model 'llama7' (32)");
	expect_err("--model_name_or_path gpt2-xl --vocab-size 50000 --per_device_train_batch_size 1",
		   1, RK_EINVAL, "--vocab-size 50000: contradicts the zoo model 'gpt2' (50257)");
	/* Parallel degrees and GPUs. */
	expect_err(S "--micro-batch-size 1 --tensor-model-parallel-size 4 "
		     "--pipeline-model-parallel-size 2", 12, RK_EINVAL,
		   "tensor x pipeline degree 4 x 2 (--tensor-model-parallel-size, "
		   "--pipeline-model-parallel-size) does not divide the job's 12 GPUs");
	expect_err(S "--micro-batch-size 1 --tensor-model-parallel-size 3", 3, RK_EINVAL,
		   "--tensor-model-parallel-size 3: does not divide the number of attention heads");
	expect_err(S "--micro-batch-size 1 --pipeline-model-parallel-size 5", 5, RK_EINVAL,
		   "--pipeline-model-parallel-size 5: does not divide the number of layers");
	expect_err(S "--micro-batch-size 1 --pipeline-model-parallel-size 2 --no-pipeline-parallel",
		   2, RK_EINVAL, "--pipeline-model-parallel-size 2: contradicts --no-pipeline-parallel");
	expect_err("--model_name_or_path gpt2 --per_device_train_batch_size 1 "
		   "--tensor-model-parallel-size 2", 2, RK_EINVAL,
		   "tensor/pipeline parallelism needs Megatron structure flags");
	expect_err(S "--micro-batch-size 1 --tensor-model-parallel-size 2 --zero-stage 1", 2,
		   RK_EINVAL, "ZeRO stage 1 with tensor/pipeline parallelism (tp 2, pp 1) is outside");
	expect_err(S "--micro-batch-size 1 --cpu-optimizer", 1, RK_EINVAL,
		   "--cpu-optimizer: CPU offload needs ZeRO stage 1-3");
	expect_err("torchrun --nproc_per_node 8 x.py " S "--micro-batch-size 1", 4, RK_EINVAL,
		   "--nproc_per_node 8 = 8 GPUs, but the job runs on 4");
	expect_err("torchrun --nproc_per_node 8 --nnodes 2 x.py " S "--micro-batch-size 1", 8,
		   RK_EINVAL, "--nproc_per_node 8 x --nnodes 2 = 16 GPUs, but the job runs on 8");
	expect_err(S "--micro-batch-size 1", 0, RK_EINVAL, "number of GPUs unknown");
	/* Batch arithmetic. */
	expect_err(S, 1, RK_EINVAL, "batch size missing");
	expect_err(S "--global-batch-size 10 --micro-batch-size 4", 2, RK_EINVAL,
		   "--global-batch-size 10 is not divisible by --micro-batch-size 4 x data-parallel "
		   "size 2");
	expect_err(S "--global-batch-size 16 --micro-batch-size 2 --gradient_accumulation_steps 2",
		   2, RK_EINVAL, "--gradient_accumulation_steps 2 contradicts --global-batch-size 16 "
				 "/ (--micro-batch-size 2 x data-parallel size 2) = 4");
	expect_err(S "--global-batch-size 10 --gradient_accumulation_steps 4", 1, RK_EINVAL,
		   "--global-batch-size 10 is not divisible by 4 accumulation steps x "
		   "data-parallel size 1");
	expect_err(S "--micro-batch-size 65536 --gradient_accumulation_steps 65536", 4, RK_ERANGE,
		   "exceeds");
	/* Model name given by the caller. */
	struct rk_launch_opts o = opts_for(1);
	o.model_name = "this-name-is-far-too-long-for-the-zoo";
	struct rk_launch L;
	struct rk_error err;
	assert_int_equal(rk_launch_parse(S "--micro-batch-size 1", &o, &L, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "is too long"));
	o.model_name = "bad name";
	assert_int_equal(rk_launch_parse(S "--micro-batch-size 1", &o, &L, &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "cmd: model 'bad name': key 'name'"));
}

static void deepspeed_config_errors(void **state)
{
	(void)state;
	set_files("ds.json", ds_gpt, "bad.json", "{\"train_micro_batch_size_per_gpu\": $BATCH_SIZE}");
	/* Config missing, unreadable, or contradicting the flags. */
	expect_err(S "--deepspeed_config other.json", 4, RK_ENOTFOUND,
		   "--deepspeed_config other.json: the config's text was not supplied "
		   "(other.json: no such config was supplied)");
	expect_err(S "--deepspeed_config bad.json", 4, RK_EINVAL,
		   "cmd: --deepspeed_config: bad.json:1:36: invalid JSON");
	expect_err(S "--deepspeed_config ds.json --micro-batch-size 4", 4, RK_EINVAL,
		   "--micro-batch-size 4 contradicts ds.json: train_micro_batch_size_per_gpu is 2");
	expect_err(S "--deepspeed_config ds.json --global-batch-size 32", 4, RK_EINVAL,
		   "--global-batch-size 32 contradicts ds.json: train_batch_size is 16");
	expect_err(S "--deepspeed_config ds.json --zero-stage 1", 4, RK_EINVAL,
		   "--zero-stage 1 contradicts ds.json: zero_optimization.stage is 2");
	expect_err(S "--deepspeed_config ds.json", 3, RK_EINVAL,
		   "ds.json train_batch_size 16 is not divisible by ds.json "
		   "train_micro_batch_size_per_gpu 2 x data-parallel size 3");
	expect_err(S "--deepspeed_config ds.json", 8, RK_EINVAL,
		   "ds.json gradient_accumulation_steps 2 contradicts ds.json train_batch_size 16 / "
		   "(ds.json train_micro_batch_size_per_gpu 2 x data-parallel size 8) = 1");
	expect_err(S "--deepspeed ds.json --deepspeed_config bad.json", 4, RK_EINVAL,
		   "--deepspeed ds.json contradicts --deepspeed_config bad.json");
	set_files("none.json", "{\"train_batch_size\": 4, \"zero_optimization\": {\"stage\": 1, "
			       "\"offload_optimizer\": {\"device\": \"none\"}}}", NULL, NULL);
	expect_err(S "--deepspeed_config none.json --cpu-optimizer", 4, RK_EINVAL,
		   "--cpu-optimizer contradicts none.json: zero_optimization.offload_optimizer is "
		   "not \"cpu\"");
	struct rk_launch_opts o = opts_for(4);
	o.read_file = NULL;
	struct rk_launch L;
	struct rk_error err;
	assert_int_equal(rk_launch_parse(S "--deepspeed_config ds.json", &o, &L, &err),
			 RK_ENOTFOUND);
}

static void ds_expect(const char *json, int code, const char *want)
{
	struct rk_ds_config c;
	struct rk_error err;
	rk_error_clear(&err);
	int rc = rk_ds_config_parse(json, strlen(json), "ds.json", &c, &err);
	if (rc != code || (want && !strstr(err.msg, want)))
		fail_msg("json [%s]: rc %d (want %d), msg [%s] (want [%s])", json, rc, code, err.msg,
			 want ? want : "");
}

static void ds_config_reader(void **state)
{
	(void)state;
	struct rk_ds_config c;
	struct rk_error err;
	assert_int_equal(rk_ds_config_parse(ds_gpt, strlen(ds_gpt), "g", &c, &err), 0);
	assert_int_equal(c.train_batch_size, 16);
	assert_int_equal(c.micro_batch, 2);
	assert_int_equal(c.grad_accum, 2);
	assert_int_equal(c.zero_stage, 2);
	assert_int_equal(c.offload, 1);
	assert_int_equal(rk_ds_config_parse(ds_z3, strlen(ds_z3), "z", &c, &err), 0);
	assert_int_equal(c.train_batch_size, 0);
	assert_int_equal(c.zero_stage, 3);
	assert_int_equal(c.offload, 1);
	assert_int_equal(rk_ds_config_parse("{}", 2, "e", &c, &err), 0);
	assert_int_equal(c.zero_stage, -1);
	assert_int_equal(c.offload, -1);
	const char *legacy = "{\"zero_optimization\": {\"stage\": 2, \"cpu_offload\": true}}";
	assert_int_equal(rk_ds_config_parse(legacy, strlen(legacy), "l", &c, &err), 0);
	assert_int_equal(c.offload, 1);
	assert_int_equal(rk_ds_config_parse("{\"zero_optimization\": true}", 27, "b", &c, &err), 0);
	assert_int_equal(c.zero_stage, 1);

	ds_expect("{\"train_batch_size\": 8,}", RK_EINVAL, "ds.json:1:");
	ds_expect("[1, 2]", RK_EINVAL, "ds.json: the config must be a JSON object");
	ds_expect("{\"a\": 1, \"a\": 2}", RK_EINVAL, "invalid JSON");
	ds_expect("{\"train_batch_size\": \"16\"}", RK_EINVAL,
		  "ds.json: train_batch_size: must be a positive integer or \"auto\"");
	ds_expect("{\"gradient_accumulation_steps\": 0}", RK_ERANGE,
		  "ds.json: gradient_accumulation_steps: 0 is out of range");
	ds_expect("{\"train_micro_batch_size_per_gpu\": 2.5}", RK_EINVAL,
		  "train_micro_batch_size_per_gpu: must be a positive integer");
	ds_expect("{\"zero_optimization\": 3}", RK_EINVAL, "zero_optimization: must be an object");
	ds_expect("{\"zero_optimization\": {\"stage\": 4}}", RK_EINVAL,
		  "ds.json: zero_optimization.stage: 4 is not a ZeRO stage (0-3)");
	ds_expect("{\"zero_optimization\": {\"stage\": \"3\"}}", RK_EINVAL,
		  "zero_optimization.stage: a non-integer is not a ZeRO stage");
	ds_expect("{\"zero_optimization\": {\"stage\": 3, \"offload_optimizer\": {\"device\": "
		  "\"nvme\"}}}",
		  RK_EINVAL, "offload_optimizer.device: \"nvme\" offload is not modelled");
	ds_expect("{\"zero_optimization\": {\"stage\": 3, \"offload_optimizer\": {\"device\": 1}}}",
		  RK_EINVAL, "offload_optimizer.device: must be \"cpu\" or \"none\"");
	ds_expect("{\"zero_optimization\": {\"stage\": 3, \"offload_optimizer\": \"cpu\"}}",
		  RK_EINVAL, "zero_optimization.offload_optimizer: must be an object");
	ds_expect("{\"zero_optimization\": {\"stage\": 3, \"offload_param\": {\"device\": \"cpu\"}}}",
		  RK_EINVAL, "parameter offload without offload_optimizer is not modelled");
	ds_expect("{\"zero_optimization\": {\"stage\": 0, \"offload_optimizer\": {\"device\": "
		  "\"cpu\"}}}",
		  RK_EINVAL, "offload needs ZeRO stage 1-3, stage is 0");
	ds_expect("{\"zero_optimization\": {\"stage\": 2, \"cpu_offload\": 1}}", RK_EINVAL,
		  "zero_optimization.cpu_offload: must be true or false");
	ds_expect("{\"train_batch_size\": 10, \"train_micro_batch_size_per_gpu\": 4, "
		  "\"gradient_accumulation_steps\": 1}",
		  RK_EINVAL, "train_batch_size 10 is not a multiple of train_micro_batch_size_per_gpu 4");
	assert_int_equal(rk_ds_config_parse(NULL, 4, "n", &c, &err), RK_EINVAL);
	assert_int_equal(rk_ds_config_parse("{}", 2, "n", NULL, &err), RK_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(megatron_gpt2_deepspeed),
		cmocka_unit_test(megatron_3d_torchrun),
		cmocka_unit_test(llama_deepspeed_zero3_offload),
		cmocka_unit_test(hf_trainer_command),
		cmocka_unit_test(not_white_box),
		cmocka_unit_test(command_errors),
		cmocka_unit_test(deepspeed_config_errors),
		cmocka_unit_test(ds_config_reader),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
