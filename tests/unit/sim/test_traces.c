/*
 * Trace readers: each format on a small inline sample with hand-checked fields,
 * auto-detection of every format, ordering, the window and max-jobs cut, and
 * the seeded model mapping (same seed -> same models).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <math.h>
#include <string.h>

#include "rubick/trace.h"
#include "rubick/zoo.h"

#include <stdlib.h>

static int parse(const char *text, const char *format, const struct rk_trace_options *opt,
		 struct rk_trace *t)
{
	struct rk_error err;
	int rc = rk_trace_parse(text, strlen(text), "t.csv", format, opt, t, &err);
	if (rc != 0)
		print_message("parse failed: %s\n", err.msg);
	return rc;
}

static void rubick_fields(void **state)
{
	(void)state;
	const char *text =
		"name,submission_time,duration,application,num_gpus,num_cpus,bandwidth,exec_plan,"
		"steps,is_sla\n"
		"vit-0,0,3163.091667,vit,2,16,0,zero-dp,37239,0\n"
		"llama30-1,1639,142.2190972,llama30,48,384,1.25,344,64,1\n";
	struct rk_trace t;
	assert_int_equal(parse(text, "auto", NULL, &t), 0);
	assert_string_equal(t.format, "rubick");
	assert_int_equal(t.n, 2);
	assert_int_equal(t.n_lines, 2);
	const struct rk_trace_job *a = &t.jobs[0], *b = &t.jobs[1];
	assert_string_equal(a->name, "vit-0");
	assert_int_equal(a->submit_ms, 0);
	assert_true(a->duration_s > 3163.09 && a->duration_s < 3163.10);
	assert_string_equal(a->model, "vit");
	assert_int_equal(a->model_mapped, 0);
	assert_int_equal(a->gpus, 2);
	assert_int_equal(a->cpus, 16);
	assert_string_equal(a->plan, "zero-dp");
	assert_int_equal(a->iters, 37239);
	assert_int_equal(a->guaranteed, 0);
	assert_int_equal(a->min_gpus, 2);
	assert_int_equal(a->max_gpus, 2);
	assert_int_equal(a->gpu_milli, 1000);
	assert_int_equal(a->line, 2);
	assert_int_equal(b->submit_ms, 1639000);
	assert_string_equal(b->model, "llama30");
	assert_int_equal(b->gpus, 48);
	assert_true(b->net_gbps == 1.25);
	assert_string_equal(b->plan, "344");
	assert_int_equal(b->guaranteed, 1);
	assert_int_equal(t.n_mapped, 0);
	rk_trace_fini(&t);
	assert_null(t.jobs);
	assert_int_equal(t.n, 0);
}

static void sia_fields(void **state)
{
	(void)state;
	const char *text = "name,time,application,num_replicas,batch_size\n"
			   "cifar10-0,107,cifar10,6,2048\n"
			   "deepspeech2-1,110,deepspeech2,4,320\n";
	struct rk_trace t;
	assert_int_equal(parse(text, "auto", NULL, &t), 0);
	assert_string_equal(t.format, "sia");
	assert_int_equal(t.n, 2);
	assert_string_equal(t.jobs[0].name, "cifar10-0");
	assert_int_equal(t.jobs[0].submit_ms, 107000);
	assert_int_equal(t.jobs[0].gpus, 6);
	assert_string_equal(t.jobs[0].source_type, "cifar10");
	/* Family table: image classification -> vit; speech -> bert or roberta. */
	assert_string_equal(t.jobs[0].model, "vit");
	assert_int_equal(t.jobs[0].model_mapped, 1);
	assert_true(strcmp(t.jobs[1].model, "bert") == 0 || strcmp(t.jobs[1].model, "roberta") == 0);
	assert_int_equal(t.jobs[0].global_batch, 0);
	/* Run time estimated from Pollux's GPU-time buckets: cifar10 < 1 GPU-h (and
	 * >= 60 s), deepspeech2 1..10 GPU-h, divided by the replicas. */
	assert_int_equal(t.jobs[0].duration_estimated, 1);
	assert_true(t.jobs[0].duration_s >= 60.0 / 6 && t.jobs[0].duration_s < 3600.0 / 6);
	assert_true(t.jobs[1].duration_s >= 3600.0 / 4 && t.jobs[1].duration_s < 36000.0 / 4);
	assert_int_equal(t.n_mapped, 2);
	double d0 = t.jobs[0].duration_s;
	rk_trace_fini(&t);
	/* Same seed, same estimate; another seed draws again; unknown apps stay 0. */
	assert_int_equal(parse(text, "auto", NULL, &t), 0);
	assert_true(t.jobs[0].duration_s == d0);
	rk_trace_fini(&t);
	struct rk_trace_options o = rk_trace_options_default();
	o.seed = 99;
	assert_int_equal(parse(text, "auto", &o, &t), 0);
	assert_true(t.jobs[0].duration_s != d0);
	rk_trace_fini(&t);
	assert_int_equal(parse("name,time,application,num_replicas\ng-0,0,gpt_pmp,8\n", "auto",
			       NULL, &t),
			 0);
	assert_true(t.jobs[0].duration_s == 0);
	assert_int_equal(t.jobs[0].duration_estimated, 0);
	rk_trace_fini(&t);
}

