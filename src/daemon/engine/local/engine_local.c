/*
 * The local engine: runs each job as real processes on this machine.
 *
 * Every run has a folder STATE/job-ID/run-N holding:
 *   lock  flock()ed by the run's supervisor for as long as it lives
 *   pid   "PID STARTTIME" of the job's process group leader
 *   exit  "exit CODE" or "signal NUM", written by the supervisor when the job ends
 *         and nothing it started is left (contain.h)
 *   cgroup the run's cgroup v2 folder, or an empty line and why it has none
 * and the job folder holds `plan` (RUBICK_PLAN_FILE, rewritten before each
 * launch), `log` (stdout and stderr of every run, appended) and `ckpt/`
 * (RUBICK_CKPT_DIR, the job's own checkpoint space).
 *
 * The supervisor is rubickd itself re-executed with --supervise: it sits
 * between the daemon and the job so that the job's exit status is recorded
 * even when the daemon is dead (a kill -9 of rubickd leaves jobs running and
 * reparented to init, where no one could wait() for them). After a restart
 * the daemon re-adopts runs by testing the lock: held means the supervisor
 * (hence the run) is alive; free means the exit file tells how it ended; no
 * pid file means the job never got past its start gate, so it is launched
 * again and nothing runs twice. The pid file's start time (field 22 of
 * /proc/PID/stat) guards every signal against pid reuse.
 */
/* posix_spawn_file_actions_addclosefrom_np (glibc >= 2.34) */
#define _GNU_SOURCE
#include "daemon/engine/engine.h"
#include "daemon/engine/files.h"
#include "daemon/engine/local/contain.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum phase { PH_RUNNING = 0, PH_USR1, PH_TERM, PH_KILL };

struct run {
	int64_t job_id;
	int run;
	pid_t sup_pid;       /* our child supervisor, 0 when adopted after a restart */
	int sup_exited;      /* waitpid saw the supervisor end */
	pid_t job_pid;       /* pgid of the job, 0 until read from the pid file */
	unsigned long long job_start; /* its start time, for the pid-reuse guard */
	enum phase phase;
	int stop_wanted;     /* 1 = stop requested but pid not known yet */
	int stop_checkpoint;
	int64_t deadline_ms; /* when to escalate to the next signal */
};

struct local {
	char *state_dir;
	char *self_exe;
	int grace_ms;
	int no_cgroup; /* the supervisors' environment says so (contain.h) */
	struct run *runs;
	int n, cap;
};

static int run_dir(const struct local *l, int64_t job, int run, char *buf, size_t cap)
{
	return rkd_path_fmt(buf, cap, "%s/job-%lld/run-%d", l->state_dir, (long long)job, run);
}

