/* Shared helpers of the daemon subcommands (see daemon_client.h). */
#include "cli/daemon_client.h"

#include "cli/client.h"
#include "cli/commands.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void rk_dc_scan_json(struct rk_dc *dc, int argc, char **argv)
{
	for (int i = 1; i < argc && !dc->scanned; i++)
		if (!strcmp(argv[i], "--json"))
			dc->json = 1;
	dc->scanned = 1;
}

/* Print the error object e (borrowed) as the subcommand's error; returns exit. */
static int fail_json(json_t *e, int exit)
{
	json_object_set_new(e, "exit", json_integer(exit));
	json_t *o = json_pack("{s:O}", "error", e);
	rk_dc_print_json(o);
	json_decref(o);
	return exit;
}

int rk_dc_fail(const struct rk_dc *dc, int exit, const char *code, const char *field,
               const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!dc->json) {
		fprintf(stderr, "rubick %s: %s\n", dc->cmd, msg);
		return exit;
	}
	json_t *e = json_pack("{s:s,s:s,s:o}", "code", code, "message", msg, "field",
	                      field ? json_string(field) : json_null());
	fail_json(e, exit);
	json_decref(e);
	return exit;
}

int rk_dc_usage(const struct rk_dc *dc, const char *usage)
{
	if (!dc->json) {
		fputs(usage, stderr);
		return RK_EXIT_USAGE;
	}
	size_t n = strcspn(usage, "\n");
	return rk_dc_fail(dc, RK_EXIT_USAGE, "invalid", "id", "no job named (%.*s)", (int)n, usage);
}

int rk_dc_common_flag(struct rk_dc *dc, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	if (!strcmp(a, "--json")) {
		dc->json = 1;
		return 1;
	}
	const char **dst = !strcmp(a, "--url")          ? &dc->url_flag
	                   : !strcmp(a, "--token-file") ? &dc->token_file
	                                                : NULL;
	if (!dst)
		return 0;
	if (*i + 1 >= argc) {
		rk_dc_fail(dc, RK_EXIT_USAGE, "invalid", a + 2, "%s: needs a value", a);
		return -1;
	}
	*dst = argv[++*i];
	return 1;
}

int rk_dc_arg(struct rk_dc *dc, int argc, char **argv, int *i, const char *help)
{
	rk_dc_scan_json(dc, argc, argv);
	if (!strcmp(argv[*i], "--help") || !strcmp(argv[*i], "-h")) {
		fputs(help, stdout);
		return RK_EXIT_OK;
	}
	int c = rk_dc_common_flag(dc, argc, argv, i);
	return c < 0 ? RK_EXIT_USAGE : c ? RK_DC_NEXT : RK_DC_OWN;
}

int rk_dc_job_list(struct rk_dc *dc, int argc, char **argv, const char *help, const char *usage,
                   const char *sw, int *sw_set, long long *ids, int *n)
{
	*n = 0;
	rk_dc_scan_json(dc, argc, argv);
	for (int i = 1; i < argc; i++) {
		int r = rk_dc_arg(dc, argc, argv, &i, help);
		if (r == RK_DC_NEXT)
			continue;
		if (r != RK_DC_OWN)
			return r;
		if (sw && !strcmp(argv[i], sw)) {
			*sw_set = 1;
			continue;
		}
		if (argv[i][0] == '-')
			return rk_dc_fail(dc, RK_EXIT_USAGE, "invalid", NULL,
			                  "%s: unknown option (try --help)", argv[i]);
		if (*n == RK_DC_MAX_JOBS)
			return rk_dc_fail(dc, RK_EXIT_USAGE, "invalid", "id",
			                  "at most %d jobs at once", RK_DC_MAX_JOBS);
		if (rk_dc_job_id(dc, argv[i], &ids[(*n)++]))
			return RK_EXIT_USAGE;
	}
	if (!*n) {
		return rk_dc_usage(dc, usage);
	}
	return RK_DC_OWN;
}

int rk_dc_job_each(const struct rk_dc *dc, const long long *ids, int n, const char *method,
                   const char *suffix, const char *body, const char *done, const char *extra)
{
	int worst = RK_EXIT_OK;
	for (int k = 0; k < n; k++) {
		char path[96];
		snprintf(path, sizeof(path), "/v1/jobs/%lld%s", ids[k], suffix);
		json_t *j = NULL;
		int rc = rk_dc_request(dc, method, path, body, &j);
		if (rc) {
			worst = worst ? worst : rc;
			continue;
		}
		if (dc->json)
			rk_dc_print_json(j);
		else
			printf("%s job %lld%s\n", done, ids[k], extra);
		json_decref(j);
	}
	return worst;
}

