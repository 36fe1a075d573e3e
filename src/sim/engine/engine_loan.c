/*
 * Capacity loaning in the simulator (docs/aryl.md; docs/references.md
 * §2.2-2.3). Nodes of pool RK_POOL_LOANED form the inference cluster. The
 * number of them that may be on loan at time t is
 *     avail(t) = n_inference - max { need(u) : t <= u <= t + deadline }
 * (clamped at 0): a server is only lent while inference will not need it
 * within the reclaim deadline, so a reclaim notice always comes a deadline
 * ahead of the need and the server is back in time. avail changes only at
 * series samples and a deadline before them; those instants are precomputed.
 * Lending brings the lowest-numbered down servers up; reclaiming asks the
 * policy's hook (or the §2.3 greedy) which servers to return, applies its
 * decisions like a round's, preempts anything still on them and takes them
 * down.
 */
#include "sim/engine/engine_internal.h"

#include "rubick/aryl.h"

#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int sim_loan_init(struct sim *s, struct rk_error *err)
{
	const struct rk_load_series *ls = s->cfg.inference;
	if (!ls)
		return 0;
	if (s->cfg.sharing)
		return rk_error_set(err, RK_EINVAL, "--inference: capacity loaning does not combine "
				    "with GPU sharing");
	if (s->cfg.reclaim_deadline_ms < 0)
		return rk_error_set(err, RK_ERANGE, "--reclaim-deadline: must be >= 0 (got %lld ms)",
				    (long long)s->cfg.reclaim_deadline_ms);
	if (ls->n < 1)
		return rk_error_set(err, RK_EINVAL, "--inference: empty load series");
	if (rk_cluster_copy(&s->live, s->cluster))
		return rk_error_set(err, RK_ENOMEM, "simulator: out of memory");
	int n_inf = 0;
	for (int i = 0; i < s->live.n_nodes; i++)
		if (s->live.nodes[i].pool == RK_POOL_LOANED) {
			n_inf++;
			s->live.nodes[i].up = 0; /* lent only when the series allows */
		}
	if (n_inf == 0)
		return rk_error_set(err, RK_EINVAL, "--inference: the cluster has no inference "
				    "servers (add a group with pool=loaned)");
	int64_t start = s->res.start_ms, D = s->cfg.reclaim_deadline_ms;
	size_t m = (size_t)ls->n * 2 + 1;
	int64_t *cand = malloc(m * sizeof *cand);
	s->loan_t = malloc(m * sizeof *s->loan_t);
	s->loan_avail = malloc(m * sizeof *s->loan_avail);
	if (!cand || !s->loan_t || !s->loan_avail) {
		free(cand);
		return rk_error_set(err, RK_ENOMEM, "simulator: out of memory");
	}
	int nc = 0;
	cand[nc++] = start;
	for (int i = 0; i < ls->n; i++) {
		cand[nc++] = start + ls->t_ms[i];
		cand[nc++] = start + ls->t_ms[i] - D > start ? start + ls->t_ms[i] - D : start;
	}
	qsort(cand, (size_t)nc, sizeof *cand, cmp_i64);
	int last = -1, j0 = 0;
	for (int c = 0; c < nc; c++) {
		if (c > 0 && cand[c] == cand[c - 1])
			continue;
		int64_t t = cand[c] - start;
		/* max need over [t, t + D]: the sample in force at t, then those inside. */
		int need = rk_load_series_at(ls, t);
		while (j0 < ls->n && ls->t_ms[j0] <= t)
			j0++;
		for (int j = j0; j < ls->n && ls->t_ms[j] <= t + D; j++)
			if (ls->need[j] > need)
				need = ls->need[j];
		int avail = n_inf - need > 0 ? n_inf - need : 0;
		if (avail != last) {
			s->loan_t[s->n_loan] = cand[c];
			s->loan_avail[s->n_loan++] = avail;
			last = avail;
		}
	}
	free(cand);
	s->loaned_since_ms = start;
	return 0;
}

void sim_loan_fini(struct sim *s)
{
	rk_cluster_fini(&s->live);
	free(s->loan_t);
	free(s->loan_avail);
	s->loan_t = NULL;
	s->loan_avail = NULL;
}

int64_t sim_loan_next(const struct sim *s)
{
	/* Loaning alone never keeps the simulation going once jobs are done. */
	if (s->next_loan >= s->n_loan || s->n_done + s->n_rejected == s->n)
		return INT64_MAX;
	return s->loan_t[s->next_loan];
}

static void node_capacity(struct sim *s, int node, int sign)
{
	const struct rk_node *nd = &s->live.nodes[node];
	s->cap.free_gpus[node] = sign > 0 ? nd->gpus : 0;
	s->cap.free_cpus[node] = sign > 0 ? nd->cpus : 0;
	s->cap.free_mem_mb[node] = sign > 0 ? nd->mem_mb : 0;
	s->cap.free_gpus_total += sign * nd->gpus;
	s->gpus_total += sign * nd->gpus;
	s->loaned_gpus += sign * nd->gpus;
}

