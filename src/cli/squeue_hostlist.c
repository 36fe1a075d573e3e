/*
 * Host lists as Slurm prints them (hostlist.c's ranged form): n1,n2,n3,n5 is
 * n[1-3,5]. Names group by the text before their trailing digits; numbers
 * written with a leading zero group only with those of their width (n01..n03
 * stay zero-padded); a name without digits stands alone.
 */
#include "cli/squeue.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct host {
	const char *name;
	size_t plen; /* the prefix: name up to its trailing digits */
	int digits;  /* trailing digits; 0 when none */
	int width;   /* the zero-padded width (n01: 2), 0 when not padded */
	long long num;
	int group; /* index of the group's first member */
};

static void split(const char *name, struct host *h)
{
	size_t len = strlen(name), p = len;
	while (p > 0 && name[p - 1] >= '0' && name[p - 1] <= '9' && len - p < 18)
		p--;
	h->name = name;
	h->plen = p;
	h->digits = (int)(len - p);
	h->width = h->digits > 1 && name[p] == '0' ? h->digits : 0;
	h->num = h->digits ? strtoll(name + p, NULL, 10) : 0;
}

static int same_group(const struct host *a, const struct host *b)
{
	return a->digits && b->digits && a->width == b->width && a->plen == b->plen &&
	       !strncmp(a->name, b->name, a->plen);
}

static int by_num(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return (x > y) - (x < y);
}

/* Append to buf at *len; 0, or -1 once it no longer fits. */
static int put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= cap - *len) {
		buf[cap - 1] = '\0';
		*len = cap - 1;
		return -1;
	}
	*len += (size_t)n;
	return 0;
}

/* One group's numbers (sorted, unique) as a,b-c. */
static int put_ranges(char *buf, size_t cap, size_t *len, const long long *v, int n, int width)
{
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) {
		int j = i;
		while (j + 1 < n && v[j + 1] == v[j] + 1)
			j++;
		rc = put(buf, cap, len, "%s%0*lld", i ? "," : "", width, v[i]);
		if (!rc && j > i)
			rc = put(buf, cap, len, "-%0*lld", width, v[j]);
		i = j;
	}
	return rc;
}

int rk_sq_hostlist(const char *const *names, int n, char *buf, size_t cap)
{
	if (!cap)
		return -1;
	buf[0] = '\0';
	struct host *h = calloc((size_t)(n > 0 ? n : 1), sizeof(*h));
	long long *v = calloc((size_t)(n > 0 ? n : 1), sizeof(*v));
	int rc = h && v ? 0 : -1;
	size_t len = 0;
	for (int i = 0; i < n && !rc; i++) {
		split(names[i], &h[i]);
		h[i].group = i;
		for (int k = 0; k < i; k++)
			if (h[k].group == k && (same_group(&h[k], &h[i]) ||
			                        (!h[i].digits && !strcmp(h[k].name, h[i].name)))) {
				h[i].group = k;
				break;
			}
	}
	int first = 1;
	for (int i = 0; i < n && !rc; i++) {
		if (h[i].group != i)
			continue;
		int m = 0;
		for (int k = i; k < n; k++)
			if (h[k].group == i)
				v[m++] = h[k].num;
		qsort(v, (size_t)m, sizeof(*v), by_num);
		int u = 0;
		for (int k = 0; k < m; k++)
			if (!u || v[k] != v[u - 1])
				v[u++] = v[k];
		rc = put(buf, cap, &len, "%s%.*s", first ? "" : ",", (int)h[i].plen, h[i].name);
		first = 0;
		if (rc || !h[i].digits)
			continue;
		if (u == 1)
			rc = put(buf, cap, &len, "%0*lld", h[i].width, v[0]);
		else if (!(rc = put(buf, cap, &len, "[")) &&
		         !(rc = put_ranges(buf, cap, &len, v, u, h[i].width)))
			rc = put(buf, cap, &len, "]");
	}
	free(h);
	free(v);
	return rc;
}
