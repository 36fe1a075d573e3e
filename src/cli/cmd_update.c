/*
 * `rubick update JOB [--gpus N] [--min-gpus N] [--max-gpus N] [--plan P|default]
 * [--guaranteed yes|no]`: change a job's request (PUT /v1/jobs/{id}), like
 * `scontrol update`. A running job whose request changes is checkpointed and
 * restarted on the new request (docs/api.md): how an operator forces a
 * reconfiguration. Values are checked by the daemon, whose message names the
 * field; here only that they are numbers.
 */
#include "cli/commands.h"
#include "cli/daemon_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: rubick update JOB [--gpus N] [--min-gpus N] [--max-gpus N]\n"
    "                         [--plan PLAN|default] [--guaranteed yes|no]\n"
    "                         [--url URL] [--token-file FILE] [--json]\n"
    "  change a job's request (a running job is checkpointed and restarted on it;\n"
    "  --gpus N without --min-gpus/--max-gpus keeps it on exactly N GPUs)\n"
    "  PLAN: dp=D,tp=T,pp=P,mb=M,ga=G,gc=0|1,zero=Z,offload=0|1\n"
    "  exit 1 when rubickd refuses the change (the message names the field); a job\n"
    "  that is not yours reads as no such job (exit 4)\n" RK_EXIT_HELP;

int rk_cmd_update(int argc, char **argv)
{
	struct rk_dc dc = {.cmd = "update"};
	const char *arg = NULL;
	json_t *body = json_object();
	int rc = RK_EXIT_USAGE;
	for (int i = 1; i < argc; i++) {
		int r = rk_dc_arg(&dc, argc, argv, &i, usage_text);
		if (r == RK_DC_NEXT)
			continue;
		if (r != RK_DC_OWN) {
			rc = r;
			goto out;
		}
		const char *f = argv[i];
		const char *key = !strcmp(f, "--gpus")         ? "gpus"
		                  : !strcmp(f, "--min-gpus")   ? "min_gpus"
		                  : !strcmp(f, "--max-gpus")   ? "max_gpus"
		                  : !strcmp(f, "--plan")       ? "plan"
		                  : !strcmp(f, "--guaranteed") ? "guaranteed"
		                                               : NULL;
		if (!key) {
			if (arg || f[0] == '-') {
				rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL,
				           "%s: unexpected argument (try --help)", f);
				goto out;
			}
			arg = f;
			continue;
		}
		if (i + 1 >= argc) {
			rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL, "%s: needs a value", f);
			goto out;
		}
		const char *v = argv[++i];
		if (!strcmp(key, "plan")) {
			json_object_set_new(body, key,
			                    strcmp(v, "default") ? json_string(v) : json_null());
		} else if (!strcmp(key, "guaranteed")) {
			if (strcmp(v, "yes") && strcmp(v, "no")) {
				rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL,
				           "--guaranteed: '%s' is not yes or no", v);
				goto out;
			}
			json_object_set_new(body, key, json_boolean(!strcmp(v, "yes")));
		} else {
			char *end;
			long long x = strtoll(v, &end, 10);
			if (!*v || *end || x < 1 || x > 1000000) {
				rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL,
				           "%s: '%s' is not a positive integer", f, v);
				goto out;
			}
			json_object_set_new(body, key, json_integer(x));
		}
	}
	long long id;
	if (!arg) {
		rk_dc_usage(&dc, usage_text);
		goto out;
	}
	if (rk_dc_job_id(&dc, arg, &id))
		goto out;
	if (!json_object_size(body)) {
		rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL,
		           "nothing to change (give --gpus, --min-gpus, --max-gpus,"
		           " --plan or --guaranteed)");
		goto out;
	}
	char path[64], *text = json_dumps(body, JSON_COMPACT);
	snprintf(path, sizeof(path), "/v1/jobs/%lld", id);
	json_t *j = NULL;
	rc = text ? rk_dc_request(&dc, "PUT", path, text, &j) : RK_EXIT_FAILURE;
	free(text);
	if (rc)
		goto out;
	if (dc.json) {
		rk_dc_print_json(j);
	} else {
		const json_t *spec = json_object_get(j, "spec");
		printf("updated job %lld: %d GPUs (elastic %d..%d), plan %s, state %s\n", id,
		       (int)rk_dc_num(j, "gpus"), (int)rk_dc_num(spec, "min_gpus"),
		       (int)rk_dc_num(spec, "max_gpus"),
		       *rk_dc_str(spec, "plan") ? rk_dc_str(spec, "plan") : "default",
		       rk_dc_str(j, "state"));
	}
	json_decref(j);
out:
	json_decref(body);
	return rc;
}
