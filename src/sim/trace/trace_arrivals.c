/*
 * Arrival-rate changes of a parsed trace (trace.h), for load sweeps: the
 * same jobs arriving faster or slower, as Pollux (OSDI'21, §5.3, Fig. 9)
 * replays its workload at 0.5x-2x the original job arrival rate, or with
 * Poisson arrivals as Sia and Pollux draw their synthetic workloads.
 * Only submit times change; job order, durations and requests stay.
 */
#include "rubick/trace.h"

#include <math.h>

/* splitmix64 (Steele et al., 2014), the generator of trace_map.c. */
static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int rk_trace_scale_load(struct rk_trace *t, double factor, struct rk_error *err)
{
	if (!t || !(factor > 0) || !isfinite(factor) || factor > 1e6)
		return rk_error_set(err, RK_EINVAL, "load factor must be in (0, 1e6], got %g",
		                    factor);
	if (t->n == 0)
		return 0;
	/* Inter-arrival times divided by F: every gap from the first arrival. */
	int64_t t0 = t->jobs[0].submit_ms;
	for (size_t i = 1; i < t->n; i++) {
		double d = (double)(t->jobs[i].submit_ms - t0) / factor;
		if (d > 9e15)
			return rk_error_set(err, RK_ERANGE,
			                    "load factor %g: arrival times overflow", factor);
	}
	for (size_t i = 1; i < t->n; i++) /* rounding keeps the order: the map is monotone */
		t->jobs[i].submit_ms = t0 + llround((double)(t->jobs[i].submit_ms - t0) / factor);
	return 0;
}

double rk_trace_mean_rate_per_h(const struct rk_trace *t)
{
	if (!t || t->n < 2 || t->jobs[t->n - 1].submit_ms <= t->jobs[0].submit_ms)
		return 0.0;
	return (double)(t->n - 1) * 3.6e6 /
	       (double)(t->jobs[t->n - 1].submit_ms - t->jobs[0].submit_ms);
}

/* The next exponential gap (ms) of mean `mean_ms`; *state advances. */
static double next_gap(uint64_t *state, double mean_ms)
{
	*state += 0x9e3779b97f4a7c15ULL;
	double u = ((double)(mix64(*state) >> 11) + 1.0) / 9007199254740992.0; /* (0, 1] */
	return -log(u) * mean_ms; /* exponential gaps: a Poisson process */
}

int rk_trace_poisson(struct rk_trace *t, double rate_per_h, uint64_t seed, struct rk_error *err)
{
	if (!t || !(rate_per_h > 0) || !isfinite(rate_per_h) || rate_per_h > 3.6e9)
		return rk_error_set(err, RK_EINVAL,
		                    "Poisson rate must be in (0, 3.6e9] jobs per hour, got %g",
		                    rate_per_h);
	if (t->n == 0)
		return 0;
	/* A stream of its own: the model mapping mixes the same seed with job names. */
	const uint64_t start = mix64(seed ^ 0x706f6973736f6e21ULL); /* "poisson!" */
	double mean_ms = 3.6e6 / rate_per_h, at = (double)t->jobs[0].submit_ms;
	uint64_t state = start;
	for (size_t i = 1; i < t->n; i++) /* first pass: nothing changes if it overflows */
		at += next_gap(&state, mean_ms);
	if (at > 9e15)
		return rk_error_set(err, RK_ERANGE,
		                    "Poisson rate %g per hour: arrival times overflow", rate_per_h);
	state = start;
	at = (double)t->jobs[0].submit_ms;
	for (size_t i = 1; i < t->n; i++) {
		at += next_gap(&state, mean_ms);
		int64_t ms = llround(at);
		t->jobs[i].submit_ms =
		    ms > t->jobs[i - 1].submit_ms ? ms : t->jobs[i - 1].submit_ms;
	}
	return 0;
}
