/*
 * Sia baseline (docs/references.md §5.1; Jayaram Subramanya et al., SOSP 2023,
 * artifact sia-simulator/sia.py): every round, one binary ILP over
 * (job, configuration) pairs picks each job's GPU type and (nodes, GPUs)
 * configuration, then the configurations are mapped onto concrete nodes.
 *
 * Configurations per GPU type k with N_k nodes of n_k GPUs: one node with
 * 1, 2, 4, ... GPUs up to n_k, then m whole nodes (m, m*n_k) for every m up
 * to 64 GPUs (Sia's config sets, §5.1) and powers of two of nodes beyond,
 * plus each size an active job requests (see sia_build_configs).
 *
 * Goodput. A job with a goodput model (rk_job.goodput, the simulator's
 * goodput oracle; Sia as its authors run it) is priced as Sia prices an
 * adaptive job: each configuration's goodput is the best over per-GPU batch
 * and accumulation steps of throughput x statistical efficiency on that GPU
 * type's throughput model (rk_goodput_optimize), bootstrapped where the job
 * has not run yet (sia_goodput.c: one-GPU profiles of every type, multi-GPU
 * estimates projected from the types it has run on, at most twice the
 * replicas it has run with), and the decision carries the chosen batch
 * (rk_decision.local_bsz, accum_steps). Rounds then run on every tick of the
 * grid: the statistics move with progress. Without one a job keeps its fixed
 * global batch, so goodput = throughput
 * (statistical efficiency is 1; §5.1 "goodput = throughput for fixed-batch
 * jobs"), predicted by the fitted performance model (rk_perf_predict, §1.4),
 * never the simulator's oracle. A job with its trace's own measured speeds
 * per GPU count (rk_job.native_sps: Gavel and Shockwave job types, which the
 * simulator runs at those speeds) is priced from them at every GPU count
 * instead (rk_baseline_native_sps), as Sia's authors price each job type
 * from its measured throughput profile; each request's row of valid configurations,
 * normalised goodputs and unscaled costs is kept across rounds until the
 * request, the configuration set or the environment changes (sia_cache.c;
 * rounds then price only the restart factor). A configuration is valid for a job when the
 * user's plan scales to its GPU count without re-planning
 * (rk_baseline_plan_scale: tp and pp kept, dp' = GPUs/(tp*pp) divides the
 * batch, micro-batch never above the user's, ZeRO plans not shrunk below the
 * user's dp) and tp divides the GPUs per node, and the GPU count lies in the
 * job's [min_gpus, max_gpus] (rk_job_gpu_range; option range=plan, which
 * ignored it, is gone). So Sia scales jobs'
 * GPU counts like its strong-scaling jobs, while the plan stays the user's.
 * All GPU types share one performance model (the cluster env has no per-type
 * constants), so types differ only in capacity.
 *
 * Each job's row is normalised by its smallest valid goodput (so its worst
 * configuration scores 1). Restart factor (§5.1): for a job that holds an
 * allocation, every configuration except its current one is multiplied by
 * r = max(age - restarts*P, 0) / (age + P) (r = 1 while age < P), P the
 * restart penalty; floored at SIA_MIN_GOODPUT (Sia's value for invalid
 * configurations). A pending job pays one start whichever configuration it
 * gets, so its row is not scaled.
 *
 * ILP (p < 0, the default p = -0.5, λ_n = 1.1):
 *   minimise  Σ_j Σ_c x_jc (G_jc^p - λ_n)        (the constant λ_n·J dropped)
 *   s.t.      Σ_c x_jc <= 1 per job; Σ_{c of type k} x_jc·gpus(c) <= GPUs of type k.
 * For p > 0: maximise Σ x_jc (G_jc^p + λ_n). When every job's best
 * configuration fits at once that is the optimum and no solver runs
 * (unconstrained_choice); else GLPK through rk_lp, relative gap SIA_GAP as
 * Sia's 1e-4, from the previous round's solution (placed jobs in what they
 * hold, the rest greedily) as first incumbent, stopped at SIA_MAX_NODES
 * nodes or SIA_TIME_LIMIT_MS with its incumbent. The greedy solution is the
 * fallback should the solver stop without one. On one GPU type the ILP is
 * solved exactly by dynamic programming (sia_dp.c), and a round it solved
 * that decided nothing asks to be woken only once a later round could answer
 * otherwise (quiet rounds, sia_quiet.c; option quiet=off runs them all).
 *
 * Mapping: jobs whose chosen configuration equals the shape of what they hold
 * keep their nodes; the rest are placed largest first (whole nodes for
 * multi-node configs, best fit for one-node configs). A job that no longer
 * fits because of fragmentation waits this round, as in Sia. CPUs and memory
 * go with each GPU: the job's per-GPU request, capped at the node's
 * GPU-proportional share so GPU capacity alone decides feasibility.
 *
 * Not modelled: λ_a (allocation-change penalty, a CLI knob in the artifact),
 * non-preemptible jobs, per-type throughput profiles without a goodput model.
 */
