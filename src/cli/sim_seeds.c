/*
 * Seeds, repetitions, the invocation record and the --out check of
 * `rubick sim` (sim_seeds.h). One seed moves a Sia Philly workload's
 * average JCT by ±15% (issue 14), so a comparison needs several seeds and
 * an interval; the record lets a reader rerun exactly what a report shows.
 */
#include "cli/sim_seeds.h"

#include "cli/commands.h"
#include "cli/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_u64(const char *s, const char *end, uint64_t *out)
{
	if (s == end || *s < '0' || *s > '9')
		return -1;
	char *e;
	errno = 0;
	unsigned long long x = strtoull(s, &e, 10);
	if (errno || e != end)
		return -1;
	*out = (uint64_t)x;
	return 0;
}

int rk_cli_seeds_parse(const char *v, uint64_t *first, uint64_t *last)
{
	const char *dash = strchr(v, '-');
	uint64_t a, b;
	if (!dash || parse_u64(v, dash, &a) ||
	    parse_u64(dash + 1, dash + 1 + strlen(dash + 1), &b)) {
		fprintf(stderr,
		        "rubick sim: --seeds: expected A-B (non-negative integers), got '%s'\n", v);
		return RK_EXIT_USAGE;
	}
	if (b <= a || b - a >= RK_CLI_SEEDS_MAX) {
		fprintf(stderr,
		        "rubick sim: --seeds: '%s': needs A < B and at most %d seeds (an "
		        "interval needs two)\n",
		        v, RK_CLI_SEEDS_MAX);
		return RK_EXIT_USAGE;
	}
	*first = a;
	*last = b;
	return 0;
}

/* Rows per policy: the figures, then GPU-hours, reconfigurations per job and GPU utilisation. */
#define SV_ROWS (RK_FIG_COUNT + 3)

int rk_cli_seed_values_init(struct rk_cli_seed_values *sv, int n_pols, int n_seeds, int keep)
{
	memset(sv, 0, sizeof(*sv));
	size_t cells = (size_t)n_pols * (size_t)n_seeds;
	sv->v = calloc(cells * SV_ROWS, sizeof(*sv->v));
	sv->seed = calloc((size_t)n_seeds, sizeof(*sv->seed));
	sv->per = calloc((size_t)n_pols, sizeof(*sv->per));
	if (keep) {
		sv->outc = calloc(cells, sizeof(*sv->outc));
		sv->n_outc = calloc(cells, sizeof(*sv->n_outc));
	}
	if (!sv->v || !sv->seed || !sv->per || (keep && (!sv->outc || !sv->n_outc))) {
		rk_cli_seed_values_fini(sv);
		return RK_ENOMEM;
	}
	sv->n_pols = n_pols;
	sv->n_seeds = n_seeds;
	for (int p = 0; p < n_pols; p++) {
		struct rk_report_seeds *per = &sv->per[p];
		per->n = n_seeds;
		for (int k = 0; k < RK_FIG_COUNT; k++)
			per->values[k] = sv->v + ((size_t)p * SV_ROWS + (size_t)k) * n_seeds;
		per->gpu_hours = sv->v + ((size_t)p * SV_ROWS + RK_FIG_COUNT) * n_seeds;
		per->reconfigs = sv->v + ((size_t)p * SV_ROWS + RK_FIG_COUNT + 1) * n_seeds;
		per->gpu_util = sv->v + ((size_t)p * SV_ROWS + RK_FIG_COUNT + 2) * n_seeds;
		per->seed = sv->seed;
		if (keep) {
			per->outcomes = (const struct rk_job_outcome *const *)(sv->outc +
			                                                       (size_t)p * n_seeds);
			per->n_outcomes = sv->n_outc + (size_t)p * n_seeds;
		}
	}
	return 0;
}

void rk_cli_seed_values_fini(struct rk_cli_seed_values *sv)
{
	for (int p = 0; sv->outc && p < sv->n_pols; p++)
		for (int k = 1; k < sv->n_seeds; k++) /* [p][0] is the run's own */
			free(sv->outc[(size_t)p * sv->n_seeds + k]);
	free(sv->v);
	free(sv->seed);
	free(sv->outc);
	free(sv->n_outc);
	free(sv->per);
	memset(sv, 0, sizeof(*sv));
}

