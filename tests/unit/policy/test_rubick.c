/* The Rubick policy (docs/references.md §1.8.1) and its ablations on hand-built 2-node snapshots. */
#include "baseline_fixture.h"

#include "policy/common/baseline.h"
#include "rubick/curve.h"

#include <math.h>

extern const struct rk_policy_ops rk_policy_rubick;
extern const struct rk_policy_ops rk_policy_rubick_plan_only;
extern const struct rk_policy_ops rk_policy_rubick_res_only;

static void run_round(struct fixture *f, const struct rk_policy_ops *ops, const char *opts,
		      struct rk_decisions *d)
{
	void *st = NULL;
	struct rk_error err;
	if (ops->create(&st, opts, &err) != RK_OK)
		fail_msg("%s", err.msg);
	struct rk_sched_input in = fx_input(f, 1000 * 1000);
	rk_decisions_init(d);
	if (ops->schedule(st, &in, d, &err) != RK_OK)
		fail_msg("%s", err.msg);
	ops->destroy(st);
	fx_check(f, d, ops->name);
}

/* The curve the policy sees on the fixture's cluster (2 nodes of 8 A800). */
static void build_curve(struct fixture *f, struct rk_curve *c)
{
	struct rk_curve_opts o;
	rk_curve_opts_default(&f->env, &o);
	o.max_gpus = 16;
	o.node_gpus = 8;
	o.host_mem_mb = f->nodes[0].mem_mb;
	assert_int_equal(rk_curve_build(&f->model, &f->model.perf, &f->env, 32, &o, c, NULL), RK_OK);
}

static double curve_tput(const struct rk_curve *c, int g)
{
	return rk_curve_at(c, g, c->opts.n_cpus - 1, c->opts.n_bw - 1)->min_tput_sps;
}

/* Long-running: thousands of seconds left at any size, so victims are fair game.
 * No run time from the driver: the model alone prices what is left. */
static struct rk_job *long_job(struct fixture *f, int64_t id, int g, int guaranteed)
{
	struct rk_job *j = fx_job(f, id, id, g, guaranteed);
	j->iters_total = 1e6;
	j->est_duration_s = 0;
	return j;
}

/*
 * Alone on an empty cluster, a job starts at its request and, not having
 * started yet, grows for free on its node along its curve: it ends on one
 * node with at least its request, runs the curve's plan for that GPU count,
 * and gets at least the throughput of its request.
 */
static void lone_job_follows_curve(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	fx_job(&f, 1, 0, 2, 0);
	struct rk_curve c;
	build_curve(&f, &c);
	struct rk_decisions d;
	run_round(&f, &rk_policy_rubick, NULL, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.v[0].alloc.n, 1);
	int g = fx_gpus(&d.v[0].alloc);
	assert_true(g >= 2 && g <= 8);
	const struct rk_curve_point *p = rk_curve_at(&c, g, c.opts.n_cpus - 1, 0);
	assert_true(rk_plan_equal(&d.v[0].plan, &p->min_plan));
	assert_true(curve_tput(&c, g) >= curve_tput(&c, 2));
	/* Growth stops where no larger size on the node gains more than 1% of the
	 * request's throughput per extra GPU (RUBICK_MIN_SLOPE, §1.8.1 line 18). */
	struct rk_placement req = {.n_nodes = 1, .gpus = {2}};
	double orig = 0;
	assert_int_equal(rk_baseline_tput_sps(&f.jobs[0], &f.jobs[0].req_plan, &req, 16, &f.env,
					      &orig), RK_OK);
	for (int h = g + 1; h <= 8; h++)
		assert_true((curve_tput(&c, h) - curve_tput(&c, g)) / orig / (h - g) <= 1e-2 + 1e-12);
	rk_decisions_fini(&d);
	rk_curve_fini(&c);
	fx_fini(&f);
}

/*
 * Shrink phase: both nodes are full with long best-effort jobs; a new, short
 * job gets GPUs by shrinking one of them (not preempting it), both re-planned
 * for their new counts. Under the default SRTF order a newcomer longer than
 * both victims does not shrink them; with order=fifo the gain/loss test alone
 * decides, and it does.
 */
