/* `rubick show JOB`: one job with its allocation and plan history (GET /v1/jobs/{id}). */
#include "cli/commands.h"
#include "cli/daemon_client.h"

#include <stdio.h>
#include <string.h>

static void print_alloc(const json_t *alloc)
{
	size_t i;
	json_t *s;
	if (!json_array_size(alloc)) {
		printf("-");
		return;
	}
	json_array_foreach(alloc, i, s)
	    printf("%snode %d: %d GPUs %d CPUs", i ? ", " : "", (int)rk_dc_num(s, "node"),
	           (int)rk_dc_num(s, "gpus"), (int)rk_dc_num(s, "cpus"));
}

int rk_cmd_show(int argc, char **argv)
{
	struct rk_dc dc = {.cmd = "show"};
	const char *arg = NULL;
	for (int i = 1; i < argc; i++) {
		int r = rk_dc_arg(
		    &dc, argc, argv, &i,
		    "usage: rubick show JOB [--url URL] [--token-file FILE] [--json]\n"
		    "  a job that is not yours reads as no such job (exit 4)\n" RK_EXIT_HELP);
		if (r == RK_DC_NEXT)
			continue;
		if (r != RK_DC_OWN)
			return r;
		if (arg || argv[i][0] == '-') {
			rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL, "%s: unexpected argument",
			           argv[i]);
			return RK_EXIT_USAGE;
		}
		arg = argv[i];
	}
	long long id;
	if (!arg) {
		rk_dc_usage(&dc, "usage: rubick show JOB [--url URL] [--json]\n");
		return RK_EXIT_USAGE;
	}
	if (rk_dc_job_id(&dc, arg, &id))
		return RK_EXIT_USAGE;
	char path[64];
	snprintf(path, sizeof(path), "/v1/jobs/%lld", id);
	json_t *j = NULL;
	int rc = rk_dc_request(&dc, "GET", path, NULL, &j);
	if (rc)
		return rc;
	if (dc.json) {
		rk_dc_print_json(j);
		json_decref(j);
		return RK_EXIT_OK;
	}
	const json_t *spec = json_object_get(j, "spec");
	printf("job %lld  %s  tenant %s  state %s\n", id, rk_dc_str(j, "name"),
	       rk_dc_str(j, "tenant"), rk_dc_str(j, "state"));
	printf("  model      %s%s\n", rk_dc_str(spec, "model"),
	       json_object_get(spec, "model") ? "" : "(inline or launch command)");
	printf("  request    %d GPUs (elastic %d..%d), global batch %d, %s\n",
	       (int)rk_dc_num(j, "gpus"), (int)rk_dc_num(spec, "min_gpus"),
	       (int)rk_dc_num(spec, "max_gpus"), (int)rk_dc_num(spec, "global_batch"),
	       json_is_true(json_object_get(spec, "guaranteed")) ? "guaranteed" : "best-effort");
	if (*rk_dc_str(j, "pending_reason"))
		printf("  waiting    %s%s%s%s\n", rk_dc_str(j, "pending_reason"),
		       *rk_dc_str(j, "hold") ? " (" : "", rk_dc_str(j, "hold"),
		       *rk_dc_str(j, "hold") ? " hold)" : "");
	printf("  progress   %.0f / %.0f iterations, %.1f samples/s\n", rk_dc_num(j, "iters_done"),
	       rk_dc_num(j, "iterations"), rk_dc_num(j, "throughput_sps"));
	printf("  plan       %s\n", *rk_dc_str(j, "plan") ? rk_dc_str(j, "plan") : "-");
	printf("  alloc      ");
	print_alloc(json_object_get(j, "alloc"));
	printf("\n  gpu ids    %s\n", *rk_dc_str(j, "gpu_ids") ? rk_dc_str(j, "gpu_ids") : "-");
	char sub[40], st[40], end[40];
	printf("  times      submitted %s, started %s, ended %s\n",
	       rk_dc_date((long long)rk_dc_num(j, "submit_ms"), sub, sizeof(sub)),
	       rk_dc_date((long long)rk_dc_num(j, "first_start_ms"), st, sizeof(st)),
	       rk_dc_date((long long)rk_dc_num(j, "end_ms"), end, sizeof(end)));
	printf("  run %d, restarts %d%s%s\n", (int)rk_dc_num(j, "run"),
	       (int)rk_dc_num(j, "restarts"), *rk_dc_str(j, "reason") ? ", " : "",
	       rk_dc_str(j, "reason"));
	printf("  history\n");
	size_t i;
	json_t *h;
	json_array_foreach(json_object_get(j, "history"), i, h)
	{
		char d[40];
		printf("    %s  run %-3d %-16s %-44s ",
		       rk_dc_date((long long)rk_dc_num(h, "t_ms"), d, sizeof(d)),
		       (int)rk_dc_num(h, "run"), rk_dc_str(h, "reason"),
		       *rk_dc_str(h, "plan") ? rk_dc_str(h, "plan") : "-");
		print_alloc(json_object_get(h, "alloc"));
		printf("\n");
	}
	json_decref(j);
	return RK_EXIT_OK;
}
