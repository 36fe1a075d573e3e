/*
 * The policy registry: a plain array of const vtables (like Linux scheduling
 * classes). To add a policy, declare its ops here and append it to the array
 * (docs/dev/write-a-policy.md: the interface, the three files, a worked example).
 */
#include "rubick/policy.h"

#include <string.h>

extern const struct rk_policy_ops rk_policy_fifo;
extern const struct rk_policy_ops rk_policy_sjf;
extern const struct rk_policy_ops rk_policy_srtf;
extern const struct rk_policy_ops rk_policy_tiresias;
extern const struct rk_policy_ops rk_policy_sia;
extern const struct rk_policy_ops rk_policy_gavel;
extern const struct rk_policy_ops rk_policy_gavel_ftf;
extern const struct rk_policy_ops rk_policy_gavel_tput;
extern const struct rk_policy_ops rk_policy_gavel_makespan;
extern const struct rk_policy_ops rk_policy_pollux;
extern const struct rk_policy_ops rk_policy_antman;
extern const struct rk_policy_ops rk_policy_synergy_fifo;
extern const struct rk_policy_ops rk_policy_synergy_srtf;
extern const struct rk_policy_ops rk_policy_rubick;
extern const struct rk_policy_ops rk_policy_rubick_plan_only;
extern const struct rk_policy_ops rk_policy_rubick_res_only;
extern const struct rk_policy_ops rk_policy_sjf_bsbf;
extern const struct rk_policy_ops rk_policy_sjf_ffs;
extern const struct rk_policy_ops rk_policy_sjf_bco;
extern const struct rk_policy_ops rk_policy_sjf_ff;
extern const struct rk_policy_ops rk_policy_sjf_bf;
extern const struct rk_policy_ops rk_policy_sjf_random;
extern const struct rk_policy_ops rk_policy_aryl;
extern const struct rk_policy_ops rk_policy_aryl_noloan;

static const struct rk_policy_ops *const registry[] = {
	&rk_policy_fifo,
	&rk_policy_sjf,
	&rk_policy_srtf,
	&rk_policy_tiresias,
	&rk_policy_sia,
	&rk_policy_gavel,
	&rk_policy_gavel_ftf,
	&rk_policy_gavel_tput,
	&rk_policy_gavel_makespan,
	&rk_policy_pollux,
	&rk_policy_antman,
	&rk_policy_synergy_fifo,
	&rk_policy_synergy_srtf,
	&rk_policy_rubick,
	&rk_policy_rubick_plan_only,
	&rk_policy_rubick_res_only,
	&rk_policy_sjf_bsbf,
	&rk_policy_sjf_ffs,
	&rk_policy_sjf_bco,
	&rk_policy_sjf_ff,
	&rk_policy_sjf_bf,
	&rk_policy_sjf_random,
	&rk_policy_aryl,
	&rk_policy_aryl_noloan,
};

const struct rk_policy_ops *rk_policy_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++)
		if (!strcmp(registry[i]->name, name))
			return registry[i];
	return NULL;
}

const struct rk_policy_ops *const *rk_policy_list(int *n)
{
	*n = (int)(sizeof(registry) / sizeof(registry[0]));
	return registry;
}
