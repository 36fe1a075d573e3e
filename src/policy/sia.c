/*
 * Sia baseline (algorithms.md §5.1; Jayaram Subramanya et al., SOSP 2023,
 * artifact sia-simulator/sia.py): every round, one binary ILP over
 * (job, configuration) pairs picks each job's GPU type and (nodes, GPUs)
 * configuration, then the configurations are mapped onto concrete nodes.
 *
 * Configurations per GPU type k with N_k nodes of n_k GPUs: one node with
 * 1, 2, 4, ... GPUs up to n_k, then m whole nodes (m, m*n_k) for m = 2..N_k
 * (Sia's config sets, §5.1), plus each one-node size an active job requests
 * (see build_configs).
 *
 * Goodput. Our jobs keep a fixed global batch, so goodput = throughput
 * (statistical efficiency is 1; §5.1 "goodput = throughput for fixed-batch
 * jobs"), predicted by the fitted performance model (rk_perf_predict, §1.4),
 * never the simulator's oracle. A configuration is valid for a job when the
 * user's plan scales to its GPU count without re-planning
 * (rk_baseline_plan_scale: tp and pp kept, dp' = GPUs/(tp*pp) divides the
 * batch, micro-batch never above the user's, ZeRO plans not shrunk below the
 * user's dp) and tp divides the GPUs per node; with option range=job the GPU
 * count must also lie in the job's [min_gpus, max_gpus]. So Sia scales jobs'
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
 * For p > 0: maximise Σ x_jc (G_jc^p + λ_n). Solved with GLPK through
 * rk_lp (relative gap SIA_GAP as Sia's 1e-4). A greedy solution is the
 * fallback should the solver stop without one.
 *
 * Mapping: jobs whose chosen configuration equals the shape of what they hold
 * keep their nodes; the rest are placed largest first (whole nodes for
 * multi-node configs, best fit for one-node configs). A job that no longer
 * fits because of fragmentation waits this round, as in Sia. CPUs and memory
 * go with each GPU: the job's per-GPU request, capped at the node's
 * GPU-proportional share so GPU capacity alone decides feasibility.
 *
 * Not modelled: λ_a (allocation-change penalty, a CLI knob in the artifact),
 * non-preemptible jobs, per-type throughput profiles.
 */
#include "policy/baseline.h"
#include "rubick/lp.h"
#include "rubick/placement.h"
#include "rubick/policy.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sia's defaults (§5.1, run_experiment.sh). */
#define SIA_P_DEFAULT (-0.5)
#define SIA_LAMBDA_N_DEFAULT 1.1
#define SIA_GAP_DEFAULT 1e-4
/* Goodput given to restart-penalised configurations at r = 0 (Sia's invalid value). */
#define SIA_MIN_GOODPUT 1e-4
/* Normalised goodputs are clipped here as in the artifact (§5.1). */
#define SIA_MAX_GOODPUT 3000.0
/*
 * Restart penalty P (s). Sia measures it per model (25-250 s); the Rubick
 * setting measures one restart delay of 260 s for every job (§1.8.2 item 7),
 * which is what a deployment of Sia on that cluster would measure.
 */
#define SIA_RESTART_S_DEFAULT 260.0
/* Safety net for the solver; at the gap above rounds finish far sooner. */
#define SIA_TIME_LIMIT_MS_DEFAULT 10000.0
#define SIA_MAX_TYPES 16

struct sia_opts {
	double p, lambda_n, restart_s, time_limit_ms, gap;
	int range_job; /* 1: GPU counts limited to [min_gpus, max_gpus] */
};

struct sia_type {
	const char *name; /* borrowed from a node */
	int node_gpus;    /* GPUs per node (the smallest among up nodes of the type) */
	int n_nodes;      /* up nodes */
	int total_gpus;
	int cpus_per_gpu; /* proportional share on the smallest node of the type */
	int64_t mem_mb_per_gpu;
};

struct sia_cfg {
	int type, nodes, gpus;
	int ragged; /* 1: a requested size that is no multiple of n_k: full nodes plus a
		     * remainder (rk_placement_consolidated) instead of `nodes` equal shares */
};

static int parse_double(const char *v, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(x))
		return -1;
	*out = x;
	return 0;
}

