/*
 * The default search (pollux_greedy.c) on the problem the genetic algorithm
 * and the exact search solve (struct pollux_problem), so that the tests score
 * all three on the same rounds with the same fitness (pollux_fitness).
 */
#include "policy/pollux/pollux_internal.h"

#include <stdlib.h>
#include <string.h>

/* Job j's row for g GPUs: best fit on one node, else the nodes with most free
 * GPUs that host no other multi-node job. 0 when placed, -1 (row zero) not. */
static int place_row(const struct pollux_problem *pr, int j, int g, int *state, int *free_gpus,
		     int *spanned)
{
	int N = pr->n_nodes, *row = state + (size_t)j * N, fit = -1;
	for (int k = 0; k < N; k++)
		if (free_gpus[k] >= g && (fit < 0 || free_gpus[k] < free_gpus[fit]))
			fit = k;
	if (fit >= 0) {
		row[fit] = g;
		free_gpus[fit] -= g;
		return 0;
	}
	int left = g, used = 0;
	while (left > 0 && used < POLLUX_MAX_NODES_PER_JOB) {
		int m = -1;
		for (int k = 0; k < N; k++)
			if (!row[k] && !spanned[k] && free_gpus[k] > 0 &&
			    (m < 0 || free_gpus[k] > free_gpus[m]))
				m = k;
		if (m < 0)
			break;
		row[m] = left < free_gpus[m] ? left : free_gpus[m];
		left -= row[m];
		used++;
	}
	if (left > 0) {
		memset(row, 0, sizeof(int) * (size_t)N);
		return -1;
	}
	for (int k = 0; k < N; k++)
		if (row[k]) {
			free_gpus[k] -= row[k];
			spanned[k] = 1;
		}
	return 0;
}

/* Rows for GPU counts `gpus` (n_jobs): a job whose count is the one it holds
 * keeps its base row; the rest, largest first, go best fit on one node, else
 * on the nodes with most free GPUs that host no other multi-node job (at
 * most POLLUX_MAX_NODES_PER_JOB); a job that does not fit gets nothing. */
static void pack_rows(const struct pollux_problem *pr, const int *gpus, int *state, int *free_gpus,
		      int *spanned, int *order)
{
	const int *lo = pr->min_replicas;
	int J = pr->n_jobs, N = pr->n_nodes;
	memset(state, 0, sizeof(int) * (size_t)J * (size_t)N);
	memcpy(free_gpus, pr->node_gpus, sizeof(int) * (size_t)N);
	memset(spanned, 0, sizeof(int) * (size_t)N);
	int n = 0;
	for (int j = 0; j < J; j++) {
		const int *brow = pr->base + (size_t)j * N;
		int held = 0, nodes = 0;
		for (int k = 0; k < N; k++) {
			held += brow[k];
			nodes += brow[k] > 0;
		}
		if (gpus[j] > 0 && gpus[j] == held) {
			memcpy(state + (size_t)j * N, brow, sizeof(int) * (size_t)N);
			for (int k = 0; k < N; k++) {
				free_gpus[k] -= brow[k];
				if (brow[k] && nodes > 1)
					spanned[k] = 1;
			}
		} else if (gpus[j] > 0) {
			order[n++] = j;
		}
	}
	/* Largest first; insertion sort keeps job order among equals. */
	for (int i = 1; i < n; i++) {
		int x = order[i], k = i;
		while (k > 0 && gpus[order[k - 1]] < gpus[x]) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = x;
	}
	/* A job that no longer fits (fragmentation) takes the largest smaller
	 * count that does, as the policy does (pollux.c pack). */
	for (int i = 0; i < n; i++)
		for (int g = gpus[order[i]]; g >= lo[order[i]] && g > 0; g--)
			if (!place_row(pr, order[i], g, state, free_gpus, spanned))
				break;
}

