/*
 * Co-location physics of the simulator (docs/sharing.md), behind
 * rk_sim_config.sharing and .contention:
 *  - GPU sharing: decisions are validated on a view of the cluster with two
 *    slots per GPU (rk_decisions_validate: CPUs, memory and plans as usual)
 *    and then GPU by GPU (rk_gpu_share_resolve: at most two jobs per GPU,
 *    memory of both fits); a sharing job runs at base / xi, xi from the
 *    interference table (docs/references.md §3.2);
 *  - network contention: a job on n >= 2 nodes pays the §4.2 ring term for
 *    the p - 1 other cross-node jobs on its busiest NIC, plus a per-extra-node
 *    overhead (docs/references.md §4.2). The oracle's own price is the job alone
 *    on its NICs (p = 1), so only the contention is added here.
 * After every change of who holds what, every holding job's rate is
 * re-evaluated and the completion of a running job whose rate changed is
 * rescheduled from its progress so far.
 */
#include "sim/engine/engine_internal.h"

#include "rubick/perf.h"
#include "rubick/sharing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bytes per gradient element when no performance environment says (fp32 ring). */
#define COLOC_GRAD_BYTES 4.0

int sim_coloc_init(struct sim *s, struct rk_error *err)
{
	if (!(s->cfg.contention_overhead_ms >= 0) || !isfinite(s->cfg.contention_overhead_ms))
		return rk_error_set(err, RK_ERANGE, "--contention-overhead: must be >= 0 (got %g "
				    "ms)", s->cfg.contention_overhead_ms);
	if (!s->cfg.sharing && !s->cfg.contention)
		return 0;
	s->hold = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof(*s->hold));
	s->hold_alloc = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof(*s->hold_alloc));
	s->hold_p = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof(*s->hold_p));
	if (!s->hold || !s->hold_alloc || !s->hold_p)
		return rk_error_set(err, RK_ENOMEM, "simulator: out of memory");
	if (!s->cfg.sharing)
		return 0;
	/* Two slots per GPU: the count-level checks then allow exactly one partner. */
	s->xi_memo = calloc(1, sizeof(*s->xi_memo));
	if (!s->xi_memo || rk_cluster_copy(&s->slots, s->cluster) ||
	    rk_gpu_occ_init(&s->occ, s->cluster))
		return rk_error_set(err, RK_ENOMEM, "simulator: out of memory");
	for (int i = 0; i < s->slots.n_nodes; i++)
		s->slots.nodes[i].gpus *= 2;
	return 0;
}

void sim_coloc_fini(struct sim *s)
{
	free(s->hold);
	free(s->hold_alloc);
	free(s->hold_p);
	free(s->xi_memo);
	rk_cluster_fini(&s->slots);
	if (s->occ.first)
		rk_gpu_occ_fini(&s->occ);
}

static const char *type_of(const struct rk_job *j)
{
	return j->job_type[0] ? j->job_type : j->model->name;
}

/* Largest xi of `j` over the jobs sharing any of its GPUs (1 when alone). */
static double share_factor(struct sim *s, int k)
{
	const struct rk_job *j = &s->jobs[s->hold[k]].j;
	int gj = rk_alloc_total_gpus(&j->alloc);
	double xi = 1.0;
	for (int i = 0; i < j->alloc.n; i++) {
		const struct rk_share *sh = &j->alloc.shares[i];
		for (int g = 0; g < s->cluster->nodes[sh->node].gpus; g++) {
			if (!(sh->gpu_mask >> g & 1))
				continue;
			int a, b;
			if (rk_gpu_occ_holders(&s->occ, sh->node, g, &a, &b) < 2)
				continue;
			const struct rk_job *o = &s->jobs[s->hold[a == k ? b : a]].j;
			double x = rk_xi_lookup_memo(s->xi_memo, s->cfg.xi,
						     s->cluster->nodes[sh->node].gpu_type, type_of(j),
						     gj, type_of(o), rk_alloc_total_gpus(&o->alloc));
			if (x > xi)
				xi = x;
		}
	}
	return xi;
}

/* §4.2 extra time (ms) of the p - 1 other cross-node jobs on j's busiest NIC. */
static double contention_ms(const struct sim *s, const struct rk_job *j, int p)
{
	if (j->alloc.n < 2 || p < 1)
		return 0;
	int g = rk_alloc_total_gpus(&j->alloc);
	double bytes = s->cfg.env ? s->cfg.env->grad_bytes : COLOC_GRAD_BYTES;
	double grad_gb = j->model->params * bytes / 1e9;
	double b_ex = INFINITY;
	for (int i = 0; i < j->alloc.n; i++)
		if (s->cluster->nodes[j->alloc.shares[i].node].net_gbps < b_ex)
			b_ex = s->cluster->nodes[j->alloc.shares[i].node].net_gbps;
	double ring_s = 2.0 * (g - 1) / g * grad_gb * (p - 1) / b_ex;
	return ring_s * 1000.0 + (j->alloc.n - 1) * s->cfg.contention_overhead_ms;
}

int sim_rerate(struct sim *s, struct rk_error *err)
{
	if (!s->cfg.sharing && !s->cfg.contention)
		return 0;
	int m = 0;
	for (int i = 0; i < s->n_act; i++) {
		struct sjob *sj = &s->jobs[s->act[i]];
		if (sj->j.alloc.n > 0 && sj->j.state != RK_JOB_DONE) {
			s->hold_alloc[m] = &sj->j.alloc;
			s->hold[m++] = s->act[i];
		}
	}
	int rc = 0;
	if (s->cfg.sharing) {
		rk_gpu_occ_clear(&s->occ);
		for (int k = 0; k < m && !rc; k++)
			rc = rk_gpu_occ_add(&s->occ, &s->jobs[s->hold[k]].j.alloc, k, 0, err);
		if (rc)
			return rk_error_set(err, RK_EINTERNAL, "simulator: GPU sharing: %s", err->msg);
		s->busy_gpus = s->occ.busy;
	}
	if (s->cfg.contention) {
		rc = rk_contention_degrees(s->hold_alloc, m, s->cluster->n_nodes, s->hold_p, err);
		if (rc)
			return rc;
	}
	for (int k = 0; k < m && !rc; k++) {
		struct sjob *sj = &s->jobs[s->hold[k]];
		double it = sj->base_iter_ms;
		if (s->cfg.sharing)
			it *= share_factor(s, k);
		if (s->cfg.contention)
			it += contention_ms(s, &sj->j, s->hold_p[k]);
		if (fabs(it - sj->iter_ms) <= 1e-12 * it)
			continue;
		if (sj->j.state == RK_JOB_RUNNING) {
			sim_settle(s, sj, s->now_ms);
			sj->iter_ms = it;
			sj->version++; /* the old completion is stale */
			rc = sim_start_running(s, s->hold[k], s->now_ms);
		} else {
			sj->iter_ms = it; /* a restarting job runs at this rate once ready */
		}
	}
	return rc;
}

int sim_coloc_check(struct sim *s, struct rk_error *err)
{
	int m = 0; /* scratch: vsnap, as snap is the kept active list */
	for (int i = 0; i < s->n; i++)
		if (s->jobs[i].j.alloc.n > 0)
			s->vsnap[m++] = &s->jobs[i].j;
	int rc = rk_gpu_share_audit_xi(s->cluster, s->cfg.xi, s->vsnap, m, err);
	if (rc)
		return rk_error_prefix(err, "check mode: t=%lld ms", (long long)s->now_ms);
	return 0;
}
