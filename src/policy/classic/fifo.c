/*
 * FIFO: jobs served in arrival order, gang-scheduled with their requested GPUs
 * and plan on a consolidated placement; never preempts. A job that does not
 * fit is skipped and later arrivals may start (see classic.c for why).
 */
#include "policy/classic/classic.h"

#include <stdlib.h>

static void fifo_key(const struct rk_job *job, int64_t now_ms, const void *opt,
		     struct classic_key *out)
{
	(void)now_ms;
	(void)opt;
	out->k1 = 0;
	out->k2 = job->submit_ms;
}

static const struct classic_spec spec = {"fifo", fifo_key, 0};

static int fifo_create(void **state, const char *options, struct rk_error *err)
{
	return classic_create_cache(state, options, err, spec.name);
}

static void fifo_destroy(void *state)
{
	classic_cache_fini(state);
	free(state);
}

static int fifo_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			 struct rk_error *err)
{
	return classic_schedule(&spec, NULL, state, in, out, err);
}

const struct rk_policy_ops rk_policy_fifo = {
	.name = "fifo",
	.summary = "first in, first out; gang, consolidated, requested plan; no preemption",
	.create = fifo_create,
	.destroy = fifo_destroy,
	.schedule = fifo_schedule,
	.flags = RK_POLICY_IDLE_NOOP | RK_POLICY_EVENT_DRIVEN,
};
