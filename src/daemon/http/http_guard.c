/*
 * Connection guard (see http_guard.h). Connections are closed from outside
 * their thread with shutdown(2), never close(2): the descriptor stays the
 * connection's, MHD's thread sees the end of the stream and closes it the
 * usual way, and no other connection can ever be hit by a reused number.
 * Entries are removed when MHD reports the connection closed, which it does
 * before it closes the socket, and all access is under one mutex.
 *
 * libmicrohttpd stays behind http.c: the guard gets a connection's socket
 * and address as plain values, so it includes no MHD header.
 */
#include "daemon/http/http_guard.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <time.h>

enum cstate { C_WAIT, C_BODY, C_BUSY, C_SEND };

struct centry {
	struct centry *prev, *next; /* accept order: oldest first */
	int fd;
	int evicted; /* shut down, waiting for MHD to close it */
	int reserved; /* accepted beyond per_addr: the admin's and job reports' only */
	enum cstate state;
	int64_t since_ms; /* when the current state began (monotonic) */
	int64_t send_limit_ms; /* C_SEND: how long the reply may take */
	struct sockaddr_storage addr;
	socklen_t addr_len;
};

struct rkd_guard {
	struct rkd_guard_config cfg;
	pthread_mutex_t mu;
	pthread_cond_t wake;
	pthread_t reaper;
	int stopping;
	struct centry *head, *tail;
	int n_live; /* entries not evicted */
	unsigned long evicted, timed_out;
};

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Same client address (the port does not count); every unix-socket peer is one address. */
static int same_addr(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a->sa_family != b->ss_family)
		return 0;
	if (a->sa_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		               &((const struct sockaddr_in6 *)b)->sin6_addr,
		               sizeof(struct in6_addr));
	return 1;
}

static void kill_entry(struct rkd_guard *g, struct centry *e)
{
	shutdown(e->fd, SHUT_RDWR);
	e->evicted = 1;
	g->n_live--;
}

/* The oldest live connection that has not sent a complete request (optionally of `addr`). */
static struct centry *oldest_waiting(struct rkd_guard *g, const struct sockaddr *addr)
{
	for (int pass = 0; pass < 2; pass++) /* connections still waiting for headers first */
		for (struct centry *e = g->head; e; e = e->next)
			if (!e->evicted && e->state == (pass ? C_BODY : C_WAIT) &&
			    (!addr || same_addr(addr, &e->addr)))
				return e;
	return NULL;
}

int rkd_guard_accept(struct rkd_guard *g, const struct sockaddr *addr, socklen_t len)
{
	(void)len;
	pthread_mutex_lock(&g->mu);
	int ok = 1, n_addr = 0;
	for (struct centry *e = g->head; e; e = e->next)
		n_addr += !e->evicted && same_addr(addr, &e->addr);
	if (n_addr >= g->cfg.per_addr) {
		struct centry *v = oldest_waiting(g, addr);
		if (v) {
			kill_entry(g, v);
			g->evicted++;
		} else if (n_addr >= g->cfg.per_addr + g->cfg.reserved_per_addr) {
			ok = 0; /* every connection of this address, reserve included, is being served */
		} /* else: into the reserve (rkd_guard_started marks it) */
	}
	if (ok && g->n_live >= g->cfg.soft_connections) {
		struct centry *v = oldest_waiting(g, NULL);
		if (v) {
			kill_entry(g, v);
			g->evicted++;
		}
	}
	pthread_mutex_unlock(&g->mu);
	return ok;
}

void rkd_guard_started(struct rkd_guard *g, int fd, const struct sockaddr *addr,
                       void **socket_context)
{
	struct centry *e = calloc(1, sizeof(*e));
	*socket_context = e;
	if (!e)
		return; /* untracked: served, but never timed out or evicted */
	e->fd = fd;
	e->state = C_WAIT;
	e->since_ms = mono_ms();
	if (addr) {
		socklen_t l = addr->sa_family == AF_INET    ? sizeof(struct sockaddr_in)
		              : addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
		                                            : sizeof(sa_family_t);
		memcpy(&e->addr, addr, l);
		e->addr_len = l;
	} else {
		e->addr.ss_family = AF_UNIX;
	}
	pthread_mutex_lock(&g->mu);
	/* Called right after rkd_guard_accept on the same event thread: the same count, but
	 * for a connection another event thread accepted in between (then one more or
	 * one fewer is taken for the reserve, and the cap is passed by at most one a thread). */
	int n_addr = 0;
	for (struct centry *o = g->head; o; o = o->next)
		n_addr += !o->evicted && (addr ? same_addr(addr, &o->addr)
		                               : o->addr.ss_family == AF_UNIX);
	e->reserved = n_addr >= g->cfg.per_addr;
	e->prev = g->tail;
	if (g->tail)
		g->tail->next = e;
	else
		g->head = e;
	g->tail = e;
	g->n_live++;
	pthread_mutex_unlock(&g->mu);
}

