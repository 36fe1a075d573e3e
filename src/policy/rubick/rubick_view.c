/*
 * Views of a job's sensitivity curve for the Rubick policy (rubick_internal.h)
 * and their cache. A curve depends only on the model (structure and fitted
 * parameters), the global batch and the cluster's node shape, so jobs of the
 * same model share one, and it is rebuilt only when the model is refitted
 * (docs/references.md §7: "precompute once per (model, B) and refresh after each
 * refit").
 */
#include "policy/rubick/rubick_internal.h"

#include "policy/common/baseline.h"
#include "rubick/curve.h"
#include "rubick/memory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Past this many views the cache starts over at the next round (refits leave
 * stale entries); past this many request baselines those alone are dropped. */
#define RUBICK_CACHE_MAX 4096

struct view_key {
	int mode;
	char model[RK_MODEL_NAME_MAX];
	int global_batch;
	struct rk_perf_params perf;
	struct rk_plan req_plan; /* plan-only and res-only */
	int req_gpus;            /* plan-only */
	int req_cpg;             /* plan-only and res-only */
	int node_gpus, max_gpus;
	int min_gpus;            /* full and res-only: the job's min_gpus when above 1, else 0 */
	int64_t gpu_mem_mb, host_mem_mb;
	/* Trace-native speeds (rk_job.native_sps): a hash of the table and its
	 * length, 0 when the view is the model's alone (native_view). */
	uint64_t native_sig;
	int native_max;
	struct rk_plan_space space; /* the job's plan space, zeroed when it allows every plan */
};

/* Mode of the key of a request's baseline throughput (rubick_view_baseline): no view. */
#define KEY_BASELINE (-1)

struct entry {
	uint64_t hash;
	struct view_key key;
	int rc; /* the build's result: views that failed are remembered too */
	struct rubick_view view;
	double base_sps; /* KEY_BASELINE entries: the throughput, 0 = none */
};

/*
 * A round looks up every active job's view (thousands of jobs, a round per
 * event), so a lookup must not scan the entries: an open-addressing table of
 * entry indexes, kept at most half full, finds one in a probe or two.
 */
struct rubick_cache {
	struct entry **v; /* entries never move: views handed out stay valid */
	int n, cap;
	int n_base;       /* of the n, request baselines (KEY_BASELINE) */
	int *slot;        /* n_slot (a power of two) indexes into v, -1 = empty */
	int n_slot;
	unsigned gen; /* bumped whenever views are freed (memo entries of older ones are stale) */
	struct job_memo *memo; /* n_memo (a power of two, or 0) slots by job id */
	int n_memo;
};

/*
 * Everything a job's view and request baseline depend on (the union of their
 * keys' inputs), as rubick_view_job compares it (sig_matches).
 */
struct job_sig {
	int mode;
	char model[RK_MODEL_NAME_MAX];
	struct rk_perf_params perf;
	struct rk_plan req_plan;
	int global_batch, req_gpus, req_cpus, node_gpus, max_gpus;
	int min_gpus; /* the view's floor (the job's range, floor_view) */
	int64_t gpu_mem_mb, host_mem_mb;
	const double *native_sps; /* rk_job.native_sps (the driver keeps a table unchanged) */
	int native_max;
	struct rk_plan_space space;
};

/* A job's last rubick_view_job answer. */
struct job_memo {
	int used;
	unsigned gen; /* the cache's gen when filled */
	int64_t id;
	struct job_sig sig;
	const struct rubick_view *view; /* NULL: none (max_gpus < 1, or the build failed) */
	double base_sps;
	int rank; /* the job's place in the last round's order (rubick_cache_rank), -1 unknown */
};

static int slot_find(const struct rubick_cache *c, uint64_t h, const struct view_key *k);

int rubick_cache_create(struct rubick_cache **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? RK_OK : RK_ENOMEM;
}

static void view_fini(struct rubick_view *v)
{
	free(v->tput_sps);
	free(v->use_gpus);
	free(v->cpus_per_gpu);
	free(v->plan);
	memset(v, 0, sizeof(*v));
}

