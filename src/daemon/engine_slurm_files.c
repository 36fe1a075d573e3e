/* Files and the batch script of the Slurm engine; see engine_slurm_files.h. */
#include "daemon/engine_slurm_files.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int64_t rkd_sl_wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int rkd_sl_fmt(char *buf, size_t cap, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(buf, cap, f, ap);
	va_end(ap);
	return (n < 0 || (size_t)n >= cap) ? RK_ERANGE : 0;
}

int rkd_sl_mkdir_p(const char *path)
{
	char buf[4096];
	if (rkd_sl_fmt(buf, sizeof(buf), "%s", path))
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

/* Write `text` to `path` atomically: the job may read it at any moment. */
int rkd_sl_write_file(const char *path, const char *text)
{
	char tmp[4200];
	if (rkd_sl_fmt(tmp, sizeof(tmp), "%s.tmp", path))
		return -1;
	FILE *f = fopen(tmp, "we");
	if (!f)
		return -1;
	int ok = fputs(text, f) >= 0;
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

int rkd_sl_read_file(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = '\0';
	return 0;
}

/* Append `s` single-quoted for sh ('\'' for each quote). */
static int sh_quote(char *buf, size_t cap, size_t *len, const char *s)
{
	for (const char *p = "'"; *p; p++)
		if (*len + 1 < cap)
			buf[(*len)++] = *p;
	for (; *s; s++) {
		const char *piece = *s == '\'' ? "'\\''" : NULL;
		size_t k = piece ? 4 : 1;
		if (*len + k + 2 >= cap)
			return RK_ERANGE;
		if (piece)
			memcpy(buf + *len, piece, k);
		else
			buf[*len] = *s;
		*len += k;
	}
	buf[(*len)++] = '\'';
	buf[*len] = '\0';
	return 0;
}

/* env.sh: what changes between runs of the same Slurm job (gotcha 6). */
int rkd_sl_write_env(const struct rkd_launch *ln, const char *job_dir, const char *nodelist)
{
	char num[6][32], buf[16384], path[4200];
	size_t len = 0;
	snprintf(num[0], sizeof(num[0]), "%lld", (long long)ln->job_id);
	snprintf(num[1], sizeof(num[1]), "%d", ln->global_batch);
	snprintf(num[2], sizeof(num[2]), "%.0f", ln->iters_total);
	snprintf(num[3], sizeof(num[3]), "%d", ln->run);
	snprintf(num[4], sizeof(num[4]), "%d", ln->gpus);
	snprintf(num[5], sizeof(num[5]), "%d", ln->cpus);
	char ckpt[4200], planp[4200];
	rkd_sl_fmt(ckpt, sizeof(ckpt), "%s/ckpt", job_dir);
	rkd_sl_fmt(planp, sizeof(planp), "%s/plan", job_dir);
	const char *kv[][2] = {
		{"RUBICK_PLAN", ln->plan_text},   {"RUBICK_PLAN_FILE", planp},
		{"RUBICK_JOB_ID", num[0]},        {"RUBICK_URL", ln->url},
		{"RUBICK_GLOBAL_BATCH", num[1]},  {"RUBICK_ITERS", num[2]},
		{"RUBICK_RUN", num[3]},           {"RUBICK_ALLOC", ln->alloc_text},
		{"RUBICK_CKPT_DIR", ckpt},        {"RUBICK_GPUS", num[4]},
		{"RUBICK_CPUS", num[5]},          {"RUBICK_JOB_TOKEN", ln->job_token},
		{"RUBICK_SLURM_NODES", nodelist},
	};
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
		int n = snprintf(buf + len, sizeof(buf) - len, "export %s=", kv[i][0]);
		if (n < 0 || (size_t)n >= sizeof(buf) - len)
			return RK_ERANGE;
		len += (size_t)n;
		if (sh_quote(buf, sizeof(buf), &len, kv[i][1] ? kv[i][1] : "") ||
		    len + 2 >= sizeof(buf))
			return RK_ERANGE;
		buf[len++] = '\n';
		buf[len] = '\0';
	}
	char plan_line[512];
	snprintf(plan_line, sizeof(plan_line), "%s\n", ln->plan_text);
	if (rkd_sl_fmt(path, sizeof(path), "%s/env.sh", job_dir) || rkd_sl_mkdir_p(ckpt) ||
	    rkd_sl_write_file(planp, plan_line) || rkd_sl_write_file(path, buf))
		return RK_EIO;
	return 0;
}

/*
 * The batch script: source env.sh, then the local engine's wrapper (forward
 * SIGUSR1/SIGTERM to the job's main process only, keep its exit status).
 */
char *rkd_sl_make_script(const char *job_dir, const char *command)
{
	static const char pre[] = "trap 'kill -USR1 $c 2>/dev/null' USR1\n"
				  "trap 'kill -TERM $c 2>/dev/null' TERM\n";
	static const char post[] = " &\nc=$!\n"
				   "while :; do\n"
				   "  wait $c; s=$?\n"
				   "  [ $s -gt 128 ] && kill -0 $c 2>/dev/null && continue\n"
				   "  [ $s -gt 128 ] && { wait $c; t=$?; [ $t -ne 127 ] && s=$t; }\n"
				   "  exit $s\n"
				   "done\n";
	size_t cap = strlen(job_dir) + strlen(command) + sizeof(pre) + sizeof(post) + 128;
	char *s = malloc(cap);
	if (s)
		snprintf(s, cap, "#!/bin/sh\n. '%s/env.sh' || exit 70\n%s{ %s\n}%s", job_dir, pre,
			 command, post);
	return s;
}

int rkd_sl_is_ours(const char *entry)
{
	static const char *const keys[] = {"CUDA_VISIBLE_DEVICES=", "RUBICK_", "SLURM_JOB"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strncmp(entry, keys[i], strlen(keys[i])))
			return 1;
	return 0;
}

