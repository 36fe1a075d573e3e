/*
 * The Pollux baseline (Qiao et al., "Pollux: Co-adaptive Cluster Scheduling
 * for Goodput-Optimized Deep Learning", OSDI 2021; the osdi21-artifact
 * simulator's PolluxPolicy), registered as `pollux`.
 *
 * Every round (the driver's interval: 60 s in Pollux) each active job gets
 * a GPU type and count that maximise, over the cluster, the power mean with
 * exponent p (default -1) of the jobs' speedups (§4.2, Eq. 5): a job's
 * speedup at g GPUs on n nodes is its goodput there at its goodput-optimal
 * per-GPU batch and accumulation (rk_goodput_optimize on rk_job.goodput,
 * §3) over its goodput on one GPU (pollux_speed.c), scaled as the artifact
 * scales it (nodes / GPUs of the cluster). A job that holds GPUs and would
 * get any other allocation keeps only its restart factor
 * max(age - restarts * P, 0) / (age + P) of that speedup (the artifact's
 * restart penalty, P = restart_s, default 30 s; pollux_restart_factor), so
 * a job is not moved for a small gain and a job just moved is not moved
 * again; a pending job starts unpenalised. Jobs without a goodput model
 * (no goodput oracle) are priced at their trace batch, efficiency 1
 * (RK_POLICY_NEEDS_GOODPUT, `without`).
 *
 * Search: by default water-filling over GPU counts with a bounded local
 * search (pollux_greedy.c); search=ga runs the artifact's genetic algorithm
 * over jobs x nodes matrices (pollux_ga.c) on one-GPU-type clusters. The
 * greedy's counts are packed on the fewest nodes (largest first, best fit;
 * a job whose chosen count keeps its type and GPUs keeps its nodes); a
 * count that no longer fits (fragmentation) falls to the job's next smaller
 * one that does. Decisions carry the user's plan scaled to the count
 * (rk_baseline_plan_scale) and, for jobs with a goodput model, the chosen
 * local_bsz and accum_steps; a job whose allocation stays but whose optimal
 * batch moved gets a decision with the same allocation and the new batch.
 *
 * Quiet rounds: without goodput models speedups do not change between
 * events, and the clock enters only through the restart factors, which
 * grow towards 1. A round that decided nothing, and whose search with every
 * restart factor at its supremum (1, less 1e-9 so that ties keep holders)
 * would decide nothing either, asks for no round until the next event
 * (RK_POLICY_EVENT_DRIVEN; wake_ms 0, quiet_until_ms INT64_MAX); any other
 * round asks for the next grid round. With goodput models (statistics move
 * with progress) every round runs.
 */
#include "policy/pollux/pollux_internal.h"

#include "policy/common/baseline.h"
#include "rubick/idtab.h"
#include "rubick/placement.h"
#include "rubick/policy.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct pollux_state {
	struct pollux_opts o;
	struct rk_idtab cache; /* struct pollux_jspeed by job id */
	int64_t round;
};

static int pollux_create(void **state, const char *options, struct rk_error *err)
{
	*state = NULL;
	struct pollux_opts o;
	int rc = pollux_opts_parse(&o, options, err);
	if (rc)
		return rc;
	struct pollux_state *s = calloc(1, sizeof(*s));
	if (!s)
		return rk_error_set(err, RK_ENOMEM, "pollux: out of memory");
	s->o = o;
	rk_idtab_init(&s->cache, sizeof(struct pollux_jspeed));
	*state = s;
	return RK_OK;
}

static struct pollux_jspeed *slot_at(const struct rk_idtab *t, size_t i)
{
	return (struct pollux_jspeed *)(void *)(t->slots + i * t->size);
}

static void pollux_destroy(void *state)
{
	struct pollux_state *s = state;
	if (!s)
		return;
	if (s->cache.slots)
		for (size_t i = 0; i < (size_t)1 << s->cache.bits; i++) {
			struct pollux_jspeed *r = slot_at(&s->cache, i);
			if (r->used) {
				free(r->c);
				free(r->bsz);
			}
		}
	rk_idtab_fini(&s->cache);
	free(s);
}

