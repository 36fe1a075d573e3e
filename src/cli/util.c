/*
 * Shared CLI helpers: whole-file reads, --cluster arguments, loading the
 * model zoo from a directory, the empty-item rule of comma lists and the
 * `mkdir -p` of output folders.
 */
#include "cli/util.h"

#include "cli/commands.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef RK_DEFAULT_DATA_DIR
#define RK_DEFAULT_DATA_DIR "data"
#endif

int rk_cli_read_file(const char *path, char **text, size_t *len, struct rk_error *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return rk_error_set(err, RK_EIO, "%s: %s", path, strerror(errno));
	int rc = 0;
	char *buf = NULL;
	size_t used = 0, cap = 0;
	for (;;) {
		if (cap - used < 4096) {
			size_t ncap = cap ? cap * 2 : 8192;
			if (ncap > (size_t)RK_CLI_FILE_MAX + 1) {
				rc = rk_error_set(err, RK_EIO, "%s: file larger than %u bytes", path,
						  RK_CLI_FILE_MAX);
				goto out;
			}
			char *grown = realloc(buf, ncap);
			if (!grown) {
				rc = rk_error_set(err, RK_ENOMEM, "%s: out of memory", path);
				goto out;
			}
			buf = grown;
			cap = ncap;
		}
		size_t n = fread(buf + used, 1, cap - used - 1, f);
		used += n;
		if (n == 0) {
			if (ferror(f))
				rc = rk_error_set(err, RK_EIO, "%s: read error", path);
			break;
		}
	}
out:
	fclose(f);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[used] = '\0';
	*text = buf;
	*len = used;
	return 0;
}

int rk_cli_cluster_read(const char *arg, struct rk_cluster *cl, struct rk_error *err)
{
	struct stat st;
	if (stat(arg, &st) != 0 || !S_ISREG(st.st_mode))
		return rk_cluster_parse(cl, arg, "--cluster", err);
	char *text;
	size_t len;
	int rc = rk_cli_read_file(arg, &text, &len, err);
	if (!rc) {
		rc = rk_cluster_parse(cl, text, arg, err);
		free(text);
	}
	return rc;
}

const char *rk_cli_zoo_dir(const char *flag_value)
{
	if (flag_value)
		return flag_value;
	const char *env = getenv("RUBICK_ZOO");
	if (env && *env)
		return env;
	return RK_DEFAULT_DATA_DIR "/zoo";
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_one(const char *dir, const char *file, struct rk_zoo *zoo, struct rk_error *err)
{
	char path[4096];
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
		return rk_error_set(err, RK_EIO, "%s/%s: path too long", dir, file);
	char *text;
	size_t len;
	int rc = rk_cli_read_file(path, &text, &len, err);
	if (rc)
		return rc;
	struct rk_model m;
	rc = rk_model_parse(text, len, path, &m, err);
	free(text);
	if (rc)
		return rc;
	size_t stem = strlen(file) - strlen(".model");
	if (strlen(m.name) != stem || strncmp(m.name, file, stem))
		return rk_error_set(err, RK_EINVAL,
				    "%s: key 'name': '%s' differs from the file name '%.*s'", path,
				    m.name, (int)stem, file);
	rc = rk_zoo_add(zoo, &m, err);
	if (rc)
		rk_error_prefix(err, "%s", path);
	return rc;
}

int rk_cli_zoo_load(const char *dir, struct rk_zoo *zoo, struct rk_error *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return rk_error_set(err, RK_EIO, "%s: %s (zoo directory; set --zoo DIR or RUBICK_ZOO)",
				    dir, strerror(errno));
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l <= 6 || strcmp(e->d_name + l - 6, ".model") || e->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **grown = realloc(names, ncap * sizeof(*grown));
			if (!grown) {
				rc = rk_error_set(err, RK_ENOMEM, "%s: out of memory", dir);
				goto out;
			}
			names = grown;
			cap = ncap;
		}
		names[n] = strdup(e->d_name);
		if (!names[n]) {
			rc = rk_error_set(err, RK_ENOMEM, "%s: out of memory", dir);
			goto out;
		}
		n++;
	}
	if (n == 0) {
		rc = rk_error_set(err, RK_ENOTFOUND, "%s: no .model files in the zoo directory", dir);
		goto out;
	}
	/* Name order, so the zoo (and every listing built from it) is the same on every machine. */
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n && !rc; i++)
		rc = load_one(dir, names[i], zoo, err);
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

int rk_cli_list_empty_item(const char *list)
{
	if (!*list)
		return 0; /* no item at all: each option says whether it needs one */
	int pos = 1;
	for (const char *p = list;; p++, pos++) {
		size_t n = strcspn(p, ",");
		if (n == 0)
			return pos;
		p += n;
		if (!*p)
			return 0;
	}
}

int rk_cli_list_check(const char *cmd, const char *flag, const char *list)
{
	int pos = rk_cli_list_empty_item(list);
	if (!pos)
		return 0;
	fprintf(stderr, "%s: %s: '%s': item %d is empty (drop the extra ',')\n", cmd, flag, list,
	        pos);
	return RK_EXIT_USAGE;
}

int rk_cli_mkdirs(const char *path, char *failed, size_t cap)
{
	char buf[4096];
	size_t len = strlen(path);
	if (len == 0 || len >= sizeof(buf)) {
		snprintf(failed, cap, "%s", path);
		return ENAMETOOLONG;
	}
	memcpy(buf, path, len + 1);
	/* Each prefix ending before a '/', then the whole path, as `mkdir -p` does. */
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		if (buf[i - 1] == '/')
			continue; /* "a//b": the empty component is the same folder */
		char saved = buf[i];
		buf[i] = '\0';
		struct stat st;
		int rc = 0;
		if (mkdir(buf, 0777) && errno != EEXIST)
			rc = errno;
		else if (stat(buf, &st))
			rc = errno;
		else if (!S_ISDIR(st.st_mode))
			rc = ENOTDIR;
		if (rc) {
			snprintf(failed, cap, "%s", buf);
			return rc;
		}
		buf[i] = saved;
	}
	return 0;
}
