/*
 * SJF: shortest job first by its run time at the requested resources
 * (rk_job.est_duration_s, which drivers fill from the trace or the oracle);
 * jobs of unknown length go last in arrival order. Never preempts.
 */
#include "policy/classic/classic.h"

#include <stdlib.h>

#include <math.h>

static void sjf_key(const struct rk_job *job, int64_t now_ms, const void *opt,
		    struct classic_key *out)
{
	(void)now_ms;
	(void)opt;
	out->k1 = job->est_duration_s > 0 ? job->est_duration_s : INFINITY;
	out->k2 = job->submit_ms;
}

static const struct classic_spec spec = {"sjf", sjf_key, 0};

static int sjf_create(void **state, const char *options, struct rk_error *err)
{
	return classic_create_cache(state, options, err, spec.name);
}

static void sjf_destroy(void *state)
{
	classic_cache_fini(state);
	free(state);
}

static int sjf_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			struct rk_error *err)
{
	return classic_schedule(&spec, NULL, state, in, out, err);
}

const struct rk_policy_ops rk_policy_sjf = {
	.name = "sjf",
	.summary = "shortest job first (run time at the request); no preemption",
	.create = sjf_create,
	.destroy = sjf_destroy,
	.schedule = sjf_schedule,
	.flags = RK_POLICY_IDLE_NOOP | RK_POLICY_EVENT_DRIVEN,
};
