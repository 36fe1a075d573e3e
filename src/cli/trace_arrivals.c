/*
 * Load sweeps in `rubick trace` and `rubick sim` (trace_arrivals.h): one
 * command turns a trace into the same jobs at another arrival rate (native
 * CSV, or replayed at once), so `for f in 0.5 1 1.5 2` is a sweep
 * (docs/sim.md).
 */
#include "cli/trace_arrivals.h"

#include "cli/commands.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int positive(const char *cmd, const char *flag, const char *v, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (end == v || *end || errno || !isfinite(x) || !(x > 0) || x > 1e6) {
		fprintf(stderr, "%s: %s: expected a number in (0, 1e6], got '%s' (%s --help)\n", cmd,
			flag, v, cmd);
		return RK_EXIT_USAGE;
	}
	*out = x;
	return 0;
}

int rk_cli_trace_arrivals_arg(const char *cmd, const char *flag, const char *v, double *load,
			      const char **poisson)
{
	double x;
	if (!strcmp(flag, "--load"))
		return positive(cmd, flag, v, load);
	if (strcmp(v, "mean") && positive(cmd, flag, v, &x))
		return RK_EXIT_USAGE;
	*poisson = v;
	return 0;
}

int rk_cli_trace_arrivals_apply(const char *cmd, struct rk_trace *t, double load,
				const char *poisson, uint64_t seed, char *note, size_t cap)
{
	struct rk_error err;
	size_t n = 0;
	note[0] = '\0';
	if (poisson) {
		double rate =
		    !strcmp(poisson, "mean") ? rk_trace_mean_rate_per_h(t) : strtod(poisson, NULL);
		if (!(rate > 0)) {
			fprintf(stderr, "%s: --poisson mean: the trace has no arrival rate (fewer than "
				"two jobs, or all at one instant)\n",
				cmd);
			return RK_EXIT_FAILURE;
		}
		if (rk_trace_poisson(t, rate, seed, &err)) {
			fprintf(stderr, "%s: --poisson: %s\n", cmd, err.msg);
			return RK_EXIT_FAILURE;
		}
		int w = snprintf(note, cap, "Poisson, %.6g jobs/h (seed %llu)", rate,
		                 (unsigned long long)seed);
		n = w > 0 && (size_t)w < cap ? (size_t)w : 0;
	}
	if (load > 0) {
		if (rk_trace_scale_load(t, load, &err)) {
			fprintf(stderr, "%s: --load: %s\n", cmd, err.msg);
			return RK_EXIT_FAILURE;
		}
		snprintf(note + n, cap - n, "%sload factor %g (inter-arrival times / %g)",
		         n ? "; " : "", load, load);
	}
	return 0;
}
