/*
 * Synergy-TUNE baseline (docs/references.md §5.2; Mohan et al., OSDI 2022,
 * msr-fiddle/synergy opt_algo + schedulers): an outer policy (FIFO or SRTF)
 * decides which jobs run with their requested GPUs and plan (GPU-only, like
 * the other baselines, never re-planned); Synergy-TUNE decides how many CPU
 * threads and how much host memory go with those GPUs.
 *
 * Demand vectors. Synergy profiles each job's throughput over CPUs and memory
 * ("optimistic profiling") and asks for its best case. We read that curve off
 * the fitted performance model (§1.4, rk_perf_predict with cpus_per_gpu):
 *   CPUs per GPU   = the fewest threads whose predicted throughput is within
 *                    SYNERGY_TPUT_TOL of the throughput at the most threads a
 *                    node can give, and at least SYNERGY_MIN_CPUS_PER_GPU.
 *                    Only ZeRO-Offload plans run their optimizer on the host,
 *                    so only they ask for many threads; every other plan
 *                    asks 1 thread per GPU, which matches the artifact's
 *                    demand multipliers (§1.3 "Per-plan host-resource demand
 *                    multipliers": 1 for 3D/ga/gc/zero-dp, 8 for zero-offload).
 *   memory per GPU = the host memory the plan keeps per GPU process (memory
 *                    model: offloaded optimizer states), at least the job's own
 *                    per-GPU request; with neither, the GPU-proportional share.
 *                    The model's throughput does not grow with more page
 *                    cache, so more than the need is never asked for.
 *   A job with its trace's measured speeds (rk_job.native_sps) is profiled
 *   from them instead (tput_at).
 *   A job the model cannot predict (unfitted) asks its own per-GPU CPU
 *   request, or the fair share when it gave none.
 * GPU-proportional fair share per GPU = node CPUs / node GPUs and node
 * memory / node GPUs (the smallest over up nodes).
 *
 * Synergy-TUNE, for each job the outer policy starts (§5.2):
 *  1. place with the best-case demand (gang placement: one server when one
 *     has room, else GPUs from the servers with the fewest free GPUs first,
 *     Synergy's own rule: cluster.py allocate_synergy_placement, the default
 *     of its runner.py; option placement= chooses another);
 *  2. if that fails and the demand exceeds the fair share, cap it at the fair
 *     share and retry;
 *  3. if that fails too, pick nodes with enough free GPUs and on each shrink
 *     co-located jobs that hold more than their fair share back to it (fewest
 *     nodes first, then most CPUs per GPU, then most memory per GPU) until the
 *     job fits; shrunk jobs keep GPUs and plan.
 * Guarantee: no job is ever given or shrunk below its fair share unless it
 * asked for less, so every job does at least as well as under a GPU-only
 * scheduler with proportional CPU and memory.
 *
 * Outer policies, as the classic baselines (src/policy/classic/classic.c): FIFO is
 * non-preemptive (pending jobs in arrival order, a job that does not fit is
 * skipped); SRTF is preemptive (jobs selected in ascending remaining time
 * while their GPUs fit the cluster; an unselected running job is preempted,
 * lowest priority first, only to make room for a selected one; unselected
 * pending jobs then fill what is left).
 */
#include "policy/common/baseline.h"
#include "policy/common/place_opts.h"
#include "rubick/memory.h"
#include "rubick/perf.h"
#include "rubick/placement.h"
#include "rubick/policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* "Best case" = within 1% of the most a node could give (the 1% rule of §1.6). */
#define SYNERGY_TPUT_TOL 0.01
/* Every GPU process needs a thread to drive it (§1.3: 1 thread per GPU). */
#define SYNERGY_MIN_CPUS_PER_GPU 1

enum outer { OUTER_FIFO, OUTER_SRTF };

