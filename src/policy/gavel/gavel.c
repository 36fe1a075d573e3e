/*
 * Gavel's heterogeneity-aware policies (Narayanan et al., "Heterogeneity-Aware
 * Cluster Scheduling Policies for Deep Learning Workloads", OSDI 2020), the
 * baseline Sia and Shockwave compare against:
 *
 *   gavel      max-min fairness over normalised effective throughput (LAS, §4.1)
 *   gavel-ftf  finish-time fairness (§4.1)
 *   gavel-tput      max_sum_throughput_perf: the most total throughput (§4.1)
 *   gavel-makespan  min_total_duration: the smallest makespan (§4.1)
 *
 * Each recomputes an allocation X (jobs x GPU types, the fraction of time a
 * job runs on each type; gavel_lp.c) whenever the set of active jobs
 * changes, and realises it with Gavel's round mechanism (§5; gavel_round.c):
 * every round_s seconds the jobs to run are chosen again by priority X /
 * received fraction, each on one type at its requested GPUs and plan (Gavel
 * never resizes a job); a job chosen for the type it holds keeps its GPUs,
 * one chosen elsewhere moves, one not chosen is preempted. Between rounds
 * nothing changes: an arrival waits for the next round, as in Gavel.
 *
 * Throughputs per type: the job's speed at its request (the trace's
 * measured speeds where it has them, else the fitted performance model),
 * scaled to each type by its training rate (rk_gpu_train_tflops) against
 * the type those speeds are for (v100 for measured speeds, the model's
 * reference otherwise); 0 where the job cannot run: more GPUs than the type
 * has, or its plan's memory (rk_memory_estimate) above the type's GPU memory
 * where another type holds it (over memory everywhere, the estimate is not
 * trusted: drivers run the requested plan).
 * Space sharing (Gavel's packed pairs) is not modelled: every GPU runs one
 * job at a time.
 *
 * Options (key=value,...): round_s=S, the round length in seconds (> 0;
 * default 360 as in Sia's scripts; Shockwave runs Gavel with 120).
 */
#include "policy/gavel/gavel_internal.h"

#include "policy/common/baseline.h"
#include "rubick/gpu.h"
#include "rubick/memory.h"
#include "rubick/placement.h"
#include "rubick/policy.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the policy keeps of one job between rounds. */
struct hist {
	int64_t id;
	int rounds;                   /* rounds the job was active at, before this one */
	int on[GAVEL_MAX_TYPES];      /* of those, rounds it ran on each type */
	double x[GAVEL_MAX_TYPES];    /* its row of the current allocation */
	double tput[GAVEL_MAX_TYPES]; /* steps/s per type (0 = cannot run) */
	int have_tput;
};

struct gavel_state {
	enum gavel_objective obj;
	int64_t round_ms;
	int64_t next_round_ms; /* first instant of the next round */
	int started;
	struct hist *h; /* sorted by id */
	int n_h;
	char types[GAVEL_MAX_TYPES][RK_GPU_TYPE_MAX]; /* the types X was computed for */
	int cap[GAVEL_MAX_TYPES];
	int n_types;
	long long rounds, lps; /* counters, for the benchmark's cost per round */
};

static int parse_opts(struct gavel_state *s, const char *name, const char *options,
                      struct rk_error *err)
{
	double round_s = GAVEL_ROUND_S_DEFAULT;
	const char *kv = options ? options : "";
	while (*kv) {
		size_t len = strcspn(kv, ",");
		char item[128];
		if (len >= sizeof(item))
			return rk_error_set(err, RK_EINVAL, "%s: option '%.*s' is too long", name,
			                    (int)len, kv);
		memcpy(item, kv, len);
		item[len] = '\0';
		kv += len + (kv[len] == ',');
		char *eq = strchr(item, '=');
		if (!eq)
			return rk_error_set(err, RK_EINVAL, "%s: option '%s' is not key=value",
			                    name, item);
		*eq = '\0';
		if (strcmp(item, "round_s"))
			return rk_error_set(err, RK_EINVAL,
			                    "%s: unknown option '%s' (known: round_s)", name, item);
		char *end;
		errno = 0;
		double x = strtod(eq + 1, &end);
		if (errno || end == eq + 1 || *end || !isfinite(x) || x <= 0 || x > 1e7)
			return rk_error_set(
			    err, RK_ERANGE,
			    "%s: round_s=%s: must be a number of seconds in (0, 1e7]", name,
			    eq + 1);
		round_s = x;
	}
	s->round_ms = (int64_t)llround(round_s * 1000.0);
	if (s->round_ms < 1)
		s->round_ms = 1;
	return RK_OK;
}