void rk_cli_seed_values_set(struct rk_cli_seed_values *sv, int pol, int rep, uint64_t seed,
                            const struct rk_sim_summary *s, struct rk_sim_result *res)
{
	for (int k = 0; k < RK_FIG_COUNT; k++)
		sv->v[((size_t)pol * SV_ROWS + (size_t)k) * sv->n_seeds + rep] =
		    rk_report_figure_value(s, (enum rk_report_figure)k);
	sv->v[((size_t)pol * SV_ROWS + RK_FIG_COUNT) * sv->n_seeds + rep] = s->gpu_hours;
	sv->v[((size_t)pol * SV_ROWS + RK_FIG_COUNT + 1) * sv->n_seeds + rep] = s->reconfigs_per_job;
	sv->v[((size_t)pol * SV_ROWS + RK_FIG_COUNT + 2) * sv->n_seeds + rep] = s->gpu_util;
	sv->seed[rep] = seed;
	if (!sv->outc)
		return;
	size_t c = (size_t)pol * sv->n_seeds + rep;
	sv->outc[c] = res->outcomes;
	sv->n_outc[c] = res->n_outcomes;
	if (rep > 0) { /* taken over: rk_sim_result_fini no longer frees them */
		res->outcomes = NULL;
		res->n_outcomes = 0;
	}
}

/* Characters a POSIX shell reads literally outside quotes. */
static int shell_plain(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		            "_./:=,+-@%^",
		            *s))
			return 0;
	return 1;
}

/* Append s to the command line; *full = 1 once it no longer fits. */
static void put_s(struct rk_cli_meta *m, size_t *n, const char *s, int *full)
{
	size_t len = strlen(s);
	if (*full || *n + len + 4 >= sizeof(m->command)) {
		*full = 1;
		return;
	}
	memcpy(m->command + *n, s, len);
	*n += len;
}

void rk_cli_meta_command(struct rk_cli_meta *m, int argc, char **argv)
{
	size_t n = 0;
	int full = 0;
	put_s(m, &n, "rubick", &full);
	for (int i = 0; i < argc; i++) {
		put_s(m, &n, " ", &full);
		if (shell_plain(argv[i])) {
			put_s(m, &n, argv[i], &full);
			continue;
		}
		put_s(m, &n, "'", &full);
		for (const char *c = argv[i]; *c; c++) {
			char one[2] = {*c, '\0'};
			put_s(m, &n, *c == '\'' ? "'\\''" : one, &full);
		}
		put_s(m, &n, "'", &full);
	}
	if (full) { /* put_s keeps 4 bytes free: room for "...\0" */
		memcpy(m->command + n, "...", 3);
		n += 3;
	}
	m->command[n] = '\0';
}

void rk_cli_meta_add(struct rk_cli_meta *m, const char *key, const char *fmt, ...)
{
	if (m->n == RK_CLI_META_MAX)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->store[m->n], sizeof(m->store[m->n]), fmt, ap);
	va_end(ap);
	snprintf(m->kstore[m->n], sizeof(m->kstore[m->n]), "%s", key);
	m->keys[m->n] = m->kstore[m->n];
	m->values[m->n] = m->store[m->n];
	m->n++;
}

int rk_cli_out_prepare(const char *dir)
{
	/* `--out results/run1/a` on a fresh checkout: make the parents, as `mkdir -p`. */
	char failed[4096];
	int e = rk_cli_mkdirs(dir, failed, sizeof(failed));
	int self = e && !strcmp(failed, dir);
	if (e == ENOTDIR && self) {
		fprintf(stderr, "rubick sim: --out: '%s' is not a directory\n", dir);
		return RK_EXIT_FAILURE;
	}
	if (e == ENOTDIR) {
		fprintf(stderr, "rubick sim: --out: cannot create '%s': '%s' is not a directory\n",
		        dir, failed);
		return RK_EXIT_FAILURE;
	}
	if (e) {
		fprintf(stderr, "rubick sim: --out: cannot create '%s': %s%s%s%s\n", dir,
		        self ? "" : "'", self ? "" : failed, self ? "" : "': ", strerror(e));
		return RK_EXIT_FAILURE;
	}
	char probe[4200];
	int w = snprintf(probe, sizeof(probe), "%s/.rubick-write-probe", dir);
	if (w < 0 || (size_t)w >= sizeof(probe)) {
		fprintf(stderr, "rubick sim: --out: path too long: '%s'\n", dir);
		return RK_EXIT_FAILURE;
	}
	/* access(W_OK) says yes to root on a read-only mount: try it instead. */
	int fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		fprintf(stderr, "rubick sim: --out: '%s' is not writable: %s\n", dir,
		        strerror(errno));
		return RK_EXIT_FAILURE;
	}
	close(fd);
	unlink(probe);
	return 0;
}
