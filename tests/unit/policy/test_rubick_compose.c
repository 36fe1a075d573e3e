/*
 * Rubick composed with the co-location policies: options
 * sharing=on (rubick_share.c) and placement=contention (rubick_place.c), and
 * the node choice they share with sjf-bco (rk_contention_choose).
 */
#include "baseline_fixture.h"

#include "policy/rubick/rubick_round.h"
#include "rubick/sharing.h"

#include <limits.h>
#include <math.h>

extern const struct rk_policy_ops rk_policy_rubick;

/* One round of `rubick:opts` on the fixture, `sharing` = the driver's switch. */
static int round_of(struct fixture *f, const char *opts, int sharing, const struct rk_xi_table *xi,
                    struct rk_decisions *d, struct rk_error *err)
{
	/* The jobs' lengths are their iterations at the model's speed: the
	 * fixture's fixed est_duration_s would rescale every remaining time
	 * (rubick.c step 1) to the same 1,000 s, long partner or not. */
	for (int i = 0; i < f->n_jobs; i++)
		f->jobs[i].est_duration_s = 0;
	void *st = NULL;
	if (rk_policy_rubick.create(&st, opts, err) != RK_OK)
		fail_msg("%s", err->msg);
	struct rk_sched_input in = fx_input(f, 1000 * 1000);
	in.gpu_sharing = sharing;
	in.xi = xi;
	rk_decisions_init(d);
	int rc = rk_policy_rubick.schedule(st, &in, d, err);
	rk_policy_rubick.destroy(st);
	return rc;
}

/* An interference table where BERT next to BERT on an A800 runs xi times slower. */
static void xi_table(struct rk_xi_table *t, double xi)
{
	rk_xi_table_init(t);
	struct rk_xi_entry e = {.sf_a = 8, .sf_b = 8, .xi_a = xi};
	snprintf(e.gpu_type, sizeof(e.gpu_type), "a800");
	snprintf(e.a, sizeof(e.a), "bert");
	snprintf(e.b, sizeof(e.b), "bert");
	assert_int_equal(rk_xi_table_add(t, &e, NULL), RK_OK);
	assert_int_equal(rk_xi_table_finish(t), RK_OK);
}

/*
 * One node of 8 GPUs held by a long best-effort job that may not be shrunk
 * (at the restart limit); a short best-effort job arrives. Returns it.
 */
static struct rk_job *busy_node(struct fixture *f)
{
	fx_init(f, 1);
	f->nodes[0].gpu_mem_mb = 80 * 1024; /* A800 80 GiB: the pair's memory is checked */
	struct rk_job *b = fx_job(f, 1, 0, 8, 0);
	b->iters_total = 1e6;
	b->restarts = 500; /* restart_protected (500 x 260 s > its ~98,000 s left): never shrunk */
	fx_run_on(b, 0, 0);
	return fx_job(f, 2, 1, 8, 0);
}

static void share_case(double factor);

/* The decisions pass the engine's GPU-level sharing rules. */
static void share_rules_hold(struct fixture *f, struct rk_decisions *d)
{
	struct rk_sched_input in = fx_input(f, 0);
	in.gpu_sharing = 1;
	struct rk_error err;
	if (rk_gpu_share_resolve(&in, d, "rubick", &err) != RK_OK)
		fail_msg("%s", err.msg);
}

/*
 * The short job shares the long one's GPUs at once: with little
 * interference (xi = 1.1), and even with xi = 3 both ways when nobody queues
 * behind (the short job overtakes, §3.3), the group test's shared sum beats
 * waiting ~1e6 iterations. It runs a data-parallel plan of the same global
 * batch on GPUs the partner holds, and the partner is not touched.
 */
static void shares_when_it_pays(void **state)
{
	(void)state;
	for (int c = 0; c < 2; c++)
		share_case(c ? 3.0 : 1.1);
}

static void share_case(double factor)
{
	struct fixture f;
	struct rk_xi_table xi;
	xi_table(&xi, factor);
	busy_node(&f);
	struct rk_decisions d;
	struct rk_error err;
	assert_int_equal(round_of(&f, "sharing=on", 1, &xi, &d, &err), RK_OK);
	assert_int_equal(d.n, 1);
	const struct rk_decision *a = fx_decision(&d, 2);
	assert_non_null(a);
	assert_int_equal(a->alloc.n, 1);
	assert_int_equal(a->alloc.shares[0].node, 0);
	assert_true(a->alloc.shares[0].gpu_mask != 0);
	assert_int_equal(__builtin_popcountll(a->alloc.shares[0].gpu_mask), fx_gpus(&a->alloc));
	assert_int_equal(a->plan.tp, 1);
	assert_int_equal(a->plan.pp, 1);
	assert_int_equal(a->plan.dp * a->plan.mb * a->plan.ga, 32);
	share_rules_hold(&f, &d);
	rk_decisions_fini(&d);
	fx_fini(&f);
	rk_xi_table_fini(&xi);
}