struct item {
	struct rk_job *job;
	int cpg;            /* best-case CPUs per GPU */
	int64_t mpg;        /* best-case memory per GPU (MiB) */
	int selected;       /* SRTF: within the GPU budget in priority order */
	int preempted;      /* 0, or 1 + index of the job it was preempted for this round */
	int changed;        /* newalloc differs from job->alloc */
	struct rk_alloc now; /* allocation after this round's decisions */
};

struct round {
	const struct rk_sched_input *in;
	struct item *it; /* in priority order */
	int n;
	struct rk_capacity cap;
	int fair_cpg;     /* fair CPUs per GPU */
	int64_t fair_mpg; /* fair memory per GPU */
	int max_cpus;     /* most CPUs on one up node */
	int node_gpus;    /* GPUs of the largest up node */
	enum rk_place_mode mode; /* when no one node has room (option placement=) */
};

/* State: where jobs go (option placement=, default Synergy's least-free). */
struct synergy {
	enum rk_place_mode mode;
};

static int synergy_create(void **state, const char *options, struct rk_error *err,
			  const char *name)
{
	*state = NULL;
	enum rk_place_mode mode = RK_PLACE_LEAST_FREE;
	int rc = rk_place_opts_parse(options, name, &mode, NULL, NULL, NULL, err);
	if (rc)
		return rc;
	struct synergy *s = malloc(sizeof(*s));
	if (!s)
		return rk_error_set(err, RK_ENOMEM, "%s: out of memory", name);
	s->mode = mode;
	*state = s;
	return RK_OK;
}

static int create_fifo(void **state, const char *options, struct rk_error *err)
{
	return synergy_create(state, options, err, "synergy-fifo");
}

static int create_srtf(void **state, const char *options, struct rk_error *err)
{
	return synergy_create(state, options, err, "synergy-srtf");
}

static void synergy_destroy(void *state)
{
	free(state);
}

/*
 * Predicted samples/s of the job's own plan at its request with `cpg`
 * threads per GPU. A job with its trace's measured speeds (Gavel and
 * Shockwave job types) is profiled from them, as Synergy profiles the job
 * itself: they do not depend on threads (nor does the simulator's run of the
 * job, docs/oracle.md "Trace-native speeds"), so its best case is the fewest
 * threads.
 */
static double tput_at(const struct round *r, const struct rk_job *j, int cpg)
{
	if (rk_baseline_is_native(j))
		return rk_baseline_native_sps(j, j->req_gpus > 0 ? j->req_gpus : 1);
	struct rk_placement pl;
	if (rk_placement_consolidated(j->req_gpus, r->node_gpus, &pl, NULL))
		return 0;
	double t = 0;
	if (rk_baseline_tput_sps(j, &j->req_plan, &pl, cpg, r->in->env, &t))
		return 0;
	return t;
}

/* The job's best-case demand vector per GPU (see the file comment). */
static void best_case(const struct round *r, struct item *it)
{
	const struct rk_job *j = it->job;
	int g = j->req_gpus > 0 ? j->req_gpus : 1;
	int per_node = g < r->node_gpus ? g : r->node_gpus;
	int hi = r->max_cpus / (per_node > 0 ? per_node : 1);
	int lo = SYNERGY_MIN_CPUS_PER_GPU;
	if (hi < lo)
		hi = lo;
	double top = r->in->env || rk_baseline_is_native(j) ? tput_at(r, j, hi) : 0;
	if (top > 0) {
		/* Throughput is non-decreasing in threads: binary search the knee. */
		while (lo < hi) {
			int mid = lo + (hi - lo) / 2;
			if (tput_at(r, j, mid) >= (1.0 - SYNERGY_TPUT_TOL) * top)
				hi = mid;
			else
				lo = mid + 1;
		}
		it->cpg = lo;
	} else {
		/* No profile (unfitted model or no env): the user's request, else the fair share. */
		it->cpg = j->req_cpus > 0 ? (j->req_cpus + g - 1) / g : r->fair_cpg;
	}

	int64_t need = 0;
	struct rk_mem_usage mu;
	if (rk_memory_estimate(j->model, &j->req_plan, &mu, NULL) == 0 && mu.host_mb > 0)
		need = (int64_t)ceil(mu.host_mb);
	int64_t asked = j->req_mem_mb > 0 ? (j->req_mem_mb + g - 1) / g : 0;
	it->mpg = need > asked ? need : asked;
	if (it->mpg == 0)
		it->mpg = r->fair_mpg;
}