static int create(void **state, enum gavel_objective obj, const char *name, const char *options,
                  struct rk_error *err)
{
	*state = NULL;
	struct gavel_state *s = calloc(1, sizeof(*s));
	if (!s)
		return rk_error_set(err, RK_ENOMEM, "%s: out of memory", name);
	s->obj = obj;
	int rc = parse_opts(s, name, options, err);
	if (rc) {
		free(s);
		return rc;
	}
	*state = s;
	return RK_OK;
}

static int las_create(void **state, const char *options, struct rk_error *err)
{
	return create(state, GAVEL_LAS, "gavel", options, err);
}

static int ftf_create(void **state, const char *options, struct rk_error *err)
{
	return create(state, GAVEL_FTF, "gavel-ftf", options, err);
}

static int tput_create(void **state, const char *options, struct rk_error *err)
{
	return create(state, GAVEL_TPUT, "gavel-tput", options, err);
}

static int makespan_create(void **state, const char *options, struct rk_error *err)
{
	return create(state, GAVEL_MAKESPAN, "gavel-makespan", options, err);
}

static const char *policy_name(enum gavel_objective obj)
{
	static const char *const names[] = {"gavel", "gavel-ftf", "gavel-tput", "gavel-makespan"};
	return obj >= GAVEL_LAS && obj <= GAVEL_MAKESPAN ? names[obj] : "gavel";
}

static void gavel_destroy(void *state)
{
	struct gavel_state *s = state;
	if (!s)
		return;
	free(s->h);
	free(s);
}

/* One round's view of the cluster's GPU types. */
struct types {
	int n;
	const char *name[GAVEL_MAX_TYPES];
	int cap[GAVEL_MAX_TYPES], node_gpus[GAVEL_MAX_TYPES];
	int64_t gpu_mem_mb[GAVEL_MAX_TYPES]; /* smallest among the type's nodes */
};

static int collect_types(const struct rk_cluster *c, struct types *t, const char *name,
                         struct rk_error *err)
{
	t->n = 0;
	for (int i = 0; i < c->n_nodes; i++) {
		const struct rk_node *nd = &c->nodes[i];
		if (!nd->up || nd->gpus < 1)
			continue;
		int k = 0;
		while (k < t->n && strcmp(t->name[k], nd->gpu_type))
			k++;
		if (k == t->n) {
			if (t->n == GAVEL_MAX_TYPES)
				return rk_error_set(err, RK_ERANGE, "%s: more than %d GPU types",
				                    name, GAVEL_MAX_TYPES);
			t->name[k] = nd->gpu_type;
			t->cap[k] = 0;
			t->node_gpus[k] = nd->gpus;
			t->gpu_mem_mb[k] = nd->gpu_mem_mb;
			t->n++;
		}
		t->cap[k] += nd->gpus;
		if (nd->gpus > t->node_gpus[k])
			t->node_gpus[k] = nd->gpus;
		if (nd->gpu_mem_mb < t->gpu_mem_mb[k])
			t->gpu_mem_mb[k] = nd->gpu_mem_mb;
	}
	return RK_OK;
}

/* Training rate of `type` over that of `ref` (1 when either is unknown). */
static double speed_ratio(const char *type, const char *ref)
{
	const struct rk_gpu_spec *a = rk_gpu_find(type), *b = rk_gpu_find(ref);
	if (!a || !b)
		return 1.0;
	double x = rk_gpu_train_tflops(a), y = rk_gpu_train_tflops(b);
	return x > 0 && y > 0 ? x / y : 1.0;
}

