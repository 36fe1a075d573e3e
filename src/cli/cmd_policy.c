/*
 * `rubick policy [NAME [--options K=V,...]]`: show rubickd's scheduling policy,
 * or switch to NAME (admin token; GET/PUT /v1/policy).
 */
#include "cli/commands.h"
#include "cli/daemon_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rk_cmd_policy(int argc, char **argv)
{
	struct rk_dc dc = {.cmd = "policy"};
	const char *name = NULL, *options = NULL;
	for (int i = 1; i < argc; i++) {
		int r =
		    rk_dc_arg(&dc, argc, argv, &i,
		              "usage: rubick policy [NAME [--options K=V,...]] [--url URL]\n"
		              "                     [--token-file FILE] [--json]\n"
		              "  exit 1 when rubickd refuses NAME or its options\n" RK_EXIT_HELP);
		if (r == RK_DC_NEXT)
			continue;
		if (r != RK_DC_OWN)
			return r;
		if (!strcmp(argv[i], "--options") && i + 1 < argc) {
			options = argv[++i];
		} else if (argv[i][0] != '-' && !name) {
			name = argv[i];
		} else {
			rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL, "%s: unexpected argument",
			           argv[i]);
			return RK_EXIT_USAGE;
		}
	}
	if (options && !name) {
		rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL, "--options needs a policy NAME");
		return RK_EXIT_USAGE;
	}
	json_t *r = NULL;
	int rc;
	if (name) {
		json_t *b = json_pack("{s:s}", "name", name);
		if (options && *options)
			json_object_set_new(b, "options", json_string(options));
		char *body = json_dumps(b, JSON_COMPACT);
		json_decref(b);
		rc = rk_dc_request(&dc, "PUT", "/v1/policy", body, &r);
		free(body);
	} else {
		rc = rk_dc_request(&dc, "GET", "/v1/policy", NULL, &r);
	}
	if (rc)
		return rc;
	if (dc.json) {
		rk_dc_print_json(r);
	} else {
		printf("policy %s%s%s\n", rk_dc_str(r, "name"), *rk_dc_str(r, "options") ? " " : "",
		       rk_dc_str(r, "options"));
		printf("available:");
		size_t i;
		json_t *p;
		json_array_foreach(json_object_get(r, "available"), i, p)
		    printf(" %s", json_string_value(p));
		printf("\n");
	}
	json_decref(r);
	return RK_EXIT_OK;
}
