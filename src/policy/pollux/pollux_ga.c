/*
 * Pollux's genetic algorithm over allocation matrices (Qiao et al., OSDI 2021,
 * §4.2). The OSDI'21 artifact runs pymoo's NSGA-II with a second objective
 * (cluster utility, for autoscaling) and then takes the state of best fitness;
 * with a fixed cluster only the fitness decides, so this is the same
 * (mu + lambda) evolution with one objective: binary tournaments, the
 * artifact's crossover, mutation and repair, and the fittest `pop` of parents
 * and children surviving each generation.
 */
#include "policy/pollux/pollux_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double unit(uint64_t *rng)
{
	return (double)(pollux_rand(rng) >> 11) * (1.0 / 9007199254740992.0);
}

static int below(uint64_t *rng, int n)
{
	return n > 0 ? (int)(pollux_rand(rng) % (uint64_t)n) : 0;
}

/*
 * The artifact's mutation of one state: (1) each job is reset to its base
 * row with probability 0.1; (2) each job is picked with probability 0.1 and
 * each of its GPUs' nodes zeroed with probability 0.1; (3) where a node has
 * a GPU free, the job's count there is redrawn uniformly from [now, node
 * GPUs] with probability 1/(nodes with a GPU free), or twice that chance
 * (p1 + p2 - p1 p2) where the job already runs there.
 */
static void mutate(const struct pollux_problem *pr, int *s, int *free_gpus, uint64_t *rng)
{
	int J = pr->n_jobs, N = pr->n_nodes;
	for (int j = 0; j < J; j++) {
		int *row = s + (size_t)j * N;
		if (unit(rng) < 0.1)
			memcpy(row, pr->base + (size_t)j * N, sizeof(int) * (size_t)N);
		if (unit(rng) < 0.1)
			for (int n = 0; n < N; n++)
				if (row[n] && unit(rng) < 0.1)
					row[n] = 0;
	}
	for (int n = 0; n < N; n++) {
		free_gpus[n] = pr->node_gpus[n];
		for (int j = 0; j < J; j++)
			free_gpus[n] -= s[(size_t)j * N + n];
	}
	int n_free = 0;
	for (int n = 0; n < N; n++)
		n_free += free_gpus[n] >= 1;
	if (!n_free)
		return;
	double p1 = 1.0 / n_free;
	for (int j = 0; j < J; j++) {
		int *row = s + (size_t)j * N, n_here = 0;
		for (int n = 0; n < N; n++)
			n_here += row[n] > 0 && free_gpus[n] >= 1;
		double p2 = n_here ? 1.0 / n_here : 0.0;
		for (int n = 0; n < N; n++) {
			if (free_gpus[n] < 1)
				continue;
			double p = row[n] > 0 ? p1 + p2 - p1 * p2 : p1;
			if (unit(rng) < p)
				row[n] += below(rng, pr->node_gpus[n] - row[n] + 1);
		}
	}
}

/* Binary tournament on fitness (NSGA-II's with a single front). */
static int tournament(const double *fit, int n, uint64_t *rng)
{
	int a = below(rng, n), b = below(rng, n);
	return fit[a] >= fit[b] ? a : b;
}

struct ranked {
	double fit;
	int idx;
};

/* Fittest first; ties by index, so the order never depends on qsort. */
static int by_fitness(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->fit != y->fit)
		return x->fit > y->fit ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