static int sia_parse_opts(struct sia_opts *o, const char *options, struct rk_error *err)
{
	*o = (struct sia_opts){.p = SIA_P_DEFAULT, .lambda_n = SIA_LAMBDA_N_DEFAULT,
			       .restart_s = SIA_RESTART_S_DEFAULT,
			       .time_limit_ms = SIA_TIME_LIMIT_MS_DEFAULT, .gap = SIA_GAP_DEFAULT};
	if (!options || !*options)
		return RK_OK;
	/* Walk "k=v,k=v" in place; the option text is short and caller-owned. */
	const char *kv = options;
	while (*kv) {
		size_t len = strcspn(kv, ",");
		char item[128];
		if (len >= sizeof(item))
			return rk_error_set(err, RK_EINVAL, "sia: option '%.*s' is too long", (int)len,
					    kv);
		memcpy(item, kv, len);
		item[len] = '\0';
		kv += len + (kv[len] == ',');
		char *eq = strchr(item, '=');
		if (!eq)
			return rk_error_set(err, RK_EINVAL, "sia: option '%s' is not key=value", item);
		*eq = '\0';
		const char *k = item, *v = eq + 1;
		double x = 0;
		if (!strcmp(k, "range")) {
			if (!strcmp(v, "job"))
				o->range_job = 1;
			else if (!strcmp(v, "plan"))
				o->range_job = 0;
			else
				return rk_error_set(err, RK_EINVAL,
						    "sia: range=%s: must be 'plan' or 'job'", v);
			continue;
		}
		if (parse_double(v, &x))
			return rk_error_set(err, RK_EINVAL, "sia: %s=%s: not a finite number", k, v);
		if (!strcmp(k, "p")) {
			if (x == 0 || x < -10 || x > 10)
				return rk_error_set(err, RK_ERANGE, "sia: p=%s: must be non-zero in [-10, 10]", v);
			o->p = x;
		} else if (!strcmp(k, "lambda_n")) {
			if (x < 0)
				return rk_error_set(err, RK_ERANGE, "sia: lambda_n=%s: must be >= 0", v);
			o->lambda_n = x;
		} else if (!strcmp(k, "restart_s")) {
			if (x < 0)
				return rk_error_set(err, RK_ERANGE, "sia: restart_s=%s: must be >= 0", v);
			o->restart_s = x;
		} else if (!strcmp(k, "time_limit_ms")) {
			if (x <= 0)
				return rk_error_set(err, RK_ERANGE, "sia: time_limit_ms=%s: must be > 0", v);
			o->time_limit_ms = x;
		} else if (!strcmp(k, "gap")) {
			if (x < 0 || x >= 1)
				return rk_error_set(err, RK_ERANGE, "sia: gap=%s: must be in [0, 1)", v);
			o->gap = x;
		} else {
			return rk_error_set(err, RK_EINVAL,
					    "sia: unknown option '%s' (known: p, lambda_n, restart_s, "
					    "time_limit_ms, gap, range)",
					    k);
		}
	}
	return RK_OK;
}

static int sia_create(void **state, const char *options, struct rk_error *err)
{
	*state = NULL;
	struct sia_opts o;
	int rc = sia_parse_opts(&o, options, err);
	if (rc)
		return rc;
	struct sia_opts *s = malloc(sizeof(*s));
	if (!s)
		return rk_error_set(err, RK_ENOMEM, "sia: out of memory");
	*s = o;
	*state = s;
	return RK_OK;
}

static void sia_destroy(void *state)
{
	free(state);
}

/* GPU types of the up nodes, in order of first appearance. */
static int collect_types(const struct rk_cluster *c, struct sia_type *t, int *n_types,
			 int *node_type, struct rk_error *err)
{
	int n = 0;
	for (int i = 0; i < c->n_nodes; i++) {
		const struct rk_node *nd = &c->nodes[i];
		node_type[i] = -1;
		if (!nd->up || nd->gpus < 1)
			continue;
		int k = 0;
		while (k < n && strcmp(t[k].name, nd->gpu_type))
			k++;
		if (k == n) {
			if (n == SIA_MAX_TYPES)
				return rk_error_set(err, RK_ERANGE, "sia: more than %d GPU types",
						    SIA_MAX_TYPES);
			t[n++] = (struct sia_type){.name = nd->gpu_type, .node_gpus = nd->gpus,
						   .cpus_per_gpu = nd->cpus / nd->gpus,
						   .mem_mb_per_gpu = nd->mem_mb / nd->gpus};
		}
		struct sia_type *ty = &t[k];
		node_type[i] = k;
		ty->n_nodes++;
		ty->total_gpus += nd->gpus;
		if (nd->gpus < ty->node_gpus)
			ty->node_gpus = nd->gpus;
		if (nd->cpus / nd->gpus < ty->cpus_per_gpu)
			ty->cpus_per_gpu = nd->cpus / nd->gpus;
		if (nd->mem_mb / nd->gpus < ty->mem_mb_per_gpu)
			ty->mem_mb_per_gpu = nd->mem_mb / nd->gpus;
	}
	*n_types = n;
	return RK_OK;
}

