/* `rubick nodes`: the cluster's nodes and what is allocated on them (GET /v1/nodes). */
#include "cli/commands.h"
#include "cli/daemon_client.h"

#include <stdio.h>
#include <string.h>

int rk_cmd_nodes(int argc, char **argv)
{
	struct rk_dc dc = {.cmd = "nodes"};
	for (int i = 1; i < argc; i++) {
		int r = rk_dc_arg(
		    &dc, argc, argv, &i,
		    "usage: rubick nodes [--url URL] [--token-file FILE] [--json]\n" RK_EXIT_HELP);
		if (r == RK_DC_NEXT)
			continue;
		if (r == RK_DC_OWN)
			rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL, "%s: unknown option",
			           argv[i]);
		return r == RK_DC_OWN ? RK_EXIT_USAGE : r;
	}
	json_t *r = NULL;
	int rc = rk_dc_request(&dc, "GET", "/v1/nodes", NULL, &r);
	if (rc)
		return rc;
	if (dc.json) {
		rk_dc_print_json(r);
		json_decref(r);
		return RK_EXIT_OK;
	}
	printf("%5s %-8s %9s %9s %9s %10s %-8s %s\n", "NODE", "TYPE", "GPUS", "ALLOC", "BUSY",
	       "CPUS", "POOL", "STATE");
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(r, "nodes"), i, n)
	{
		char cpus[32];
		snprintf(cpus, sizeof(cpus), "%d/%d", (int)rk_dc_num(n, "cpus_allocated"),
		         (int)rk_dc_num(n, "cpus"));
		printf("%5d %-8s %9d %9d %9d %10s %-8s %s\n", (int)rk_dc_num(n, "id"),
		       rk_dc_str(n, "gpu_type"), (int)rk_dc_num(n, "gpus"),
		       (int)rk_dc_num(n, "gpus_allocated"), (int)rk_dc_num(n, "gpus_busy"), cpus,
		       rk_dc_str(n, "pool"),
		       json_is_string(json_object_get(n, "state")) ? rk_dc_str(n, "state")
		       : json_is_true(json_object_get(n, "up"))    ? "up"
		                                                   : "down");
	}
	json_decref(r);
	return RK_EXIT_OK;
}
