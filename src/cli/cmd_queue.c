/*
 * `rubick queue`: rubickd's jobs as a table, newest first, like squeue
 * (GET /v1/jobs). By default the active jobs (pending, running, restarting)
 * with the GPUs and nodes each holds; --state S one state; --all every job,
 * paged through with `before` up to --limit jobs, saying when it cut.
 * Dates are ISO-8601 UTC; TIME is how long a job has run (since its first
 * start) or, pending, waited (since submission), as squeue's TIME.
 * REASON is why a pending job waits, squeue's %r, as the scheduler computed
 * it at its latest round (docs/api.md "Pending reasons"): Resources,
 * Priority, Quota, Held(user|admin), Infeasible, or None before a round.
 */
#include "cli/commands.h"
#include "cli/daemon_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage_text[] =
    "usage: rubick queue [--state STATE | --all] [--tenant T] [--limit N]\n"
    "                    [--url URL] [--token-file FILE] [--json]\n"
    "  default: active jobs (pending, running, restarting); --all: every job,\n"
    "  newest first, at most --limit (default 1000; says so when it cut)\n"
    "STATE: pending, running, restarting, done, failed, cancelled\n"
    "REASON (pending jobs, like squeue's %r): Resources (not enough free now),\n"
    "  Priority (room, but the policy started others), Quota (tenant quota held),\n"
    "  Held(user|admin) (rubick hold), Infeasible (more than the up nodes have),\n"
    "  None (no round has looked at it yet)\n"
    RK_EXIT_HELP;

static long long num_or(const json_t *o, const char *key, long long dflt)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? (long long)json_number_value(v) : dflt;
}

/* Read jobs of `state` (NULL = any) into all, newest first, up to *left; 1 when cut. */
static int fetch(const struct rk_dc *dc, const char *state, const char *tenant, long long *left,
                 json_t *all, int *rc)
{
	long long before = 0;
	for (;;) {
		if (*left <= 0)
			return 1;
		char path[256];
		int n = snprintf(path, sizeof(path), "/v1/jobs?limit=%lld",
		                 *left < 1000 ? *left : 1000);
		if (state)
			n += snprintf(path + n, sizeof(path) - (size_t)n, "&state=%s", state);
		if (tenant)
			n += snprintf(path + n, sizeof(path) - (size_t)n, "&tenant=%s", tenant);
		if (before)
			snprintf(path + n, sizeof(path) - (size_t)n, "&before=%lld", before);
		json_t *r = NULL;
		*rc = rk_dc_request(dc, "GET", path, NULL, &r);
		if (*rc)
			return 0;
		json_t *jobs = json_object_get(r, "jobs");
		*left -= (long long)json_array_size(jobs);
		json_array_extend(all, jobs);
		before = num_or(r, "next_before_id", 0);
		json_decref(r);
		if (!before)
			return 0;
		if (*left <= 0)
			return 1;
	}
}

static int newer_first(const void *a, const void *b)
{
	long long x = num_or(*(json_t *const *)a, "id", 0),
	          y = num_or(*(json_t *const *)b, "id", 0);
	return (x < y) - (x > y);
}

/* squeue's %r of a pending job, with who holds a held one; "-" otherwise. */
static const char *reason_text(const json_t *j, char *buf, size_t cap)
{
	const char *r = rk_dc_str(j, "pending_reason"), *hold = rk_dc_str(j, "hold");
	if (!*r)
		return "-";
	if (!strcmp(r, "Held") && *hold)
		snprintf(buf, cap, "Held(%s)", hold);
	else
		snprintf(buf, cap, "%s", r);
	return buf;
}

static void print_row(const json_t *j, long long now_ms)
{
	char held[16] = "-", nodes[64] = "", sub[40], tm[40], iters[32], reason[32];
	const json_t *alloc = json_object_get(j, "alloc");
	int g = 0;
	size_t i;
	json_t *s;
	json_array_foreach(alloc, i, s)
	{
		g += (int)rk_dc_num(s, "gpus");
		size_t n = strlen(nodes);
		snprintf(nodes + n, sizeof(nodes) - n, "%s%d", n ? "," : "",
		         (int)rk_dc_num(s, "node"));
	}
	if (json_array_size(alloc))
		snprintf(held, sizeof(held), "%d", g);
	const char *state = rk_dc_str(j, "state");
	long long start = num_or(j, "first_start_ms", -1), end = num_or(j, "end_ms", -1);
	long long from = start >= 0 ? start : num_or(j, "submit_ms", -1);
	long long to = end >= 0 ? end : now_ms;
	rk_dc_date(num_or(j, "submit_ms", -1), sub, sizeof(sub));
	rk_dc_duration(from >= 0 ? to - from : -1, tm, sizeof(tm));
	snprintf(iters, sizeof(iters), "%.0f/%.0f", rk_dc_num(j, "iters_done"),
	         rk_dc_num(j, "iterations"));
	printf("%8lld %-16.16s %-10.10s %-10s %4d %4s %-8.8s %-20s %11s %-36.36s %11s %3d %s\n",
	       num_or(j, "id", 0), rk_dc_str(j, "name"), rk_dc_str(j, "tenant"), state,
	       (int)rk_dc_num(j, "gpus"), held, *nodes ? nodes : "-", sub, tm,
	       *rk_dc_str(j, "plan") ? rk_dc_str(j, "plan") : "-", iters,
	       (int)rk_dc_num(j, "restarts"), reason_text(j, reason, sizeof(reason)));
}

