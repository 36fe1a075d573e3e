/*
 * Placement pieces shared by the co-location policies (include/rubick/sharing.h):
 * SJF-BCO's contention-aware node choice (sjf_bco.c, and rubick with option
 * placement=contention) and the host share of a job on GPUs it shares
 * (sjf-bsbf / sjf-ffs, and rubick with option sharing=on).
 */
#include "rubick/placement.h"
#include "rubick/sharing.h"

#include <stdint.h>

const struct rk_subbatch_set *rk_subbatch_cache_get(struct rk_subbatch_cache *c,
                                                    const struct rk_model *m, int global_batch,
                                                    const struct rk_plan *base,
                                                    const struct rk_perf_env *env)
{
	for (int i = 0; i < RK_SUBBATCH_CACHE; i++) {
		const struct rk_subbatch_set *e = &c->set[i];
		if (e->model == m && e->env == env && e->batch == global_batch &&
		    rk_plan_equal(&e->plan, base))
			return e;
	}
	struct rk_subbatch_set *e = &c->set[c->next];
	c->next = (c->next + 1) % RK_SUBBATCH_CACHE;
	e->model = m;
	e->env = env;
	e->batch = global_batch;
	e->plan = *base;
	e->n = rk_subbatch_options(m, global_batch, base, 0, INT64_MAX / 4, env, e->opt,
	                           RK_SUBBATCH_MAX, NULL);
	if (e->n < 0)
		e->n = 0;
	return e;
}

void rk_nodes_sort_by(int *v, int n, const int *key, int desc)
{
	for (int i = 1; i < n; i++) { /* insertion sort: a handful of nodes */
		int x = v[i], j = i - 1;
		while (j >= 0 && (desc ? key[v[j]] < key[x] : key[v[j]] > key[x])) {
			v[j + 1] = v[j];
			j--;
		}
		v[j + 1] = x;
	}
}

int rk_contention_choose(const int *cap_g, const int *k, int nn, int g, int u, int *scratch,
                         int *nodes, int *per, int *n_nodes)
{
	int *v = scratch, m = 0, total = 0, best = -1;
	*n_nodes = 0;
	for (int n = 0; n < nn; n++) {
		total += cap_g[n];
		if (cap_g[n] >= g && (best < 0 || cap_g[n] < cap_g[best]))
			best = n;
	}
	if (total < g)
		return 0;
	if (best >= 0) { /* one node, best fit: no ring over the NIC */
		nodes[0] = best;
		per[0] = g;
		*n_nodes = 1;
		return 1;
	}
	for (int n = 0; n < nn; n++)
		if (cap_g[n] > 0)
			v[m++] = n;
	/*
	 * Fewest nodes first (least ξ overhead), then the lowest contention
	 * level kk < u that allows that many: nodes with k_s <= kk, most free
	 * GPUs first (§4.3 line 6).
	 */
	int best_cnt = 0, best_kk = -1;
	for (int kk = 0; kk < u; kk++) {
		int e = 0, sum = 0, cnt = 0;
		for (int nd = 0; nd < nn; nd++)
			if (cap_g[nd] > 0 && k[nd] <= kk)
				v[e++] = nd;
		rk_nodes_sort_by(v, e, cap_g, 1);
		while (cnt < e && sum < g)
			sum += cap_g[v[cnt++]];
		if (sum >= g && (best_kk < 0 || cnt < best_cnt)) {
			best_cnt = cnt;
			best_kk = kk;
		}
		if (e == m)
			break; /* every node already eligible: a higher kk changes nothing */
	}
	if (best_kk < 0)
		return 0;
	int e = 0;
	for (int nd = 0; nd < nn; nd++)
		if (cap_g[nd] > 0 && k[nd] <= best_kk)
			v[e++] = nd;
	rk_nodes_sort_by(v, e, cap_g, 1);
	for (int i = 0, left = g; i < best_cnt && left > 0; i++) {
		int take = cap_g[v[i]] < left ? cap_g[v[i]] : left;
		if (*n_nodes == RK_PLACEMENT_MAX_NODES)
			return 0;
		nodes[*n_nodes] = v[i];
		per[(*n_nodes)++] = take;
		left -= take;
		if (i == best_cnt - 1 && left > 0)
			return 0;
	}
	return 1;
}

int rk_share_node_need(const struct rk_place_req *req, const struct rk_node *nd, int whole,
                       int shared, int free_cpus, int64_t free_mem, int *cpus, int64_t *mem)
{
	int c = req->cpus_per_gpu == RK_SHARE_PROPORTIONAL ? nd->cpus / (nd->gpus ? nd->gpus : 1)
	                                                   : req->cpus_per_gpu;
	int64_t m = req->mem_mb_per_gpu == RK_SHARE_PROPORTIONAL
	                ? nd->mem_mb / (nd->gpus ? nd->gpus : 1)
	                : req->mem_mb_per_gpu;
	*cpus = c * whole;
	*mem = m * whole;
	if (*cpus > free_cpus || *mem > free_mem)
		return 0;
	int sc = (c * shared + 1) / 2;
	int64_t sm = (m * shared + 1) / 2;
	*cpus += sc < free_cpus - *cpus ? sc : free_cpus - *cpus;
	*mem += sm < free_mem - *mem ? sm : free_mem - *mem;
	return 1;
}
