/*
 * Request workers (see http_pool.h): two FIFO lists under one mutex. A
 * list rather than a bounded ring: what is queued is bounded by the
 * connections the guard admits (http_guard.h), each of which has at most
 * one request in flight.
 */
#include "daemon/http/http_pool.h"

#include <pthread.h>
#include <stdlib.h>

struct fifo {
	struct rkd_pool_item *head, *tail;
	int n;
};

struct rkd_pool {
	pthread_mutex_t mu;
	pthread_cond_t any;  /* work of either kind */
	pthread_cond_t prio; /* priority work, for the reserved workers */
	struct fifo q[2];    /* [0] the rest, [1] priority */
	int stopping;
	int n_workers, reserved, started;
	struct worker {
		struct rkd_pool *p;
		pthread_t t;
		int reserved;
	} *w;
};

static struct rkd_pool_item *fifo_pop(struct fifo *f)
{
	struct rkd_pool_item *it = f->head;
	if (it) {
		f->head = it->next;
		if (!f->head)
			f->tail = NULL;
		f->n--;
	}
	return it;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct rkd_pool *p = w->p;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct rkd_pool_item *it = fifo_pop(&p->q[1]);
		if (!it && !w->reserved)
			it = fifo_pop(&p->q[0]);
		if (!it) {
			if (p->stopping)
				break;
			pthread_cond_wait(w->reserved ? &p->prio : &p->any, &p->mu);
			continue;
		}
		pthread_mutex_unlock(&p->mu);
		it->run(it);
		pthread_mutex_lock(&p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int rkd_pool_create(struct rkd_pool **out, int n_workers, int reserved, struct rk_error *err)
{
	if (n_workers < 2 || reserved < 1 || reserved >= n_workers)
		return rk_error_set(err, RK_EINVAL,
		                    "http workers: %d with %d reserved (need at least 2, and fewer "
		                    "reserved than in all)",
		                    n_workers, reserved);
	struct rkd_pool *p = calloc(1, sizeof(*p));
	if (!p || !(p->w = calloc((size_t)n_workers, sizeof(*p->w)))) {
		free(p);
		return rk_error_set(err, RK_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->any, NULL);
	pthread_cond_init(&p->prio, NULL);
	p->n_workers = n_workers;
	p->reserved = reserved;
	for (int i = 0; i < n_workers; i++) {
		p->w[i].p = p;
		p->w[i].reserved = i < reserved;
		if (pthread_create(&p->w[i].t, NULL, worker_main, &p->w[i])) {
			rkd_pool_destroy(p);
			return rk_error_set(err, RK_EIO, "cannot start HTTP worker thread %d of %d",
			                    i + 1, n_workers);
		}
		p->started++;
	}
	*out = p;
	return 0;
}

void rkd_pool_push(struct rkd_pool *p, struct rkd_pool_item *it, int priority)
{
	struct fifo *f = &p->q[priority ? 1 : 0];
	it->next = NULL;
	pthread_mutex_lock(&p->mu);
	if (f->tail)
		f->tail->next = it;
	else
		f->head = it;
	f->tail = it;
	f->n++;
	/* Priority work may go to either kind of worker: wake one of each. */
	pthread_cond_signal(&p->any);
	if (priority)
		pthread_cond_signal(&p->prio);
	pthread_mutex_unlock(&p->mu);
}

int rkd_pool_queued(struct rkd_pool *p)
{
	pthread_mutex_lock(&p->mu);
	int n = p->q[0].n + p->q[1].n;
	pthread_mutex_unlock(&p->mu);
	return n;
}

void rkd_pool_destroy(struct rkd_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stopping = 1;
	pthread_cond_broadcast(&p->any);
	pthread_cond_broadcast(&p->prio);
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->started; i++)
		pthread_join(p->w[i].t, NULL);
	/* Only the reserved workers started: run what the others would have. */
	for (struct rkd_pool_item *it; (it = fifo_pop(&p->q[0])) || (it = fifo_pop(&p->q[1]));)
		it->run(it);
	pthread_cond_destroy(&p->prio);
	pthread_cond_destroy(&p->any);
	pthread_mutex_destroy(&p->mu);
	free(p->w);
	free(p);
}