void sim_loan_account(struct sim *s)
{
	s->res.loaned_gpu_s += (double)s->loaned_gpus * (double)(s->now_ms - s->loaned_since_ms) / 1000.0;
	s->loaned_since_ms = s->now_ms;
}

/* The policy's snapshot: active jobs, progress settled (as run_round). */
static int snapshot(struct sim *s)
{
	int m = 0;
	for (int i = 0; i < s->n_act; i++) {
		struct sjob *sj = &s->jobs[s->act[i]];
		if (sj->j.state == RK_JOB_DONE)
			continue;
		sim_settle(s, sj, s->now_ms);
		s->act[m] = s->act[i];
		s->snap[m] = &sj->j;
		m++;
	}
	s->n_act = m;
	return m;
}

static int reclaim(struct sim *s, const struct rk_policy_ops *p, void *pstate, int k,
		   struct rk_error *err)
{
	int m = snapshot(s);
	struct rk_sched_input in = {.now_ms = s->now_ms, .cluster = &s->live, .jobs = s->snap,
				    .n_jobs = m, .env = s->cfg.env, .seed = s->cfg.seed,
				    .quotas = s->cfg.quotas, .n_quotas = s->cfg.n_quotas};
	struct rk_reclaim_stats st;
	memset(&st, 0, sizeof st);
	rk_decisions_clear(&s->ds);
	rk_reclaim_fn hook = rk_policy_reclaim_hook(p);
	int rc = hook ? hook(pstate, &in, k, &s->ds, &st, err) : rk_aryl_reclaim(&in, k, &s->ds, &st, err);
	if (!rc && (st.n_servers != k || !st.servers))
		rc = rk_error_set(err, RK_EINTERNAL, "policy %s: reclaim returned %d of %d servers",
				  p->name, st.n_servers, k);
	for (int i = 0; !rc && i < st.n_servers; i++) {
		int nd = st.servers[i];
		if (nd < 0 || nd >= s->live.n_nodes || s->live.nodes[nd].pool != RK_POOL_LOANED ||
		    !s->live.nodes[nd].up)
			rc = rk_error_set(err, RK_EINVAL, "policy %s: reclaim chose node %d, not a "
					  "loaned server that is up", p->name, nd);
		for (int j = 0; !rc && j < i; j++)
			if (st.servers[j] == nd)
				rc = rk_error_set(err, RK_EINVAL, "policy %s: reclaim chose node %d twice",
						  p->name, nd);
	}
	if (!rc)
		rc = rk_decisions_validate(&in, &s->ds, p->name, err);
	if (!rc)
		rc = sim_apply_quotas(s, &in, p->name, err);
	if (!rc)
		rc = sim_apply(s, &s->ds, p->name, err);
	/* Forcible preemption at the deadline: whatever still holds a returned server. */
	rk_decisions_clear(&s->ds);
	for (int i = 0; !rc && i < s->n_act; i++) {
		struct rk_job *j = &s->jobs[s->act[i]].j;
		for (int a = 0; !rc && a < j->alloc.n; a++) {
			int on = 0;
			for (int q = 0; q < st.n_servers; q++)
				on |= j->alloc.shares[a].node == st.servers[q];
			if (on) {
				rc = rk_decisions_push(&s->ds, j->id, NULL, NULL);
				st.preemptions++;
				break;
			}
		}
	}
	if (!rc && s->ds.n)
		rc = sim_apply(s, &s->ds, p->name, err);
	if (!rc) {
		sim_loan_account(s);
		for (int i = 0; i < st.n_servers; i++) {
			node_capacity(s, st.servers[i], -1);
			s->live.nodes[st.servers[i]].up = 0;
		}
		s->res.servers_reclaimed += st.n_servers;
		s->res.reclaim_preemptions += st.preemptions;
		s->res.reclaim_scale_ins += st.scale_ins;
	}
	rk_reclaim_stats_fini(&st);
	if (rc)
		rk_error_prefix(err, "reclaim at t=%lld ms", (long long)s->now_ms);
	return rc;
}

int sim_loan_step(struct sim *s, const struct rk_policy_ops *p, void *pstate, int *changed,
		  struct rk_error *err)
{
	if (!s->cfg.inference || s->next_loan >= s->n_loan || s->loan_t[s->next_loan] != s->now_ms)
		return 0;
	int want = s->loan_avail[s->next_loan++];
	int up = 0;
	for (int i = 0; i < s->live.n_nodes; i++)
		up += s->live.nodes[i].pool == RK_POOL_LOANED && s->live.nodes[i].up;
	if (want == up)
		return 0;
	*changed = 1;
	s->dirty = 1;
	if (want < up)
		return reclaim(s, p, pstate, up - want, err);
	sim_loan_account(s);
	for (int i = 0; i < s->live.n_nodes && up < want; i++) {
		struct rk_node *nd = &s->live.nodes[i];
		if (nd->pool != RK_POOL_LOANED || nd->up)
			continue;
		nd->up = 1;
		node_capacity(s, i, +1);
		up++;
		s->res.servers_loaned++;
	}
	return 0;
}
