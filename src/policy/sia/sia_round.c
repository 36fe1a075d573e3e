/*
 * One round of the Sia baseline, the parts its quiet-round certificate
 * (sia_quiet.c) reruns as well as the round itself (sia.c): the variables of a
 * job with the restart factor, and the exact one-type solve with the hand-out
 * of each class's counts to its jobs. A leaf of the folder: it calls the row
 * cache (sia_cache.c) and the DP (sia_dp.c), never back into sia.c.
 */
#include "policy/sia/sia_round.h"

#include "rubick/error.h"

#include <stdint.h>
#include <stdlib.h>

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

double sia_restart_factor(const struct rk_job *j, int64_t now_ms, double penalty_s)
{
	double age_s = (double)(now_ms - j->submit_ms) / 1000.0;
	if (penalty_s <= 0 || age_s < penalty_s)
		return 1.0;
	double num = age_s - j->restarts * penalty_s;
	return num > 0 ? num / (age_s + penalty_s) : 0.0;
}

/*
 * Drop the configurations of job `ji` (vars first..n_var-1) that another of
 * its configurations of the same GPU type beats with no more GPUs: an optimal
 * solution never needs them (swapping in the dominating one frees GPUs and
 * improves the objective), and fewer binaries keep rounds fast.
 */
static void prune_dominated(struct sia_round *r, int ji, int first)
{
	int keep = first;
	for (int k = first; k < r->n_var; k++) {
		const struct sia_cfg *ck = &r->cfg[r->var[k].cfg];
		int dominated = 0;
		for (int m = first; m < r->n_var && !dominated; m++) {
			const struct sia_cfg *cm = &r->cfg[r->var[m].cfg];
			if (m == k || cm->type != ck->type || cm->gpus > ck->gpus)
				continue;
			double a = r->var[m].cost, b = r->var[k].cost;
			int better = r->o->p < 0 ? a < b : a > b;
			int tie = a == b && (cm->gpus < ck->gpus || m < k);
			dominated = better || tie;
		}
		if (!dominated)
			r->var[keep++] = r->var[k];
	}
	r->n_var = keep;
	r->n_job_var[ji] = keep - first;
}

/*
 * The valid configurations of job `ji`, their goodputs and costs: the row of
 * its request (from the cache, or built and cached), with the restart factor
 * on every configuration but the one it holds (sia_round.h).
 */
int sia_round_job_vars(struct sia_round *r, int ji, double rf)
{
	const struct rk_job *j = r->in->jobs[ji];
	struct sia_row_key key;
	sia_row_key_init(&key, r->o, r->in, r->seen, j);
	int n_row = 0, rc;
	const struct sia_row_var *row = sia_cache_find(r->cache, &key, &n_row);
	if (!row) {
		rc = RK_OK;
		if (r->n_cfg + 1 > r->cap_row) {
			struct sia_row_var *nr = realloc(r->row, ((size_t)r->n_cfg + 1) * sizeof(*nr));
			if (!nr)
				return RK_ENOMEM;
			r->row = nr;
			r->cap_row = r->n_cfg + 1;
		}
		sia_row_build(r->o, r->in, r->types, r->n_types, r->cfg, r->n_cfg, j, key.gpu_quota,
			      &key.gp, r->row, &n_row);
		if (!rc)
			rc = sia_cache_put(r->cache, &key, r->row, n_row);
		if (rc)
			return rc;
		row = r->row;
	}
	int first = r->n_var;
	r->first_var[ji] = first;
	if (r->cur[ji] < 0)
		rf = 1.0;
	else if (rf < 0)
		rf = sia_restart_factor(j, r->in->now_ms, r->o->restart_s);
	for (int k = 0; k < n_row; k++) {
		struct sia_var v = {.job = ji, .cfg = row[k].cfg, .g = row[k].g, .plan = row[k].plan,
				    .local_bsz = row[k].local_bsz, .accum_steps = row[k].accum_steps};
		if (v.g > r->g1[ji]) {
			r->g2[ji] = r->g1[ji];
			r->g1[ji] = v.g;
			r->g1_cfg[ji] = v.cfg;
		} else if (v.g > r->g2[ji]) {
			r->g2[ji] = v.g;
		}
		/* g x 1 is g: rows without the factor are the cached costs, bit for bit */
		v.cost = v.cfg != r->cur[ji] && rf != 1.0 ? sia_cost(r->o, v.g * rf) : row[k].cost;
		rc = push_var(r, &v);
		if (rc)
			return rc;
	}
	r->n_job_var[ji] = r->n_var - first;
	prune_dominated(r, ji, first);
	return RK_OK;
}

/*
 * Hand each class's counts (count[k] jobs take var k) to its members in FIFO
 * order, larger configurations to earlier jobs (vars of a class are
 * contiguous). Consumes `count`.
 */
void sia_round_hand_out(struct sia_round *r, int *count)
{
	for (int ji = 0; ji < r->in->n_jobs; ji++) {
		if (r->rep[ji] != ji || r->n_job_var[ji] == 0)
			continue;
		int f = r->first_var[ji], nv = r->n_job_var[ji], next = 0;
		for (;;) {
			int best = -1;
			for (int k = 0; k < nv; k++)
				if (count[f + k] > 0 &&
				    (best < 0 || r->cfg[r->var[f + k].cfg].gpus >
							 r->cfg[r->var[f + best].cfg].gpus))
					best = k;
			if (best < 0)
				break;
			for (; count[f + best] > 0 && next < r->csize[ji]; count[f + best]--)
				r->choice[r->members[r->first_member[ji] + next++]] = f + best;
			count[f + best] = 0;
		}
	}
}

/*
 * One GPU type: the exact optimum by dynamic programming (sia_dp.c). Returns
 * 0 when it solved the round, 1 when the caller should use GLPK (several
 * types, or a table too large), or RK_ENOMEM.
 */
int sia_round_solve_one_type(struct sia_round *r)
{
	if (r->n_types != 1)
		return 1;
	int n = r->in->n_jobs, n_cls = 0, rc;
	struct sia_dp_class *cls = malloc((size_t)n * sizeof(*cls));
	int *w = malloc((size_t)r->n_var * sizeof(*w));
	int *count = malloc((size_t)r->n_var * sizeof(*count));
	double *b = malloc((size_t)r->n_var * sizeof(*b));
	if (!cls || !w || !count || !b) {
		rc = RK_ENOMEM;
		goto out;
	}
	for (int ji = 0; ji < n; ji++)
		if (r->rep[ji] == ji && r->n_job_var[ji] > 0)
			cls[n_cls++] = (struct sia_dp_class){r->first_var[ji], r->n_job_var[ji],
							     r->csize[ji]};
	for (int k = 0; k < r->n_var; k++) {
		w[k] = r->cfg[r->var[k].cfg].gpus;
		b[k] = sia_var_benefit(r, k);
	}
	rc = sia_dp_solve(cls, n_cls, w, b, r->types[0].total_gpus, count);
	if (rc == RK_ERANGE)
		rc = 1;
	else if (rc == RK_OK)
		sia_round_hand_out(r, count);
out:
	free(cls);
	free(w);
	free(count);
	free(b);
	return rc;
}