int pollux_greedy_problem(const struct pollux_problem *pr, int ls_iters, int *state,
			  double *fitness, struct rk_error *err)
{
	int J = pr->n_jobs, N = pr->n_nodes, total = 0, largest = 1;
	for (int k = 0; k < N; k++) {
		total += pr->node_gpus[k];
		if (pr->node_gpus[k] > largest)
			largest = pr->node_gpus[k];
	}
	int rc = RK_ENOMEM;
	size_t per = (size_t)(total > 0 ? total : 1);
	struct pollux_cand *cands = malloc(sizeof(*cands) * per * (size_t)(J > 0 ? J : 1));
	struct pollux_gjob *jobs = malloc(sizeof(*jobs) * (size_t)(J > 0 ? J : 1));
	int *choice = malloc(sizeof(int) * (size_t)(J > 0 ? J : 1));
	int *gpus = malloc(sizeof(int) * (size_t)(J > 0 ? J : 1));
	int *order = malloc(sizeof(int) * (size_t)(J > 0 ? J : 1));
	int *scratch = malloc(sizeof(int) * 2 * (size_t)(N > 0 ? N : 1));
	int *trial = malloc(sizeof(int) * (size_t)(J > 0 ? J : 1) * (size_t)(N > 0 ? N : 1));
	struct pollux_memo *memo = pollux_memo_create(pr);
	if (!cands || !jobs || !choice || !gpus || !order || !scratch || !trial || !memo) {
		rk_error_set(err, RK_ENOMEM, "pollux: out of memory for the search");
		goto out;
	}
	for (int j = 0; j < J; j++) {
		const int *brow = pr->base + (size_t)j * N;
		int held = 0;
		for (int k = 0; k < N; k++)
			held += brow[k];
		struct pollux_cand *c = cands + per * (size_t)j;
		int n = 0, lo = pr->min_replicas[j] > 1 ? pr->min_replicas[j] : 1;
		for (int g = lo; g <= pr->max_replicas[j] && g <= total; g++) {
			int nodes = (g + largest - 1) / largest;
			if (nodes > POLLUX_MAX_NODES_PER_JOB)
				break;
			double v = pr->speedup(pr->ctx, j, nodes, g) * pr->scale;
			if (g != held)
				v *= pr->restart_factor[j];
			if (v > 0) /* a count the job cannot run is no candidate */
				c[n++] = (struct pollux_cand){0, g, nodes, v};
		}
		jobs[j] = (struct pollux_gjob){c, n};
	}
	/* Packing feedback: a count that packing had to spread over more nodes
	 * than assumed is priced at the nodes it got, and the search runs again;
	 * the fitter state is kept. (The policy does not do this yet: its counts
	 * are divisors of the batch, which pack without fragments far more often.) */
	*fitness = -1;
	for (int pass = 0; pass < POLLUX_PACK_PASSES; pass++) {
		if ((rc = pollux_greedy_search(jobs, J, &total, 1, pr->p, ls_iters, choice, NULL,
					       err)))
			goto out;
		for (int j = 0; j < J; j++)
			gpus[j] = choice[j] >= 0 ? jobs[j].c[choice[j]].gpus : 0;
		pack_rows(pr, gpus, trial, scratch, scratch + N, order);
		double f = pollux_fitness(pr, memo, trial);
		if (f > *fitness) {
			*fitness = f;
			memcpy(state, trial, sizeof(int) * (size_t)J * (size_t)N);
		}
		int changed = 0;
		for (int j = 0; j < J; j++) {
			if (choice[j] < 0)
				continue;
			struct pollux_cand *c = cands + per * (size_t)j + choice[j];
			int nodes = 0, held = 0;
			for (int k = 0; k < N; k++) {
				nodes += trial[(size_t)j * N + k] > 0;
				held += pr->base[(size_t)j * N + k];
			}
			if (nodes > c->nodes) {
				double v = pr->speedup(pr->ctx, j, nodes, c->gpus) * pr->scale;
				if (c->gpus != held)
					v *= pr->restart_factor[j];
				c->nodes = nodes;
				c->value = v > 0 ? v : 0;
				changed = 1;
			}
		}
		if (!changed)
			break;
	}
	rc = RK_OK;
out:
	free(cands);
	free(jobs);
	free(choice);
	free(gpus);
	free(order);
	free(scratch);
	free(trial);
	pollux_memo_destroy(memo);
	return rc;
}