/* Steps/s of `j` at its request on each type (header comment); 0 = cannot run. */
static void job_tput(const struct rk_sched_input *in, const struct types *ty,
                     const struct rk_job *j, double *tput)
{
	int native = rk_baseline_is_native(j);
	int lo, hi;
	rk_job_gpu_range(j, &lo, &hi);
	struct rk_mem_usage mu;
	int have_mem = !native && rk_memory_estimate(j->model, &j->req_plan, &mu, NULL) == 0;
	/* Over memory on every type: the estimate is not trusted (the driver
	 * runs the requested plan anyway), so no type is closed for it. */
	int fits_somewhere = 0;
	for (int t = 0; have_mem && t < ty->n; t++)
		if (ty->gpu_mem_mb[t] <= 0 || mu.gpu_mb <= (double)ty->gpu_mem_mb[t])
			fits_somewhere = 1;
	have_mem = have_mem && fits_somewhere;
	for (int t = 0; t < ty->n; t++) {
		tput[t] = 0;
		if (j->req_gpus < 1 || j->req_gpus < lo || j->req_gpus > hi ||
		    j->req_gpus > ty->cap[t] || j->global_batch < 1)
			continue;
		if (have_mem && ty->gpu_mem_mb[t] > 0 && mu.gpu_mb > (double)ty->gpu_mem_mb[t])
			continue; /* out of memory on this type */
		double sps = 0;
		const char *ref = RK_GPU_REFERENCE;
		if (native) {
			sps = rk_baseline_native_sps(j, j->req_gpus);
			ref = "v100"; /* Gavel's and Shockwave's throughput files' reference */
		} else {
			struct rk_placement pl;
			int per =
			    j->req_cpus > 0 ? (j->req_cpus + j->req_gpus - 1) / j->req_gpus : 1;
			if (rk_placement_consolidated(j->req_gpus, ty->node_gpus[t], &pl, NULL) ||
			    rk_baseline_tput_sps(j, &j->req_plan, &pl, per, in->env, &sps))
				sps = 0;
		}
		/* No prediction (an unfitted model): equal speed everywhere, as Gavel
		 * treats a job without measurements. */
		double steps = sps > 0 ? sps / j->global_batch : 1.0;
		tput[t] = steps * speed_ratio(ty->name[t], ref);
	}
}

