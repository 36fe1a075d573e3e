/*
 * Provenance of a `rubick sim` report (sim_prov.h, docs/sim.md
 * "Provenance"). SHA-256 is nettle's (Debian nettle-dev). The source id
 * comes from rk_source.h, which meson's vcs_tag() rewrites whenever
 * `git describe` changes, so a new commit rebuilds this file alone.
 */
#include "cli/sim_prov.h"

#include "cli/commands.h"

#include "rk_source.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <nettle/sha2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#ifndef RK_BUILD_TYPE
#define RK_BUILD_TYPE "unknown"
#endif
#ifndef RK_BUILD_SANITIZE
#define RK_BUILD_SANITIZE "unknown"
#endif

static void to_hex(const uint8_t d[SHA256_DIGEST_SIZE], char hex[65])
{
	for (int i = 0; i < SHA256_DIGEST_SIZE; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

int rk_cli_sha256_file(const char *path, char hex[65], struct rk_error *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return rk_error_set(err, RK_EIO, "%s: %s", path, strerror(errno));
	struct sha256_ctx c;
	sha256_init(&c);
	uint8_t buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sha256_update(&c, n, buf);
	int bad = ferror(f);
	fclose(f);
	if (bad)
		return rk_error_set(err, RK_EIO, "%s: read error", path);
	uint8_t d[SHA256_DIGEST_SIZE];
	sha256_digest(&c, SHA256_DIGEST_SIZE, d);
	to_hex(d, hex);
	return 0;
}

/* Relative paths of the regular files under a folder, collected by walk(). */
struct names {
	char **v;
	size_t n, cap;
};

static int names_add(struct names *ns, const char *rel)
{
	if (ns->n == ns->cap) {
		size_t cap = ns->cap ? 2 * ns->cap : 64;
		char **g = realloc(ns->v, cap * sizeof(*g));
		if (!g)
			return RK_ENOMEM;
		ns->v = g;
		ns->cap = cap;
	}
	if (!(ns->v[ns->n] = strdup(rel)))
		return RK_ENOMEM;
	ns->n++;
	return 0;
}

/* Every regular file under root/rel (rel "" = root itself), into ns. */
static int walk(const char *root, const char *rel, struct names *ns, int depth,
                struct rk_error *err)
{
	char dir[RK_CLI_PROV_PATH];
	if ((size_t)snprintf(dir, sizeof(dir), "%s%s%s", root, *rel ? "/" : "", rel) >= sizeof(dir))
		return rk_error_set(err, RK_EIO, "%s/%s: path too long", root, rel);
	if (depth > 64)
		return rk_error_set(err, RK_EIO, "%s: folders nested too deep", dir);
	DIR *d = opendir(dir);
	if (!d)
		return rk_error_set(err, RK_EIO, "%s: %s", dir, strerror(errno));
	int rc = 0;
	struct dirent *e;
	while (!rc && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char sub[RK_CLI_PROV_PATH], full[RK_CLI_PROV_PATH];
		if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", e->d_name) >=
		        sizeof(sub) ||
		    (size_t)snprintf(full, sizeof(full), "%s/%s", root, sub) >= sizeof(full)) {
			rc = rk_error_set(err, RK_EIO, "%s/%s: path too long", dir, e->d_name);
			break;
		}
		struct stat st;
		if (lstat(full, &st)) {
			rc = rk_error_set(err, RK_EIO, "%s: %s", full, strerror(errno));
			break;
		}
		if (S_ISDIR(st.st_mode))
			rc = walk(root, sub, ns, depth + 1, err);
		else if (!stat(full, &st) && S_ISREG(st.st_mode) && names_add(ns, sub))
			rc = rk_error_set(err, RK_ENOMEM, "%s: out of memory", dir);
	}
	closedir(d);
	return rc;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rk_cli_sha256_dir(const char *dir, char hex[65], struct rk_error *err)
{
	struct names ns = {0};
	int rc = walk(dir, "", &ns, 0, err);
	if (!rc)
		qsort(ns.v, ns.n, sizeof(*ns.v), cmp_name);
	struct sha256_ctx c;
	sha256_init(&c);
	for (size_t i = 0; !rc && i < ns.n; i++) {
		char full[RK_CLI_PROV_PATH], fh[65];
		snprintf(full, sizeof(full), "%s/%s", dir, ns.v[i]);
		rc = rk_cli_sha256_file(full, fh, err);
		if (rc)
			break;
		sha256_update(&c, 64, (const uint8_t *)fh);
		sha256_update(&c, 2, (const uint8_t *)"  ");
		sha256_update(&c, strlen(ns.v[i]), (const uint8_t *)ns.v[i]);
		sha256_update(&c, 1, (const uint8_t *)"\n");
	}
	for (size_t i = 0; i < ns.n; i++)
		free(ns.v[i]);
	free(ns.v);
	if (rc)
		return rc;
	uint8_t d[SHA256_DIGEST_SIZE];
	sha256_digest(&c, SHA256_DIGEST_SIZE, d);
	to_hex(d, hex);
	return 0;
}

/* RK_SOURCE_ID: "<40 hex>" or "<40 hex>-dirty" from git, else the release version. */
static void source_id(struct rk_cli_prov *p)
{
	/* A buffer, not the literal: from a tarball it is "0.1.0", and reading id[40] of
	 * that literal (never done: n < 40 there) is an -Warray-bounds error at -O0. */
	char id[128];
	snprintf(id, sizeof(id), "%s", RK_SOURCE_ID);
	size_t n = strspn(id, "0123456789abcdef");
	if (n == 40 && (!id[40] || !strcmp(id + 40, "-dirty"))) {
		snprintf(p->source, sizeof(p->source), "git");
		snprintf(p->commit, sizeof(p->commit), "%.40s", id);
		p->dirty = id[40] != '\0';
	} else {
		snprintf(p->source, sizeof(p->source), "release");
		p->commit[0] = '\0';
		p->dirty = -1;
	}
}

int rk_cli_prov_init(struct rk_cli_prov *p)
{
	memset(p, 0, sizeof(*p));
	source_id(p);
	time_t t = time(NULL);
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	if (sde) {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(sde, &end, 10);
		if (!*sde || *end || errno || sde[0] == '-' || v > (unsigned long long)INT64_MAX) {
			fprintf(stderr, "rubick sim: SOURCE_DATE_EPOCH: '%s' is not a non-negative "
			                "integer (seconds since 1970-01-01 UTC)\n", sde);
			return RK_EXIT_FAILURE;
		}
		t = (time_t)v;
	}
	struct tm tm;
	if (!gmtime_r(&t, &tm) ||
	    !strftime(p->timestamp, sizeof(p->timestamp), "%Y-%m-%dT%H:%M:%SZ", &tm)) {
		fprintf(stderr, "rubick sim: SOURCE_DATE_EPOCH: '%s' is past the calendar\n",
		        sde ? sde : "");
		return RK_EXIT_FAILURE;
	}
	struct utsname u;
	snprintf(p->host, sizeof(p->host), "%s", uname(&u) ? "" : u.nodename);
	return 0;
}

void rk_cli_prov_fini(struct rk_cli_prov *p)
{
	free(p->wseeds);
	free(p->pseeds);
	p->wseeds = p->pseeds = NULL;
	p->n_reps = 0;
}

int rk_cli_prov_reps(struct rk_cli_prov *p, int n)
{
	p->wseeds = calloc((size_t)n, sizeof(*p->wseeds));
	p->pseeds = calloc((size_t)n, sizeof(*p->pseeds));
	if (!p->wseeds || !p->pseeds) {
		rk_cli_prov_fini(p);
		return RK_ENOMEM;
	}
	p->n_reps = n;
	return 0;
}

int rk_cli_prov_add(struct rk_cli_prov *p, const char *role, const char *path)
{
	if (p->n_inputs == RK_CLI_PROV_INPUTS)
		return 0;
	int k = p->n_inputs;
	struct stat st;
	struct rk_error err;
	int dir = !stat(path, &st) && S_ISDIR(st.st_mode);
	int rc = dir ? rk_cli_sha256_dir(path, p->hex[k], &err)
	             : rk_cli_sha256_file(path, p->hex[k], &err);
	if (rc) {
		fprintf(stderr, "rubick sim: provenance of the %s: %s\n", role, err.msg);
		return RK_EXIT_FAILURE;
	}
	snprintf(p->roles[k], sizeof(p->roles[k]), "%s", role);
	snprintf(p->paths[k], sizeof(p->paths[k]), "%s", path);
	p->inputs[k] = (struct rk_report_input){p->roles[k], p->paths[k], dir ? "dir" : "file",
	                                        p->hex[k]};
	p->n_inputs++;
	return 0;
}

/* Append printf(fmt, ...) to p->draws, "; "-separated. */
static void say(struct rk_cli_prov *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct rk_cli_prov *p, const char *fmt, ...)
{
	size_t n = strlen(p->draws);
	if (n && n + 2 < sizeof(p->draws)) {
		memcpy(p->draws + n, "; ", 3);
		n += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->draws + n, sizeof(p->draws) - n, fmt, ap);
	va_end(ap);
}

void rk_cli_prov_draws(struct rk_cli_prov *p, const struct rk_cli_prov_draws *d)
{
	const struct rk_trace *t = d->trace;
	size_t drawn = 0;
	for (size_t i = 0; i < t->n; i++)
		drawn += (size_t)(t->jobs[i].duration_estimated != 0);
	p->draws[0] = '\0';
	/* The three places the workload seed enters (docs/sim.md "Seeds and repetitions"):
	 * the trace readers (model mapping, Sia/Pollux run times), --poisson, --elastic-share. */
	if (t->n_mapped)
		say(p, "model mapping of %zu of %zu %s job(s) to zoo models (the trace names no "
		       "zoo model for them)", t->n_mapped, t->n, t->format);
	if (drawn)
		say(p, "run-time draws of %zu %s job(s) the trace gives no run time (log-uniform "
		       "in their application's GPU-hour bucket)", drawn, t->format);
	if (d->poisson)
		say(p, "Poisson arrival times of all %zu job(s) (--poisson %s)", t->n, d->poisson);
	if (d->elastic_share > 0)
		say(p, "which jobs are elastic (--elastic-share %g: %d of %d job(s) at workload seed "
		       "%" PRIu64 ")", d->elastic_share, d->n_elastic, d->n_jobs, d->first_seed);
	if (!p->draws[0])
		snprintf(p->draws, sizeof(p->draws),
		         "nothing: this %s trace has no seeded part (no model mapped, no run time "
		         "drawn; no --poisson, no --elastic-share)", t->format);
}

void rk_cli_prov_meta(const struct rk_cli_prov *p, struct rk_report_meta *m)
{
	m->source = p->source;
	m->commit = p->commit;
	m->dirty = p->dirty;
	m->build_type = RK_BUILD_TYPE;
	m->sanitize = RK_BUILD_SANITIZE;
	m->timestamp = p->timestamp;
	m->host = p->host;
	m->inputs = p->inputs;
	m->n_inputs = p->n_inputs;
	m->rep_workload_seeds = p->wseeds;
	m->rep_policy_seeds = p->pseeds;
	m->n_reps = p->n_reps;
	m->workload_seed_draws = p->draws;
}
