/*
 * Timing helpers the benchmarks share: clocks, medians and the in-run
 * reference loop that lets figures from different machines compare as ratios
 * (bench/README.md). Header-only (static inline) so that each bench stays one
 * executable built from its own file.
 */
#ifndef RUBICK_BENCH_UTIL_H
#define RUBICK_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

/* Wall-clock nanoseconds (CLOCK_MONOTONIC), for timings far below a scheduler tick. */
static inline double bench_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* This process's CPU time in ms: a loaded machine does not inflate it. */
static inline double bench_cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* qsort comparator: ascending doubles. */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0..n) (n >= 1); sorts v in place. */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Timed loops store their result here so that the compiler keeps them. */
static volatile double bench_sink;

/* The in-run reference: 1000 dependent multiply-adds, in ns. */
static inline double bench_reference_ns(void)
{
	double t0 = bench_mono_ns(), x = 1.0;
	for (int i = 0; i < 1000; i++)
		x = x * 0.999999 + 1e-9;
	bench_sink = x;
	return bench_mono_ns() - t0;
}

#endif
