/*
 * `rubick history`: ended jobs (done, failed, cancelled) like Slurm's sacct:
 * submit, start and end dates, elapsed (start to end), wait (submit to
 * start), GPU-hours (attained GPU-seconds / 3600), state and exit status,
 * per tenant and over a time range of end dates, as a table, CSV or JSON.
 * Built on GET /v1/jobs?state=S paged with `before`, so a tenant token sees
 * its own jobs only, as everywhere else.
 */
#define _XOPEN_SOURCE 700
#include "cli/commands.h"
#include "cli/daemon_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char usage_text[] =
    "usage: rubick history [--tenant T] [--since DATE] [--until DATE] [--max N]\n"
    "                      [--csv | --json] [--url URL] [--token-file FILE]\n"
    "  ended jobs (done, failed, cancelled), newest first, like sacct: submit,\n"
    "  start, end, elapsed, wait, GPU-hours, state, exit status.\n"
    "  DATE: YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS (UTC); a job is listed when it\n"
    "  ended in [--since, --until). --max N (default 10000) bounds the jobs read;\n"
    "  a cut list says so on stderr (and \"truncated\": true in --json).\n" RK_EXIT_HELP;

/* A UTC date as ms since the epoch; -1 when it is not one of the two forms. */
static long long parse_date(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || *end) {
		memset(&tm, 0, sizeof(tm));
		end = strptime(s, "%Y-%m-%d", &tm);
	}
	if (!end || *end)
		return -1;
	time_t t = timegm(&tm);
	return t < 0 ? -1 : (long long)t * 1000;
}

static long long num_or(const json_t *o, const char *key, long long dflt)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? (long long)json_number_value(v) : dflt;
}

static int newer_first(const void *a, const void *b)
{
	long long x = num_or(*(json_t *const *)a, "id", 0),
	          y = num_or(*(json_t *const *)b, "id", 0);
	return (x < y) - (x > y);
}

/* One row's derived figures, put back into the job object for --json. */
static void derive(json_t *j)
{
	long long sub = num_or(j, "submit_ms", -1), st = num_or(j, "first_start_ms", -1),
	          end = num_or(j, "end_ms", -1);
	json_object_set_new(j, "elapsed_s",
	                    st >= 0 && end >= st ? json_real((double)(end - st) / 1e3)
	                                         : json_null());
	json_object_set_new(
	    j, "wait_s", st >= 0 && sub >= 0 ? json_real((double)(st - sub) / 1e3) : json_null());
	json_object_set_new(j, "gpu_hours", json_real(rk_dc_num(j, "attained_gpu_s") / 3600.0));
}

static void print_row(const json_t *j, int csv)
{
	char sub[40], st[40], end[40], el[40], wt[40], ex[16] = "-";
	long long s0 = num_or(j, "submit_ms", -1), s1 = num_or(j, "first_start_ms", -1),
	          s2 = num_or(j, "end_ms", -1);
	rk_dc_date(s0, sub, sizeof(sub));
	rk_dc_date(s1, st, sizeof(st));
	rk_dc_date(s2, end, sizeof(end));
	rk_dc_duration(s1 >= 0 && s2 >= s1 ? s2 - s1 : -1, el, sizeof(el));
	rk_dc_duration(s1 >= 0 && s0 >= 0 ? s1 - s0 : -1, wt, sizeof(wt));
	if (json_is_integer(json_object_get(j, "exit_status")))
		snprintf(ex, sizeof(ex), "%lld", num_or(j, "exit_status", 0));
	double gh = rk_dc_num(j, "gpu_hours");
	if (csv) {
		/* names and tenants are checked identifiers (jobspec.c): no comma or quote */
		printf("%lld,%s,%s,%s,%s,%s,%s,%s,%s,%s,%.4f,%d\n", num_or(j, "id", 0),
		       rk_dc_str(j, "name"), rk_dc_str(j, "tenant"), rk_dc_str(j, "state"), ex, sub,
		       st, end, el, wt, gh, (int)rk_dc_num(j, "gpus"));
		return;
	}
	printf("%8lld %-16.16s %-10.10s %-9s %4s %-20s %-20s %-20s %11s %11s %9.3f\n",
	       num_or(j, "id", 0), rk_dc_str(j, "name"), rk_dc_str(j, "tenant"),
	       rk_dc_str(j, "state"), ex, sub, st, end, el, wt, gh);
}