static void philly_relative_and_sorted(void **state)
{
	(void)state;
	/* Out of order on purpose: philly.csv is not sorted by timestamp. */
	const char *text = "timestamp,duration,num_gpus,gpu_time,cluster\n"
			   "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
			   "2017-10-09 06:13:03,2951.0,2,5902.0,6214e9\n"
			   "2017-10-10 06:13:03,10,4,40,6214e9\n";
	struct rk_trace t;
	assert_int_equal(parse(text, "auto", NULL, &t), 0);
	assert_string_equal(t.format, "philly");
	assert_int_equal(t.n, 3);
	/* Earliest (line 3) becomes 0; 07:01:55 - 06:13:03 = 2932 s; next day = 86400 s. */
	assert_int_equal(t.jobs[0].line, 3);
	assert_int_equal(t.jobs[0].submit_ms, 0);
	assert_int_equal(t.jobs[0].gpus, 2);
	assert_string_equal(t.jobs[0].tenant, "6214e9");
	assert_int_equal(t.jobs[1].line, 2);
	assert_int_equal(t.jobs[1].submit_ms, 2932000);
	assert_true(t.jobs[1].duration_s == 66.0);
	assert_int_equal(t.jobs[2].submit_ms, 86400000);
	assert_string_equal(t.jobs[0].name, "philly-3");
	assert_int_equal(t.jobs[0].model_mapped, 1);
	rk_trace_fini(&t);
}

static void gavel_three_layouts(void **state)
{
	(void)state;
	const char *msr = "Transformer (batch size 128)\tcd %s && python3 train.py -batch_size 128\t"
			  "-step\t1\t95121\t12.5\t4\n"
			  "ResNet-50 (batch size 64)\tpython3 main.py\t--num_minibatches\t1\t2931\t20\t1\n";
	struct rk_trace t;
	assert_int_equal(parse(msr, "auto", NULL, &t), 0);
	assert_string_equal(t.format, "gavel");
	assert_int_equal(t.n, 2);
	assert_string_equal(t.jobs[0].source_type, "Transformer (batch size 128)");
	assert_string_equal(t.jobs[0].model, "t5");
	assert_int_equal(t.jobs[0].iters, 95121);
	assert_int_equal(t.jobs[0].submit_ms, 12500);
	assert_int_equal(t.jobs[0].gpus, 4);
	assert_string_equal(t.jobs[1].model, "vit");
	rk_trace_fini(&t);

	const char *phys = "LM (batch size 80)\tpython3 main.py\tlanguage_modeling\t--steps\t1\t101663\t"
			   "2\t1\t3600.0\t30\n";
	assert_int_equal(parse(phys, "auto", NULL, &t), 0);
	assert_int_equal(t.n, 1);
	assert_string_equal(t.jobs[0].model, "gpt2");
	assert_int_equal(t.jobs[0].gpus, 2);
	assert_int_equal(t.jobs[0].submit_ms, 30000);
	assert_int_equal(t.jobs[0].guaranteed, 1); /* SLO 3600 > 0 */
	rk_trace_fini(&t);

	const char *shock = "LM (batch size 10)\tpython3 main.py --cuda\tlanguage_modeling\t--steps\t"
			    "1\t134583\t1\tgns\t1\t-1.000000\t1418\t0\n";
	assert_int_equal(parse(shock, "gavel", NULL, &t), 0);
	/* A mapped model with a run time: the LM's steps are kept only as source_iters. */
	assert_int_equal(t.jobs[0].iters, 0);
	assert_int_equal(t.jobs[0].source_iters, 134583);
	assert_true(t.jobs[0].duration_s == 1418);
	assert_int_equal(t.jobs[0].guaranteed, 0);
	rk_trace_fini(&t);
}

