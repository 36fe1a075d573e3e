/*
 * The Rubick artifact's plan names (traces/rubick/README.md, docs/references.md
 * §1.2) read into canonical plans, so the measured tables can be replayed.
 */
#include "rubick/memory.h"
#include "rubick/model.h"
#include "rubick/plan.h"

#include <string.h>

/*
 * Largest divisor of per_replica whose plan fits gpu_mem_mb: the artifact's
 * max_dp_atom_bsz tables record exactly this, measured per model; mb = 1 when
 * none fits (the caller's memory check then reports the plan infeasible).
 */
static int largest_fitting_mb(const struct rk_model *m, struct rk_plan p, int per_replica,
			      int64_t gpu_mem_mb, struct rk_error *err)
{
	for (int mb = per_replica; mb >= 1; mb--) {
		if (per_replica % mb)
			continue;
		p.mb = mb;
		p.ga = per_replica / mb;
		int rc = rk_memory_check(m, &p, NULL, gpu_mem_mb, RK_MEM_UNLIMITED, NULL, err);
		if (rc == RK_OK)
			return mb;
		if (rc != RK_EINFEASIBLE)
			return rc;
	}
	rk_error_clear(err);
	return 1;
}

static const struct {
	const char *text;
	int zero, offload, gc, tp_all, fixed_mb; /* fixed_mb: mb = B/dp, ga = 1 */
} dp_names[] = {
	{"ga", 0, 0, 0, 0, 0},
	{"gc", 0, 0, 1, 0, 1},
	{"zero-dp", 2, 0, 0, 0, 0},
	{"zero-offload", 2, 1, 0, 0, 0},
	{"zero-offload+gc", 2, 1, 1, 0, 0},
	{"tp+ga", 0, 0, 0, 1, 0},
};

int rk_plan_from_artifact(const char *text, const char *name, const struct rk_model *model,
			  int global_batch, const struct rk_placement *pl, int64_t gpu_mem_mb,
			  struct rk_plan *out, struct rk_error *err)
{
	if (!name)
		name = "exec_plan";
	if (!text || !model || !pl || !out)
		return rk_error_set(err, RK_EINVAL, "%s: missing argument", name);
	int g = rk_placement_total(pl);
	if (g < 1)
		return rk_error_set(err, RK_EINVAL, "%s: empty placement", name);
	if (global_batch < 1)
		return rk_error_set(err, RK_EINVAL, "%s: global batch must be >= 1, got %d", name,
				    global_batch);
	struct rk_plan p = {0};
	size_t n = strlen(text);
	if (n == 3 && text[0] >= '1' && text[0] <= '9' && text[1] >= '1' && text[1] <= '9' &&
	    text[2] >= '1' && text[2] <= '9') {
		p.pp = text[0] - '0';
		p.tp = text[1] - '0';
		p.dp = text[2] - '0';
		if (p.pp * p.tp * p.dp != g)
			return rk_error_set(err, RK_EINVAL,
					    "%s:1:1: '%s' means pp=%d,tp=%d,dp=%d = %d GPUs, but the "
					    "placement has %d",
					    name, text, p.pp, p.tp, p.dp, p.pp * p.tp * p.dp, g);
		if (global_batch % p.dp)
			return rk_error_set(err, RK_EINVAL,
					    "%s:1:3: dp=%d does not divide the global batch %d", name,
					    p.dp, global_batch);
		/* Megatron's micro-batch 1: the most micro-batches per pipeline flush. */
		p.mb = 1;
		p.ga = global_batch / p.dp;
		if (p.tp == 1 && p.pp == 1)
			p.zero = 0;
		*out = p;
		return RK_OK;
	}
	for (size_t i = 0; i < sizeof(dp_names) / sizeof(dp_names[0]); i++) {
		if (strcmp(text, dp_names[i].text))
			continue;
		p.zero = dp_names[i].zero;
		p.offload = dp_names[i].offload;
		p.gc = dp_names[i].gc;
		p.pp = 1;
		if (dp_names[i].tp_all) {
			if (pl->n_nodes != 1)
				return rk_error_set(err, RK_EINVAL,
						    "%s: '%s' runs tensor parallel inside one node, "
						    "but the placement spans %d nodes",
						    name, text, pl->n_nodes);
			p.tp = g;
			p.dp = 1;
		} else {
			p.tp = 1;
			p.dp = g;
		}
		if (global_batch % p.dp)
			return rk_error_set(err, RK_EINVAL,
					    "%s: '%s' on %d GPUs: the global batch %d does not split "
					    "evenly over %d replicas",
					    name, text, g, global_batch, p.dp);
		int per = global_batch / p.dp;
		if (dp_names[i].fixed_mb) {
			p.mb = per;
			p.ga = 1;
		} else {
			int mb = largest_fitting_mb(model, p, per, gpu_mem_mb, err);
			if (mb < 0)
				return mb;
			p.mb = mb;
			p.ga = per / mb;
		}
		*out = p;
		return RK_OK;
	}
	return rk_error_set(err, RK_EINVAL,
			    "%s:1:1: unknown plan '%s' (expected ga, gc, zero-dp, zero-offload, "
			    "zero-offload+gc, tp+ga or 3 digits PP TP DP such as 244)",
			    name, text);
}
