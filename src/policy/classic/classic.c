/*
 * The classic baselines' common round (FIFO, SJF, SRTF, Tiresias): gang
 * scheduling of each job's requested GPUs with its requested plan on a
 * consolidated placement (docs/references.md §5.5: "gang allocation,
 * consolidate-by-default placement"). By default a job that fits one node
 * waits for one node, and a larger one takes whole idle nodes plus one, as
 * the Tiresias and Muri simulators place (`--scheme=yarn`, Muri
 * simulator/switch.py ms_yarn_alloc_res); option placement=spread gives the
 * fewest nodes with room instead (the Sia artifact's Tiresias port).
 *
 * Non-preemptive (FIFO, SJF): pending jobs in priority order, each started
 * when its request fits; a job that does not fit is skipped and the next one
 * tried (greedy first fit in priority order, no head-of-line blocking, as the
 * event-driven simulators of Tiresias and Muri serve their FIFO queue [I]).
 *
 * Preemptive (SRTF, Tiresias 2D-LAS), the Tiresias simulator's rule [C:
 * adaptdl tiresias.py in the Sia artifact, docs/references.md §5.5], made
 * placement-aware:
 *  1. all active jobs in priority order; a job is *selected* when its GPUs fit
 *     in what the higher-priority selected jobs leave of the cluster;
 *  2. selected jobs that hold resources keep them (no needless migration);
 *  3. each selected pending job is placed on the free capacity; if it does not
 *     fit, unselected running jobs are preempted lowest priority first until
 *     it does (undone if even that is not enough), so no job is preempted
 *     without making room for a higher-priority one;
 *  4. unselected pending jobs then fill what is left, in priority order
 *     (work conserving).
 */
#include "policy/classic/classic.h"
#include "policy/common/place_opts.h"

#include "rubick/placement.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

double classic_remaining_s(const struct rk_job *job)
{
	if (job->est_duration_s <= 0 || job->iters_total <= 0)
		return INFINITY;
	double left = 1.0 - job->iters_done / job->iters_total;
	return job->est_duration_s * (left > 0 ? left : 0);
}

int classic_create_noopt(void **state, const char *options, struct rk_error *err,
			 const char *name)
{
	*state = NULL;
	if (options && *options)
		return rk_error_set(err, RK_EINVAL, "policy %s takes no options (got '%s')", name,
				    options);
	return 0;
}

int classic_create_cache(void **state, const char *options, struct rk_error *err,
			 const char *name)
{
	*state = NULL;
	enum rk_place_mode mode = CLASSIC_PLACE_DEFAULT;
	int rc = rk_place_opts_parse(options, name, &mode, NULL, NULL, NULL, err);
	if (rc)
		return rc;
	struct classic_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return rk_error_set(err, RK_ENOMEM, "policy %s: out of memory", name);
	c->mode = mode;
	*state = c;
	return 0;
}

static int holds(const struct rk_job *j)
{
	return j->alloc.n > 0;
}

static void sift_down(struct classic_item *h, int n, int i)
{
	for (;;) {
		int c = 2 * i + 1;
		if (c >= n)
			return;
		if (c + 1 < n && classic_item_cmp(&h[c + 1], &h[c]) < 0)
			c++;
		if (classic_item_cmp(&h[c], &h[i]) >= 0)
			return;
		struct classic_item t = h[i];
		h[i] = h[c];
		h[c] = t;
		i = c;
	}
}

/*
 * Pending jobs in priority order through a binary heap: the round stops as
 * soon as no GPU is left, so a long queue costs O(n + k log n) for the k jobs
 * looked at instead of a full sort.
 */
static int schedule_fifo_like(struct classic_item *it, int n, struct rk_capacity *cap,
			      enum rk_place_mode mode, struct rk_decisions *out)
{
	int rc = 0;
	for (int i = n / 2 - 1; i >= 0; i--)
		sift_down(it, n, i);
	while (n > 0 && !rc && cap->free_gpus_total > 0) {
		struct rk_job *j = it[0].job;
		it[0] = it[--n];
		sift_down(it, n, 0);
		if (!holds(j))
			classic_try_start(cap, j, mode, out, &rc);
	}
	return rc;
}