int rk_cmd_history(int argc, char **argv)
{
	struct rk_dc dc = {.cmd = "history"};
	const char *tenant = NULL;
	long long since = -1, until = -1, max = 10000;
	int csv = 0;
	for (int i = 1; i < argc; i++) {
		int r = rk_dc_arg(&dc, argc, argv, &i, usage_text);
		if (r == RK_DC_NEXT)
			continue;
		if (r != RK_DC_OWN)
			return r;
		if (!strcmp(argv[i], "--csv")) {
			csv = 1;
			continue;
		}
		const char *f = argv[i];
		if (strcmp(f, "--tenant") && strcmp(f, "--since") && strcmp(f, "--until") &&
		    strcmp(f, "--max")) {
			rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL,
			           "%s: unknown option (try --help)", f);
			return RK_EXIT_USAGE;
		}
		if (i + 1 >= argc) {
			rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL, "%s: needs a value", f);
			return RK_EXIT_USAGE;
		}
		const char *v = argv[++i];
		if (!strcmp(f, "--tenant")) {
			if (!rk_dc_url_safe(v)) {
				fprintf(
				    stderr,
				    "rubick history: --tenant: '%s' holds characters not allowed\n",
				    v);
				return RK_EXIT_USAGE;
			}
			tenant = v;
		} else if (!strcmp(f, "--max")) {
			if (rk_dc_int_arg(&dc, "--max", v, 1, 1000000, &max))
				return RK_EXIT_USAGE;
		} else {
			long long t = parse_date(v);
			if (t < 0) {
				rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL,
				           "%s: '%s' is not a date (YYYY-MM-DD or"
				           " YYYY-MM-DDTHH:MM:SS, UTC)",
				           f, v);
				return RK_EXIT_USAGE;
			}
			*(!strcmp(f, "--since") ? &since : &until) = t;
		}
	}
	if (since >= 0 && until >= 0 && until <= since) {
		rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL, "--until must be after --since");
		return RK_EXIT_USAGE;
	}
	if (csv && dc.json) {
		rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL, "--csv and --json: choose one");
		return RK_EXIT_USAGE;
	}
	static const char *const ended[] = {"done", "failed", "cancelled"};
	json_t *all = json_array();
	long long read = 0;
	int truncated = 0;
	for (int s = 0; s < 3; s++) {
		long long before = 0;
		for (;;) {
			if (read >= max) {
				truncated = 1;
				break;
			}
			long long lim = max - read < 1000 ? max - read : 1000;
			char path[256];
			int n = snprintf(path, sizeof(path), "/v1/jobs?state=%s&limit=%lld",
			                 ended[s], lim);
			if (tenant)
				n += snprintf(path + n, sizeof(path) - (size_t)n, "&tenant=%s",
				              tenant);
			if (before)
				snprintf(path + n, sizeof(path) - (size_t)n, "&before=%lld",
				         before);
			json_t *r = NULL;
			int rc = rk_dc_request(&dc, "GET", path, NULL, &r);
			if (rc) {
				json_decref(all);
				return rc;
			}
			size_t i;
			json_t *j;
			json_array_foreach(json_object_get(r, "jobs"), i, j)
			{
				read++;
				long long end = num_or(j, "end_ms", -1);
				if ((since >= 0 && end < since) || (until >= 0 && end >= until))
					continue;
				derive(j);
				json_array_append(all, j);
			}
			before = num_or(r, "next_before_id", 0);
			json_decref(r);
			if (!before)
				break;
		}
	}
	size_t n = json_array_size(all);
	json_t **v = malloc((n ? n : 1) * sizeof(*v));
	if (!v) {
		json_decref(all);
		rk_dc_fail(&dc, RK_EXIT_FAILURE, "invalid", NULL, "out of memory");
		return RK_EXIT_FAILURE;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = json_array_get(all, i);
	qsort(v, n, sizeof(*v), newer_first);
	if (truncated)
		fprintf(stderr, "rubick history: cut after %lld jobs read (--max %lld)\n", read,
		        max);
	if (dc.json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append(arr, v[i]);
		json_t *o = json_pack("{s:o,s:I,s:b}", "jobs", arr, "count", (json_int_t)n,
		                      "truncated", truncated);
		rk_dc_print_json(o);
		json_decref(o);
	} else {
		if (csv)
			printf("id,name,tenant,state,exit,submit,start,end,elapsed,wait,gpu_hours,"
			       "gpus\n");
		else
			printf("%8s %-16s %-10s %-9s %4s %-20s %-20s %-20s %11s %11s %9s\n", "ID",
			       "NAME", "TENANT", "STATE", "EXIT", "SUBMIT", "START", "END",
			       "ELAPSED", "WAIT", "GPU-HOURS");
		for (size_t i = 0; i < n; i++)
			print_row(v[i], csv);
	}
	free(v);
	json_decref(all);
	return RK_EXIT_OK;
}
