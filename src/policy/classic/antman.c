/*
 * AntMan baseline (docs/references.md §5.3; Xiao et al., OSDI 2020, as ported by
 * the Rubick artifact: GPU-only, SLA jobs before the rest, no plan change).
 *
 * Two classes of job:
 *  - resource-guaranteed jobs (job->guaranteed) get exactly their request
 *    (GPUs, and the CPUs and memory they asked for), gang-placed, considered
 *    first each round in FIFO order. A guaranteed job is never preempted.
 *  - opportunistic (best-effort) jobs take whatever is left, in FIFO order,
 *    packed onto spare capacity (best fit, rk_place_gang). When a guaranteed
 *    job cannot fit in the free capacity but would fit with opportunistic jobs
 *    removed, the opportunistic jobs in its way are preempted, most recently
 *    (re)started first, which is AntMan's rule that opportunistic work yields
 *    to guaranteed work on contention.
 *
 * Differences from the paper, stated: AntMan also shares one GPU between a
 * guaranteed and opportunistic job by time-slicing and GPU-memory growth; our
 * cluster model has no fractional GPU, so opportunistic jobs use only idle
 * whole GPUs. Tenant quotas are enforced at submission (daemon), not here.
 * Every job runs its user plan (job->req_plan) on its requested GPU count.
 *
 * Placement (option placement=, docs/policies.md): consolidated by default,
 * as the AntMan of Muri's simulator (switch.py try_cross_node_alloc_antman,
 * yarn: a job that fits a node waits for one node, a larger one takes whole
 * nodes plus one); placement=spread gives the fewest nodes with room.
 */
#include "policy/common/baseline.h"
#include "policy/common/place_opts.h"
#include "rubick/placement.h"
#include "rubick/policy.h"

#include <stdlib.h>
#include <string.h>

/* State: where jobs go (option placement=, default yarn's consolidated). */
struct antman {
	enum rk_place_mode mode;
};

static int antman_create(void **state, const char *options, struct rk_error *err)
{
	*state = NULL;
	enum rk_place_mode mode = RK_PLACE_CONSOLIDATED;
	int rc = rk_place_opts_parse(options, "antman", &mode, NULL, NULL, NULL, err);
	if (rc)
		return rc;
	struct antman *a = malloc(sizeof(*a));
	if (!a)
		return rk_error_set(err, RK_ENOMEM, "antman: out of memory");
	a->mode = mode;
	*state = a;
	return RK_OK;
}

static void antman_destroy(void *state)
{
	free(state);
}

/* Most recently (re)started first: the cheapest opportunistic work to lose. */
static int cmp_victim(const void *pa, const void *pb)
{
	const struct rk_job *a = *(struct rk_job *const *)pa, *b = *(struct rk_job *const *)pb;
	if (a->last_change_ms != b->last_change_ms)
		return a->last_change_ms > b->last_change_ms ? -1 : 1;
	return (a->id < b->id) - (a->id > b->id);
}

static int holds_gpus_on(const struct rk_job *j, int node)
{
	for (int i = 0; i < j->alloc.n; i++)
		if (j->alloc.shares[i].node == node && j->alloc.shares[i].gpus > 0)
			return 1;
	return 0;
}

/*
 * Choose opportunistic victims (from `opp`, n entries, sorted by cmp_victim,
 * `gone[i]` already preempted) so that `want` fits in a copy of `cap`. On
 * success marks them in `pick` and returns 1; 0 when no victim set works.
 */
static int choose_victims(const struct rk_capacity *cap, struct rk_job **opp, const char *gone,
			  int n, const struct rk_alloc *want, char *pick, int *rc)
{
	struct rk_capacity scratch;
	*rc = rk_capacity_copy(&scratch, cap);
	if (*rc)
		return 0;
	memset(pick, 0, (size_t)n);
	int ok = rk_capacity_fits(&scratch, want);
	while (!ok) {
		int v = -1;
		/* Only jobs on nodes of `want` can help; take the first by victim order. */
		for (int i = 0; i < n && v < 0; i++) {
			if (gone[i] || pick[i])
				continue;
			for (int s = 0; s < want->n; s++)
				if (holds_gpus_on(opp[i], want->shares[s].node)) {
					v = i;
					break;
				}
		}
		if (v < 0)
			break;
		*rc = rk_capacity_give(&scratch, &opp[v]->alloc, NULL);
		if (*rc)
			break;
		pick[v] = 1;
		ok = rk_capacity_fits(&scratch, want);
	}
	rk_capacity_fini(&scratch);
	return ok && !*rc;
}

