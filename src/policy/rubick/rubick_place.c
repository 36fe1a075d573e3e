/*
 * Rubick with option placement=contention: where a job that needs
 * several nodes goes. Rubick's default (rk_place_gang, spread) fills the
 * nodes with the most usable GPUs and best-fits the remainder, blind to the
 * ring all-reduce jobs already crossing each node's NIC. This option takes
 * SJF-BCO's node choice instead (docs/references.md §4.3 line 6,
 * rk_contention_choose, the code sjf-bco runs): the fewest nodes, at the
 * lowest contention level (cross-node jobs per node, §4.2 k_s) that allows
 * that many. Rubick keeps its own rule that a job spans no more nodes than
 * its GPUs need (rubick_try_place), so the contention cap u of SJF-BCO is
 * unbounded here: the choice never makes a job wait, it only picks which
 * nodes. A job one node holds goes where rk_place_gang puts it (best fit).
 */
#include "policy/rubick/rubick_internal.h"
#include "policy/rubick/rubick_round.h"
#include "rubick/placement.h"
#include "rubick/sharing.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Per-GPU share of `v` (RK_SHARE_PROPORTIONAL: the node's) on node `nd`. */
static int64_t per_gpu(int64_t v, int64_t node_total, int node_gpus)
{
	return v == RK_SHARE_PROPORTIONAL ? node_total / (node_gpus > 0 ? node_gpus : 1) : v;
}

int rubick_place_contention(const struct round *R, const struct rk_capacity *cap,
                            const struct rk_place_req *req, struct rk_alloc *a)
{
	const struct rk_cluster *c = R->in->cluster;
	int nn = c->n_nodes, g = req->gpus, one_type = 1, fits_one = 0;
	for (int n = 0; n < nn; n++) {
		const struct rk_node *nd = &c->nodes[n];
		if (nd->up && strcmp(nd->gpu_type, c->nodes[0].gpu_type))
			one_type = 0;
	}
	int *usable = calloc((size_t)nn + 1, sizeof(*usable));
	int *k = calloc((size_t)nn + 1, sizeof(*k));
	int *scratch = calloc((size_t)nn + 1, sizeof(*scratch));
	if (!usable || !k || !scratch || !one_type) {
		/* Out of memory, or GPU types to choose between: rk_place_gang's rule
		 * (one type per job), as without the option. */
		free(usable);
		free(k);
		free(scratch);
		return rk_place_gang(cap, req, a) ? -1 : 0;
	}
	/* GPUs the job can take per node: CPUs and memory per GPU, whole tensor-
	 * parallel groups (as rk_place_gang counts them). */
	int tp = req->gpus_multiple > 1 ? req->gpus_multiple : 1;
	for (int n = 0; n < nn; n++) {
		const struct rk_node *nd = &c->nodes[n];
		int u = nd->up ? cap->free_gpus[n] : 0;
		int64_t cpg = per_gpu(req->cpus_per_gpu, nd->cpus, nd->gpus);
		int64_t mpg = per_gpu(req->mem_mb_per_gpu, nd->mem_mb, nd->gpus);
		if (cpg > 0 && cap->free_cpus[n] / cpg < u)
			u = (int)(cap->free_cpus[n] / cpg);
		if (mpg > 0 && cap->free_mem_mb[n] / mpg < u)
			u = (int)(cap->free_mem_mb[n] / mpg);
		usable[n] = u > 0 ? u - u % tp : 0;
		fits_one |= usable[n] >= g;
	}
	int rc = -1;
	if (fits_one) {
		rc = rk_place_gang(cap, req, a) ? -1 : 0;
		goto out;
	}
	/* k_s (§4.2): jobs of this round's state spanning >= 2 nodes, per node. */
	for (int i = 0; i < R->n; i++) {
		const struct rk_alloc *al = &R->j[i].now;
		for (int s = 0; al->n >= 2 && s < al->n; s++)
			if (al->shares[s].gpus > 0)
				k[al->shares[s].node]++;
	}
	int nodes[RK_PLACEMENT_MAX_NODES], per[RK_PLACEMENT_MAX_NODES], m = 0;
	if (!rk_contention_choose(usable, k, nn, g, INT_MAX, scratch, nodes, per, &m))
		goto out;
	rk_alloc_init(a);
	rc = 0;
	for (int s = 0; s < m && !rc; s++) {
		const struct rk_node *nd = &c->nodes[nodes[s]];
		int64_t cpg = per_gpu(req->cpus_per_gpu, nd->cpus, nd->gpus);
		int64_t mpg = per_gpu(req->mem_mb_per_gpu, nd->mem_mb, nd->gpus);
		rc = rk_alloc_add(a, nodes[s], per[s], (int)(cpg * per[s]), mpg * per[s]) ? -1 : 0;
	}
	if (rc)
		rk_alloc_fini(a);
out:
	free(usable);
	free(k);
	free(scratch);
	return rc;
}
