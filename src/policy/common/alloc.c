/*
 * Allocations (shares of GPUs, CPUs and memory on nodes) and the capacity
 * view every policy and driver counts free resources with. Invariant of a
 * capacity: 0 <= free <= installed on every node, for every resource.
 */
#include "rubick/cluster.h"
#include "rubick/job.h"
#include "rubick/plan.h"

#include <stdlib.h>
#include <string.h>

void rk_alloc_init(struct rk_alloc *a)
{
	a->n = 0;
	a->shares = NULL;
}

void rk_alloc_fini(struct rk_alloc *a)
{
	if (!a)
		return;
	free(a->shares);
	a->shares = NULL;
	a->n = 0;
}

int rk_alloc_copy(struct rk_alloc *dst, const struct rk_alloc *src)
{
	if (dst == src)
		return 0;
	struct rk_share *s = NULL;
	if (src->n > 0) {
		s = malloc((size_t)src->n * sizeof(*s));
		if (!s)
			return RK_ENOMEM;
		memcpy(s, src->shares, (size_t)src->n * sizeof(*s));
	}
	free(dst->shares);
	dst->shares = s;
	dst->n = src->n;
	return 0;
}

int rk_alloc_add(struct rk_alloc *a, int node, int gpus, int cpus, int64_t mem_mb)
{
	if (node < 0 || gpus < 0 || cpus < 0 || mem_mb < 0)
		return RK_EINVAL;
	int i = 0;
	while (i < a->n && a->shares[i].node < node)
		i++;
	if (i < a->n && a->shares[i].node == node) {
		a->shares[i].gpus += gpus;
		a->shares[i].cpus += cpus;
		a->shares[i].mem_mb += mem_mb;
		return 0;
	}
	struct rk_share *s = realloc(a->shares, (size_t)(a->n + 1) * sizeof(*s));
	if (!s)
		return RK_ENOMEM;
	memmove(s + i + 1, s + i, (size_t)(a->n - i) * sizeof(*s));
	s[i] = (struct rk_share){.node = node, .gpus = gpus, .cpus = cpus, .mem_mb = mem_mb};
	a->shares = s;
	a->n++;
	return 0;
}

int rk_alloc_total_gpus(const struct rk_alloc *a)
{
	int t = 0;
	for (int i = 0; i < a->n; i++)
		t += a->shares[i].gpus;
	return t;
}

int rk_alloc_total_cpus(const struct rk_alloc *a)
{
	int t = 0;
	for (int i = 0; i < a->n; i++)
		t += a->shares[i].cpus;
	return t;
}

int64_t rk_alloc_total_mem_mb(const struct rk_alloc *a)
{
	int64_t t = 0;
	for (int i = 0; i < a->n; i++)
		t += a->shares[i].mem_mb;
	return t;
}

/* Resources `a` holds on `node` (summed, since shares may repeat a node). */
static struct rk_share on_node(const struct rk_alloc *a, int node)
{
	struct rk_share s = {.node = node};
	for (int i = 0; i < a->n; i++)
		if (a->shares[i].node == node) {
			s.gpus += a->shares[i].gpus;
			s.cpus += a->shares[i].cpus;
			s.mem_mb += a->shares[i].mem_mb;
		}
	return s;
}

static int compare(const struct rk_alloc *a, const struct rk_alloc *b, int gpus_only)
{
	const struct rk_alloc *pair[2] = {a, b};
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < pair[k]->n; i++) {
			int node = pair[k]->shares[i].node;
			struct rk_share x = on_node(a, node), y = on_node(b, node);
			if (x.gpus != y.gpus)
				return 0;
			if (!gpus_only && (x.cpus != y.cpus || x.mem_mb != y.mem_mb))
				return 0;
		}
	return 1;
}

int rk_alloc_equal(const struct rk_alloc *a, const struct rk_alloc *b)
{
	return compare(a, b, 0);
}

int rk_alloc_same_gpus(const struct rk_alloc *a, const struct rk_alloc *b)
{
	return compare(a, b, 1);
}

static int by_node(const void *x, const void *y)
{
	const struct rk_share *a = x, *b = y;
	return (a->node > b->node) - (a->node < b->node);
}

static int by_int(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	return (a > b) - (a < b);
}