static int schedule_preemptive(struct classic_item *it, int n, struct rk_capacity *cap, int budget,
			       enum rk_place_mode mode, struct rk_decisions *out)
{
	int rc = 0;
	for (int i = 0; i < n; i++) {
		int g = it[i].job->req_gpus;
		if (holds(it[i].job))
			g = rk_alloc_total_gpus(&it[i].job->alloc);
		if (g <= budget) {
			it[i].selected = 1;
			budget -= g;
		}
	}
	/* Step 3: place selected pending jobs, preempting from the bottom when needed. */
	int *victims = malloc((size_t)(n > 0 ? n : 1) * sizeof(*victims));
	int *cands = malloc((size_t)(n > 0 ? n : 1) * sizeof(*cands));
	if (!victims || !cands) {
		free(victims);
		free(cands);
		return RK_ENOMEM;
	}
	/* Possible victims, in priority order: unselected holders (few: they hold GPUs). */
	int nc = 0;
	for (int v = 0; v < n; v++)
		if (!it[v].selected && holds(it[v].job))
			cands[nc++] = v;
	for (int i = 0; i < n && !rc; i++) {
		if (!it[i].selected || holds(it[i].job))
			continue;
		if (classic_try_start(cap, it[i].job, mode, out, &rc) || rc)
			continue;
		int nv = 0, placed = 0;
		for (int c = nc - 1; c >= 0 && cands[c] > i && !placed && !rc; c--) {
			int v = cands[c];
			if (it[v].preempted)
				continue;
			rc = rk_capacity_give(cap, &it[v].job->alloc, NULL);
			if (rc)
				break;
			it[v].preempted = 1;
			victims[nv++] = v;
			if (cap->free_gpus_total >= it[i].job->req_gpus)
				placed = classic_try_start(cap, it[i].job, mode, out, &rc);
		}
		if (placed && !rc)
			rc = classic_restore_victims(cap, it, victims, nv);
		/* Not enough even with every victim gone: they all keep running. */
		for (int k = 0; k < nv && !placed && !rc; k++) {
			rc = rk_capacity_take(cap, &it[victims[k]].job->alloc, NULL);
			it[victims[k]].preempted = 0;
		}
	}
	free(victims);
	free(cands);
	for (int i = 0; i < n && !rc; i++)
		if (it[i].preempted)
			rc = rk_decisions_push(out, it[i].job->id, NULL, NULL);
	/* Step 4: fill what is left (jobs preempted this round stay out). */
	for (int i = 0; i < n && !rc; i++)
		if (!it[i].selected && !holds(it[i].job))
			classic_try_start(cap, it[i].job, mode, out, &rc);
	return rc;
}

/* Whether some pending job outranks some job holding resources. O(n), no sort. */
static int preemption_possible(const struct classic_item *it, int n)
{
	const struct classic_item *best_pending = NULL, *worst_holder = NULL;
	for (int i = 0; i < n; i++) {
		if (holds(it[i].job)) {
			if (!worst_holder || classic_item_cmp(&it[i], worst_holder) > 0)
				worst_holder = &it[i];
		} else if (!best_pending || classic_item_cmp(&it[i], best_pending) < 0) {
			best_pending = &it[i];
		}
	}
	return best_pending && worst_holder && classic_item_cmp(best_pending, worst_holder) < 0;
}

/*
 * Keep only pending jobs that fit the free GPUs by count. Exact when nobody
 * can be preempted: free capacity then only shrinks during the round, so a
 * larger job could neither be selected nor placed. A saturated cluster with a
 * long queue then sorts a handful of jobs per round instead of the queue.
 */
static int filter_fitting(struct classic_item *it, int n, int free_gpus)
{
	int m = 0;
	for (int i = 0; i < n; i++)
		if (!holds(it[i].job) && it[i].job->req_gpus <= free_gpus)
			it[m++] = it[i];
	return m;
}

void classic_cache_fini(struct classic_cache *c)
{
	if (!c)
		return;
	free(c->ids);
	classic_inc_free(c->inc);
	memset(c, 0, sizeof(*c));
}

/* Fibonacci hashing of a job id into 2^bits slots. */
static size_t id_slot(int64_t id, int bits)
{
	return (size_t)(((uint64_t)id * 0x9e3779b97f4a7c15ULL) >> (64 - bits));
}

