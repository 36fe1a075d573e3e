/*
 * Options of the Pollux policy (pollux.c; docs/policies.md "pollux"):
 * "key=value,..." with
 *   p=X          fairness exponent of the power mean (§4.2, Eq. 5), in [-10, 1], default -1
 *   restart_s=S  restart penalty P of the restart factor (the artifact's 30 s), in [0, 1e5]
 *   search=M     greedy (default: water-filling + local search, pollux_greedy.c) or ga
 *                (the artifact's genetic algorithm, pollux_ga.c; one GPU type only)
 *   ls=N         local-search moves per round of the greedy, 0..1000, default 16
 *   pop=N        GA population, 2..10000, default 100
 *   gens=N       GA generations, 0..10000, default 100
 * Every refusal names the option and its range.
 */
#include "policy/pollux/pollux_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KNOWN "p, restart_s, search, ls, pop, gens"

static int number(const char *key, const char *v, double lo, double hi, double *out,
		  struct rk_error *err)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(x) || x < lo || x > hi)
		return rk_error_set(err, RK_ERANGE, "pollux: %s=%s: must be a number in [%g, %g]",
				    key, v, lo, hi);
	*out = x;
	return RK_OK;
}

static int integer(const char *key, const char *v, int lo, int hi, int *out, struct rk_error *err)
{
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi)
		return rk_error_set(err, RK_ERANGE, "pollux: %s=%s: must be an integer in %d..%d",
				    key, v, lo, hi);
	*out = (int)x;
	return RK_OK;
}

void pollux_opts_default(struct pollux_opts *o)
{
	*o = (struct pollux_opts){.p = POLLUX_P_DEFAULT, .restart_s = POLLUX_RESTART_S_DEFAULT,
				  .search = POLLUX_SEARCH_GREEDY, .ls = POLLUX_LS_DEFAULT,
				  .pop = POLLUX_POP_DEFAULT, .gens = POLLUX_GENS_DEFAULT};
}

int pollux_opts_parse(struct pollux_opts *out, const char *options, struct rk_error *err)
{
	struct pollux_opts o;
	pollux_opts_default(&o);
	const char *kv = options ? options : "";
	while (*kv) {
		size_t len = strcspn(kv, ",");
		char item[128];
		if (len >= sizeof(item))
			return rk_error_set(err, RK_EINVAL, "pollux: option '%.*s' is too long",
					    (int)len, kv);
		memcpy(item, kv, len);
		item[len] = '\0';
		kv += len + (kv[len] == ',');
		if (!len)
			continue;
		char *eq = strchr(item, '=');
		if (!eq)
			return rk_error_set(err, RK_EINVAL,
					    "pollux: option '%s' is not key=value (known: " KNOWN ")",
					    item);
		*eq = '\0';
		const char *v = eq + 1;
		int rc = RK_OK;
		if (!strcmp(item, "p"))
			rc = number("p", v, -10, 1, &o.p, err);
		else if (!strcmp(item, "restart_s"))
			rc = number("restart_s", v, 0, 1e5, &o.restart_s, err);
		else if (!strcmp(item, "ls"))
			rc = integer("ls", v, 0, 1000, &o.ls, err);
		else if (!strcmp(item, "pop"))
			rc = integer("pop", v, 2, 10000, &o.pop, err);
		else if (!strcmp(item, "gens"))
			rc = integer("gens", v, 0, 10000, &o.gens, err);
		else if (!strcmp(item, "search")) {
			if (!strcmp(v, "greedy"))
				o.search = POLLUX_SEARCH_GREEDY;
			else if (!strcmp(v, "ga"))
				o.search = POLLUX_SEARCH_GA;
			else
				rc = rk_error_set(err, RK_EINVAL,
						  "pollux: search=%s: must be greedy or ga", v);
		} else
			rc = rk_error_set(err, RK_EINVAL, "pollux: unknown option '%s' (known: " KNOWN ")",
					  item);
		if (rc)
			return rc;
	}
	*out = o;
	return RK_OK;
}
