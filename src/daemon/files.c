/* File helpers shared by the engines (files.h). */
#include "daemon/files.h"

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
	char tmp[4200];
	if (rkd_path_fmt(tmp, sizeof(tmp), "%s.tmp", path))
		return -1;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	size_t len = strlen(text);
	ssize_t w = write(fd, text, len);
	int ok = w == (ssize_t)len && fsync(fd) == 0;
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
