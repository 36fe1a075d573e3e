/* Shared helpers of `rubick plan`, `rubick curve` and `rubick demo` (whitebox.h). */
#include "cli/whitebox.h"

#include "cli/commands.h"
#include "cli/util.h"
#include "rubick/fit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rk_wb_int(const char *cmd, const char *flag, const char *val, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = val ? strtol(val, &end, 10) : 0;
	if (!val || end == val || *end || errno || v < lo || v > hi) {
		fprintf(stderr, "rubick %s: %s: '%s' must be an integer in %ld..%ld\n", cmd, flag,
			val ? val : "", lo, hi);
		return RK_EXIT_USAGE;
	}
	*out = v;
	return 0;
}

int rk_wb_space(const char *cmd, const char *val, struct rk_plan_space *out)
{
	struct rk_error err;
	if (rk_plan_space_parse(val ? val : "", "--space", out, &err)) {
		fprintf(stderr, "rubick %s: %s\n", cmd, err.msg);
		return RK_EXIT_USAGE;
	}
	return 0;
}

int rk_wb_flag(const char *cmd, void (*usage)(FILE *), const char *const *valued, int argc,
	       char **argv, int *i, int *json, const char **val)
{
	const char *f = argv[*i];
	*val = NULL;
	if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
		usage(stdout);
		return -1;
	}
	if (!strcmp(f, "--json")) {
		*json = 1;
		return 0;
	}
	const char *const *k = valued;
	while (*k && strcmp(f, *k))
		k++;
	if (!*k) {
		fprintf(stderr, "rubick %s: unknown option '%s' (see --help)\n", cmd, f);
		return RK_EXIT_USAGE;
	}
	if (*i + 1 >= argc) {
		fprintf(stderr, "rubick %s: %s: missing value\n", cmd, f);
		return RK_EXIT_USAGE;
	}
	*val = argv[++*i];
	return 0;
}

int rk_wb_zoo(const char *cmd, const char *zoo_flag, struct rk_zoo *zoo)
{
	struct rk_error err;
	rk_zoo_init(zoo);
	if (rk_cli_zoo_load(rk_cli_zoo_dir(zoo_flag), zoo, &err)) {
		fprintf(stderr, "rubick %s: %s\n", cmd, err.msg);
		return RK_EXIT_FAILURE;
	}
	return 0;
}

const struct rk_model *rk_wb_model(const char *cmd, const struct rk_zoo *zoo, const char *name)
{
	const struct rk_model *m = rk_zoo_find(zoo, name);
	if (m)
		return m;
	fprintf(stderr, "rubick %s: --model: '%s' is not in the zoo (models:", cmd, name);
	for (size_t i = 0; i < zoo->n_models; i++)
		fprintf(stderr, " %s", zoo->models[i].name);
	fprintf(stderr, ")\n");
	return NULL;
}

int rk_wb_params(const struct rk_model *m, const struct rk_perf_env *env,
		 struct rk_perf_params *k)
{
	if (m->perf_fitted) {
		*k = m->perf;
		return 1;
	}
	rk_perf_params_default(env->overlap, k);
	return 0;
}
