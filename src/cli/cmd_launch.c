/*
 * `rubick launch`: read a training job's launch command (Megatron-LM,
 * DeepSpeed, Hugging Face flags; docs/launch.md) and print the model, the plan
 * the user asked for and the global batch rubick derives from it. DeepSpeed
 * configs the command names are read from disk here (the library does no I/O).
 */
#include "cli/commands.h"
#include "cli/util.h"
#include "rubick/launch.h"
#include "rubick/plan.h"
#include "rubick/zoo.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rk_cmd_launch(int argc, char **argv);

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rubick launch [--gpus N] [--name NAME] [--config-dir DIR] [--zoo DIR]\n"
		"                     [--json] (--file FILE | COMMAND...)\n\n"
		"Read the launch command COMMAND (one word or several; the words are joined\n"
		"with spaces and re-split with shell quoting) or the contents of FILE, and\n"
		"print the model structure, the requested plan and the global batch.\n"
		"--gpus N        the job's GPUs (default: --nproc_per_node x --nnodes or\n"
		"                --num_gpus x --num_nodes from the command)\n"
		"--name NAME     the model's name when the flags describe it (default 'launch')\n"
		"--config-dir D  where relative DeepSpeed config paths are read (default: .)\n"
		"An option before COMMAND that is none of these is a usage error (exit 2):\n"
		"put a command that starts with '-' after --. Exit 4 when COMMAND is not a\n"
		"white-box launch command (it names no model structure rubick knows).\n\n"
		RK_EXIT_HELP);
}

struct reader {
	const char *dir;
	char *texts[8]; /* files read so far (owned) */
	int n;
};

static int read_config(void *ctx, const char *path, const char **text, size_t *len,
		       struct rk_error *err)
{
	struct reader *r = ctx;
	if (r->n == (int)(sizeof(r->texts) / sizeof(r->texts[0])))
		return rk_error_set(err, RK_ERANGE, "%s: too many config files", path);
	char full[4096];
	if (path[0] != '/' && r->dir)
		snprintf(full, sizeof(full), "%s/%s", r->dir, path);
	else
		snprintf(full, sizeof(full), "%s", path);
	char *t;
	int rc = rk_cli_read_file(full, &t, len, err);
	if (rc)
		return rc;
	r->texts[r->n++] = t;
	*text = t;
	return 0;
}

static void print_text(const struct rk_launch *L)
{
	const struct rk_model *m = &L->model;
	char plan[RK_PLAN_TEXT_MAX];
	if (rk_plan_format(&L->plan, plan, sizeof(plan)) < 0)
		snprintf(plan, sizeof(plan), "?");
	printf("kind          %s\n", L->kind == RK_LAUNCH_HF ? "huggingface" : "megatron");
	printf("model         %s (%s)\n", m->name,
	       L->from_zoo ? "zoo entry" : "from the structure flags");
	printf("structure     layers=%d hidden=%d heads=%d seq_len=%d vocab=%d\n", m->layers,
	       m->hidden, m->heads, m->seq_len, m->vocab);
	printf("params        %.4g%s\n", m->params,
	       L->params_estimated ? " (estimated 12*L*h^2 + V*h)" : "");
	printf("plan          %s\n", plan);
	printf("gpus          %d\n", L->gpus);
	printf("global_batch  %d\n", L->global_batch);
	if (L->iterations)
		printf("iterations    %ld\n", L->iterations);
}

static int print_json(const struct rk_launch *L)
{
	const struct rk_model *m = &L->model;
	char plan[RK_PLAN_TEXT_MAX], spec[RK_MODEL_TEXT_MAX];
	if (rk_plan_format(&L->plan, plan, sizeof(plan)) < 0)
		return RK_EXIT_FAILURE;
	rk_model_format(m, spec, sizeof(spec));
	json_t *o = json_pack("{s:s, s:s, s:b, s:b, s:{s:i, s:i, s:i, s:i, s:i, s:f, s:b}, s:s, "
			      "s:i, s:i, s:I, s:s}",
			      "kind", L->kind == RK_LAUNCH_HF ? "huggingface" : "megatron", "model",
			      m->name, "from_zoo", L->from_zoo, "params_estimated",
			      L->params_estimated, "structure", "layers", m->layers, "hidden",
			      m->hidden, "heads", m->heads, "seq_len", m->seq_len, "vocab", m->vocab,
			      "params", m->params, "allow_3d", m->allow_3d, "plan", plan, "gpus",
			      L->gpus, "global_batch", L->global_batch, "iterations",
			      (json_int_t)L->iterations, "model_spec", spec);
	char *s = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
	json_decref(o);
	if (!s)
		return RK_EXIT_FAILURE;
	puts(s);
	free(s);
	return RK_EXIT_OK;
}

