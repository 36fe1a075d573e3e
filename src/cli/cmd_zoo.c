/*
 * `rubick zoo`: list the model zoo, show one model in the zoo format, or check
 * model files (docs/zoo.md) before they are added to a zoo or a job spec.
 */
#include "cli/commands.h"
#include "cli/util.h"
#include "rubick/zoo.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rk_cmd_zoo(int argc, char **argv);

static void usage(FILE *out)
{
	fprintf(out, "usage: rubick zoo list [--zoo DIR] [--json]\n"
		     "       rubick zoo show NAME [--zoo DIR]\n"
		     "       rubick zoo check FILE...\n\n"
		     "list   every model of the zoo (DIR: --zoo, else $RUBICK_ZOO, else the\n"
		     "       bundled data/zoo) with its structure and global batch\n"
		     "show   one model (by name or alias, e.g. llama7b, t5_3B) in the zoo format\n"
		     "check  parse each FILE as one model; errors name FILE:LINE:COL\n"
		     "Format and aliases: docs/zoo.md.\n\n" RK_EXIT_HELP);
}

static json_t *model_json(const struct rk_model *m)
{
	json_t *o = json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:f, s:i, s:f, s:b, s:b}", "name",
			      m->name, "layers", m->layers, "hidden", m->hidden, "heads", m->heads,
			      "seq_len", m->seq_len, "vocab", m->vocab, "params", m->params,
			      "global_batch", m->global_batch, "fwd_ms", m->fwd_ms, "allow_3d",
			      m->allow_3d, "perf_fitted", m->perf_fitted);
	return o;
}

static int cmd_list(const struct rk_zoo *zoo, int json)
{
	if (json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < zoo->n_models; i++)
			json_array_append_new(arr, model_json(&zoo->models[i]));
		char *s = json_dumps(arr, JSON_INDENT(2));
		json_decref(arr);
		if (!s)
			return RK_EXIT_FAILURE;
		puts(s);
		free(s);
		return RK_EXIT_OK;
	}
	printf("%-10s %6s %6s %5s %6s %6s %10s %5s %8s %3s %6s\n", "name", "layers", "hidden",
	       "heads", "seq", "vocab", "params", "batch", "fwd_ms", "3d", "fitted");
	for (size_t i = 0; i < zoo->n_models; i++) {
		const struct rk_model *m = &zoo->models[i];
		char fwd[32];
		if (m->fwd_ms > 0)
			snprintf(fwd, sizeof(fwd), "%.0f", m->fwd_ms);
		else
			snprintf(fwd, sizeof(fwd), "-");
		printf("%-10s %6d %6d %5d %6d %6d %10.4g %5d %8s %3s %6s\n", m->name, m->layers,
		       m->hidden, m->heads, m->seq_len, m->vocab, m->params, m->global_batch, fwd,
		       m->allow_3d ? "yes" : "no", m->perf_fitted ? "yes" : "no");
	}
	return RK_EXIT_OK;
}

static int cmd_check(int argc, char **argv)
{
	int bad = 0;
	for (int i = 0; i < argc; i++) {
		char *text = NULL;
		size_t len = 0;
		struct rk_error err;
		struct rk_model m;
		if (rk_cli_read_file(argv[i], &text, &len, &err) ||
		    rk_model_parse(text, len, argv[i], &m, &err)) {
			fprintf(stderr, "rubick zoo check: %s\n", err.msg);
			bad = 1;
		} else {
			printf("%s: ok (model '%s')\n", argv[i], m.name);
		}
		free(text);
	}
	return bad ? RK_EXIT_FAILURE : RK_EXIT_OK;
}

int rk_cmd_zoo(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? RK_EXIT_USAGE : RK_EXIT_OK;
	}
	const char *sub = argv[1];
	if (!strcmp(sub, "check")) {
		if (argc < 3) {
			fprintf(stderr, "rubick zoo check: no FILE given\n");
			return RK_EXIT_USAGE;
		}
		/* Options first, before any file is read: a typo is a usage error, not a file. */
		for (int i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
				usage(stdout);
				return RK_EXIT_OK;
			}
			if (argv[i][0] == '-' && argv[i][1]) {
				fprintf(stderr, "rubick zoo check: unknown option '%s' (see --help; "
				        "a FILE starting with '-' is ./-FILE)\n", argv[i]);
				return RK_EXIT_USAGE;
			}
		}
		return cmd_check(argc - 2, argv + 2);
	}
	if (strcmp(sub, "list") && strcmp(sub, "show")) {
		fprintf(stderr, "rubick zoo: unknown subcommand '%s' (list, show, check)\n", sub);
		return RK_EXIT_USAGE;
	}
	const char *dir = NULL, *name = NULL;
	int json = 0;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return RK_EXIT_OK;
		} else if (!strcmp(argv[i], "--json") && !strcmp(sub, "list")) {
			json = 1;
		} else if (!strcmp(argv[i], "--zoo")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "rubick zoo %s: --zoo: missing value\n", sub);
				return RK_EXIT_USAGE;
			}
			dir = argv[++i];
		} else if (!strcmp(sub, "show") && !name && strncmp(argv[i], "--", 2)) {
			name = argv[i];
		} else {
			fprintf(stderr, "rubick zoo %s: unexpected argument '%s' (see --help)\n", sub,
				argv[i]);
			return RK_EXIT_USAGE;
		}
	}
	if (!strcmp(sub, "show") && !name) {
		fprintf(stderr, "rubick zoo show: no model NAME given\n");
		return RK_EXIT_USAGE;
	}
	struct rk_zoo zoo;
	struct rk_error err;
	rk_zoo_init(&zoo);
	if (rk_cli_zoo_load(rk_cli_zoo_dir(dir), &zoo, &err)) {
		fprintf(stderr, "rubick zoo %s: %s\n", sub, err.msg);
		rk_zoo_fini(&zoo);
		return RK_EXIT_FAILURE;
	}
	int rc = RK_EXIT_OK;
	if (!strcmp(sub, "list")) {
		rc = cmd_list(&zoo, json);
	} else {
		const struct rk_model *m = rk_zoo_find(&zoo, name);
		if (!m) {
			fprintf(stderr, "rubick zoo show: model '%s' is not in the zoo (", name);
			for (size_t i = 0; i < zoo.n_models; i++)
				fprintf(stderr, "%s%s", i ? ", " : "", zoo.models[i].name);
			fprintf(stderr, ")\n");
			rc = RK_EXIT_NOTFOUND;
		} else {
			char text[RK_MODEL_TEXT_MAX];
			rk_model_format(m, text, sizeof(text));
			fputs(text, stdout);
		}
	}
	rk_zoo_fini(&zoo);
	return rc;
}
