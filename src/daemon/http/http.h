/*
 * rubickd's HTTP front end (http.c is the only file that includes
 * microhttpd.h; its connection guard http_guard.c gets plain sockets and
 * addresses from it): listening on HOST:PORT or
 * unix:PATH, one thread per connection, body size limit, bearer-token
 * authentication, routing to the api_*.c handlers, and JSON error bodies
 * {"error": {"code": ..., "message": ..., "field": ...}}.
 */
#ifndef RUBICKD_HTTP_H
#define RUBICKD_HTTP_H

#include "daemon/job/jobspec.h"
#include "daemon/sched/sched.h"

#include <stddef.h>
#include <stdint.h>

struct rk_zoo;
struct rkd_http;

/* One bearer token: a tenant's, or the admin's (tenant ""). */
struct rkd_token {
	char token[128];
	char tenant[RK_TENANT_MAX];
	int admin;
};

/* A request as handlers see it. */
struct rkd_req {
	const char *method;
	const char *path;
	const char *body; /* NUL-terminated */
	size_t body_len;
	struct rkd_caller who;
	int64_t id;       /* the {id} of /v1/jobs/{id}..., 0 when none */
	void *conn;       /* for rkd_req_arg */
};

/* A reply: body (malloc'd, freed by http.c) or, for status >= 400 with no body, verr. */
struct rkd_resp {
	int status;
	char *body;
	const char *content_type; /* NULL = application/json */
	struct rkd_verr verr;
	int retry_after_s;        /* > 0: a Retry-After header (429) */
	int raw;                  /* 1 = the body as it is (no newline added): job logs */
};

/* Query-string argument `key`, or NULL. */
const char *rkd_req_arg(const struct rkd_req *req, const char *key);
/* RK_EINVAL naming the first query argument not in `allowed` (NULL-terminated). */
int rkd_req_check_args(const struct rkd_req *req, const char *const *allowed,
		       struct rkd_verr *v);

/* Fill resp with an error. */
void rkd_resp_error(struct rkd_resp *resp, int code, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Copy a scheduler reply into resp. */
void rkd_resp_from_msg(struct rkd_resp *resp, struct rkd_msg *m);

struct rkd_api {
	struct rkd_sched *sched;
	const struct rk_zoo *zoo;
};

struct rkd_http_config {
	const char *listen;          /* "HOST:PORT" or "unix:PATH" */
	struct rkd_api api;
	const struct rkd_token *tokens;
	int n_tokens;
	size_t max_body;             /* bytes */
	int max_connections;
	int metrics_public;          /* 1 = GET /metrics needs no token */
	/* Connection limits (http_guard.h); 0 = the default of each. */
	int max_connections_per_addr;
	int header_timeout_s;
	int body_timeout_s;
};

int rkd_http_start(struct rkd_http **out, const struct rkd_http_config *cfg, struct rk_error *err);
void rkd_http_stop(struct rkd_http *h);
/* The TCP port bound (useful with HOST:0), 0 for a unix socket. */
int rkd_http_port(const struct rkd_http *h);

/* Handlers (api_*.c). */
void rkd_api_jobs_submit(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_jobs_list(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_job_get(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_job_cancel(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_job_update(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_job_report(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_job_hold(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_job_release(const struct rkd_api *api, const struct rkd_req *req,
                         struct rkd_resp *resp);
void rkd_api_job_requeue(const struct rkd_api *api, const struct rkd_req *req,
                         struct rkd_resp *resp);
void rkd_api_nodes(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_cluster(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_policy_get(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_policy_put(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_job_log(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_job_events(const struct rkd_api *api, const struct rkd_req *req,
                        struct rkd_resp *resp);
void rkd_api_healthz(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);
void rkd_api_metrics(const struct rkd_api *api, const struct rkd_req *req, struct rkd_resp *resp);

#endif
