/*
 * `rubick queue`: rubickd's jobs as squeue lists them (GET /v1/jobs), newest
 * first. By default the active jobs (pending, running, restarting) in
 * squeue's columns plus rubick's GPUs and plan; -t/--states a list of states
 * (or all), -u/--user a list of tenants, -o/--format squeue's format fields
 * (src/cli/squeue.h), -h/--noheader. Every state and tenant asked for is one
 * query, paged with `before` up to --limit jobs, saying when it cut. Node
 * names come from GET /v1/nodes, compressed as Slurm writes them (n[0-3]).
 * REASON is why a pending job waits, as the scheduler computed it at its
 * latest round (docs/api.md "Pending reasons"); a held one reads as Slurm's
 * JobHeldUser or JobHeldAdmin.
 */
#include "cli/commands.h"
#include "cli/daemon_client.h"
#include "cli/squeue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const char usage_text[] =
    "usage: rubick queue [-t|--states LIST | --all] [-u|--user LIST] [-o|--format FMT]\n"
    "                    [-h|--noheader] [--limit N] [--url URL] [--token-file FILE]\n"
    "                    [--json]\n"
    "  like squeue: default the active jobs (pending, running, restarting), newest\n"
    "  first, at most --limit (default 1000; says so when it cut)\n"
    "  -t, --states LIST  comma list of states, squeue's long or short names or\n"
    "                     rubick's: PD|PENDING|pending, R|RUNNING|running,\n"
    "                     RS|RESIZING|restarting, CD|COMPLETED|done, F|FAILED|failed,\n"
    "                     CA|CANCELLED|cancelled, or all (--all; --state S is -t S)\n"
    "  -u, --user LIST    comma list of tenants (--tenant is the same)\n"
    "  -h, --noheader     no header line\n"
    "  -o, --format FMT   squeue's %[.][width]type fields ('.' right-justifies; a value\n"
    "                     is never cut): %i job id, %j name, %u user (tenant), %T state,\n"
    "                     %t state short, %M time used, %V submit, %S start, %e end\n"
    "                     time, %D node count, %N node list, %b GPUs requested,\n"
    "                     %r reason, %R node list or (reason), %% a percent sign;\n"
    "                     rubick's %{plan} (whole), %{alloc_gpus}, %{gpu_ids},\n"
    "                     %{restarts}, %{iters}; default:\n"
    "                     \"" RK_SQ_DEFAULT_FORMAT "\"\n"
    "TIME (%M) is the time used since the first start, 0:00 while pending, as\n"
    "  squeue's M:SS, H:MM:SS or D-HH:MM:SS\n"
    "REASON (pending jobs, squeue's %r): Resources (not enough free now), Priority\n"
    "  (room, but the policy started others), Quota (tenant quota held),\n"
    "  JobHeldUser or JobHeldAdmin (rubick hold), Infeasible (more than the up nodes\n"
    "  have), None (no round has looked at it yet)\n" RK_EXIT_HELP;

#define MAX_USERS 64

struct opts {
	int states[RK_SQ_N_STATES]; /* asked for; all 0 = the active ones */
	int all;                    /* every state: one query without state= */
	const char *users[MAX_USERS];
	int n_users;
	char *user_list; /* owned: the -u values, split in place */
	const char *format;
	int noheader;
	long long limit;
};

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

/* -t LIST into o: 0, or the usage exit code after saying which item is wrong. */
static int parse_states(const struct rk_dc *dc, const char *flag, const char *list, struct opts *o)
{
	const char *p = list;
	for (;;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char w[32];
		snprintf(w, sizeof(w), "%.*s", (int)(n < sizeof(w) ? n : sizeof(w) - 1), p);
		const char *s = n < sizeof(w) ? rk_sq_state_parse(w) : NULL;
		if (n && n < sizeof(w) && !strcasecmp(w, "all")) {
			o->all = 1;
		} else if (!s) {
			return rk_dc_fail(
			    dc, RK_EXIT_USAGE, "invalid", "states",
			    "%s: '%.*s' in '%s' is not a state (PD|PENDING, R|RUNNING,"
			    " RS|RESIZING, CD|COMPLETED, F|FAILED, CA|CANCELLED,"
			    " rubick's names, or all)",
			    flag, (int)n, p, list);
		} else {
			for (int i = 0; i < RK_SQ_N_STATES; i++)
				if (!strcmp(rk_sq_state_name(i), s))
					o->states[i] = 1;
		}
		if (!end)
			return 0;
		p = end + 1;
	}
}

/* -u LIST into o (tenant names, split in o->user_list): 0 or the usage exit code. */
static int parse_users(const struct rk_dc *dc, const char *flag, const char *list, struct opts *o)
{
	free(o->user_list);
	o->user_list = strdup(list);
	o->n_users = 0;
	if (!o->user_list)
		return rk_dc_fail(dc, RK_EXIT_FAILURE, "invalid", NULL, "out of memory");
	char *p = o->user_list;
	for (;;) {
		char *end = strchr(p, ',');
		if (end)
			*end = '\0';
		if (!*p || !rk_dc_url_safe(p))
			return rk_dc_fail(dc, RK_EXIT_USAGE, "invalid", "user",
			                  "%s: '%s' in '%s' is not a tenant name (letters, digits,"
			                  " '-', '_', '.')",
			                  flag, p, list);
		if (o->n_users == MAX_USERS)
			return rk_dc_fail(dc, RK_EXIT_USAGE, "invalid", "user",
			                  "%s: at most %d tenants", flag, MAX_USERS);
		o->users[o->n_users++] = p;
		if (!end)
			return 0;
		p = end + 1;
	}
}

