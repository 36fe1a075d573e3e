/*
 * Decision lists and their validation. Drivers (simulator, daemon) apply a
 * policy's decisions only after rk_decisions_validate accepts the whole list:
 * a buggy policy must never over-allocate a node or break a job's global batch.
 */
#include "rubick/policy.h"

#include "rubick/plan.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

void rk_decisions_init(struct rk_decisions *d)
{
	d->n = 0;
	d->cap = 0;
	d->v = NULL;
	d->wake_ms = 0;
	d->quiet_until_ms = 0;
}

void rk_decisions_clear(struct rk_decisions *d)
{
	for (int i = 0; i < d->n; i++)
		rk_alloc_fini(&d->v[i].alloc);
	d->n = 0;
	d->wake_ms = 0;
	d->quiet_until_ms = 0;
}

void rk_decisions_fini(struct rk_decisions *d)
{
	if (!d)
		return;
	rk_decisions_clear(d);
	free(d->v);
	rk_decisions_init(d);
}

int rk_decisions_push(struct rk_decisions *d, int64_t job_id, const struct rk_alloc *alloc,
		      const struct rk_plan *plan)
{
	if (d->n == d->cap) {
		int ncap = d->cap ? d->cap * 2 : 16;
		struct rk_decision *v = realloc(d->v, (size_t)ncap * sizeof(*v));
		if (!v)
			return RK_ENOMEM;
		d->v = v;
		d->cap = ncap;
	}
	struct rk_decision *x = &d->v[d->n];
	memset(x, 0, sizeof(*x));
	x->job_id = job_id;
	rk_alloc_init(&x->alloc);
	if (alloc && alloc->n > 0) {
		if (rk_alloc_copy(&x->alloc, alloc))
			return RK_ENOMEM;
		if (plan)
			x->plan = *plan;
	}
	d->n++;
	return 0;
}

struct id_index {
	int64_t id;
	int index;
};

