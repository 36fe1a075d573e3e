/*
 * Consolidated gang placement shared by every policy. A job's GPUs go on as
 * few nodes as possible (Tiresias' consolidate-by-default placement,
 * algorithms.md §5.5; the Rubick artifact places 3D jobs tp GPUs per node,
 * §1.3), CPUs and memory follow each GPU as per-GPU shares. Ties go to the
 * lowest node id so that every run is reproducible.
 */
#include "rubick/placement.h"

#include <stdlib.h>
#include <string.h>

void rk_place_req_from_job(const struct rk_job *job, struct rk_place_req *req)
{
	int g = job->req_gpus > 0 ? job->req_gpus : 1;
	memset(req, 0, sizeof(*req));
	req->gpus = g;
	/* Round up so the job never gets less than it asked for in total. */
	req->cpus_per_gpu = job->req_cpus > 0 ? (job->req_cpus + g - 1) / g : RK_SHARE_PROPORTIONAL;
	req->mem_mb_per_gpu =
		job->req_mem_mb > 0 ? (job->req_mem_mb + g - 1) / g : RK_SHARE_PROPORTIONAL;
	req->gpu_type = NULL;
	req->gpus_multiple = job->req_plan.tp > 1 ? job->req_plan.tp : 1;
}

static int cpus_per_gpu(const struct rk_place_req *r, const struct rk_node *n)
{
	return r->cpus_per_gpu >= 0 ? r->cpus_per_gpu : n->cpus / (n->gpus > 0 ? n->gpus : 1);
}

static int64_t mem_per_gpu(const struct rk_place_req *r, const struct rk_node *n)
{
	return r->mem_mb_per_gpu >= 0 ? r->mem_mb_per_gpu : n->mem_mb / (n->gpus > 0 ? n->gpus : 1);
}

/* GPUs of the request node `i` can still host with their CPU and memory shares. */
static int usable_gpus(const struct rk_capacity *cap, const struct rk_place_req *r, int i)
{
	const struct rk_node *n = &cap->cluster->nodes[i];
	if (!n->up)
		return 0;
	int g = cap->free_gpus[i];
	int cpg = cpus_per_gpu(r, n);
	int64_t mpg = mem_per_gpu(r, n);
	if (cpg > 0 && cap->free_cpus[i] / cpg < g)
		g = cap->free_cpus[i] / cpg;
	if (mpg > 0 && cap->free_mem_mb[i] / mpg < g)
		g = (int)(cap->free_mem_mb[i] / mpg);
	int m = r->gpus_multiple > 1 ? r->gpus_multiple : 1;
	return g - g % m;
}

struct cand {
	int node, usable;
};

/* Most usable GPUs first, then lowest node id. */
static int by_usable_desc(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;
	if (a->usable != b->usable)
		return a->usable < b->usable ? 1 : -1;
	return (a->node > b->node) - (a->node < b->node);
}

/* A candidate solution for one GPU type: nodes used and GPUs taken on each. */
struct choice {
	int n_nodes;
	int leftover; /* usable GPUs left on the chosen nodes: lower is a better fit */
	int first_node;
	struct cand *picks; /* n_nodes entries (node, gpus taken) */
};

/*
 * Best placement on nodes whose type matches `type` (NULL = all). `scratch`
 * holds n_nodes candidates; `picks` receives the choice. Returns 0 or
 * RK_EINFEASIBLE.
 */
static int place_on_type(const struct rk_capacity *cap, const struct rk_place_req *r,
			 const char *type, struct cand *scratch, struct choice *out)
{
	int n = 0, total = 0;
	int best_single = -1, best_single_usable = 0;
	for (int i = 0; i < cap->n_nodes; i++) {
		if (type && strcmp(cap->cluster->nodes[i].gpu_type, type))
			continue;
		int u = usable_gpus(cap, r, i);
		if (u <= 0)
			continue;
		scratch[n++] = (struct cand){i, u};
		total += u;
		/* Best fit on one node: the fewest usable GPUs that still hold the job. */
		if (u >= r->gpus && (best_single < 0 || u < best_single_usable)) {
			best_single = i;
			best_single_usable = u;
		}
	}
	if (best_single >= 0) {
		out->n_nodes = 1;
		out->leftover = best_single_usable - r->gpus;
		out->first_node = best_single;
		out->picks[0] = (struct cand){best_single, r->gpus};
		return 0;
	}
	if (total < r->gpus)
		return RK_EINFEASIBLE;
	qsort(scratch, (size_t)n, sizeof(*scratch), by_usable_desc);
	/* Fewest nodes: fill the k-1 largest, then best-fit the remainder. */
	int k = 0, sum = 0;
	while (sum < r->gpus) {
		if (sum + scratch[k].usable >= r->gpus)
			break;
		sum += scratch[k++].usable;
	}
	int rem = r->gpus - sum;
	int best = -1;
	for (int i = k; i < n; i++)
		if (scratch[i].usable >= rem &&
		    (best < 0 || scratch[i].usable < scratch[best].usable ||
		     (scratch[i].usable == scratch[best].usable && scratch[i].node < scratch[best].node)))
			best = i;
	if (best < 0 || k + 1 > RK_PLACEMENT_MAX_NODES)
		return RK_EINFEASIBLE;
	out->n_nodes = k + 1;
	out->leftover = scratch[best].usable - rem;
	out->first_node = scratch[0].node;
	for (int i = 0; i < k; i++) {
		out->picks[i] = scratch[i];
		if (scratch[i].node < out->first_node)
			out->first_node = scratch[i].node;
	}
	out->picks[k] = (struct cand){scratch[best].node, rem};
	return 0;
}