/*
 * Sia's configuration set for every type (see the file comment), plus every
 * size an active job requests (`asked[g]` != 0, g <= max_asked) that the set
 * lacks: a job whose model-parallel width is not a power of two (tp = 5), or
 * whose request is no multiple of n_k (20 GPUs on 8-GPU nodes, placed 8+8+4),
 * can then still run at its request, which Sia's scale unit would forbid.
 */
static int build_configs(const struct sia_type *t, int n_types, const char *asked, int max_asked,
			 struct sia_cfg **out, int *n_out)
{
	int cap = 0;
	for (int k = 0; k < n_types; k++)
		cap += t[k].node_gpus + t[k].n_nodes + max_asked + 1;
	struct sia_cfg *c = malloc((size_t)cap * sizeof(*c));
	if (!c)
		return RK_ENOMEM;
	int n = 0;
	for (int k = 0; k < n_types; k++) {
		int ng = t[k].node_gpus;
		for (int g = 1; g < ng; g++)
			if ((g & (g - 1)) == 0 || (g <= max_asked && asked[g]))
				c[n++] = (struct sia_cfg){k, 1, g, 0};
		c[n++] = (struct sia_cfg){k, 1, ng, 0};
		for (int m = 2; m <= t[k].n_nodes; m++)
			c[n++] = (struct sia_cfg){k, m, m * ng, 0};
		for (int g = ng + 1; g <= max_asked && g < t[k].total_gpus; g++)
			if (asked[g] && g % ng && (g + ng - 1) / ng <= t[k].n_nodes)
				c[n++] = (struct sia_cfg){k, (g + ng - 1) / ng, g, 1};
	}
	*out = c;
	*n_out = n;
	return RK_OK;
}

/* The placement a configuration stands for (equal shares, or ragged). */
static int cfg_placement(const struct sia_cfg *cf, const struct sia_type *t, struct rk_placement *pl)
{
	if (cf->ragged)
		return rk_placement_consolidated(cf->gpus, t->node_gpus, pl, NULL);
	if (cf->nodes > RK_PLACEMENT_MAX_NODES)
		return RK_ERANGE;
	pl->n_nodes = cf->nodes;
	for (int i = 0; i < cf->nodes; i++)
		pl->gpus[i] = cf->gpus / cf->nodes;
	return RK_OK;
}

/* CPUs per GPU a job gets: its request per GPU, capped at the proportional share. */
static int job_cpus_per_gpu(const struct rk_job *j, const struct sia_type *t)
{
	int want = j->req_cpus > 0 && j->req_gpus > 0 ? (j->req_cpus + j->req_gpus - 1) / j->req_gpus
						      : t->cpus_per_gpu;
	return want < t->cpus_per_gpu ? want : t->cpus_per_gpu;
}

static int64_t job_mem_per_gpu(const struct rk_job *j, const struct sia_type *t)
{
	int64_t want = j->req_mem_mb > 0 && j->req_gpus > 0
			       ? (j->req_mem_mb + j->req_gpus - 1) / j->req_gpus
			       : t->mem_mb_per_gpu;
	return want < t->mem_mb_per_gpu ? want : t->mem_mb_per_gpu;
}

/* Index of the configuration matching what `j` holds now, or -1. */
static int current_config(const struct rk_job *j, const int *node_type, const struct sia_cfg *cfg,
			  int n_cfg)
{
	if (!rk_baseline_is_placed(j))
		return -1;
	int m = 0, g = 0, type = -2, per = -1, uniform = 1;
	for (int s = 0; s < j->alloc.n; s++) {
		const struct rk_share *sh = &j->alloc.shares[s];
		if (sh->gpus < 1)
			continue;
		int k = node_type[sh->node];
		if (k < 0 || (type != -2 && k != type))
			return -1;
		if (per >= 0 && sh->gpus != per)
			uniform = 0;
		type = k;
		per = sh->gpus;
		m++;
		g += sh->gpus;
	}
	for (int c = 0; c < n_cfg; c++)
		if (cfg[c].type == type && cfg[c].nodes == m && cfg[c].gpus == g &&
		    (cfg[c].ragged || uniform))
			return c;
	return -1;
}

/* One (job, configuration) pair of the ILP. */
struct sia_var {
	int job, cfg;
	double cost; /* objective coefficient: G^p - λ_n (p < 0) or G^p + λ_n (p > 0) */
	struct rk_plan plan; /* the user's plan scaled to the configuration */
};