static int by_id(const void *a, const void *b)
{
	const struct hist *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

static int by_job_id(const void *a, const void *b)
{
	const struct rk_job *x = *(struct rk_job *const *)a, *y = *(struct rk_job *const *)b;
	return (x->id > y->id) - (x->id < y->id);
}

/* The type all of a placed job's GPUs are on, or -1 (none, or several). */
static int held_type(const struct rk_job *j, const struct rk_cluster *c, const struct types *ty)
{
	if (!rk_baseline_is_placed(j))
		return -1;
	int type = -1;
	for (int s = 0; s < j->alloc.n; s++) {
		const struct rk_share *sh = &j->alloc.shares[s];
		if (sh->gpus < 1)
			continue;
		if (sh->node < 0 || sh->node >= c->n_nodes)
			return -1;
		int k = 0;
		while (k < ty->n && strcmp(ty->name[k], c->nodes[sh->node].gpu_type))
			k++;
		if (k == ty->n || (type >= 0 && k != type))
			return -1;
		type = k;
	}
	return type;
}

/* Working arrays of one round. */
struct round {
	int n;
	struct rk_job **job; /* sorted by id, parallel to the new history */
	struct hist *h;
	double *tput, *x, *elapsed, *remaining, *total;
	int *scale, *rounds, *on, *pick, *held;
};

static void round_free(struct round *r)
{
	free(r->job);
	free(r->h);
	free(r->tput);
	free(r->x);
	free(r->elapsed);
	free(r->remaining);
	free(r->total);
	free(r->scale);
	free(r->rounds);
	free(r->on);
	free(r->pick);
	free(r->held);
}

static int round_alloc(struct round *r, int n, int nt)
{
	size_t m = (size_t)(n > 0 ? n : 1), c = m * (size_t)nt;
	r->n = n;
	r->job = malloc(m * sizeof(*r->job));
	r->h = calloc(m, sizeof(*r->h));
	r->tput = malloc(c * sizeof(*r->tput));
	r->x = calloc(c, sizeof(*r->x));
	r->elapsed = malloc(m * sizeof(double));
	r->remaining = malloc(m * sizeof(double));
	r->total = malloc(m * sizeof(double));
	r->scale = malloc(m * sizeof(int));
	r->rounds = malloc(m * sizeof(int));
	r->on = malloc(c * sizeof(int));
	r->pick = malloc(m * sizeof(int));
	r->held = malloc(m * sizeof(int));
	return r->job && r->h && r->tput && r->x && r->elapsed && r->remaining && r->total &&
	               r->scale && r->rounds && r->on && r->pick && r->held
	           ? RK_OK
	           : RK_ENOMEM;
}

/* Stop, keep or move each job as the round's picks say (header comment). */
static int apply_picks(const struct rk_sched_input *in, const struct types *ty,
                       const struct round *r, struct rk_decisions *out, const char *name,
                       struct rk_error *err)
{
	struct rk_capacity cap;
	int rc = rk_capacity_init(&cap, in->cluster);
	if (rc)
		return rk_error_set(err, rc, "%s: out of memory", name);
	int *keep = calloc((size_t)(r->n > 0 ? r->n : 1), sizeof(*keep));
	int *order = malloc((size_t)(r->n > 0 ? r->n : 1) * sizeof(*order));
	if (!keep || !order) {
		rc = rk_error_set(err, RK_ENOMEM, "%s: out of memory", name);
		goto out;
	}
	/* Jobs staying on their type keep their GPUs. */
	for (int j = 0; j < r->n; j++)
		if (r->pick[j] >= 0 && r->pick[j] == r->held[j])
			keep[j] = rk_capacity_take(&cap, &r->job[j]->alloc, NULL) == 0;
	/* The others, largest first (fewer fragments), then by id. */
	int n = 0;
	for (int j = 0; j < r->n; j++)
		if (!keep[j])
			order[n++] = j;
	for (int a = 1; a < n; a++) {
		int v = order[a], b = a;
		while (b > 0 && r->scale[order[b - 1]] < r->scale[v]) {
			order[b] = order[b - 1];
			b--;
		}
		order[b] = v;
	}
	for (int k = 0; k < n && rc == RK_OK; k++) {
		int j = order[k];
		struct rk_job *jb = r->job[j];
		struct rk_alloc a;
		rk_alloc_init(&a);
		int placed = 0;
		if (r->pick[j] >= 0) {
			struct rk_place_req req;
			rk_place_req_from_job(jb, &req);
			req.gpu_type = ty->name[r->pick[j]];
			int pr = rk_place_gang_take(&cap, &req, &a);
			if (pr == 0)
				placed = 1;
			else if (pr != RK_EINFEASIBLE)
				rc = rk_error_set(err, pr, "%s: job %lld: placement failed", name,
				                  (long long)jb->id);
		}
		if (rc == RK_OK && (placed || rk_baseline_is_placed(jb)))
			rc = rk_decisions_push(out, jb->id, &a, &jb->req_plan); /* empty: preempt */
		rk_alloc_fini(&a);
	}
	if (rc == RK_ENOMEM)
		rk_error_set(err, rc, "%s: out of memory", name);
out:
	free(keep);
	free(order);
	rk_capacity_fini(&cap);
	return rc;
}

/* 1 when the types differ from those X was computed for. */
static int types_changed(const struct gavel_state *s, const struct types *ty)
{
	if (s->n_types != ty->n)
		return 1;
	for (int t = 0; t < ty->n; t++)
		if (s->cap[t] != ty->cap[t] || strcmp(s->types[t], ty->name[t]))
			return 1;
	return 0;
}

static int gavel_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
                          struct rk_error *err)
{
	struct gavel_state *s = state;
	const char *name = policy_name(s->obj);
	if (s->started && in->now_ms < s->next_round_ms) {
		out->wake_ms = s->next_round_ms; /* nothing changes between rounds */
		return RK_OK;
	}
	struct types ty;
	int rc = collect_types(in->cluster, &ty, name, err);
	if (rc)
		return rc;
	int nt = ty.n > 0 ? ty.n : 1;
	struct round r = {0};
	if (round_alloc(&r, in->n_jobs, nt)) {
		round_free(&r);
		return rk_error_set(err, RK_ENOMEM, "%s: out of memory", name);
	}
	int new_types = types_changed(s, &ty);
	int n = 0;
	for (int i = 0; i < in->n_jobs; i++) {
		enum rk_job_state st = in->jobs[i]->state;
		if (st == RK_JOB_PENDING || st == RK_JOB_RUNNING || st == RK_JOB_RESTARTING)
			r.job[n++] = in->jobs[i];
	}
	r.n = n;
	qsort(r.job, (size_t)n, sizeof(*r.job), by_job_id);
	/* History: credit the round just ended, carry the rest over. */
	int set_changed = new_types || n != s->n_h;
	for (int j = 0; j < n; j++) {
		struct rk_job *jb = r.job[j];
		struct hist key = {.id = jb->id};
		struct hist *old =
		    s->n_h ? bsearch(&key, s->h, (size_t)s->n_h, sizeof(*s->h), by_id) : NULL;
		struct hist *h = &r.h[j];
		r.held[j] = ty.n > 0 ? held_type(jb, in->cluster, &ty) : -1;
		if (old && !new_types) {
			*h = *old;
			h->rounds++;
			/* Service is time the job ran (Gavel counts the time its
			 * workers report): a round it spent restarting on its GPUs
			 * is not credited, so it keeps its priority and its GPUs
			 * instead of being preempted before it ran at all. */
			if (r.held[j] >= 0 && jb->state == RK_JOB_RUNNING)
				h->on[r.held[j]]++;
		} else {
			*h = (struct hist){.id = jb->id};
			set_changed = 1;
		}
		if (!h->have_tput && ty.n > 0) {
			job_tput(in, &ty, jb, h->tput);
			h->have_tput = 1;
		}
		r.scale[j] = jb->req_gpus;
		r.rounds[j] = h->rounds;
		for (int t = 0; t < nt; t++) {
			r.tput[(size_t)j * nt + t] = ty.n > 0 ? h->tput[t] : 0;
			r.on[(size_t)j * nt + t] = h->on[t];
			r.x[(size_t)j * nt + t] = h->x[t];
		}
		r.elapsed[j] = (double)(in->now_ms - jb->submit_ms) / 1000.0;
		double left = jb->iters_total - jb->iters_done;
		r.remaining[j] = left > 0 ? left : 0;
		r.total[j] = jb->iters_total > 0 ? jb->iters_total : 0;
	}
	struct gavel_problem p = {.n_jobs = n,
	                          .n_types = nt,
	                          .tput = r.tput,
	                          .scale = r.scale,
	                          .cap = ty.n > 0 ? ty.cap : (int[1]){0},
	                          .elapsed_s = r.elapsed,
	                          .remaining = r.remaining,
	                          .total = r.total};
	if (set_changed && ty.n > 0) {
		int lps = 0;
		rc = gavel_allocate(&p, s->obj, r.x, &lps, err);
		s->lps += lps;
		for (int j = 0; j < n && rc == RK_OK; j++)
			for (int t = 0; t < nt; t++)
				r.h[j].x[t] = r.x[(size_t)j * nt + t];
	}
	if (rc == RK_OK)
		rc = gavel_round_pick(&p, r.x, r.rounds, r.on, p.cap, r.pick);
	if (rc == RK_ENOMEM)
		rk_error_set(err, rc, "%s: out of memory", name);
	if (rc == RK_OK)
		rc = apply_picks(in, &ty, &r, out, name, err);
	if (rc == RK_OK) {
		/* Commit: the new history, the types, the next round. */
		free(s->h);
		s->h = r.h;
		r.h = NULL;
		s->n_h = n;
		s->n_types = ty.n;
		for (int t = 0; t < ty.n; t++) {
			snprintf(s->types[t], sizeof(s->types[t]), "%s", ty.name[t]);
			s->cap[t] = ty.cap[t];
		}
		if (!s->started)
			s->next_round_ms = in->now_ms;
		while (s->next_round_ms <= in->now_ms)
			s->next_round_ms += s->round_ms;
		s->started = 1;
		s->rounds++;
		out->wake_ms = s->next_round_ms;
	}
	round_free(&r);
	return rc;
}