/* Place `it` with per-GPU shares (cpg, mpg) on the free capacity; 0 when it fits. */
static int place_with(struct round *r, struct item *it, int cpg, int64_t mpg, struct rk_alloc *a)
{
	const struct rk_job *j = it->job;
	struct rk_place_req req = {
		.gpus = j->req_gpus > 0 ? j->req_gpus : 1,
		.cpus_per_gpu = cpg,
		.mem_mb_per_gpu = mpg,
		.gpus_multiple = j->req_plan.tp > 1 ? j->req_plan.tp : 1,
		.mode = r->mode,
	};
	return rk_place_gang(&r->cap, &req, a);
}

/* Victim order of step 3: fewest nodes, then most CPUs per GPU, then most memory per GPU. */
static int victim_before(const struct item *a, const struct item *b)
{
	if (a->now.n != b->now.n)
		return a->now.n < b->now.n;
	int ga = rk_alloc_total_gpus(&a->now), gb = rk_alloc_total_gpus(&b->now);
	double ca = (double)rk_alloc_total_cpus(&a->now) / ga, cb = (double)rk_alloc_total_cpus(&b->now) / gb;
	if (ca != cb)
		return ca > cb;
	return (double)rk_alloc_total_mem_mb(&a->now) / ga > (double)rk_alloc_total_mem_mb(&b->now) / gb;
}

/* CPUs and memory `it` holds above its fair share on `node` (0 if none or not there). */
static int above_fair(const struct round *r, const struct item *it, int node)
{
	for (int s = 0; s < it->now.n; s++) {
		const struct rk_share *sh = &it->now.shares[s];
		if (sh->node == node)
			return sh->cpus > sh->gpus * r->fair_cpg || sh->mem_mb > sh->gpus * r->fair_mpg;
	}
	return 0;
}

/* Shrink `v` to its fair share on every node it holds (GPUs and plan kept). */
static void shrink_to_fair(struct round *r, struct item *v)
{
	for (int s = 0; s < v->now.n; s++) {
		struct rk_share *sh = &v->now.shares[s];
		int c = sh->gpus * r->fair_cpg;
		int64_t m = sh->gpus * r->fair_mpg;
		if (sh->cpus > c) {
			r->cap.free_cpus[sh->node] += sh->cpus - c;
			sh->cpus = c;
		}
		if (sh->mem_mb > m) {
			r->cap.free_mem_mb[sh->node] += sh->mem_mb - m;
			sh->mem_mb = m;
		}
	}
	v->changed = 1;
}

/* Step 3 on one node: shrink co-located jobs above fair share until `cpus`/`mem` are free. */
static void make_room(struct round *r, const struct item *self, int node, int cpus, int64_t mem)
{
	while (r->cap.free_cpus[node] < cpus || r->cap.free_mem_mb[node] < mem) {
		struct item *best = NULL;
		for (int i = 0; i < r->n; i++) {
			struct item *v = &r->it[i];
			if (v == self || v->preempted || v->now.n == 0 || !above_fair(r, v, node))
				continue;
			if (!best || victim_before(v, best))
				best = v;
		}
		if (!best)
			return;
		shrink_to_fair(r, best);
	}
}

