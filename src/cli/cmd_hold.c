/*
 * `rubick hold|release|requeue JOB...` (POST /v1/jobs/{id}/hold, /release,
 * /requeue), like `scontrol hold|release|requeue`: one file for the three,
 * which differ only in the path and requeue's --hold. Rules (docs/api.md
 * "Hold, release, requeue"): a pending job can be held, by its owner (a
 * user hold) or the admin (an admin hold, which only the admin releases);
 * requeue checkpoints a running job and puts it back pending, --hold also
 * holding it.
 */
#include "cli/commands.h"
#include "cli/daemon_client.h"

#include <stdio.h>
#include <string.h>

static const char usage_hold[] =
    "usage: rubick hold JOB... [--url URL] [--token-file FILE] [--json]\n"
    "  keep pending jobs from being scheduled until `rubick release`; the admin's\n"
    "  hold can be released only by the admin, the owner's by either\n";
static const char usage_release[] =
    "usage: rubick release JOB... [--url URL] [--token-file FILE] [--json]\n"
    "  lift the hold of held jobs (a user cannot release an admin hold)\n";
static const char usage_requeue[] =
    "usage: rubick requeue JOB... [--hold] [--url URL] [--token-file FILE] [--json]\n"
    "  checkpoint running jobs, stop them and put them back pending (they resume\n"
    "  from the checkpoint when the policy starts them again); --hold also holds them\n";
static const char usage_exit[] =
    "  exit: 0 ok, 1 refused (not pending, not running, already held, not held,\n"
    "        an admin hold; the message says which), 2 bad usage,\n"
    "        3 daemon unreachable or server error, 4 no such job (or not yours)\n";

static int job_op(int argc, char **argv, const char *op, const char *usage, const char *done)
{
	struct rk_dc dc = {.cmd = op};
	long long ids[256];
	int n = 0, hold = 0, requeue = !strcmp(op, "requeue");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("%s%s", usage, usage_exit);
			return RK_EXIT_OK;
		}
		int c = rk_dc_common_flag(&dc, argc, argv, &i);
		if (c < 0)
			return RK_EXIT_USAGE;
		if (c)
			continue;
		if (requeue && !strcmp(argv[i], "--hold")) {
			hold = 1;
			continue;
		}
		if (argv[i][0] == '-') {
			fprintf(stderr, "rubick %s: %s: unknown option (try --help)\n", op,
			        argv[i]);
			return RK_EXIT_USAGE;
		}
		if (n == 256) {
			fprintf(stderr, "rubick %s: at most 256 jobs at once\n", op);
			return RK_EXIT_USAGE;
		}
		if (rk_dc_job_id(&dc, argv[i], &ids[n++]))
			return RK_EXIT_USAGE;
	}
	if (!n) {
		fputs(usage, stderr);
		return RK_EXIT_USAGE;
	}
	int worst = RK_EXIT_OK;
	for (int k = 0; k < n; k++) {
		char path[96];
		snprintf(path, sizeof(path), "/v1/jobs/%lld/%s", ids[k], op);
		json_t *j = NULL;
		int rc = rk_dc_request(&dc, "POST", path, hold ? "{\"hold\":true}" : NULL, &j);
		if (rc) {
			worst = worst ? worst : rc;
			continue;
		}
		if (dc.json)
			rk_dc_print_json(j);
		else
			printf("%s job %lld%s\n", done, ids[k], hold ? " and held it" : "");
		json_decref(j);
	}
	return worst;
}

int rk_cmd_hold(int argc, char **argv)
{
	return job_op(argc, argv, "hold", usage_hold, "held");
}

int rk_cmd_release(int argc, char **argv)
{
	return job_op(argc, argv, "release", usage_release, "released");
}

int rk_cmd_requeue(int argc, char **argv)
{
	return job_op(argc, argv, "requeue", usage_requeue, "requeued");
}
