/*
 * Sia baseline, goodput mode (see sia.c): a configuration's goodput for a
 * job with a goodput model (rk_job.goodput), as Sia estimates it (Jayaram
 * Subramanya et al., SOSP 2023, §3.3 and §4; artifact sia-simulator/sia.py
 * _compute_goodputs_v2, job.py, cluster.py, run with --project_throughputs
 * --share_max_replicas as run_experiment.sh does).
 *
 * GOODPUT(type k, nodes, replicas) = max over per-GPU batch m and
 * accumulation s of THROUGHPUT_k x EFFICIENCY (Pollux, OSDI'21, eq. 1;
 * rk_goodput_optimize over the type's throughput model perf[k], the job's
 * gradient statistics at its current progress and its batch limits). The
 * best (m, s) goes with the configuration to the decision.
 *
 * Bootstrapping. Sia does not know a new job's scaling. It profiles one GPU
 * of every type when the job arrives, and learns a type's multi-GPU model
 * from the job's own iterations there. So:
 *   - one replica, on any type: that type's model (the arrival profile);
 *   - more replicas on a type the job has run on: that type's model as Sia
 *     has fitted it from what the job ran there (known(): sync terms it has
 *     not measured at the fit's floor, so perfect scaling until a
 *     multi-GPU configuration has been observed);
 *   - more replicas on a type it has not run on: the goodput of the same
 *     replicas on the first type (in the job's type order) it has run on,
 *     with that type's node size, times the ratio of the two types' one-GPU
 *     throughputs at the largest local batch (the artifact's
 *     cluster_throughput_ratios), batch choice included;
 *   - never more than max(2 x the most replicas it has run with on any type,
 *     1) replicas (Pollux's exploration bound, shared across types), so a job
 *     that has not run yet is offered one GPU of each type, priced by its
 *     profiles; a job whose range starts higher (min_gpus) is offered its
 *     smallest size, priced by the arrival profile scaled perfectly.
 * Once the job has run on a type the projection there gives way to the
 * type's own model. What the job has run is sia_seen.c's. The driver's fit
 * of a type's profile, with the unmeasured terms pinned, stands for Sia's
 * online fit of the job's iterations there (the policy sees no step times):
 * the terms a run has measured are the profile's, where Sia's are as good as
 * the points it has measured, and the compute terms are known from the
 * first run (Pollux pins alpha_c while one local batch has been seen).
 */
#include "policy/sia/sia_internal.h"

#include "rubick/error.h"
#include "rubick/policy.h"

#include <math.h>
#include <string.h>

