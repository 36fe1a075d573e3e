/*
 * `rubickd --supervise RUNDIR LOGFILE UID GID USER WORKDIR CMD...`: the
 * per-run supervisor of the local engine (see engine_local.c for the record
 * files). It stays rubickd's user (the records are rubickd's) and the job's
 * process drops to UID, GID and USER's groups before it runs. It holds the run's
 * lock on fd 3 for its whole life, starts the job in its own process group,
 * records the job's pid before letting it run (a start gate on a pipe), waits
 * for it and records how it ended. It ignores the stop signals: those go to
 * the job's process group, and the supervisor must outlive the job to write
 * the exit record.
 */
#define _GNU_SOURCE /* getresuid */
#include "daemon/engine/engine.h"
#include "daemon/engine/local/contain.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned long long start_time(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	int field = 2;
	for (p++; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	return strtoull(p, NULL, 10);
}

/*
 * Write RUNDIR/name atomically through the run folder's descriptor: never
 * through a link planted in its place (the folder is rubickd's, but an
 * unprivileged rubickd runs its jobs as its own user, who could plant one).
 */
static int record(int dirfd, const char *name, const char *text)
{
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	size_t len = strlen(text);
	int ok = write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
	ok = (close(fd) == 0) && ok;
	if (!ok || renameat(dirfd, tmp, dirfd, name))
		return -1;
	return 0;
}

/*
 * The run folder, opened once and checked: a folder (not a link to one),
 * rubickd's own, that no one else may write. -1 with a message otherwise.
 */
static int open_run_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "rubickd supervisor: %s: %s\n", dir, strerror(errno));
	} else if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		fprintf(stderr, "rubickd supervisor: %s: not rubickd's own folder (owner %u, mode"
				" %04o); run refused\n",
			dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	} else
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/*
 * The job's log, appended: a regular file, never a link or a FIFO planted
 * in its place. -1 with a message otherwise.
 */
static int open_log(const char *logp)
{
	int fd = open(logp, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		      0600);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "rubickd supervisor: %s: %s\n", logp, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "rubickd supervisor: %s: not a regular file; run refused\n", logp);
	} else if (fcntl(fd, F_SETFL, O_APPEND) == 0) /* the job's stdout blocks as files do */
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/*
 * In the job's process, before exec: become uid:gid with user's supplementary
 * groups, in that order (groups and gid need the privileges setuid gives up),
 * and check that none of the old privileges is left. Nothing to drop when the
 * job runs as rubickd's own identity. 0, or -1 with a message on fd 2.
 */
static int become(uid_t uid, gid_t gid, const char *user)
{
	if (uid == geteuid() && uid == getuid() && gid == getegid() && gid == getgid())
		return 0;
	if ((uid == 0 ? setgroups(0, NULL) : initgroups(user, gid)) || setgid(gid) || setuid(uid)) {
		dprintf(2, "rubickd supervisor: cannot become user %s (uid %u gid %u): %s\n", user,
			(unsigned)uid, (unsigned)gid, strerror(errno));
		return -1;
	}
	gid_t rg, eg, sg;
	uid_t ru, eu, su;
	if (getresgid(&rg, &eg, &sg) || getresuid(&ru, &eu, &su) || rg != gid || eg != gid ||
	    sg != gid || ru != uid || eu != uid || su != uid || (uid != 0 && setuid(0) == 0)) {
		dprintf(2, "rubickd supervisor: user %s: privileges left after dropping them\n", user);
		return -1;
	}
	return 0;
}

static void env_free(char **env)
{
	for (char **e = env; e && *e; e++)
		free(*e);
	free(env);
}

/*
 * The job's environment from RUNDIR/env (netstrings, engine_local.c), never
 * the supervisor's own. NULL when absent or malformed; the caller frees.
 */
static char **read_env(int dirfd)
{
	int fd = openat(dirfd, "env", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (1 << 26)) {
		len = (size_t)st.st_size;
		buf = malloc(len + 1);
		if (buf && read(fd, buf, len) != (ssize_t)len) {
			free(buf);
			buf = NULL;
		} else if (buf)
			buf[len] = '\0'; /* strtoul stops there */
	}
	close(fd);
	/* at most one entry per 3 bytes ("0:," is the shortest) */
	char **env = buf ? calloc(len / 3 + 1, sizeof(*env)) : NULL;
	size_t n = 0, i = 0;
	while (env && i < len) {
		char *end;
		unsigned long el = strtoul(buf + i, &end, 10);
		size_t at = (size_t)(end - buf);
		if (end == buf + i || *end != ':' || el > len || at + 2 + el > len ||
		    buf[at + 1 + el] != ',' || !(env[n] = malloc(el + 1)))
			break;
		memcpy(env[n], buf + at + 1, el);
		env[n++][el] = '\0';
		i = at + 2 + el;
	}
	if (env && i != len) { /* malformed: nothing rather than part */
		env_free(env);
		env = NULL;
	}
	free(buf);
	return env;
}