/* Load data/zoo/<name>.model for every bundled model into `zoo`. */
static void load_zoo(struct rk_zoo *zoo)
{
	static const char *const names[] = {"vit",  "roberta", "bert",   "t5",
					    "t5_3b", "gpt2",	"llama7", "llama30"};
	const char *dir = getenv("RK_DATA_DIR");
	rk_zoo_init(zoo);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[4200], text[8192];
		snprintf(path, sizeof(path), "%s/zoo/%s.model", dir ? dir : "data", names[i]);
		FILE *f = fopen(path, "rb");
		if (!f)
			fail_msg("cannot read %s", path);
		size_t n = fread(text, 1, sizeof(text), f);
		fclose(f);
		struct rk_error err;
		if (rk_zoo_add_text(zoo, text, n, path, &err) != 0)
			fail_msg("%s", err.msg);
	}
}

static void gavel_launch_commands(void **state)
{
	(void)state;
	struct rk_zoo zoo;
	load_zoo(&zoo);
	const char *text =
		"HF GPT-2\tpython train.py --model_name_or_path gpt2 --per_device_train_batch_size 4"
		"\t-n\t1\t100\t0\t4\n"
		"Megatron 1.3B\tpython pretrain_gpt.py --num-layers 24 --hidden-size 2048 "
		"--num-attention-heads 16 --seq-length 1024 --micro-batch-size 1 "
		"--global-batch-size 16 --tensor-model-parallel-size 2 --vocab-file gpt2-vocab.json"
		"\t-n\t1\t100\t1\t8\n"
		"ResNet-50 (batch size 64)\tpython3 main.py --data_dir=%s/imagenet --batch_size 64"
		"\t-n\t1\t100\t2\t1\n";
	struct rk_trace_options o = rk_trace_options_default();
	o.zoo = &zoo;
	struct rk_trace t;
	assert_int_equal(parse(text, "auto", &o, &t), 0);
	assert_int_equal(t.n, 3);
	/* A zoo model named by the command: kept, with its batch and plan. */
	assert_string_equal(t.jobs[0].model, "gpt2");
	assert_int_equal(t.jobs[0].model_mapped, 0);
	assert_int_equal(t.jobs[0].global_batch, 16);
	assert_string_equal(t.jobs[0].plan, "dp=4,tp=1,pp=1,mb=4,ga=1,gc=0,zero=0,offload=0");
	/* Its own 1.31B-parameter structure: the nearest zoo model by parameters (T5, 1.24B). */
	assert_string_equal(t.jobs[1].model, "t5");
	assert_int_equal(t.jobs[1].model_mapped, 1);
	assert_int_equal(t.jobs[1].global_batch, 16);
	assert_string_equal(t.jobs[1].plan, "dp=4,tp=2,pp=1,mb=1,ga=4,gc=0,zero=0,offload=0");
	/* Gavel's own script: not a white-box command, so the job-type mapping. */
	assert_string_equal(t.jobs[2].model, "vit");
	assert_int_equal(t.jobs[2].model_mapped, 1);
	assert_int_equal(t.jobs[2].global_batch, 0);
	rk_trace_fini(&t);
	/* Without a zoo the command is not read: the mapping decides. */
	assert_int_equal(parse(text, "auto", NULL, &t), 0);
	assert_int_equal(t.jobs[0].global_batch, 0);
	assert_string_equal(t.jobs[0].plan, "");
	rk_trace_fini(&t);
	/* A malformed command is a bad line naming the column. */
	const char *bad = "HF\tpython train.py --model_name_or_path \"gpt2\t-n\t1\t100\t0\t4\n";
	struct rk_error err;
	assert_true(rk_trace_parse(bad, strlen(bad), "g.trace", "gavel", &o, &t, &err) < 0);
	assert_non_null(strstr(err.msg, "g.trace:1:4: column 'command'"));
	rk_zoo_fini(&zoo);
}

