/*
 * GPU-level bookkeeping of GPU sharing (sharing.h, docs/sharing.md): which
 * jobs hold each GPU (at most two, SJF-BSBF's rule, docs/references.md §3.2), the
 * memory rule for a shared GPU, and the validation that lets a driver accept
 * exactly this and nothing more.
 */
#include "rubick/sharing.h"

#include "rubick/memory.h"
#include "rubick/policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int rk_gpu_occ_init(struct rk_gpu_occ *o, const struct rk_cluster *c)
{
	memset(o, 0, sizeof(*o));
	o->cluster = c;
	o->first = malloc((size_t)(c->n_nodes + 1) * sizeof(*o->first));
	if (!o->first)
		return RK_ENOMEM;
	int total = 0;
	for (int i = 0; i < c->n_nodes; i++) {
		o->first[i] = total;
		total += c->nodes[i].gpus;
	}
	o->first[c->n_nodes] = total;
	o->who = malloc((size_t)(total > 0 ? total : 1) * sizeof(*o->who));
	if (!o->who) {
		free(o->first);
		o->first = NULL;
		return RK_ENOMEM;
	}
	rk_gpu_occ_clear(o);
	return 0;
}

void rk_gpu_occ_fini(struct rk_gpu_occ *o)
{
	if (!o)
		return;
	free(o->first);
	free(o->who);
	memset(o, 0, sizeof(*o));
}

void rk_gpu_occ_clear(struct rk_gpu_occ *o)
{
	int total = o->first[o->cluster->n_nodes];
	for (int i = 0; i < total; i++)
		o->who[i][0] = o->who[i][1] = -1;
	o->busy = 0;
}

int rk_gpu_occ_holders(const struct rk_gpu_occ *o, int node, int g, int *a, int *b)
{
	const int *w = o->who[o->first[node] + g];
	*a = w[0];
	*b = w[1];
	return (w[0] >= 0) + (w[1] >= 0);
}

static int popcount64(uint64_t x)
{
	int n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
}

/* The mask `s` means on its node: its own, or the lowest GPUs nobody holds. */
static int share_mask(const struct rk_gpu_occ *o, const struct rk_share *s, uint64_t *mask,
		      struct rk_error *err)
{
	const struct rk_cluster *c = o->cluster;
	if (s->node < 0 || s->node >= c->n_nodes)
		return rk_error_set(err, RK_EINVAL, "node %d does not exist", s->node);
	int ng = c->nodes[s->node].gpus;
	if (s->gpu_mask) {
		if (ng < 64 && (s->gpu_mask >> ng))
			return rk_error_set(err, RK_EINVAL, "node %d: GPU mask 0x%llx names GPUs beyond "
					    "its %d", s->node, (unsigned long long)s->gpu_mask, ng);
		if (popcount64(s->gpu_mask) != s->gpus)
			return rk_error_set(err, RK_EINVAL, "node %d: GPU mask 0x%llx names %d GPUs, "
					    "share has %d", s->node, (unsigned long long)s->gpu_mask,
					    popcount64(s->gpu_mask), s->gpus);
		*mask = s->gpu_mask;
		return 0;
	}
	uint64_t m = 0;
	int got = 0;
	for (int g = 0; g < ng && got < s->gpus; g++) {
		const int *w = o->who[o->first[s->node] + g];
		if (w[0] < 0 && w[1] < 0) {
			m |= 1ULL << g;
			got++;
		}
	}
	if (got < s->gpus)
		return rk_error_set(err, RK_EINFEASIBLE, "node %d: %d GPUs wanted, %d held by no "
				    "job", s->node, s->gpus, got);
	*mask = m;
	return 0;
}

