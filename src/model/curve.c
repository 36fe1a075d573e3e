/*
 * Resource sensitivity curves (docs/references.md §1.6, the artifact's
 * get_plan_with_fixed_res / gen_perf_curve): the best plan at every resource
 * point, then the "minimal-resource" smoothing — a point whose throughput one
 * unit less of a resource reaches within 1% takes that smaller point's plan and
 * resources — so a policy never hands out a GPU, a CPU or bandwidth that buys
 * less than 1%.
 */
#include "rubick/curve.h"

#include "rubick/memory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void rk_curve_opts_default(const struct rk_perf_env *env, struct rk_curve_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->max_gpus = 64;
	o->node_gpus = 8;
	o->n_cpus = 4;
	o->cpus_per_gpu[0] = 1;
	o->cpus_per_gpu[1] = 2;
	o->cpus_per_gpu[2] = 4;
	o->cpus_per_gpu[3] = 8;
	o->n_bw = 1;
	o->net_gbps[0] = env ? env->net_gbps : 12.5;
	o->gpu_mem_mb = 81920;
	o->host_mem_mb = 1600LL * 1024;
}

static int check_opts(const struct rk_curve_opts *o, struct rk_error *err)
{
	if (o->node_gpus < 1 || o->node_gpus > RK_PLACEMENT_NODE_GPUS_MAX)
		return rk_error_set(err, RK_EINVAL, "curve: node_gpus must be in 1..%d, got %d",
				    RK_PLACEMENT_NODE_GPUS_MAX, o->node_gpus);
	long most = (long)RK_PLACEMENT_MAX_NODES * o->node_gpus;
	if (o->max_gpus < 1 || o->max_gpus > most)
		return rk_error_set(err, RK_EINVAL,
				    "curve: max_gpus must be in 1..%ld (%d nodes of %d), got %d", most,
				    RK_PLACEMENT_MAX_NODES, o->node_gpus, o->max_gpus);
	if (o->n_cpus < 1 || o->n_cpus > RK_CURVE_LEVELS_MAX)
		return rk_error_set(err, RK_EINVAL, "curve: n_cpus must be in 1..%d, got %d",
				    RK_CURVE_LEVELS_MAX, o->n_cpus);
	for (int i = 0; i < o->n_cpus; i++)
		if (o->cpus_per_gpu[i] < 1 || (i && o->cpus_per_gpu[i] <= o->cpus_per_gpu[i - 1]))
			return rk_error_set(err, RK_EINVAL,
					    "curve: CPU levels must be >= 1 and strictly ascending "
					    "(level %d is %d)",
					    i + 1, o->cpus_per_gpu[i]);
	if (o->n_bw < 1 || o->n_bw > RK_CURVE_LEVELS_MAX)
		return rk_error_set(err, RK_EINVAL, "curve: n_bw must be in 1..%d, got %d",
				    RK_CURVE_LEVELS_MAX, o->n_bw);
	for (int i = 0; i < o->n_bw; i++)
		if (!(o->net_gbps[i] > 0) || !isfinite(o->net_gbps[i]) ||
		    (i && o->net_gbps[i] <= o->net_gbps[i - 1]))
			return rk_error_set(err, RK_EINVAL,
					    "curve: bandwidth levels must be finite, > 0 and strictly "
					    "ascending (level %d is %g GB/s)",
					    i + 1, o->net_gbps[i]);
	if (o->gpu_mem_mb < 1 || o->host_mem_mb < 0)
		return rk_error_set(err, RK_EINVAL,
				    "curve: memory limits must be positive (gpu %lld, host %lld MiB)",
				    (long long)o->gpu_mem_mb, (long long)o->host_mem_mb);
	return RK_OK;
}

static struct rk_curve_point *cell(struct rk_curve_point *v, const struct rk_curve_opts *o,
				   int g, int c, int b)
{
	return &v[((size_t)(g - 1) * o->n_cpus + c) * o->n_bw + b];
}

struct build {
	const struct rk_model *m;
	const struct rk_perf_params *k;
	const struct rk_curve_opts *o;
	struct rk_plan *plans;
	size_t cap, n;
	long predictions;
};

/* The plans of g GPUs into b->plans (grown as needed). */
static int plans_for(struct build *b, const struct rk_placement *pl, int batch,
		     struct rk_error *err)
{
	for (;;) {
		size_t n;
		int rc = rk_plan_enumerate(b->m, batch, pl, b->o->gpu_mem_mb, b->o->host_mem_mb,
					   b->plans, b->cap, &n, err);
		if (rc)
			return rc;
		if (n <= b->cap) {
			/* Keep only the plans the job's script can run, in enumeration
			 * order, so the best plan is the best of the declared space. */
			size_t kept = 0;
			for (size_t i = 0; i < n; i++)
				if (rk_plan_in_space(&b->plans[i], &b->o->space))
					b->plans[kept++] = b->plans[i];
			b->n = kept;
			return RK_OK;
		}
		struct rk_plan *np = realloc(b->plans, n * sizeof(*np));
		if (!np)
			return rk_error_set(err, RK_ENOMEM, "curve: out of memory for %zu plans", n);
		b->plans = np;
		b->cap = n;
	}
}

