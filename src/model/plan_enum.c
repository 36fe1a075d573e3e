/*
 * The plan space of one job (docs/references.md §1.2): every DP-family and 3D plan
 * for a model, a global batch and a placement, filtered by the memory model.
 * Unlike the Rubick artifact, whose feasibility is a hand-measured table per
 * model (max_dp_atom_bsz, avail_placement), feasibility here comes from the
 * model's structure (memory.h), so new models and GPU sizes need no table.
 */
#include "rubick/memory.h"
#include "rubick/model.h"
#include "rubick/plan.h"

/* ZeRO stage and offload combinations of the DP family, in enumeration order:
 * plain DP, ZeRO-1/2/3, and ZeRO-Offload on stage 2 (Ren et al. 2021) and 3. */
static const struct {
	int zero, offload;
} dp_modes[] = {{0, 0}, {1, 0}, {2, 0}, {2, 1}, {3, 0}, {3, 1}};

struct sink {
	const struct rk_model *model;
	const struct rk_placement *pl;
	int64_t gpu_mem_mb, host_mem_mb;
	struct rk_plan *out;
	size_t cap, count;
};

static int emit(struct sink *s, const struct rk_plan *p)
{
	int rc = rk_memory_check(s->model, p, s->pl, s->gpu_mem_mb, s->host_mem_mb, NULL, NULL);
	if (rc == RK_EINFEASIBLE)
		return RK_OK;
	if (rc)
		return rc;
	if (s->count < s->cap)
		s->out[s->count] = *p;
	s->count++;
	return RK_OK;
}

/* Every gc and mb*ga == per_replica split of a (dp, tp, pp, zero, offload) shape. */
static int emit_splits(struct sink *s, struct rk_plan shape, int per_replica)
{
	for (int gc = 0; gc <= 1; gc++) {
		for (int mb = 1; mb <= per_replica; mb++) {
			if (per_replica % mb)
				continue;
			struct rk_plan p = shape;
			p.gc = gc;
			p.mb = mb;
			p.ga = per_replica / mb;
			int rc = emit(s, &p);
			if (rc)
				return rc;
		}
	}
	return RK_OK;
}

static int tp_fits_nodes(const struct rk_placement *pl, int tp)
{
	for (int i = 0; i < pl->n_nodes; i++)
		if (pl->gpus[i] % tp)
			return 0;
	return 1;
}

int rk_plan_enumerate(const struct rk_model *model, int global_batch,
		      const struct rk_placement *pl, int64_t gpu_mem_mb, int64_t host_mem_mb,
		      struct rk_plan *out, size_t cap, size_t *count, struct rk_error *err)
{
	if (!model || !pl || !count || (cap > 0 && !out))
		return rk_error_set(err, RK_EINVAL, "plan enumeration: missing argument");
	if (global_batch < 1)
		return rk_error_set(err, RK_EINVAL, "global batch must be >= 1, got %d",
				    global_batch);
	if (pl->n_nodes < 1 || pl->n_nodes > RK_PLACEMENT_MAX_NODES)
		return rk_error_set(err, RK_EINVAL, "placement has %d nodes (need 1..%d)",
				    pl->n_nodes, RK_PLACEMENT_MAX_NODES);
	for (int i = 0; i < pl->n_nodes; i++)
		if (pl->gpus[i] < 1)
			return rk_error_set(err, RK_EINVAL, "placement: node %d has %d GPUs", i + 1,
					    pl->gpus[i]);
	if (gpu_mem_mb < 1 || host_mem_mb < 0)
		return rk_error_set(err, RK_EINVAL, "memory limits must be positive");
	/* Reject a malformed model once, with its message, not per plan. */
	struct rk_plan probe = {1, 1, 1, 1, 1, 0, 0, 0};
	int rc = rk_memory_estimate(model, &probe, NULL, err);
	if (rc)
		return rc;

	struct sink s = {model, pl, gpu_mem_mb, host_mem_mb, out, cap, 0};
	int g = rk_placement_total(pl);

	/* DP family: every GPU one replica. */
	if (global_batch % g == 0) {
		for (size_t m = 0; m < sizeof(dp_modes) / sizeof(dp_modes[0]); m++) {
			struct rk_plan shape = {g, 1, 1, 0, 0, 0, dp_modes[m].zero,
						dp_modes[m].offload};
			if ((rc = emit_splits(&s, shape, global_batch / g)))
				return rc;
		}
	}
	/* 3D (Megatron): pp stages of tp-wide groups, no ZeRO. tp must divide the
	 * heads (attention is split by head) and every node's GPUs (groups stay on
	 * NVLink); pp must divide the layers (even stages). */
	if (model->allow_3d) {
		for (int pp = 1; pp <= g; pp++) {
			if (g % pp || model->layers % pp)
				continue;
			for (int tp = 1; tp <= g / pp; tp++) {
				if ((g / pp) % tp || (pp == 1 && tp == 1))
					continue;
				if (model->heads % tp || !tp_fits_nodes(pl, tp))
					continue;
				int dp = g / (pp * tp);
				if (global_batch % dp)
					continue;
				struct rk_plan shape = {dp, tp, pp, 0, 0, 0, 0, 0};
				if ((rc = emit_splits(&s, shape, global_batch / dp)))
					return rc;
			}
		}
	}
	*count = s.count;
	return RK_OK;
}