int rk_gpu_occ_add(struct rk_gpu_occ *o, struct rk_alloc *a, int who, int fill,
		   struct rk_error *err)
{
	uint64_t masks[RK_PLACEMENT_MAX_NODES];
	if (a->n > RK_PLACEMENT_MAX_NODES)
		return rk_error_set(err, RK_EINVAL, "allocation spans %d nodes", a->n);
	for (int i = 0; i < a->n; i++) {
		int rc = share_mask(o, &a->shares[i], &masks[i], err);
		if (rc)
			return rc;
		int node = a->shares[i].node;
		for (int g = 0; g < o->cluster->nodes[node].gpus; g++) {
			if (!(masks[i] >> g & 1))
				continue;
			const int *w = o->who[o->first[node] + g];
			if (w[0] >= 0 && w[1] >= 0)
				return rk_error_set(err, RK_EINFEASIBLE, "node %d GPU %d already holds two "
						    "jobs", node, g);
		}
	}
	for (int i = 0; i < a->n; i++) {
		int node = a->shares[i].node;
		for (int g = 0; g < o->cluster->nodes[node].gpus; g++) {
			if (!(masks[i] >> g & 1))
				continue;
			int *w = o->who[o->first[node] + g];
			if (w[0] < 0 && w[1] < 0)
				o->busy++;
			w[w[0] < 0 ? 0 : 1] = who;
		}
		if (fill)
			a->shares[i].gpu_mask = masks[i];
	}
	return 0;
}

void rk_gpu_occ_remove(struct rk_gpu_occ *o, const struct rk_alloc *a, int who)
{
	for (int i = 0; i < a->n; i++) {
		int node = a->shares[i].node;
		if (node < 0 || node >= o->cluster->n_nodes)
			continue;
		for (int g = 0; g < o->cluster->nodes[node].gpus; g++) {
			if (!(a->shares[i].gpu_mask >> g & 1))
				continue;
			int *w = o->who[o->first[node] + g];
			for (int k = 0; k < 2; k++)
				if (w[k] == who)
					w[k] = -1;
			if (w[0] < 0 && w[1] >= 0) {
				w[0] = w[1];
				w[1] = -1;
			}
			if (w[0] < 0)
				o->busy--;
		}
	}
}

int rk_job_gpu_mem_mb(const struct rk_job *job, const struct rk_plan *plan, double *mb,
		      struct rk_error *err)
{
	struct rk_mem_usage mu;
	int rc = rk_memory_estimate(job->model, plan, &mu, err);
	if (rc)
		return rc;
	*mb = mu.gpu_mb;
	return 0;
}

/* Per-GPU memory of job i with plans[i], computed once per check (`mb` NaN = not yet). */
static int job_mb(struct rk_job *const *jobs, const struct rk_plan *const *plans, double *mb,
		  int i, double *out, struct rk_error *err)
{
	if (mb && !isnan(mb[i])) {
		*out = mb[i];
		return 0;
	}
	int rc = rk_job_gpu_mem_mb(jobs[i], plans[i], out, err);
	if (!rc && mb)
		mb[i] = *out;
	return rc;
}

/*
 * Memory rule on every shared GPU: both holders' per-GPU memory fits (one
 * pass). A job sharing several GPUs is priced once: `mb` (n entries) memoizes
 * when the caller could allocate it, NULL prices every time.
 */
static const char *type_of(const struct rk_job *j)
{
	return j->job_type[0] ? j->job_type : j->model->name;
}

/*
 * A pair the interference table measured decides by the measurement:
 * Gavel ran it co-located on one GPU of that type, or failed to (0
 * steps/s). The memory model prices the jobs' zoo stand-ins (ViT for a
 * ResNet-18, GPT-2 1.5B for a 2-layer LSTM "LM"), which is no evidence
 * either way. `gpus[i]` = GPUs job i holds (with xi); `dec` below.
 */