struct sia_round {
	const struct sia_opts *o;
	const struct rk_sched_input *in;
	struct sia_type types[SIA_MAX_TYPES];
	int n_types;
	int *node_type;     /* per node: type index or -1 */
	struct sia_cfg *cfg;
	int n_cfg;
	struct sia_var *var;
	int n_var, cap_var;
	int *first_var;     /* per job: first var index; vars of job j are contiguous */
	int *n_job_var;
	int *cur;           /* per job: current config index or -1 */
	int *choice;        /* per job: chosen var index or -1 */
	char *asked;        /* asked[g]: some job requests g GPUs */
};

static int push_var(struct sia_round *r, const struct sia_var *v)
{
	if (r->n_var == r->cap_var) {
		int cap = r->cap_var ? 2 * r->cap_var : 1024;
		struct sia_var *nv = realloc(r->var, (size_t)cap * sizeof(*nv));
		if (!nv)
			return RK_ENOMEM;
		r->var = nv;
		r->cap_var = cap;
	}
	r->var[r->n_var++] = *v;
	return RK_OK;
}

/* Sia's restart factor r_j (§5.1); 1 for jobs younger than the penalty. */
static double restart_factor(const struct rk_job *j, int64_t now_ms, double penalty_s)
{
	double age_s = (double)(now_ms - j->submit_ms) / 1000.0;
	if (penalty_s <= 0 || age_s < penalty_s)
		return 1.0;
	double num = age_s - j->restarts * penalty_s;
	return num > 0 ? num / (age_s + penalty_s) : 0.0;
}

/* The valid configurations of job `ji`, their goodputs and costs. */
static int job_vars(struct sia_round *r, int ji)
{
	const struct rk_job *j = r->in->jobs[ji];
	const struct sia_opts *o = r->o;
	int first = r->n_var;
	r->first_var[ji] = first;
	double min_tput = HUGE_VAL;
	for (int c = 0; c < r->n_cfg; c++) {
		const struct sia_cfg *cf = &r->cfg[c];
		if (o->range_job) {
			int lo = j->min_gpus > 0 ? j->min_gpus : 1;
			int hi = j->max_gpus > 0 ? j->max_gpus : j->req_gpus;
			if (cf->gpus < lo || cf->gpus > hi)
				continue;
		}
		struct sia_var v = {.job = ji, .cfg = c};
		struct rk_placement pl;
		if (cfg_placement(cf, &r->types[cf->type], &pl))
			continue;
		if (rk_baseline_plan_scale(&j->req_plan, j->global_batch, cf->gpus, &v.plan))
			continue;
		/* A tensor-parallel group must stay inside a node. */
		if (rk_plan_check_placement(&v.plan, &pl, NULL))
			continue;
		double tput = 0;
		if (rk_baseline_tput_sps(j, &v.plan, &pl, job_cpus_per_gpu(j, &r->types[cf->type]),
					 r->in->env, &tput) ||
		    !(tput > 0))
			continue;
		v.cost = tput; /* raw goodput until the row is normalised below */
		if (tput < min_tput)
			min_tput = tput;
		int rc = push_var(r, &v);
		if (rc)
			return rc;
	}
	if (r->n_var == first) {
		/*
		 * The model predicts no configuration (e.g. an unfitted model): Sia
		 * then treats the job as rigid, as its artifact does jobs without
		 * profiles: the requested GPU count and plan, goodput 1.
		 */
		for (int c = 0; c < r->n_cfg; c++) {
			const struct sia_cfg *cf = &r->cfg[c];
			struct rk_placement pl;
			if (cf->gpus != j->req_gpus || cfg_placement(cf, &r->types[cf->type], &pl) ||
			    rk_plan_check_placement(&j->req_plan, &pl, NULL))
				continue;
			struct sia_var v = {.job = ji, .cfg = c, .plan = j->req_plan, .cost = 1.0};
			min_tput = 1.0;
			int rc = push_var(r, &v);
			if (rc)
				return rc;
			break;
		}
	}
	r->n_job_var[ji] = r->n_var - first;
	double rf = r->cur[ji] >= 0 ? restart_factor(j, r->in->now_ms, o->restart_s) : 1.0;
	for (int k = first; k < r->n_var; k++) {
		struct sia_var *v = &r->var[k];
		double g = v->cost / min_tput;
		if (g > SIA_MAX_GOODPUT)
			g = SIA_MAX_GOODPUT;
		if (v->cfg != r->cur[ji])
			g *= rf;
		if (g < SIA_MIN_GOODPUT)
			g = SIA_MIN_GOODPUT;
		v->cost = o->p < 0 ? pow(g, o->p) - o->lambda_n : pow(g, o->p) + o->lambda_n;
	}
	return RK_OK;
}

