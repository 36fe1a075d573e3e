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

int rkd_read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
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