/* The flag at argv[*i] that takes a value: its value, or NULL after a message. */
static const char *value_of(const struct rk_dc *dc, int argc, char **argv, int *i)
{
	if (*i + 1 >= argc) {
		rk_dc_fail(dc, RK_EXIT_USAGE, "invalid", NULL, "%s: needs a value", argv[*i]);
		return NULL;
	}
	return argv[++*i];
}

static int is(const char *a, const char *shrt, const char *lng)
{
	return (shrt && !strcmp(a, shrt)) || !strcmp(a, lng);
}

/* The command line into o: RK_DC_OWN to go on, else the exit code. */
static int parse_args(struct rk_dc *dc, int argc, char **argv, struct opts *o)
{
	rk_dc_scan_json(dc, argc, argv);
	int all_flag = 0, states_flag = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (!strcmp(a, "-h") || !strcmp(a, "--noheader")) {
			o->noheader = 1;
			continue;
		}
		int r = rk_dc_arg(dc, argc, argv, &i, usage_text);
		if (r == RK_DC_NEXT)
			continue;
		if (r != RK_DC_OWN)
			return r;
		if (!strcmp(a, "--all")) {
			o->all = 1;
			all_flag = 1;
			continue;
		}
		if (!is(a, "-t", "--states") && !is(a, NULL, "--state") && !is(a, "-u", "--user") &&
		    !is(a, NULL, "--tenant") && !is(a, "-o", "--format") && !is(a, NULL, "--limit"))
			return rk_dc_fail(dc, RK_EXIT_USAGE, "invalid", NULL,
			                  "%s: unknown option (try --help)", a);
		if (!(v = value_of(dc, argc, argv, &i)))
			return RK_EXIT_USAGE;
		int rc = 0;
		if (is(a, "-t", "--states") || is(a, NULL, "--state")) {
			states_flag = 1;
			rc = parse_states(dc, a, v, o);
		} else if (is(a, "-u", "--user") || is(a, NULL, "--tenant")) {
			rc = parse_users(dc, a, v, o);
		} else if (is(a, "-o", "--format")) {
			o->format = v;
		} else {
			rc = rk_dc_int_arg(dc, "--limit", v, 1, 1000000, &o->limit);
		}
		if (rc)
			return rc;
	}
	if (all_flag && states_flag)
		return rk_dc_fail(dc, RK_EXIT_USAGE, "invalid", "states",
		                  "--all and -t/--states: choose one (-t all is --all)");
	return RK_DC_OWN;
}

/* squeue's %r of a pending job (Slurm's JobHeldUser/JobHeldAdmin for a hold); NULL otherwise. */
static const char *reason_of(const json_t *j)
{
	const char *r = rk_dc_str(j, "pending_reason"), *hold = rk_dc_str(j, "hold");
	if (!*r)
		return NULL;
	if (!strcmp(r, "Held"))
		return !strcmp(hold, "admin") ? "JobHeldAdmin" : "JobHeldUser";
	return r;
}

/* Node `id`'s name in the GET /v1/nodes reply `nodes`, else n<id> in buf. */
static const char *name_of(const json_t *nodes, int id, char *buf, size_t cap)
{
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(nodes, "nodes"), i, n)
	{
		if ((int)rk_dc_num(n, "id") == id && *rk_dc_str(n, "name"))
			return rk_dc_str(n, "name");
	}
	snprintf(buf, cap, "n%d", id);
	return buf;
}

#define MAX_SHARES 256

static void print_job(const struct rk_sq_format *f, const json_t *j, const json_t *nodes,
                      long long now_ms)
{
	const char *names[MAX_SHARES];
	char bufs[MAX_SHARES][24], nodelist[2048];
	int n = 0, g = 0;
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(j, "alloc"), i, s)
	{
		g += (int)rk_dc_num(s, "gpus");
		if (n < MAX_SHARES) {
			names[n] =
			    name_of(nodes, (int)rk_dc_num(s, "node"), bufs[n], sizeof(bufs[n]));
			n++;
		}
	}
	if (rk_sq_hostlist(names, n, nodelist, sizeof(nodelist)))
		snprintf(nodelist + sizeof(nodelist) - 4, 4, "...");
	struct rk_sq_job sj = {
	    .id = num_or(j, "id", 0),
	    .name = rk_dc_str(j, "name"),
	    .user = rk_dc_str(j, "tenant"),
	    .state = rk_dc_str(j, "state"),
	    .submit_ms = num_or(j, "submit_ms", -1),
	    .start_ms = num_or(j, "first_start_ms", -1),
	    .end_ms = num_or(j, "end_ms", -1),
	    .gpus = (int)rk_dc_num(j, "gpus"),
	    .alloc_gpus = g,
	    .n_nodes = n,
	    .nodelist = nodelist,
	    .reason = reason_of(j),
	    .plan = rk_dc_str(j, "plan"),
	    .gpu_ids = rk_dc_str(j, "gpu_ids"),
	    .restarts = (int)rk_dc_num(j, "restarts"),
	    .iters_done = rk_dc_num(j, "iters_done"),
	    .iters = rk_dc_num(j, "iterations"),
	};
	rk_sq_print_job(f, &sj, now_ms, stdout);
	putchar('\n');
}