static int by_id(const void *a, const void *b)
{
	const struct id_index *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

static const struct id_index *find_id(const struct id_index *v, int n, int64_t id)
{
	struct id_index key = {id, -1};
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (v[mid].id < key.id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].id == id ? &v[lo] : NULL;
}

/* Shape checks of one allocation that need no capacity: nodes distinct and up, GPUs >= 1. */
static int check_shape(const struct rk_cluster *c, const struct rk_alloc *a,
		       struct rk_error *err)
{
	for (int i = 0; i < a->n; i++) {
		const struct rk_share *s = &a->shares[i];
		if (s->node < 0 || s->node >= c->n_nodes)
			return rk_error_set(err, RK_EINVAL, "node %d does not exist (cluster has %d "
					    "nodes)", s->node, c->n_nodes);
		if (!c->nodes[s->node].up)
			return rk_error_set(err, RK_EINFEASIBLE, "node %d is down", s->node);
		if (s->gpus < 1 || s->cpus < 0 || s->mem_mb < 0)
			return rk_error_set(err, RK_EINVAL, "share on node %d has %d GPUs, %d CPUs, "
					    "%lld MiB (need >= 1 GPU, no negative amount)",
					    s->node, s->gpus, s->cpus, (long long)s->mem_mb);
		for (int j = 0; j < i; j++)
			if (a->shares[j].node == s->node)
				return rk_error_set(err, RK_EINVAL, "node %d appears twice", s->node);
	}
	return 0;
}

void rk_job_gpu_range(const struct rk_job *job, int *lo, int *hi)
{
	*lo = job->min_gpus > 0 ? job->min_gpus : 1;
	*hi = job->max_gpus > 0 ? job->max_gpus : INT_MAX;
}

/* The job's own [min_gpus, max_gpus] bounds every policy (docs/policies.md "GPU ranges"). */
static int check_range(const struct rk_job *job, const struct rk_decision *d, struct rk_error *err)
{
	int lo, hi, gpus = rk_alloc_total_gpus(&d->alloc);
	rk_job_gpu_range(job, &lo, &hi);
	if (gpus < lo || gpus > hi)
		return rk_error_set(err, RK_ERANGE, "%d GPUs is outside the job's range [%d, %d] "
				    "(min_gpus, max_gpus)", gpus, lo, job->max_gpus > 0 ? hi : gpus);
	return 0;
}

static int check_plan(const struct rk_job *job, const struct rk_decision *d, struct rk_error *err)
{
	int gpus = rk_alloc_total_gpus(&d->alloc);
	int rc = rk_plan_validate(&d->plan, job->global_batch, gpus, err);
	if (rc)
		return rc;
	/* The job's script cannot run a plan outside its declared space: a policy
	 * that picks one has a bug, whatever the plan's predicted speed. */
	if ((rc = rk_plan_space_check(&d->plan, &job->space, err)))
		return rc;
	struct rk_placement pl;
	if (rk_alloc_to_placement(&d->alloc, &pl))
		return rk_error_set(err, RK_EINFEASIBLE, "allocation spans more than %d nodes",
				    RK_PLACEMENT_MAX_NODES);
	return rk_plan_check_placement(&d->plan, &pl, err);
}

int rk_decisions_validate(const struct rk_sched_input *in, const struct rk_decisions *ds,
			  const char *policy_name, struct rk_error *err)
{
	const char *pname = policy_name ? policy_name : "?";
	int rc = 0;
	if (ds->n == 0) {
		/* Nothing changes hands; only a job left on a node that went down is wrong. */
		for (int i = 0; i < in->n_jobs; i++) {
			const struct rk_job *j = in->jobs[i];
			for (int k = 0; k < j->alloc.n; k++) {
				int node = j->alloc.shares[k].node;
				if (node >= 0 && node < in->cluster->n_nodes && in->cluster->nodes[node].up)
					continue;
				return rk_error_set(err, RK_EINFEASIBLE, "policy %s: job %lld (%s) keeps "
						    "its allocation but: node %d is down", pname,
						    (long long)j->id, j->name, node);
			}
		}
		return 0;
	}
	struct rk_capacity cap = {0};
	struct id_index *jobs = malloc((size_t)ds->n * sizeof(*jobs)); /* job of dec[k] */
	struct id_index *dec = malloc((size_t)(ds->n > 0 ? ds->n : 1) * sizeof(*dec));
	if (!jobs || !dec) {
		rc = rk_error_set(err, RK_ENOMEM, "policy %s: validating decisions: out of memory",
				  pname);
		goto done;
	}
	for (int i = 0; i < ds->n; i++)
		dec[i] = (struct id_index){ds->v[i].job_id, i};
	qsort(dec, (size_t)ds->n, sizeof(*dec), by_id);
	for (int i = 1; i < ds->n; i++)
		if (dec[i].id == dec[i - 1].id) {
			rc = rk_error_set(err, RK_EINVAL, "policy %s: job %lld: decided twice in one "
					  "round (decisions %d and %d)", pname,
					  (long long)dec[i].id, dec[i - 1].index, dec[i].index);
			goto done;
		}
	/* Job of each decision (by position in the sorted decisions): O(jobs log decisions). */
	for (int i = 0; i < ds->n; i++)
		jobs[i] = (struct id_index){-1, -1};
	for (int i = 0; i < in->n_jobs; i++) {
		const struct id_index *d = find_id(dec, ds->n, in->jobs[i]->id);
		if (d)
			jobs[d - dec] = (struct id_index){in->jobs[i]->id, i};
	}
	rc = rk_capacity_init(&cap, in->cluster);
	if (rc) {
		rc = rk_error_set(err, rc, "policy %s: validating decisions: out of memory", pname);
		goto done;
	}
	/* Jobs the policy leaves alone keep what they hold. */
	for (int i = 0; i < in->n_jobs; i++) {
		const struct rk_job *j = in->jobs[i];
		if (find_id(dec, ds->n, j->id))
			continue;
		rc = rk_capacity_take(&cap, &j->alloc, err);
		if (rc) {
			rk_error_prefix(err, "policy %s: job %lld (%s) keeps its allocation but",
					pname, (long long)j->id, j->name);
			goto done;
		}
	}
	/* Then every decision, in the order the policy gave them. */
	for (int i = 0; i < ds->n; i++) {
		const struct rk_decision *d = &ds->v[i];
		const struct id_index *ji = &jobs[find_id(dec, ds->n, d->job_id) - dec];
		if (ji->index < 0) {
			rc = rk_error_set(err, RK_ENOTFOUND, "policy %s: job %lld: no such active job",
					  pname, (long long)d->job_id);
			goto done;
		}
		const struct rk_job *j = in->jobs[ji->index];
		if (j->state != RK_JOB_PENDING && j->state != RK_JOB_RUNNING &&
		    j->state != RK_JOB_RESTARTING) {
			rc = rk_error_set(err, RK_EINVAL, "job is finished (state %d)", (int)j->state);
		} else if (d->alloc.n > 0) {
			rc = check_shape(in->cluster, &d->alloc, err);
			if (!rc)
				rc = check_range(j, d, err);
			if (!rc)
				rc = check_plan(j, d, err);
			if (!rc)
				rc = rk_capacity_take(&cap, &d->alloc, err);
		}
		if (rc) {
			rk_error_prefix(err, "policy %s: job %lld (%s)", pname, (long long)j->id,
					j->name);
			goto done;
		}
	}
done:
	rk_capacity_fini(&cap);
	free(jobs);
	free(dec);
	return rc;
}