int rk_dc_url_safe(const char *value)
{
	for (const char *p = value; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
			return 0;
	return 1;
}

int rk_dc_int_arg(const struct rk_dc *dc, const char *flag, const char *v, long long lo,
                  long long hi, long long *out)
{
	char *end;
	long long x = strtoll(v, &end, 10);
	if (!*v || *end || x < lo || x > hi)
		return rk_dc_fail(dc, RK_EXIT_USAGE, "invalid", flag + 2,
		                  "%s: '%s' is not an integer in [%lld, %lld]", flag, v, lo, hi);
	*out = x;
	return 0;
}

static int exit_for(int status)
{
	if (status == 404)
		return RK_EXIT_NOTFOUND;
	if (status >= 500 || status == 0)
		return RK_EXIT_SERVER;
	if (status == 401)
		return RK_EXIT_USAGE;
	return RK_EXIT_FAILURE;
}

/* The API's error code for an error reply without a readable error object. */
static const char *code_for(int status)
{
	return status == 404   ? "not_found"
	       : status == 401 ? "unauthorized"
	       : status == 403 ? "forbidden"
	       : status == 409 ? "conflict"
	       : status >= 500 ? "unavailable"
	                       : "invalid";
}

/* One request; on 2xx, *text (raw) or *reply (parsed), whichever is asked for. */
static int request(const struct rk_dc *dc, const char *method, const char *path, const char *body,
                   json_t **reply, char **raw)
{
	char token[256];
	struct rk_error err;
	rk_error_clear(&err);
	if (rk_client_token(dc->token_file, token, sizeof(token), &err))
		return rk_dc_fail(dc, RK_EXIT_USAGE, "invalid", "token-file", "--token-file: %s",
		                  err.msg);
	const char *url = rk_client_url(dc->url_flag);
	int status = 0;
	char *text = NULL;
	if (rk_client_request(url, token, method, path, body, &status, &text, &err))
		return rk_dc_fail(dc, RK_EXIT_SERVER, "unavailable", "url",
		                  "cannot reach rubickd: %s (set --url or RUBICK_URL)", err.msg);
	if (raw && status >= 200 && status < 300) {
		*raw = text;
		return RK_EXIT_OK;
	}
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	if (status >= 200 && status < 300 && j) {
		free(text);
		*reply = j;
		return RK_EXIT_OK;
	}
	json_t *e = j ? json_object_get(j, "error") : NULL;
	const char *msg = e ? json_string_value(json_object_get(e, "message")) : NULL;
	int rc = status >= 200 && status < 300 ? RK_EXIT_SERVER : exit_for(status);
	const char *hint = status == 401 ? "; every request needs a token: --token-file FILE or"
	                                   " RUBICK_TOKEN_FILE"
	                                 : "";
	if (status >= 200 && status < 300) {
		rk_dc_fail(dc, rc, "unavailable", NULL, "%s: unreadable reply: %s", url, je.text);
	} else if (dc->json && json_is_object(e)) {
		/* the daemon's own error object, with the status and the exit code */
		char m[1024];
		snprintf(m, sizeof(m), "%s%s", msg ? msg : rk_dc_str(e, "code"), hint);
		json_object_set_new(e, "message", json_string(m));
		json_object_set_new(e, "status", json_integer(status));
		fail_json(e, rc);
	} else {
		rk_dc_fail(dc, rc, code_for(status), NULL, "%s (HTTP %d)%s", msg ? msg : text,
		           status, hint);
	}
	json_decref(j);
	free(text);
	return rc;
}

int rk_dc_request(const struct rk_dc *dc, const char *method, const char *path, const char *body,
                  json_t **reply)
{
	return request(dc, method, path, body, reply, NULL);
}

int rk_dc_request_text(const struct rk_dc *dc, const char *path, char **text)
{
	return request(dc, "GET", path, NULL, NULL, text);
}

void rk_dc_print_json(const json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (s)
		puts(s);
	free(s);
}

int rk_dc_job_id(const struct rk_dc *dc, const char *arg, long long *id)
{
	char *end;
	long long v = strtoll(arg, &end, 10);
	if (!*arg || *end || v <= 0)
		return rk_dc_fail(dc, RK_EXIT_USAGE, "invalid", "id", "'%s' is not a job id", arg);
	*id = v;
	return 0;
}

const char *rk_dc_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

double rk_dc_num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

const char *rk_dc_date(long long t_ms, char *buf, size_t cap)
{
	if (t_ms <= 0) {
		snprintf(buf, cap, "-");
		return buf;
	}
	time_t t = (time_t)(t_ms / 1000);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, cap, "%lld", t_ms);
	return buf;
}

const char *rk_dc_duration(long long ms, char *buf, size_t cap)
{
	if (ms < 0) {
		snprintf(buf, cap, "-");
		return buf;
	}
	long long s = ms / 1000, d = s / 86400;
	if (d > 0)
		snprintf(buf, cap, "%lld-%02lld:%02lld:%02lld", d, s % 86400 / 3600, s % 3600 / 60,
		         s % 60);
	else
		snprintf(buf, cap, "%02lld:%02lld:%02lld", s / 3600, s % 3600 / 60, s % 60);
	return buf;
}