static int collect_types(const struct rk_cluster *c, struct pollux_types *t, int *n_nodes,
			 struct rk_error *err)
{
	memset(t, 0, sizeof(*t));
	*n_nodes = 0;
	for (int i = 0; i < c->n_nodes; i++) {
		const struct rk_node *nd = &c->nodes[i];
		if (!nd->up || nd->gpus < 1)
			continue;
		(*n_nodes)++;
		int k = 0;
		while (k < t->n && strcmp(t->name[k], nd->gpu_type))
			k++;
		int cpg = nd->cpus / nd->gpus > 0 ? nd->cpus / nd->gpus : 1;
		if (k == t->n) {
			if (t->n == POLLUX_MAX_TYPES)
				return rk_error_set(err, RK_ERANGE, "pollux: more than %d GPU types",
						    POLLUX_MAX_TYPES);
			t->name[k] = nd->gpu_type;
			t->cpus_per_gpu[k] = cpg;
			t->n++;
		}
		t->cap[k] += nd->gpus;
		if (nd->gpus > t->node_gpus[k])
			t->node_gpus[k] = nd->gpus;
		if (cpg < t->cpus_per_gpu[k])
			t->cpus_per_gpu[k] = cpg;
	}
	return RK_OK;
}

/* One round's working set: the active jobs and their candidates. */
struct round {
	const struct rk_sched_input *in;
	struct pollux_types ty;
	int n;                      /* active jobs */
	struct rk_job **job;        /* n */
	struct pollux_jspeed **sp;  /* n, stable for the round */
	int *held;                  /* n: candidate index held, -1 = none */
	double *rf;                 /* n: restart factor */
	struct pollux_gjob *g;      /* n */
	struct pollux_cand *cand;   /* all candidates, penalised and scaled */
	int *choice, *order;        /* n */
	double scale;
};

static void round_fini(struct round *r)
{
	free(r->job);
	free(r->sp);
	free(r->held);
	free(r->rf);
	free(r->g);
	free(r->cand);
	free(r->choice);
	free(r->order);
}

static int type_of(const struct pollux_types *ty, const struct rk_cluster *c, const struct rk_alloc *a)
{
	if (a->n < 1 || a->shares[0].node < 0 || a->shares[0].node >= c->n_nodes)
		return -1;
	const char *name = c->nodes[a->shares[0].node].gpu_type;
	for (int k = 0; k < ty->n; k++)
		if (!strcmp(ty->name[k], name))
			return k;
	return -1;
}

/* Tables for every active job; the held candidate and restart factor of each. */
static int fill_jobs(struct pollux_state *s, struct round *r, struct rk_error *err)
{
	const struct rk_sched_input *in = r->in;
	uint64_t tkey = pollux_types_key(&r->ty);
	for (int i = 0; i < in->n_jobs; i++) {
		struct rk_job *j = in->jobs[i];
		if (j->state != RK_JOB_PENDING && j->state != RK_JOB_RUNNING &&
		    j->state != RK_JOB_RESTARTING)
			continue;
		r->job[r->n++] = j;
		if (!rk_idtab_find(&s->cache, j->id)) {
			struct pollux_jspeed rec = {.id = j->id};
			if (rk_idtab_put(&s->cache, &rec))
				return rk_error_set(err, RK_ENOMEM, "pollux: out of memory");
		}
	}
	/* No put from here on: the records stay where they are for the round. */
	size_t total = 0;
	for (int i = 0; i < r->n; i++) {
		struct rk_job *j = r->job[i];
		struct pollux_jspeed *sp = rk_idtab_find(&s->cache, j->id);
		uint64_t key = pollux_speed_key(j, tkey);
		if (sp->key != key) {
			int rc = pollux_speed_build(j, &r->ty, in->env, sp, err);
			if (rc)
				return rc;
			sp->key = key;
		}
		sp->seen_round = s->round;
		r->sp[i] = sp;
		total += (size_t)sp->n;
	}
	r->cand = malloc(sizeof(*r->cand) * (total ? total : 1));
	if (!r->cand)
		return rk_error_set(err, RK_ENOMEM, "pollux: out of memory");
	size_t at = 0;
	for (int i = 0; i < r->n; i++) {
		struct rk_job *j = r->job[i];
		const struct pollux_jspeed *sp = r->sp[i];
		r->held[i] = -1;
		r->rf[i] = 1.0;
		if (rk_baseline_is_placed(j)) {
			int k = type_of(&r->ty, in->cluster, &j->alloc), g = rk_alloc_total_gpus(&j->alloc);
			for (int c = 0; c < sp->n; c++)
				if (sp->c[c].type == k && sp->c[c].gpus == g)
					r->held[i] = c;
			double age_s = (double)(in->now_ms - j->submit_ms) / 1000.0;
			r->rf[i] = pollux_restart_factor(age_s, j->restarts, s->o.restart_s);
		}
		r->g[i] = (struct pollux_gjob){r->cand + at, sp->n};
		at += (size_t)sp->n;
	}
	return RK_OK;
}