/* Synergy-TUNE for one job (file comment, steps 1-3). 1 when placed. */
static int tune(struct round *r, struct item *it, int *rc)
{
	struct rk_alloc a;
	rk_alloc_init(&a);
	int cpg = it->cpg, ok = 0;
	int64_t mpg = it->mpg;
	*rc = RK_OK;
	if (place_with(r, it, cpg, mpg, &a) == 0) {
		ok = 1;
	} else {
		cpg = cpg < r->fair_cpg ? cpg : r->fair_cpg;
		mpg = mpg < r->fair_mpg ? mpg : r->fair_mpg;
		if ((cpg != it->cpg || mpg != it->mpg) && place_with(r, it, cpg, mpg, &a) == 0) {
			ok = 1;
		} else if (place_with(r, it, 0, 0, &a) == 0) {
			/* GPUs are free on these nodes; make room for the fair-capped demand. */
			for (int s = 0; s < a.n; s++) {
				struct rk_share *sh = &a.shares[s];
				sh->cpus = sh->gpus * cpg;
				sh->mem_mb = sh->gpus * mpg;
				make_room(r, it, sh->node, sh->cpus, sh->mem_mb);
			}
			ok = rk_capacity_fits(&r->cap, &a);
		}
	}
	if (ok) {
		*rc = rk_capacity_take(&r->cap, &a, NULL);
		if (*rc == RK_OK) {
			rk_alloc_fini(&it->now);
			it->now = a;
			it->changed = 1;
			return 1;
		}
	}
	rk_alloc_fini(&a);
	return 0;
}

/* Preempt `v` (its `now` is kept so that unpreempt can undo it). */
static int preempt(struct round *r, struct item *v, int for_idx)
{
	v->preempted = 1 + for_idx;
	return rk_capacity_give(&r->cap, &v->now, NULL);
}

static int unpreempt(struct round *r, struct item *v)
{
	v->preempted = 0;
	return rk_capacity_take(&r->cap, &v->now, NULL);
}

static int run_outer(struct round *r, enum outer o)
{
	int rc = RK_OK;
	if (o == OUTER_FIFO) {
		for (int i = 0; i < r->n && !rc; i++)
			if (!rk_baseline_is_placed(r->it[i].job))
				tune(r, &r->it[i], &rc);
		return rc;
	}
	int budget = 0;
	for (int k = 0; k < r->cap.n_nodes; k++)
		if (r->cap.cluster->nodes[k].up)
			budget += r->cap.cluster->nodes[k].gpus;
	for (int i = 0; i < r->n; i++) {
		int g = r->it[i].job->req_gpus;
		if (g <= budget) {
			r->it[i].selected = 1;
			budget -= g;
		}
	}
	for (int i = 0; i < r->n && !rc; i++) {
		struct item *it = &r->it[i];
		if (!it->selected || rk_baseline_is_placed(it->job))
			continue;
		/* Lowest-priority unselected running jobs make room, one at a time;
		 * undone when even all of them do not (no preemption for nothing). */
		int placed = 0;
		for (int v = r->n - 1; !(placed = tune(r, it, &rc)) && !rc; v--) {
			while (v >= 0 && (r->it[v].selected || r->it[v].preempted || r->it[v].now.n == 0))
				v--;
			if (v < 0)
				break;
			rc = preempt(r, &r->it[v], i);
		}
		for (int v = 0; !placed && !rc && v < r->n; v++)
			if (r->it[v].preempted == 1 + i)
				rc = unpreempt(r, &r->it[v]);
	}
	for (int i = 0; i < r->n && !rc; i++)
		if (!r->it[i].selected && !r->it[i].preempted && !rk_baseline_is_placed(r->it[i].job))
			tune(r, &r->it[i], &rc);
	return rc;
}

