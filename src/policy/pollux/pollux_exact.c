/*
 * The exact optimum of Pollux's search on small instances: every feasible
 * allocation matrix is scored. It is the reference the genetic algorithm is
 * held to (tests/unit/policy/test_pollux_search.c): on the same round the GA
 * must reach the exact fitness within a small tolerance.
 */
#include "policy/pollux/pollux_internal.h"

#include <stdlib.h>
#include <string.h>

struct walk {
	const struct pollux_problem *pr;
	struct pollux_memo *memo;
	int *cur, *best, *used;
	double best_fit;
	int have;
	long long visited, max_states;
	int over;
};

/* Row j, from node n on, then the jobs after it; prunes on node capacity. */
static void visit(struct walk *w, int j, int n)
{
	const struct pollux_problem *pr = w->pr;
	if (w->over)
		return;
	if (j == pr->n_jobs) {
		if (!pollux_feasible(pr, w->cur))
			return;
		if (++w->visited > w->max_states) {
			w->over = 1;
			return;
		}
		double f = pollux_fitness(pr, w->memo, w->cur);
		if (!w->have || f > w->best_fit) {
			w->have = 1;
			w->best_fit = f;
			memcpy(w->best, w->cur, sizeof(int) * (size_t)pr->n_jobs * (size_t)pr->n_nodes);
		}
		return;
	}
	if (n == pr->n_nodes) {
		const int *row = w->cur + (size_t)j * pr->n_nodes;
		int sum = 0, nodes = 0;
		for (int k = 0; k < pr->n_nodes; k++) {
			sum += row[k];
			nodes += row[k] > 0;
		}
		if (sum > pr->max_replicas[j] || nodes > POLLUX_MAX_NODES_PER_JOB ||
		    (sum > 0 && sum < pr->min_replicas[j]))
			return;
		visit(w, j + 1, 0);
		return;
	}
	int *c = &w->cur[(size_t)j * pr->n_nodes + n];
	int room = pr->node_gpus[n] - w->used[n];
	if (room > pr->max_replicas[j])
		room = pr->max_replicas[j];
	for (int v = 0; v <= room; v++) {
		*c = v;
		w->used[n] += v;
		visit(w, j, n + 1);
		w->used[n] -= v;
	}
	*c = 0;
}

int pollux_exact_search(const struct pollux_problem *pr, long long max_states, int *best,
			double *fitness, long long *visited, struct rk_error *err)
{
	size_t cells = (size_t)pr->n_jobs * (size_t)pr->n_nodes;
	struct walk w = {.pr = pr, .max_states = max_states};
	w.cur = calloc(cells ? cells : 1, sizeof(int));
	w.best = calloc(cells ? cells : 1, sizeof(int));
	w.used = calloc((size_t)(pr->n_nodes > 0 ? pr->n_nodes : 1), sizeof(int));
	w.memo = pollux_memo_create(pr);
	int rc = RK_OK;
	if (!w.cur || !w.best || !w.used || !w.memo) {
		rc = rk_error_set(err, RK_ENOMEM, "pollux: out of memory for the exact search");
		goto out;
	}
	visit(&w, 0, 0);
	if (w.over) {
		rc = rk_error_set(err, RK_ERANGE,
				  "pollux: exact search: more than %lld feasible states (%d jobs, %d nodes)",
				  max_states, pr->n_jobs, pr->n_nodes);
		goto out;
	}
	memcpy(best, w.best, sizeof(int) * cells);
	*fitness = w.best_fit;
	if (visited)
		*visited = w.visited;
out:
	free(w.cur);
	free(w.best);
	free(w.used);
	pollux_memo_destroy(w.memo);
	return rc;
}
