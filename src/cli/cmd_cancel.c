/* `rubick cancel JOB...`: cancel jobs (DELETE /v1/jobs/{id}). */
#include "cli/commands.h"
#include "cli/daemon_client.h"

static const char usage[] =
    "usage: rubick cancel JOB... [--url URL] [--token-file FILE] [--json]\n";
static const char help[] =
    "usage: rubick cancel JOB... [--url URL] [--token-file FILE] [--json]\n"
    "  exit 1 when rubickd refuses (the job already ended); a job that is not yours\n"
    "  reads as no such job (exit 4)\n" RK_EXIT_HELP;

int rk_cmd_cancel(int argc, char **argv)
{
	struct rk_dc dc = {.cmd = "cancel"};
	long long ids[RK_DC_MAX_JOBS];
	int n;
	int r = rk_dc_job_list(&dc, argc, argv, help, usage, NULL, NULL, ids, &n);
	if (r != RK_DC_OWN)
		return r;
	return rk_dc_job_each(&dc, ids, n, "DELETE", "", NULL, "cancelled", "");
}