/*
 * Best plan (shortest iteration, first in enumeration order on ties) among
 * those with offload == `offload`, at `cpus` threads per GPU. *best_ms stays
 * as given when none beats it.
 */
static int best_of(struct build *b, const struct rk_perf_env *env, const struct rk_placement *pl,
		   int offload, int cpus, double *best_ms, const struct rk_plan **best,
		   struct rk_error *err)
{
	for (size_t i = 0; i < b->n; i++) {
		if (b->plans[i].offload != offload)
			continue;
		double ms;
		int rc = rk_perf_predict(b->m, b->k, env, &b->plans[i], pl, cpus, &ms);
		b->predictions++;
		if (rc) {
			char pt[RK_PLAN_TEXT_MAX];
			rk_plan_format(&b->plans[i], pt, sizeof(pt));
			return rk_error_set(err, rc,
					    "curve: the performance model rejects %s for model '%s' "
					    "(%s)",
					    pt, b->m->name, rk_strerror(rc));
		}
		if (ms > 0 && isfinite(ms) && ms < *best_ms) {
			*best_ms = ms;
			*best = &b->plans[i];
		}
	}
	return RK_OK;
}

static void set_raw(struct rk_curve_point *p, const struct rk_plan *plan, double ms, int batch)
{
	memset(p, 0, sizeof(*p));
	if (!plan)
		return;
	p->has_plan = 1;
	p->plan = *plan;
	p->iter_ms = ms;
	p->tput_sps = batch / (ms / 1000.0);
}

/* Raw best plans of every (c, b) cell at g GPUs. */
static int fill_gpus(struct build *b, const struct rk_perf_env *env, struct rk_curve_point *v,
		     int g, int batch, struct rk_error *err)
{
	const struct rk_curve_opts *o = b->o;
	struct rk_placement pl;
	int rc = rk_placement_consolidated(g, o->node_gpus, &pl, err);
	if (rc)
		return rc;
	if ((rc = plans_for(b, &pl, batch, err)))
		return rc;
	for (int w = 0; w < o->n_bw; w++) {
		if (pl.n_nodes == 1 && w > 0) { /* bandwidth only matters across nodes */
			for (int c = 0; c < o->n_cpus; c++)
				*cell(v, o, g, c, w) = *cell(v, o, g, c, 0);
			continue;
		}
		struct rk_perf_env e = *env;
		e.net_gbps = o->net_gbps[w];
		/* CPU threads only speed up the host optimizer of ZeRO-Offload. */
		double base_ms = INFINITY;
		const struct rk_plan *base = NULL;
		if ((rc = best_of(b, &e, &pl, 0, o->cpus_per_gpu[0], &base_ms, &base, err)))
			return rc;
		for (int c = 0; c < o->n_cpus; c++) {
			double ms = base_ms;
			const struct rk_plan *best = base;
			if ((rc = best_of(b, &e, &pl, 1, o->cpus_per_gpu[c], &ms, &best, err)))
				return rc;
			set_raw(cell(v, o, g, c, w), best, ms, batch);
		}
	}
	return RK_OK;
}

static void take_min(struct rk_curve_point *dst, const struct rk_curve_point *src)
{
	dst->min_gpus = src->min_gpus;
	dst->min_cpus_per_gpu = src->min_cpus_per_gpu;
	dst->min_net_gbps = src->min_net_gbps;
	dst->min_plan = src->min_plan;
	dst->min_tput_sps = src->min_tput_sps;
}

/* §1.6 minimal-resource smoothing, GPUs then CPUs then bandwidth, in place. */
static void smooth(struct rk_curve_point *v, const struct rk_curve_opts *o)
{
	for (int g = 1; g <= o->max_gpus; g++)
		for (int c = 0; c < o->n_cpus; c++)
			for (int w = 0; w < o->n_bw; w++) {
				struct rk_curve_point *p = cell(v, o, g, c, w);
				p->min_gpus = g;
				p->min_cpus_per_gpu = o->cpus_per_gpu[c];
				p->min_net_gbps = o->net_gbps[w];
				p->min_plan = p->plan;
				p->min_tput_sps = p->tput_sps;
				const struct rk_curve_point *less[3] = {
					g > 1 ? cell(v, o, g - 1, c, w) : NULL,
					c > 0 ? cell(v, o, g, c - 1, w) : NULL,
					w > 0 ? cell(v, o, g, c, w - 1) : NULL,
				};
				for (int i = 0; i < 3; i++)
					if (less[i] && less[i]->feasible &&
					    less[i]->min_tput_sps * RK_CURVE_MIN_GAIN >= p->min_tput_sps)
						take_min(p, less[i]);
				p->feasible = p->min_tput_sps > 0;
			}
	for (int g = 1; g <= o->max_gpus; g++)
		for (int c = 0; c < o->n_cpus; c++)
			for (int w = 0; w < o->n_bw; w++) {
				struct rk_curve_point *p = cell(v, o, g, c, w);
				p->slope_sps = g < o->max_gpus
						       ? cell(v, o, g + 1, c, w)->min_tput_sps -
								 p->min_tput_sps
						       : 0.0;
			}
}

