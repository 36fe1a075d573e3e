/*
 * The sending side of the scheduler thread's message queue (sched.c is the
 * receiving side) and the storage-failure flag both sides read. A leaf of
 * the scheduler's files (call graph in sched_internal.h): request threads
 * (sched_read.c, sched_submit.c, the api_* handlers) and the job table
 * (sched_jobs.c) call it, and it calls none of them.
 */
#include "daemon/sched/sched_internal.h"

#include <stdio.h>

void sched_fail(struct rkd_sched *s, const struct rk_error *e)
{
	/* The submit writer fails too: fail_err is set before failed, which is atomic. */
	pthread_mutex_lock(&s->mu);
	int first = !s->failed;
	if (first) {
		s->fail_err = *e;
		s->failed = 1;
	}
	pthread_mutex_unlock(&s->mu);
	if (first)
		fprintf(stderr, "rubickd: storage failure, stopping: %s\n", e->msg);
}

void rkd_sched_call(struct rkd_sched *s, struct rkd_msg *m)
{
	m->next = NULL;
	m->status = 0;
	m->body = NULL;
	sem_init(&m->replied, 0, 0);
	pthread_mutex_lock(&s->mu);
	if (s->stopping) {
		pthread_mutex_unlock(&s->mu);
		sem_destroy(&m->replied);
		m->status = 503;
		rkd_verr_set(&m->verr, RK_EUNAVAIL, "", "rubickd is shutting down");
		return;
	}
	if (s->tail)
		s->tail->next = m;
	else
		s->head = m;
	s->tail = m;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->mu);
	while (sem_wait(&m->replied))
		; /* EINTR */
	sem_destroy(&m->replied);
}

int rkd_sched_failed(struct rkd_sched *s)
{
	pthread_mutex_lock(&s->mu);
	int f = s->failed;
	pthread_mutex_unlock(&s->mu);
	return f;
}