static void muri_milliseconds(void **state)
{
	(void)state;
	const char *text = "job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,"
			   "interval,iteration_time,resource_time_0,resource_time_1,"
			   "resource_time_2,priority\n"
			   "0,1,0,5853661,dqn,128,2868294000,46122000,490,446,8,0,1\n"
			   "1,8,201694000,8787693,bert,4,4472936000,201694000,509,435,8,0.5,0\n";
	struct rk_trace t;
	assert_int_equal(parse(text, "auto", NULL, &t), 0);
	assert_string_equal(t.format, "muri");
	assert_string_equal(t.jobs[0].name, "dqn-0");
	assert_int_equal(t.jobs[1].submit_ms, 201694000);
	assert_true(t.jobs[1].duration_s == 4472936.0);
	assert_int_equal(t.jobs[1].iters, 0); /* Muri's bert steps are not the zoo bert's */
	assert_int_equal(t.jobs[1].source_iters, 8787693);
	assert_int_equal(t.jobs[1].gpus, 8);
	assert_int_equal(t.jobs[1].guaranteed, 1); /* priority 0 = guaranteed */
	assert_int_equal(t.jobs[0].guaranteed, 0);
	assert_string_equal(t.jobs[1].model, "bert"); /* a zoo key keeps its name */
	rk_trace_fini(&t);
}

static void synergy_and_tiresias(void **state)
{
	(void)state;
	struct rk_trace t;
	assert_int_equal(parse("0,alexnet,0.0,3349,1\n1,gnmt,0.001,26435,2\n", "auto", NULL, &t), 0);
	assert_string_equal(t.format, "synergy");
	assert_string_equal(t.jobs[1].name, "gnmt-1");
	assert_int_equal(t.jobs[1].submit_ms, 1);
	/* Synergy's own length: 26435 iterations x gnmt's 0.12 s fair-share iteration
	 * (Synergy simulator/models/gnmt_1.py), whatever the GPU count. */
	assert_true(fabs(t.jobs[1].duration_s - 3172.2) < 1e-9);
	assert_int_equal(t.jobs[1].iters, 0);
	assert_int_equal(t.jobs[1].source_iters, 26435);
	assert_true(fabs(t.jobs[0].duration_s - 3349 * 0.6) < 1e-9); /* alexnet: 0.6 s */
	assert_int_equal(t.jobs[1].gpus, 2);
	assert_string_equal(t.jobs[0].model, "vit");
	assert_string_equal(t.jobs[1].model, "t5");
	rk_trace_fini(&t);

	/* LSTM: 0.011 s an iteration, so 1.2 M iterations are 3.7 h, not months. */
	assert_int_equal(parse("7,lstm,5,1200000,1\n8,vae,6,500,1\n", "synergy", NULL, &t), 0);
	assert_true(fabs(t.jobs[0].duration_s - 13200.0) < 1e-6);
	assert_int_equal(t.jobs[0].iters, 0);
	/* No Synergy profile for vae: the steps stay (they run at the stand-in's speed). */
	assert_true(t.jobs[1].duration_s == 0);
	assert_int_equal(t.jobs[1].iters, 500);
	rk_trace_fini(&t);

	const char *tir = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
			  "0,1,0,606,vgg19,164,30\n1,8,30,133,vgg11,147,23\n";
	assert_int_equal(parse(tir, "auto", NULL, &t), 0);
	assert_string_equal(t.format, "tiresias");
	assert_int_equal(t.jobs[1].submit_ms, 30000);
	assert_true(t.jobs[1].duration_s == 147);
	assert_int_equal(t.jobs[1].iters, 0);
	assert_int_equal(t.jobs[1].source_iters, 133);
	assert_string_equal(t.jobs[1].name, "vgg11-1");
	rk_trace_fini(&t);
}

