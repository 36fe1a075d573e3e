/*
 * One round of the Rubick policy (rubick.c): its constants, the per-job and
 * per-round state, and the queries a round asks of a job's sensitivity-curve
 * view. Internal to src/policy/rubick/rubick*.c; the helpers are static inline
 * because the shrink and expand phases call them in their inner loops.
 */
#ifndef RUBICK_POLICY_RUBICK_ROUND_H
#define RUBICK_POLICY_RUBICK_ROUND_H

#include "policy/rubick/rubick_internal.h"
#include "rubick/cluster.h"
#include "rubick/job.h"
#include "rubick/placement.h"
#include "rubick/policy.h"

#include <math.h>
#include <stdint.h>

/* Jobs restarted this often are no longer shrunk (§1.8.1 line 11, §7). */
#define RUBICK_RESTART_LIMIT 5
/* Age after which a job is starving: first in line, never a victim (§1.6, 200000 s). */
#define RUBICK_STARVE_S 200000.0
/* Least normalised gain per GPU worth an expansion (§1.8.1 line 18). */
#define RUBICK_MIN_SLOPE 1e-2
/* Least headroom over a guaranteed job's baseline: the model's errors are
 * 2-7% on average (§1.5, Table 2), so plans within 5% of the baseline are not
 * trusted to meet it. A job whose model was seen to miss its own observed
 * iterations by more gets that miss as its headroom (rj.sla_margin). */
#define RUBICK_SLA_MARGIN 1.05
/* A pending job starts on fewer GPUs than its start size only if they give at
 * least this fraction of the start size's throughput [I]: below it, waiting
 * for GPUs (free or shrunk from others) beats crawling and restarting later. */
#define RUBICK_MIN_START_FRACTION 0.5
/* The curve's GPU axis (§1.6: 1..64), widened when a request is larger. */
#define RUBICK_CURVE_GPUS 64

/* One job during a round. */
struct rj {
	struct rk_job *job;
	const struct rubick_view *view; /* NULL: the model cannot plan it, run as requested */
	double orig_sps;  /* throughput at the request (normalisation), > 0 */
	double sla_sps;   /* guaranteed floor, 0 for best-effort */
	double sla_margin; /* a configuration must be predicted at >= sla_sps * this */
	int guaranteed, starving, was_placed;
	int fallback;     /* restarts this round: a guarantee observed below its floor (back to
			   * its request), or a job holding GPUs outside its range */
	int g;            /* GPUs held after this round's changes */
	int node;         /* the node of a single-node job, -1 otherwise */
	int changed, fresh; /* fresh: started this round (no restart to pay for growth) */
	int shared;       /* holds a GPU with another job (sharing=on): never resized */
	double key_s;     /* predicted run time left at the request: queue order */
	double yield_s;   /* run time left the shrink phase asks victims to exceed:
			   * key_s, or at the size it prices (rubick_shrink.c) */
	double time_scale; /* the driver's run time at the request over the model's */
	struct rk_alloc now;
	int own_now; /* 0: `now` is the job's own alloc, borrowed; 1: the round's, freed with it */
	struct rk_plan plan;
};

struct round {
	const struct rubick_state *st;
	const struct rk_sched_input *in;
	struct rj *j;
	int n;
	struct rk_capacity cap;
	int node_gpus;
	int64_t gpu_mem_mb, host_mem_mb;
	int total_gpus;
	/* Jobs holding GPUs on each node (indexes into j): node k's list is
	 * on[k * slots .. + n_on[k]]; a node hosts at most one job per GPU. */
	int *on, *n_on, slots;
	/* Per node: the longest remaining time of a job there that may be shrunk
	 * (0 if none). Under SRTF order only jobs with more than a newcomer's
	 * remaining time plus a restart may yield, so nodes (and newcomers)
	 * below it are skipped without evaluating victims. */
	double *max_rem_s;
	int *max_free;    /* per node: free GPUs plus GPUs of jobs that may be shrunk */
	double *cost_of;  /* scratch of choose_nodes: cost per node for amount cost_w, -1 = unknown */
	int cost_w;
	struct node_price *price; /* per node: the last pricing, reused while it holds */
	struct rubick_share_round *sh; /* sharing=on with a driver that allows it, else NULL */
	int n_assign; /* allocations changed so far this round (rubick_assign): cache key */
};

/*
 * The last price of freeing `x` GPUs on a node for a best-effort newcomer
 * under SRTF order (rubick_shrink.c). It depends on the newcomer only through
 * which victims its remaining time lets in, so it holds for any newcomer
 * whose threshold (its remaining time plus a restart) lies in (max_out,
 * min_in], until the node's jobs change (rubick_index_update clears it).
 */
struct node_price {
	int valid, x;
	int exact;        /* 0: the pricing stopped at `limit` (cost = INFINITY) */
	double cost, limit, min_in, max_out;
};

