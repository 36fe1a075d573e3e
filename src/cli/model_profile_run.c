/*
 * One profiling run of a job: the files and environment rubickd's local
 * engine gives a run (src/daemon/engine/local/engine_local.c: RUBICK_PLAN_FILE,
 * RUBICK_PLAN, RUBICK_GLOBAL_BATCH, RUBICK_ITERS, RUBICK_RUN, RUBICK_CKPT_DIR,
 * RUBICK_GPUS, RUBICK_CPUS), plus RUBICK_TIMES_FILE, where the job library
 * logs each step's phases. No daemon: nothing to report to, so RUBICK_URL and
 * RUBICK_JOB_ID are unset and the job's reports are skipped.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli/model_profile.h"
#include "cli/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	int bad = fputs(text, f) < 0;
	bad |= fclose(f) != 0;
	return bad ? -1 : 0;
}

/* In the child: the run's environment, output to its log, then the shell. Never returns. */
static void exec_child(const struct rk_prof_job *job, const struct rk_prof_run *r, const char *planp,
		       const char *ckpt, const char *times)
{
	char num[4][32];
	snprintf(num[0], sizeof(num[0]), "%d", job->global_batch);
	snprintf(num[1], sizeof(num[1]), "%d", job->iters);
	snprintf(num[2], sizeof(num[2]), "%d", r->procs);
	snprintf(num[3], sizeof(num[3]), "%d", r->cpus);
	const char *kv[][2] = {
		{"RUBICK_PLAN_FILE", planp}, {"RUBICK_PLAN", r->plan_text},
		{"RUBICK_GLOBAL_BATCH", num[0]}, {"RUBICK_ITERS", num[1]},
		{"RUBICK_RUN", "1"}, {"RUBICK_CKPT_DIR", ckpt},
		{"RUBICK_GPUS", num[2]}, {"RUBICK_CPUS", num[3]},
		{"RUBICK_TIMES_FILE", times},
	};
	setpgid(0, 0); /* a timeout kills the job's whole process tree */
	unsetenv("RUBICK_URL");
	unsetenv("RUBICK_JOB_ID");
	unsetenv("RUBICK_FENCE_FILE");
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		setenv(kv[i][0], kv[i][1], 1);
	int fd = open(r->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
	int nul = open("/dev/null", O_RDONLY);
	if (nul >= 0) {
		dup2(nul, 0);
		close(nul);
	}
	execl("/bin/sh", "sh", "-c", job->cmd, (char *)NULL);
	_exit(127);
}

/* Wait for `pid` up to timeout_s; kill its process group past it. OUT: *status. */
static int wait_run(pid_t pid, int timeout_s, int *status)
{
	struct timespec t0, now, nap = {0, 20 * 1000 * 1000};
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);
		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return -1;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - t0.tv_sec >= timeout_s) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			return 1;
		}
		nanosleep(&nap, NULL);
	}
}

/* A phase field: a number >= 0 or "-" (-1). */
static int phase(const char *s, double *out)
{
	if (!strcmp(s, "-")) {
		*out = -1;
		return 0;
	}
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !isfinite(v) || v < 0)
		return -1;
	*out = v;
	return 0;
}

/* The times file: "step fwd_ms sync_ms opt_ms iter_ms" per line (trainer.py _log_times). */
static int read_times(const char *path, struct rk_prof_run *r, char *why, size_t cap)
{
	FILE *f = fopen(path, "r");
	r->n = 0;
	if (!f)
		return 0;
	char line[256];
	int ln = 0;
	while (fgets(line, sizeof(line), f) && r->n < RK_PROF_ITERS_MAX) {
		ln++;
		char a[5][64];
		if (sscanf(line, "%63s %63s %63s %63s %63s", a[0], a[1], a[2], a[3], a[4]) != 5) {
			snprintf(why, cap, "%s:%d: expected 'step fwd_ms sync_ms opt_ms iter_ms'",
				 path, ln);
			fclose(f);
			return -1;
		}
		int i = r->n;
		if (phase(a[1], &r->fwd[i]) || phase(a[2], &r->sync[i]) || phase(a[3], &r->opt[i]) ||
		    phase(a[4], &r->iter[i]) || r->iter[i] <= 0) {
			snprintf(why, cap, "%s:%d: a time is neither a number >= 0 nor '-'", path,
				 ln);
			fclose(f);
			return -1;
		}
		r->n++;
	}
	fclose(f);
	return 0;
}