static int parse_id(const char *s, unsigned *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || errno || v > 0xfffffffeUL)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int rkd_supervise_main(int argc, char **argv)
{
	unsigned uid, gid;
	if (argc < 9 || parse_id(argv[4], &uid) || parse_id(argv[5], &gid)) {
		fprintf(stderr, "usage: rubickd --supervise RUNDIR LOGFILE UID GID USER WORKDIR CMD"
				" [ARGS...]\n");
		return 2;
	}
	const char *dir = argv[2], *logp = argv[3], *user = argv[6], *work = argv[7];
	/* rubickd blocks its shutdown signals; neither we nor the job inherit that. */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	fcntl(3, F_SETFD, FD_CLOEXEC); /* the lock stays with us, not the job */
	signal(SIGUSR1, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	int dirfd = open_run_dir(dir);
	if (dirfd < 0)
		return 1; /* no record: the engine counts the run as lost */
	int logfd = open_log(logp);
	if (logfd < 0) {
		record(dirfd, "exit", "exit 127\n");
		return 1;
	}
	int gate[2];
	if (pipe(gate) || fcntl(gate[0], F_SETFD, FD_CLOEXEC) || fcntl(gate[1], F_SETFD, FD_CLOEXEC)) {
		record(dirfd, "exit", "exit 127\n");
		return 1;
	}
	struct rkd_contain box;
	rkd_contain_init(&box, !getenv(RKD_CONTAIN_NO_CGROUP_ENV));
	char **envp = read_env(dirfd); /* the child's: the parent frees it once forked */
	pid_t pid = fork();
	if (pid != 0)
		env_free(envp);
	if (pid < 0) {
		record(dirfd, "exit", "exit 127\n");
		return 1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGUSR1, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		close(gate[1]);
		char go;
		/* EOF instead of the go byte: the supervisor died before recording us. */
		if (read(gate[0], &go, 1) != 1)
			_exit(127);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		dup2(logfd, 1);
		dup2(logfd, 2);
		if (become((uid_t)uid, (gid_t)gid, user))
			_exit(126);
		if (chdir(work)) {
			dprintf(2, "rubickd supervisor: %s: cannot enter it as user %s: %s (every folder"
				   " above the state folder must be searchable by the job's user)\n",
				work, user, strerror(errno));
			_exit(126);
		}
		umask(022); /* rubickd's own is 077 */
		if (!envp) {
			dprintf(2, "rubickd supervisor: %s/env: missing or malformed\n", dir);
			_exit(126);
		}
		execve(argv[8], argv + 8, envp);
		dprintf(2, "rubickd supervisor: %s: %s\n", argv[8], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	close(gate[0]);
	/* Into the run's cgroup before it runs anything, so that all it starts is in there too. */
	char line[1400];
	rkd_contain_add(&box, pid);
	snprintf(line, sizeof(line), "%s\n%s%s\n", box.cgroup, box.cgroup[0] ? "" : "# none: ",
		 box.cgroup[0] ? "" : box.why);
	if (record(dirfd, "cgroup", line)) {
		kill(pid, SIGKILL);
		rkd_contain_end(&box, -1);
		record(dirfd, "exit", "exit 127\n");
		return 1;
	}
	snprintf(line, sizeof(line), "%d %llu\n", (int)pid, start_time(pid));
	if (record(dirfd, "pid", line)) {
		kill(pid, SIGKILL);
		rkd_contain_end(&box, -1);
		record(dirfd, "exit", "exit 127\n");
		return 1;
	}
	if (write(gate[1], "g", 1) != 1) {
		kill(pid, SIGKILL);
	}
	close(gate[1]);
	/* As subreaper we also reap what the job orphans; the run's status is its main process's. */
	int status;
	for (;;) {
		pid_t w = waitpid(-1, &status, 0);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			kill(-pid, SIGKILL);
			rkd_contain_end(&box, logfd);
			record(dirfd, "exit", "exit 127\n");
			return 1;
		}
	}
	if (WIFEXITED(status))
		snprintf(line, sizeof(line), "exit %d\n", WEXITSTATUS(status));
	else
		snprintf(line, sizeof(line), "signal %d\n", WTERMSIG(status));
	/*
	 * Everything the job left behind ends with it, in its process group or
	 * not (setsid), before the exit record: the engine frees the run's GPUs
	 * when it sees this supervisor end, so nothing of the job may be left.
	 */
	kill(-pid, SIGKILL);
	rkd_contain_end(&box, logfd);
	record(dirfd, "exit", line);
	return 0;
}