/* Free every entry, or only the baselines (views then keep their addresses). */
static void cache_clear(struct rubick_cache *c, int baselines_only)
{
	int m = 0;
	for (int i = 0; i < c->n; i++) {
		if (baselines_only && c->v[i]->key.mode != KEY_BASELINE) {
			c->v[m++] = c->v[i];
			continue;
		}
		view_fini(&c->v[i]->view);
		free(c->v[i]);
	}
	if (!baselines_only)
		c->gen++; /* views freed: memo entries pointing at them are stale */
	c->n = m;
	c->n_base = 0;
	for (int i = 0; i < c->n_slot; i++)
		c->slot[i] = -1;
	for (int e = 0; e < c->n; e++)
		c->slot[slot_find(c, c->v[e]->hash, &c->v[e]->key)] = e;
}

void rubick_cache_trim(struct rubick_cache *c)
{
	if (c->n - c->n_base >= RUBICK_CACHE_MAX)
		cache_clear(c, 0);
	else if (c->n_base >= RUBICK_CACHE_MAX)
		cache_clear(c, 1);
}

void rubick_cache_destroy(struct rubick_cache *c)
{
	if (!c)
		return;
	cache_clear(c, 0);
	free(c->v);
	free(c->slot);
	free(c->memo);
	free(c);
}

/*
 * Every active job's view is looked up every round, so the key's hash is on
 * the simulator's hot path: byte-wise FNV-1a over its 168 bytes was a fifth of
 * a loaded simulation's time. Words go to four independent multiply-fold lanes
 * (a quarter of the dependency chain), bytes past the last whole word are
 * folded in one by one.
 */