static void alibaba_fractions(void **state)
{
	(void)state;
	const char *text = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
			   "creation_time,deletion_time,scheduled_time\n"
			   "p0,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
			   "p1,6500,12288,1,460,V100M16|V100M32,BE,Running,427061,12902960,427062\n"
			   "p2,20000,65536,0,0,,LS,Running,5,10,5\n"
			   "p3,8000,8192,8,1000,,Burstable,Pending,100,200,\n";
	struct rk_trace t;
	assert_int_equal(parse(text, "auto", NULL, &t), 0);
	assert_string_equal(t.format, "alibaba");
	assert_int_equal(t.n_lines, 4);
	assert_int_equal(t.n_no_gpu, 1); /* p2 is CPU-only */
	assert_int_equal(t.n, 3);
	assert_string_equal(t.jobs[0].name, "p0");
	assert_int_equal(t.jobs[0].guaranteed, 1);
	assert_true(t.jobs[0].duration_s == 12537496);
	assert_int_equal(t.jobs[0].mem_mb, 16384);
	assert_int_equal(t.jobs[1].name[1], '3'); /* p3 (t=100) before p1 (t=427061) */
	assert_int_equal(t.jobs[1].gpus, 8);
	assert_true(t.jobs[1].duration_s == 0); /* never scheduled */
	assert_int_equal(t.jobs[2].gpu_milli, 460);
	assert_int_equal(t.jobs[2].cpus, 7); /* ceil(6.5) */
	assert_int_equal(t.jobs[2].guaranteed, 0);
	assert_true(t.jobs[2].duration_s == 12902960 - 427062);
	assert_string_equal(t.jobs[2].source_type, "V100M16|V100M32");
	rk_trace_fini(&t);
}

static void native_quoted_canonical_plan(void **state)
{
	(void)state;
	/* A canonical plan holds commas, so the native CSV quotes it. */
	const char *text = "# rubick native trace\n"
			   "name,submit_s,model,gpus,global_batch,plan\n"
			   "a,0,gpt2,4,16,\"dp=2,tp=2,pp=1,mb=4,ga=2,gc=0,zero=0,offload=0\"\n";
	struct rk_trace t;
	assert_int_equal(parse(text, "auto", NULL, &t), 0);
	assert_int_equal(t.n, 1);
	assert_string_equal(t.jobs[0].plan, "dp=2,tp=2,pp=1,mb=4,ga=2,gc=0,zero=0,offload=0");
	assert_int_equal(t.jobs[0].line, 3);
	rk_trace_fini(&t);
}

static void native_fields(void **state)
{
	(void)state;
	/* Columns in any order; the plan is an artifact name so it has no commas. */
	const char *text = "submit_s,gpus,model,global_batch,plan,iters,guaranteed,tenant,"
			   "min_gpus,max_gpus,duration_s,cpus,mem_mb,net_gbps,name,job_type\n"
			   "1.5,4,gpt2,16,zero-dp,1000,1,teamA,2,8,100,32,65536,12.5,a,GPT-2\n"
			   "0.25,1,,,,,,,,,,,,,,ResNet-50\n";
	struct rk_trace t;
	assert_int_equal(parse(text, "auto", NULL, &t), 0);
	assert_string_equal(t.format, "native");
	assert_int_equal(t.n, 2);
	const struct rk_trace_job *b = &t.jobs[0], *a = &t.jobs[1];
	assert_int_equal(b->submit_ms, 250);
	assert_string_equal(b->model, "vit"); /* mapped from job_type */
	assert_int_equal(b->model_mapped, 1);
	assert_string_equal(b->name, "native-3"); /* "<format>-<line>" */
	assert_string_equal(a->name, "a");
	assert_int_equal(a->submit_ms, 1500);
	assert_string_equal(a->model, "gpt2");
	assert_int_equal(a->model_mapped, 0);
	assert_string_equal(a->source_type, "GPT-2");
	assert_int_equal(a->global_batch, 16);
	assert_string_equal(a->plan, "zero-dp");
	assert_int_equal(a->iters, 1000);
	assert_int_equal(a->guaranteed, 1);
	assert_string_equal(a->tenant, "teamA");
	assert_int_equal(a->min_gpus, 2);
	assert_int_equal(a->max_gpus, 8);
	assert_true(a->duration_s == 100);
	assert_int_equal(a->cpus, 32);
	assert_int_equal(a->mem_mb, 65536);
	assert_true(a->net_gbps == 12.5);
	rk_trace_fini(&t);
}

