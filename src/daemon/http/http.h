/*
 * rubickd's HTTP front end (http.c is the only file that includes
 * microhttpd.h: the handlers' helpers in http_reply.c read query arguments
 * through the rkd_query_ops it hands them, and its connection guard
 * http_guard.c gets plain sockets and addresses from it): listening on
 * HOST:PORT or unix:PATH, a few event threads and a pool of request workers,
 * body size limit,
 * bearer-token authentication, routing to the handlers of the route table
 * it is given (http_reply.h), and JSON error bodies
 * {"error": {"code": ..., "message": ..., "field": ...}}.
 */
#ifndef RUBICKD_HTTP_H
#define RUBICKD_HTTP_H

#include "daemon/http/http_reply.h"
#include "daemon/identity/config.h"

#include <stddef.h>
#include <stdint.h>

struct rkd_http;

struct rkd_http_config {
	const char *listen;          /* "HOST:PORT" or "unix:PATH" */
	/* The route table, tried in order, and what every handler gets (both borrowed). */
	const struct rkd_route *routes;
	size_t n_routes;
	const struct rkd_api *api;
	const struct rkd_token *tokens;
	int n_tokens;
	size_t max_body;             /* bytes */
	int max_connections;
	int metrics_public;          /* 1 = GET /metrics needs no token */
	/* Connection limits (http_guard.h); 0 = the default of each. */
	int max_connections_per_addr;
	int header_timeout_s;
	int body_timeout_s;
	int reserved_per_addr; /* -1 = none; 0 = the default */
	int send_timeout_s;
	int send_min_bytes_per_s;
	/* Server model (http.c): event threads, and request workers (an eighth reserved
	 * for the admin and job reports, http_pool.h); 0 = 4 and 64. */
	int threads;
	int workers;
};

int rkd_http_start(struct rkd_http **out, const struct rkd_http_config *cfg, struct rk_error *err);
void rkd_http_stop(struct rkd_http *h);
/* The TCP port bound (useful with HOST:0), 0 for a unix socket. */
int rkd_http_port(const struct rkd_http *h);

#endif
