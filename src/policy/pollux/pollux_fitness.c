/*
 * The objective and the constraints of Pollux's cluster-wide search (Qiao et
 * al., OSDI 2021, §4.2): the restart penalty, the power mean of speedups
 * (Eq. 5), the memo of speedups and the artifact's repair.
 */
#include "policy/pollux/pollux_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t pollux_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double pollux_restart_factor(double age_s, int restarts, double delay_s)
{
	if (!(age_s >= 0))
		age_s = 0;
	if (!(delay_s > 0))
		return 1.0;
	double f = (age_s - restarts * delay_s) / (age_s + delay_s);
	return f > 0 ? f : 0.0;
}

/* Speedups of each job at (nodes, replicas), -1 = not asked yet. */
struct pollux_memo {
	int *off;      /* n_jobs: first entry of the job's table */
	int *max_rep;  /* n_jobs: replicas axis 0..max_rep */
	double *v;
};

static int max_nodes_of(const struct pollux_problem *pr, int j)
{
	int m = pr->max_replicas[j];
	if (m > pr->n_nodes)
		m = pr->n_nodes;
	if (m > POLLUX_MAX_NODES_PER_JOB)
		m = POLLUX_MAX_NODES_PER_JOB;
	return m;
}

struct pollux_memo *pollux_memo_create(const struct pollux_problem *pr)
{
	struct pollux_memo *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->off = malloc(sizeof(int) * (size_t)(pr->n_jobs + 1));
	m->max_rep = malloc(sizeof(int) * (size_t)(pr->n_jobs + 1));
	if (!m->off || !m->max_rep)
		goto fail;
	size_t total = 0;
	for (int j = 0; j < pr->n_jobs; j++) {
		m->off[j] = (int)total;
		m->max_rep[j] = pr->max_replicas[j];
		total += (size_t)(max_nodes_of(pr, j) + 1) * (size_t)(pr->max_replicas[j] + 1);
	}
	m->v = malloc(sizeof(double) * (total ? total : 1));
	if (!m->v)
		goto fail;
	for (size_t i = 0; i < total; i++)
		m->v[i] = -1.0;
	return m;
fail:
	pollux_memo_destroy(m);
	return NULL;
}

void pollux_memo_destroy(struct pollux_memo *m)
{
	if (!m)
		return;
	free(m->off);
	free(m->max_rep);
	free(m->v);
	free(m);
}

static double speedup_of(const struct pollux_problem *pr, struct pollux_memo *memo, int j,
			 int nodes, int replicas)
{
	if (replicas <= 0)
		return 0.0;
	if (!memo || replicas > memo->max_rep[j] || nodes > max_nodes_of(pr, j))
		return pr->speedup(pr->ctx, j, nodes, replicas);
	double *slot = &memo->v[memo->off[j] + nodes * (memo->max_rep[j] + 1) + replicas];
	if (*slot < 0) {
		double s = pr->speedup(pr->ctx, j, nodes, replicas);
		*slot = s > 0 && isfinite(s) ? s : 0.0;
	}
	return *slot;
}

double pollux_fitness(const struct pollux_problem *pr, struct pollux_memo *memo, const int *state)
{
	if (pr->n_jobs <= 0)
		return 0.0;
	double acc = 0.0;
	for (int j = 0; j < pr->n_jobs; j++) {
		const int *row = state + (size_t)j * pr->n_nodes;
		const int *brow = pr->base + (size_t)j * pr->n_nodes;
		int replicas = 0, nodes = 0, moved = 0;
		for (int n = 0; n < pr->n_nodes; n++) {
			replicas += row[n];
			nodes += row[n] > 0;
			moved |= row[n] != brow[n];
		}
		double s = speedup_of(pr, memo, j, nodes, replicas) * pr->scale;
		if (moved)
			s *= pr->restart_factor[j];
		/* Eq. 5: the power mean; p -> 0 is the geometric mean. */
		if (pr->p == 0)
			acc += log(s > POLLUX_MEAN_EPS ? s : POLLUX_MEAN_EPS);
		else
			acc += pow(s + POLLUX_MEAN_EPS, pr->p);
	}
	acc /= pr->n_jobs;
	return pr->p == 0 ? exp(acc) : pow(acc, 1.0 / pr->p);
}