/* ---- allocation steps (rubick_alloc.c) and the shrink phase (rubick_shrink.c) ---- */

/* Gang-place g GPUs of `r` on `cap` on the fewest nodes, plan for g. 0 on success. */
int rubick_try_place(const struct round *R, const struct rj *r, int g,
		     const struct rk_capacity *cap, struct rk_alloc *a);
/* Add (add = 1) or remove `r` in the per-node index of GPU holders. */
void rubick_index_update(struct round *R, const struct rj *r, int add);
/* `r` now holds `a` (ownership moves) with g GPUs, re-planned for them. */
void rubick_assign(struct round *R, struct rj *r, struct rk_alloc *a, int g);
/* Resize single-node job `r` in place to g GPUs (0 = preempt), re-planned. */
int rubick_resize(struct round *R, struct rj *r, int g);
/* Refresh node `node`'s shrinkable GPUs and longest shrinkable remaining time. */
void rubick_node_max_rem(struct round *R, int node);
/* Step 5, guaranteed=reconfigure: refitted guaranteed jobs re-plan in place (rubick_guarantee.c). */
void rubick_replan_guaranteed(struct round *R);
/* Shrink phase for pending `r` (sizes gmin..gmax); 1 when it was started. */
/* Place running job r at g GPUs on the round's capacity (its own GPUs given
 * back by the caller) and take them: 1 placed, 0 g does not fit. */
int rubick_place_at(struct round *R, struct rj *r, int g);
int rubick_shrink_for(struct round *R, struct rj *r, int gmin, int gmax, int *want, int *rc);
/* May some running job yield GPUs to pending `r` at all? 0 only for a best-effort,
 * non-starving job under SRTF order when every node's shrinkable jobs are shorter
 * than it plus a restart (the shrink phase's first filter). */
int rubick_shrink_may_yield(const struct round *R, const struct rj *r);
/* May the shrink phase take GPUs from v for self (its victim rules, the
 * SRTF filter included)? */
int rubick_shrink_victim_for(const struct round *R, const struct rj *self, const struct rj *v);

/* ---- quiet rounds (rubick_quiet.c) ---- */

/* 1 when the round `in` provably decides nothing (the last full round decided
 * nothing and only the clock and running jobs' progress moved since, in ways
 * that cannot start anybody): the caller then returns no decisions. */
int rubick_quiet_skip(struct rubick_state *st, const struct rk_sched_input *in);
/* After a full round that made `decided` decisions: what rubick_quiet_skip checks. */
void rubick_quiet_note(struct rubick_state *st, const struct round *R, int decided);

/* ---- composition with GPU sharing (rubick_share.c) and placement (rubick_place.c) ---- */

/*
 * Round set-up of sharing=on when the driver allows sharing: the GPU
 * occupancy of the snapshot, the capacity (a GPU two jobs hold counted
 * once) and rj.shared of every job holding a shared GPU. Leaves R->sh NULL
 * (and does nothing) otherwise; the caller then builds the capacity.
 */
int rubick_share_round_init(struct round *R, struct rk_error *err);
void rubick_share_round_fini(struct round *R);
/* Start best-effort pending `r` at g GPUs on one node, sharing GPUs with
 * running jobs, when the benefit test says it pays. 1 = started. */
int rubick_share_start(struct round *R, struct rj *r, int g, int *rc);
/* GPU g of node holds how many jobs (h: their indexes into R->j), from the
 * snapshot plus the pairs started this round. */
int rubick_share_holders(const struct round *R, int node, int g, int *h);
/* Seconds job k has left at what it holds, at the rate it runs at now. */
double rubick_share_left_s(const struct round *R, int k);
/* A job left its pair this round: rubick_share_name_gpus names GPUs. */
void rubick_share_note_moved(struct round *R);
/* With nobody waiting, shared jobs that would save more than two restart
 * delays (theirs and their partners' time) move to GPUs of their own
 * (rubick_unshare.c). */
int rubick_share_leave(struct round *R);
/* Name the GPUs of every allocation this round changed (sharing=on), so
 * that jobs started beside a new pair take GPUs nobody holds. */
int rubick_share_name_gpus(struct round *R);
/* placement=contention: g GPUs of `req` on several nodes by SJF-BCO's node
 * choice, one node as rk_place_gang does. OUT: *a. 0, or -1 when no fit. */
int rubick_place_contention(const struct round *R, const struct rk_capacity *cap,
			    const struct rk_place_req *req, struct rk_alloc *a);

/* ---- the job's curve ------------------------------------------------------- */

/* Throughput (samples/s) of the job given g GPUs (what it uses of them). */
static inline double tput(const struct rj *r, int g)
{
	if (g <= 0)
		return 0;
	if (!r->view)
		return g >= r->job->req_gpus ? r->orig_sps : 0;
	return r->view->tput_sps[g < r->view->max_gpus ? g : r->view->max_gpus];
}

