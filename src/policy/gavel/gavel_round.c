/*
 * Gavel baselines, part 3 (see gavel.c): the round-based mechanism
 * (Narayanan et al., OSDI 2020, §5 "Scheduling Mechanism"). An allocation X
 * is realised over rounds of fixed length: each round, the priority of
 * (job, type) is its share X[j][t] over the fraction of the job's rounds
 * spent on t so far, and jobs are taken greedily by priority, each on one
 * type, while that type has GPUs for the job's scale factor. A pair that got
 * less than its share rises in priority, so the realised fractions track X.
 */
#include "policy/gavel/gavel_internal.h"

#include <math.h>
#include <stdlib.h>

struct pair {
	double prio;
	int job, type;
};

static int by_prio_desc(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return (x->type > y->type) - (x->type < y->type);
}

int gavel_round_pick(const struct gavel_problem *p, const double *x, const int *rounds,
                     const int *rounds_on, const int *free_gpus, int *pick)
{
	int nj = p->n_jobs, nt = p->n_types;
	for (int j = 0; j < nj; j++)
		pick[j] = -1;
	if (nj == 0)
		return 0;
	struct pair *v = malloc((size_t)nj * nt * sizeof(*v));
	if (!v)
		return RK_ENOMEM;
	int n = 0;
	for (int j = 0; j < nj; j++)
		for (int t = 0; t < nt; t++) {
			size_t c = (size_t)j * nt + t;
			double tp = p->tput[c];
			if (!(tp > 0) || !isfinite(tp) || p->scale[j] < 1 ||
			    p->scale[j] > p->cap[t])
				continue; /* never on a type the job cannot run on */
			double share = x[c] > 0 ? x[c] : 0;
			double prio;
			if (share <= 0)
				prio = -1.0 /
				       (1.0 +
				        rounds_on[c]); /* unallocated: last, least-served first */
			else if (rounds[j] > 0 && rounds_on[c] > 0)
				prio = share / ((double)rounds_on[c] / rounds[j]);
			else
				prio = share * GAVEL_UNSERVED_PRIORITY;
			v[n++] = (struct pair){prio, j, t};
		}
	qsort(v, (size_t)n, sizeof(*v), by_prio_desc);
	int left[GAVEL_MAX_TYPES];
	for (int t = 0; t < nt; t++)
		left[t] = free_gpus[t];
	for (int k = 0; k < n; k++) {
		int j = v[k].job, t = v[k].type;
		if (pick[j] >= 0 || left[t] < p->scale[j])
			continue;
		pick[j] = t;
		left[t] -= p->scale[j];
	}
	free(v);
	return 0;
}