/* Candidates priced with restart factors rf (or `rf_all` >= 0 for every holder). */
static void price(struct round *r, double rf_all)
{
	for (int i = 0; i < r->n; i++) {
		const struct pollux_jspeed *sp = r->sp[i];
		struct pollux_cand *c = (struct pollux_cand *)r->g[i].c;
		double rf = rf_all >= 0 && rk_baseline_is_placed(r->job[i]) ? rf_all : r->rf[i];
		for (int k = 0; k < sp->n; k++) {
			c[k] = sp->c[k];
			c[k].value *= r->scale * (k == r->held[i] ? 1.0 : rf);
		}
	}
}

static int search(const struct pollux_state *s, struct round *r, struct rk_error *err)
{
	return pollux_greedy_search(r->g, r->n, r->ty.cap, r->ty.n, s->o.p, s->o.ls, r->choice,
				    NULL, err);
}

/* Pack the chosen counts (header comment); allocs[i] OUT, empty = none. */
static int pack(struct round *r, struct rk_alloc *allocs, struct rk_error *err)
{
	struct rk_capacity cap;
	int rc = rk_capacity_init(&cap, r->in->cluster);
	if (rc)
		return rk_error_set(err, rc, "pollux: out of memory");
	int m = 0;
	for (int i = 0; i < r->n; i++) {
		if (r->choice[i] < 0)
			continue;
		if (r->choice[i] == r->held[i] && !rk_capacity_take(&cap, &r->job[i]->alloc, NULL)) {
			rc = rk_alloc_copy(&allocs[i], &r->job[i]->alloc);
			if (rc)
				goto out;
			continue;
		}
		r->order[m++] = i;
	}
	/* Largest first; insertion sort keeps job order among equals. */
	for (int a = 1; a < m; a++) {
		int x = r->order[a], b = a, gx = r->g[x].c[r->choice[x]].gpus;
		while (b > 0 && r->g[r->order[b - 1]].c[r->choice[r->order[b - 1]]].gpus < gx) {
			r->order[b] = r->order[b - 1];
			b--;
		}
		r->order[b] = x;
	}
	for (int a = 0; a < m; a++) {
		int i = r->order[a];
		const struct pollux_cand *want = &r->g[i].c[r->choice[i]];
		for (int k = r->choice[i]; k >= 0; k--) {
			const struct pollux_cand *c = &r->g[i].c[k];
			if (c->type != want->type)
				break;
			struct rk_place_req req = {.gpus = c->gpus,
						   .cpus_per_gpu = RK_SHARE_PROPORTIONAL,
						   .mem_mb_per_gpu = RK_SHARE_PROPORTIONAL,
						   .gpu_type = r->ty.name[c->type],
						   .gpus_multiple = r->job[i]->req_plan.tp,
						   .mode = RK_PLACE_SPREAD};
			if (!rk_place_gang_take(&cap, &req, &allocs[i])) {
				r->choice[i] = k;
				break;
			}
			if (k == 0)
				r->choice[i] = -1;
		}
	}
	rc = RK_OK;
out:
	rk_capacity_fini(&cap);
	return rc;
}

static int decide(struct round *r, struct rk_alloc *allocs, struct rk_decisions *out,
		  struct rk_error *err)
{
	for (int i = 0; i < r->n; i++) {
		struct rk_job *j = r->job[i];
		int placed = rk_baseline_is_placed(j), k = r->choice[i];
		if (k < 0 || allocs[i].n == 0) {
			if (placed && rk_decisions_push(out, j->id, NULL, NULL))
				return rk_error_set(err, RK_ENOMEM, "pollux: out of memory");
			continue;
		}
		const struct pollux_cand *c = &r->g[i].c[k];
		int m = r->sp[i]->bsz[2 * k], acc = r->sp[i]->bsz[2 * k + 1];
		int same = placed && rk_alloc_same_gpus(&allocs[i], &j->alloc);
		if (same && (!j->goodput || (m == j->goodput->local_bsz &&
					     acc == j->goodput->accum_steps)))
			continue;
		struct rk_plan plan = j->plan;
		if (!same && rk_baseline_plan_scale(&j->req_plan, j->global_batch, c->gpus, &plan))
			return rk_error_set(err, RK_EINTERNAL,
					    "pollux: job %lld: its plan does not scale to %d GPUs",
					    (long long)j->id, c->gpus);
		if (rk_decisions_push(out, j->id, same ? &j->alloc : &allocs[i], &plan))
			return rk_error_set(err, RK_ENOMEM, "pollux: out of memory");
		out->v[out->n - 1].local_bsz = j->goodput ? m : 0;
		out->v[out->n - 1].accum_steps = j->goodput ? acc : 0;
	}
	return RK_OK;
}