static int check_memory(const struct rk_gpu_occ *o, struct rk_job *const *jobs,
                        const struct rk_plan *const *plans, double *mb,
                        const struct rk_xi_table *xi, const int *gpus, const int *dec,
                        struct rk_error *err)
{
	const struct rk_cluster *c = o->cluster;
	for (int node = 0; node < c->n_nodes; node++)
		for (int g = 0; g < c->nodes[node].gpus; g++) {
			const int *w = o->who[o->first[node] + g];
			if (w[1] < 0)
				continue;
			/* `dec` (resolve): only pairs a decision makes; what both keep
			 * was checked when they got it (check mode audits it all). */
			if (dec && dec[w[0]] < 0 && dec[w[1]] < 0)
				continue;
			int run = xi ? rk_xi_corun(xi, c->nodes[node].gpu_type, type_of(jobs[w[0]]),
			                           gpus[w[0]], type_of(jobs[w[1]]), gpus[w[1]])
			             : 0;
			if (run < 0)
				return rk_error_set(
				    err, RK_EINFEASIBLE,
				    "job %lld (%s): node %d GPU %d shared with job %lld: "
				    "%s and %s were measured unable to run together on "
				    "one %s",
				    (long long)jobs[w[1]]->id, jobs[w[1]]->name, node, g,
				    (long long)jobs[w[0]]->id, type_of(jobs[w[1]]),
				    type_of(jobs[w[0]]), c->nodes[node].gpu_type);
			if (run > 0)
				continue;
			double m0, m1;
			int rc = job_mb(jobs, plans, mb, w[0], &m0, err);
			if (!rc)
				rc = job_mb(jobs, plans, mb, w[1], &m1, err);
			if (rc)
				return rc;
			if (m0 + m1 > (double)c->nodes[node].gpu_mem_mb)
				return rk_error_set(err, RK_EINFEASIBLE, "job %lld (%s): node %d GPU %d "
						    "shared with job %lld: %.0f + %.0f MiB > the GPU's "
						    "%lld MiB", (long long)jobs[w[1]]->id,
						    jobs[w[1]]->name, node, g, (long long)jobs[w[0]]->id,
						    m1, m0, (long long)c->nodes[node].gpu_mem_mb);
		}
	return 0;
}

struct dec_ix {
	int64_t id;
	int k; /* decision index */
};

static int by_dec(const void *p, const void *q)
{
	const struct dec_ix *x = p, *y = q;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->k > y->k) - (x->k < y->k);
}