/* GPUs actually used when given g, plan and threads per GPU for them. */
static inline int use_gpus(const struct rj *r, int g)
{
	if (!r->view)
		return g >= r->job->req_gpus ? r->job->req_gpus : 0;
	return r->view->use_gpus[g < r->view->max_gpus ? g : r->view->max_gpus];
}

static inline struct rk_plan plan_for(const struct rj *r, int g)
{
	return r->view ? r->view->plan[g] : r->job->req_plan;
}

static inline int cpus_for(const struct rj *r, int g)
{
	if (r->view)
		return r->view->cpus_per_gpu[g];
	int q = r->job->req_gpus > 0 ? r->job->req_gpus : 1;
	return r->job->req_cpus > 0 ? (r->job->req_cpus + q - 1) / q : RK_SHARE_PROPORTIONAL;
}

/* Normalised throughput (§1.6 slopes divide by orig_tpt). */
static inline double norm(const struct rj *r, int g)
{
	return tput(r, g) / r->orig_sps;
}

/* Seconds left at g GPUs (INFINITY when it would not run). */
static inline double remaining_s(const struct rj *r, int g)
{
	double t = tput(r, g);
	if (!(t > 0))
		return INFINITY;
	double left = r->job->iters_total - r->job->iters_done;
	if (!(r->job->iters_total > 0))
		return r->job->est_duration_s > 0 ? r->job->est_duration_s : INFINITY;
	return (left > 0 ? left : 0) * r->job->global_batch / t * r->time_scale;
}

/*
 * Is `r`, after `restarts` restarts and holding g GPUs, protected from being
 * shrunk or preempted by a best-effort newcomer? The paper stops shrinking a
 * job after RUBICK_RESTART_LIMIT restarts (§1.8.1 line 11) so that no job
 * thrashes. A count alone froze long jobs small for the rest of their run
 * (base trace: a 40-GPU LLaMA-30B job held 12 GPUs on two nodes
 * for its last 11,000 s) while shorter arrivals waited or ran small. Past
 * the count, a job stays a victim while the time it has spent restarting
 * (restarts x the restart delay) is less than its run left at g: each
 * restart then costs it a small share of what it still runs (in the spirit
 * of Sia's restart factor, which discounts a job by the time its restarts
 * took out of its age, docs/references.md §5.1). Once it has spent as long
 * restarting as it has left to run, it is protected. Measured in
 * docs/policies.md "Measured".
 */
static inline int restart_protected(const struct round *R, const struct rj *r, int restarts, int g)
{
	return restarts >= RUBICK_RESTART_LIMIT &&
	       !(restarts * R->st->restart_s < remaining_s(r, g));
}

/* The largest useful GPU count below g (0 = nothing useful: preemption). */
static inline int step_down(const struct rj *r, int g)
{
	return g > 1 ? use_gpus(r, g - 1) : 0;
}

/*
 * Does g GPUs keep the job's guarantee? Always for best-effort. A guaranteed
 * job's curve plan for g must keep the tensor and pipeline degrees, the ZeRO
 * stage and the offload of its request, the plan it was observed running
 * first (guarantee_init): its observed iterations identify the parameters of
 * that plan family only. A new (tp, pp) is the model's extrapolation, where
 * it errs most (3D: 28% MAPE, 213% worst, docs/perf-model.md); a new ZeRO
 * stage or offload changes what crosses the network and the host link, which
 * a fit on one plan does not see (measured, Muri trace3 with --refit: jobs
 * moved from plain data parallelism to ZeRO-1 on the same 4 GPUs at a
 * predicted 1.05x ran at 0.95x of their baseline, 6 of 504). Data-parallel
 * degree, micro-batch, accumulation and checkpointing may change (in-place
 * re-plans may also drop ZeRO or offload: rubick_guarantee.c). And the
 * refitted model must predict at least the floor times the job's margin.
 */
static inline int sla_ok(const struct rj *r, int g)
{
	if (!r->guaranteed)
		return 1;
	if (r->view) {
		const struct rk_plan *p =
		    &r->view->plan[g < r->view->max_gpus ? g : r->view->max_gpus];
		if (p->tp != r->job->req_plan.tp || p->pp != r->job->req_plan.pp)
			return 0;
		if (p->zero != r->job->req_plan.zero || p->offload != r->job->req_plan.offload)
			return 0;
	}
	return tput(r, g) >= r->sla_sps * r->sla_margin;
}

/* Smallest g whose throughput meets the job's floor (guaranteed) or is > 0; 0 if none. */
static inline int min_gpus(const struct rj *r, int limit)
{
	for (int g = 1; g <= limit; g++)
		if (use_gpus(r, g) == g && tput(r, g) > 0 && sla_ok(r, g))
			return g;
	return 0;
}

/* The max config: fewest GPUs reaching the curve's top (§1.6). */
static inline int max_config(const struct rj *r, int limit)
{
	return use_gpus(r, limit);
}

#endif