int rk_curve_build(const struct rk_model *model, const struct rk_perf_params *k,
		   const struct rk_perf_env *env, int global_batch,
		   const struct rk_curve_opts *opts, struct rk_curve *out, struct rk_error *err)
{
	if (!model || !k || !env || !opts || !out)
		return rk_error_set(err, RK_EINVAL, "curve: missing argument");
	if (global_batch < 1)
		return rk_error_set(err, RK_EINVAL, "curve: global batch must be >= 1, got %d",
				    global_batch);
	int rc = check_opts(opts, err);
	if (rc)
		return rc;
	if ((rc = rk_perf_env_check(env, err)))
		return rc;
	size_t n = (size_t)opts->max_gpus * opts->n_cpus * opts->n_bw;
	struct rk_curve_point *v = calloc(n, sizeof(*v));
	struct build b = {model, k, opts, NULL, 0, 0, 0};
	if (!v)
		return rk_error_set(err, RK_ENOMEM, "curve: out of memory");
	for (int g = 1; g <= opts->max_gpus; g++)
		if ((rc = fill_gpus(&b, env, v, g, global_batch, err)))
			goto fail;
	smooth(v, opts);

	struct rk_curve c = {0};
	memcpy(c.model, model->name, sizeof(c.model));
	c.model[sizeof(c.model) - 1] = '\0';
	c.global_batch = global_batch;
	c.opts = *opts;
	c.points = v;
	c.n_predictions = b.predictions;
	/* Max config: replaced only by a point more than 1% better, scanning from
	 * the fewest resources, so the least resources within 1% win. */
	double top = 0;
	c.max_gpu = 1;
	for (int g = 1; g <= opts->max_gpus; g++)
		for (int ci = 0; ci < opts->n_cpus; ci++)
			for (int w = 0; w < opts->n_bw; w++) {
				double t = cell(v, opts, g, ci, w)->min_tput_sps;
				if (t > top * RK_CURVE_MIN_GAIN) {
					top = t;
					c.max_gpu = g;
					c.max_cpu = ci;
					c.max_bw = w;
				}
			}
	free(b.plans);
	*out = c;
	return RK_OK;
fail:
	free(b.plans);
	free(v);
	return rc;
}

void rk_curve_fini(struct rk_curve *c)
{
	if (!c)
		return;
	free(c->points);
	c->points = NULL;
}

const struct rk_curve_point *rk_curve_at(const struct rk_curve *c, int gpus, int cpu_idx,
					 int bw_idx)
{
	if (!c || !c->points || gpus < 1 || gpus > c->opts.max_gpus || cpu_idx < 0 ||
	    cpu_idx >= c->opts.n_cpus || bw_idx < 0 || bw_idx >= c->opts.n_bw)
		return NULL;
	return &c->points[((size_t)(gpus - 1) * c->opts.n_cpus + cpu_idx) * c->opts.n_bw + bw_idx];
}

const struct rk_curve_point *rk_curve_lookup(const struct rk_curve *c, int gpus,
					     int cpus_per_gpu, double net_gbps)
{
	if (!c || gpus < 1)
		return NULL;
	if (gpus > c->opts.max_gpus)
		gpus = c->opts.max_gpus;
	int ci = 0, w = 0;
	for (int i = 1; i < c->opts.n_cpus; i++)
		if (c->opts.cpus_per_gpu[i] <= cpus_per_gpu)
			ci = i;
	for (int i = 1; i < c->opts.n_bw; i++)
		if (c->opts.net_gbps[i] <= net_gbps)
			w = i;
	return rk_curve_at(c, gpus, ci, w);
}

const struct rk_curve_point *rk_curve_max(const struct rk_curve *c)
{
	return c ? rk_curve_at(c, c->max_gpu, c->max_cpu, c->max_bw) : NULL;
}

double rk_curve_slope(const struct rk_curve *c, int gpus, int delta, int cpu_idx, int bw_idx)
{
	const struct rk_curve_point *a = rk_curve_at(c, gpus, cpu_idx, bw_idx);
	if (!a || delta == 0)
		return 0.0;
	int to = gpus + delta;
	if (to < 1)
		to = 1;
	if (to > c->opts.max_gpus)
		to = c->opts.max_gpus;
	const struct rk_curve_point *b = rk_curve_at(c, to, cpu_idx, bw_idx);
	return fabs(a->min_tput_sps - b->min_tput_sps) / abs(delta);
}
