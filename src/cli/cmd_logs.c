/*
 * `rubick logs JOB [--follow]` (GET /v1/jobs/{id}/log) and `rubick events
 * JOB` (GET /v1/jobs/{id}/events): a job's output and its audit log, for its
 * owner or the admin. The log comes in chunks from a byte offset; --follow
 * asks again from where the last chunk ended, like `tail -f`, and stops
 * once the job has ended and nothing is left to read.
 */
#include "cli/commands.h"
#include "cli/daemon_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char logs_usage[] =
    "usage: rubick logs JOB [--follow] [--offset BYTES] [--interval SECONDS]\n"
    "                       [--url URL] [--token-file FILE] [--json]\n"
    "  the job's output (every run's stdout and stderr); --follow keeps reading\n"
    "  until the job ends; --json prints {\"offset\",\"next_offset\",\"text\"} per chunk.\n"
    "  a job that is not yours reads as no such job (exit 4)\n" RK_EXIT_HELP;

static int ended(const char *state)
{
	return !strcmp(state, "done") || !strcmp(state, "failed") || !strcmp(state, "cancelled");
}

/* The job's state ("" on error, with the message printed). */
static int job_state(const struct rk_dc *dc, long long id, char *buf, size_t cap)
{
	char path[64];
	snprintf(path, sizeof(path), "/v1/jobs/%lld", id);
	json_t *j = NULL;
	int rc = rk_dc_request(dc, "GET", path, NULL, &j);
	if (rc)
		return rc;
	snprintf(buf, cap, "%s", rk_dc_str(j, "state"));
	json_decref(j);
	return 0;
}

static void print_chunk(const struct rk_dc *dc, long long off, const char *text)
{
	size_t n = strlen(text);
	if (!dc->json) {
		fwrite(text, 1, n, stdout);
		fflush(stdout);
		return;
	}
	json_t *s = json_stringn(text, n);
	json_t *o =
	    json_pack("{s:I,s:I,s:o}", "offset", (json_int_t)off, "next_offset",
	              (json_int_t)(off + (long long)n), "text", s ? s : json_string("(not UTF-8)"));
	char *d = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	if (d)
		puts(d);
	free(d);
	json_decref(o);
	fflush(stdout);
}

static int parse_num(const struct rk_dc *dc, const char *flag, const char *v, double lo, double hi,
                     double *out)
{
	char *end;
	double x = strtod(v, &end);
	if (!*v || *end || !(x >= lo && x <= hi)) {
		rk_dc_fail(dc, RK_EXIT_USAGE, "invalid", NULL,
		           "%s: '%s' is not a number in [%g, %g]", flag, v, lo, hi);
		return -1;
	}
	*out = x;
	return 0;
}