static void native_writer_round_trip(void **state)
{
	(void)state;
	/* Awkward text: a comma, a leading '#', a double quote, padding spaces. */
	const char *text =
		"name,submit_s,model,gpus,global_batch,plan,tenant,job_type,duration_s\n"
		"\"a,b\",0.001,gpt2,4,16,\"dp=2,tp=2,pp=1,mb=4,ga=2,gc=0,zero=0,offload=0\",\"#t\","
		"\" x \",0.1\n"
		"q,2,vit,1,,ga,,He said \"hi\",\n";
	struct rk_trace t, back;
	assert_int_equal(parse(text, "auto", NULL, &t), 0);
	assert_string_equal(t.jobs[0].name, "a,b");
	assert_string_equal(t.jobs[0].tenant, "#t");
	assert_string_equal(t.jobs[0].source_type, " x ");
	char *out;
	size_t len;
	struct rk_error err;
	assert_int_equal(rk_trace_write_native(&t, &out, &len, &err), 0);
	assert_int_equal(strlen(out), len);
	assert_int_equal(parse(out, "auto", NULL, &back), 0);
	free(out);
	assert_int_equal(back.n, 2);
	assert_string_equal(back.jobs[0].name, "a,b");
	assert_int_equal(back.jobs[0].submit_ms, 1);
	assert_true(back.jobs[0].duration_s == 0.1);
	assert_string_equal(back.jobs[0].plan, t.jobs[0].plan);
	assert_string_equal(back.jobs[0].tenant, "#t");
	assert_string_equal(back.jobs[0].source_type, " x ");
	assert_int_equal(back.jobs[0].global_batch, 16);
	assert_string_equal(back.jobs[1].source_type, "He said 'hi'"); /* '"' -> '\'' */
	assert_int_equal(back.jobs[1].global_batch, 0);
	rk_trace_fini(&t);
	rk_trace_fini(&back);
}

static void native_space_round_trip(void **state)
{
	(void)state;
	/* The space column is read, kept per job and written back only when some job
	 * limits its plans; a job without one reads as every plan. */
	const char *text = "name,submit_s,model,gpus,plan,space\n"
			   "a,0,gpt2,2,ga,\"tp=1,zero<=2,offload=no\"\n"
			   "b,1,vit,1,,\n";
	struct rk_trace t, back;
	assert_int_equal(parse(text, "auto", NULL, &t), 0);
	assert_int_equal(t.jobs[0].space.limited, 1);
	assert_int_equal(t.jobs[0].space.tp_max, 1);
	assert_int_equal(t.jobs[0].space.zero_max, 2);
	assert_int_equal(t.jobs[0].space.offload, 0);
	assert_int_equal(t.jobs[1].space.limited, 0);
	char *out;
	size_t len;
	struct rk_error err;
	assert_int_equal(rk_trace_write_native(&t, &out, &len, &err), 0);
	assert_non_null(strstr(out, ",space\n"));
	assert_non_null(strstr(out, ",\"tp=1,zero<=2,offload=no\"\n"));
	assert_non_null(strstr(out, ",all\n"));
	assert_int_equal(parse(out, "auto", NULL, &back), 0);
	free(out);
	assert_true(rk_plan_space_equal(&back.jobs[0].space, &t.jobs[0].space));
	assert_true(rk_plan_space_equal(&back.jobs[1].space, &t.jobs[1].space));
	rk_trace_fini(&back);
	rk_trace_fini(&t);
	/* No job declares a space: the header is the one written before spaces existed. */
	assert_int_equal(parse("submit_s,gpus\n0,1\n", "auto", NULL, &t), 0);
	assert_int_equal(rk_trace_write_native(&t, &out, &len, &err), 0);
	assert_null(strstr(out, "space"));
	free(out);
	rk_trace_fini(&t);
}