/* Every (state, tenant) asked for into all; 1 when one was cut at max. */
static int fetch_all(const struct rk_dc *dc, const struct opts *o, long long max, json_t *all,
                     int *rc)
{
	static const char *const active[] = {"pending", "running", "restarting"};
	const char *states[RK_SQ_N_STATES];
	int n_states = 0, cut = 0;
	for (int i = 0; i < RK_SQ_N_STATES; i++)
		if (o->states[i])
			states[n_states++] = rk_sq_state_name(i);
	if (o->all) {
		n_states = 1;
		states[0] = NULL;
	} else if (!n_states) {
		for (int i = 0; i < 3; i++)
			states[n_states++] = active[i];
	}
	for (int s = 0; s < n_states && !*rc; s++)
		for (int u = 0; u < (o->n_users ? o->n_users : 1) && !*rc; u++) {
			long long left = max; /* each up to --limit, then the newest --limit */
			cut |=
			    fetch(dc, states[s], o->n_users ? o->users[u] : NULL, &left, all, rc);
		}
	return cut;
}

/* The default columns: PLAN as wide as the widest plan, so that NODELIST(REASON) lines up. */
static void fit_plan(struct rk_sq_format *f, json_t *const *v, size_t n)
{
	int w = 4;
	for (size_t i = 0; i < n; i++) {
		int len = (int)strlen(rk_dc_str(v[i], "plan"));
		w = len > w ? len : w;
	}
	for (int i = 0; i < f->n; i++)
		if (f->f[i].key == RK_SQ_PLAN && w > f->f[i].width)
			f->f[i].width = w;
}

static int print_table(const struct rk_dc *dc, const struct opts *o, struct rk_sq_format *f,
                       json_t **v, size_t n)
{
	if (!o->format)
		fit_plan(f, v, n);
	json_t *nodes = NULL;
	for (size_t i = 0; i < n && !nodes; i++)
		if (json_array_size(json_object_get(v[i], "alloc"))) {
			int rc = rk_dc_request(dc, "GET", "/v1/nodes", NULL, &nodes);
			if (rc)
				return rc;
		}
	if (!o->noheader) {
		rk_sq_print_header(f, stdout);
		putchar('\n');
	}
	long long now_ms = (long long)time(NULL) * 1000;
	for (size_t i = 0; i < n; i++)
		print_job(f, v[i], nodes, now_ms);
	json_decref(nodes);
	return RK_EXIT_OK;
}

static int list(const struct rk_dc *dc, const struct opts *o, struct rk_sq_format *f)
{
	json_t *all = json_array();
	int rc = 0;
	long long max = o->limit > 0 ? o->limit : 1000;
	int cut = fetch_all(dc, o, max, all, &rc);
	if (rc) {
		json_decref(all);
		return rc;
	}
	size_t n = json_array_size(all);
	json_t **v = malloc((n ? n : 1) * sizeof(*v));
	if (!v) {
		json_decref(all);
		return rk_dc_fail(dc, RK_EXIT_FAILURE, "invalid", NULL, "out of memory");
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
	if (dc->json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < n; i++)
			json_array_append(arr, v[i]);
		json_t *out = json_pack("{s:o,s:I,s:b}", "jobs", arr, "count", (json_int_t)n,
		                        "truncated", cut);
		rk_dc_print_json(out);
		json_decref(out);
	} else {
		rc = print_table(dc, o, f, v, n);
	}
	free(v);
	json_decref(all);
	return rc;
}

int rk_cmd_queue(int argc, char **argv)
{
	struct rk_dc dc = {.cmd = "queue"};
	struct opts o = {.limit = -1};
	int rc = parse_args(&dc, argc, argv, &o);
	struct rk_sq_format *f = NULL;
	if (rc != RK_DC_OWN)
		goto out;
	f = malloc(sizeof(*f));
	char why[256];
	const char *fmt = o.format ? o.format : RK_SQ_DEFAULT_FORMAT;
	if (!f) {
		rc = rk_dc_fail(&dc, RK_EXIT_FAILURE, "invalid", NULL, "out of memory");
	} else if (rk_sq_format_parse(fmt, f, why, sizeof(why))) {
		rc = rk_dc_fail(&dc, RK_EXIT_USAGE, "invalid", "format", "-o/--format '%s': %s",
		                fmt, why);
	} else {
		rc = list(&dc, &o, f);
	}
out:
	free(f);
	free(o.user_list);
	return rc;
}
