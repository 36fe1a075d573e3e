/*
 * A stable natural merge sort: it merges the ascending runs the input already
 * has, so an input that is sorted but for a few records costs O(n)
 * comparisons, and any input O(n log n). For orders that change little from
 * one call to the next (a scheduler's queue, round after round), where qsort
 * pays O(n log n) every time.
 */
#ifndef RUBICK_RUNSORT_H
#define RUBICK_RUNSORT_H

#include <stddef.h>

/*
 * Sort n records of `size` bytes at `base` by `cmp` (qsort's contract),
 * stably: records that compare equal keep their input order. `tmp` is
 * scratch of n * size bytes the caller owns.
 */
void rk_runsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *),
                void *tmp);

#endif