/* One 64-bit word mixed into h (a multiply and a shift, as sia_cache.c's key hash). */
static uint64_t mix(uint64_t h, uint64_t x)
{
	h = (h ^ x) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

static uint64_t mix_double(uint64_t h, double x)
{
	uint64_t w;
	memcpy(&w, &x, sizeof(w));
	return mix(h, w);
}

/* A GPU type name, eight bytes at a time (zero-padded), then its length. */
static uint64_t mix_name(uint64_t h, const char *name)
{
	size_t n = strnlen(name, RK_GPU_TYPE_MAX);
	for (size_t i = 0; i < n; i += 8) {
		uint64_t w = 0;
		memcpy(&w, name + i, n - i < 8 ? n - i : 8);
		h = mix(h, w);
	}
	return mix(h, n);
}

void sia_gp_key_init(struct sia_gp_key *k, const struct sia_seen *seen, const struct rk_job *j)
{
	memset(k, 0, sizeof(*k));
	if (!sia_gp_on(j))
		return;
	const struct rk_job_goodput *gp = j->goodput;
	int n = gp->n_types < RK_JOB_GOODPUT_TYPES ? gp->n_types : RK_JOB_GOODPUT_TYPES;
	k->sqr = gp->grad.sqr;
	k->var = gp->grad.var;
	/* Field by field (the driver's padding bytes are not ours to hash), a
	 * word at a time: every job of every round is keyed. */
	uint64_t h = 0x9e3779b97f4a7c15ull;
	h = mix_double(h, gp->limits.init_batch);
	h = mix_double(h, gp->limits.max_batch);
	h = mix_double(h, gp->limits.min_local);
	h = mix_double(h, gp->limits.max_local);
	h = mix(h, gp->limits.accumulation ? 1 : 0);
	for (int i = 0; i < n; i++) {
		const struct rk_goodput_perf *p = &gp->perf[i];
		h = mix_name(h, gp->gpu_type[i]);
		const double f[7] = {p->alpha_c, p->beta_c, p->alpha_n, p->beta_n,
				     p->alpha_r, p->beta_r, p->gamma};
		for (int t = 0; t < 7; t++)
			h = mix_double(h, f[t]);
	}
	k->perf_sig = h | 1; /* never 0: 0 is "no goodput model" */
	sia_seen_get(seen, j->id, &k->seen);
	uint32_t types = n < 32 ? (1u << n) - 1 : ~0u;
	k->seen.ran &= types;
	k->seen.multi_node &= types;
	k->seen.one_node &= types;
	k->seen.over2 &= types;
	/* Exploration: twice the most it has run with, never below what its
	 * range forces (the artifact's rigid jobs run their own size). */
	int lo, hi, width = j->req_plan.tp * j->req_plan.pp;
	rk_job_gpu_range(j, &lo, &hi);
	int floor_rep = width > 0 ? (lo + width - 1) / width : 1;
	int m = 2 * k->seen.max_replicas;
	if (m < 1)
		m = 1;
	k->max_replicas = m > floor_rep ? m : floor_rep;
}

static int type_index(const struct rk_job_goodput *gp, const char *name)
{
	for (int i = 0; i < gp->n_types && i < RK_JOB_GOODPUT_TYPES; i++)
		if (!strncmp(gp->gpu_type[i], name, RK_GPU_TYPE_MAX))
			return i;
	return -1;
}

/* One-GPU throughput of perf at the largest local batch (samples/s), 0 if none. */
static double one_gpu_sps(const struct rk_goodput_perf *p, const struct rk_goodput_limits *lim)
{
	double t = 0;
	if (rk_goodput_throughput(p, 1, 1, lim->max_local, 0, &t) || !(t > 0))
		return 0;
	return t;
}

/*
 * Type x's model as Sia knows it: Pollux's fit pins at its floor every term
 * the job's runs there have not measured (fit_perf_params; rk_goodput_fit):
 * inter-node sync without a multi-node run, intra-node sync without a
 * one-node multi-GPU run, their growth without a run of more than two
 * replicas. So until it has run on several GPUs of a type, Sia expects the
 * job to scale perfectly there.
 */
static struct rk_goodput_perf known(const struct rk_job_goodput *gp, const struct sia_gp_key *gk,
				    int x)
{
	struct rk_goodput_perf p = gp->perf[x];
	uint32_t bit = 1u << x;
	if (!(gk->seen.multi_node & bit))
		p.alpha_n = p.beta_n = SIA_FIT_FLOOR;
	if (!(gk->seen.one_node & bit))
		p.alpha_r = p.beta_r = SIA_FIT_FLOOR;
	if (!(gk->seen.over2 & bit))
		p.beta_n = p.beta_r = SIA_FIT_FLOOR;
	return p;
}

int sia_gp_price(const struct rk_job *j, const struct sia_gp_key *gk,
		 const struct sia_type *types, int n_types, const struct sia_cfg *cf, int replicas,
		 struct rk_goodput_choice *out)
{
	const struct rk_job_goodput *gp = j->goodput;
	int k = type_index(gp, types[cf->type].name);
	if (k < 0 || replicas < 1 || replicas > gk->max_replicas)
		return RK_EINFEASIBLE; /* no profile of the type, or not explored yet */
	if (replicas == 1) /* the arrival profile: no sync to know */
		return rk_goodput_optimize(&gp->perf[k], &gp->grad, &gp->limits, 1, 1, out);
	if ((gk->seen.ran & (1u << k)) || !gk->seen.ran) {
		/* Its fit there; or, where it has run nowhere (a size its range
		 * forces), the arrival profile scaled perfectly. */
		struct rk_goodput_perf p = known(gp, gk, k);
		return rk_goodput_optimize(&p, &gp->grad, &gp->limits, cf->nodes, replicas, out);
	}
	/* Project from the first type the job has run on. */
	int n = gp->n_types < RK_JOB_GOODPUT_TYPES ? gp->n_types : RK_JOB_GOODPUT_TYPES, s = 0;
	while (s < n && !(gk->seen.ran & (1u << s)))
		s++;
	if (s >= n)
		return RK_EINFEASIBLE;
	int nodes = cf->nodes;
	for (int t = 0; t < n_types; t++)
		if (!strncmp(types[t].name, gp->gpu_type[s], RK_GPU_TYPE_MAX) && types[t].node_gpus > 0)
			nodes = (cf->gpus + types[t].node_gpus - 1) / types[t].node_gpus;
	if (nodes > replicas)
		nodes = replicas;
	double to = one_gpu_sps(&gp->perf[k], &gp->limits);
	double from = one_gpu_sps(&gp->perf[s], &gp->limits);
	if (!(to > 0) || !(from > 0))
		return RK_EINFEASIBLE;
	struct rk_goodput_choice c;
	struct rk_goodput_perf p = known(gp, gk, s);
	int rc = rk_goodput_optimize(&p, &gp->grad, &gp->limits, nodes, replicas, &c);
	if (rc)
		return rc;
	c.goodput *= to / from;
	*out = c;
	return RK_OK;
}