/*
 * Every case that must not share: the option off, the driver not allowing
 * it, a guaranteed newcomer, a guaranteed partner, and with interference
 * worse than time slicing (xi = 3 both ways): a partner about to end
 * (waiting for it is better) or a queue behind that would pay for the lost
 * GPU-seconds (shares_when_it_pays: without either, the short job shares),
 * and a partner holding more GPUs than its request (Rubick's leftovers: a
 * share would slow it on all of them, rubick_share_internal.h may_partner).
 */
static void declines_otherwise(void **state)
{
	(void)state;
	struct rk_xi_table low, high;
	xi_table(&low, 1.1);
	xi_table(&high, 3.0);
	for (int c = 0; c < 8; c++) { /* 6: case 5 without the queue, which shares */
		struct fixture f;
		struct rk_job *a = busy_node(&f);
		const char *opts = c == 0 ? NULL : "sharing=on";
		const struct rk_xi_table *xi = c >= 4 ? &high : &low;
		if (c == 2)
			a->guaranteed = 1;
		if (c == 3)
			f.jobs[0].guaranteed = 1;
		if (c == 4)
			f.jobs[0].iters_done = f.jobs[0].iters_total - 1;
		if (c == 7) /* grown from 4 to the node's 8 GPUs */
			f.jobs[0].req_gpus = 4;
		/* 10x the newcomer: overtaking gains less than the queue pays */
		if (c == 5 || c == 6)
			f.jobs[0].iters_total = 1e4;
		for (int q = 0; c == 5 && q < 10; q++)
			fx_job(&f, 10 + q, 2, 8, 0)->iters_total = 5e5;
		struct rk_decisions d;
		struct rk_error err;
		assert_int_equal(round_of(&f, opts, c != 1, xi, &d, &err), RK_OK);
		const struct rk_decision *nd = fx_decision(&d, 2);
		if (c == 6) {
			assert_non_null(nd);
			share_rules_hold(&f, &d);
		} else if (c == 2 && nd) {
			/* A guaranteed newcomer may take GPUs from a best-effort job at
			 * its restart limit (rubick_shrink.c shrinkable_for), never share
			 * them: the two hold no more than the node's 8 GPUs. */
			const struct rk_decision *od = fx_decision(&d, 1);
			int other = od ? fx_gpus(&od->alloc) : fx_gpus(&f.jobs[0].alloc);
			if (fx_gpus(&nd->alloc) + other > 8)
				fail_msg("case 2: the guaranteed newcomer shared (%d + %d GPUs)",
				         fx_gpus(&nd->alloc), other);
		} else if (nd) {
			fail_msg("case %d: the newcomer shared", c);
		} else {
			assert_int_equal(d.n, 0);
		}
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
	rk_xi_table_fini(&low);
	rk_xi_table_fini(&high);
}

/*
 * The round after: two jobs hold the same GPUs. The capacity counts each
 * GPU once (plain rk_capacity_from_jobs would call it over-committed), and
 * a new job starts on free GPUs beside the pair. With nobody waiting and
 * GPUs free, a long pair splits (rubick_unshare.c): the first job in
 * Rubick's order moves to GPUs nobody holds, its partner keeps its GPUs and
 * runs alone; a short pair (its saving under two restart delays) is left
 * alone. Control: the same jobs on GPUs of their own, where rubick grows
 * the first onto free GPUs.
 */
static void pair_splits_when_room_appears(void **state)
{
	(void)state;
	struct rk_xi_table xi;
	xi_table(&xi, 1.1);
	for (int c = 0; c < 3; c++) { /* 0 not shared, 1 long pair, 2 short pair */
		struct fixture f;
		fx_init(&f, 2);
		f.nodes[0].gpu_mem_mb = f.nodes[1].gpu_mem_mb = 80 * 1024;
		for (int id = 1; id <= 2; id++) {
			struct rk_job *j = fx_job(&f, id, 0, 4, 0);
			j->iters_total = c == 2 ? 1e3 : 1e6;
			fx_run_on(j, c || id == 1 ? 0 : 1, 0);
			j->alloc.shares[0].gpu_mask = 0x0f;
		}
		struct rk_decisions d;
		struct rk_error err;
		assert_int_equal(round_of(&f, "sharing=on", 1, &xi, &d, &err), RK_OK);
		const struct rk_decision *d1 = fx_decision(&d, 1);
		if (c == 1) {
			assert_non_null(d1); /* the first leaves the pair */
			assert_null(fx_decision(&d, 2));
			assert_int_equal(d1->alloc.n, 1);
			uint64_t m = d1->alloc.shares[0].gpu_mask;
			assert_true(fx_gpus(&d1->alloc) >= 4);
			if (d1->alloc.shares[0].node == 0) /* none of the partner's GPUs */
				assert_int_equal(m & 0x0f, 0);
		} else if (c == 2) {
			assert_null(d1);
			assert_null(fx_decision(&d, 2));
		} else {
			assert_non_null(d1); /* grown on node 0 */
		}
		share_rules_hold(&f, &d);
		rk_decisions_fini(&d);
		fx_job(&f, 5, 5, 4, 0);
		assert_int_equal(round_of(&f, "sharing=on", 1, &xi, &d, &err), RK_OK);
		assert_non_null(fx_decision(&d, 5));
		share_rules_hold(&f, &d);
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
	rk_xi_table_fini(&xi);
}

/*
 * A round that starts a pair names the GPUs of every job it starts: a short
 * job c started first on the node's free GPUs (without names), then a
 * shares the rest and the partner's GPUs. c must get GPUs neither a nor
 * the partner holds (the engine would otherwise give it the lowest GPUs
 * nobody held before the round: those a names). Models unfitted, so every
 * job runs exactly its request.
 */
static void starts_beside_a_pair_get_their_own_gpus(void **state)
{
	(void)state;
	struct rk_xi_table xi;
	xi_table(&xi, 1.1);
	struct fixture f;
	fx_init(&f, 1);
	f.nodes[0].gpu_mem_mb = 80 * 1024;
	f.model.perf = (struct rk_perf_params){0};
	struct rk_job *b = fx_job(&f, 1, 0, 4, 0);
	b->iters_total = 1e6;
	b->restarts = 500; /* restart_protected: never shrunk */
	fx_run_on(b, 0, 0);
	b->alloc.shares[0].gpu_mask = 0x0f;
	struct rk_job *a = fx_job(&f, 2, 1, 6, 0);
	a->global_batch = 48;
	a->req_plan = fx_dp_plan(48, 6, 0);
	fx_job(&f, 3, 2, 2, 0)->iters_total = 10; /* c: shortest, first in SRTF order */
	struct rk_decisions d;
	struct rk_error err;
	assert_int_equal(round_of(&f, "sharing=on", 1, &xi, &d, &err), RK_OK);
	const struct rk_decision *da = fx_decision(&d, 2), *dc = fx_decision(&d, 3);
	assert_non_null(da);
	assert_non_null(dc);
	uint64_t ma = da->alloc.shares[0].gpu_mask, mc = dc->alloc.shares[0].gpu_mask;
	assert_int_equal(__builtin_popcountll(ma), 6);
	assert_int_equal(__builtin_popcountll(mc), 2);
	assert_int_equal(ma & 0x0f, 0x0f); /* a shares all of the partner's GPUs */
	assert_int_equal(mc & (ma | 0x0f), 0);
	share_rules_hold(&f, &d);
	rk_decisions_fini(&d);
	fx_fini(&f);
	rk_xi_table_fini(&xi);
}

/*
 * SJF-BCO's node choice: best fit on one node; else the fewest nodes at the
 * lowest contention level, most free GPUs first; a cap u excludes nodes with
 * u or more cross-node jobs.
 */
static void contention_choose_cases(void **state)
{
	(void)state;
	int nodes[8], per[8], m, scratch[8];
	const int cap1[3] = {8, 3, 5}, k1[3] = {0, 0, 0};
	assert_int_equal(rk_contention_choose(cap1, k1, 3, 4, INT_MAX, scratch, nodes, per, &m), 1);
	assert_int_equal(m, 1);
	assert_int_equal(nodes[0], 2);
	const int cap2[4] = {4, 4, 6, 8}, k2[4] = {1, 1, 0, 0};
	assert_int_equal(rk_contention_choose(cap2, k2, 4, 12, INT_MAX, scratch, nodes, per, &m),
	                 1);
	assert_int_equal(m, 2);
	assert_int_equal(nodes[0], 3);
	assert_int_equal(per[0], 8);
	assert_int_equal(nodes[1], 2);
	assert_int_equal(per[1], 4);
	const int k3[4] = {1, 1, 1, 0};
	assert_int_equal(rk_contention_choose(cap2, k3, 4, 12, 1, scratch, nodes, per, &m), 0);
	assert_int_equal(rk_contention_choose(cap2, k3, 4, 12, 2, scratch, nodes, per, &m), 1);
	assert_int_equal(nodes[0], 3);
	assert_int_equal(nodes[1], 2);
	assert_int_equal(rk_contention_choose(cap2, k2, 4, 23, INT_MAX, scratch, nodes, per, &m),
	                 0);
}

/*
 * placement=contention on four nodes: a cross-node job on nodes 0 and 1 (4
 * GPUs each), a 2-GPU job on node 2; a 12-GPU job (as requested: its model
 * is unfitted) goes by default to node 3 plus the best fit for 4 GPUs (node
 * 0, beside the cross-node job), and with the option to nodes 3 and 2,
 * where no ring crosses the NIC yet.
 */
static void placement_avoids_contended_nodes(void **state)
{
	(void)state;
	for (int opt = 0; opt < 2; opt++) {
		struct fixture f;
		fx_init(&f, 4);
		f.model.perf = (struct rk_perf_params){0};
		struct rk_job *x = fx_job(&f, 1, 0, 8, 0);
		fx_run_on(x, 0, 0);
		free(x->alloc.shares);
		x->alloc.n = 2;
		x->alloc.shares = calloc(2, sizeof(*x->alloc.shares));
		assert_non_null(x->alloc.shares);
		for (int s = 0; s < 2; s++)
			x->alloc.shares[s] = (struct rk_share){
			    .node = s, .gpus = 4, .cpus = 32, .mem_mb = 400 * 1024};
		fx_run_on(fx_job(&f, 2, 0, 2, 0), 2, 0);
		struct rk_job *z = fx_job(&f, 3, 1, 12, 0);
		z->global_batch = 48;
		z->req_plan = fx_dp_plan(48, 12, 0);
		struct rk_decisions d;
		struct rk_error err;
		assert_int_equal(
		    round_of(&f, opt ? "placement=contention" : NULL, 0, NULL, &d, &err), RK_OK);
		fx_check(&f, &d, "rubick");
		const struct rk_decision *dz = fx_decision(&d, 3);
		assert_non_null(dz);
		assert_int_equal(dz->alloc.n, 2);
		int on[4] = {0};
		for (int s = 0; s < 2; s++)
			on[dz->alloc.shares[s].node] = dz->alloc.shares[s].gpus;
		assert_int_equal(on[3], 8);
		if (opt)
			assert_int_equal(on[2], 4);
		else
			assert_int_equal(on[0] + on[1], 4);
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
}

/*
 * A pair must not delay a job waiting ahead of the newcomer
 * (rubick_share_choose.c delays_ahead): a guaranteed job g, longer than the
 * partner (so not allowed to shrink it), waits for the partner's 8 GPUs. The
 * short newcomer sharing them would slow the partner and so hold g back: it
 * does not share, though
 * without g it does (shares_when_it_pays). Control: g shorter than the
 * partner takes its GPUs by shrinking, and nobody shares.
 */
static void does_not_delay_a_guarantee_ahead(void **state)
{
	(void)state;
	struct rk_xi_table xi;
	xi_table(&xi, 1.1);
	for (int c = 0; c < 2; c++) {
		struct fixture f;
		busy_node(&f);
		struct rk_job *g = fx_job(&f, 3, 2, 8, 1);
		g->iters_total = c == 0 ? 2e6 : 10;
		struct rk_decisions d;
		struct rk_error err;
		assert_int_equal(round_of(&f, "sharing=on", 1, &xi, &d, &err), RK_OK);
		const struct rk_decision *nd = fx_decision(&d, 2);
		if (nd && nd->alloc.n > 0 && nd->alloc.shares[0].gpu_mask != 0)
			fail_msg("case %d: the newcomer shared ahead of a waiting guarantee", c);
		if (c == 0)
			assert_null(fx_decision(&d, 3)); /* g waits for the partner */
		share_rules_hold(&f, &d);
		rk_decisions_fini(&d);
		fx_fini(&f);
	}
	rk_xi_table_fini(&xi);
}

/*
 * The margin of the sharing rule (rubick_share_choose.c try_node): a pair forms
 * only when its predicted gain exceeds 2 x (RUBICK_SLA_MARGIN - 1) of the
 * not-sharing sum, the model's error on both estimates. busy_node with the
 * partner's run left rho = 2 times the newcomer's (same model, same
 * throughput at their GPUs), nobody queued behind and no free GPU (so no
 * start on fewer GPUs): the group test is then rk_pair_evaluate(E, rho E,
 * xi, xi) (sharing.h), whose gain over t_seq is (rho / 2 + 1 - xi) /
 * (rho + 0.5), positive for every xi < 2. xi is set so that the gain is 0.9
 * and 1.1 times the margin: below it no pair forms, though the gain is
 * positive (without the margin it would share); above it the pair forms.
 */
static void shares_only_past_the_models_error(void **state)
{
	(void)state;
	const double rho = 2, margin = 2 * (RUBICK_SLA_MARGIN - 1);
	for (int above = 0; above < 2; above++) {
		double frac = margin * (above ? 1.1 : 0.9);
		double x = rho / 2 + 1 - frac * (rho + 0.5);
		struct rk_pair_outcome o;
		assert_int_equal(rk_pair_evaluate(1, rho, x, x, &o, NULL), RK_OK);
		assert_true(o.share); /* the plain test says share, in both cases */
		assert_true(fabs(o.benefit_s / o.t_seq_s - frac) < 1e-9);
		struct rk_xi_table xi;
		xi_table(&xi, x);
		struct fixture f;
		struct rk_job *a = busy_node(&f);
		a->iters_total = 1e5;
		f.jobs[0].iters_total = rho * a->iters_total;
		struct rk_decisions d;
		struct rk_error err;
		assert_int_equal(round_of(&f, "sharing=on", 1, &xi, &d, &err), RK_OK);
		const struct rk_decision *nd = fx_decision(&d, 2);
		if (above) {
			if (!nd)
				fail_msg("gain %.3f of t_seq (xi %.4f), margin %.3f: no pair", frac,
				         x, margin);
			assert_true(nd->alloc.n == 1 && nd->alloc.shares[0].gpu_mask != 0);
			share_rules_hold(&f, &d);
		} else if (nd) {
			fail_msg("gain %.3f of t_seq (xi %.4f), margin %.3f: the pair formed", frac,
			         x, margin);
		}
		assert_int_equal(d.n, above);
		rk_decisions_fini(&d);
		fx_fini(&f);
		rk_xi_table_fini(&xi);
	}
}

static void options_are_checked(void **state)
{
	(void)state;
	void *st = NULL;
	struct rk_error err;
	assert_int_equal(rk_policy_rubick.create(&st, "sharing=maybe", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "sharing=maybe: must be 'on' or 'off'"));
	assert_int_equal(rk_policy_rubick.create(&st, "placement=ring", &err), RK_EINVAL);
	assert_non_null(strstr(err.msg, "placement=ring"));
	assert_int_equal(rk_policy_rubick.create(&st, "share_window=0", &err), RK_ERANGE);
	assert_non_null(strstr(err.msg, "share_window=0"));
	assert_int_equal(rk_policy_rubick.create(&st, "share_window=x", &err), RK_ERANGE);
	assert_int_equal(rk_policy_rubick.create(&st, "placement", &err), RK_EINVAL);
	assert_int_equal(
	    rk_policy_rubick.create(&st, "sharing=on,placement=contention,share_window=4", &err),
	    RK_OK);
	rk_policy_rubick.destroy(st);
	assert_int_equal(rk_policy_rubick.create(&st, "sharing=off,placement=spread", &err), RK_OK);
	rk_policy_rubick.destroy(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(shares_when_it_pays),
	    cmocka_unit_test(declines_otherwise),
	    cmocka_unit_test(pair_splits_when_room_appears),
	    cmocka_unit_test(does_not_delay_a_guarantee_ahead),
	    cmocka_unit_test(shares_only_past_the_models_error),
	    cmocka_unit_test(starts_beside_a_pair_get_their_own_gpus),
	    cmocka_unit_test(contention_choose_cases),
	    cmocka_unit_test(placement_avoids_contended_nodes),
	    cmocka_unit_test(options_are_checked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
