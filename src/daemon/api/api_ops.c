/*
 * Operator views (issue 13): GET /v1/jobs/{id}/log (text/plain, from a byte
 * offset, so that `rubick logs --follow` polls), GET /v1/jobs/{id}/events
 * (the audit log of one job) and GET /healthz (for probes: no token, no
 * data beyond ok and the version). Job reads are answered off the
 * scheduler thread, as GET /v1/jobs/{id} is (sched_read.c), with the same
 * rule: the owner or the admin, 404 for everyone else.
 */
#include "daemon/api/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RKD_VERSION
#define RKD_VERSION "unknown"
#endif

/* Integer query argument `key` in [lo, hi], *out unchanged when absent. */
static int int_arg(const struct rkd_req *req, const char *key, long long lo, long long hi,
                   long long *out, struct rkd_resp *resp)
{
	const char *t = rkd_req_arg(req, key);
	if (!t)
		return 0;
	char *end;
	long long x = strtoll(t, &end, 10);
	if (!*t || *end || x < lo || x > hi) {
		rkd_resp_error(resp, RK_ERANGE, key, "%s: '%s' is not an integer in [%lld, %lld]",
		               key, t, lo, hi);
		return -1;
	}
	*out = x;
	return 0;
}

void rkd_api_job_log(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp)
{
	static const char *const allowed[] = {"offset", NULL};
	struct rkd_msg m = {.kind = RKD_MSG_LOG, .who = &req->who, .job_id = req->id};
	long long off = 0;
	if (rkd_req_check_args(req, allowed, &m.verr)) {
		rkd_resp_error(resp, m.verr.e.code, m.verr.field, "%s", m.verr.e.msg);
		return;
	}
	if (int_arg(req, "offset", 0, (long long)1 << 62, &off, resp))
		return;
	m.filter.before_id = off;
	rkd_sched_read(api->sched, &m);
	rkd_resp_from_msg(resp, &m);
	if (resp->status == 200) {
		resp->content_type = "text/plain; charset=utf-8";
		resp->raw = 1;
	}
}

void rkd_api_job_events(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp)
{
	static const char *const allowed[] = {"after", "limit", NULL};
	struct rkd_msg m = {.kind = RKD_MSG_EVENTS, .who = &req->who, .job_id = req->id};
	long long after = 0, limit = 1000;
	if (rkd_req_check_args(req, allowed, &m.verr)) {
		rkd_resp_error(resp, m.verr.e.code, m.verr.field, "%s", m.verr.e.msg);
		return;
	}
	if (int_arg(req, "after", 0, (long long)1 << 62, &after, resp) ||
	    int_arg(req, "limit", 1, 10000, &limit, resp))
		return;
	m.filter.before_id = after;
	m.filter.limit = (int)limit;
	rkd_sched_read(api->sched, &m);
	rkd_resp_from_msg(resp, &m);
}

void rkd_api_healthz(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp)
{
	(void)req;
	int failed = rkd_sched_failed(api->sched);
	size_t cap = 96;
	resp->body = malloc(cap);
	if (!resp->body) {
		rkd_resp_error(resp, RK_ENOMEM, "", "out of memory");
		resp->status = 503;
		return;
	}
	snprintf(resp->body, cap, "{\"status\":\"%s\",\"version\":\"%s\"}",
	         failed ? "failed" : "ok", RKD_VERSION);
	resp->status = failed ? 503 : 200;
}