/*
 * Sort `it` by priority, starting from the cached order of the last round
 * (insertion sort, O(n + moves)); fall back to qsort when the order moved a
 * lot. The result is the same total order either way (classic_item_cmp is strict).
 */
static int order_items(struct classic_cache *c, struct classic_item *it, int m)
{
	int rc = 0;
	int bits = 1;
	while ((1 << bits) < 2 * m)
		bits++;
	int *slot = NULL;
	struct classic_item *ord = NULL;
	char *used = NULL;
	if (!c || c->n == 0 || m < 64)
		goto full;
	slot = malloc(((size_t)1 << bits) * sizeof(*slot));
	ord = malloc((size_t)m * sizeof(*ord));
	used = calloc((size_t)m, 1);
	if (!slot || !ord || !used)
		goto full;
	size_t mask = ((size_t)1 << bits) - 1;
	memset(slot, 0xff, ((size_t)1 << bits) * sizeof(*slot));
	for (int i = 0; i < m; i++) {
		size_t h = id_slot(it[i].job->id, bits);
		while (slot[h] >= 0)
			h = (h + 1) & mask;
		slot[h] = i;
	}
	int k = 0;
	for (int q = 0; q < c->n; q++) {
		for (size_t h = id_slot(c->ids[q], bits); slot[h] >= 0; h = (h + 1) & mask) {
			int i = slot[h];
			if (it[i].job->id != c->ids[q])
				continue;
			if (!used[i]) {
				used[i] = 1;
				ord[k++] = it[i];
			}
			break;
		}
	}
	for (int i = 0; i < m; i++)
		if (!used[i])
			ord[k++] = it[i];
	long moves = 0, limit = 8L * m + 1024;
	for (int i = 1; i < m && moves <= limit; i++) {
		struct classic_item x = ord[i];
		int j = i;
		for (; j > 0 && classic_item_cmp(&ord[j - 1], &x) > 0 && moves <= limit; j--, moves++)
			ord[j] = ord[j - 1];
		ord[j] = x;
	}
	if (moves > limit)
		goto full;
	memcpy(it, ord, (size_t)m * sizeof(*it));
	goto save;
full:
	qsort(it, (size_t)m, sizeof(*it), classic_item_cmp);
save:
	if (c) {
		if (m > c->cap) {
			int64_t *v = realloc(c->ids, (size_t)m * sizeof(*v));
			if (!v) {
				rc = RK_ENOMEM;
				c->n = 0;
				goto done;
			}
			c->ids = v;
			c->cap = m;
		}
		for (int i = 0; i < m; i++)
			c->ids[i] = it[i].job->id;
		c->n = m;
	}
done:
	free(slot);
	free(ord);
	free(used);
	return rc;
}

/*
 * Repack round (option repack=on of a preemptive policy): the Muri/Tiresias
 * simulators' `shortest` (Muri simulator/run_sim.py shortest_first_sim_jobs)
 * empties the cluster at every event and places every job again in priority
 * order; a job that no longer fits stops, one that fits elsewhere moves. Ours
 * keeps a running job's allocation when it is still free at its turn (Muri
 * re-places first fit, which mostly lands on the same nodes), else places it
 * anew (a move pays the restart cost, 0 in Muri's rows), else preempts it.
 */
static int schedule_repack(struct classic_item *it, int m, const struct rk_sched_input *in,
			   enum rk_place_mode mode, struct rk_decisions *out)
{
	struct rk_capacity cap;
	int rc = rk_capacity_init(&cap, in->cluster);
	if (rc)
		return rc;
	qsort(it, (size_t)m, sizeof(*it), classic_item_cmp);
	for (int i = 0; i < m && !rc; i++) {
		struct rk_job *j = it[i].job;
		if (holds(j) && rk_capacity_fits(&cap, &j->alloc)) {
			rc = rk_capacity_take(&cap, &j->alloc, NULL);
			continue;
		}
		struct rk_place_req req;
		rk_place_req_from_job(j, &req);
		req.mode = mode;
		struct rk_alloc a;
		rk_alloc_init(&a);
		int r = req.gpus <= cap.free_gpus_total ? rk_place_gang_take(&cap, &req, &a)
							 : RK_EINFEASIBLE;
		if (r == 0)
			rc = rk_decisions_push(out, j->id, &a, &j->req_plan);
		else if (r == RK_EINFEASIBLE && holds(j))
			rc = rk_decisions_push(out, j->id, NULL, NULL);
		else if (r != RK_EINFEASIBLE)
			rc = r;
		rk_alloc_fini(&a);
	}
	rk_capacity_fini(&cap);
	return rc;
}

