/*
 * Request workers of rubickd's HTTP server (http_pool.c). libmicrohttpd's
 * event threads (a few, on epoll) must never block, but handlers do: they
 * wait for the scheduler thread's reply, listings are built. http.c
 * suspends a connection whose request needs a handler, hands the work to
 * this pool and resumes the connection when its reply is ready.
 *
 * Two queues: priority work (the admin's requests and job reports) and
 * the rest. `reserved` of the workers take priority work only, the others
 * take priority work first: however many tenant requests are queued or
 * blocked in handlers, an admin request or a job report waits at most for
 * one of the reserved workers' current request.
 */
#ifndef RUBICKD_HTTP_POOL_H
#define RUBICKD_HTTP_POOL_H

#include "rubick/error.h"

struct rkd_pool;

struct rkd_pool_item {
	struct rkd_pool_item *next; /* the pool's */
	void (*run)(struct rkd_pool_item *it); /* on a worker; may free `it` */
};

/* Start `n_workers` threads, `reserved` (< n_workers) of them for priority work. */
int rkd_pool_create(struct rkd_pool **out, int n_workers, int reserved, struct rk_error *err);
/* Queue `it`; 1 = priority. Never blocks. */
void rkd_pool_push(struct rkd_pool *p, struct rkd_pool_item *it, int priority);
/* Run what is queued, then join every worker. */
void rkd_pool_destroy(struct rkd_pool *p);
/* Queued (not yet running) items, for tests and /metrics. */
int rkd_pool_queued(struct rkd_pool *p);

#endif