/* Drop the tables of jobs gone for a while, once they outnumber the active. */
static void sweep(struct pollux_state *s, int n_active)
{
	if (!s->cache.slots || s->cache.n < 2 * n_active + 1024)
		return;
	for (;;) {
		int64_t gone = -1;
		for (size_t i = 0; i < (size_t)1 << s->cache.bits && gone < 0; i++) {
			struct pollux_jspeed *rec = slot_at(&s->cache, i);
			if (rec->used && rec->seen_round < s->round) {
				free(rec->c);
				free(rec->bsz);
				rec->c = NULL;
				rec->bsz = NULL;
				gone = rec->id;
			}
		}
		if (gone < 0)
			return;
		rk_idtab_del(&s->cache, rk_idtab_find(&s->cache, gone));
	}
}

static int pollux_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			   struct rk_error *err)
{
	struct pollux_state *s = state;
	s->round++;
	struct round r = {.in = in};
	int n_nodes, rc = collect_types(in->cluster, &r.ty, &n_nodes, err);
	if (rc)
		return rc;
	size_t nj = (size_t)(in->n_jobs > 0 ? in->n_jobs : 1);
	r.job = malloc(sizeof(*r.job) * nj);
	r.sp = malloc(sizeof(*r.sp) * nj);
	r.held = malloc(sizeof(int) * nj);
	r.rf = malloc(sizeof(double) * nj);
	r.g = malloc(sizeof(*r.g) * nj);
	r.choice = malloc(sizeof(int) * nj);
	r.order = malloc(sizeof(int) * nj);
	struct rk_alloc *allocs = calloc(nj, sizeof(*allocs));
	if (!r.job || !r.sp || !r.held || !r.rf || !r.g || !r.choice || !r.order || !allocs) {
		rc = rk_error_set(err, RK_ENOMEM, "pollux: out of memory");
		goto out;
	}
	int total = 0;
	for (int k = 0; k < r.ty.n; k++)
		total += r.ty.cap[k];
	r.scale = total > 0 ? (double)n_nodes / total : 1.0;
	if ((rc = fill_jobs(s, &r, err)))
		goto out;
	price(&r, -1);
	int n_before = out->n, with_goodput = 0;
	for (int i = 0; i < r.n; i++)
		with_goodput |= r.job[i]->goodput != NULL;
	if (s->o.search == POLLUX_SEARCH_GA)
		rc = pollux_ga_choose(&s->o, in, &r.ty, r.job, r.sp, r.rf, r.n, r.choice, allocs, err);
	else if (!(rc = search(s, &r, err)))
		rc = pack(&r, allocs, err);
	if (rc || (rc = decide(&r, allocs, out, err)))
		goto out;
	/* Quiet rounds (header comment). */
	out->wake_ms = in->now_ms + 1;
	if (out->n == n_before && !with_goodput && in->skips_quiet &&
	    s->o.search == POLLUX_SEARCH_GREEDY) {
		price(&r, 1.0 - 1e-9);
		if ((rc = search(s, &r, err)))
			goto out;
		int same = 1;
		for (int i = 0; i < r.n && same; i++)
			same = r.choice[i] == r.held[i] || (r.held[i] < 0 && r.choice[i] < 0 &&
							    !rk_baseline_is_placed(r.job[i]));
		if (same) {
			out->wake_ms = 0;
			out->quiet_until_ms = INT64_MAX;
		}
	}
	sweep(s, r.n);
out:
	for (size_t i = 0; i < nj && allocs; i++)
		rk_alloc_fini(&allocs[i]);
	free(allocs);
	round_fini(&r);
	return rc;
}

const struct rk_policy_ops rk_policy_pollux = {
	.name = "pollux",
	.summary = "Pollux (OSDI'21): power mean of goodput speedups over GPU counts, restart "
		   "factor, batch size and accumulation per allocation",
	.create = pollux_create,
	.destroy = pollux_destroy,
	.schedule = pollux_schedule,
	.flags = RK_POLICY_EVENT_DRIVEN,
	.needs = RK_POLICY_NEEDS_GOODPUT,
	.without = "pollux at each job's trace batch: speedups from its throughput (the "
		   "performance model or measured speeds) with statistical efficiency 1, no batch "
		   "adaptation",
};
