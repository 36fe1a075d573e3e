/*
 * search=ga of the Pollux policy (pollux.c): the artifact's genetic
 * algorithm (pollux_ga.c) over jobs x nodes matrices of the cluster's one
 * GPU type, each row then made an allocation. Kept as the reference the
 * default search is held to; its cost grows with jobs x nodes x population
 * x generations (bench/README.md "bench_pollux_scale.sh").
 */
#include "policy/pollux/pollux_internal.h"

#include "policy/common/baseline.h"
#include "rubick/policy.h"

#include <stdlib.h>
#include <string.h>

struct ga_ctx {
	struct pollux_jspeed *const *sp;
};

static double table_speedup(void *ctx, int job, int nodes, int replicas)
{
	(void)nodes; /* tables are per count, on the fewest nodes */
	const struct ga_ctx *g = ctx;
	const struct pollux_jspeed *sp = g->sp[job];
	for (int k = 0; k < sp->n; k++)
		if (sp->c[k].gpus == replicas)
			return sp->c[k].value;
	return 0.0;
}

int pollux_ga_choose(const struct pollux_opts *o, const struct rk_sched_input *in,
		     const struct pollux_types *ty, struct rk_job *const *jobs,
		     struct pollux_jspeed *const *sp, const double *rf, int n, int *choice,
		     struct rk_alloc *allocs, struct rk_error *err)
{
	if (ty->n != 1)
		return rk_error_set(err, RK_EINVAL,
				    "pollux: search=ga needs a cluster of one GPU type (this one has %d)",
				    ty->n);
	const struct rk_cluster *c = in->cluster;
	int N = 0;
	for (int i = 0; i < c->n_nodes; i++)
		N += c->nodes[i].up && c->nodes[i].gpus > 0;
	size_t cells = (size_t)(n > 0 ? n : 1) * (size_t)(N > 0 ? N : 1);
	int rc = RK_ENOMEM;
	int *node_of = malloc(sizeof(int) * (size_t)(N > 0 ? N : 1));
	int *col = malloc(sizeof(int) * (size_t)(c->n_nodes > 0 ? c->n_nodes : 1));
	int *node_gpus = malloc(sizeof(int) * (size_t)(N > 0 ? N : 1));
	int *base = calloc(cells, sizeof(int)), *best = malloc(sizeof(int) * cells);
	int *lo = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
	int *hi = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
	if (!node_of || !col || !node_gpus || !base || !best || !lo || !hi) {
		rk_error_set(err, RK_ENOMEM, "pollux: out of memory for search=ga");
		goto out;
	}
	N = 0;
	for (int i = 0; i < c->n_nodes; i++) {
		col[i] = -1;
		if (c->nodes[i].up && c->nodes[i].gpus > 0) {
			col[i] = N;
			node_of[N] = i;
			node_gpus[N++] = c->nodes[i].gpus;
		}
	}
	for (int j = 0; j < n; j++) {
		lo[j] = sp[j]->n ? sp[j]->c[0].gpus : 0;
		hi[j] = sp[j]->n ? sp[j]->c[sp[j]->n - 1].gpus : 0;
		if (!rk_baseline_is_placed(jobs[j]))
			continue;
		for (int s = 0; s < jobs[j]->alloc.n; s++) {
			const struct rk_share *sh = &jobs[j]->alloc.shares[s];
			if (sh->node >= 0 && sh->node < c->n_nodes && col[sh->node] >= 0)
				base[(size_t)j * N + col[sh->node]] = sh->gpus;
		}
	}
	struct ga_ctx ctx = {sp};
	struct pollux_problem pr = {n, N, node_gpus, base, lo, hi, rf, o->p,
				    N > 0 ? (double)N / ty->cap[0] : 1.0, table_speedup, &ctx};
	struct pollux_ga_opts go = {o->pop, o->gens, in->seed};
	double fit;
	if ((rc = pollux_ga_search(&pr, &go, base, 1, best, &fit, NULL, NULL, err)))
		goto out;
	for (int j = 0; j < n; j++) {
		int g = 0;
		choice[j] = -1;
		for (int k = 0; k < N; k++)
			g += best[(size_t)j * N + k];
		for (int k = 0; k < sp[j]->n; k++)
			if (sp[j]->c[k].gpus == g)
				choice[j] = k;
		if (choice[j] < 0)
			continue;
		for (int k = 0; k < N; k++) {
			int x = best[(size_t)j * N + k];
			if (!x)
				continue;
			const struct rk_node *nd = &c->nodes[node_of[k]];
			if (rk_alloc_add(&allocs[j], nd->id, x, nd->cpus * x / nd->gpus,
					 nd->mem_mb * x / nd->gpus)) {
				rc = rk_error_set(err, RK_ENOMEM, "pollux: out of memory");
				goto out;
			}
		}
	}
	rc = RK_OK;
out:
	free(node_of);
	free(col);
	free(node_gpus);
	free(base);
	free(best);
	free(lo);
	free(hi);
	return rc;
}
