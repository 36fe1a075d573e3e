/* Ownership and write rights of the files rubickd trusts (trusted.h). */
#include "daemon/identity/trusted.h"

#include <errno.h>
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
