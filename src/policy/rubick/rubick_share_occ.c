/*
 * Rubick with option sharing=on (rubick_share.c): the round's view
 * of the GPUs. Who holds each GPU (the snapshot's occupancy plus the pairs
 * started this round), how much room a node could give a newcomer, and how
 * fast each job runs there: the interference factors of the driver's table
 * (rk_sched_input.xi), looked up as sjf-bsbf does, and each job's present
 * factor and real remaining time. Calls nothing else of the policy.
 */
#include "policy/rubick/rubick_share_internal.h"

#include <math.h>
#include <stdint.h>

/*
 * GPUs node n could give a newcomer: those nobody holds (at most the
 * capacity's free count) plus those one job that may be a partner holds
 * alone. Starts and pairs only lower it within a round: jobs the round
 * changed stay in the occupancy as they were and are no partners.
 */
int rubick_share_room(const struct round *R, int n)
{
	const struct rk_node *nd = &R->in->cluster->nodes[n];
	int free = 0, single = 0;
	for (int q = 0; nd->up && q < nd->gpus; q++) {
		int h[2], cnt = holders(R->sh, n, q, h);
		free += cnt == 0;
		single += cnt == 1 && may_partner(&R->j[h[0]]);
	}
	return (free < R->cap.free_gpus[n] ? free : R->cap.free_gpus[n]) + single;
}

void rubick_share_room_update(struct round *R)
{
	R->sh->max_room = 0;
	for (int n = 0; n < R->in->cluster->n_nodes; n++) {
		int room = rubick_share_room(R, n);
		R->sh->max_room = room > R->sh->max_room ? room : R->sh->max_room;
	}
}

static const char *type_of(const struct rk_job *j)
{
	return j->job_type[0] ? j->job_type : j->model->name;
}

/* xi of job x (gx GPUs) next to job y (gy GPUs) on GPUs of type `gt`. */
double rubick_share_xi(const struct round *R, const char *gt, const struct rk_job *x, int gx,
                       const struct rk_job *y, int gy)
{
	struct rk_xi_pairs *p = &R->st->share_st->pairs;
	int sx = rk_xi_pairs_side(p, gt, type_of(x), gx);
	int sy = rk_xi_pairs_side(p, gt, type_of(y), gy);
	if (sx >= 0 && sy >= 0)
		return rk_xi_pairs_get(p, R->in->xi, sx, sy);
	return rk_xi_lookup(R->in->xi, gt, type_of(x), gx, type_of(y), gy, NULL);
}

/*
 * Did the table measure x and y on one GPU of type `gt` (rk_xi_corun: 1 ran
 * together, -1 could not, 0 not measured)? A measurement decides whether the
 * pair fits, before the memory model of the stand-in models does, as the
 * driver checks it (rk_gpu_share_resolve) and sjf-bsbf places.
 */
int rubick_share_corun(const struct round *R, const char *gt, const struct rk_job *x, int gx,
                       const struct rk_job *y, int gy)
{
	if (!rk_xi_table_measures(R->in->xi, gt))
		return 0;
	struct rk_xi_pairs *p = &R->st->share_st->pairs;
	int sx = rk_xi_pairs_side(p, gt, type_of(x), gx);
	int sy = rk_xi_pairs_side(p, gt, type_of(y), gy);
	if (sx >= 0 && sy >= 0)
		return rk_xi_pairs_corun(p, R->in->xi, sx, sy);
	return rk_xi_corun(R->in->xi, gt, type_of(x), gx, type_of(y), gy);
}

/* Does every share of `a` name its GPUs? */
static int named(const struct rk_alloc *a)
{
	int all = 1;
	for (int s = 0; s < a->n; s++)
		all &= a->shares[s].gpu_mask != 0;
	return all;
}

/* Allocations of R->j into `o` (who = index): named ones first, then the rest
 * on GPUs nobody holds, their masks written back. */
int rubick_share_occ_fill(struct round *R, struct rk_gpu_occ *o, struct rk_error *err)
{
	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < R->n; k++) {
			struct rk_alloc *a = &R->j[k].now;
			if (a->n == 0 || named(a) != (pass == 0))
				continue;
			int rc = rk_gpu_occ_add(o, a, k, pass, err);
			if (rc) {
				rk_error_prefix(err, "rubick: job %lld (%s)",
				                (long long)R->j[k].job->id, R->j[k].job->name);
				return rc;
			}
		}
	return RK_OK;
}

/*
 * The factor job k runs at now: the largest xi over the jobs it shares a GPU
 * with, 1 alone (the engine's rule, engine_coloc.c share_factor).
 */
double rubick_share_factor(const struct round *R, int k)
{
	struct rubick_share_round *sh = R->sh;
	if (!isnan(sh->xnow[k]))
		return sh->xnow[k];
	const struct rk_cluster *c = R->in->cluster;
	const struct rk_alloc *al = &R->j[k].now;
	double x = 1.0;
	for (int s = 0; s < al->n; s++) {
		int n = al->shares[s].node;
		for (int g = 0; g < c->nodes[n].gpus; g++) {
			int h[2];
			if (!(al->shares[s].gpu_mask >> g & 1) || holders(sh, n, g, h) != 2)
				continue;
			int o = h[0] == k ? h[1] : h[0];
			double v = rubick_share_xi(R, c->nodes[n].gpu_type, R->j[k].job, R->j[k].g,
			                           R->j[o].job, R->j[o].g);
			x = v > x ? v : x;
		}
	}
	sh->xnow[k] = x;
	return x;
}

/* Seconds job k has left at what it holds, at the rate it runs at now. */
double rubick_share_left_s(const struct round *R, int k)
{
	const struct rj *r = &R->j[k];
	return remaining_s(r, r->g) * rubick_share_factor(R, k);
}

int rubick_share_holders(const struct round *R, int node, int g, int *h)
{
	return holders(R->sh, node, g, h);
}

void rubick_share_note_moved(struct round *R)
{
	R->sh->moved++;
}
