/*
 * Sia baseline, goodput mode (see sia.c): what the policy has observed of
 * each job with a goodput model. Sia fits a job's throughput model on a GPU
 * type from the iterations it has run there, and explores larger
 * configurations only gradually (Jayaram Subramanya et al., SOSP 2023, §3.3;
 * artifact sia-simulator/job.py update_params, cluster.py
 * get_sia_multi_job_info: at most twice the most replicas profiled on any
 * type). Here a job has been observed on a type once a round sees it running
 * there past its restart (the allocation this policy made, being measured),
 * with what that measured (several nodes, several GPUs of one node, more
 * than two replicas: the terms of its fit the data then pins down), and the
 * most replicas it has run with is kept. A leaf of the folder.
 *
 * Open addressing on the job id, under half load; rebuilt with only the jobs
 * of the input when a round could pass it.
 */
#include "policy/sia/sia_internal.h"

#include "rubick/error.h"
#include "rubick/policy.h"

#include <stdlib.h>
#include <string.h>

struct seen_entry {
	int64_t id;
	struct sia_seen_obs obs;
	int used;
};

struct sia_seen {
	struct seen_entry *slots;
	size_t cap, used; /* cap a power of two, used < cap / 2 */
};

static size_t slot_of(int64_t id, size_t cap)
{
	uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ull;
	return (size_t)(h ^ (h >> 31)) & (cap - 1);
}

static struct seen_entry *find(const struct sia_seen *s, int64_t id)
{
	for (size_t i = slot_of(id, s->cap);; i = (i + 1) & (s->cap - 1)) {
		struct seen_entry *e = &s->slots[i];
		if (!e->used || e->id == id)
			return e;
	}
}

int sia_seen_create(struct sia_seen **out)
{
	*out = NULL;
	struct sia_seen *s = calloc(1, sizeof(*s));
	if (!s)
		return RK_ENOMEM;
	s->cap = 64;
	s->slots = calloc(s->cap, sizeof(*s->slots));
	if (!s->slots) {
		free(s);
		return RK_ENOMEM;
	}
	*out = s;
	return RK_OK;
}

void sia_seen_destroy(struct sia_seen *s)
{
	if (s)
		free(s->slots);
	free(s);
}

void sia_seen_get(const struct sia_seen *s, int64_t job_id, struct sia_seen_obs *obs)
{
	const struct seen_entry *e = s ? find(s, job_id) : NULL;
	if (e && e->used)
		*obs = e->obs;
	else
		memset(obs, 0, sizeof(*obs));
}

/* Replace s's table by one of `cap` slots with the entries of the input's jobs. */
static int rebuild(struct sia_seen *s, size_t cap, const struct rk_sched_input *in)
{
	struct sia_seen n = {.cap = cap};
	n.slots = calloc(cap, sizeof(*n.slots));
	if (!n.slots)
		return RK_ENOMEM;
	for (int ji = 0; ji < in->n_jobs; ji++) {
		const struct seen_entry *e = find(s, in->jobs[ji]->id);
		if (!e->used)
			continue;
		*find(&n, e->id) = *e;
		n.used++;
	}
	free(s->slots);
	*s = n;
	return RK_OK;
}

/* Index of the node's GPU type among the job's throughput models, or -1. */
static int type_index(const struct rk_job_goodput *gp, const char *name)
{
	for (int i = 0; i < gp->n_types && i < RK_JOB_GOODPUT_TYPES; i++)
		if (!strncmp(gp->gpu_type[i], name, RK_GPU_TYPE_MAX))
			return i;
	return -1;
}

int sia_seen_update(struct sia_seen *s, const struct rk_sched_input *in)
{
	/* Each job of the input may add an entry: when that could pass half load,
	 * keep only the input's jobs, in a table at most a quarter full of them. */
	size_t n = (size_t)in->n_jobs + 1;
	if (s->used + n > s->cap / 2) {
		size_t cap = s->cap;
		while (cap < 4 * n)
			cap *= 2;
		if (rebuild(s, cap, in))
			return RK_ENOMEM;
	}
	for (int ji = 0; ji < in->n_jobs; ji++) {
		const struct rk_job *j = in->jobs[ji];
		if (!sia_gp_on(j) || j->state != RK_JOB_RUNNING || j->alloc.n < 1)
			continue;
		int node = j->alloc.shares[0].node;
		if (node < 0 || node >= in->cluster->n_nodes)
			continue;
		int k = type_index(j->goodput, in->cluster->nodes[node].gpu_type);
		if (k < 0)
			continue;
		int replicas = j->plan.dp > 0 ? j->plan.dp : rk_alloc_total_gpus(&j->alloc);
		struct seen_entry *e = find(s, j->id);
		if (!e->used) {
			*e = (struct seen_entry){.id = j->id, .used = 1};
			s->used++;
		}
		uint32_t bit = 1u << k;
		struct sia_seen_obs *o = &e->obs;
		o->ran |= bit;
		if (replicas > 1 && j->alloc.n > 1)
			o->multi_node |= bit;
		if (replicas > 1 && j->alloc.n == 1)
			o->one_node |= bit;
		if (replicas > 2)
			o->over2 |= bit;
		if (replicas > o->max_replicas)
			o->max_replicas = replicas;
	}
	return RK_OK;
}
