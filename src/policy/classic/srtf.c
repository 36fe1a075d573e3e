/*
 * SRTF: shortest remaining time first, preemptive. Remaining time is the run
 * time at the request times the fraction of iterations left
 * (classic_remaining_s); a shorter arrival preempts longer running jobs when
 * it needs their GPUs (classic.c, preemptive round).
 *
 * Options: placement=MODE (classic.h, consolidated by default);
 * by=gpu-time orders by remaining GPU-time (remaining time x requested GPUs),
 * the SRSF of the Tiresias and Muri simulators (`--schedule=shortest-gpu`);
 * by=time (default) is their `shortest`; repack=on re-places every job at
 * every round in priority order, as their `shortest` does (classic.c).
 */
#include "policy/classic/classic.h"
#include "policy/common/place_opts.h"

#include <stdlib.h>
#include <string.h>

struct srtf {
	int by_gpu_time; /* 1 = remaining time x GPUs (SRSF) */
	struct classic_cache cache;
};

static void srtf_key(const struct rk_job *job, int64_t now_ms, const void *opt,
		     struct classic_key *out)
{
	const struct srtf *s = opt;
	(void)now_ms;
	out->k1 = classic_remaining_s(job);
	if (s && s->by_gpu_time)
		out->k1 *= job->req_gpus > 0 ? job->req_gpus : 1;
	out->k2 = job->submit_ms;
}

static const struct classic_spec spec = {"srtf", srtf_key, 1};

static int srtf_opt(void *ctx, const char *key, const char *v, struct rk_error *err)
{
	struct srtf *s = ctx;
	if (!strcmp(key, "repack")) {
		if (strcmp(v, "on") && strcmp(v, "off"))
			return rk_error_set(err, RK_EINVAL, "policy srtf: repack=%s: must be 'on' or 'off'",
					    v);
		s->cache.repack = !strcmp(v, "on");
		return 0;
	}
	if (strcmp(key, "by"))
		return 1;
	if (!strcmp(v, "time"))
		s->by_gpu_time = 0;
	else if (!strcmp(v, "gpu-time"))
		s->by_gpu_time = 1;
	else
		return rk_error_set(err, RK_EINVAL,
		                    "policy srtf: by=%s: must be 'time' or 'gpu-time'", v);
	return 0;
}

static int srtf_create(void **state, const char *options, struct rk_error *err)
{
	*state = NULL;
	struct srtf *s = calloc(1, sizeof(*s));
	if (!s)
		return rk_error_set(err, RK_ENOMEM, "policy srtf: out of memory");
	s->cache.mode = CLASSIC_PLACE_DEFAULT;
	int rc = rk_place_opts_parse(options, spec.name, &s->cache.mode, srtf_opt, s, "by, repack", err);
	if (rc) {
		free(s);
		return rc;
	}
	*state = s;
	return 0;
}

static void srtf_destroy(void *state)
{
	struct srtf *s = state;
	if (s)
		classic_cache_fini(&s->cache);
	free(s);
}

static int srtf_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			 struct rk_error *err)
{
	struct srtf *s = state;
	return classic_schedule(&spec, s, &s->cache, in, out, err);
}

const struct rk_policy_ops rk_policy_srtf = {
	.name = "srtf",
	.summary = "shortest remaining time first; preempts longer jobs for shorter ones",
	.create = srtf_create,
	.destroy = srtf_destroy,
	.schedule = srtf_schedule,
	.flags = RK_POLICY_IDLE_NOOP | RK_POLICY_EVENT_DRIVEN,
};
