/*
 * Options and private state of the Rubick policy (rubick_internal.h):
 * "restart_s=SECONDS" (the restart delay the policy plans with),
 * "order=srtf|fifo" (queue order inside a class),
 * "guaranteed=keep|reconfigure" (may guaranteed jobs leave their request?) and
 * "quota=TENANT:GPUS/TENANT:GPUS..." (guaranteed-GPU quotas per tenant),
 * "sharing=on|off", "share_window=N" and "placement=spread|contention"
 * (composition with GPU sharing and contention-aware placement;
 * rubick_share.c, rubick_place.c), "quiet=on|off" (answer rounds that provably
 * decide nothing without running them, rubick_quiet.c; off: every round in full,
 * the same decisions, for tests).
 */
#include "policy/rubick/rubick_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- options --------------------------------------------------------------- */

static int parse_options(struct rubick_state *st, const char *options, struct rk_error *err)
{
	const char *kv = options ? options : "";
	while (*kv) {
		size_t len = strcspn(kv, ",");
		char item[512];
		if (len >= sizeof(item))
			return rk_error_set(err, RK_EINVAL, "rubick: option '%.*s' is too long", 40, kv);
		memcpy(item, kv, len);
		item[len] = '\0';
		kv += len + (kv[len] == ',');
		char *eq = strchr(item, '=');
		if (!eq)
			return rk_error_set(err, RK_EINVAL, "rubick: option '%s' is not key=value", item);
		*eq = '\0';
		const char *k = item, *v = eq + 1;
		if (!strcmp(k, "restart_s")) {
			char *end;
			errno = 0;
			double x = strtod(v, &end);
			if (errno || end == v || *end || !isfinite(x) || x < 0)
				return rk_error_set(err, RK_ERANGE,
						    "rubick: restart_s=%s: must be a number >= 0", v);
			st->restart_s = x;
		} else if (!strcmp(k, "order")) {
			if (!strcmp(v, "srtf"))
				st->order_srtf = 1;
			else if (!strcmp(v, "fifo"))
				st->order_srtf = 0;
			else
				return rk_error_set(err, RK_EINVAL,
						    "rubick: order=%s: must be 'srtf' or 'fifo'", v);
		} else if (!strcmp(k, "guaranteed")) {
			if (!strcmp(v, "keep"))
				st->reconfigure_guaranteed = 0;
			else if (!strcmp(v, "reconfigure"))
				st->reconfigure_guaranteed = 1;
			else
				return rk_error_set(err, RK_EINVAL,
						    "rubick: guaranteed=%s: must be 'keep' or 'reconfigure'",
						    v);
		} else if (!strcmp(k, "quota")) {
			free(st->quota);
			st->quota = NULL;
			st->n_quota = 0;
			int rc = rk_tenant_quotas_parse(v, "rubick: quota", &st->quota, &st->n_quota,
							err);
			if (rc)
				return rc;
		} else if (!strcmp(k, "sharing")) {
			if (strcmp(v, "on") && strcmp(v, "off"))
				return rk_error_set(err, RK_EINVAL,
						    "rubick: sharing=%s: must be 'on' or 'off'", v);
			st->share = !strcmp(v, "on");
		} else if (!strcmp(k, "share_window")) {
			char *end;
			errno = 0;
			long w = strtol(v, &end, 10);
			if (errno || end == v || *end || w < 1 || w > 1000000)
				return rk_error_set(err, RK_ERANGE,
						    "rubick: share_window=%s: must be an integer "
						    "1..1000000", v);
			st->share_window = (int)w;
		} else if (!strcmp(k, "placement")) {
			if (strcmp(v, "spread") && strcmp(v, "contention"))
				return rk_error_set(err, RK_EINVAL,
						    "rubick: placement=%s: must be 'spread' or "
						    "'contention'", v);
			st->place_contention = !strcmp(v, "contention");
		} else if (!strcmp(k, "quiet")) {
			if (strcmp(v, "on") && strcmp(v, "off"))
				return rk_error_set(err, RK_EINVAL,
						    "rubick: quiet=%s: must be 'on' or 'off'", v);
			st->no_quiet = !strcmp(v, "off");
		} else {
			return rk_error_set(err, RK_EINVAL,
					    "rubick: unknown option '%s' (known: restart_s, order, "
					    "guaranteed, quota, sharing, share_window, placement, quiet)",
					    k);
		}
	}
	return RK_OK;
}

int rubick_state_create(void **state, const char *options, struct rk_error *err,
		       enum rubick_mode mode)
{
	*state = NULL;
	struct rubick_state *st = calloc(1, sizeof(*st));
	if (!st)
		return rk_error_set(err, RK_ENOMEM, "rubick: out of memory");
	st->mode = mode;
	st->restart_s = RUBICK_RESTART_S_DEFAULT;
	st->order_srtf = 1;
	st->share_window = 32; /* as sjf-bsbf's window: the shortest jobs get the chance */
	int rc = parse_options(st, options, err);
	if (!rc && rubick_cache_create(&st->cache))
		rc = rk_error_set(err, RK_ENOMEM, "rubick: out of memory");
	if (!rc && st->share && rubick_share_state_create(&st->share_st))
		rc = rk_error_set(err, RK_ENOMEM, "rubick: out of memory");
	if (!rc && !st->no_quiet && rubick_quiet_create(&st->quiet))
		rc = rk_error_set(err, RK_ENOMEM, "rubick: out of memory");
	if (rc) {
		rubick_share_state_destroy(st->share_st);
		rubick_cache_destroy(st->cache);
		free(st->quota);
		free(st);
		return rc;
	}
	*state = st;
	return RK_OK;
}

void rubick_state_destroy(void *state)
{
	struct rubick_state *st = state;
	if (!st)
		return;
	rubick_cache_destroy(st->cache);
	rubick_share_state_destroy(st->share_st);
	rubick_quiet_destroy(st->quiet);
	free(st->quota);
	free(st);
}

int rubick_quota_of(const struct rubick_state *st, const struct rk_sched_input *in,
		    const char *tenant)
{
	/* The policy option overrides the driver's quota (ad-hoc experiments). */
	for (int i = 0; i < st->n_quota; i++)
		if (!strcmp(st->quota[i].tenant, tenant))
			return st->quota[i].guaranteed_gpus;
	for (int i = 0; in && i < in->n_quotas; i++)
		if (!strcmp(in->quotas[i].tenant, tenant))
			return in->quotas[i].guaranteed_gpus;
	return -1; /* no quota */
}