static void detect_every_format(void **state)
{
	(void)state;
	static const struct {
		const char *text, *format;
	} cases[] = {
		{"name,submission_time,duration,application,num_gpus,num_cpus,bandwidth,exec_plan,"
		 "steps,is_sla\nx,0,1,bert,1,8,0,ga,10,0\n",
		 "rubick"},
		{"name,time,application,num_replicas,batch_size\nx,0,ncf,1,64\n", "sia"},
		{"timestamp,duration,num_gpus,gpu_time,cluster\n2017-09-04 00:00:00,1,1,1,a\n",
		 "philly"},
		{"A3C\tpython3 main.py\t-n\t1\t10\t0\t1\n", "gavel"},
		{"job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,interval,"
		 "iteration_time,resource_time_0,resource_time_1,resource_time_2,priority\n"
		 "0,1,0,10,a2c,64,1000,0,100,1,1,1,0\n",
		 "muri"},
		{"0,res50,0,10,1\n", "synergy"},
		{"job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n0,1,0,1,vgg16,1,0\n",
		 "tiresias"},
		{"name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,10,1,500\n", "alibaba"},
		{"submit_s,gpus\n0,1\n", "native"},
		{"JobID|Submit|Elapsed|AllocTRES\n7|2026-01-01T00:00:00|00:01:00|gres/gpu=1\n",
		 "sacct"},
		{"id,name,tenant,state,exit,submit,start,end,elapsed,wait,gpu_hours,gpus\n"
		 "1,a,t,done,0,2026-01-01T00:00:00Z,2026-01-01T00:00:01Z,2026-01-01T00:01:01Z,"
		 "00:01:00,00:00:01,0.0167,1\n",
		 "history"},
	};
	const char *const *names = rk_trace_formats();
	size_t n_names = 0;
	while (names[n_names])
		n_names++;
	assert_int_equal(n_names, sizeof(cases) / sizeof(cases[0]));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rk_trace t;
		assert_int_equal(parse(cases[i].text, "auto", NULL, &t), 0);
		assert_string_equal(t.format, cases[i].format);
		assert_int_equal(t.n, 1);
		rk_trace_fini(&t);
		/* Forcing the right format gives the same; every name has a summary. */
		assert_int_equal(parse(cases[i].text, cases[i].format, NULL, &t), 0);
		assert_string_equal(t.format, cases[i].format);
		rk_trace_fini(&t);
		assert_non_null(rk_trace_format_summary(cases[i].format));
	}
	assert_null(rk_trace_format_summary("nope"));
}

static void window_and_max_jobs(void **state)
{
	(void)state;
	const char *text = "submit_s,gpus,name\n0,1,a\n10,1,b\n20,1,c\n30,1,d\n40,1,e\n";
	struct rk_trace_options o = rk_trace_options_default();
	o.window_start_ms = 10000;
	o.window_end_ms = 40000;
	struct rk_trace t;
	assert_int_equal(parse(text, "auto", &o, &t), 0);
	assert_int_equal(t.n, 3);
	assert_string_equal(t.jobs[0].name, "b");
	assert_int_equal(t.jobs[0].submit_ms, 0); /* shifted to the window start */
	assert_int_equal(t.jobs[2].submit_ms, 20000);
	assert_int_equal(t.n_filtered, 2);
	rk_trace_fini(&t);
	o = rk_trace_options_default();
	o.max_jobs = 2;
	assert_int_equal(parse(text, "auto", &o, &t), 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.jobs[1].name, "b");
	assert_int_equal(t.n_filtered, 3);
	rk_trace_fini(&t);
}

static void ties_keep_file_order(void **state)
{
	(void)state;
	const char *text = "submit_s,gpus,name\n5,1,x\n0,1,y\n5,1,z\n0,1,w\n";
	struct rk_trace t;
	assert_int_equal(parse(text, "auto", NULL, &t), 0);
	const char *want[] = {"y", "w", "x", "z"};
	for (int i = 0; i < 4; i++)
		assert_string_equal(t.jobs[i].name, want[i]);
	rk_trace_fini(&t);
}

