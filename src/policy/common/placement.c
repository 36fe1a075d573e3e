/*
 * Gang placement shared by every policy. A job goes on one node when one has
 * room (Tiresias' consolidate-by-default placement, docs/references.md §5.5; the
 * Rubick artifact places 3D jobs tp GPUs per node, §1.3); when none has, the
 * request's mode decides (rk_place_mode: spread over the fewest nodes, wait
 * as yarn does, or fill the fullest nodes as Synergy does). CPUs and memory
 * follow each GPU as per-GPU shares. Ties go to the lowest node id so that
 * every run is reproducible.
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

/* Fewest usable GPUs first, then lowest node id. */
static int by_usable_asc(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;
	if (a->usable != b->usable)
		return a->usable < b->usable ? -1 : 1;
	return (a->node > b->node) - (a->node < b->node);
}

/* A candidate solution for one GPU type: nodes used and GPUs taken on each. */
struct choice {
	int n_nodes;
	int leftover; /* usable GPUs left on the chosen nodes: lower is a better fit */
	int first_node;
	struct cand *picks; /* n_nodes entries (node, gpus taken) */
};

/* Record picks[0..k) as the choice; 0, or RK_EINFEASIBLE past the node limit. */
static int choose(struct choice *out, const struct cand *picks, int k, int leftover)
{
	if (k < 1 || k > RK_PLACEMENT_MAX_NODES)
		return RK_EINFEASIBLE;
	out->n_nodes = k;
	out->leftover = leftover;
	out->first_node = picks[0].node;
	for (int i = 0; i < k; i++) {
		out->picks[i] = picks[i];
		if (picks[i].node < out->first_node)
			out->first_node = picks[i].node;
	}
	return 0;
}

/*
 * Index among scratch[from..n) of the best fit for `rem` GPUs (fewest usable,
 * then lowest node), skipping entries marked taken (usable < 0); -1 if none.
 */
static int best_fit(const struct cand *scratch, int from, int n, int rem)
{
	int best = -1;
	for (int i = from; i < n; i++)
		if (scratch[i].usable >= rem &&
		    (best < 0 || scratch[i].usable < scratch[best].usable ||
		     (scratch[i].usable == scratch[best].usable &&
		      scratch[i].node < scratch[best].node)))
			best = i;
	return best;
}

/* Spread: the k-1 nodes with the most usable GPUs, then best fit for the remainder. */
static int place_spread(const struct rk_place_req *r, struct cand *scratch, int n,
                        struct choice *out)
{
	qsort(scratch, (size_t)n, sizeof(*scratch), by_usable_desc);
	int k = 0, sum = 0;
	while (sum < r->gpus) {
		if (sum + scratch[k].usable >= r->gpus)
			break;
		sum += scratch[k++].usable;
	}
	int rem = r->gpus - sum;
	int best = best_fit(scratch, k, n, rem);
	if (best < 0 || k + 1 > RK_PLACEMENT_MAX_NODES)
		return RK_EINFEASIBLE;
	int leftover = scratch[best].usable - rem;
	struct cand last = {scratch[best].node, rem};
	scratch[best] = scratch[k];
	scratch[k] = last;
	return choose(out, scratch, k + 1, leftover);
}

/*
 * Consolidated (yarn, switch.py try_cross_node_alloc): whole idle nodes, most
 * GPUs first, while they do not exceed the job, then the remainder best fit on
 * one more node. Only for jobs larger than every node of the type.
 */
static int place_whole_nodes(const struct rk_capacity *cap, const struct rk_place_req *r,
                             struct cand *scratch, int n, struct choice *out)
{
	int m = r->gpus_multiple > 1 ? r->gpus_multiple : 1;
	qsort(scratch, (size_t)n, sizeof(*scratch), by_usable_desc);
	int k = 0, sum = 0;
	for (int i = 0; i < n; i++) {
		int inst = cap->cluster->nodes[scratch[i].node].gpus;
		if (scratch[i].usable != inst - inst % m || sum + scratch[i].usable > r->gpus)
			continue;
		sum += scratch[i].usable;
		struct cand t = scratch[k];
		scratch[k++] = scratch[i];
		scratch[i] = t;
	}
	int rem = r->gpus - sum, leftover = 0;
	if (rem > 0) {
		int best = best_fit(scratch, k, n, rem);
		if (best < 0)
			return RK_EINFEASIBLE;
		leftover = scratch[best].usable - rem;
		struct cand last = {scratch[best].node, rem};
		scratch[best] = scratch[k];
		scratch[k++] = last;
	}
	return choose(out, scratch, k, leftover);
}

/* Least free (Synergy): fill the nodes with the fewest usable GPUs first. */
static int place_least_free(const struct rk_place_req *r, struct cand *scratch, int n,
                            struct choice *out)
{
	qsort(scratch, (size_t)n, sizeof(*scratch), by_usable_asc);
	int k = 0, left = r->gpus, leftover = 0;
	while (left > 0 && k < n) {
		int take = scratch[k].usable < left ? scratch[k].usable : left;
		leftover = scratch[k].usable - take;
		scratch[k++].usable = take;
		left -= take;
	}
	if (left > 0)
		return RK_EINFEASIBLE;
	return choose(out, scratch, k, leftover);
}

/* GPUs of the largest up node of `type` (NULL: any). */
static int max_installed(const struct rk_capacity *cap, const char *type)
{
	int m = 0;
	for (int i = 0; i < cap->n_nodes; i++) {
		const struct rk_node *nd = &cap->cluster->nodes[i];
		if ((!type || !strcmp(nd->gpu_type, type)) && nd->up && nd->gpus > m)
			m = nd->gpus;
	}
	return m;
}

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
		/* A node without free GPUs has none usable: skipped before its
		 * rk_node is read (most nodes of a loaded cluster). */
		if (cap->free_gpus[i] <= 0)
			continue;
		const struct rk_node *nd = &cap->cluster->nodes[i];
		if (type && strcmp(nd->gpu_type, type))
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
		struct cand one = {best_single, r->gpus};
		return choose(out, &one, 1, best_single_usable - r->gpus);
	}
	if (total < r->gpus)
		return RK_EINFEASIBLE;
	switch (r->mode) {
	case RK_PLACE_CONSOLIDATED:
		/* A job one node could hold waits for one node (yarn). */
		if (r->gpus <= max_installed(cap, type))
			return RK_EINFEASIBLE;
		return place_whole_nodes(cap, r, scratch, n, out);
	case RK_PLACE_LEAST_FREE:
		return place_least_free(r, scratch, n, out);
	case RK_PLACE_SPREAD:
	default:
		return place_spread(r, scratch, n, out);
	}
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

static const char *const mode_names[] = {
    [RK_PLACE_SPREAD] = "spread",
    [RK_PLACE_CONSOLIDATED] = "consolidated",
    [RK_PLACE_LEAST_FREE] = "least-free",
};

int rk_place_mode_parse(const char *name, enum rk_place_mode *out)
{
	for (size_t i = 0; name && i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (!strcmp(name, mode_names[i])) {
			*out = (enum rk_place_mode)i;
			return 0;
		}
	return RK_EINVAL;
}

const char *rk_place_mode_name(enum rk_place_mode mode)
{
	if ((unsigned)mode < sizeof(mode_names) / sizeof(mode_names[0]))
		return mode_names[mode];
	return "?";
}
