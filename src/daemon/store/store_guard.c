/*
 * What guards the store before rubickd opens it (store.h): one daemon per
 * database. (The other guard, the database checked sound before anything
 * writes to it, is rkd_store_check in store.c, beside the other SQLite calls.)
 *
 * Two rubickd on one database would both launch its jobs (the issue saw two
 * jobs on one GPU and one job launched three times), and SQLite's own locks
 * only serialise their transactions. flock(2) on a side file PATH.lock is
 * held by the open file description: released when the process dies however
 * it dies (kill -9 included), never by a child closing its copy (the file is
 * O_CLOEXEC, so jobs exec without it), and, unlike POSIX record locks, not
 * dropped when some other descriptor of the same file is closed.
 */
#include "daemon/store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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