static uint64_t mix(uint64_t h, const unsigned char *b)
{
	uint64_t w;
	memcpy(&w, b, sizeof(w));
	h = (h ^ w) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

static uint64_t key_hash(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h0 = 0x9e3779b97f4a7c15ull ^ n, h1 = 0xc2b2ae3d27d4eb4full,
		 h2 = 0x165667b19e3779f9ull, h3 = 0x27d4eb2f165667c5ull;
	size_t i = 0;
	for (; i + 32 <= n; i += 32) {
		h0 = mix(h0, b + i);
		h1 = mix(h1, b + i + 8);
		h2 = mix(h2, b + i + 16);
		h3 = mix(h3, b + i + 24);
	}
	for (; i + 8 <= n; i += 8)
		h0 = mix(h0, b + i);
	uint64_t h = ((h0 * 31 + h1) * 31 + h2) * 31 + h3;
	for (; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

/* First slot of `h`'s probe sequence holding an entry with key `k`, or the empty slot ending it. */
static int slot_find(const struct rubick_cache *c, uint64_t h, const struct view_key *k)
{
	unsigned mask = (unsigned)c->n_slot - 1;
	for (unsigned i = (unsigned)h & mask;; i = (i + 1) & mask) {
		int e = c->slot[i];
		if (e < 0 || (c->v[e]->hash == h && !memcmp(&c->v[e]->key, k, sizeof(*k))))
			return (int)i;
	}
}

/* Room for one more entry in v and in the table (rehashing when it would pass half full). */
static int cache_reserve(struct rubick_cache *c)
{
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 64;
		struct entry **v = realloc(c->v, (size_t)cap * sizeof(*v));
		if (!v)
			return RK_ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	if (2 * (c->n + 1) <= c->n_slot)
		return RK_OK;
	int n_slot = c->n_slot ? 2 * c->n_slot : 128;
	int *slot = malloc((size_t)n_slot * sizeof(*slot));
	if (!slot)
		return RK_ENOMEM;
	for (int i = 0; i < n_slot; i++)
		slot[i] = -1;
	free(c->slot);
	c->slot = slot;
	c->n_slot = n_slot;
	for (int e = 0; e < c->n; e++)
		c->slot[slot_find(c, c->v[e]->hash, &c->v[e]->key)] = e;
	return RK_OK;
}

static int view_alloc(struct rubick_view *v, int max_gpus)
{
	v->max_gpus = max_gpus;
	size_t n = (size_t)max_gpus + 1;
	v->tput_sps = calloc(n, sizeof(*v->tput_sps));
	v->use_gpus = calloc(n, sizeof(*v->use_gpus));
	v->cpus_per_gpu = calloc(n, sizeof(*v->cpus_per_gpu));
	v->plan = calloc(n, sizeof(*v->plan));
	if (!v->tput_sps || !v->use_gpus || !v->cpus_per_gpu || !v->plan) {
		view_fini(v);
		return RK_ENOMEM;
	}
	return RK_OK;
}

/*
 * Samples/s of `job` on g GPUs at its trace's own measured speeds
 * (rk_job.native_sps), 0 where there is none. Only the ratios between sizes
 * matter to the policy: time_scale calibrates absolute times.
 */
static double native_at(const struct rk_job *job, int g)
{
	return rk_baseline_native_sps(job, g); /* the figure every policy prices with */
}

/*
 * Does the view of `job` under `mode` follow the trace's measured speeds?
 * When the driver runs a job at its trace's own throughputs per GPU count
 * (Gavel and Shockwave job types, docs/oracle.md "Trace-native speeds"), the
 * stand-in zoo model's scaling is not how the job scales: measured on
 * Shockwave's 120-job trace (8 x 4 V100), the stand-ins price a cross-node
 * 8-GPU ViT (for ResNet-50) at 1.08x its 4 GPUs where the trace measures
 * 1.97x, and GPT-2 (for LM, batch 5) at 3.7x its 1 GPU on 4 where the trace
 * measures 1.49x, so Rubick shrank and grew the wrong jobs. The resource axis
 * then comes from the measured speeds, the plans from the curve (the plan of
 * a trace-native job does not change its speed). Plan-only keeps the request
 * and needs no scaling.
 */
static int native_view(enum rubick_mode mode, const struct rk_job *job)
{
	return mode != RUBICK_PLAN_ONLY &&
	       native_at(job, job->req_gpus > 0 ? job->req_gpus : 1) > 0;
}

static uint64_t key_hash(const void *p, size_t n);

/* The job's plan space as a key: every space allowing all plans is the zeroed
 * one, so jobs that declare nothing share views as before. */
static void space_key(struct rk_plan_space *out, const struct rk_job *job)
{
	memset(out, 0, sizeof(*out));
	if (job->space.limited)
		*out = job->space;
}

/* The key fields of the native table (zero when the view is the model's). */
static void native_key(struct view_key *k, const struct rk_job *job)
{
	k->native_max = job->native_max;
	k->native_sig = key_hash(job->native_sps + 1, (size_t)job->native_max * sizeof(double)) | 1;
}

/*
 * Full mode with trace-native speeds: the measured throughput at every size
 * that has a plan on the curve (its fewest CPU threads per GPU that do: the
 * measured speeds ignore threads), then the 1% rule of §1.6 on the measured
 * figures, as from_user_plan applies it.
 */
static int native_full(struct rubick_view *v, const struct view_key *k, const struct rk_job *job,
                       const struct rk_curve *c)
{
	int best = 0;
	for (int g = k->min_gpus > 1 ? k->min_gpus : 1; g <= k->max_gpus; g++) {
		const struct rk_curve_point *p = NULL;
		int cpg = 0;
		for (int ci = 0; ci < c->opts.n_cpus && !p; ci++) {
			const struct rk_curve_point *q = rk_curve_at(c, g, ci, c->opts.n_bw - 1);
			if (q && q->has_plan) {
				p = q;
				cpg = c->opts.cpus_per_gpu[ci];
			}
		}
		double t = p ? native_at(job, g) : 0;
		if (t > 0 && (best == 0 || t > v->tput_sps[best] * RK_CURVE_MIN_GAIN)) {
			best = g;
			v->tput_sps[g] = t;
			v->use_gpus[g] = g;
			v->cpus_per_gpu[g] = cpg;
			v->plan[g] = p->plan;
		} else if (best) {
			v->tput_sps[g] = v->tput_sps[best];
			v->use_gpus[g] = v->use_gpus[best];
			v->cpus_per_gpu[g] = v->cpus_per_gpu[best];
			v->plan[g] = v->plan[best];
		}
	}
	return best ? RK_OK : RK_EINFEASIBLE;
}

/*
 * A job that takes no fewer than k->min_gpus GPUs (its elastic range,
 * docs/policies.md "GPU ranges"): sizes below it are infeasible, and the 1%
 * rule of §1.6 only snaps to sizes within the range. Where the curve's
 * minimal configuration for g lies below the floor, the best plan at exactly
 * g (top CPU and bandwidth level) competes instead, so a job whose curve
 * saturates under its floor still runs, on its floor. RK_EINFEASIBLE when no
 * size in range has a plan (the policy then runs the job as requested).
 */
static int floor_view(struct rubick_view *v, const struct view_key *k, const struct rk_curve *c)
{
	int lo = k->min_gpus, best = 0;
	for (int g = 1; g <= k->max_gpus; g++) {
		const struct rk_curve_point *p =
		    rk_curve_at(c, g, c->opts.n_cpus - 1, c->opts.n_bw - 1);
		double t = 0;
		int use = g, cpg = c->opts.cpus_per_gpu[c->opts.n_cpus - 1];
		struct rk_plan plan = {0};
		if (g >= lo && p && v->use_gpus[g] >= lo) {
			t = v->tput_sps[g];
			use = v->use_gpus[g];
			cpg = v->cpus_per_gpu[g];
			plan = v->plan[g];
		} else if (g >= lo && p && p->has_plan) {
			t = p->tput_sps;
			plan = p->plan;
		}
		if (best && !(t > v->tput_sps[best] * RK_CURVE_MIN_GAIN)) {
			use = v->use_gpus[best];
			t = v->tput_sps[best];
			cpg = v->cpus_per_gpu[best];
			plan = v->plan[best];
		} else if (t > 0) {
			best = g;
		}
		v->tput_sps[g] = g >= lo ? t : 0;
		v->use_gpus[g] = g >= lo && t > 0 ? use : 0;
		v->cpus_per_gpu[g] = cpg;
		v->plan[g] = plan;
	}
	return best ? RK_OK : RK_EINFEASIBLE; /* nothing in range: run as requested */
}

static int from_curve(struct rubick_view *v, const struct view_key *k, const struct rk_job *job,
		      const struct rk_perf_env *env, struct rk_error *err)
{
	struct rk_curve_opts o;
	rk_curve_opts_default(env, &o);
	o.space = k->space;
	o.max_gpus = k->max_gpus;
	o.node_gpus = k->node_gpus;
	o.gpu_mem_mb = k->gpu_mem_mb;
	o.host_mem_mb = k->host_mem_mb;
	struct rk_curve curve;
	int rc = rk_curve_build(job->model, &job->model->perf, env, job->global_batch, &o, &curve,
				err);
	if (rc)
		return rc;
	if (k->mode == RUBICK_FULL && k->native_sig) {
		rc = native_full(v, k, job, &curve);
	} else if (k->mode == RUBICK_FULL) {
		/* Top CPU and bandwidth level: the 1% rule then yields the fewest
		 * threads per GPU that reach the best throughput (§1.6). */
		for (int g = 1; g <= k->max_gpus; g++) {
			const struct rk_curve_point *p = rk_curve_at(&curve, g, o.n_cpus - 1, o.n_bw - 1);
			if (!p || !p->feasible || !(p->min_tput_sps > 0))
				continue;
			v->tput_sps[g] = p->min_tput_sps;
			v->use_gpus[g] = p->min_gpus;
			v->cpus_per_gpu[g] = p->min_cpus_per_gpu;
			v->plan[g] = p->min_plan;
		}
		if (k->min_gpus > 1)
			rc = floor_view(v, k, &curve);
	} else {
		/* Plan-only: exactly the requested GPUs and threads, best plan there. */
		int g = k->req_gpus;
		const struct rk_curve_point *p = rk_curve_lookup(&curve, g, k->req_cpg, o.net_gbps[o.n_bw - 1]);
		/* Giving it more than it asked for changes nothing: entries above the
		 * request repeat it (the minimal-resource rule of §1.6). */
		for (int x = g; g <= k->max_gpus && p && p->has_plan && p->tput_sps > 0 &&
				x <= k->max_gpus; x++) {
			v->tput_sps[x] = p->tput_sps;
			v->use_gpus[x] = g;
			v->cpus_per_gpu[x] = k->req_cpg;
			v->plan[x] = p->plan;
		}
	}
	rk_curve_fini(&curve);
	return rc;
}

/* Res-only: the user's plan scaled to every GPU count, then the 1% rule. */
static int from_user_plan(struct rubick_view *v, const struct view_key *k,
			  const struct rk_job *job, const struct rk_perf_env *env)
{
	int best = 0;
	for (int g = k->min_gpus > 1 ? k->min_gpus : 1; g <= k->max_gpus; g++) {
		struct rk_plan p;
		struct rk_placement pl;
		double t = 0;
		if (rk_baseline_plan_scale(&job->req_plan, job->global_batch, g, &p) == 0 &&
		    rk_placement_consolidated(g, k->node_gpus, &pl, NULL) == 0 &&
		    rk_plan_check_placement(&p, &pl, NULL) == 0 &&
		    rk_memory_check(job->model, &p, &pl, k->gpu_mem_mb, k->host_mem_mb, NULL,
		                    NULL) == 0) {
			/* The trace's measured speed where it has one (native_view). */
			if (k->native_sig)
				t = native_at(job, g);
			else
				rk_baseline_tput_sps(job, &p, &pl, k->req_cpg, env, &t);
		}
		if (t > 0 && (best == 0 || t > v->tput_sps[best] * RK_CURVE_MIN_GAIN)) {
			best = g;
			v->tput_sps[g] = t;
			v->use_gpus[g] = g;
			v->cpus_per_gpu[g] = k->req_cpg;
			v->plan[g] = p;
		} else if (best) {
			v->tput_sps[g] = v->tput_sps[best];
			v->use_gpus[g] = best;
			v->cpus_per_gpu[g] = v->cpus_per_gpu[best];
			v->plan[g] = v->plan[best];
		}
	}
	return best ? RK_OK : RK_EINFEASIBLE;
}

/* The entry of key `k` (hash h), or NULL. */
static struct entry *entry_find(const struct rubick_cache *c, uint64_t h, const struct view_key *k)
{
	if (!c->n_slot)
		return NULL;
	int e = c->slot[slot_find(c, h, k)];
	return e >= 0 ? c->v[e] : NULL;
}

/* Take `e` (hash and key set) into the cache; cache_reserve came first. */
static void entry_add(struct rubick_cache *c, struct entry *e)
{
	c->slot[slot_find(c, e->hash, &e->key)] = c->n;
	c->v[c->n++] = e;
}

double rubick_view_baseline(struct rubick_cache *c, const struct rk_job *job,
			    const struct rk_perf_env *env, int node_gpus)
{
	int q = job->req_gpus > 0 ? job->req_gpus : 1;
	int cpg = job->req_cpus > 0 ? (job->req_cpus + q - 1) / q : 1;
	struct view_key k;
	memset(&k, 0, sizeof(k)); /* padding too: the key is hashed and compared bytewise */
	k.mode = KEY_BASELINE;
	memcpy(k.model, job->model->name, sizeof(k.model));
	k.global_batch = job->global_batch;
	k.perf = job->model->perf;
	k.req_plan = job->req_plan;
	k.req_gpus = q;
	k.req_cpg = cpg;
	k.node_gpus = node_gpus;
	uint64_t h = key_hash(&k, sizeof(k));
	const struct entry *hit = entry_find(c, h, &k);
	if (hit)
		return hit->base_sps;
	struct rk_placement pl;
	double t = 0;
	if (rk_placement_consolidated(q, node_gpus, &pl, NULL) == 0)
		rk_baseline_tput_sps(job, &job->req_plan, &pl, cpg, env, &t);
	/* Out of memory: not remembered, the next round computes it again. */
	struct entry *e = cache_reserve(c) ? NULL : calloc(1, sizeof(*e));
	if (e) {
		e->hash = h;
		e->key = k;
		e->base_sps = t;
		entry_add(c, e);
		c->n_base++;
	}
	return t;
}

int rubick_view_get(struct rubick_cache *c, enum rubick_mode mode, const struct rk_job *job,
		    const struct rk_perf_env *env, int node_gpus, int64_t gpu_mem_mb,
		    int64_t host_mem_mb, int max_gpus, const struct rubick_view **out,
		    struct rk_error *err)
{
	*out = NULL;
	struct view_key k;
	memset(&k, 0, sizeof(k)); /* padding too: the key is hashed and compared bytewise */
	k.mode = mode;
	memcpy(k.model, job->model->name, sizeof(k.model));
	k.global_batch = job->global_batch;
	k.perf = job->model->perf;
	int g = job->req_gpus > 0 ? job->req_gpus : 1;
	if (mode != RUBICK_FULL) {
		k.req_plan = job->req_plan;
		k.req_cpg = job->req_cpus > 0 ? (job->req_cpus + g - 1) / g : 1;
	}
	if (mode == RUBICK_PLAN_ONLY)
		k.req_gpus = g;
	else if (job->min_gpus > 1)
		k.min_gpus = job->min_gpus; /* plan-only runs the request, inside the range */
	if (k.min_gpus > max_gpus)
		return rk_error_set(err, RK_EINFEASIBLE, "min_gpus %d above the view's %d GPUs",
				    k.min_gpus, max_gpus);
	k.node_gpus = node_gpus;
	k.max_gpus = max_gpus;
	k.gpu_mem_mb = gpu_mem_mb;
	k.host_mem_mb = host_mem_mb;
	space_key(&k.space, job);
	if (native_view(mode, job))
		native_key(&k, job);
	uint64_t h = key_hash(&k, sizeof(k));
	const struct entry *hit = entry_find(c, h, &k);
	if (hit) {
		if (hit->rc)
			return rk_error_set(err, hit->rc, "model '%s' cannot be planned",
					    job->model->name);
		*out = &hit->view;
		return RK_OK;
	}
	if (cache_reserve(c))
		return rk_error_set(err, RK_ENOMEM, "rubick: out of memory for curves");
	struct entry *e = calloc(1, sizeof(*e));
	if (!e)
		return rk_error_set(err, RK_ENOMEM, "rubick: out of memory for curves");
	e->hash = h;
	e->key = k;
	int rc = view_alloc(&e->view, max_gpus);
	if (rc) {
		free(e);
		return rk_error_set(err, rc, "rubick: out of memory for curves");
	}
	rc = mode == RUBICK_RES_ONLY ? from_user_plan(&e->view, &k, job, env)
				     : from_curve(&e->view, &k, job, env, err);
	if (rc == RK_ENOMEM) {
		view_fini(&e->view);
		free(e);
		return rk_error_set(err, rc, "rubick: out of memory for curves");
	}
	e->rc = rc;
	entry_add(c, e);
	if (rc)
		return rk_error_set(err, rc, "model '%s' cannot be planned", job->model->name);
	*out = &e->view;
	return RK_OK;
}

void rubick_cache_reserve_jobs(struct rubick_cache *c, int n_jobs)
{
	/* 2-4 slots per active job (~200 bytes each, a fifth of a job record):
	 * simulator and daemon ids are consecutive, so the active jobs (a window
	 * of ids) rarely share a slot; one that does only misses. */
	int want = 64;
	while (want < 2 * n_jobs && want < (1 << 22))
		want *= 2;
	if (want <= c->n_memo)
		return;
	struct job_memo *m = calloc((size_t)want, sizeof(*m));
	if (!m)
		return; /* keep the smaller table (or none): the memo only saves time */
	free(c->memo);
	c->memo = m;
	c->n_memo = want;
}

/* Does memo `m` hold job's answer for these inputs? Field by field, the
 * cheap ones first: most rounds, every job of a loaded cluster hits. */
static int sig_matches(const struct job_memo *m, const struct rubick_cache *c,
                       enum rubick_mode mode, const struct rk_job *job, int node_gpus,
                       int64_t gpu_mem_mb, int64_t host_mem_mb, int max_gpus)
{
	const struct job_sig *s = &m->sig;
	return m->used && m->id == job->id && m->gen == c->gen && s->max_gpus == max_gpus &&
	       s->req_gpus == job->req_gpus && s->req_cpus == job->req_cpus &&
	       s->min_gpus == job->min_gpus && s->global_batch == job->global_batch &&
	       s->node_gpus == node_gpus && s->mode == (int)mode && s->gpu_mem_mb == gpu_mem_mb &&
	       s->host_mem_mb == host_mem_mb && s->native_sps == job->native_sps &&
	       s->native_max == job->native_max &&
	       !memcmp(&s->req_plan, &job->req_plan, sizeof(s->req_plan)) &&
	       rk_plan_space_equal(&s->space, &job->space) &&
	       !memcmp(&s->perf, &job->model->perf, sizeof(s->perf)) &&
	       !memcmp(s->model, job->model->name, sizeof(s->model));
}

double rubick_view_job(struct rubick_cache *c, enum rubick_mode mode, const struct rk_job *job,
                       const struct rk_perf_env *env, int node_gpus, int64_t gpu_mem_mb,
                       int64_t host_mem_mb, int max_gpus, const struct rubick_view **view)
{
	struct job_memo *m =
	    c->n_memo ? &c->memo[(uint64_t)job->id & (uint64_t)(c->n_memo - 1)] : NULL;
	if (m && sig_matches(m, c, mode, job, node_gpus, gpu_mem_mb, host_mem_mb, max_gpus)) {
		*view = m->view;
		return m->base_sps;
	}
	/* The two lookups in the order a round made them before the memo. */
	*view = NULL;
	int rc = 0;
	if (max_gpus >= 1)
		rc = rubick_view_get(c, mode, job, env, node_gpus, gpu_mem_mb, host_mem_mb,
		                     max_gpus, view, NULL);
	/* A view of measured speeds is normalised by the request's measured speed
	 * (native_view): the model's price would mix two scales. */
	double t = native_view(mode, job) ? native_at(job, job->req_gpus > 0 ? job->req_gpus : 1)
	                                  : rubick_view_baseline(c, job, env, node_gpus);
	/* Out of memory is not an answer to remember (the next round tries again). */
	if (m && rc != RK_ENOMEM) {
		int rank = m->used && m->id == job->id ? m->rank : -1;
		*m = (struct job_memo){.used = 1,
		                       .gen = c->gen,
		                       .id = job->id,
		                       .view = *view,
		                       .base_sps = t,
		                       .rank = rank};
		struct job_sig *s = &m->sig;
		s->mode = mode;
		memcpy(s->model, job->model->name, sizeof(s->model));
		s->perf = job->model->perf;
		s->req_plan = job->req_plan;
		s->space = job->space;
		s->global_batch = job->global_batch;
		s->req_gpus = job->req_gpus;
		s->min_gpus = job->min_gpus;
		s->req_cpus = job->req_cpus;
		s->node_gpus = node_gpus;
		s->max_gpus = max_gpus;
		s->gpu_mem_mb = gpu_mem_mb;
		s->host_mem_mb = host_mem_mb;
		s->native_sps = job->native_sps;
		s->native_max = job->native_max;
	}
	return t;
}

/* The memo slot of job `id`, or NULL when the slot holds another job or none. */
static struct job_memo *memo_of(const struct rubick_cache *c, int64_t id)
{
	if (!c->n_memo)
		return NULL;
	struct job_memo *m = &c->memo[(uint64_t)id & (uint64_t)(c->n_memo - 1)];
	return m->used && m->id == id ? m : NULL;
}

int rubick_cache_rank(const struct rubick_cache *c, int64_t id)
{
	const struct job_memo *m = memo_of(c, id);
	return m ? m->rank : -1;
}

void rubick_cache_set_rank(struct rubick_cache *c, int64_t id, int rank)
{
	struct job_memo *m = memo_of(c, id);
	if (m)
		m->rank = rank;
}