const struct rk_policy_ops rk_policy_gavel = {
    .name = "gavel",
    .summary = "Gavel max-min fairness (LAS): LP over jobs x GPU types, rounds of round_s "
               "(360 s); requested GPUs and plan; preempts",
    .create = las_create,
    .destroy = gavel_destroy,
    .schedule = gavel_schedule,
    .flags = RK_POLICY_EVENT_DRIVEN,
};

const struct rk_policy_ops rk_policy_gavel_ftf = {
    .name = "gavel-ftf",
    .summary = "Gavel finish-time fairness: LP over jobs x GPU types, rounds of round_s "
               "(360 s); requested GPUs and plan; preempts",
    .create = ftf_create,
    .destroy = gavel_destroy,
    .schedule = gavel_schedule,
    .flags = RK_POLICY_EVENT_DRIVEN,
};

const struct rk_policy_ops rk_policy_gavel_tput = {
    .name = "gavel-tput",
    .summary = "Gavel max_sum_throughput_perf: LP maximising total throughput over jobs x "
               "GPU types, rounds of round_s (360 s); requested GPUs and plan; preempts",
    .create = tput_create,
    .destroy = gavel_destroy,
    .schedule = gavel_schedule,
    .flags = RK_POLICY_EVENT_DRIVEN,
};

const struct rk_policy_ops rk_policy_gavel_makespan = {
    .name = "gavel-makespan",
    .summary = "Gavel min_total_duration: LP minimising the makespan over jobs x GPU types, "
               "rounds of round_s (360 s); requested GPUs and plan; preempts",
    .create = makespan_create,
    .destroy = gavel_destroy,
    .schedule = gavel_schedule,
    .flags = RK_POLICY_EVENT_DRIVEN,
};
