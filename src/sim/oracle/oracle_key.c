/*
 * The canonical forms the oracle's files key their tables and answers by:
 * a model's name, a placement's node order, a plan's family (docs/references.md
 * §1.2). A leaf: the dispatch (oracle.c) and its parts call it, it calls none
 * of them.
 */
#include "sim/oracle/oracle_internal.h"

#include <ctype.h>
#include <stdio.h>

void oracle_model_key(const char *name, char *out, size_t cap)
{
	size_t n = 0;
	for (; name[n] && n + 1 < cap; n++)
		out[n] = (char)tolower((unsigned char)name[n]);
	out[n] = '\0';
	/* "llama7b" and "llama7" name the same zoo model (the artifact uses both). */
	if (n >= 2 && out[n - 1] == 'b' && isdigit((unsigned char)out[n - 2]))
		out[n - 1] = '\0';
}

void oracle_placement_canon(struct rk_placement *pl)
{
	for (int i = 1; i < pl->n_nodes; i++) {
		int v = pl->gpus[i], j = i;
		for (; j > 0 && pl->gpus[j - 1] < v; j--)
			pl->gpus[j] = pl->gpus[j - 1];
		pl->gpus[j] = v;
	}
}

int rk_oracle_plan_family(const struct rk_plan *plan, char *buf, size_t cap)
{
	if (!plan || !buf || cap < RK_ORACLE_FAMILY_MAX)
		return RK_EINVAL;
	if (plan->tp > 1 || plan->pp > 1) {
		/* 3D plans are named by their PP,TP,DP digits (§1.2, "244"). */
		if (plan->pp > 9 || plan->tp > 9 || plan->dp > 9 || plan->pp < 1 || plan->tp < 1 ||
		    plan->dp < 1)
			return RK_ERANGE;
		snprintf(buf, cap, "%d%d%d", plan->pp, plan->tp, plan->dp);
	} else if (plan->offload) {
		snprintf(buf, cap, "%s", plan->gc ? "zero-offload+gc" : "zero-offload");
	} else if (plan->zero > 0) {
		snprintf(buf, cap, "zero-dp");
	} else if (plan->gc) {
		snprintf(buf, cap, "gc");
	} else {
		snprintf(buf, cap, "ga");
	}
	return 0;
}
