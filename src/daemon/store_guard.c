/*
 * What guards the store before rubickd opens it (store.h): one daemon per
 * database, and a database checked sound before anything writes to it.
 *
 * Two rubickd on one database would both launch its jobs (the issue saw two
 * jobs on one GPU and one job launched three times), and SQLite's own locks
 * only serialise their transactions. flock(2) on a side file PATH.lock is
 * held by the open file description: released when the process dies however
 * it dies (kill -9 included), never by a child closing its copy (the file is
 * O_CLOEXEC, so jobs exec without it), and, unlike POSIX record locks, not
 * dropped when some other descriptor of the same file is closed.
 */
#include "daemon/store.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int rkd_store_lock(const char *path, int *fd_out, struct rk_error *err)
{
	char lock[1100];
	if ((size_t)snprintf(lock, sizeof(lock), "%s.lock", path) >= sizeof(lock))
		return rk_error_set(err, RK_ERANGE, "--db %s: path too long", path);
	int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return rk_error_set(err, RK_EIO, "--db %s: cannot open the lock file %s: %s", path,
		                    lock, strerror(errno));
	/*
	 * A daemon killed a moment ago can leave its lock held for a few
	 * milliseconds more: a supervisor it was spawning holds a copy of its
	 * descriptors until that child's exec closes them (seen under load right
	 * after a kill -9). Such a holder lets go within a second; a running
	 * rubickd does not, so a second daemon is still refused at once.
	 */
	int locked = flock(fd, LOCK_EX | LOCK_NB) == 0;
	for (int tries = 0; !locked && errno == EWOULDBLOCK && tries < 50; tries++) {
		struct timespec pause = {0, 20 * 1000 * 1000}; /* 50 x 20 ms = 1 s */
		nanosleep(&pause, NULL);
		locked = flock(fd, LOCK_EX | LOCK_NB) == 0;
	}
	if (!locked) {
		int e = errno;
		char pid[32] = "";
		ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\r\n")] = '\0';
		close(fd);
		if (e != EWOULDBLOCK)
			return rk_error_set(err, RK_EIO, "--db %s: cannot lock %s: %s", path, lock,
			                    strerror(e));
		return rk_error_set(
		    err, RK_ECONFLICT,
		    "--db %s: the database is in use by another rubickd (PID %s holds"
		    " %s); one daemon per database",
		    path, pid[0] ? pid : "unknown", lock);
	}
	char pid[32];
	int len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)len, 0) != len) {
		int e = errno;
		close(fd);
		return rk_error_set(err, RK_EIO, "--db %s: cannot write the lock file %s: %s", path,
		                    lock, strerror(e));
	}
	*fd_out = fd;
	return 0;
}

void rkd_store_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* releases the flock */
}

int rkd_store_check(const char *path, struct rk_error *err)
{
	struct stat st;
	if (stat(path, &st) && errno == ENOENT)
		return 0; /* a new database: created by rkd_store_open */
	/*
	 * A database closed cleanly has no -wal: read it as immutable, which
	 * creates no -wal or -shm and takes no lock. One left by a crash is read
	 * with its WAL, without the checkpoint a last close would run.
	 */
	char wal[1100], uri[3400];
	snprintf(wal, sizeof(wal), "%s-wal", path);
	int has_wal = access(wal, F_OK) == 0;
	size_t u = (size_t)snprintf(uri, sizeof(uri), "file:");
	for (const char *p = path; *p && u + 4 < sizeof(uri); p++) {
		if (*p == '%' || *p == '?' || *p == '#')
			u +=
			    (size_t)snprintf(uri + u, sizeof(uri) - u, "%%%02X", (unsigned char)*p);
		else
			uri[u++] = *p;
	}
	snprintf(uri + u, sizeof(uri) - u, "?immutable=1");
	sqlite3 *db = NULL;
	int rc = has_wal
	             ? sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL)
	             : sqlite3_open_v2(uri, &db,
	                               SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
	                               NULL);
	if (rc == SQLITE_OK && has_wal)
		rc = sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	if (rc != SQLITE_OK) {
		int ret = rk_error_set(err, RK_EIO, "--db %s: cannot open the database: %s", path,
		                       db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return ret;
	}
	sqlite3_busy_timeout(db, 5000);
	sqlite3_stmt *q = NULL;
	char first[300] = "";
	rc = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &q, NULL);
	int rows = 0, ok = rc == SQLITE_OK;
	while (ok && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(q, 0);
		if (!rows++)
			snprintf(first, sizeof(first), "%s", t ? t : "");
	}
	if (rc != SQLITE_DONE && !first[0]) {
		snprintf(first, sizeof(first), "%s", sqlite3_errmsg(db));
		ok = 0;
	}
	sqlite3_finalize(q);
	sqlite3_close(db);
	if (ok && rows == 1 && !strcmp(first, "ok"))
		return 0;
	return rk_error_set(err, RK_EIO,
	                    "--db %s: the database is corrupt (PRAGMA quick_check: %s%s); refusing"
	                    " to start and writing nothing: restore it from a backup, or move it"
	                    " away to start empty",
	                    path, first, rows > 1 ? ", ..." : "");
}
