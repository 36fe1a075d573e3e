/*
 * SRTF: shortest remaining time first, preemptive. Remaining time is the run
 * time at the request times the fraction of iterations left
 * (classic_remaining_s); a shorter arrival preempts longer running jobs when
 * it needs their GPUs (classic.c, preemptive round).
 */
#include "classic.h"

#include <stdlib.h>

static void srtf_key(const struct rk_job *job, int64_t now_ms, const void *opt,
		     struct classic_key *out)
{
	(void)now_ms;
	(void)opt;
	out->k1 = classic_remaining_s(job);
	out->k2 = job->submit_ms;
}

static const struct classic_spec spec = {"srtf", srtf_key, 1};

static int srtf_create(void **state, const char *options, struct rk_error *err)
{
	return classic_create_cache(state, options, err, spec.name);
}

static void srtf_destroy(void *state)
{
	classic_cache_fini(state);
	free(state);
}

static int srtf_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			 struct rk_error *err)
{
	return classic_schedule(&spec, NULL, state, in, out, err);
}

const struct rk_policy_ops rk_policy_srtf = {
	.name = "srtf",
	.summary = "shortest remaining time first; preempts longer jobs for shorter ones",
	.create = srtf_create,
	.destroy = srtf_destroy,
	.schedule = srtf_schedule,
	.flags = RK_POLICY_IDLE_NOOP | RK_POLICY_EVENT_DRIVEN,
};
