/* Natural merge sort (runsort.h): bottom-up passes merging adjacent ascending runs. */
#include "rubick/runsort.h"

#include <string.h>

/* End of the ascending (non-decreasing) run of a[] starting at i. */
static size_t run_end(const unsigned char *a, size_t i, size_t n, size_t size,
                      int (*cmp)(const void *, const void *))
{
	size_t j = i + 1;
	while (j < n && cmp(a + (j - 1) * size, a + j * size) <= 0)
		j++;
	return j;
}

/* Merge a[lo, mid) and a[mid, hi) into out[lo, hi); ties from the left run first. */
static void merge(const unsigned char *a, unsigned char *out, size_t lo, size_t mid, size_t hi,
                  size_t size, int (*cmp)(const void *, const void *))
{
	size_t i = lo, j = mid, o = lo;
	while (i < mid && j < hi) {
		if (cmp(a + j * size, a + i * size) < 0)
			memcpy(out + o++ * size, a + j++ * size, size);
		else
			memcpy(out + o++ * size, a + i++ * size, size);
	}
	memcpy(out + o * size, a + i * size, (mid - i) * size);
	o += mid - i;
	memcpy(out + o * size, a + j * size, (hi - j) * size);
}

void rk_runsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *),
                void *tmp)
{
	unsigned char *a = base, *b = tmp;
	if (n < 2)
		return;
	for (;;) {
		/* One pass: merge runs pairwise from a into b; runs counts them all. */
		size_t runs = 0;
		for (size_t i = 0; i < n;) {
			size_t mid = run_end(a, i, n, size, cmp);
			runs++;
			if (mid == n) {
				if (i == 0)
					break; /* a is one run: sorted */
				memcpy(b + i * size, a + i * size, (n - i) * size);
				break;
			}
			size_t hi = run_end(a, mid, n, size, cmp);
			runs++;
			merge(a, b, i, mid, hi, size, cmp);
			i = hi;
		}
		if (runs == 1)
			break;
		unsigned char *t = a;
		a = b;
		b = t;
	}
	if (a != base)
		memcpy(base, a, n * size);
}