void rkd_guard_closed(struct rkd_guard *g, void **socket_context)
{
	struct centry *e = *socket_context;
	if (!e)
		return;
	pthread_mutex_lock(&g->mu);
	if (e->prev)
		e->prev->next = e->next;
	else
		g->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		g->tail = e->prev;
	if (!e->evicted)
		g->n_live--;
	pthread_mutex_unlock(&g->mu);
	free(e);
	*socket_context = NULL;
}

static void set_state(struct rkd_guard *g, void *ctx, enum cstate st)
{
	struct centry *e = ctx;
	if (!e)
		return;
	pthread_mutex_lock(&g->mu);
	e->state = st;
	e->since_ms = mono_ms();
	pthread_mutex_unlock(&g->mu);
}

void rkd_guard_headers_done(struct rkd_guard *g, void *ctx)
{
	set_state(g, ctx, C_BODY);
}

void rkd_guard_busy(struct rkd_guard *g, void *ctx)
{
	set_state(g, ctx, C_BUSY);
}

void rkd_guard_idle(struct rkd_guard *g, void *ctx)
{
	set_state(g, ctx, C_WAIT);
}

void rkd_guard_sending(struct rkd_guard *g, void *ctx, size_t bytes)
{
	struct centry *e = ctx;
	if (!e)
		return;
	int64_t allowance = g->cfg.send_min_bytes_per_s > 0
	                        ? (int64_t)((double)bytes * 1000.0 / g->cfg.send_min_bytes_per_s)
	                        : 0;
	pthread_mutex_lock(&g->mu);
	e->state = C_SEND;
	e->since_ms = mono_ms();
	e->send_limit_ms = g->cfg.send_timeout_ms + allowance;
	pthread_mutex_unlock(&g->mu);
}

int rkd_guard_reserved(struct rkd_guard *g, void *ctx)
{
	struct centry *e = ctx;
	if (!e)
		return 0;
	pthread_mutex_lock(&g->mu);
	int r = e->reserved;
	pthread_mutex_unlock(&g->mu);
	return r;
}

void rkd_guard_stats(struct rkd_guard *g, int *open, unsigned long *evicted,
                     unsigned long *timed_out)
{
	pthread_mutex_lock(&g->mu);
	*open = g->n_live;
	*evicted = g->evicted;
	*timed_out = g->timed_out;
	pthread_mutex_unlock(&g->mu);
}

/* Shut down connections past their header, body or send deadline, four times a second. */
static void *reaper_main(void *arg)
{
	struct rkd_guard *g = arg;
	pthread_mutex_lock(&g->mu);
	while (!g->stopping) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 250 * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&g->wake, &g->mu, &ts);
		int64_t now = mono_ms();
		for (struct centry *e = g->head; e; e = e->next) {
			if (e->evicted || e->state == C_BUSY)
				continue;
			/* C_BUSY is rubickd's own work on the request: never cut. */
			int64_t limit = e->state == C_WAIT   ? g->cfg.header_timeout_ms
			                : e->state == C_BODY ? g->cfg.body_timeout_ms
			                                     : e->send_limit_ms;
			if (now - e->since_ms > limit) {
				kill_entry(g, e);
				g->timed_out++;
			}
		}
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

int rkd_guard_create(struct rkd_guard **out, const struct rkd_guard_config *cfg,
                     struct rk_error *err)
{
	struct rkd_guard *g = calloc(1, sizeof(*g));
	if (!g)
		return rk_error_set(err, RK_ENOMEM, "out of memory");
	g->cfg = *cfg;
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->wake, NULL);
	if (pthread_create(&g->reaper, NULL, reaper_main, g)) {
		pthread_cond_destroy(&g->wake);
		pthread_mutex_destroy(&g->mu);
		free(g);
		return rk_error_set(err, RK_EIO, "cannot start the connection reaper thread");
	}
	*out = g;
	return 0;
}

void rkd_guard_destroy(struct rkd_guard *g)
{
	if (!g)
		return;
	pthread_mutex_lock(&g->mu);
	g->stopping = 1;
	pthread_cond_signal(&g->wake);
	pthread_mutex_unlock(&g->mu);
	pthread_join(g->reaper, NULL);
	for (struct centry *e = g->head, *next; e; e = next) { /* none after MHD_stop_daemon */
		next = e->next;
		free(e);
	}
	pthread_cond_destroy(&g->wake);
	pthread_mutex_destroy(&g->mu);
	free(g);
}