int rk_cmd_launch(int argc, char **argv)
{
	const char *zoo_dir = NULL, *file = NULL, *name = NULL;
	struct reader rd = {NULL, {NULL}, 0};
	long gpus = 0;
	int json = 0, first = 0;
	for (int i = 1; i < argc && !first; i++) {
		const char *f = argv[i];
		if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
			usage(stdout);
			return RK_EXIT_OK;
		}
		if (!strcmp(f, "--json")) {
			json = 1;
			continue;
		}
		if (!strcmp(f, "--")) {
			first = i + 1;
			break;
		}
		int known = !strcmp(f, "--gpus") || !strcmp(f, "--name") || !strcmp(f, "--zoo") ||
			    !strcmp(f, "--file") || !strcmp(f, "--config-dir");
		if (!known && f[0] == '-' && f[1]) {
			/* A launch command starts with its program (torchrun, deepspeed, python):
			 * a dash here is a mistyped option of ours; `--` passes anything. */
			fprintf(stderr, "rubick launch: %s: unknown option (see --help; put a command "
			        "that starts with '-' after --)\n", f);
			return RK_EXIT_USAGE;
		}
		if (!known) {
			first = i; /* the launch command starts here */
			break;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "rubick launch: %s: missing value\n", f);
			return RK_EXIT_USAGE;
		}
		const char *v = argv[++i];
		if (!strcmp(f, "--gpus")) {
			char *end;
			errno = 0;
			gpus = strtol(v, &end, 10);
			if (end == v || *end || errno || gpus < 1 || gpus > RK_PLAN_DEGREE_MAX) {
				fprintf(stderr, "rubick launch: --gpus: '%s' must be an integer in 1..%d\n",
					v, RK_PLAN_DEGREE_MAX);
				return RK_EXIT_USAGE;
			}
		} else if (!strcmp(f, "--name")) {
			name = v;
		} else if (!strcmp(f, "--zoo")) {
			zoo_dir = v;
		} else if (!strcmp(f, "--file")) {
			file = v;
		} else {
			rd.dir = v;
		}
	}
	if (!!file == (first > 0 && first < argc)) {
		fprintf(stderr, "rubick launch: give either --file FILE or the COMMAND (see --help)\n");
		return RK_EXIT_USAGE;
	}
	struct rk_error err;
	char *cmd = NULL;
	size_t len = 0;
	const char *src = file ? file : "command";
	if (file) {
		if (rk_cli_read_file(file, &cmd, &len, &err)) {
			fprintf(stderr, "rubick launch: %s\n", err.msg);
			return RK_EXIT_FAILURE;
		}
	} else {
		for (int i = first; i < argc; i++)
			len += strlen(argv[i]) + 1;
		cmd = malloc(len + 1);
		if (!cmd)
			return RK_EXIT_FAILURE;
		cmd[0] = '\0';
		for (int i = first, used = 0; i < argc; i++)
			used += snprintf(cmd + used, len + 1 - (size_t)used, "%s%s", i > first ? " " : "",
					 argv[i]);
	}
	struct rk_zoo zoo;
	rk_zoo_init(&zoo);
	int rc = RK_EXIT_OK;
	if (rk_cli_zoo_load(rk_cli_zoo_dir(zoo_dir), &zoo, &err)) {
		fprintf(stderr, "rubick launch: %s\n", err.msg);
		rc = RK_EXIT_FAILURE;
		goto out;
	}
	struct rk_launch_opts o = {src, name, (int)gpus, &zoo, read_config, &rd};
	struct rk_launch L;
	int lrc = rk_launch_parse(cmd, &o, &L, &err);
	if (lrc) {
		fprintf(stderr, "rubick launch: %s\n", err.msg);
		rc = lrc == RK_ENOTFOUND ? RK_EXIT_NOTFOUND : RK_EXIT_FAILURE;
		goto out;
	}
	if (json)
		rc = print_json(&L);
	else
		print_text(&L);
out:
	for (int i = 0; i < rd.n; i++)
		free(rd.texts[i]);
	rk_zoo_fini(&zoo);
	free(cmd);
	return rc;
}
