/*
 * The engines' read of a file a job can write (engine/files.c,
 * rkd_read_job_file): a regular file is read; a FIFO, a symlink, a folder
 * and a file past the bound are refused at once, the message naming the
 * path and the problem. A FIFO nobody writes must not block the caller.
 * And the run folders rubickd builds (rkd_dir_below): made from descriptors,
 * refused through a symlink, a folder of another user or one others can write.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/engine/files.h"
#include "rubick/error.h"

struct tmp {
	char dir[256];
	char path[512];
};

static int setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "/tmp/rkd-files-XXXXXX");
	if (!t || !mkdtemp(t->dir))
		return -1;
	snprintf(t->path, sizeof(t->path), "%s/.exit-run-1", t->dir);
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tmp *t = *state;
	char other[600];
	snprintf(other, sizeof(other), "%s/secret", t->dir);
	unlink(other);
	unlink(t->path);
	rmdir(t->path);
	rmdir(t->dir);
	free(t);
	return 0;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void regular(void **state)
{
	struct tmp *t = *state;
	char buf[32], why[1024];
	put(t->path, "75\n");
	assert_int_equal(rkd_read_job_file(t->path, buf, sizeof(buf), why, sizeof(why)), 0);
	assert_string_equal(buf, "75\n");
	assert_string_equal(why, "");
}

static void absent(void **state)
{
	struct tmp *t = *state;
	char buf[32] = "x", why[1024];
	assert_int_equal(rkd_read_job_file(t->path, buf, sizeof(buf), why, sizeof(why)),
			 RK_ENOTFOUND);
	assert_string_equal(buf, "");
	assert_string_equal(why, "");
}

/* The refusal names the path and says what it found. */
static void refused(const char *path, int code, const char *what)
{
	char buf[32], why[1024];
	assert_int_equal(rkd_read_job_file(path, buf, sizeof(buf), why, sizeof(why)), code);
	assert_string_equal(buf, "");
	assert_non_null(strstr(why, path));
	if (!strstr(why, what))
		fail_msg("'%s' does not say '%s'", why, what);
}

static void fifo(void **state)
{
	struct tmp *t = *state;
	assert_int_equal(mkfifo(t->path, 0600), 0);
	/* a blocking open would hang here: alarm turns that into a failure */
	alarm(5);
	refused(t->path, RK_EPERM, "is a FIFO, not a regular file");
	alarm(0);
}

static void symlink_(void **state)
{
	struct tmp *t = *state;
	char other[600];
	snprintf(other, sizeof(other), "%s/secret", t->dir);
	put(other, "75\n");
	assert_int_equal(symlink(other, t->path), 0);
	refused(t->path, RK_EPERM, "is a symlink; not followed");
}

static void folder(void **state)
{
	struct tmp *t = *state;
	assert_int_equal(mkdir(t->path, 0700), 0);
	refused(t->path, RK_EPERM, "is a folder, not a regular file");
}

static void too_large(void **state)
{
	struct tmp *t = *state;
	char big[100];
	memset(big, '7', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	put(t->path, big);
	refused(t->path, RK_ERANGE, "99 bytes, more than the 31 expected");
	/* exactly the bound is read */
	big[31] = '\0';
	put(t->path, big);
	char buf[32], why[1024];
	assert_int_equal(rkd_read_job_file(t->path, buf, sizeof(buf), why, sizeof(why)), 0);
	assert_int_equal(strlen(buf), 31);
}

static int teardown_tree(void **state)
{
	struct tmp *t = *state;
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	assert_int_equal(system(cmd), 0);
	free(t);
	return 0;
}

static void below_made(void **state)
{
	struct tmp *t = *state;
	int fd = rkd_dir_below(t->dir, "job-3/run-2", 0700);
	assert_true(fd >= 0);
	assert_int_equal(rkd_write_atomic_at(fd, "gpus", "0,1"), 0);
	close(fd);
	char path[600], buf[16];
	snprintf(path, sizeof(path), "%s/job-3/run-2/gpus", t->dir);
	assert_int_equal(rkd_read_small(path, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "0,1");
	struct stat st;
	snprintf(path, sizeof(path), "%s/job-3/run-2", t->dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	fd = rkd_dir_below(t->dir, "job-3/run-2", 0700); /* already there: opened */
	assert_true(fd >= 0);
	close(fd);
}

/* rkd_dir_below refuses with `err` and creates nothing under `where`. */
static void below_refused(const char *base, const char *rel, int err, const char *where)
{
	errno = 0;
	int fd = rkd_dir_below(base, rel, 0700);
	if (fd >= 0)
		close(fd);
	assert_int_equal(fd, -1);
	assert_int_equal(errno, err);
	if (where) {
		char path[700];
		struct stat st;
		snprintf(path, sizeof(path), "%s/run-1", where);
		assert_int_equal(lstat(path, &st), -1);
	}
}

static void below_symlink(void **state)
{
	struct tmp *t = *state;
	char target[600], link[600];
	snprintf(target, sizeof(target), "%s/elsewhere", t->dir);
	snprintf(link, sizeof(link), "%s/job-4", t->dir);
	assert_int_equal(mkdir(target, 0700), 0);
	assert_int_equal(symlink(target, link), 0);
	below_refused(t->dir, "job-4/run-1", ELOOP, target);
	below_refused(link, "run-1", ENOTDIR, target); /* the base itself is not followed */
}

static void below_writable(void **state)
{
	struct tmp *t = *state;
	char path[600];
	snprintf(path, sizeof(path), "%s/job-5", t->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(chmod(path, 0770), 0);
	below_refused(t->dir, "job-5/run-1", EPERM, path);
	assert_int_equal(chmod(path, 0702), 0);
	below_refused(t->dir, "job-5/run-1", EPERM, path);
	assert_int_equal(chmod(t->dir, 0777), 0); /* the base is checked too */
	below_refused(t->dir, "job-6/run-1", EPERM, NULL);
	assert_int_equal(chmod(t->dir, 0700), 0);
	below_refused(t->dir, "job-7/../job-8", EINVAL, NULL);
}

static void below_other_owner(void **state)
{
	struct tmp *t = *state;
	if (geteuid() != 0)
		skip(); /* only root can give a folder away */
	char path[600];
	snprintf(path, sizeof(path), "%s/job-9", t->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(chown(path, 65534, 65534), 0);
	below_refused(t->dir, "job-9/run-1", EPERM, path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(regular, setup, teardown),
		cmocka_unit_test_setup_teardown(absent, setup, teardown),
		cmocka_unit_test_setup_teardown(fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(symlink_, setup, teardown),
		cmocka_unit_test_setup_teardown(folder, setup, teardown),
		cmocka_unit_test_setup_teardown(too_large, setup, teardown),
		cmocka_unit_test_setup_teardown(below_made, setup, teardown_tree),
		cmocka_unit_test_setup_teardown(below_symlink, setup, teardown_tree),
		cmocka_unit_test_setup_teardown(below_writable, setup, teardown_tree),
		cmocka_unit_test_setup_teardown(below_other_owner, setup, teardown_tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