int rk_alloc_to_placement(const struct rk_alloc *a, struct rk_placement *out)
{
	struct rk_share tmp[RK_PLACEMENT_MAX_NODES];
	int n = 0;
	for (int i = 0; i < a->n; i++) {
		if (a->shares[i].gpus <= 0)
			continue;
		if (n == RK_PLACEMENT_MAX_NODES)
			return RK_ERANGE;
		tmp[n++] = a->shares[i];
	}
	qsort(tmp, (size_t)n, sizeof(tmp[0]), by_node);
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < n; i++) {
		/* Shares that repeat a node merge into one entry. */
		if (out->n_nodes > 0 && i > 0 && tmp[i - 1].node == tmp[i].node)
			out->gpus[out->n_nodes - 1] += tmp[i].gpus;
		else
			out->gpus[out->n_nodes++] = tmp[i].gpus;
	}
	return 0;
}

int rk_alloc_to_placement_sorted(const struct rk_alloc *a, struct rk_placement *out)
{
	int rc = rk_alloc_to_placement(a, out);
	if (rc == 0)
		qsort(out->gpus, (size_t)out->n_nodes, sizeof(out->gpus[0]), by_int);
	return rc;
}

/* ---- capacity ------------------------------------------------------------ */

int rk_capacity_init(struct rk_capacity *cap, const struct rk_cluster *c)
{
	int n = c->n_nodes;
	size_t m = n > 0 ? (size_t)n : 1;
	int *g = malloc(m * sizeof(*g));
	int *p = malloc(m * sizeof(*p));
	int64_t *mem = malloc(m * sizeof(*mem));
	if (!g || !p || !mem) {
		free(g);
		free(p);
		free(mem);
		return RK_ENOMEM;
	}
	for (int i = 0; i < n; i++) {
		const struct rk_node *nd = &c->nodes[i];
		g[i] = nd->up ? nd->gpus : 0;
		p[i] = nd->up ? nd->cpus : 0;
		mem[i] = nd->up ? nd->mem_mb : 0;
	}
	cap->cluster = c;
	cap->n_nodes = n;
	cap->free_gpus = g;
	cap->free_cpus = p;
	cap->free_mem_mb = mem;
	cap->free_gpus_total = rk_cluster_total_gpus(c);
	cap->one_gpu_type = -1; /* computed by the first placement that needs it */
	return 0;
}

void rk_capacity_fini(struct rk_capacity *cap)
{
	if (!cap)
		return;
	free(cap->free_gpus);
	free(cap->free_cpus);
	free(cap->free_mem_mb);
	memset(cap, 0, sizeof(*cap));
}

int rk_capacity_copy(struct rk_capacity *dst, const struct rk_capacity *src)
{
	struct rk_capacity c;
	int rc = rk_capacity_init(&c, src->cluster);
	if (rc)
		return rc;
	size_t n = (size_t)src->n_nodes;
	memcpy(c.free_gpus, src->free_gpus, n * sizeof(int));
	memcpy(c.free_cpus, src->free_cpus, n * sizeof(int));
	memcpy(c.free_mem_mb, src->free_mem_mb, n * sizeof(int64_t));
	c.free_gpus_total = src->free_gpus_total;
	*dst = c;
	return 0;
}

/*
 * 1 when a's shares name strictly increasing nodes (what rk_alloc_add keeps),
 * so every node appears once and on_node(a, node) is that node's share: the
 * O(n^2) per-node summing below can be skipped with the same result (speed at scale:
 * an elastic job on hundreds of nodes made it most of aryl's CPU time).
 */
static int nodes_unique_sorted(const struct rk_alloc *a)
{
	for (int i = 1; i < a->n; i++)
		if (a->shares[i].node <= a->shares[i - 1].node)
			return 0;
	return 1;
}