static int antman_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			   struct rk_error *err)
{
	enum rk_place_mode mode = state ? ((const struct antman *)state)->mode : RK_PLACE_CONSOLIDATED;
	int n = in->n_jobs, rc = RK_OK;
	struct rk_job **g = calloc((size_t)n + 1, sizeof(*g));
	struct rk_job **o = calloc((size_t)n + 1, sizeof(*o));
	char *gone = calloc((size_t)n + 1, 1), *pick = calloc((size_t)n + 1, 1);
	struct rk_capacity cap = {0}, without_opp = {0};
	struct rk_alloc a;
	rk_alloc_init(&a);
	if (!g || !o || !gone || !pick) {
		rc = rk_error_set(err, RK_ENOMEM, "antman: out of memory for %d jobs", n);
		goto out;
	}
	int ng = 0, no = 0;
	for (int i = 0; i < n; i++) {
		if (in->jobs[i]->guaranteed)
			g[ng++] = in->jobs[i];
		else
			o[no++] = in->jobs[i];
	}
	rk_baseline_sort_fifo(g, ng);
	rc = rk_capacity_from_jobs(&cap, in->cluster, in->jobs, n, err);
	if (rc)
		goto out;

	/* Opportunistic jobs in victim order; placement order is FIFO below. */
	struct rk_job **victims = o;
	qsort(victims, (size_t)no, sizeof(*victims), cmp_victim);

	for (int i = 0; i < ng; i++) {
		struct rk_job *j = g[i];
		if (rk_baseline_is_placed(j))
			continue;
		struct rk_place_req req;
		rk_place_req_from_job(j, &req);
		req.mode = mode;
		if (rk_place_gang(&cap, &req, &a) != RK_OK) {
			/* Would it fit with every running opportunistic job gone? */
			rk_capacity_fini(&without_opp);
			rc = rk_capacity_copy(&without_opp, &cap);
			for (int v = 0; !rc && v < no; v++)
				if (!gone[v] && rk_baseline_is_placed(victims[v]))
					rc = rk_capacity_give(&without_opp, &victims[v]->alloc, err);
			if (rc)
				goto out;
			if (rk_place_gang(&without_opp, &req, &a) != RK_OK)
				continue; /* waits for guaranteed work to finish */
			if (!choose_victims(&cap, victims, gone, no, &a, pick, &rc)) {
				if (rc)
					goto out;
				continue;
			}
			for (int v = 0; v < no; v++) {
				if (!pick[v])
					continue;
				rc = rk_capacity_give(&cap, &victims[v]->alloc, err);
				if (!rc)
					rc = rk_decisions_push(out, victims[v]->id, NULL, &victims[v]->req_plan);
				if (rc)
					goto out;
				gone[v] = 1;
			}
		}
		rc = rk_capacity_take(&cap, &a, err);
		if (!rc)
			rc = rk_decisions_push(out, j->id, &a, &j->req_plan);
		if (rc)
			goto out;
	}

	/* Opportunistic jobs: FIFO onto what is left; this round's victims wait. */
	struct rk_job **fifo = calloc((size_t)no + 1, sizeof(*fifo));
	if (!fifo) {
		rc = rk_error_set(err, RK_ENOMEM, "antman: out of memory");
		goto out;
	}
	int nf = 0;
	for (int v = 0; v < no; v++)
		if (!gone[v] && !rk_baseline_is_placed(victims[v]))
			fifo[nf++] = victims[v];
	rk_baseline_sort_fifo(fifo, nf);
	for (int i = 0; i < nf && rc == RK_OK; i++) {
		struct rk_place_req req;
		rk_place_req_from_job(fifo[i], &req);
		req.mode = mode;
		if (rk_place_gang_take(&cap, &req, &a) == RK_OK)
			rc = rk_decisions_push(out, fifo[i]->id, &a, &fifo[i]->req_plan);
	}
	free(fifo);
	if (rc)
		rk_error_set(err, rc, "antman: out of memory recording decisions");
out:
	rk_alloc_fini(&a);
	rk_capacity_fini(&cap);
	rk_capacity_fini(&without_opp);
	free(g);
	free(o);
	free(gone);
	free(pick);
	return rc;
}

const struct rk_policy_ops rk_policy_antman = {
	.name = "antman",
	.summary = "AntMan: guaranteed jobs get their request first; opportunistic jobs use spare GPUs and yield",
	.create = antman_create,
	.destroy = antman_destroy,
	.schedule = antman_schedule,
	/* Only pending jobs are placed, and what it decides depends only on which
	 * jobs are active and what they hold: rounds without an arrival, a
	 * completion or an applied decision change nothing. */
	.flags = RK_POLICY_IDLE_NOOP | RK_POLICY_EVENT_DRIVEN,
	/* With no guaranteed job every job is opportunistic: FIFO order, nothing yields. */
	.needs = RK_POLICY_NEEDS_GUARANTEED,
	.without = "fifo",
};
