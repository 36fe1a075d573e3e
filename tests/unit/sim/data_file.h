/*
 * Reading a bundled data file in the oracle tests: the path is relative to
 * the folder an environment variable names (RK_DATA_DIR, RK_SHARED_DIR).
 * Include after cmocka.h.
 */
#ifndef TEST_SIM_DATA_FILE_H
#define TEST_SIM_DATA_FILE_H

#include <stdio.h>
#include <stdlib.h>

/* The file $env/rel, NUL-terminated (at most 1 MiB; tables are far smaller); caller frees.
 * Fails the test when the variable is unset or the file cannot be opened. */
static inline char *slurp(const char *env, const char *rel, size_t *len)
{
	const char *root = getenv(env);
	assert_non_null(root);
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *buf = malloc(1 << 20);
	assert_non_null(buf);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

#endif
