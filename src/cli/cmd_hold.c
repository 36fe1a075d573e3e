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

#define USAGE_HOLD                                                                                 \
	"usage: rubick hold JOB... [--url URL] [--token-file FILE] [--json]\n"                     \
	"  keep pending jobs from being scheduled until `rubick release`; the admin's\n"           \
	"  hold can be released only by the admin, the owner's by either\n"
#define USAGE_RELEASE                                                                              \
	"usage: rubick release JOB... [--url URL] [--token-file FILE] [--json]\n"                  \
	"  lift the hold of held jobs (a user cannot release an admin hold)\n"
#define USAGE_REQUEUE                                                                              \
	"usage: rubick requeue JOB... [--hold] [--url URL] [--token-file FILE] [--json]\n"         \
	"  checkpoint running jobs, stop them and put them back pending (they resume\n"            \
	"  from the checkpoint when the policy starts them again); --hold also holds them\n"
/* --help says the exit codes too; a missing JOB shows the usage alone. */
#define USAGE_EXIT                                                                                 \
	"  exit 1 when rubickd refuses (not pending, not running, already held, not held,\n"       \
	"  an admin hold; the message says which); a job that is not yours reads as no\n"          \
	"  such job (exit 4)\n" RK_EXIT_HELP

static int job_op(int argc, char **argv, const char *op, const char *help, const char *usage,
                  const char *done)
{
	struct rk_dc dc = {.cmd = op};
	long long ids[RK_DC_MAX_JOBS];
	int n, hold = 0;
	int r = rk_dc_job_list(&dc, argc, argv, help, usage,
	                       !strcmp(op, "requeue") ? "--hold" : NULL, &hold, ids, &n);
	if (r != RK_DC_OWN)
		return r;
	char suffix[16];
	snprintf(suffix, sizeof(suffix), "/%s", op);
	return rk_dc_job_each(&dc, ids, n, "POST", suffix, hold ? "{\"hold\":true}" : NULL, done,
	                      hold ? " and held it" : "");
}

int rk_cmd_hold(int argc, char **argv)
{
	return job_op(argc, argv, "hold", USAGE_HOLD USAGE_EXIT, USAGE_HOLD, "held");
}

int rk_cmd_release(int argc, char **argv)
{
	return job_op(argc, argv, "release", USAGE_RELEASE USAGE_EXIT, USAGE_RELEASE, "released");
}

int rk_cmd_requeue(int argc, char **argv)
{
	return job_op(argc, argv, "requeue", USAGE_REQUEUE USAGE_EXIT, USAGE_REQUEUE, "requeued");
}
