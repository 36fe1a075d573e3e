/*
 * What a request handler sees of the HTTP server: the request, the reply it
 * fills, the helpers it calls (http_reply.c) and the route that names it. The
 * server (http.c) is handed its routes as data (struct rkd_route[], the
 * table in api/api_routes.c, given by main.c), so it never calls a handler
 * by name and the handlers depend on the server, not the other way round.
 */
#ifndef RUBICKD_HTTP_REPLY_H
#define RUBICKD_HTTP_REPLY_H

#include "daemon/job/jobspec.h"
#include "daemon/sched/sched.h"

#include <stddef.h>
#include <stdint.h>

struct rkd_api; /* the handlers' context (api/api.h); the server only passes it on */

/*
 * The query string of a request, read through the server that holds the
 * connection (http.c, the one file that includes microhttpd.h), so the
 * helpers below need no libmicrohttpd.
 */
struct rkd_query_ops {
	const char *(*get)(void *conn, const char *key); /* the value of key, or NULL */
	/* The first query key not in `allowed` (NULL-terminated), or NULL. */
	const char *(*first_not_in)(void *conn, const char *const *allowed);
};

/* A request as handlers see it. */
struct rkd_req {
	const char *method;
	const char *path;
	const char *body; /* NUL-terminated */
	size_t body_len;
	struct rkd_caller who;
	int64_t id;       /* the {id} of /v1/jobs/{id}..., 0 when none */
	const struct rkd_query_ops *query; /* the server's, for rkd_req_arg */
	void *conn;       /* the server's connection, passed back to `query` */
};

/* A reply: body (malloc'd, freed by http.c) or, for status >= 400 with no body, verr. */
struct rkd_resp {
	int status;
	char *body;
	const char *content_type; /* NULL = application/json */
	struct rkd_verr verr;
	int retry_after_s;        /* > 0: a Retry-After header (429, 503) */
	int close;                /* 1: close the connection after this reply */
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

/*
 * RKD_AUTH_TOKEN: a tenant's or the admin's token (every read and write);
 * RKD_AUTH_BEARER: any bearer, resolved by the handler (a job's report token);
 * RKD_AUTH_METRICS: RKD_AUTH_TOKEN unless metrics_public = yes.
 */
enum rkd_auth {
	RKD_AUTH_TOKEN,
	RKD_AUTH_BEARER,
	RKD_AUTH_METRICS,
	RKD_AUTH_NONE /* GET /healthz: probes */
};

typedef void rkd_handler_fn(const struct rkd_api *api, const struct rkd_req *req,
			    struct rkd_resp *resp);

/*
 * One route. The server tries every route of its table in order: the last
 * one whose method and pattern match handles the request, and the methods of
 * all whose pattern matches make the Allow header of a 405.
 */
struct rkd_route {
	const char *method;
	const char *pattern; /* "{id}" stands for a job id */
	enum rkd_auth auth;
	rkd_handler_fn *fn;
};

#endif