static int better(const struct choice *a, const struct choice *b)
{
	if (a->n_nodes != b->n_nodes)
		return a->n_nodes < b->n_nodes;
	if (a->leftover != b->leftover)
		return a->leftover < b->leftover;
	return a->first_node < b->first_node;
}

int rk_place_gang(const struct rk_capacity *cap, const struct rk_place_req *req,
		  struct rk_alloc *out)
{
	rk_alloc_fini(out);
	int m = req->gpus_multiple > 1 ? req->gpus_multiple : 1;
	if (req->gpus < 1 || req->gpus > cap->free_gpus_total || req->gpus % m)
		return RK_EINFEASIBLE;
	int n = cap->n_nodes;
	struct cand *scratch = malloc((size_t)n * sizeof(*scratch));
	struct cand *picks_a = malloc(RK_PLACEMENT_MAX_NODES * sizeof(*picks_a));
	struct cand *picks_b = malloc(RK_PLACEMENT_MAX_NODES * sizeof(*picks_b));
	int rc = RK_ENOMEM;
	if (!scratch || !picks_a || !picks_b)
		goto done;
	struct choice best = {.n_nodes = 0, .picks = picks_a};
	struct choice cur = {.n_nodes = 0, .picks = picks_b};
	if (cap->one_gpu_type < 0) {
		/* A cache inside the view: computing it changes no observable capacity. */
		struct rk_capacity *mut = (struct rk_capacity *)cap;
		mut->one_gpu_type = 1;
		for (int i = 1; i < n && mut->one_gpu_type; i++)
			mut->one_gpu_type = !strcmp(cap->cluster->nodes[i].gpu_type,
						    cap->cluster->nodes[0].gpu_type);
	}
	if (req->gpu_type || cap->one_gpu_type) {
		/* One type everywhere: no need to compare type names per node. */
		const char *t = req->gpu_type;
		if (t && n > 0 && cap->one_gpu_type && !strcmp(t, cap->cluster->nodes[0].gpu_type))
			t = NULL;
		rc = place_on_type(cap, req, t, scratch, &best);
	} else {
		/* One GPU type per job: try each type, in order of first appearance. */
		rc = RK_EINFEASIBLE;
		for (int i = 0; i < n; i++) {
			const char *t = cap->cluster->nodes[i].gpu_type;
			int seen = 0;
			for (int j = 0; j < i && !seen; j++)
				seen = !strcmp(cap->cluster->nodes[j].gpu_type, t);
			if (seen)
				continue;
			if (place_on_type(cap, req, t, scratch, &cur))
				continue;
			if (rc || better(&cur, &best)) {
				struct cand *tmp = best.picks;
				best = cur;
				cur.picks = tmp;
				rc = 0;
			}
		}
	}
	if (rc)
		goto done;
	for (int i = 0; i < best.n_nodes && !rc; i++) {
		const struct rk_node *nd = &cap->cluster->nodes[best.picks[i].node];
		int g = best.picks[i].usable;
		rc = rk_alloc_add(out, nd->id, g, g * cpus_per_gpu(req, nd),
				  (int64_t)g * mem_per_gpu(req, nd));
	}
	if (rc)
		rk_alloc_fini(out);
done:
	free(scratch);
	free(picks_a);
	free(picks_b);
	return rc;
}

int rk_place_gang_take(struct rk_capacity *cap, const struct rk_place_req *req,
		       struct rk_alloc *out)
{
	int rc = rk_place_gang(cap, req, out);
	if (rc == 0) {
		rc = rk_capacity_take(cap, out, NULL);
		if (rc)
			rk_alloc_fini(out);
	}
	return rc;
}
