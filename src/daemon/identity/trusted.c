/* Ownership and write rights of the files rubickd trusts (trusted.h). */
#include "daemon/identity/trusted.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "name (uid N)", or "uid N" for a uid with no passwd entry. */
static void user_name(uid_t uid, char *out, size_t cap)
{
	struct passwd pw, *res = NULL;
	char buf[1024];
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res)
		snprintf(out, cap, "%s (uid %u)", pw.pw_name, (unsigned)uid);
	else
		snprintf(out, cap, "uid %u", (unsigned)uid);
}

/* The folder holding `path` ("." for a bare name), into buf. */
static int parent_of(const char *path, char *buf, size_t cap)
{
	const char *slash = strrchr(path, '/');
	int n = !slash ? snprintf(buf, cap, ".")
	        : slash == path ? snprintf(buf, cap, "/")
	                        : snprintf(buf, cap, "%.*s", (int)(slash - path), path);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int rkd_file_trusted(int fd, const char *path, const char *what, struct rk_error *err)
{
	struct stat st;
	if (fstat(fd, &st))
		return rk_error_set(err, RK_EIO, "%s %s: cannot stat: %s", what, path, strerror(errno));
	uid_t me = geteuid();
	if (st.st_uid != me && st.st_uid != 0) {
		char owner[300], expected[300];
		user_name(st.st_uid, owner, sizeof(owner));
		user_name(me, expected, sizeof(expected));
		return rk_error_set(err, RK_EPERM,
				    "%s %s: owned by %s, expected rubickd's user %s%s; run chown",
				    what, path, owner, expected, me ? " or root" : "");
	}
	if (st.st_mode & 022)
		return rk_error_set(err, RK_EPERM,
				    "%s %s: writable by %s (mode %03o); run chmod 600", what, path,
				    (st.st_mode & 002) ? "others" : "its group",
				    (unsigned)(st.st_mode & 0777));
	/* Whoever may write the folder may replace the file, unless sticky keeps it the owner's. */
	char dir[4096];
	struct stat ds;
	if (parent_of(path, dir, sizeof(dir)))
		return rk_error_set(err, RK_ERANGE, "%s %s: path too long", what, path);
	if (stat(dir, &ds))
		return rk_error_set(err, RK_EIO, "%s %s: folder %s: %s", what, path, dir,
				    strerror(errno));
	if ((ds.st_mode & S_IWOTH) && !(ds.st_mode & S_ISVTX))
		return rk_error_set(err, RK_EPERM,
				    "%s %s: its folder %s is writable by others without the sticky"
				    " bit (mode %04o): anyone could replace the file; move it or"
				    " chmod o-w %s",
				    what, path, dir, (unsigned)(ds.st_mode & 07777), dir);
	return 0;
}

/* One of rkd_db_files_trusted's paths: absent is fine; a link, another kind or an untrusted file is not. */
static int db_path_trusted(const char *path, int want_dir, const char *what, struct rk_error *err)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
	                        (want_dir ? O_DIRECTORY : 0));
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == ELOOP)
			return rk_error_set(err, RK_EPERM,
					    "%s %s: is a symbolic link; rubickd writes there as its own"
					    " user and follows no link: remove it",
					    what, path);
		if (errno == ENOTDIR)
			return rk_error_set(err, RK_EPERM, "%s %s: is not a folder; remove it", what,
					    path);
		return rk_error_set(err, RK_EIO, "%s %s: %s", what, path, strerror(errno));
	}
	struct stat st;
	int ret = fstat(fd, &st) ? rk_error_set(err, RK_EIO, "%s %s: cannot stat: %s", what, path,
	                                        strerror(errno))
	          : !want_dir && !S_ISREG(st.st_mode)
	              ? rk_error_set(err, RK_EPERM, "%s %s: is not a regular file; remove it",
	                             what, path)
	              : rkd_file_trusted(fd, path, what, err);
	close(fd);
	return ret;
}

int rkd_db_files_trusted(const char *db, const char *state_dir, struct rk_error *err)
{
	static const char *const side[] = {"", "-wal", "-shm", ".lock"};
	char path[4200];
	for (size_t i = 0; i < sizeof(side) / sizeof(side[0]); i++) {
		if ((size_t)snprintf(path, sizeof(path), "%s%s", db, side[i]) >= sizeof(path))
			return rk_error_set(err, RK_ERANGE, "--db %s: path too long", db);
		int ret = db_path_trusted(path, 0, "--db", err);
		if (ret)
			return ret;
	}
	return state_dir ? db_path_trusted(state_dir, 1, "--state-dir", err) : 0;
}
