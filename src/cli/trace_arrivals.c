/*
 * Load sweeps in `rubick trace` (trace_arrivals.h): one command turns a
 * trace into the same jobs at another arrival rate, written as native CSV,
 * so `for f in 0.5 1 1.5 2` is a sweep (docs/sim.md).
 */
#include "cli/trace_arrivals.h"

#include "cli/commands.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int positive(const char *flag, const char *v, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (end == v || *end || errno || !isfinite(x) || !(x > 0) || x > 1e6) {
		fprintf(stderr,
		        "rubick trace: %s: expected a number in (0, 1e6], got '%s' "
		        "(rubick trace --help)\n",
		        flag, v);
		return RK_EXIT_USAGE;
	}
	*out = x;
	return 0;
}

int rk_cli_trace_arrivals_arg(const char *flag, const char *v, double *load, const char **poisson)
{
	double x;
	if (!strcmp(flag, "--load"))
		return positive(flag, v, load);
	if (strcmp(v, "mean") && positive(flag, v, &x))
		return RK_EXIT_USAGE;
	*poisson = v;
	return 0;
}

int rk_cli_trace_arrivals_apply(struct rk_trace *t, double load, const char *poisson, uint64_t seed,
                                char *note, size_t cap)
{
	struct rk_error err;
	size_t n = 0;
	note[0] = '\0';
	if (poisson) {
		double rate =
		    !strcmp(poisson, "mean") ? rk_trace_mean_rate_per_h(t) : strtod(poisson, NULL);
		if (!(rate > 0)) {
			fprintf(stderr, "rubick trace: --poisson mean: the trace has no arrival "
			                "rate (fewer than two jobs, or all at one instant)\n");
			return RK_EXIT_FAILURE;
		}
		if (rk_trace_poisson(t, rate, seed, &err)) {
			fprintf(stderr, "rubick trace: --poisson: %s\n", err.msg);
			return RK_EXIT_FAILURE;
		}
		int w = snprintf(note, cap, "Poisson, %.6g jobs/h (seed %llu)", rate,
		                 (unsigned long long)seed);
		n = w > 0 && (size_t)w < cap ? (size_t)w : 0;
	}
	if (load > 0) {
		if (rk_trace_scale_load(t, load, &err)) {
			fprintf(stderr, "rubick trace: --load: %s\n", err.msg);
			return RK_EXIT_FAILURE;
		}
		snprintf(note + n, cap - n, "%sload factor %g (inter-arrival times / %g)",
		         n ? "; " : "", load, load);
	}
	return 0;
}
