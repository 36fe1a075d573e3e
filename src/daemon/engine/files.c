/* File helpers shared by the engines (files.h). */
#include "daemon/engine/files.h"

#include "rubick/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rkd_path_fmt(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	return (n < 0 || (size_t)n >= cap) ? RK_ERANGE : 0;
}

int rkd_mkdir_p(const char *path)
{
	char buf[4096];
	if (rkd_path_fmt(buf, sizeof(buf), "%s", path))
		return -1;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return (mkdir(buf, 0700) && errno != EEXIST) ? -1 : 0;
}

int rkd_write_atomic(const char *path, const char *text)
{
	return rkd_write_atomic_owned(path, text, (uid_t)-1, (gid_t)-1);
}

/* fchown only when asked and needed, so that an unprivileged rubickd never calls it. */
static int own(int fd, const struct stat *st, uid_t uid, gid_t gid)
{
	if (uid == (uid_t)-1 || (st->st_uid == uid && st->st_gid == gid))
		return 0;
	return fchown(fd, uid, gid);
}

int rkd_write_atomic_owned(const char *path, const char *text, uid_t uid, gid_t gid)
{
	char tmp[4200];
	if (rkd_path_fmt(tmp, sizeof(tmp), "%s.tmp", path))
		return -1;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	size_t len = strlen(text);
	struct stat st;
	int ok = fstat(fd, &st) == 0 && own(fd, &st, uid, gid) == 0 && fchmod(fd, 0600) == 0;
	ok = ok && write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
	close(fd);
	if (!ok || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

int rkd_write_atomic_at(int dirfd, const char *name, const char *text)
{
	char tmp[512];
	if (rkd_path_fmt(tmp, sizeof(tmp), "%s.tmp", name))
		return -1;
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	size_t len = strlen(text);
	int ok = fchmod(fd, 0600) == 0 && write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
	close(fd);
	if (!ok || renameat(dirfd, tmp, dirfd, name) != 0) {
		unlinkat(dirfd, tmp, 0);
		return -1;
	}
	return 0;
}

/* A folder rubickd may build on: its own, writable by no one else. */
static int trusted_dir(int fd)
{
	struct stat st;
	if (fstat(fd, &st))
		return 0;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return 0;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		errno = EPERM;
		return 0;
	}
	return 1;
}

int rkd_dir_below(const char *base, const char *rel, mode_t mode)
{
	char buf[4096];
	if (rkd_path_fmt(buf, sizeof(buf), "%s", rel)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !trusted_dir(fd))
		goto fail;
	char *save = NULL;
	for (char *name = strtok_r(buf, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
		if (!strcmp(name, ".") || !strcmp(name, "..")) {
			errno = EINVAL;
			goto fail;
		}
		if (mkdirat(fd, name, mode) && errno != EEXIST)
			goto fail;
		int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOTDIR) {
			struct stat ls; /* O_NOFOLLOW on a symlink reads ENOTDIR with O_DIRECTORY */
			if (!fstatat(fd, name, &ls, AT_SYMLINK_NOFOLLOW) && S_ISLNK(ls.st_mode))
				errno = ELOOP;
		}
		close(fd);
		fd = next;
		if (fd < 0 || !trusted_dir(fd))
			goto fail;
	}
	return fd;
fail:;
	int e = errno;
	if (fd >= 0)
		close(fd);
	errno = e;
	return -1;
}

/*
 * Only records rubickd wrote itself, but an unprivileged rubickd runs every
 * job as its own user, which can then replace them: never follow a symlink,
 * never block on a FIFO.
 */
int rkd_read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	struct stat st;
	ssize_t n = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* What st is, for a refusal's message. */
static const char *kind(const struct stat *st)
{
	if (S_ISFIFO(st->st_mode))
		return "a FIFO";
	if (S_ISDIR(st->st_mode))
		return "a folder";
	if (S_ISLNK(st->st_mode))
		return "a symlink";
	if (S_ISSOCK(st->st_mode))
		return "a socket";
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return "a device";
	return "of another kind";
}

int rkd_read_job_file(const char *path, char *buf, size_t cap, char *why, size_t why_cap)
{
	why[0] = '\0';
	if (cap)
		buf[0] = '\0';
	if (cap < 2) {
		snprintf(why, why_cap, "%s: no room to read it", path);
		return RK_ERANGE;
	}
	/* O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT)
			return RK_ENOTFOUND;
		struct stat ls;
		if (errno == ELOOP && lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode))
			snprintf(why, why_cap, "%s: is a symlink; not followed", path);
		else
			snprintf(why, why_cap, "%s: cannot open: %s", path, strerror(errno));
		return RK_EPERM;
	}
	struct stat st;
	int ret = 0;
	if (fstat(fd, &st)) {
		snprintf(why, why_cap, "%s: cannot stat: %s", path, strerror(errno));
		ret = RK_EIO;
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(why, why_cap, "%s: is %s, not a regular file; not read", path, kind(&st));
		ret = RK_EPERM;
	} else if (st.st_size >= (off_t)cap) {
		snprintf(why, why_cap, "%s: %lld bytes, more than the %zu expected; not read", path,
		         (long long)st.st_size, cap - 1);
		ret = RK_ERANGE;
	}
	if (!ret) {
		ssize_t n = read(fd, buf, cap - 1);
		char more;
		if (n < 0) {
			snprintf(why, why_cap, "%s: cannot read: %s", path, strerror(errno));
			ret = RK_EIO;
		} else if ((size_t)n == cap - 1 && read(fd, &more, 1) == 1) {
			/* grown past the bound since fstat: refused like a large file */
			snprintf(why, why_cap, "%s: grew past %zu bytes while read; not read", path,
			         cap - 1);
			ret = RK_ERANGE;
		} else
			buf[n] = '\0';
	}
	if (ret)
		buf[0] = '\0';
	close(fd);
	return ret;
}

static int ensure(const char *path, int dir, mode_t mode, uid_t uid, gid_t gid)
{
	if (dir && mkdir(path, mode) && errno != EEXIST)
		return -1;
	int fd = open(path,
	              dir ? O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
	                  : O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
	              mode);
	if (fd < 0)
		return -1;
	struct stat st;
	int ok = fstat(fd, &st) == 0;
	if (ok && !dir && !S_ISREG(st.st_mode)) {
		errno = EINVAL;
		ok = 0;
	}
	ok = ok && own(fd, &st, uid, gid) == 0 &&
	     ((st.st_mode & 07777) == mode || fchmod(fd, mode) == 0);
	int e = errno;
	close(fd);
	errno = e;
	return ok ? 0 : -1;
}

int rkd_dir_ensure(const char *path, mode_t mode, uid_t uid, gid_t gid)
{
	return ensure(path, 1, mode, uid, gid);
}

int rkd_file_ensure(const char *path, mode_t mode, uid_t uid, gid_t gid)
{
	return ensure(path, 0, mode, uid, gid);
}