/* The first decision about job `id`, -1 if none (ix sorted by by_dec). */
static int dec_find(const struct dec_ix *ix, int d, int64_t id)
{
	int lo = 0, hi = d;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (ix[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d && ix[lo].id == id ? ix[lo].k : -1;
}

int rk_gpu_share_resolve(const struct rk_sched_input *in, struct rk_decisions *ds,
			 const char *policy_name, struct rk_error *err)
{
	const char *pname = policy_name ? policy_name : "?";
	int n = in->n_jobs;
	if (ds->n == 0)
		return 0; /* what jobs keep was checked when they got it (check mode audits it) */
	struct rk_gpu_occ o;
	size_t sz = (size_t)(n > 0 ? n : 1);
	int *dec = malloc(sz * sizeof(*dec)); /* decision of job i, -1; -2 = kept copied */
	const struct rk_plan **plans = malloc(sz * sizeof(*plans));
	double *mb = malloc(sz * sizeof(*mb));
	int *gpus = malloc(sz * sizeof(*gpus));
	struct dec_ix *ix = malloc((size_t)ds->n * sizeof(*ix));
	struct rk_alloc *kept = NULL; /* allocated at the first share that names no GPUs */
	if (!dec || !plans || !mb || !gpus || !ix || rk_gpu_occ_init(&o, in->cluster)) {
		free(dec);
		free(plans);
		free(mb);
		free(gpus);
		free(ix);
		return rk_error_set(err, RK_ENOMEM, "policy %s: GPU sharing check: out of memory",
				    pname);
	}
	int rc = 0;
	for (int k = 0; k < ds->n; k++)
		ix[k] = (struct dec_ix){ds->v[k].job_id, k};
	qsort(ix, (size_t)ds->n, sizeof(*ix), by_dec);
	for (int i = 0; i < n; i++) {
		dec[i] = dec_find(ix, ds->n, in->jobs[i]->id);
		plans[i] = dec[i] >= 0 ? &ds->v[dec[i]].plan : &in->jobs[i]->plan;
		gpus[i] =
		    rk_alloc_total_gpus(dec[i] >= 0 ? &ds->v[dec[i]].alloc : &in->jobs[i]->alloc);
		mb[i] = NAN;
	}
	/*
	 * Kept allocations first, then the decisions. The snapshot is read-only:
	 * an allocation that names its GPUs is added as it is (nothing written),
	 * one that does not is copied so the occupancy can name them.
	 */
	for (int i = 0; i < n && !rc; i++) {
		struct rk_alloc *a = &in->jobs[i]->alloc;
		if (dec[i] >= 0 || a->n == 0)
			continue;
		int named = 1;
		for (int s = 0; s < a->n; s++)
			named &= a->shares[s].gpu_mask != 0;
		if (named) {
			rc = rk_gpu_occ_add(&o, a, i, 0, err);
		} else {
			if (!kept)
				kept = calloc(sz, sizeof(*kept));
			rc = kept ? rk_alloc_copy(&kept[i], a) : RK_ENOMEM;
			if (!rc) {
				dec[i] = -2;
				rc = rk_gpu_occ_add(&o, &kept[i], i, 1, err);
			}
		}
		if (rc)
			rk_error_prefix(err, "policy %s: job %lld (%s) keeps its allocation but", pname,
					(long long)in->jobs[i]->id, in->jobs[i]->name);
	}
	for (int i = 0; i < n && !rc; i++) {
		if (dec[i] < 0 || ds->v[dec[i]].alloc.n == 0)
			continue;
		rc = rk_gpu_occ_add(&o, &ds->v[dec[i]].alloc, i, 1, err);
		if (rc)
			rk_error_prefix(err, "policy %s: job %lld (%s)", pname,
					(long long)in->jobs[i]->id, in->jobs[i]->name);
	}
	/* Memory of every shared GPU, with the plans the jobs will run. */
	if (!rc) {
		rc = check_memory(&o, in->jobs, plans, mb, in->xi, gpus, dec, err);
		if (rc)
			rk_error_prefix(err, "policy %s", pname);
	}
	for (int i = 0; kept && i < n; i++)
		if (dec[i] == -2)
			rk_alloc_fini(&kept[i]);
	free(kept);
	free(ix);
	free(mb);
	free(gpus);
	free(dec);
	free(plans);
	rk_gpu_occ_fini(&o);
	return rc;
}

int rk_gpu_share_audit(const struct rk_cluster *c, struct rk_job *const *jobs, int n,
		       struct rk_error *err)
{
	return rk_gpu_share_audit_xi(c, NULL, jobs, n, err);
}

int rk_gpu_share_audit_xi(const struct rk_cluster *c, const struct rk_xi_table *xi,
                          struct rk_job *const *jobs, int n, struct rk_error *err)
{
	struct rk_gpu_occ o;
	const struct rk_plan **plans = malloc((size_t)(n > 0 ? n : 1) * sizeof(*plans));
	int *gpus = malloc((size_t)(n > 0 ? n : 1) * sizeof(*gpus));
	if (!plans || !gpus || rk_gpu_occ_init(&o, c)) {
		free(plans);
		free(gpus);
		return rk_error_set(err, RK_ENOMEM, "check mode: out of memory");
	}
	int rc = 0;
	for (int i = 0; i < n && !rc; i++) {
		plans[i] = &jobs[i]->plan;
		gpus[i] = rk_alloc_total_gpus(&jobs[i]->alloc);
		for (int k = 0; k < jobs[i]->alloc.n && !rc; k++)
			if (!jobs[i]->alloc.shares[k].gpu_mask)
				rc = rk_error_set(err, RK_EINTERNAL, "job %lld holds node %d without "
						  "naming its GPUs", (long long)jobs[i]->id,
						  jobs[i]->alloc.shares[k].node);
		if (!rc && rk_gpu_occ_add(&o, &jobs[i]->alloc, i, 0, err))
			rc = RK_EINTERNAL;
	}
	if (!rc && check_memory(&o, jobs, plans, NULL, xi, gpus, NULL, err))
		rc = RK_EINTERNAL;
	if (rc && err)
		err->code = rc;
	free(plans);
	free(gpus);
	rk_gpu_occ_fini(&o);
	return rc;
}