int rk_prof_run_exec(const struct rk_prof_job *job, struct rk_prof_run *r, char *why, size_t cap)
{
	char planp[600], ckpt[600], times[600], failed[600], body[RK_PLAN_TEXT_MAX + 2];
	snprintf(r->log, sizeof(r->log), "%s/log", r->dir);
	snprintf(planp, sizeof(planp), "%s/plan", r->dir);
	snprintf(ckpt, sizeof(ckpt), "%s/ckpt", r->dir);
	snprintf(times, sizeof(times), "%s/times", r->dir);
	int e = rk_cli_mkdirs(ckpt, failed, sizeof(failed));
	if (e) {
		snprintf(why, cap, "%s: %s", failed, strerror(e));
		return -1;
	}
	unlink(times); /* a run appends: an older run's steps must not count */
	/* a checkpoint an earlier profile left in this folder must not be resumed from:
	 * every run starts at step 0 (ckpt.py's `latest` and its older plain ckpt.pt) */
	char stale[640];
	snprintf(stale, sizeof(stale), "%s/latest", ckpt);
	unlink(stale);
	snprintf(stale, sizeof(stale), "%s/ckpt.pt", ckpt);
	unlink(stale);
	snprintf(body, sizeof(body), "%s\n", r->plan_text);
	if (write_text(planp, body)) {
		snprintf(why, cap, "%s: %s", planp, strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, cap, "%s: fork: %s", r->plan_text, strerror(errno));
		return -1;
	}
	if (pid == 0)
		exec_child(job, r, planp, ckpt, times);
	int status = 0, w = wait_run(pid, job->timeout_s, &status);
	if (w) {
		snprintf(why, cap, "configuration %s (%d cpus): %s; log %s", r->plan_text, r->cpus,
			 w > 0 ? "still running after --timeout, killed" : "lost its process",
			 r->log);
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		char st[64];
		if (WIFEXITED(status))
			snprintf(st, sizeof(st), "exit status %d", WEXITSTATUS(status));
		else
			snprintf(st, sizeof(st), "killed by signal %d", WTERMSIG(status));
		snprintf(why, cap, "configuration %s (%d cpus): the job failed (%s); log %s",
			 r->plan_text, r->cpus, st, r->log);
		return -1;
	}
	char bad[700];
	if (read_times(times, r, bad, sizeof(bad))) {
		snprintf(why, cap, "configuration %s (%d cpus): %s; log %s", r->plan_text, r->cpus,
			 bad, r->log);
		return -1;
	}
	if (r->n < job->iters) {
		snprintf(why, cap,
			 "configuration %s (%d cpus): the job reported %d of %d iterations to "
			 "RUBICK_TIMES_FILE (a script that does not use python/rubick_job's "
			 "Job.steps/step reports nothing); log %s",
			 r->plan_text, r->cpus, r->n, job->iters, r->log);
		return -1;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double rk_prof_median(const double *v, int from, int n)
{
	if (from < 0 || n - from < 1 || n - from > RK_PROF_ITERS_MAX)
		return NAN;
	double s[RK_PROF_ITERS_MAX];
	int k = 0;
	for (int i = from; i < n; i++) {
		if (v[i] < 0)
			return NAN;
		s[k++] = v[i];
	}
	qsort(s, (size_t)k, sizeof(s[0]), cmp_double);
	return k % 2 ? s[k / 2] : 0.5 * (s[k / 2 - 1] + s[k / 2]);
}