#include "policy/common/baseline.h"
#include "policy/sia/sia_internal.h"
#include "policy/sia/sia_round.h"
#include "rubick/lp.h"
#include "rubick/placement.h"
#include "rubick/policy.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What makes two pending jobs interchangeable for the ILP. */
struct class_key {
	struct {
		const struct rk_model *model;
		struct rk_perf_params perf;
		struct rk_plan plan;
		int64_t req_mem_mb;
		int global_batch, req_gpus, req_cpus, min_gpus, max_gpus;
		int gpu_quota; /* the tenant's: a row's configurations end there */
		int solo; /* 0 = may share a class; else 1 + job index (placed jobs) */
		struct sia_gp_key gp; /* goodput mode: statistics, models, what was seen */
	} k;
	int64_t submit_ms, id;
	int job;
};

static int cmp_class(const void *pa, const void *pb)
{
	const struct class_key *a = pa, *b = pb;
	int c = memcmp(&a->k, &b->k, sizeof(a->k));
	if (c)
		return c;
	if (a->submit_ms != b->submit_ms)
		return a->submit_ms < b->submit_ms ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/*
 * Group pending jobs with identical requests (model and its parameters,
 * batch, plan, GPUs, CPUs, memory, elastic range): they have identical rows in
 * the ILP, so one general-integer variable per configuration counts how many
 * of them take it. Placed jobs (restart factor, current configuration) stay
 * alone. The solution is the same as with one binary per job; the ILP is
 * smaller by the size of the queue.
 */
static int build_classes(struct sia_round *r)
{
	int n = r->in->n_jobs;
	struct class_key *keys = malloc((size_t)n * sizeof(*keys));
	r->rep = malloc((size_t)n * sizeof(int));
	r->csize = calloc((size_t)n, sizeof(int));
	r->members = malloc((size_t)n * sizeof(int));
	r->first_member = calloc((size_t)n, sizeof(int));
	if (!keys || !r->rep || !r->csize || !r->members || !r->first_member) {
		free(keys);
		return RK_ENOMEM;
	}
	for (int ji = 0; ji < n; ji++) {
		const struct rk_job *j = r->in->jobs[ji];
		struct class_key *c = &keys[ji];
		memset(c, 0, sizeof(*c)); /* padding: keys compare bytewise */
		c->k.model = j->model;
		c->k.perf = j->model->perf;
		c->k.plan = j->req_plan;
		c->k.req_mem_mb = j->req_mem_mb;
		c->k.global_batch = j->global_batch;
		c->k.req_gpus = j->req_gpus;
		c->k.req_cpus = j->req_cpus;
		c->k.min_gpus = r->o->range_job ? j->min_gpus : 0;
		c->k.max_gpus = r->o->range_job ? j->max_gpus : 0;
		c->k.gpu_quota = rk_tenant_gpu_quota(r->in, j->tenant);
		c->k.solo = rk_baseline_is_placed(j) || r->cur[ji] >= 0 ? 1 + ji : 0;
		sia_gp_key_init(&c->k.gp, r->seen, j);
		c->submit_ms = j->submit_ms;
		c->id = j->id;
		c->job = ji;
	}
	qsort(keys, (size_t)n, sizeof(*keys), cmp_class);
	for (int i = 0; i < n;) {
		int e = i + 1;
		while (e < n && !memcmp(&keys[e].k, &keys[i].k, sizeof(keys[i].k)))
			e++;
		int rep = keys[i].job;
		r->csize[rep] = e - i;
		r->first_member[rep] = i;
		for (int m = i; m < e; m++) {
			r->members[m] = keys[m].job;
			r->rep[keys[m].job] = rep;
		}
		i = e;
	}
	free(keys);
	return RK_OK;
}

/*
 * Greedy fallback should the solver return no solution: running jobs keep
 * their current configuration while it helps, then the rest take their best
 * configuration that still fits, best benefit first.
 */
static void greedy_choice(struct sia_round *r)
{
	int left[SIA_MAX_TYPES];
	for (int k = 0; k < r->n_types; k++)
		left[k] = r->types[k].total_gpus;
	int n = r->in->n_jobs;
	for (int pass = 0; pass < 2; pass++)
		for (int ji = 0; ji < n; ji++) {
			if (r->choice[ji] >= 0 || (pass == 0) != (r->cur[ji] >= 0))
				continue;
			int best = -1, rp = r->rep[ji];
			for (int k = r->first_var[rp]; k < r->first_var[rp] + r->n_job_var[rp]; k++) {
				const struct sia_cfg *cf = &r->cfg[r->var[k].cfg];
				if (cf->gpus > left[cf->type] || sia_var_benefit(r, k) <= 0)
					continue;
				if (pass == 0 && r->var[k].cfg != r->cur[ji])
					continue;
				if (best < 0 || sia_var_benefit(r, k) > sia_var_benefit(r, best))
					best = k;
			}
			if (best >= 0) {
				r->choice[ji] = best;
				left[r->cfg[r->var[best].cfg].type] -= r->cfg[r->var[best].cfg].gpus;
			}
		}
}

/*
 * When every job's best configuration fits at once (the GPU rows do not
 * bind), taking it is the ILP's optimum, and the only one: pruning leaves
 * each job one best configuration (ties go to fewer GPUs). Most rounds of a
 * lightly loaded cluster are such; they need no solver. Returns 1 and fills
 * r->choice when it applies, else 0 with r->choice untouched.
 */
static int unconstrained_choice(struct sia_round *r)
{
	int64_t used[SIA_MAX_TYPES] = {0};
	int n = r->in->n_jobs;
	for (int ji = 0; ji < n; ji++) {
		if (r->rep[ji] != ji)
			continue;
		int best = -1;
		for (int k = r->first_var[ji]; k < r->first_var[ji] + r->n_job_var[ji]; k++)
			if (sia_var_benefit(r, k) > 0 &&
			    (best < 0 || sia_var_benefit(r, k) > sia_var_benefit(r, best)))
				best = k;
		if (best < 0)
			continue;
		const struct sia_cfg *cf = &r->cfg[r->var[best].cfg];
		used[cf->type] += (int64_t)cf->gpus * r->csize[ji];
		if (used[cf->type] > r->types[cf->type].total_gpus)
			return 0;
	}
	for (int ji = 0; ji < n; ji++) {
		int rp = r->rep[ji], best = -1;
		for (int k = r->first_var[rp]; k < r->first_var[rp] + r->n_job_var[rp]; k++)
			if (sia_var_benefit(r, k) > 0 &&
			    (best < 0 || sia_var_benefit(r, k) > sia_var_benefit(r, best)))
				best = k;
		r->choice[ji] = best;
	}
	r->unconstrained = 1;
	return 1;
}

/*
 * When the next round is needed even if no job arrives, finishes or ends a
 * restart (rk_decisions.wake_ms; Sia is RK_POLICY_EVENT_DRIVEN). After an
 * unconstrained round every job holds its best configuration, and then only
 * time changes the ILP: the restart factor r(age) = (age - R·P)/(age + P) of
 * every configuration but the one a job holds grows towards 1, so an
 * alternative with unscaled goodput g_alt > g_held wins once r reaches
 * θ = g_held / g_alt, at age = P·(R + θ)/(1 − θ). Until the earliest such age
 * every round would repeat this one's answer (the rows of pending jobs are
 * not scaled; a chosen job that did not fit stays pending with the same row
 * and meets the same nodes). R is the restart count now (a change this round
 * adds one, which only delays the crossing: the wake-up comes early, never
 * late). After a constrained round: the next round of the grid, as before,
 * unless sia_quiet.c proves more (sia_schedule).
 */
static int64_t next_wake(const struct sia_round *r)
{
	int64_t now = r->in->now_ms;
	if (!r->unconstrained)
		return now + 1;
	double P = r->o->restart_s, wake = INFINITY;
	for (int ji = 0; ji < r->in->n_jobs && P > 0; ji++) {
		int k = r->choice[ji], rp = r->rep[ji];
		if (k < 0)
			continue;
		double held = r->var[k].g;
		double alt = r->var[k].cfg == r->g1_cfg[rp] ? r->g2[rp] : r->g1[rp];
		if (!(alt > held))
			continue;
		const struct rk_job *j = r->in->jobs[ji];
		double th = held / alt;
		double age_s = P * (j->restarts + th) / (1 - th);
		double t = (double)j->submit_ms + ceil(age_s * 1000.0);
		if (t < wake)
			wake = t;
	}
	if (!(wake < (double)INT64_MAX / 2))
		return 0;
	return wake > (double)now ? (int64_t)wake : now + 1;
}

static int solve_ilp(struct sia_round *r, struct rk_error *err)
{
	if (unconstrained_choice(r))
		return RK_OK;
	int one = sia_round_solve_one_type(r);
	r->dp_solved = one == 0;
	if (one == RK_ENOMEM)
		return rk_error_set(err, RK_ENOMEM, "sia: out of memory for the solver");
	if (one == 0)
		return RK_OK;
	struct rk_lp *lp = NULL;
	int *idx = NULL;
	double *coef = NULL;
	int rc = rk_lp_create(&lp, r->n_var, r->o->p < 0 ? RK_LP_MINIMISE : RK_LP_MAXIMISE, err);
	if (rc)
		return rc;
	idx = malloc((size_t)r->n_var * sizeof(*idx));
	coef = malloc((size_t)r->n_var * sizeof(*coef));
	if (!idx || !coef) {
		rc = rk_error_set(err, RK_ENOMEM, "sia: out of memory for %d ILP variables", r->n_var);
		goto out;
	}
	for (int k = 0; k < r->n_var && !rc; k++) {
		rc = rk_lp_set_obj(lp, k, r->var[k].cost, err);
		if (!rc && r->csize[r->var[k].job] > 1)
			rc = rk_lp_set_upper(lp, k, r->csize[r->var[k].job], err);
	}
	/* One configuration per job: at most |class| configurations per class. */
	for (int ji = 0; ji < r->in->n_jobs && !rc; ji++) {
		if (r->n_job_var[ji] < 1 || (r->n_job_var[ji] < 2 && r->csize[ji] < 2))
			continue; /* a single binary already holds the row */
		for (int k = 0; k < r->n_job_var[ji]; k++) {
			idx[k] = r->first_var[ji] + k;
			coef[k] = 1;
		}
		rc = rk_lp_add_row(lp, r->n_job_var[ji], idx, coef, RK_LP_NO_BOUND, r->csize[ji], err);
	}
	/* GPUs per type. */
	for (int t = 0; t < r->n_types && !rc; t++) {
		int n = 0;
		for (int k = 0; k < r->n_var; k++)
			if (r->cfg[r->var[k].cfg].type == t) {
				idx[n] = k;
				coef[n++] = r->cfg[r->var[k].cfg].gpus;
			}
		if (n > 0)
			rc = rk_lp_add_row(lp, n, idx, coef, RK_LP_NO_BOUND, r->types[t].total_gpus, err);
	}
	if (rc)
		goto out;
	/*
	 * Warm start: the previous round's solution, i.e. every placed job in
	 * the configuration it holds, the rest filled greedily (greedy_choice),
	 * is the first incumbent, so bounding prunes from the root.
	 */
	greedy_choice(r);
	for (int k = 0; k < r->n_var; k++)
		idx[k] = 0;
	for (int ji = 0; ji < r->in->n_jobs; ji++)
		if (r->choice[ji] >= 0) {
			idx[r->choice[ji]]++;
			r->choice[ji] = -1;
		}
	rc = rk_lp_set_start(lp, idx, err);
	if (rc)
		goto out;
	struct rk_lp_opts lo = {.time_limit_ms = r->o->time_limit_ms, .mip_gap = r->o->gap,
				.max_nodes = r->o->max_nodes};
	struct rk_lp_result res;
	rc = rk_lp_solve(lp, &lo, &res, err);
	if (rc)
		goto out;
	if (res.status == RK_LP_OPTIMAL || res.status == RK_LP_FEASIBLE) {
		for (int k = 0; k < r->n_var; k++)
			idx[k] = rk_lp_value(lp, k);
		sia_round_hand_out(r, idx);
	} else {
		greedy_choice(r);
	}
out:
	free(idx);
	free(coef);
	rk_lp_destroy(lp);
	return rc;
}

/* Placement order: largest configurations first (whole nodes are hardest to
 * find), then FIFO. */
struct place_key {
	int gpus;
	int64_t submit_ms, id;
	int job;
};

static int cmp_place(const void *pa, const void *pb)
{
	const struct place_key *a = pa, *b = pb;
	if (a->gpus != b->gpus)
		return a->gpus > b->gpus ? -1 : 1;
	if (a->submit_ms != b->submit_ms)
		return a->submit_ms < b->submit_ms ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* Goodput mode: the batch the optimiser chose differs from what the job runs. */
static int batch_moves(const struct rk_job *j, const struct sia_var *v)
{
	return sia_gp_on(j) &&
	       (v->local_bsz != j->goodput->local_bsz || v->accum_steps != j->goodput->accum_steps);
}

/* Run j with v's plan on `a`, and in goodput mode at v's batch (policy.h). */
static int push_decision(struct rk_decisions *out, const struct rk_job *j,
			 const struct rk_alloc *a, const struct sia_var *v)
{
	int rc = rk_decisions_push(out, j->id, a, &v->plan);
	if (!rc && sia_gp_on(j)) {
		out->v[out->n - 1].local_bsz = v->local_bsz;
		out->v[out->n - 1].accum_steps = v->accum_steps;
	}
	return rc;
}

/*
 * Map the chosen configurations onto nodes and append the decisions: kept
 * jobs first on their current nodes, then the others largest first. A chosen
 * job that cannot be placed (fragmentation) waits.
 */
static int map_and_decide(struct sia_round *r, struct rk_decisions *out, struct rk_error *err)
{
	int n = r->in->n_jobs, rc;
	struct rk_capacity cap;
	rc = rk_capacity_init(&cap, r->in->cluster);
	if (rc)
		return rk_error_set(err, rc, "sia: out of memory");
	struct place_key *keys = malloc(((size_t)n + 1) * sizeof(*keys));
	struct rk_alloc a;
	rk_alloc_init(&a);
	if (!keys) {
		rc = rk_error_set(err, RK_ENOMEM, "sia: out of memory");
		goto out;
	}
	int nk = 0;
	for (int ji = 0; ji < n; ji++) {
		const struct rk_job *j = r->in->jobs[ji];
		int k = r->choice[ji];
		if (k >= 0 && r->var[k].cfg == r->cur[ji] && rk_capacity_take(&cap, &j->alloc, NULL) == 0) {
			if (!rk_plan_equal(&j->plan, &r->var[k].plan) || batch_moves(j, &r->var[k]))
				rc = push_decision(out, j, &j->alloc, &r->var[k]);
		} else if (k >= 0) {
			keys[nk++] = (struct place_key){.gpus = r->cfg[r->var[k].cfg].gpus,
							.submit_ms = j->submit_ms, .id = j->id, .job = ji};
		} else if (rk_baseline_is_placed(j)) {
			rc = rk_decisions_push(out, j->id, NULL, &j->plan); /* not chosen: preempt */
		}
		if (rc)
			goto fail_decide;
	}
	qsort(keys, (size_t)nk, sizeof(*keys), cmp_place);
	for (int i = 0; i < nk; i++) {
		int ji = keys[i].job;
		const struct rk_job *j = r->in->jobs[ji];
		const struct sia_var *v = &r->var[r->choice[ji]];
		const struct sia_cfg *cf = &r->cfg[v->cfg];
		const struct sia_type *t = &r->types[cf->type];
		int per = cf->gpus / cf->nodes;
		struct rk_place_req req = {
			.gpus = cf->gpus,
			.cpus_per_gpu = sia_job_cpus_per_gpu(j, t),
			.mem_mb_per_gpu = sia_job_mem_per_gpu(j, t),
			.gpu_type = t->name,
			/* whole nodes for multi-node configs; tp groups inside a node otherwise */
			.gpus_multiple = cf->nodes > 1 ? per : v->plan.tp,
		};
		if (cf->ragged)
			req.gpus_multiple = v->plan.tp;
		int ok = rk_place_gang(&cap, &req, &a) == 0 && a.n == cf->nodes;
		for (int s = 0; ok && !cf->ragged && s < a.n; s++)
			ok = a.shares[s].gpus == per;
		if (ok)
			ok = rk_capacity_take(&cap, &a, NULL) == 0;
		if (ok)
			rc = push_decision(out, j, &a, v);
		else if (rk_baseline_is_placed(j))
			rc = rk_decisions_push(out, j->id, NULL, &j->plan);
		if (rc)
			goto fail_decide;
	}
	goto out;
fail_decide:
	rc = rk_error_set(err, rc, "sia: out of memory recording decisions");
out:
	rk_alloc_fini(&a);
	rk_capacity_fini(&cap);
	free(keys);
	return rc;
}

static void round_fini(struct sia_round *r)
{
	free(r->rep);
	free(r->csize);
	free(r->members);
	free(r->first_member);
	free(r->asked);
	free(r->node_type);
	free(r->cfg);
	free(r->var);
	free(r->first_var);
	free(r->n_job_var);
	free(r->cur);
	free(r->choice);
	free(r->g1);
	free(r->g2);
	free(r->g1_cfg);
	free(r->row);
}

static int sia_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			struct rk_error *err)
{
	struct sia_state *st = state;
	struct sia_round r = {.o = &st->o, .cache = st->cache, .seen = st->seen, .in = in};
	int n = in->n_jobs, rc = RK_OK, n_before = out->n;
	if (in->incremental && in->n_changed > 0) {
		if (st->last_event_ms >= 0) {
			double gap = (double)(in->now_ms - st->last_event_ms);
			st->event_gap_ms = st->event_gap_ms > 0 ? 0.875 * st->event_gap_ms + 0.125 * gap
								: gap;
		}
		st->last_event_ms = in->now_ms;
	}
	if (n == 0)
		return RK_OK;
	if (!in->env)
		return rk_error_set(err, RK_EINVAL,
				    "sia: needs the performance-model environment (input env is NULL)");
	for (int ji = 0; ji < n && !r.goodput; ji++)
		r.goodput = sia_gp_on(in->jobs[ji]);
	if (r.goodput && sia_seen_update(st->seen, in))
		return rk_error_set(err, RK_ENOMEM, "sia: out of memory");
	r.node_type = malloc(((size_t)in->cluster->n_nodes + 1) * sizeof(*r.node_type));
	r.first_var = calloc((size_t)n, sizeof(int));
	r.n_job_var = calloc((size_t)n, sizeof(int));
	r.cur = malloc((size_t)n * sizeof(int));
	r.choice = malloc((size_t)n * sizeof(int));
	r.g1 = malloc((size_t)n * sizeof(double));
	r.g2 = malloc((size_t)n * sizeof(double));
	r.g1_cfg = malloc((size_t)n * sizeof(int));
	if (!r.node_type || !r.first_var || !r.n_job_var || !r.cur || !r.choice || !r.g1 || !r.g2 ||
	    !r.g1_cfg) {
		rc = rk_error_set(err, RK_ENOMEM, "sia: out of memory for %d jobs", n);
		goto out;
	}
	rc = sia_collect_types(in->cluster, r.types, &r.n_types, r.node_type, err);
	if (rc)
		goto out;
	int max_asked = 0;
	for (int ji = 0; ji < n; ji++)
		if (in->jobs[ji]->req_gpus > max_asked)
			max_asked = in->jobs[ji]->req_gpus;
	r.asked = calloc((size_t)max_asked + 1, 1);
	if (!r.asked) {
		rc = rk_error_set(err, RK_ENOMEM, "sia: out of memory");
		goto out;
	}
	for (int ji = 0; ji < n; ji++)
		if (in->jobs[ji]->req_gpus >= 1)
			r.asked[in->jobs[ji]->req_gpus] = 1;
	if (sia_build_configs(r.types, r.n_types, r.asked, max_asked, &r.cfg, &r.n_cfg)) {
		rc = rk_error_set(err, RK_ENOMEM, "sia: out of memory");
		goto out;
	}
	/* Rows of requests that left go once the cache holds far more than a round uses. */
	if (sia_cache_begin(r.cache, r.types, r.n_types, r.cfg, r.n_cfg, in->env,
			    1024 + 4 * (size_t)n)) {
		rc = rk_error_set(err, RK_ENOMEM, "sia: out of memory");
		goto out;
	}
	for (int ji = 0; ji < n; ji++) {
		r.choice[ji] = -1;
		r.g1[ji] = r.g2[ji] = -INFINITY;
		r.g1_cfg[ji] = -1;
		r.cur[ji] = sia_current_config(in->jobs[ji], r.node_type, r.cfg, r.n_cfg);
	}
	if (build_classes(&r)) {
		rc = rk_error_set(err, RK_ENOMEM, "sia: out of memory for %d jobs", n);
		goto out;
	}
	for (int ji = 0; ji < n; ji++) {
		if (r.rep[ji] != ji)
			continue; /* shares its representative's variables */
		if (sia_round_job_vars(&r, ji, -1.0)) {
			rc = rk_error_set(err, RK_ENOMEM, "sia: out of memory for ILP variables");
			goto out;
		}
	}
	if (r.n_var > 0) {
		rc = solve_ilp(&r, err);
		if (rc)
			goto out;
	}
	rc = map_and_decide(&r, out, err);
	if (!rc) {
		/* Goodput mode: the statistics move with progress, so every round of
		 * the grid is needed (as Sia's 60 s rounds re-tune batch sizes). */
		int64_t w = r.goodput ? in->now_ms + 1 : next_wake(&r);
		/* A constrained round that decided nothing: see sia_quiet.c. */
		int64_t until = 0;
		if (st->o.quiet && !r.goodput && in->skips_quiet && r.dp_solved &&
		    out->n == n_before) {
			if (st->quiet_wait > 0) {
				st->quiet_wait--;
			} else if (sia_quiet_wake(&r, st->event_gap_ms, &w, &until)) {
				rc = rk_error_set(err, RK_ENOMEM, "sia: out of memory");
			} else if (until == 0) {
				/* Where the answer keeps changing (events every few rounds),
				 * failed tries would cost a DP each: back off, up to 64. */
				st->quiet_backoff = st->quiet_backoff ? 2 * st->quiet_backoff : 1;
				if (st->quiet_backoff > SIA_QUIET_MAX_BACKOFF)
					st->quiet_backoff = SIA_QUIET_MAX_BACKOFF;
				st->quiet_wait = st->quiet_backoff;
			} else {
				st->quiet_backoff = 0;
			}
		}
		out->quiet_until_ms = until;
		if (!rc && w && (out->wake_ms == 0 || w < out->wake_ms))
			out->wake_ms = w;
	}
out:
	round_fini(&r);
	return rc;
}

/* The policy state: options, the row cache (sia_cache.c), the quiet rounds' back-off. */
static int sia_create(void **state, const char *options, struct rk_error *err)
{
	*state = NULL;
	struct sia_opts o;
	int rc = sia_parse_opts(&o, options, err);
	if (rc)
		return rc;
	struct sia_state *s = calloc(1, sizeof(*s));
	if (!s || sia_cache_create(&s->cache) || sia_seen_create(&s->seen)) {
		if (s)
			sia_cache_destroy(s->cache);
		free(s);
		return rk_error_set(err, RK_ENOMEM, "sia: out of memory");
	}
	s->o = o;
	s->quiet_wait = s->quiet_backoff = 0;
	s->event_gap_ms = 0;
	s->last_event_ms = -1;
	*state = s;
	return RK_OK;
}

static void sia_destroy(void *state)
{
	struct sia_state *s = state;
	if (s) {
		sia_cache_destroy(s->cache);
		sia_seen_destroy(s->seen);
	}
	free(s);
}

const struct rk_policy_ops rk_policy_sia = {
	.name = "sia",
	.summary = "Sia: per-round ILP (GLPK) over job x (GPU type, nodes, GPUs) configurations, p=-0.5",
	.create = sia_create,
	.destroy = sia_destroy,
	.schedule = sia_schedule,
	.flags = RK_POLICY_EVENT_DRIVEN, /* with wake-ups (next_wake; every round in goodput mode) */
	.needs = RK_POLICY_NEEDS_GOODPUT,
	.without = "sia at the trace's batch (goodput = throughput, statistical efficiency 1)",
};
