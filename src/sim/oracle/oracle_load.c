/*
 * The oracle's file driver (oracle.h rk_oracle_load_dir): reads a folder of
 * measured tables and hands their text to the parsers, which do no I/O. Lives
 * in the simulator floor, the lowest floor allowed to read files.
 */
#include "rubick/oracle.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Tables are a few KiB; anything this large is not one. */
#define MAX_TABLE_BYTES ((long)64 << 20)

static int read_file(const char *path, char **text, size_t *len, struct rk_error *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return rk_error_set(err, RK_EIO, "%s: cannot open: %s", path, strerror(errno));
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	for (;;) {
		if (n == cap) {
			if ((long)cap >= MAX_TABLE_BYTES) {
				rc = rk_error_set(err, RK_ERANGE, "%s: larger than %ld bytes", path,
						  MAX_TABLE_BYTES);
				break;
			}
			size_t ncap = cap ? 2 * cap : 16384;
			char *p = realloc(buf, ncap + 1);
			if (!p) {
				rc = rk_error_set(err, RK_ENOMEM, "%s: out of memory", path);
				break;
			}
			buf = p;
			cap = ncap;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f))
				rc = rk_error_set(err, RK_EIO, "%s: read failed: %s", path, strerror(errno));
			break;
		}
	}
	fclose(f);
	if (rc) {
		free(buf);
		return rc;
	}
	if (!buf && !(buf = malloc(1)))
		return rk_error_set(err, RK_ENOMEM, "%s: out of memory", path);
	buf[n] = '\0';
	*text = buf;
	*len = n;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Entry names of `dir` (no "." entries), sorted so loading order is deterministic. */
static int list_dir(const char *dir, char ***names, int *count, struct rk_error *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return rk_error_set(err, RK_EIO, "%s: cannot open folder: %s", dir, strerror(errno));
	char **v = NULL;
	int n = 0, cap = 0, rc = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			int ncap = cap ? 2 * cap : 32;
			char **p = realloc(v, (size_t)ncap * sizeof(*p));
			if (!p) {
				rc = RK_ENOMEM;
				break;
			}
			v = p;
			cap = ncap;
		}
		if (!(v[n] = strdup(e->d_name))) {
			rc = RK_ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (rc) {
		free_names(v, n);
		return rk_error_set(err, rc, "%s: out of memory", dir);
	}
	if (n > 1)
		qsort(v, (size_t)n, sizeof(*v), cmp_str);
	*names = v;
	*count = n;
	return 0;
}

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* "<model>_bsz<N>" -> model and N; other names -> the name and 0 (default batch). */
static void split_folder(const char *folder, char *model, size_t cap, int *batch)
{
	snprintf(model, cap, "%s", folder);
	*batch = 0;
	char *p = strstr(model, "_bsz");
	if (!p || p == model || !p[4])
		return;
	char *end = NULL;
	long v = strtol(p + 4, &end, 10);
	if (*end || v < 1 || v > 1 << 30)
		return;
	*p = '\0';
	*batch = (int)v;
}

/* First line of a table starts with "exec_plan" (after an optional BOM): Rubick format. */
static int is_rubick_format(const char *text, size_t len)
{
	if (len >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
	    (unsigned char)text[2] == 0xBF)
		text += 3, len -= 3;
	return len >= 9 && !strncmp(text, "exec_plan", 9);
}

/* Load one file of a model folder; *added += 1 when it is a table. */
static int load_file(struct rk_oracle *o, const char *model, int batch, const char *path,
		     const char *file, int *added, struct rk_error *err)
{
	size_t fl = strlen(file);
	if (fl < 4 || strcmp(file + fl - 4, ".csv"))
		return 0;
	enum rk_sia_kind kind;
	const char *rest;
	if (!strncmp(file, "placements", 10)) {
		kind = RK_SIA_PLACEMENTS;
		rest = file + 10;
	} else if (!strncmp(file, "scalability", 11)) {
		kind = RK_SIA_SCALABILITY;
		rest = file + 11;
	} else if (!strncmp(file, "validation-", 11)) {
		/* Sia/Pollux job targets: validation-<global batch>.csv */
		char *end = NULL;
		long b = strtol(file + 11, &end, 10);
		if (end == file + 11 || strcmp(end, ".csv") || b < 1 || b > 1 << 30)
			return 0;
		char *text = NULL;
		size_t len = 0;
		int rc = read_file(path, &text, &len, err);
		if (rc)
			return rc;
		rc = rk_oracle_add_sia_target(o, model, (int)b, text, len, path, err);
		free(text);
		return rc; /* a target alone is not a throughput table: *added unchanged */
	} else {
		return 0; /* other files are not throughput tables */
	}
	char gpu[64] = "";
	if (*rest == '-') {
		size_t gl = strlen(rest + 1) - 4;
		if (gl == 0 || gl >= sizeof(gpu))
			return 0;
		memcpy(gpu, rest + 1, gl);
		gpu[gl] = '\0';
	} else if (strcmp(rest, ".csv")) {
		return 0;
	}
	char *text = NULL;
	size_t len = 0;
	int rc = read_file(path, &text, &len, err);
	if (rc)
		return rc;
	if (kind == RK_SIA_PLACEMENTS && !gpu[0] && is_rubick_format(text, len))
		rc = rk_oracle_add_rubick_table(o, model, batch, text, len, path, err);
	else
		rc = rk_oracle_add_sia_profile(o, model, gpu, kind, text, len, path, err);
	free(text);
	if (rc == 0)
		(*added)++;
	return rc;
}

int rk_oracle_load_dir(struct rk_oracle *o, const char *dir, struct rk_error *err)
{
	if (!o || !dir || !*dir)
		return rk_error_set(err, RK_EINVAL, "oracle: no folder given");
	char **sub = NULL;
	int n_sub = 0, added = 0;
	int rc = list_dir(dir, &sub, &n_sub, err);
	if (rc)
		return rc;
	for (int i = 0; i < n_sub && rc == 0; i++) {
		size_t pl = strlen(dir) + strlen(sub[i]) + 2;
		char *path = malloc(pl);
		if (!path) {
			rc = rk_error_set(err, RK_ENOMEM, "%s: out of memory", dir);
			break;
		}
		snprintf(path, pl, "%s/%s", dir, sub[i]);
		if (!is_dir(path)) {
			free(path);
			continue;
		}
		char model[256];
		int batch = 0;
		split_folder(sub[i], model, sizeof(model), &batch);
		char **files = NULL;
		int n_files = 0;
		rc = list_dir(path, &files, &n_files, err);
		for (int k = 0; k < n_files && rc == 0; k++) {
			size_t fpl = strlen(path) + strlen(files[k]) + 2;
			char *fp = malloc(fpl);
			if (!fp) {
				rc = rk_error_set(err, RK_ENOMEM, "%s: out of memory", path);
				break;
			}
			snprintf(fp, fpl, "%s/%s", path, files[k]);
			rc = load_file(o, model, batch, fp, files[k], &added, err);
			free(fp);
		}
		free_names(files, n_files);
		free(path);
	}
	free_names(sub, n_sub);
	if (rc == 0 && added == 0)
		rc = rk_error_set(err, RK_ENOTFOUND,
				  "%s: no throughput tables (expected <model>/placements.csv or "
				  "placements-<gpu>.csv / scalability-<gpu>.csv)",
				  dir);
	return rc;
}
