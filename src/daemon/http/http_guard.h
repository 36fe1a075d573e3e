/*
 * The connection guard of rubickd's HTTP server (http_guard.c): keeps the
 * API answering while slow or idle clients hold connections open. Every
 * connection is tracked from accept to close in one of three states:
 * waiting for its request headers (new, or idle between keep-alive
 * requests), receiving its body, or busy (handler or response). A
 * connection that takes longer than header_timeout_ms to send its headers,
 * or body_timeout_ms to send its body, is shut down by a reaper thread,
 * whatever the rate it trickles bytes at. One client address holds at most
 * per_addr connections, and from soft_connections on, each new connection
 * evicts the oldest one that has not sent a complete request: idle and
 * unauthenticated connections can never fill the server, while busy ones
 * (authenticated requests being served, job reports) are never evicted.
 *
 * Two more bounds keep one client from locking the others out:
 *  - a reply must be sent within send_timeout_ms plus its size at
 *    send_min_bytes_per_s, however steadily the client reads: a client that
 *    reads a byte now and then, or pipelines requests and never reads,
 *    otherwise holds its connection busy for as long as it likes;
 *  - an address whose per_addr connections are all busy may open
 *    reserved_per_addr more, which are served only for the admin and job
 *    reports (http.c answers anyone else 503 there and closes): every local
 *    client shares 127.0.0.1, so without them a tenant's busy connections
 *    shut out the admin and the jobs on the same machine.
 */
#ifndef RUBICKD_HTTP_GUARD_H
#define RUBICKD_HTTP_GUARD_H

#include "rubick/error.h"

#include <stddef.h>
#include <sys/socket.h>

struct rkd_guard;

struct rkd_guard_config {
	int max_connections;   /* MHD refuses beyond this (hard) */
	int soft_connections;  /* from here on a new connection evicts the oldest waiting one */
	int per_addr;          /* connections one client address may hold */
	int header_timeout_ms; /* accept (or the end of the previous response) to full headers */
	int body_timeout_ms;   /* full headers to full body */
	int reserved_per_addr; /* beyond per_addr: for the admin and job reports only */
	int send_timeout_ms;   /* a reply queued to fully sent, plus its size at ... */
	int send_min_bytes_per_s; /* ... this rate */
};

/* Start the reaper thread. OUT: *out. RK_ENOMEM / RK_EIO. */
int rkd_guard_create(struct rkd_guard **out, const struct rkd_guard_config *cfg,
                     struct rk_error *err);
/* Stop the reaper (after MHD_stop_daemon: every connection is closed). */
void rkd_guard_destroy(struct rkd_guard *g);

/* MHD_AcceptPolicyCallback: 1 = accept (possibly after evicting another), 0 = refuse. */
int rkd_guard_accept(struct rkd_guard *g, const struct sockaddr *addr, socklen_t len);
/*
 * MHD_OPTION_NOTIFY_CONNECTION: a connection started (its socket `fd`, -1 if
 * unknown, and its client address, NULL for a unix socket) or closed.
 */
void rkd_guard_started(struct rkd_guard *g, int fd, const struct sockaddr *addr,
                       void **socket_context);
void rkd_guard_closed(struct rkd_guard *g, void **socket_context);

/* State changes, from the connection's socket context (NULL is ignored). */
void rkd_guard_headers_done(struct rkd_guard *g, void *socket_context); /* body next */
void rkd_guard_busy(struct rkd_guard *g, void *socket_context);         /* request complete */
void rkd_guard_idle(struct rkd_guard *g, void *socket_context);         /* reply sent */
/* The reply (`bytes` long) is queued: its send deadline starts. */
void rkd_guard_sending(struct rkd_guard *g, void *socket_context, size_t bytes);
/* 1 when the connection was accepted beyond its address's per_addr, in the reserve. */
int rkd_guard_reserved(struct rkd_guard *g, void *socket_context);

/* Counters for tests and /metrics: connections open, and evicted or timed out so far. */
void rkd_guard_stats(struct rkd_guard *g, int *open, unsigned long *evicted,
                     unsigned long *timed_out);

#endif
