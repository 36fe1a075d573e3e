/*
 * `rubick queue [--state S] [--tenant T] [--limit N]`: rubickd's jobs as a
 * table, newest first, like squeue (GET /v1/jobs).
 */
#include "cli/commands.h"
#include "cli/daemon_client.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out, "usage: rubick queue [--state STATE] [--tenant T] [--limit N]\n"
		     "                    [--url URL] [--token-file FILE] [--json]\n"
		     "STATE: pending, running, restarting, done, failed, cancelled\n");
}

/* Append "&key=value" (value is URL-safe: checked by the caller's alphabet). */
static int add_arg(char *q, size_t cap, const char *key, const char *value)
{
	for (const char *p = value; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '-' || *p == '_' || *p == '.'))
			return -1;
	size_t n = strlen(q);
	snprintf(q + n, cap - n, "%s%s=%s", n ? "&" : "?", key, value);
	return 0;
}

int rk_cmd_queue(int argc, char **argv)
{
	struct rk_dc dc = {.cmd = "queue"};
	char q[512] = "";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return RK_EXIT_OK;
		}
		int c = rk_dc_common_flag(&dc, argc, argv, &i);
		if (c < 0)
			return RK_EXIT_USAGE;
		if (c)
			continue;
		const char *key = !strcmp(argv[i], "--state")    ? "state"
				  : !strcmp(argv[i], "--tenant") ? "tenant"
				  : !strcmp(argv[i], "--limit")  ? "limit"
								 : NULL;
		if (!key || i + 1 >= argc) {
			fprintf(stderr, "rubick queue: %s: %s\n", argv[i],
				key ? "needs a value" : "unknown option (try --help)");
			return RK_EXIT_USAGE;
		}
		if (add_arg(q, sizeof(q), key, argv[++i])) {
			fprintf(stderr, "rubick queue: --%s: '%s' holds characters not allowed\n", key,
				argv[i]);
			return RK_EXIT_USAGE;
		}
	}
	char path[600];
	snprintf(path, sizeof(path), "/v1/jobs%s", q);
	json_t *r = NULL;
	int rc = rk_dc_request(&dc, "GET", path, NULL, &r);
	if (rc)
		return rc;
	if (dc.json) {
		rk_dc_print_json(r);
		json_decref(r);
		return RK_EXIT_OK;
	}
	printf("%8s %-16s %-10s %-10s %4s %-44s %11s %3s\n", "ID", "NAME", "TENANT", "STATE", "GPUS",
	       "PLAN", "ITERS", "RST");
	size_t i;
	json_t *j;
	json_array_foreach(json_object_get(r, "jobs"), i, j)
	{
		char iters[32];
		snprintf(iters, sizeof(iters), "%.0f/%.0f", rk_dc_num(j, "iters_done"),
			 rk_dc_num(j, "iterations"));
		printf("%8lld %-16.16s %-10.10s %-10s %4d %-44s %11s %3d\n",
		       (long long)rk_dc_num(j, "id"), rk_dc_str(j, "name"), rk_dc_str(j, "tenant"),
		       rk_dc_str(j, "state"), (int)rk_dc_num(j, "gpus"),
		       *rk_dc_str(j, "plan") ? rk_dc_str(j, "plan") : "-", iters,
		       (int)rk_dc_num(j, "restarts"));
	}
	json_decref(r);
	return RK_EXIT_OK;
}