static void shrink_phase_makes_room(void **state)
{
	(void)state;
	for (int variant = 0; variant < 3; variant++) {
		struct fixture f;
		fx_init(&f, 2);
		fx_run_on(long_job(&f, 1, 8, 0), 0, 0);
		fx_run_on(long_job(&f, 2, 8, 0), 1, 0);
		struct rk_job *c = long_job(&f, 3, 4, 0);
		c->iters_total = variant == 0 ? 2000 : 1e7;
		struct rk_decisions d;
		run_round(&f, &rk_policy_rubick, variant == 2 ? "order=fifo" : NULL, &d);
		if (variant == 1) {
			assert_int_equal(d.n, 0);
			rk_decisions_fini(&d);
			fx_fini(&f);
			continue;
		}
		const struct rk_decision *x = fx_decision(&d, 3);
		assert_non_null(x);
		assert_int_equal(x->alloc.n, 1);
		int node = x->alloc.shares[0].node;
		const struct rk_decision *v = fx_decision(&d, node == 0 ? 1 : 2);
		assert_non_null(v);
		assert_int_equal(v->alloc.n, 1);
		assert_int_equal(v->alloc.shares[0].node, node);
		assert_true(fx_gpus(&v->alloc) >= 1 && fx_gpus(&v->alloc) < 8);
		assert_int_equal(v->plan.dp * v->plan.tp * v->plan.pp, fx_gpus(&v->alloc));
		assert_null(fx_decision(&d, node == 0 ? 2 : 1));
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
}

/*
 * No victim: jobs past RUBICK_RESTART_LIMIT restarts that have spent as long
 * restarting as they have left to run (restart_protected; these have about
 * 98,000 s left at 8 GPUs, 500 x 260 s of restarts), or about to finish
 * (less than one restart delay left), are never shrunk, so the new job waits.
 * A job at the restart count with far more left than its restarts took
 * (5 x 260 s) still yields to the short newcomer.
 */
static void protected_victims(void **state)
{
	(void)state;
	for (int why = 0; why < 3; why++) {
		struct fixture f;
		fx_init(&f, 2);
		struct rk_job *a = long_job(&f, 1, 8, 0), *b = long_job(&f, 2, 8, 0);
		fx_run_on(a, 0, 0);
		fx_run_on(b, 1, 0);
		if (why == 0) {
			a->restarts = b->restarts = 500;
		} else if (why == 1) {
			a->iters_total = b->iters_total = 10; /* seconds of work left */
		} else {
			a->restarts = b->restarts = 5;
		}
		long_job(&f, 3, 4, 0)->iters_total = 2000; /* short: only the protections stop it */
		struct rk_decisions d;
		run_round(&f, &rk_policy_rubick, why == 1 ? "order=fifo" : NULL, &d);
		if (why == 2)
			assert_non_null(fx_decision(&d, 3));
		else
			assert_int_equal(d.n, 0);
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
}

/*
 * Victims inside their restart delay (rubick_shrink.c may_lose_now): both
 * nodes are held by long jobs paying their restart delay. A short newcomer
 * takes GPUs from one of them (it makes no progress while restarting); not
 * from jobs at RUBICK_RESTART_LIMIT restarts while they restart.
 */
static void restarting_victims(void **state)
{
	(void)state;
	for (int at_limit = 0; at_limit < 2; at_limit++) {
		struct fixture f;
		fx_init(&f, 2);
		struct rk_job *a = long_job(&f, 1, 8, 0), *b = long_job(&f, 2, 8, 0);
		fx_run_on(a, 0, 0);
		fx_run_on(b, 1, 0);
		a->state = b->state = RK_JOB_RESTARTING;
		a->restarts = b->restarts = at_limit ? 5 : 1;
		long_job(&f, 3, 4, 0)->iters_total = 2000;
		struct rk_decisions d;
		run_round(&f, &rk_policy_rubick, NULL, &d);
		if (at_limit) {
			assert_int_equal(d.n, 0);
		} else {
			const struct rk_decision *x = fx_decision(&d, 3);
			assert_non_null(x);
			assert_int_equal(x->alloc.n, 1);
		}
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
}

/*
 * Grow back (rubick.c grow_to_request): a 16-GPU job started on one node of
 * 8 for lack of free GPUs, never restarted since, moves to its request over
 * both nodes once the other is free and nobody waits; one that was
 * reconfigured since (a victim: restarts > 0) stays, left to the expand
 * phase. A victim on several nodes (4 + 4 GPUs), which the expand phase
 * never grows, moves to its request too.
 */
static void partial_start_grows_back(void **state)
{
	(void)state;
	for (int why = 0; why < 3; why++) {
		struct fixture f;
		fx_init(&f, 2);
		struct rk_job *a = long_job(&f, 1, 16, 0);
		a->req_plan = fx_dp_plan(32, 16, 0);
		fx_run_on(a, 0, 0);
		a->plan = fx_dp_plan(32, 8, 0);
		a->alloc.shares[0].gpus = why >= 2 ? 4 : 8;
		a->alloc.shares[0].cpus = 8 * a->alloc.shares[0].gpus;
		a->alloc.shares[0].mem_mb = (int64_t)a->alloc.shares[0].gpus * 100 * 1024;
		if (why >= 2) {
			struct rk_share half = a->alloc.shares[0];
			half.node = 1;
			rk_alloc_fini(&a->alloc);
			assert_int_equal(
			    rk_alloc_add(&a->alloc, 0, half.gpus, half.cpus, half.mem_mb), RK_OK);
			assert_int_equal(
			    rk_alloc_add(&a->alloc, 1, half.gpus, half.cpus, half.mem_mb), RK_OK);
		}
		if (why >= 1)
			a->restarts = 1;
		struct rk_decisions d;
		run_round(&f, &rk_policy_rubick, NULL, &d);
		const struct rk_decision *x = fx_decision(&d, 1);
		if (why == 0 || why == 2) {
			assert_non_null(x);
			assert_int_equal(fx_gpus(&x->alloc), 16);
			assert_int_equal(x->alloc.n, 2);
		} else {
			assert_true(!x || fx_gpus(&x->alloc) <= 8);
		}
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
}

/*
 * Growth on measured speeds (rubick.c grow_measured): a 4-GPU job boxed in
 * on a full node (a victim once: grow_to_request does not apply) whose
 * driver gives its trace's speeds, scaling linearly, moves over the idle
 * node to a larger size when nobody waits; priced by the model alone it
 * stays (the expand phase grows within its node only); with a job waiting,
 * it stays too.
 */
static void measured_speeds_grow_across_nodes(void **state)
{
	(void)state;
	static double linear[17];
	for (int g = 1; g <= 16; g++)
		linear[g] = g;
	for (int why = 0; why < 3; why++) {
		struct fixture f;
		fx_init(&f, 2);
		struct rk_job *a = long_job(&f, 1, 4, 0);
		a->req_plan = fx_dp_plan(32, 4, 0);
		fx_run_on(a, 0, 0);
		a->restarts = 1;
		if (why != 1) {
			a->native_sps = linear;
			a->native_max = 16;
		}
		struct rk_job *b = long_job(&f, 2, 4, 0);
		fx_run_on(b, 0, 0);
		b->restarts = 500; /* restart_protected: not a victim */
		if (why == 2) {
			/* Asks for all 16 GPUs and cannot take 8 of them from a and b. */
			struct rk_job *c = long_job(&f, 3, 16, 0);
			c->req_plan = fx_dp_plan(32, 16, 0);
			c->min_gpus = 16;
		}
		struct rk_decisions d;
		run_round(&f, &rk_policy_rubick, NULL, &d);
		const struct rk_decision *x = fx_decision(&d, 1);
		if (why == 0) {
			assert_non_null(x);
			assert_true(fx_gpus(&x->alloc) > 4);
		} else {
			assert_true(!x || fx_gpus(&x->alloc) <= 4);
		}
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
}

/*
 * A job started this round at measured speeds is placed larger across nodes
 * at once when nobody waits (it has not run: no restart to pay for the move):
 * with half of one node taken, it ends on more GPUs than a node holds, on the
 * fewest nodes for them; priced by the model alone it keeps to one node.
 */
static void measured_speeds_start_across_nodes(void **state)
{
	(void)state;
	static double linear[17];
	for (int g = 1; g <= 16; g++)
		linear[g] = g;
	for (int why = 0; why < 2; why++) {
		struct fixture f;
		fx_init(&f, 2);
		struct rk_job *b = long_job(&f, 10, 4, 0);
		fx_run_on(b, 0, 0);
		b->restarts = 500; /* restart_protected: not a victim */
		struct rk_job *a = long_job(&f, 1, 1, 0);
		a->global_batch = 96; /* plans on 12 GPUs too */
		a->req_plan = fx_dp_plan(96, 1, 0);
		if (why == 0) {
			a->native_sps = linear;
			a->native_max = 16;
		}
		struct rk_decisions d;
		run_round(&f, &rk_policy_rubick, NULL, &d);
		const struct rk_decision *x = fx_decision(&d, 1);
		assert_non_null(x);
		if (why == 0)
			assert_true(fx_gpus(&x->alloc) > 8);
		else
			assert_true(fx_gpus(&x->alloc) <= 8 && x->alloc.n == 1);
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
}

/*
 * Start floor (rubick.c start_floor): a 16-GPU newcomer finds 4 free GPUs
 * beside jobs at the restart limit (no victims). 4 GPUs give less than
 * RUBICK_MIN_START_FRACTION of its request's speed, so a long one waits; one
 * that finishes within a restart delay even there starts on them at once.
 */
static void short_job_starts_small(void **state)
{
	(void)state;
	for (int is_short = 0; is_short < 2; is_short++) {
		struct fixture f;
		fx_init(&f, 2);
		struct rk_job *a = long_job(&f, 1, 8, 0), *b = long_job(&f, 2, 4, 0);
		fx_run_on(a, 0, 0);
		fx_run_on(b, 1, 0);
		a->restarts = b->restarts = 500;
		long_job(&f, 3, 16, 0)->iters_total = is_short ? 10 : 1e6;
		struct rk_curve c;
		build_curve(&f, &c);
		assert_true(curve_tput(&c, 4) < 0.5 * curve_tput(&c, 16)); /* else no test */
		rk_curve_fini(&c);
		struct rk_decisions d;
		run_round(&f, &rk_policy_rubick, NULL, &d);
		const struct rk_decision *x = fx_decision(&d, 3);
		if (is_short) {
			assert_non_null(x);
			assert_int_equal(x->alloc.n, 1);
			assert_int_equal(x->alloc.shares[0].node, 1);
			assert_int_equal(fx_gpus(&x->alloc), 4);
		} else {
			assert_null(x); /* (the expand phase may grow job 2 instead) */
		}
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
}

/*
 * The restart limit protects a best-effort job from other best-effort jobs,
 * not from a guarantee (AntMan's rule): a short guaranteed newcomer takes its
 * request from best-effort jobs protected by their restarts
 * (restart_protected: 500 restarts of 260 s, more than the ~98,000 s they
 * have left), as long as they have more than its run time plus a restart
 * left; a guaranteed newcomer longer than them waits.
 */
static void guaranteed_passes_restart_limit(void **state)
{
	(void)state;
	for (int longer = 0; longer < 2; longer++) {
		struct fixture f;
		fx_init(&f, 2);
		struct rk_job *a = long_job(&f, 1, 8, 0), *b = long_job(&f, 2, 8, 0);
		fx_run_on(a, 0, 0);
		fx_run_on(b, 1, 0);
		a->restarts = b->restarts = 500;
		long_job(&f, 3, 4, 1)->iters_total = longer ? 1e7 : 2000;
		struct rk_decisions d;
		run_round(&f, &rk_policy_rubick, NULL, &d);
		const struct rk_decision *x = fx_decision(&d, 3);
		if (longer) {
			assert_int_equal(d.n, 0);
		} else {
			assert_non_null(x);
			assert_int_equal(fx_gpus(&x->alloc), 4);
		}
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
}

/*
 * The driver's run time at the request calibrates the model's remaining-time
 * predictions (rubick.c init_job, time_scale): of two pending 8-GPU jobs of
 * one model on one node, the one the model prices longer (twice the
 * iterations) but the driver says is shorter starts first; without the
 * driver's run times, the model's order (fewer iterations first) holds.
 */
static void driver_run_time_orders_queue(void **state)
{
	(void)state;
	for (int driver = 0; driver < 2; driver++) {
		struct fixture f;
		fx_init(&f, 1);
		struct rk_job *a = fx_job(&f, 1, 0, 8, 0), *b = fx_job(&f, 2, 1, 8, 0);
		a->iters_total = 1000;
		b->iters_total = 2000;
		a->est_duration_s = driver ? 5000 : 0;
		b->est_duration_s = driver ? 100 : 0;
		struct rk_decisions d;
		run_round(&f, &rk_policy_rubick, NULL, &d);
		assert_int_equal(d.n, 1);
		assert_int_equal(d.v[0].job_id, driver ? 2 : 1);
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
}

/*
 * A job runs on the fewest nodes that hold its GPUs (the placement its curve
 * prices): with 3 GPUs free on each node and nobody to shrink, a 6-GPU job is
 * not scattered 3 + 3 over the network; it runs on one node or waits.
 */
static void not_scattered(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	struct rk_job *a = long_job(&f, 1, 5, 0), *b = long_job(&f, 2, 5, 0);
	fx_run_on(a, 0, 0);
	fx_run_on(b, 1, 0);
	a->restarts = b->restarts = 500; /* protected (restart_protected): free GPUs are all there is */
	long_job(&f, 3, 6, 0)->iters_total = 2000;
	struct rk_decisions d;
	run_round(&f, &rk_policy_rubick, NULL, &d);
	const struct rk_decision *x = fx_decision(&d, 3);
	if (x)
		assert_int_equal(x->alloc.n, 1);
	rk_decisions_fini(&d);
	fx_fini(&f);
}

/*
 * A job on several nodes gives up a whole node to a shorter newcomer and keeps
 * running on the others, re-planned for them, instead of being preempted.
 */
static void multi_node_victim_keeps_nodes(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 3);
	struct rk_job *big = long_job(&f, 1, 24, 0);
	fx_run_on(big, 0, 0);
	big->alloc.shares = realloc(big->alloc.shares, 3 * sizeof(*big->alloc.shares));
	assert_non_null(big->alloc.shares);
	big->alloc.n = 3;
	for (int k = 0; k < 3; k++)
		big->alloc.shares[k] = (struct rk_share){.node = k, .gpus = 8, .cpus = 64,
							 .mem_mb = 8 * 100 * 1024};
	long_job(&f, 2, 8, 0)->iters_total = 2000;
	struct rk_decisions d;
	run_round(&f, &rk_policy_rubick, NULL, &d);
	const struct rk_decision *v = fx_decision(&d, 1), *x = fx_decision(&d, 2);
	assert_non_null(v);
	assert_non_null(x);
	assert_int_equal(v->alloc.n, 2);
	assert_int_equal(fx_gpus(&v->alloc), 16);
	assert_int_equal(v->plan.dp * v->plan.tp * v->plan.pp, 16);
	assert_int_equal(x->alloc.n, 1);
	for (int s = 0; s < v->alloc.n; s++)
		assert_int_not_equal(v->alloc.shares[s].node, x->alloc.shares[0].node);
	rk_decisions_fini(&d);
	fx_fini(&f);
}

/*
 * A guaranteed running job is never shrunk below its baseline (here any
 * shrink would be): the best-effort one on the other node gives way instead.
 * A pending guaranteed job is started with a predicted throughput at least
 * its baseline (the requested plan on the requested GPUs): by default on
 * exactly that, with guaranteed=reconfigure on whatever its curve says.
 */
static void guaranteed_baseline_kept(void **state)
{
	(void)state;
	for (int reconf = 0; reconf < 2; reconf++) {
		struct fixture f;
		fx_init(&f, 2);
		struct rk_job *g1 = long_job(&f, 1, 8, 1);
		fx_run_on(g1, 0, 0);
		fx_run_on(long_job(&f, 2, 8, 0), 1, 0);
		struct rk_job *g3 = long_job(&f, 3, 4, 1);
		struct rk_decisions d;
		run_round(&f, &rk_policy_rubick, reconf ? "guaranteed=reconfigure" : NULL, &d);
		assert_null(fx_decision(&d, 1));
		const struct rk_decision *x = fx_decision(&d, 3);
		assert_non_null(x);
		struct rk_placement pl;
		assert_int_equal(rk_alloc_to_placement(&x->alloc, &pl), RK_OK);
		double got = 0, base = 0;
		assert_int_equal(rk_baseline_tput_sps(g3, &x->plan, &pl, 8, &f.env, &got), RK_OK);
		struct rk_placement req = {.n_nodes = 1, .gpus = {4}};
		assert_int_equal(rk_baseline_tput_sps(g3, &g3->req_plan, &req, 8, &f.env, &base),
				 RK_OK);
		assert_true(got >= base);
		if (!reconf) {
			/* guaranteed=keep (default): exactly the request, nothing else. */
			assert_int_equal(fx_gpus(&x->alloc), 4);
			assert_int_equal(x->alloc.n, 1);
			assert_true(rk_plan_equal(&x->plan, &g3->req_plan));
		}
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
}

/*
 * guaranteed=reconfigure trusts a guaranteed job's model only once it was
 * refitted from the job's own iterations (model_refits): before, a
 * pending guaranteed job runs exactly its request, whatever its curve says.
 * The SLA check: a refitted guaranteed job observed below its baseline off its
 * request goes back to its request; observed at or above it, it is left alone.
 */
static void guaranteed_trusts_refitted_model_only(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	struct rk_job *g = long_job(&f, 1, 4, 1);
	g->req_plan = fx_dp_plan(32, 4, 0);
	g->req_plan.mb = 1, g->req_plan.ga = 8, g->req_plan.gc = 1; /* its curve has faster plans */
	struct rk_decisions d;
	run_round(&f, &rk_policy_rubick, "guaranteed=reconfigure", &d);
	const struct rk_decision *x = fx_decision(&d, 1);
	assert_non_null(x);
	assert_int_equal(fx_gpus(&x->alloc), 4);
	assert_true(rk_plan_equal(&x->plan, &g->req_plan));
	rk_decisions_fini(&d);
	fx_fini(&f);

	for (int below = 0; below < 2; below++) {
		fx_init(&f, 2);
		g = long_job(&f, 1, 4, 1);
		struct rk_placement req = {.n_nodes = 1, .gpus = {4}};
		double base = 0;
		assert_int_equal(rk_baseline_tput_sps(g, &g->req_plan, &req, 8, &f.env, &base),
				 RK_OK);
		/* running off its request: 2 GPUs, the DP plan for them */
		g->req_gpus = 2;
		g->req_cpus = 16;
		g->req_mem_mb = 200 * 1024;
		struct rk_plan req_plan = g->req_plan;
		g->req_plan = fx_dp_plan(32, 2, 0);
		fx_run_on(g, 0, 0);
		g->req_gpus = 4;
		g->req_cpus = 32;
		g->req_mem_mb = 400 * 1024;
		g->req_plan = req_plan;
		g->model_refits = 1;
		g->baseline_sps = base;
		g->observed_sps = below ? 0.5 * base : 1.2 * base;
		run_round(&f, &rk_policy_rubick, "guaranteed=reconfigure", &d);
		x = fx_decision(&d, 1);
		if (below) {
			assert_non_null(x);
			assert_int_equal(fx_gpus(&x->alloc), 4);
			assert_true(rk_plan_equal(&x->plan, &g->req_plan));
		} else {
			assert_true(!x || fx_gpus(&x->alloc) != 4 ||
				    !rk_plan_equal(&x->plan, &g->req_plan));
		}
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
}

/*
 * guaranteed=reconfigure: a running guaranteed job whose model was refitted
 * from its own iterations grows into its node's leftover GPUs,
 * more data-parallel replicas of the plan family it was observed running
 * (same tp, pp, ZeRO stage and offload), at a predicted throughput of at
 * least its baseline times the margin. With guaranteed=keep, or before a
 * refit, it stays at its request. Grown, it is a victim down to its request,
 * where it runs its requested plan, for a newcomer that needs the GPUs.
 */
static void guaranteed_grows_into_leftovers(void **state)
{
	(void)state;
	for (int variant = 0; variant < 3; variant++) {
		struct fixture f;
		fx_init(&f, 2);
		struct rk_job *g = long_job(&f, 1, 2, 1);
		struct rk_placement req = {.n_nodes = 1, .gpus = {2}};
		double base = 0;
		assert_int_equal(rk_baseline_tput_sps(g, &g->req_plan, &req, 8, &f.env, &base),
				 RK_OK);
		fx_run_on(g, 0, 0);
		fx_run_on(long_job(&f, 2, 8, 1), 1, 0); /* not refitted: stays at its request */
		g->baseline_sps = base;
		g->observed_sps = base;
		g->model_refits = variant == 1 ? 0 : 1;
		struct rk_decisions d;
		const char *opts = variant == 0 ? NULL : "guaranteed=reconfigure";
		run_round(&f, &rk_policy_rubick, opts, &d);
		const struct rk_decision *x = fx_decision(&d, 1);
		if (variant < 2) {
			assert_null(x);
			rk_decisions_fini(&d);
			fx_fini(&f);
			continue;
		}
		assert_non_null(x);
		assert_int_equal(x->alloc.n, 1);
		assert_int_equal(x->alloc.shares[0].node, 0);
		int grown = fx_gpus(&x->alloc);
		assert_true(grown > 2);
		assert_int_equal(x->plan.tp, g->req_plan.tp);
		assert_int_equal(x->plan.pp, g->req_plan.pp);
		assert_int_equal(x->plan.zero, g->req_plan.zero);
		assert_int_equal(x->plan.offload, g->req_plan.offload);
		struct rk_placement pl;
		assert_int_equal(rk_alloc_to_placement(&x->alloc, &pl), RK_OK);
		double got = 0;
		assert_int_equal(rk_baseline_tput_sps(g, &x->plan, &pl, 8, &f.env, &got), RK_OK);
		assert_true(got >= 1.05 * base);
		rk_decisions_fini(&d);
		fx_fini(&f);
	}

	/* Grown to 4 GPUs of a 2-GPU request, then a guaranteed newcomer needs 2
	 * of node 0's GPUs (both nodes are otherwise full with guaranteed jobs at
	 * their requests): the grown job gives back what it grew by, and runs its
	 * requested plan again. */
	struct fixture f;
	fx_init(&f, 2);
	struct rk_job *g = long_job(&f, 1, 4, 1);
	g->req_plan = fx_dp_plan(32, 4, 0);
	fx_run_on(g, 0, 0);
	g->plan = g->req_plan;
	g->req_gpus = 2;
	g->req_cpus = 16;
	g->req_mem_mb = 200 * 1024;
	g->req_plan = fx_dp_plan(32, 2, 0);
	struct rk_placement req = {.n_nodes = 1, .gpus = {2}};
	double base = 0;
	assert_int_equal(rk_baseline_tput_sps(g, &g->req_plan, &req, 8, &f.env, &base), RK_OK);
	g->baseline_sps = base;
	g->observed_sps = 2 * base;
	g->model_refits = 2;
	g->restarts = 1;
	fx_run_on(long_job(&f, 2, 4, 1), 0, 0);
	fx_run_on(long_job(&f, 3, 8, 1), 1, 0);
	long_job(&f, 4, 2, 1)->iters_total = 200;
	struct rk_decisions d;
	run_round(&f, &rk_policy_rubick, "guaranteed=reconfigure", &d);
	const struct rk_decision *x = fx_decision(&d, 1);
	assert_non_null(x);
	assert_int_equal(fx_gpus(&x->alloc), 2);
	assert_true(rk_plan_equal(&x->plan, &g->req_plan));
	assert_non_null(fx_decision(&d, 4));
	assert_null(fx_decision(&d, 2));
	assert_null(fx_decision(&d, 3));
	rk_decisions_fini(&d);
	fx_fini(&f);
}

/* Plan-only: exactly the requested GPUs, the best plan there; res-only: the user's plan family. */
static void ablations(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	struct rk_job *j = fx_job(&f, 1, 0, 4, 0);
	j->req_plan = fx_dp_plan(32, 4, 2);
	struct rk_curve c;
	build_curve(&f, &c);
	struct rk_decisions d;
	run_round(&f, &rk_policy_rubick_plan_only, NULL, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(fx_gpus(&d.v[0].alloc), 4);
	const struct rk_curve_point *p = rk_curve_lookup(&c, 4, 8, f.env.net_gbps);
	assert_true(rk_plan_equal(&d.v[0].plan, &p->plan));
	rk_decisions_fini(&d);

	run_round(&f, &rk_policy_rubick_res_only, NULL, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.v[0].plan.tp, 1);
	assert_int_equal(d.v[0].plan.pp, 1);
	assert_int_equal(d.v[0].plan.zero, 2);
	assert_int_equal(d.v[0].plan.gc, 0);
	assert_true(fx_gpus(&d.v[0].alloc) >= 4); /* ZeRO plans are never scaled below the user's dp */
	rk_decisions_fini(&d);
	rk_curve_fini(&c);
	fx_fini(&f);
}

/* Tenant quota on guaranteed GPUs: over it the job waits; within it, it runs. */
static void tenant_quota(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	fx_job(&f, 1, 0, 8, 1);
	struct rk_decisions d;
	run_round(&f, &rk_policy_rubick, "quota=t0:2/t1:64", &d);
	assert_int_equal(d.n, 0);
	rk_decisions_fini(&d);
	run_round(&f, &rk_policy_rubick, "quota=t0:16", &d);
	assert_int_equal(d.n, 1);
	assert_true(fx_gpus(&d.v[0].alloc) <= 16);
	rk_decisions_fini(&d);
	fx_fini(&f);
}

/* A model that cannot be planned (unfitted) still runs, as requested. */
static void unfitted_model_runs_as_requested(void **state)
{
	(void)state;
	struct fixture f;
	fx_init(&f, 2);
	f.model.perf = (struct rk_perf_params){0};
	struct rk_job *j = fx_job(&f, 1, 0, 4, 0);
	struct rk_decisions d;
	run_round(&f, &rk_policy_rubick, NULL, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(fx_gpus(&d.v[0].alloc), 4);
	assert_true(rk_plan_equal(&d.v[0].plan, &j->req_plan));
	rk_decisions_fini(&d);
	fx_fini(&f);
}

static void options_are_checked(void **state)
{
	(void)state;
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(rk_policy_rubick.create(&st, "restart_s=-1", &err), RK_ERANGE);
	assert_non_null(strstr(err.msg, "restart_s=-1"));
	assert_int_equal(rk_policy_rubick.create(&st, "quota=t0", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "TENANT:GPUS"));
	assert_int_equal(rk_policy_rubick.create(&st, "quota=t0:x", &err), RK_ERANGE);
	assert_int_equal(rk_policy_rubick.create(&st, "guaranteed=maybe", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "'keep' or 'reconfigure'"));
	assert_int_equal(rk_policy_rubick.create(&st, "bogus=1", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "unknown option 'bogus'"));
	assert_int_equal(rk_policy_rubick_res_only.create(&st, "restart_s=30,quota=a:1/b:2", &err),
			 RK_OK);
	rk_policy_rubick_res_only.destroy(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lone_job_follows_curve),
		cmocka_unit_test(shrink_phase_makes_room),
		cmocka_unit_test(protected_victims),
		cmocka_unit_test(restarting_victims),
		cmocka_unit_test(partial_start_grows_back),
		cmocka_unit_test(measured_speeds_grow_across_nodes),
		cmocka_unit_test(measured_speeds_start_across_nodes),
		cmocka_unit_test(short_job_starts_small),
		cmocka_unit_test(guaranteed_passes_restart_limit),
		cmocka_unit_test(driver_run_time_orders_queue),
		cmocka_unit_test(not_scattered),
		cmocka_unit_test(multi_node_victim_keeps_nodes),
		cmocka_unit_test(guaranteed_baseline_kept),
		cmocka_unit_test(guaranteed_trusts_refitted_model_only),
		cmocka_unit_test(guaranteed_grows_into_leftovers),
		cmocka_unit_test(ablations),
		cmocka_unit_test(tenant_quota),
		cmocka_unit_test(unfitted_model_runs_as_requested),
		cmocka_unit_test(options_are_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