static void mapping_is_seeded(void **state)
{
	(void)state;
	char a[RK_MODEL_NAME_MAX], b[RK_MODEL_NAME_MAX];
	/* Same inputs, same seed: same model. */
	for (int i = 0; i < 50; i++) {
		char key[32];
		snprintf(key, sizeof(key), "job-%d", i);
		assert_int_equal(rk_trace_map_model("", 4, key, 7, NULL, a), 0);
		assert_int_equal(rk_trace_map_model("", 4, key, 7, NULL, b), 0);
		assert_string_equal(a, b);
	}
	/* Different seeds reshuffle draws inside a bucket: across 50 jobs some differ. */
	int differ = 0;
	for (int i = 0; i < 50; i++) {
		char key[32];
		snprintf(key, sizeof(key), "job-%d", i);
		rk_trace_map_model("", 4, key, 1, NULL, a);
		rk_trace_map_model("", 4, key, 2, NULL, b);
		differ += strcmp(a, b) != 0;
	}
	assert_true(differ > 0);
	/* Families and buckets (docs/trace-format.md). */
	assert_int_equal(rk_trace_map_model("ResNet-50 (batch size 64)", 64, "k", 0, NULL, a), 0);
	assert_string_equal(a, "vit");
	assert_int_equal(rk_trace_map_model("LM (batch size 10)", 1, "k", 0, NULL, a), 0);
	assert_string_equal(a, "gpt2");
	assert_int_equal(rk_trace_map_model("Transformer (batch size 128)", 1, "k", 0, NULL, a), 0);
	assert_string_equal(a, "t5");
	assert_int_equal(rk_trace_map_model("shufflenet_v2_x1_0", 1, "k", 0, NULL, a), 0);
	assert_string_equal(a, "vit");
	assert_int_equal(rk_trace_map_model("GPT2", 1, "k", 0, NULL, a), 0);
	assert_string_equal(a, "gpt2");
	/* "resnet50" holds the letters "t5": tokens, not substrings, decide. */
	assert_int_equal(rk_trace_map_model("resnet50", 1, "k", 0, NULL, a), 0);
	assert_string_equal(a, "vit");
	assert_int_equal(rk_trace_map_model("Recommendation", 24, "k", 0, NULL, a), 0);
	assert_string_equal(a, "llama7");
	assert_int_equal(rk_trace_map_model("", 1, "k", 3, NULL, a), 0);
	assert_true(!strcmp(a, "vit") || !strcmp(a, "roberta") || !strcmp(a, "bert"));
	/* A restricted zoo: candidates outside it are never drawn. */
	static const char *const only_bert[] = {"bert", NULL};
	assert_int_equal(rk_trace_map_model("ResNet-18", 1, "k", 0, only_bert, a), 0);
	assert_string_equal(a, "bert");
	static const char *const none[] = {NULL};
	assert_int_equal(rk_trace_map_model("ResNet-18", 1, "k", 0, none, a), RK_ENOTFOUND);
}

static void same_seed_same_trace(void **state)
{
	(void)state;
	const char *text = "timestamp,duration,num_gpus,gpu_time,cluster\n"
			   "2017-10-09 07:01:55,66.0,1,66.0,a\n2017-10-09 07:01:56,66.0,2,66.0,a\n"
			   "2017-10-09 07:01:57,66.0,8,66.0,a\n2017-10-09 07:01:58,66.0,16,66.0,a\n";
	struct rk_trace_options o = rk_trace_options_default();
	o.seed = 42;
	struct rk_trace t1, t2;
	assert_int_equal(parse(text, "auto", &o, &t1), 0);
	assert_int_equal(parse(text, "auto", &o, &t2), 0);
	assert_int_equal(t1.n, t2.n);
	assert_memory_equal(t1.jobs, t2.jobs, t1.n * sizeof(*t1.jobs));
	rk_trace_fini(&t1);
	rk_trace_fini(&t2);
}

static void crlf_bom_blank_comment(void **state)
{
	(void)state;
	const char *text = "\xEF\xBB\xBFname,time,application,num_replicas,batch_size\r\n"
			   "\r\n# a comment\r\n"
			   "x,1,bert,2,32\r\n";
	struct rk_trace t;
	assert_int_equal(parse(text, "auto", NULL, &t), 0);
	assert_string_equal(t.format, "sia");
	assert_int_equal(t.n, 1);
	assert_int_equal(t.jobs[0].line, 4);
	assert_string_equal(t.jobs[0].name, "x");
	rk_trace_fini(&t);
	/* A header and no jobs is an empty trace, not an error. */
	assert_int_equal(parse("name,time,application,num_replicas,batch_size\n", "auto", NULL, &t),
			 0);
	assert_int_equal(t.n, 0);
	rk_trace_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rubick_fields),
		cmocka_unit_test(sia_fields),
		cmocka_unit_test(philly_relative_and_sorted),
		cmocka_unit_test(gavel_three_layouts),
		cmocka_unit_test(gavel_launch_commands),
		cmocka_unit_test(muri_milliseconds),
		cmocka_unit_test(synergy_and_tiresias),
		cmocka_unit_test(alibaba_fractions),
		cmocka_unit_test(native_quoted_canonical_plan),
		cmocka_unit_test(native_fields),
		cmocka_unit_test(native_writer_round_trip),
		cmocka_unit_test(native_space_round_trip),
		cmocka_unit_test(detect_every_format),
		cmocka_unit_test(window_and_max_jobs),
		cmocka_unit_test(ties_keep_file_order),
		cmocka_unit_test(mapping_is_seeded),
		cmocka_unit_test(same_seed_same_trace),
		cmocka_unit_test(crlf_bom_blank_comment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