static int synergy_schedule(const struct synergy *st, const struct rk_sched_input *in,
			    struct rk_decisions *out,
			    struct rk_error *err, enum outer o)
{
	struct round r = {.in = in, .n = in->n_jobs,
			  .mode = st ? st->mode : RK_PLACE_LEAST_FREE};
	struct rk_job **order = calloc((size_t)r.n + 1, sizeof(*order));
	r.it = calloc((size_t)r.n + 1, sizeof(*r.it));
	int rc = RK_OK;
	if (!order || !r.it) {
		rc = rk_error_set(err, RK_ENOMEM, "synergy: out of memory for %d jobs", r.n);
		goto out;
	}
	rc = rk_capacity_from_jobs(&r.cap, in->cluster, in->jobs, in->n_jobs, err);
	if (rc)
		goto out;
	r.fair_cpg = -1;
	r.fair_mpg = -1;
	for (int k = 0; k < in->cluster->n_nodes; k++) {
		const struct rk_node *nd = &in->cluster->nodes[k];
		if (!nd->up || nd->gpus < 1)
			continue;
		if (r.fair_cpg < 0 || nd->cpus / nd->gpus < r.fair_cpg)
			r.fair_cpg = nd->cpus / nd->gpus;
		if (r.fair_mpg < 0 || nd->mem_mb / nd->gpus < r.fair_mpg)
			r.fair_mpg = nd->mem_mb / nd->gpus;
		if (nd->cpus > r.max_cpus)
			r.max_cpus = nd->cpus;
		if (nd->gpus > r.node_gpus)
			r.node_gpus = nd->gpus;
	}
	if (r.fair_cpg < 0)
		goto out; /* no GPU is up: nothing can start */
	for (int i = 0; i < r.n; i++)
		order[i] = in->jobs[i];
	if (o == OUTER_SRTF)
		rk_baseline_sort_srtf(order, r.n);
	else
		rk_baseline_sort_fifo(order, r.n);
	for (int i = 0; i < r.n && !rc; i++) {
		struct item *it = &r.it[i];
		it->job = order[i];
		rk_alloc_init(&it->now);
		if (rk_baseline_is_placed(it->job))
			rc = rk_alloc_copy(&it->now, &it->job->alloc);
		else
			best_case(&r, it);
	}
	if (!rc)
		rc = run_outer(&r, o);
	for (int i = 0; i < r.n && !rc; i++) {
		struct item *it = &r.it[i];
		if (it->preempted)
			rc = rk_decisions_push(out, it->job->id, NULL, NULL);
		else if (it->changed && !rk_alloc_equal(&it->now, &it->job->alloc))
			rc = rk_decisions_push(out, it->job->id, &it->now,
					       rk_baseline_is_placed(it->job) ? &it->job->plan
									      : &it->job->req_plan);
	}
	if (rc && err && err->code == RK_OK)
		rk_error_set(err, rc, "synergy: out of memory");
out:
	if (r.it)
		for (int i = 0; i < r.n; i++)
			rk_alloc_fini(&r.it[i].now);
	rk_capacity_fini(&r.cap);
	free(r.it);
	free(order);
	return rc;
}

static int schedule_fifo(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			 struct rk_error *err)
{
	return synergy_schedule(state, in, out, err, OUTER_FIFO);
}

static int schedule_srtf(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			 struct rk_error *err)
{
	return synergy_schedule(state, in, out, err, OUTER_SRTF);
}

const struct rk_policy_ops rk_policy_synergy_fifo = {
	.name = "synergy-fifo",
	.summary = "Synergy-TUNE: FIFO picks jobs, CPU/memory from the model's demand with a fair-share floor",
	.create = create_fifo,
	.destroy = synergy_destroy,
	.schedule = schedule_fifo,
	/* Only pending jobs are placed (running ones shrink only to make room),
	 * and only arrivals, completions and applied decisions change the inputs
	 * it decides on (as the classic FIFO/SRTF of src/policy/classic/classic.c). */
	.flags = RK_POLICY_IDLE_NOOP | RK_POLICY_EVENT_DRIVEN,
};

const struct rk_policy_ops rk_policy_synergy_srtf = {
	.name = "synergy-srtf",
	.summary = "Synergy-TUNE: preemptive SRTF picks jobs, CPU/memory from the model's demand",
	.create = create_srtf,
	.destroy = synergy_destroy,
	.schedule = schedule_srtf,
	.flags = RK_POLICY_IDLE_NOOP | RK_POLICY_EVENT_DRIVEN,
};
