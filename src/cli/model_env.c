/*
 * --env KEY=V,... of `rubick model validate`, `fit` and `profile`: cluster
 * constants (perf.h) a deployment measured with its own micro-benchmarks; and
 * the number parsers every `rubick model` subcommand's flags use.
 */
#include "cli/model_env.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rk_cli_model_parse_double(const char *flag, const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || v <= lo || v >= hi) {
		fprintf(stderr, "rubick model: %s: '%s' must be a number in (%g, %g)\n", flag, s, lo,
			hi);
		return -1;
	}
	*out = v;
	return 0;
}

int rk_cli_model_parse_long(const char *flag, const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < lo || v > hi) {
		fprintf(stderr, "rubick model: %s: '%s' must be an integer in %ld..%ld\n", flag, s,
			lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

/* --env key=value,...: override cluster constants (perf.h), e.g. measured
 * by a deployment's own micro-benchmarks. */
int rk_cli_model_parse_env(const char *text, struct rk_perf_env *env)
{
	static const struct {
		const char *key;
		size_t off;
		int is_int;
	} keys[] = {
		{"nvlink_gbps", offsetof(struct rk_perf_env, nvlink_gbps), 0},
		{"pcie_gbps", offsetof(struct rk_perf_env, pcie_gbps), 0},
		{"host_mem_gbps", offsetof(struct rk_perf_env, host_mem_gbps), 0},
		{"net_gbps", offsetof(struct rk_perf_env, net_gbps), 0},
		{"nics_per_node", offsetof(struct rk_perf_env, nics_per_node), 1},
		{"gpus_per_node", offsetof(struct rk_perf_env, gpus_per_node), 1},
		{"gpu_tflops", offsetof(struct rk_perf_env, gpu_tflops), 0},
		{"recompute_factor", offsetof(struct rk_perf_env, recompute_factor), 0},
		{"tp_eff", offsetof(struct rk_perf_env, tp_eff), 0},
		{"grad_bytes", offsetof(struct rk_perf_env, grad_bytes), 0},
		{"act_bytes", offsetof(struct rk_perf_env, act_bytes), 0},
	};
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *tok = buf, *next; tok; tok = next) {
		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		char *eq = strchr(tok, '=');
		if (!eq) {
			fprintf(stderr, "rubick model: --env: '%s' is not key=value\n", tok);
			return -1;
		}
		*eq = '\0';
		size_t i = 0;
		while (i < sizeof(keys) / sizeof(keys[0]) && strcmp(keys[i].key, tok))
			i++;
		if (i == sizeof(keys) / sizeof(keys[0])) {
			fprintf(stderr, "rubick model: --env: unknown key '%s'\n", tok);
			return -1;
		}
		char *p = (char *)env + keys[i].off;
		if (keys[i].is_int) {
			long v;
			if (rk_cli_model_parse_long("--env", eq + 1, 1, 1024, &v) < 0)
				return -1;
			*(int *)(void *)p = (int)v;
		} else {
			double v;
			if (rk_cli_model_parse_double("--env", eq + 1, 0, 1e9, &v) < 0)
				return -1;
			*(double *)(void *)p = v;
		}
	}
	struct rk_error err;
	if (rk_perf_env_check(env, &err) < 0) {
		fprintf(stderr, "rubick model: --env: %s\n", err.msg);
		return -1;
	}
	return 0;
}

