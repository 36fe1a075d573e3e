/*
 * The helpers request handlers call (http_reply.h): query arguments, error
 * replies and scheduler replies. A leaf of http/: it calls nothing of the
 * server, so handlers (api/) reach it without reaching http.c.
 */
#include "daemon/http/http_reply.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rkd_resp_error(struct rkd_resp *resp, int code, const char *field, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	resp->verr.e.code = code;
	vsnprintf(resp->verr.e.msg, sizeof(resp->verr.e.msg), fmt, ap);
	va_end(ap);
	snprintf(resp->verr.field, sizeof(resp->verr.field), "%s", field ? field : "");
	resp->status = rk_error_http_status(code);
	free(resp->body);
	resp->body = NULL;
}

void rkd_resp_from_msg(struct rkd_resp *resp, struct rkd_msg *m)
{
	resp->status = m->status ? m->status : 500;
	resp->body = m->body;
	m->body = NULL;
	resp->verr = m->verr;
	resp->retry_after_s = m->retry_after_s;
	if (resp->status >= 400 && !resp->verr.e.msg[0])
		snprintf(resp->verr.e.msg, sizeof(resp->verr.e.msg), "%s",
			 rk_strerror(resp->verr.e.code));
}

const char *rkd_req_arg(const struct rkd_req *req, const char *key)
{
	return req->query->get(req->conn, key);
}

int rkd_req_check_args(const struct rkd_req *req, const char *const *allowed,
		       struct rkd_verr *v)
{
	const char *bad = req->query->first_not_in(req->conn, allowed);
	if (bad)
		return rkd_verr_set(v, RK_EINVAL, bad, "%s: unknown query parameter", bad);
	return 0;
}