/* Field 22 of /proc/PID/stat: start time in clock ticks since boot; 0 if gone. */
static unsigned long long proc_start_time(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the command name may hold spaces and ')' */
	if (!p)
		return 0;
	/* after ") " come fields 3.. ; start time is field 22 */
	int field = 2;
	for (p++; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	return strtoull(p, NULL, 10);
}

/* Parse the supervisor's exit record into the rkd_exit status encoding. */
static int read_exit(const char *dir, int *status)
{
	char path[4200], buf[64];
	if (rkd_path_fmt(path, sizeof(path), "%s/exit", dir) || rkd_read_small(path, buf, sizeof(buf)))
		return -1;
	int v;
	if (sscanf(buf, "exit %d", &v) == 1)
		*status = v;
	else if (sscanf(buf, "signal %d", &v) == 1)
		*status = -v;
	else
		return -1;
	return 0;
}

/* Read the job pid file of a run; 0 when the job is known. */
static int read_pid(const char *dir, pid_t *pid, unsigned long long *start)
{
	char path[4200], buf[128];
	long long p;
	if (rkd_path_fmt(path, sizeof(path), "%s/pid", dir) || rkd_read_small(path, buf, sizeof(buf)))
		return -1;
	if (sscanf(buf, "%lld %llu", &p, start) != 2 || p <= 1)
		return -1;
	*pid = (pid_t)p;
	return 0;
}

static struct run *run_find(struct local *l, int64_t job, int run)
{
	for (int i = 0; i < l->n; i++)
		if (l->runs[i].job_id == job && l->runs[i].run == run)
			return &l->runs[i];
	return NULL;
}

static struct run *run_add(struct local *l)
{
	if (l->n == l->cap) {
		int ncap = l->cap ? 2 * l->cap : 16;
		struct run *v = realloc(l->runs, (size_t)ncap * sizeof(*v));
		if (!v)
			return NULL;
		l->runs = v;
		l->cap = ncap;
	}
	struct run *r = &l->runs[l->n++];
	memset(r, 0, sizeof(*r));
	return r;
}

static int local_create(void **state, const struct rkd_engine_config *cfg, struct rk_error *err)
{
	/* 0711 as root: jobs of other users reach their own folders, list none (engine.h). */
	if (rkd_mkdir_p(cfg->state_dir) ||
	    rkd_dir_ensure(cfg->state_dir, geteuid() == 0 ? 0711 : 0700, (uid_t)-1, (gid_t)-1))
		return rk_error_set(err, RK_EIO, "%s: cannot create state folder: %s", cfg->state_dir,
				    strerror(errno));
	if (access(cfg->self_exe, X_OK))
		return rk_error_set(err, RK_EIO, "%s: supervisor not executable: %s", cfg->self_exe,
				    strerror(errno));
	struct local *l = calloc(1, sizeof(*l));
	if (!l)
		return rk_error_set(err, RK_ENOMEM, "local engine: out of memory");
	/* Absolute: jobs run in their work/ folder and get these paths (RUBICK_CKPT_DIR). */
	l->state_dir = realpath(cfg->state_dir, NULL);
	l->self_exe = strdup(cfg->self_exe);
	l->grace_ms = cfg->grace_ms;
	l->no_cgroup = cfg->no_cgroup;
	if (!l->state_dir || !l->self_exe) {
		free(l->state_dir);
		free(l->self_exe);
		free(l);
		return rk_error_set(err, RK_ENOMEM, "local engine: out of memory");
	}
	*state = l;
	return 0;
}

static void local_destroy(void *state)
{
	struct local *l = state;
	if (!l)
		return;
	/* Runs keep going: a restarted daemon adopts them. */
	free(l->runs);
	free(l->state_dir);
	free(l->self_exe);
	free(l);
}

/* Build "KEY=value" in a fresh string; NULL on failure. */
static char *env_pair(const char *key, const char *value)
{
	size_t n = strlen(key) + strlen(value) + 2;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s=%s", key, value);
	return s;
}

/*
 * The job's folder: rubickd's, 0711 when the job runs as another user (it may
 * reach its files, not list or write the run records); ckpt/ and work/ and the
 * plan and log files the job user's own (engine.h).
 */
static int job_dirs(const char *job_dir, const char *ckpt, const char *work, const char *logp,
		    uid_t uid, gid_t gid)
{
	return rkd_dir_ensure(job_dir, uid == (uid_t)-1 ? 0700 : 0711, (uid_t)-1, (gid_t)-1) ||
		       rkd_dir_ensure(ckpt, 0700, uid, gid) || rkd_dir_ensure(work, 0700, uid, gid) ||
		       rkd_file_ensure(logp, 0600, uid, gid)
		       ? -1
		       : 0;
}

/* RUNDIR/env: the job's environment as netstrings ("LEN:K=V,"), read by supervise.c. */
static int write_env(int run_fd, char *const *envp, size_t n)
{
	size_t cap = 1;
	for (size_t i = 0; i < n; i++)
		cap += strlen(envp[i]) + 24;
	char *buf = malloc(cap);
	if (!buf) {
		errno = ENOMEM;
		return -1;
	}
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%zu:%s,", strlen(envp[i]), envp[i]);
	int ret = rkd_write_atomic_at(run_fd, "env", buf);
	free(buf);
	return ret;
}

static int local_launch(void *state, const struct rkd_launch *ln, struct rk_error *err)
{
	struct local *l = state;
	char dir[4096], job_dir[4096], rel[64], path[4200], ckpt[4200], logp[4200], planp[4200],
		work[4200];
	int lockfd = -1, run_fd = -1, ret = 0;
	char **envp = NULL, *script = NULL;
	size_t n_env = 0;
	if (run_find(l, ln->job_id, ln->run))
		return rk_error_set(err, RK_EEXIST, "job %lld run %d is already running",
				    (long long)ln->job_id, ln->run);
	if (rkd_path_fmt(job_dir, sizeof(job_dir), "%s/job-%lld", l->state_dir, (long long)ln->job_id) ||
	    run_dir(l, ln->job_id, ln->run, dir, sizeof(dir)) ||
	    rkd_path_fmt(ckpt, sizeof(ckpt), "%s/ckpt", job_dir) ||
	    rkd_path_fmt(logp, sizeof(logp), "%s/log", job_dir) ||
	    rkd_path_fmt(planp, sizeof(planp), "%s/plan", job_dir) ||
	    rkd_path_fmt(work, sizeof(work), "%s/work", job_dir) ||
	    rkd_path_fmt(rel, sizeof(rel), "job-%lld/run-%d", (long long)ln->job_id, ln->run))
		return rk_error_set(err, RK_ERANGE, "job %lld: state path too long",
				    (long long)ln->job_id);
	const struct rkd_ident *id = ln->ident;
	/* chown only to another identity: an unprivileged rubickd never calls it */
	int other = id && (id->uid != geteuid() || id->gid != getegid());
	uid_t ou = other ? id->uid : (uid_t)-1;
	gid_t og = other ? id->gid : (gid_t)-1;
	/* The run's files are made from its folder's descriptor, never through a link (files.h). */
	run_fd = rkd_dir_below(l->state_dir, rel, 0700);
	if (run_fd < 0)
		return rk_error_set(err, RK_EIO, "%s: %s", dir,
				    errno == EPERM ? "a folder on the way is not rubickd's own or "
						     "others can write it; not used"
						   : strerror(errno));
	if (job_dirs(job_dir, ckpt, work, logp, ou, og)) {
		ret = rk_error_set(err, RK_EIO, "%s: %s", job_dir, strerror(errno));
		goto out;
	}
	char plan_line[256];
	snprintf(plan_line, sizeof(plan_line), "%s\n", ln->plan_text);
	if (rkd_write_atomic_owned(planp, plan_line, ou, og)) {
		ret = rk_error_set(err, RK_EIO, "%s: cannot write plan file: %s", planp,
				   strerror(errno));
		goto out;
	}
	/* Not O_CLOEXEC: the supervisor inherits this open file description. */
	rkd_path_fmt(path, sizeof(path), "%s/lock", dir);
	lockfd = openat(run_fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0600);
	struct stat lst;
	if (lockfd >= 0 && (fstat(lockfd, &lst) || !S_ISREG(lst.st_mode))) {
		close(lockfd);
		lockfd = -1;
		errno = EINVAL;
	}
	if (lockfd < 0) {
		ret = rk_error_set(err, RK_EIO, "%s: %s", path,
				   errno == EINVAL ? "not a regular file" : strerror(errno));
		goto out;
	}
	if (flock(lockfd, LOCK_EX | LOCK_NB)) {
		ret = rk_error_set(err, RK_EEXIST, "job %lld run %d: a supervisor holds %s",
				   (long long)ln->job_id, ln->run, path);
		goto out;
	}
	/* The GPU ids go with the run so a restarted daemon can re-adopt it. */
	if (rkd_write_atomic_at(run_fd, "gpus", ln->gpu_ids ? ln->gpu_ids : "")) {
		ret = rk_error_set(err, RK_EIO, "%s/gpus: %s", dir, strerror(errno));
		goto out;
	}
	/* A stale record of a run that never started must not be mistaken for this one. */
	unlinkat(run_fd, "pid", 0);
	unlinkat(run_fd, "exit", 0);

	/* A clean environment (identity.h), never rubickd's own variables. */
	size_t cap_env = (size_t)ln->n_env + 32;
	envp = calloc(cap_env, sizeof(*envp));
	int n_base = envp ? rkd_ident_env(id, 0, ln->env, ln->n_env, envp, (int)cap_env - 16)
			  : RK_ENOMEM;
	if (n_base < 0) {
		ret = rk_error_set(err, RK_ENOMEM, "launch: out of memory");
		goto out;
	}
	n_env = (size_t)n_base;
	char num[4][32];
	snprintf(num[0], sizeof(num[0]), "%lld", (long long)ln->job_id);
	snprintf(num[1], sizeof(num[1]), "%d", ln->global_batch);
	snprintf(num[2], sizeof(num[2]), "%.0f", ln->iters_total);
	snprintf(num[3], sizeof(num[3]), "%d", ln->run);
	char gc[2][32];
	snprintf(gc[0], sizeof(gc[0]), "%d", ln->gpus);
	snprintf(gc[1], sizeof(gc[1]), "%d", ln->cpus);
	const char *kv[][2] = {
		{"CUDA_VISIBLE_DEVICES", ln->gpu_ids}, {"RUBICK_PLAN", ln->plan_text},
		{"RUBICK_PLAN_FILE", planp},           {"RUBICK_JOB_ID", num[0]},
		{"RUBICK_URL", ln->url},               {"RUBICK_GLOBAL_BATCH", num[1]},
		{"RUBICK_ITERS", num[2]},              {"RUBICK_RUN", num[3]},
		{"RUBICK_ALLOC", ln->alloc_text},      {"RUBICK_CKPT_DIR", ckpt},
		{"RUBICK_GPUS", gc[0]},                {"RUBICK_CPUS", gc[1]},
		{"RUBICK_JOB_TOKEN", ln->job_token},
	};
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		envp[n_env++] = env_pair(kv[i][0], kv[i][1] ? kv[i][1] : "");
	for (size_t i = 0; i < n_env; i++)
		if (!envp[i]) {
			ret = rk_error_set(err, RK_ENOMEM, "launch: out of memory");
			goto out;
		}
	/*
	 * The job's environment goes to the supervisor in RUNDIR/env, not in its
	 * own: the supervisor runs as rubickd's user (root), and a submission's
	 * LD_PRELOAD or GCONV_PATH must reach only the job, after the drop.
	 */
	if (write_env(run_fd, envp, n_env)) {
		ret = rk_error_set(err, RK_EIO, "%s/env: %s", dir, strerror(errno));
		goto out;
	}
	/*
	 * The wrapping shell (the group leader) forwards SIGUSR1 and SIGTERM to
	 * the job's main process only: signalling the whole group would kill
	 * helpers that do not expect them (data-loader workers, `sleep`). It
	 * waits for the job and exits with its status; a wait cut short by a
	 * forwarded signal is resumed, and a job that ended just then is asked
	 * for its status once more. SIGKILL still goes to the whole group.
	 */
	static const char pre[] = "trap 'kill -USR1 $c 2>/dev/null' USR1\n"
				  "trap 'kill -TERM $c 2>/dev/null' TERM\n";
	static const char post[] = " &\nc=$!\n"
				   "while :; do\n"
				   "  wait $c; s=$?\n"
				   "  [ $s -gt 128 ] && kill -0 $c 2>/dev/null && continue\n"
				   "  [ $s -gt 128 ] && { wait $c; t=$?; [ $t -ne 127 ] && s=$t; }\n"
				   "  exit $s\n"
				   "done\n";
	size_t cmd_len = strlen(ln->command);
	script = malloc(sizeof(pre) + cmd_len + sizeof(post) + 4);
	if (!script) {
		ret = rk_error_set(err, RK_ENOMEM, "launch: out of memory");
		goto out;
	}
	/* { CMD\n} keeps a command with several statements one background job */
	snprintf(script, sizeof(pre) + cmd_len + sizeof(post) + 4, "%s{ %s\n}%s", pre, ln->command,
		 post);
	/* The supervisor stays rubickd's user; it drops to the job's before exec (supervise.c). */
	char uid_s[24], gid_s[24];
	snprintf(uid_s, sizeof(uid_s), "%u", (unsigned)(id ? id->uid : geteuid()));
	snprintf(gid_s, sizeof(gid_s), "%u", (unsigned)(id ? id->gid : getegid()));
	char *argv[] = {l->self_exe, "--supervise", dir,		      logp, uid_s, gid_s,
			id ? (char *)id->user : "",   work, "/bin/sh", "-c",  script, NULL};

	struct run *r = run_add(l);
	if (!r) {
		ret = rk_error_set(err, RK_ENOMEM, "launch: out of memory");
		goto out;
	}
	/*
	 * posix_spawn (vfork-style in glibc) rather than fork: it does not copy
	 * the daemon's page tables, whose cost grows with the number of jobs
	 * held in memory. The supervisor gets the lock as fd 3 and nothing else.
	 */
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none;
	sigemptyset(&none);
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
	if (lockfd != 3)
		posix_spawn_file_actions_adddup2(&fa, lockfd, 3);
	posix_spawn_file_actions_addclosefrom_np(&fa, 4);
	pid_t pid;
	char *sup_env[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			   l->no_cgroup ? RKD_CONTAIN_NO_CGROUP_ENV "=1" : NULL, NULL};
	int rc = posix_spawn(&pid, argv[0], &fa, &attr, argv, sup_env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc) {
		l->n--;
		ret = rk_error_set(err, RK_EIO, "job %lld: spawning the supervisor: %s",
				   (long long)ln->job_id, strerror(rc));
		goto out;
	}
	r->job_id = ln->job_id;
	r->run = ln->run;
	r->sup_pid = pid;
out:
	if (lockfd >= 0)
		close(lockfd);
	if (run_fd >= 0)
		close(run_fd);
	free(script);
	if (envp) {
		for (size_t i = 0; i < n_env; i++)
			free(envp[i]);
		free(envp);
	}
	return ret;
}

/* Learn the job's pgid from the pid file once the supervisor wrote it. */
static int run_know_pid(struct local *l, struct run *r)
{
	if (r->job_pid > 0)
		return 0;
	char dir[4096];
	if (run_dir(l, r->job_id, r->run, dir, sizeof(dir)))
		return -1;
	return read_pid(dir, &r->job_pid, &r->job_start);
}

/*
 * Signal the job: SIGUSR1 and SIGTERM to the wrapping shell, which forwards
 * them to the job's main process; SIGKILL to the whole process group. Never
 * when the leader is gone or its pid now names another process.
 */
static void run_signal(struct run *r, int sig)
{
	if (r->job_pid <= 0 || proc_start_time(r->job_pid) != r->job_start)
		return;
	kill(sig == SIGKILL ? -r->job_pid : r->job_pid, sig);
}

static void run_escalate(struct local *l, struct run *r, int64_t now_ms)
{
	if (r->stop_wanted && run_know_pid(l, r) == 0) {
		r->stop_wanted = 0;
		r->phase = r->stop_checkpoint ? PH_USR1 : PH_TERM;
		run_signal(r, r->stop_checkpoint ? SIGUSR1 : SIGTERM);
		r->deadline_ms = now_ms + l->grace_ms;
		return;
	}
	if (r->phase == PH_RUNNING || r->phase == PH_KILL || now_ms < r->deadline_ms)
		return;
	r->phase = r->phase == PH_USR1 ? PH_TERM : PH_KILL;
	run_signal(r, r->phase == PH_TERM ? SIGTERM : SIGKILL);
	r->deadline_ms = now_ms + l->grace_ms;
}

static int local_stop(void *state, int64_t job_id, int run, int checkpoint, int64_t now_ms)
{
	struct local *l = state;
	struct run *r = run_find(l, job_id, run);
	if (!r)
		return RK_ENOTFOUND;
	if (r->phase != PH_RUNNING && (checkpoint || r->phase != PH_USR1))
		return 0; /* already on its way out; a cancel hurries a checkpoint along */
	if (run_know_pid(l, r)) {
		r->stop_wanted = 1;
		r->stop_checkpoint = checkpoint;
		return 0;
	}
	r->phase = checkpoint ? PH_USR1 : PH_TERM;
	run_signal(r, checkpoint ? SIGUSR1 : SIGTERM);
	r->deadline_ms = now_ms + l->grace_ms;
	return 0;
}

/* Whether an adopted run's supervisor is gone (its lock is free). */
static int lock_free(const char *dir)
{
	char path[4200];
	if (rkd_path_fmt(path, sizeof(path), "%s/lock", dir))
		return 0;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return 1;
	int free_ = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return free_;
}

/* How a run whose supervisor is gone ended; kills a job orphaned by a dead supervisor. */
static int run_outcome(const char *dir)
{
	int status;
	if (read_exit(dir, &status) == 0)
		return status;
	pid_t pid;
	unsigned long long start;
	if (read_pid(dir, &pid, &start) == 0 && proc_start_time(pid) == start)
		kill(-pid, SIGKILL);
	/* and what it had started outside the group, in the run's cgroup (contain.h) */
	char path[4200], cgroup[1400];
	if (rkd_path_fmt(path, sizeof(path), "%s/cgroup", dir) == 0 &&
	    rkd_read_small(path, cgroup, sizeof(cgroup)) == 0)
		rkd_contain_kill_recorded(cgroup);
	return RKD_EXIT_LOST;
}

static int local_poll(void *state, int64_t now_ms, struct rkd_exit *out, int max)
{
	struct local *l = state;
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		for (int i = 0; i < l->n; i++)
			if (l->runs[i].sup_pid == pid)
				l->runs[i].sup_exited = 1;
	int n_out = 0;
	for (int i = 0; i < l->n && n_out < max;) {
		struct run *r = &l->runs[i];
		char dir[4096];
		run_dir(l, r->job_id, r->run, dir, sizeof(dir));
		int ended = r->sup_pid ? r->sup_exited : lock_free(dir);
		if (!ended) {
			run_escalate(l, r, now_ms);
			i++;
			continue;
		}
		out[n_out].job_id = r->job_id;
		out[n_out].run = r->run;
		out[n_out].status = run_outcome(dir);
		out[n_out].reason[0] = '\0';
		n_out++;
		l->runs[i] = l->runs[--l->n]; /* order of runs carries no meaning */
	}
	return n_out;
}

static int local_adopt(void *state, int64_t job_id, int run, struct rkd_exit *ex,
		       struct rk_error *err)
{
	struct local *l = state;
	char dir[4096], path[4200];
	if (run_dir(l, job_id, run, dir, sizeof(dir)))
		return rk_error_set(err, RK_ERANGE, "job %lld: state path too long", (long long)job_id);
	ex->job_id = job_id;
	ex->run = run;
	ex->gpu_ids[0] = '\0';
	ex->reason[0] = '\0';
	struct stat st;
	rkd_path_fmt(path, sizeof(path), "%s/gpus", dir);
	rkd_read_small(path, ex->gpu_ids, sizeof(ex->gpu_ids));
	rkd_path_fmt(path, sizeof(path), "%s/lock", dir);
	if (stat(path, &st))
		return RKD_ADOPT_ABSENT;
	if (!lock_free(dir)) {
		struct run *r = run_find(l, job_id, run);
		if (!r) {
			r = run_add(l);
			if (!r)
				return rk_error_set(err, RK_ENOMEM, "adopt: out of memory");
			r->job_id = job_id;
			r->run = run;
		}
		run_know_pid(l, r);
		return RKD_ADOPT_ALIVE;
	}
	rkd_path_fmt(path, sizeof(path), "%s/pid", dir);
	if (stat(path, &st))
		return RKD_ADOPT_ABSENT; /* the job never passed its start gate */
	ex->status = run_outcome(dir);
	return RKD_ADOPT_EXITED;
}

static int local_running(void *state)
{
	return ((struct local *)state)->n;
}

const struct rkd_engine_ops rkd_engine_local = {
	.name = "local",
	.create = local_create,
	.destroy = local_destroy,
	.launch = local_launch,
	.stop = local_stop,
	.poll = local_poll,
	.adopt = local_adopt,
	.running = local_running,
};