void pollux_repair(const struct pollux_problem *pr, int *state, uint64_t *rng)
{
	int J = pr->n_jobs, N = pr->n_nodes;
	/* One job spanning several nodes per node: the first in job order keeps it. */
	for (int n = 0; n < N; n++) {
		int taken = 0;
		for (int j = 0; j < J; j++) {
			int *row = state + (size_t)j * N;
			if (!row[n])
				continue;
			int spread = 0;
			for (int k = 0; k < N && spread < 2; k++)
				spread += row[k] > 0;
			if (spread < 2)
				continue;
			if (taken)
				row[n] = 0;
			taken = 1;
		}
	}
	/* Each job within max_replicas and POLLUX_MAX_NODES_PER_JOB nodes, keeping
	 * GPUs in a random order of its nodes (the artifact shuffles, so no node is
	 * favoured). Nodes are visited from a random start with a random stride
	 * coprime to N: a cheap random order, O(N) per job. */
	for (int j = 0; j < J; j++) {
		int *row = state + (size_t)j * N;
		int start = (int)(pollux_rand(rng) % (uint64_t)N), stride = 1;
		if (N > 2) {
			for (int tries = 0; tries < 8; tries++) {
				int s = 1 + (int)(pollux_rand(rng) % (uint64_t)(N - 1));
				int a = s, b = N;
				while (b) {
					int t = a % b;
					a = b;
					b = t;
				}
				if (a == 1) {
					stride = s;
					break;
				}
			}
		}
		int left = pr->max_replicas[j], nodes = 0;
		for (int i = 0, n = start; i < N; i++, n = (n + stride) % N) {
			if (!row[n])
				continue;
			if (nodes == POLLUX_MAX_NODES_PER_JOB || left == 0) {
				row[n] = 0;
				continue;
			}
			if (row[n] > left)
				row[n] = left;
			left -= row[n];
			nodes++;
		}
	}
	/* Node capacity: jobs earlier in order keep their GPUs. */
	for (int n = 0; n < N; n++) {
		int left = pr->node_gpus[n];
		for (int j = 0; j < J; j++) {
			int *c = &state[(size_t)j * N + n];
			if (*c > left)
				*c = left;
			left -= *c;
		}
	}
	/* Below min_replicas: nothing. */
	for (int j = 0; j < J; j++) {
		int *row = state + (size_t)j * N, sum = 0;
		for (int n = 0; n < N; n++)
			sum += row[n];
		if (sum < pr->min_replicas[j])
			memset(row, 0, sizeof(int) * (size_t)N);
	}
}

int pollux_feasible(const struct pollux_problem *pr, const int *state)
{
	int J = pr->n_jobs, N = pr->n_nodes;
	for (int j = 0; j < J; j++) {
		const int *row = state + (size_t)j * N;
		int sum = 0, nodes = 0;
		for (int n = 0; n < N; n++) {
			if (row[n] < 0)
				return 0;
			sum += row[n];
			nodes += row[n] > 0;
		}
		if (sum > pr->max_replicas[j] || nodes > POLLUX_MAX_NODES_PER_JOB ||
		    (sum > 0 && sum < pr->min_replicas[j]))
			return 0;
	}
	for (int n = 0; n < N; n++) {
		int used = 0, spread_here = 0;
		for (int j = 0; j < J; j++) {
			const int *row = state + (size_t)j * N;
			used += row[n];
			if (!row[n])
				continue;
			int nodes = 0;
			for (int k = 0; k < N; k++)
				nodes += row[k] > 0;
			spread_here += nodes > 1;
		}
		if (used > pr->node_gpus[n] || spread_here > 1)
			return 0;
	}
	return 1;
}