int classic_schedule(const struct classic_spec *spec, const void *opt,
		     struct classic_cache *cache, const struct rk_sched_input *in, struct rk_decisions *out,
		     struct rk_error *err)
{
	if (cache && cache->repack && spec->preemptive) {
		struct classic_item *it = calloc((size_t)(in->n_jobs > 0 ? in->n_jobs : 1), sizeof(*it));
		if (!it)
			return rk_error_set(err, RK_ENOMEM, "policy %s: out of memory", spec->name);
		int m = 0;
		for (int i = 0; i < in->n_jobs; i++) {
			struct rk_job *j = in->jobs[i];
			if (j->state != RK_JOB_PENDING && j->state != RK_JOB_RUNNING &&
			    j->state != RK_JOB_RESTARTING)
				continue;
			it[m].job = j;
			spec->key(j, in->now_ms, opt, &it[m].key);
			m++;
		}
		int rc = schedule_repack(it, m, in, cache->mode, out);
		free(it);
		if (rc)
			return rk_error_set(err, rc, "policy %s: %s", spec->name, rk_strerror(rc));
		return 0;
	}
	if (cache && in->incremental)
		return classic_inc_schedule(spec, opt, cache, in, out, err);
	if (cache && cache->inc) { /* a round without the feed: rebuild at the next one */
		classic_inc_free(cache->inc);
		cache->inc = NULL;
	}
	int n = in->n_jobs, rc;
	struct rk_capacity cap;
	rc = rk_capacity_from_jobs(&cap, in->cluster, in->jobs, n, err);
	if (rc)
		return rk_error_prefix(err, "policy %s", spec->name);
	struct classic_item *it = calloc((size_t)(n > 0 ? n : 1), sizeof(*it));
	if (!it) {
		rk_capacity_fini(&cap);
		return rk_error_set(err, RK_ENOMEM, "policy %s: out of memory", spec->name);
	}
	int m = 0;
	for (int i = 0; i < n; i++) {
		struct rk_job *j = in->jobs[i];
		if (j->state != RK_JOB_PENDING && j->state != RK_JOB_RUNNING &&
		    j->state != RK_JOB_RESTARTING)
			continue;
		if (!spec->preemptive && holds(j))
			continue; /* running jobs are never touched */
		it[m].job = j;
		spec->key(j, in->now_ms, opt, &it[m].key);
		m++;
	}
	int budget = rk_cluster_total_gpus(in->cluster);
	long waiting_gpus = 0;
	for (int i = 0; i < m; i++)
		if (!holds(it[i].job))
			waiting_gpus += it[i].job->req_gpus;
	/*
	 * Nobody is preempted when no waiting job outranks a running one, or when
	 * every waiting job fits the free GPUs by count (all are then selected and
	 * there is no unselected victim).
	 */
	if (!spec->preemptive || waiting_gpus <= cap.free_gpus_total ||
	    !preemption_possible(it, m)) {
		/* Holders all keep running and come first: start from what they leave. */
		m = filter_fitting(it, m, cap.free_gpus_total);
		budget = cap.free_gpus_total;
	}
	enum rk_place_mode mode = cache ? cache->mode : CLASSIC_PLACE_DEFAULT;
	if (spec->preemptive) {
		rc = order_items(cache, it, m);
		if (!rc)
			rc = schedule_preemptive(it, m, &cap, budget, mode, out);
	} else {
		rc = schedule_fifo_like(it, m, &cap, mode, out);
	}
	free(it);
	rk_capacity_fini(&cap);
	if (rc)
		return rk_error_set(err, rc, "policy %s: %s", spec->name, rk_strerror(rc));
	return 0;
}
