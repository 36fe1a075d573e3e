/* `rubick cancel JOB...`: cancel jobs (DELETE /v1/jobs/{id}). */
#include "cli/commands.h"
#include "cli/daemon_client.h"

#include <stdio.h>
#include <string.h>

int rk_cmd_cancel(int argc, char **argv)
{
	struct rk_dc dc = {.cmd = "cancel"};
	long long ids[256];
	int n = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: rubick cancel JOB... [--url URL] [--token-file FILE] [--json]\n");
			return RK_EXIT_OK;
		}
		int c = rk_dc_common_flag(&dc, argc, argv, &i);
		if (c < 0)
			return RK_EXIT_USAGE;
		if (c)
			continue;
		if (n == 256) {
			fprintf(stderr, "rubick cancel: at most 256 jobs at once\n");
			return RK_EXIT_USAGE;
		}
		if (rk_dc_job_id(&dc, argv[i], &ids[n++]))
			return RK_EXIT_USAGE;
	}
	if (!n) {
		fprintf(stderr, "usage: rubick cancel JOB... [--url URL] [--token-file FILE]\n");
		return RK_EXIT_USAGE;
	}
	int worst = RK_EXIT_OK;
	for (int k = 0; k < n; k++) {
		char path[64];
		snprintf(path, sizeof(path), "/v1/jobs/%lld", ids[k]);
		json_t *j = NULL;
		int rc = rk_dc_request(&dc, "DELETE", path, NULL, &j);
		if (rc) {
			worst = worst ? worst : rc;
			continue;
		}
		if (dc.json)
			rk_dc_print_json(j);
		else
			printf("cancelled job %lld\n", ids[k]);
		json_decref(j);
	}
	return worst;
}