/* Benefit of a var in "larger is better" terms, whatever the sense. */
static double benefit(const struct sia_round *r, int k)
{
	return r->o->p < 0 ? -r->var[k].cost : r->var[k].cost;
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
			int best = -1;
			for (int k = r->first_var[ji]; k < r->first_var[ji] + r->n_job_var[ji]; k++) {
				const struct sia_cfg *cf = &r->cfg[r->var[k].cfg];
				if (cf->gpus > left[cf->type] || benefit(r, k) <= 0)
					continue;
				if (pass == 0 && r->var[k].cfg != r->cur[ji])
					continue;
				if (best < 0 || benefit(r, k) > benefit(r, best))
					best = k;
			}
			if (best >= 0) {
				r->choice[ji] = best;
				left[r->cfg[r->var[best].cfg].type] -= r->cfg[r->var[best].cfg].gpus;
			}
		}
}

static int solve_ilp(struct sia_round *r, struct rk_error *err)
{
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
	for (int k = 0; k < r->n_var && !rc; k++)
		rc = rk_lp_set_obj(lp, k, r->var[k].cost, err);
	/* One configuration per job. */
	for (int ji = 0; ji < r->in->n_jobs && !rc; ji++) {
		if (r->n_job_var[ji] < 2)
			continue; /* a single binary already holds the row */
		for (int k = 0; k < r->n_job_var[ji]; k++) {
			idx[k] = r->first_var[ji] + k;
			coef[k] = 1;
		}
		rc = rk_lp_add_row(lp, r->n_job_var[ji], idx, coef, RK_LP_NO_BOUND, 1, err);
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
	struct rk_lp_opts lo = {.time_limit_ms = r->o->time_limit_ms, .mip_gap = r->o->gap};
	struct rk_lp_result res;
	rc = rk_lp_solve(lp, &lo, &res, err);
	if (rc)
		goto out;
	if (res.status == RK_LP_OPTIMAL || res.status == RK_LP_FEASIBLE) {
		for (int k = 0; k < r->n_var; k++)
			if (rk_lp_value(lp, k))
				r->choice[r->var[k].job] = k;
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
			if (!rk_plan_equal(&j->plan, &r->var[k].plan))
				rc = rk_decisions_push(out, j->id, &j->alloc, &r->var[k].plan);
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
			.cpus_per_gpu = job_cpus_per_gpu(j, t),
			.mem_mb_per_gpu = job_mem_per_gpu(j, t),
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
			rc = rk_decisions_push(out, j->id, &a, &v->plan);
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
	free(r->asked);
	free(r->node_type);
	free(r->cfg);
	free(r->var);
	free(r->first_var);
	free(r->n_job_var);
	free(r->cur);
	free(r->choice);
}

static int sia_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			struct rk_error *err)
{
	struct sia_round r = {.o = state, .in = in};
	int n = in->n_jobs, rc = RK_OK;
	if (n == 0)
		return RK_OK;
	if (!in->env)
		return rk_error_set(err, RK_EINVAL,
				    "sia: needs the performance-model environment (input env is NULL)");
	r.node_type = malloc(((size_t)in->cluster->n_nodes + 1) * sizeof(*r.node_type));
	r.first_var = calloc((size_t)n, sizeof(int));
	r.n_job_var = calloc((size_t)n, sizeof(int));
	r.cur = malloc((size_t)n * sizeof(int));
	r.choice = malloc((size_t)n * sizeof(int));
	if (!r.node_type || !r.first_var || !r.n_job_var || !r.cur || !r.choice) {
		rc = rk_error_set(err, RK_ENOMEM, "sia: out of memory for %d jobs", n);
		goto out;
	}
	rc = collect_types(in->cluster, r.types, &r.n_types, r.node_type, err);
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
	if (build_configs(r.types, r.n_types, r.asked, max_asked, &r.cfg, &r.n_cfg)) {
		rc = rk_error_set(err, RK_ENOMEM, "sia: out of memory");
		goto out;
	}
	for (int ji = 0; ji < n; ji++) {
		r.choice[ji] = -1;
		r.cur[ji] = current_config(in->jobs[ji], r.node_type, r.cfg, r.n_cfg);
		if (job_vars(&r, ji)) {
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
out:
	round_fini(&r);
	return rc;
}

const struct rk_policy_ops rk_policy_sia = {
	.name = "sia",
	.summary = "Sia: per-round ILP (GLPK) over job x (GPU type, nodes, GPUs) configurations, p=-0.5",
	.create = sia_create,
	.destroy = sia_destroy,
	.schedule = sia_schedule,
};
