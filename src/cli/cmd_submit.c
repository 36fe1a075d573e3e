/*
 * `rubick submit FILE|-` or `rubick submit --model NAME --gpus N --iterations N ...`:
 * submit a job to rubickd (POST /v1/jobs, docs/api.md). Prints the new job's
 * id, or the job as JSON with --json.
 */
#include "cli/commands.h"
#include "cli/daemon_client.h"
#include "cli/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: rubick submit FILE|-            (a JSON job spec, see docs/api.md)\n"
	        "       rubick submit (--model NAME | --model-spec FILE | --launch CMD)\n"
	        "                     --gpus N --iterations N [--command CMD] [--name NAME]\n"
	        "                     [--batch N] [--plan PLAN] [--space SPACE] [--cpus N]\n"
	        "                     [--mem-mb N]\n"
	        "                     [--min-gpus N] [--max-gpus N] [--guaranteed] [--tenant T]\n"
	        "                     [--key IDEMPOTENCY_KEY] [--hold]\n"
	        "  --gpus N alone is rigid: every policy runs the job on exactly N GPUs;\n"
	        "  --min-gpus/--max-gpus let the policy resize it within them\n"
	        "  --space SPACE: the plans the job's script runs, e.g. tp=1 or\n"
	        "    tp<=4,pp<=4,zero<=2,offload=no (docs/plans.md); default: what rubickd\n"
	        "    reads off the command (docs/launch.md, \"Default plan space\")\n"
	        "  --hold: submitted held, like sbatch --hold (`rubick release JOB` lets it run)\n"
	        "common: [--url URL] [--token-file FILE] [--json]\n");
	fprintf(
	    out,
	    "rubickd --engine slurm: [--partition P] [--account A] [--qos Q] [--time-limit MIN]\n");
	fputs("exit 1 also when rubickd refuses the spec (the message names the "
	      "field)\n" RK_EXIT_HELP,
	      out);
}

/* Flags that become integer fields of the spec. */
static const struct {
	const char *flag, *field;
} int_flags[] = {
    {"--gpus", "gpus"},          {"--iterations", "iterations"},
    {"--batch", "global_batch"}, {"--cpus", "cpus"},
    {"--mem-mb", "mem_mb"},      {"--min-gpus", "min_gpus"},
    {"--max-gpus", "max_gpus"},  {"--time-limit", "slurm_time_limit"},
};
static const struct {
	const char *flag, *field;
} str_flags[] = {
    {"--model", "model"},
    {"--launch", "launch"},
    {"--command", "command"},
    {"--name", "name"},
    {"--plan", "plan"},
    {"--space", "plan_space"},
    {"--tenant", "tenant"},
    {"--key", "idempotency_key"},
    {"--partition", "slurm_partition"},
    {"--account", "slurm_account"},
    {"--qos", "slurm_qos"},
};

static int spec_from_flags(int argc, char **argv, struct rk_dc *dc, json_t *spec)
{
	for (int i = 1; i < argc; i++) {
		int c = rk_dc_common_flag(dc, argc, argv, &i);
		if (c < 0)
			return RK_EXIT_USAGE;
		if (c)
			continue;
		const char *a = argv[i];
		if (!strcmp(a, "--guaranteed") || !strcmp(a, "--hold")) {
			json_object_set_new(spec, a + 2, json_true());
			continue;
		}
		if (i + 1 >= argc) {
			rk_dc_fail(dc, RK_EXIT_USAGE, "invalid", NULL,
			           "%s: unknown option or missing value", a);
			return RK_EXIT_USAGE;
		}
		const char *v = argv[i + 1];
		int done = 0;
		for (size_t k = 0; k < sizeof(int_flags) / sizeof(int_flags[0]) && !done; k++)
			if (!strcmp(a, int_flags[k].flag)) {
				char *end;
				long long x = strtoll(v, &end, 10);
				if (!*v || *end) {
					rk_dc_fail(dc, RK_EXIT_USAGE, "invalid", NULL,
					           "%s: '%s' is not an integer", a, v);
					return RK_EXIT_USAGE;
				}
				json_object_set_new(spec, int_flags[k].field, json_integer(x));
				done = 1;
			}
		for (size_t k = 0; k < sizeof(str_flags) / sizeof(str_flags[0]) && !done; k++)
			if (!strcmp(a, str_flags[k].flag)) {
				json_object_set_new(spec, str_flags[k].field, json_string(v));
				done = 1;
			}
		if (!done && !strcmp(a, "--model-spec")) {
			char *text;
			size_t len;
			struct rk_error err;
			if (rk_cli_read_file(v, &text, &len, &err)) {
				rk_dc_fail(dc, RK_EXIT_FAILURE, "invalid", NULL, "--model-spec: %s",
				           err.msg);
				return RK_EXIT_FAILURE;
			}
			json_object_set_new(spec, "model_spec", json_stringn(text, len));
			free(text);
			done = 1;
		}
		if (!done) {
			rk_dc_fail(dc, RK_EXIT_USAGE, "invalid", NULL,
			           "%s: unknown option (try --help)", a);
			return RK_EXIT_USAGE;
		}
		i++;
	}
	return RK_EXIT_OK;
}

int rk_cmd_submit(int argc, char **argv)
{
	struct rk_dc dc = {.cmd = "submit"};
	rk_dc_scan_json(&dc, argc, argv);
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return RK_EXIT_OK;
		}
	if (argc < 2) {
		usage(stderr);
		return RK_EXIT_USAGE;
	}
	char *body = NULL;
	int rc;
	if (argv[1][0] != '-' || !strcmp(argv[1], "-")) {
		/* a spec file; the rest may only be common flags */
		for (int i = 2; i < argc; i++) {
			int c = rk_dc_common_flag(&dc, argc, argv, &i);
			if (c <= 0) {
				if (!c)
					rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL,
					           "%s: unexpected after FILE", argv[i]);
				return RK_EXIT_USAGE;
			}
		}
		size_t len;
		struct rk_error err;
		if (!strcmp(argv[1], "-")) {
			rc = rk_cli_read_file("/dev/stdin", &body, &len, &err);
		} else {
			rc = rk_cli_read_file(argv[1], &body, &len, &err);
		}
		if (rc) {
			rk_dc_fail(&dc, RK_EXIT_FAILURE, "invalid", NULL, "%s", err.msg);
			return RK_EXIT_FAILURE;
		}
	} else {
		json_t *spec = json_object();
		rc = spec_from_flags(argc, argv, &dc, spec);
		if (!rc)
			body = json_dumps(spec, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(spec);
		if (rc)
			return rc;
	}
	json_t *job = NULL;
	rc = rk_dc_request(&dc, "POST", "/v1/jobs", body, &job);
	free(body);
	if (rc)
		return rc;
	if (dc.json)
		rk_dc_print_json(job);
	else
		printf("submitted job %lld (%s)\n", (long long)rk_dc_num(job, "id"),
		       rk_dc_str(job, "state"));
	json_decref(job);
	return RK_EXIT_OK;
}