int pollux_ga_search(const struct pollux_problem *pr, const struct pollux_ga_opts *opts,
		     const int *seeds, int n_seeds, int *best, double *fitness, int *final,
		     int *n_final, struct rk_error *err)
{
	if (n_seeds < 1 || !opts || opts->pop < 2 || opts->gens < 0 || pr->n_nodes < 1 ||
	    pr->n_jobs < 0)
		return rk_error_set(err, RK_EINVAL,
				    "pollux: search needs a seed state, pop >= 2, gens >= 0 and a node");
	size_t cells = (size_t)pr->n_jobs * (size_t)pr->n_nodes;
	int pop = opts->pop, cap = pop + pop + n_seeds; /* parents (<= max(pop, seeds)) + children */
	int rc = RK_ENOMEM;
	int *s = malloc(sizeof(int) * (cells ? cells : 1) * (size_t)cap);
	int *tmp = malloc(sizeof(int) * (cells ? cells : 1) * (size_t)cap);
	double *fit = malloc(sizeof(double) * (size_t)cap);
	struct ranked *rk = malloc(sizeof(*rk) * (size_t)cap);
	int *free_gpus = malloc(sizeof(int) * (size_t)pr->n_nodes);
	struct pollux_memo *memo = pollux_memo_create(pr);
	if (!s || !tmp || !fit || !rk || !free_gpus || !memo) {
		rk_error_set(err, RK_ENOMEM, "pollux: out of memory for the search");
		goto out;
	}
	uint64_t rng = opts->seed ^ 0x706f6c6c7578ULL; /* "pollux" */
	int n = n_seeds < pop ? n_seeds : pop;
	if (n_seeds > pop)
		n = n_seeds; /* every seed competes once; survival trims to pop */
	memcpy(s, seeds, sizeof(int) * cells * (size_t)n);
	/* Fewer seeds than pop (the first round): the rest of the first
	 * population are mutants of the seeds, so that the first tournaments
	 * choose among pop states (pymoo starts from the seeds alone; with one
	 * seed its first generations only breed copies). */
	for (; n < pop; n++)
		memcpy(s + cells * (size_t)n, seeds + cells * (size_t)(n % n_seeds),
		       sizeof(int) * cells);
	for (int i = 0; i < n; i++) {
		int *x = s + cells * (size_t)i;
		if (i >= n_seeds)
			mutate(pr, x, free_gpus, &rng);
		pollux_repair(pr, x, &rng);
		fit[i] = pollux_fitness(pr, memo, x);
	}
	for (int g = 0; g < opts->gens; g++) {
		int m = n;
		for (int c = 0; c < pop; c += 2) {
			const int *a = s + cells * (size_t)tournament(fit, n, &rng);
			const int *b = s + cells * (size_t)tournament(fit, n, &rng);
			/* Single-point crossover over jobs: rows before the point swap. */
			int point = below(&rng, pr->n_jobs);
			int kids = pop - c < 2 ? 1 : 2;
			for (int k = 0; k < kids; k++) {
				int *child = s + cells * (size_t)(m + k);
				const int *head = k ? a : b, *tail = k ? b : a;
				size_t split = (size_t)point * (size_t)pr->n_nodes;
				memcpy(child, head, sizeof(int) * split);
				memcpy(child + split, tail + split, sizeof(int) * (cells - split));
				mutate(pr, child, free_gpus, &rng);
				pollux_repair(pr, child, &rng);
				fit[m + k] = pollux_fitness(pr, memo, child);
			}
			m += kids;
		}
		/* Survival: the fittest pop of parents and children. */
		for (int i = 0; i < m; i++)
			rk[i] = (struct ranked){fit[i], i};
		qsort(rk, (size_t)m, sizeof(*rk), by_fitness);
		int keep = m < pop ? m : pop;
		for (int i = 0; i < keep; i++)
			memcpy(tmp + cells * (size_t)i, s + cells * (size_t)rk[i].idx,
			       sizeof(int) * cells);
		memcpy(s, tmp, sizeof(int) * cells * (size_t)keep);
		for (int i = 0; i < keep; i++)
			fit[i] = rk[i].fit;
		n = keep;
	}
	int bi = 0;
	for (int i = 1; i < n; i++)
		if (fit[i] > fit[bi])
			bi = i;
	memcpy(best, s + cells * (size_t)bi, sizeof(int) * cells);
	*fitness = fit[bi];
	if (final) {
		int k = n < pop ? n : pop;
		memcpy(final, s, sizeof(int) * cells * (size_t)k);
		if (n_final)
			*n_final = k;
	}
	rc = RK_OK;
out:
	free(s);
	free(tmp);
	free(fit);
	free(rk);
	free(free_gpus);
	pollux_memo_destroy(memo);
	return rc;
}
