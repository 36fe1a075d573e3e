/*
 * The engines' read of a file a job can write (engine/files.c,
 * rkd_read_job_file): a regular file is read; a FIFO, a symlink, a folder
 * and a file past the bound are refused at once, the message naming the
 * path and the problem. A FIFO nobody writes must not block the caller.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(regular, setup, teardown),
		cmocka_unit_test_setup_teardown(absent, setup, teardown),
		cmocka_unit_test_setup_teardown(fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(symlink_, setup, teardown),
		cmocka_unit_test_setup_teardown(folder, setup, teardown),
		cmocka_unit_test_setup_teardown(too_large, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
