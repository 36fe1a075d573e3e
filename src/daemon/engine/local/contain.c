/* Containment of a local run: a child subreaper and a cgroup v2 per run (contain.h). */
#define _GNU_SOURCE /* PR_SET_CHILD_SUBREAPER */
#include "daemon/engine/local/contain.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char prefix[] = "rubick-run-";

/*
 * The cgroup v2 mount point and the root of the hierarchy it shows, from
 * /proc/self/mountinfo ("ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS] - TYPE ...").
 * 0, or -1 when there is none.
 */
static int cgroup2_mount(char *point, size_t cap, char *root, size_t rcap)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -1;
	char line[4096];
	int found = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char r[1024], p[1024];
		const char *dash = strstr(line, " - ");
		if (!dash || strncmp(dash + 3, "cgroup2 ", 8) ||
		    sscanf(line, "%*s %*s %*s %1023s %1023s", r, p) != 2)
			continue;
		found = snprintf(point, cap, "%s", p) < (int)cap &&
		        snprintf(root, rcap, "%s", r) < (int)rcap;
	}
	fclose(f);
	return found ? 0 : -1;
}

/* This process's cgroup v2 path ("0::PATH" in /proc/self/cgroup); 0 or -1. */
static int own_cgroup(char *buf, size_t cap)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return -1;
	char line[4096];
	int found = 0;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = '\0';
			found = snprintf(buf, cap, "%s", line + 3) < (int)cap;
		}
	fclose(f);
	return found ? 0 : -1;
}

/* The folder new cgroups go in: the mount point joined with our own cgroup below its root. */
static int cgroup_base(char *buf, size_t cap, char *why, size_t why_cap)
{
	char point[1024], root[1024], own[2048];
	if (cgroup2_mount(point, sizeof(point), root, sizeof(root))) {
		snprintf(why, why_cap, "no cgroup v2 hierarchy is mounted");
		return -1;
	}
	if (own_cgroup(own, sizeof(own))) {
		snprintf(why, why_cap, "/proc/self/cgroup names no cgroup v2 path");
		return -1;
	}
	const char *rel = own;
	size_t rl = strlen(root);
	if (strcmp(root, "/") && !strncmp(own, root, rl) && (own[rl] == '/' || !own[rl]))
		rel = own + rl;
	if (!strcmp(rel, "/"))
		rel = "";
	if (snprintf(buf, cap, "%s%s", point, rel) >= (int)cap) {
		snprintf(why, why_cap, "cgroup path too long");
		return -1;
	}
	return 0;
}

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[640];
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -1;
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	ssize_t len = (ssize_t)strlen(text), n = write(fd, text, (size_t)len);
	int e = errno;
	close(fd);
	errno = e;
	return n == len ? 0 : -1;
}

/* Whether the cgroup still holds a process (cgroup.events "populated 1"); 0 when gone. */
static int populated(const char *dir)
{
	char path[640], buf[512];
	snprintf(path, sizeof(path), "%s/cgroup.events", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	const char *p = strstr(buf, "populated ");
	return p && p[10] == '1';
}

/*
 * SIGKILL to every process of the cgroup: cgroup.kill where the kernel has
 * it (5.14), else the processes listed while the cgroup is frozen, so that
 * none forks a new one between the listing and the signal.
 */
static void kill_cgroup(const char *dir)
{
	if (write_file(dir, "cgroup.kill", "1") == 0)
		return;
	int frozen = write_file(dir, "cgroup.freeze", "1") == 0;
	char path[640];
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	FILE *f = fopen(path, "re");
	long pid;
	while (f && fscanf(f, "%ld", &pid) == 1)
		if (pid > 1)
			kill((pid_t)pid, SIGKILL);
	if (f)
		fclose(f);
	if (frozen)
		write_file(dir, "cgroup.freeze", "0");
}

/* Field 4 of /proc/PID/stat, the parent's pid; -1 when unreadable. */
static long parent_of(const char *pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* the command name may hold spaces and ')' */
	long ppid;
	return p && sscanf(p + 1, " %*c %ld", &ppid) == 1 ? ppid : -1;
}

/* SIGKILL to every child of this process (as subreaper, the orphans of the job's tree too). */
static void kill_children(void)
{
	DIR *d = opendir("/proc");
	if (!d)
		return;
	long self = (long)getpid();
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && parent_of(e->d_name) == self)
			kill((pid_t)atol(e->d_name), SIGKILL);
	closedir(d);
}

static void nap_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Remove the empty cgroups of supervisors that are gone (killed before they
 * could remove their own). One whose supervisor lives may be empty for a
 * moment, between its mkdir and the job's entry, so it is left alone.
 */