/* Check that `a` can be taken; the first shortfall goes into err. */
static int check_take(const struct rk_capacity *cap, const struct rk_alloc *a, struct rk_error *err)
{
	int unique = nodes_unique_sorted(a);
	for (int i = 0; i < a->n; i++) {
		int node = a->shares[i].node;
		if (node < 0 || node >= cap->n_nodes)
			return rk_error_set(err, RK_EINFEASIBLE,
			                    "node %d does not exist (cluster "
			                    "has %d nodes)",
			                    node, cap->n_nodes);
		const struct rk_node *nd = &cap->cluster->nodes[node];
		if (!nd->up && (a->shares[i].gpus || a->shares[i].cpus || a->shares[i].mem_mb))
			return rk_error_set(err, RK_EINFEASIBLE, "node %d is down", node);
		/* Shares may repeat a node, so compare the node's sum, once. */
		int first = 1;
		for (int j = 0; j < i && !unique; j++)
			if (a->shares[j].node == node)
				first = 0;
		if (!first)
			continue;
		struct rk_share s = unique ? a->shares[i] : on_node(a, node);
		if (s.gpus < 0 || s.cpus < 0 || s.mem_mb < 0)
			return rk_error_set(err, RK_EINVAL, "negative share on node %d", node);
		if (s.gpus > cap->free_gpus[node])
			return rk_error_set(err, RK_EINFEASIBLE, "node %d: %d GPUs asked, %d free",
			                    node, s.gpus, cap->free_gpus[node]);
		if (s.cpus > cap->free_cpus[node])
			return rk_error_set(err, RK_EINFEASIBLE, "node %d: %d CPUs asked, %d free",
			                    node, s.cpus, cap->free_cpus[node]);
		if (s.mem_mb > cap->free_mem_mb[node])
			return rk_error_set(err, RK_EINFEASIBLE,
			                    "node %d: %lld MiB memory asked, %lld MiB free", node,
			                    (long long)s.mem_mb, (long long)cap->free_mem_mb[node]);
	}
	return 0;
}

int rk_capacity_fits(const struct rk_capacity *cap, const struct rk_alloc *a)
{
	return check_take(cap, a, NULL) == 0;
}

int rk_capacity_take(struct rk_capacity *cap, const struct rk_alloc *a, struct rk_error *err)
{
	int rc = check_take(cap, a, err);
	if (rc)
		return rc;
	for (int i = 0; i < a->n; i++) {
		const struct rk_share *s = &a->shares[i];
		cap->free_gpus[s->node] -= s->gpus;
		cap->free_gpus_total -= s->gpus;
		cap->free_cpus[s->node] -= s->cpus;
		cap->free_mem_mb[s->node] -= s->mem_mb;
	}
	return 0;
}

int rk_capacity_give(struct rk_capacity *cap, const struct rk_alloc *a, struct rk_error *err)
{
	int unique = nodes_unique_sorted(a);
	for (int i = 0; i < a->n; i++) {
		int node = a->shares[i].node;
		if (node < 0 || node >= cap->n_nodes)
			return rk_error_set(err, RK_EINTERNAL, "give back: node %d does not exist",
			                    node);
		const struct rk_node *nd = &cap->cluster->nodes[node];
		struct rk_share s = unique ? a->shares[i] : on_node(a, node);
		int gmax = nd->up ? nd->gpus : 0, cmax = nd->up ? nd->cpus : 0;
		int64_t mmax = nd->up ? nd->mem_mb : 0;
		if (s.gpus < 0 || s.cpus < 0 || s.mem_mb < 0 ||
		    cap->free_gpus[node] + s.gpus > gmax || cap->free_cpus[node] + s.cpus > cmax ||
		    cap->free_mem_mb[node] + s.mem_mb > mmax)
			return rk_error_set(err, RK_EINTERNAL,
			                    "give back: node %d would hold more "
			                    "than it has installed (double release?)",
			                    node);
	}
	for (int i = 0; i < a->n; i++) {
		const struct rk_share *s = &a->shares[i];
		cap->free_gpus[s->node] += s->gpus;
		cap->free_gpus_total += s->gpus;
		cap->free_cpus[s->node] += s->cpus;
		cap->free_mem_mb[s->node] += s->mem_mb;
	}
	return 0;
}

int rk_capacity_from_jobs(struct rk_capacity *cap, const struct rk_cluster *c,
                          struct rk_job *const *jobs, int n, struct rk_error *err)
{
	struct rk_capacity tmp;
	int rc = rk_capacity_init(&tmp, c);
	if (rc)
		return rk_error_set(err, rc, "capacity: out of memory");
	for (int i = 0; i < n; i++) {
		rc = rk_capacity_take(&tmp, &jobs[i]->alloc, err);
		if (rc) {
			rk_error_prefix(err, "job %lld (%s)", (long long)jobs[i]->id,
			                jobs[i]->name);
			rk_capacity_fini(&tmp);
			return rc;
		}
	}
	*cap = tmp;
	return 0;
}

int rk_capacity_free_gpus(const struct rk_capacity *cap)
{
	return cap->free_gpus_total;
}
