/*
 * /v1/jobs and /v1/jobs/{id}[/report]: submit, list, show, change, cancel
 * and progress reports. Bodies are validated here, on the request thread;
 * the scheduler thread only sees well-formed messages.
 */
#include "daemon/api/api.h"

#include <stdlib.h>
#include <string.h>

static void call(const struct rkd_api *api, struct rkd_msg *m, struct rkd_resp *resp)
{
	rkd_sched_call(api->sched, m);
	rkd_resp_from_msg(resp, m);
}

static void verr_reply(struct rkd_resp *resp, const struct rkd_verr *v)
{
	rkd_resp_error(resp, v->e.code, v->field, "%s", v->e.msg);
}

void rkd_api_jobs_submit(const struct rkd_api *api, const struct rkd_req *req,
			 struct rkd_resp *resp)
{
	struct rkd_spec spec;
	struct rkd_verr v;
	memset(&v, 0, sizeof(v));
	static const char *const no_args[] = {NULL};
	if (rkd_req_check_args(req, no_args, &v) ||
	    rkd_spec_parse(req->body, req->body_len, &spec, &v)) {
		verr_reply(resp, &v);
		return;
	}
	struct rk_model model;
	if (rkd_spec_model(&spec, api->zoo, &model, &v)) {
		rkd_spec_fini(&spec);
		verr_reply(resp, &v);
		return;
	}
	struct rkd_msg m = {.kind = RKD_MSG_SUBMIT, .who = &req->who, .spec = &spec, .model = &model};
	rkd_sched_submit(api->sched, &m);
	rkd_resp_from_msg(resp, &m);
	rkd_spec_fini(&spec);
}

void rkd_api_jobs_list(const struct rkd_api *api, const struct rkd_req *req,
		       struct rkd_resp *resp)
{
	static const char *const allowed[] = {"state", "tenant", "limit", "before", NULL};
	static const char *const states[] = {"pending", "running", "restarting", "done",
					     "failed",  "cancelled", NULL};
	struct rkd_verr v;
	if (rkd_req_check_args(req, allowed, &v)) {
		verr_reply(resp, &v);
		return;
	}
	struct rkd_msg m = {.kind = RKD_MSG_LIST, .who = &req->who};
	m.filter.limit = 100;
	const char *state = rkd_req_arg(req, "state");
	if (state) {
		int ok = 0;
		for (const char *const *s = states; *s && !ok; s++)
			ok = !strcmp(*s, state);
		if (!ok) {
			rkd_resp_error(resp, RK_EINVAL, "state",
				       "state: '%s' is not one of pending, running, restarting, done,"
				       " failed, cancelled", state);
			return;
		}
		m.filter.state = state;
	}
	m.filter.tenant = rkd_req_arg(req, "tenant");
	const char *names[2] = {"limit", "before"};
	long long lim[2] = {10000, (long long)1 << 62};
	for (int i = 0; i < 2; i++) {
		const char *t = rkd_req_arg(req, names[i]);
		if (!t)
			continue;
		char *end;
		long long x = strtoll(t, &end, 10);
		if (!*t || *end || x < 1 || x > lim[i]) {
			rkd_resp_error(resp, RK_ERANGE, names[i], "%s: '%s' is not an integer in [1, %lld]",
				       names[i], t, lim[i]);
			return;
		}
		if (i == 0)
			m.filter.limit = (int)x;
		else
			m.filter.before_id = x;
	}
	rkd_sched_read(api->sched, &m);
	rkd_resp_from_msg(resp, &m);
}

void rkd_api_job_get(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp)
{
	struct rkd_msg m = {.kind = RKD_MSG_GET, .who = &req->who, .job_id = req->id};
	rkd_sched_read(api->sched, &m);
	rkd_resp_from_msg(resp, &m);
}

void rkd_api_job_cancel(const struct rkd_api *api, const struct rkd_req *req,
			struct rkd_resp *resp)
{
	struct rkd_msg m = {.kind = RKD_MSG_CANCEL, .who = &req->who, .job_id = req->id};
	call(api, &m, resp);
}

void rkd_api_job_update(const struct rkd_api *api, const struct rkd_req *req,
			struct rkd_resp *resp)
{
	struct rkd_msg m = {.kind = RKD_MSG_UPDATE, .who = &req->who, .job_id = req->id};
	if (rkd_update_parse(req->body, req->body_len, &m.update, &m.verr)) {
		verr_reply(resp, &m.verr);
		return;
	}
	call(api, &m, resp);
}

void rkd_api_job_report(const struct rkd_api *api, const struct rkd_req *req,
			struct rkd_resp *resp)
{
	struct rkd_msg m = {.kind = RKD_MSG_REPORT, .who = &req->who, .job_id = req->id};
	if (rkd_report_parse(req->body, req->body_len, &m.report, &m.verr)) {
		verr_reply(resp, &m.verr);
		return;
	}
	call(api, &m, resp);
}

/* POST /v1/jobs/{id}/hold|release|requeue (sched_hold.c); bodies per rkd_job_op_parse. */
static void job_op(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp,
                   enum rkd_msg_kind kind)
{
	struct rkd_msg m = {.kind = kind, .who = &req->who, .job_id = req->id};
	static const char *const no_args[] = {NULL};
	if (rkd_req_check_args(req, no_args, &m.verr) ||
	    rkd_job_op_parse(req->body, req->body_len,
	                     kind == RKD_MSG_REQUEUE ? &m.hold_after : NULL, &m.verr)) {
		verr_reply(resp, &m.verr);
		return;
	}
	call(api, &m, resp);
}

void rkd_api_job_hold(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp)
{
	job_op(api, req, resp, RKD_MSG_HOLD);
}

void rkd_api_job_release(const struct rkd_api *api, const struct rkd_req *req,
                         struct rkd_resp *resp)
{
	job_op(api, req, resp, RKD_MSG_RELEASE);
}

void rkd_api_job_requeue(const struct rkd_api *api, const struct rkd_req *req,
                         struct rkd_resp *resp)
{
	job_op(api, req, resp, RKD_MSG_REQUEUE);
}