static void sweep(const char *base)
{
	DIR *d = opendir(base);
	if (!d)
		return;
	struct dirent *e;
	char path[1024];
	while ((e = readdir(d))) {
		const char *num = e->d_name + sizeof(prefix) - 1;
		if (strncmp(e->d_name, prefix, sizeof(prefix) - 1) || !*num ||
		    strspn(num, "0123456789") != strlen(num))
			continue;
		if ((kill((pid_t)atol(num), 0) == 0 || errno != ESRCH) ||
		    snprintf(path, sizeof(path), "%s/%s", base, e->d_name) >= (int)sizeof(path))
			continue;
		if (!populated(path))
			rmdir(path);
	}
	closedir(d);
}

void rkd_contain_init(struct rkd_contain *c, int use_cgroup)
{
	c->cgroup[0] = c->why[0] = '\0';
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
		snprintf(c->why, sizeof(c->why), "cannot become a child subreaper: %s",
		         strerror(errno));
	if (!use_cgroup) {
		snprintf(c->why, sizeof(c->why), "run_cgroup = off");
		return;
	}
	char base[512];
	if (cgroup_base(base, sizeof(base), c->why, sizeof(c->why)))
		return;
	if (snprintf(c->cgroup, sizeof(c->cgroup), "%s/%s%ld", base, prefix, (long)getpid()) >=
	    (int)sizeof(c->cgroup)) {
		c->cgroup[0] = '\0';
		snprintf(c->why, sizeof(c->why), "%s: cgroup path too long", base);
		return;
	}
	sweep(base);
	if (mkdir(c->cgroup, 0755) == 0)
		return;
	if (errno == EEXIST) { /* a dead supervisor's, which had our pid: end what it left */
		for (int i = 0; i < 500 && populated(c->cgroup); i++) {
			kill_cgroup(c->cgroup);
			nap_ms(10);
		}
		if (!populated(c->cgroup))
			return;
	}
	snprintf(c->why, sizeof(c->why), "cannot create cgroup %s: %s", c->cgroup, strerror(errno));
	c->cgroup[0] = '\0';
}

int rkd_contain_add(struct rkd_contain *c, pid_t pid)
{
	if (!c->cgroup[0])
		return -1;
	char text[32];
	snprintf(text, sizeof(text), "%ld\n", (long)pid);
	if (write_file(c->cgroup, "cgroup.procs", text) == 0)
		return 0;
	snprintf(c->why, sizeof(c->why), "cannot move the job into cgroup %s: %s", c->cgroup,
	         strerror(errno));
	rmdir(c->cgroup);
	c->cgroup[0] = '\0';
	return -1;
}

void rkd_contain_end(struct rkd_contain *c, int log_fd)
{
	int said = 0;
	for (long waited_ms = 0;; waited_ms += 10) {
		int left = c->cgroup[0] && populated(c->cgroup);
		if (left)
			kill_cgroup(c->cgroup);
		kill_children();
		int reaped_all = 0;
		pid_t w;
		while ((w = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		reaped_all = w < 0 && errno == ECHILD;
		if (!left && reaped_all)
			break;
		if (waited_ms >= 10000 && !said && log_fd >= 0) {
			dprintf(log_fd,
			        "rubickd supervisor: processes of this run are still alive 10 s"
			        " after SIGKILL (uninterruptible sleep?); its GPUs stay taken until"
			        " they end\n");
			said = 1;
		}
		nap_ms(10);
	}
	if (c->cgroup[0])
		rmdir(c->cgroup);
}

int rkd_contain_kill_recorded(const char *recorded)
{
	char path[512], point[1024], root[1024];
	if (snprintf(path, sizeof(path), "%s", recorded) >= (int)sizeof(path))
		return -1;
	path[strcspn(path, "\n")] = '\0';
	if (!path[0])
		return 0;
	const char *name = strrchr(path, '/');
	size_t pl;
	if (!name || strncmp(name + 1, prefix, sizeof(prefix) - 1) || strstr(path, "/..") ||
	    strspn(name + sizeof(prefix), "0123456789") != strlen(name + sizeof(prefix)) ||
	    !name[sizeof(prefix)] || cgroup2_mount(point, sizeof(point), root, sizeof(root)) ||
	    strncmp(path, point, pl = strlen(point)) || path[pl] != '/')
		return -1;
	int was = populated(path);
	for (int i = 0; i < 100 && populated(path); i++) {
		kill_cgroup(path);
		nap_ms(10);
	}
	rmdir(path);
	return was;
}