int rk_cmd_queue(int argc, char **argv)
{
	struct rk_dc dc = {.cmd = "queue"};
	const char *state = NULL, *tenant = NULL;
	long long limit = -1;
	int all_states = 0;
	for (int i = 1; i < argc; i++) {
		int r = rk_dc_arg(&dc, argc, argv, &i, usage_text);
		if (r == RK_DC_NEXT)
			continue;
		if (r != RK_DC_OWN)
			return r;
		if (!strcmp(argv[i], "--all")) {
			all_states = 1;
			continue;
		}
		const char *key = !strcmp(argv[i], "--state")    ? "state"
		                  : !strcmp(argv[i], "--tenant") ? "tenant"
		                  : !strcmp(argv[i], "--limit")  ? "limit"
		                                                 : NULL;
		if (!key || i + 1 >= argc) {
			fprintf(stderr, "rubick queue: %s: %s\n", argv[i],
			        key ? "needs a value" : "unknown option (try --help)");
			return RK_EXIT_USAGE;
		}
		const char *v = argv[++i];
		if (!rk_dc_url_safe(v)) {
			fprintf(stderr, "rubick queue: --%s: '%s' holds characters not allowed\n",
			        key, v);
			return RK_EXIT_USAGE;
		}
		if (!strcmp(key, "limit")) {
			if (rk_dc_int_arg(&dc, "--limit", v, 1, 1000000, &limit))
				return RK_EXIT_USAGE;
		} else {
			*(!strcmp(key, "state") ? &state : &tenant) = v;
		}
	}
	if (state && all_states) {
		fprintf(stderr, "rubick queue: --state and --all: choose one\n");
		return RK_EXIT_USAGE;
	}
	static const char *const active[] = {"pending", "running", "restarting"};
	json_t *all = json_array();
	int cut = 0, rc = 0;
	long long max = limit > 0 ? limit : 1000, left = max;
	if (state || all_states) {
		cut = fetch(&dc, state, tenant, &left, all, &rc);
	} else {
		for (int s = 0; s < 3 && !rc; s++) {
			long long l =
			    max; /* each active state up to --limit, then the newest --limit */
			cut |= fetch(&dc, active[s], tenant, &l, all, &rc);
		}
	}
	if (rc) {
		json_decref(all);
		return rc;
	}
	size_t n = json_array_size(all);
	json_t **v = malloc((n ? n : 1) * sizeof(*v));
	if (!v) {
		json_decref(all);
		fprintf(stderr, "rubick queue: out of memory\n");
		return RK_EXIT_FAILURE;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(all, i);
	qsort(v, n, sizeof(*v), newer_first);
	if ((long long)n > max) {
		n = (size_t)max;
		cut = 1;
	}
	if (cut)
		fprintf(stderr, "rubick queue: showing the newest %zu jobs; more with --limit N\n",
		        n);
	if (dc.json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append(arr, v[i]);
		json_t *o = json_pack("{s:o,s:I,s:b}", "jobs", arr, "count", (json_int_t)n,
		                      "truncated", cut);
		rk_dc_print_json(o);
		json_decref(o);
	} else {
		printf("%8s %-16s %-10s %-10s %4s %4s %-8s %-20s %11s %-36s %11s %3s %s\n", "ID",
		       "NAME", "TENANT", "STATE", "REQ", "HELD", "NODES", "SUBMIT", "TIME", "PLAN",
		       "ITERS", "RST", "REASON");
		long long now_ms = (long long)time(NULL) * 1000;
		for (size_t i = 0; i < n; i++)
			print_row(v[i], now_ms);
	}
	free(v);
	json_decref(all);
	return RK_EXIT_OK;
}