int rk_cmd_logs(int argc, char **argv)
{
	struct rk_dc dc = {.cmd = "logs"};
	const char *arg = NULL;
	int follow = 0;
	double off_d = 0, interval = 1.0;
	for (int i = 1; i < argc; i++) {
		int r = rk_dc_arg(&dc, argc, argv, &i, logs_usage);
		if (r == RK_DC_NEXT)
			continue;
		if (r != RK_DC_OWN)
			return r;
		if (!strcmp(argv[i], "--follow") || !strcmp(argv[i], "-f")) {
			follow = 1;
		} else if (!strcmp(argv[i], "--offset") || !strcmp(argv[i], "--interval")) {
			if (i + 1 >= argc) {
				rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL, "%s: needs a value",
				           argv[i]);
				return RK_EXIT_USAGE;
			}
			int is_off = !strcmp(argv[i], "--offset");
			if (parse_num(&dc, argv[i], argv[i + 1], is_off ? 0 : 0.05,
			              is_off ? 1e15 : 3600, is_off ? &off_d : &interval))
				return RK_EXIT_USAGE;
			i++;
		} else if (arg || argv[i][0] == '-') {
			rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL, "%s: unexpected argument",
			           argv[i]);
			return RK_EXIT_USAGE;
		} else {
			arg = argv[i];
		}
	}
	long long id, off = (long long)off_d;
	if (!arg) {
		rk_dc_usage(&dc, logs_usage);
		return RK_EXIT_USAGE;
	}
	if (rk_dc_job_id(&dc, arg, &id))
		return RK_EXIT_USAGE;
	int last = 0; /* the job had ended before this read: once it is empty, stop */
	for (;;) {
		char path[96], state[32] = "";
		if (follow && !last) {
			int rc = job_state(&dc, id, state, sizeof(state));
			if (rc)
				return rc;
			last = ended(state);
		}
		snprintf(path, sizeof(path), "/v1/jobs/%lld/log?offset=%lld", id, off);
		char *text = NULL;
		int rc = rk_dc_request_text(&dc, path, &text);
		if (rc)
			return rc;
		size_t n = strlen(text);
		if (n || !follow)
			print_chunk(&dc, off, text);
		free(text);
		off += (long long)n;
		if (n) /* more may follow at once: a chunk is bounded */
			continue;
		if (!follow || last)
			return RK_EXIT_OK;
		struct timespec ts = {(time_t)interval,
		                      (long)((interval - (double)(time_t)interval) * 1e9)};
		nanosleep(&ts, NULL);
	}
}

static const char events_usage[] =
    "usage: rubick events JOB [--url URL] [--token-file FILE] [--json]\n"
    "  the job's events (submission, launches, exits, reconfigurations, policy errors)\n"
    "  a job that is not yours reads as no such job (exit 4)\n" RK_EXIT_HELP;

int rk_cmd_events(int argc, char **argv)
{
	struct rk_dc dc = {.cmd = "events"};
	const char *arg = NULL;
	for (int i = 1; i < argc; i++) {
		int r = rk_dc_arg(&dc, argc, argv, &i, events_usage);
		if (r == RK_DC_NEXT)
			continue;
		if (r != RK_DC_OWN)
			return r;
		if (arg || argv[i][0] == '-') {
			rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", NULL, "%s: unexpected argument",
			           argv[i]);
			return RK_EXIT_USAGE;
		}
		arg = argv[i];
	}
	long long id;
	if (!arg) {
		rk_dc_usage(&dc, events_usage);
		return RK_EXIT_USAGE;
	}
	if (rk_dc_job_id(&dc, arg, &id))
		return RK_EXIT_USAGE;
	json_t *all = json_array();
	long long after = 0;
	for (;;) { /* page through: a long-lived job may have more than one page */
		char path[96];
		snprintf(path, sizeof(path), "/v1/jobs/%lld/events?after=%lld&limit=1000", id,
		         after);
		json_t *j = NULL;
		int rc = rk_dc_request(&dc, "GET", path, NULL, &j);
		if (rc) {
			json_decref(all);
			return rc;
		}
		json_array_extend(all, json_object_get(j, "events"));
		json_t *next = json_object_get(j, "next_after");
		after = next ? (long long)json_integer_value(next) : 0;
		json_decref(j);
		if (!after)
			break;
	}
	if (dc.json) {
		json_t *o = json_pack("{s:I,s:o,s:I}", "job_id", (json_int_t)id, "events", all,
		                      "count", (json_int_t)json_array_size(all));
		rk_dc_print_json(o);
		json_decref(o);
		return RK_EXIT_OK;
	}
	printf("%-21s %-14s %s\n", "TIME", "KIND", "DETAIL");
	size_t i;
	json_t *e;
	json_array_foreach(all, i, e)
	{
		char d[40];
		printf("%-21s %-14s %s\n",
		       rk_dc_date((long long)rk_dc_num(e, "t_ms"), d, sizeof(d)),
		       rk_dc_str(e, "kind"), rk_dc_str(e, "detail"));
	}
	json_decref(all);
	return RK_EXIT_OK;
}
