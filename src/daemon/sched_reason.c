/*
 * Pending reasons on the scheduler thread (reason.h): after each round's
 * decisions are applied, every pending job the policy saw gets the reason
 * rkd_reasons_compute gives (held jobs show "Held" from their stored hold,
 * sched_hold.c), and the round publishes them for reads.
 *
 * Reasons are not stored: writing one row per changed reason cost 0.37 s
 * in a round that first saw 20,000 queued jobs (bench_daemon_round, 16x8,
 * against 13 ms for the round itself), and a reason is only as good as the
 * latest round anyway; a restart recomputes them in its first round. Reads
 * (sched_read.c, on request threads) take them from an (id, reason) array
 * in id order that the scheduler thread swaps in under reasons_mu.
 */
#include "daemon/reason.h"
#include "daemon/sched_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every name rkd_reason_name gives fits the row's buffer (the longest is "Infeasible"). */
_Static_assert(sizeof("Infeasible") <= sizeof(((struct rkd_job_row *)0)->pending_reason),
               "pending_reason too short for the reason names");

void sched_reasons_init(struct rkd_sched *s)
{
	pthread_mutex_init(&s->reasons_mu, NULL);
}

void sched_reasons_fini(struct rkd_sched *s)
{
	free(s->reasons_pub);
	free(s->reasons_build);
	s->reasons_pub = s->reasons_build = NULL;
	pthread_mutex_destroy(&s->reasons_mu);
}

/* Publish what `r` says of the pending jobs of act (id order); 1 when out of memory. */
static int publish(struct rkd_sched *s, const enum rkd_reason *r)
{
	if (s->cap_reasons_build < s->n_act) {
		int cap = s->n_act + s->n_act / 2 + 16;
		struct rkd_reason_ent *v = realloc(s->reasons_build, (size_t)cap * sizeof(*v));
		if (!v)
			return 1;
		s->reasons_build = v;
		s->cap_reasons_build = cap;
	}
	int n = 0;
	for (int i = 0; i < s->n_act; i++)
		if (s->act[i]->state == RK_JOB_PENDING)
			s->reasons_build[n++] =
			    (struct rkd_reason_ent){s->act[i]->id, (unsigned char)r[i]};
	pthread_mutex_lock(&s->reasons_mu);
	struct rkd_reason_ent *old = s->reasons_pub;
	int old_cap = s->cap_reasons_pub;
	s->reasons_pub = s->reasons_build;
	s->cap_reasons_pub = s->cap_reasons_build;
	s->n_reasons_pub = n;
	pthread_mutex_unlock(&s->reasons_mu);
	s->reasons_build = old; /* readers only touch reasons_pub, under the lock */
	s->cap_reasons_build = old_cap;
	return 0;
}

void sched_reasons_update(struct rkd_sched *s, const struct rk_cluster *view, int changed)
{
	if (!changed && !s->reasons_stale)
		return;
	int n = s->n_act;
	enum rkd_reason *r = malloc((size_t)(n > 0 ? n : 1) * sizeof(*r));
	unsigned char *qd = malloc((size_t)(n > 0 ? n : 1));
	struct rk_error e;
	rk_error_clear(&e);
	int rc = r && qd ? 0 : RK_ENOMEM;
	for (int i = 0; !rc && i < n; i++)
		qd[i] = (unsigned char)SJOB_OF(s->act[i])->quota_held;
	struct rkd_reason_input in = {
	    .installed = &s->cluster,
	    .view = view,
	    .jobs = (struct rk_job *const *)s->act,
	    .n_jobs = n,
	    .quotas = s->quotas,
	    .n_quotas = s->n_quotas,
	    .quota_dropped = qd,
	};
	if (!rc)
		rc = rkd_reasons_compute(&in, r, &e);
	int moved = 0;
	for (int i = 0; !rc && i < n; i++) {
		struct sjob *j = SJOB_OF(s->act[i]);
		const char *name = rkd_reason_name(r[i]);
		if (j->core.state != RK_JOB_PENDING || !strcmp(j->row.pending_reason, name))
			continue;
		memcpy(j->row.pending_reason, name, strlen(name) + 1); /* names fit: reason.c */
		moved = 1;
	}
	/* Republished when a reason changed, or when the pending set may have (stale). */
	if (!rc && (moved || s->reasons_stale))
		rc = publish(s, r);
	/* Out of memory: the reasons stay as they were, and are tried again next round. */
	s->reasons_stale = rc != 0;
	free(r);
	free(qd);
}

static int ent_cmp(const void *key, const void *ent)
{
	int64_t a = *(const int64_t *)key, b = ((const struct rkd_reason_ent *)ent)->id;
	return (a > b) - (a < b);
}

void sched_reasons_fill(const struct rkd_sched *s, struct rkd_job_row *rows, int n)
{
	/* The lock is the one mutable part readers touch; s is otherwise read-only here. */
	pthread_mutex_t *mu = (pthread_mutex_t *)&s->reasons_mu;
	pthread_mutex_lock(mu);
	for (int i = 0; i < n; i++) {
		struct rkd_job_row *r = &rows[i];
		if (r->hold[0] || strcmp(r->state, "pending"))
			continue;
		const struct rkd_reason_ent *e =
		    s->n_reasons_pub ? bsearch(&r->id, s->reasons_pub, (size_t)s->n_reasons_pub,
		                               sizeof(*s->reasons_pub), ent_cmp)
		                     : NULL;
		if (e)
			snprintf(r->pending_reason, sizeof(r->pending_reason), "%s",
			         rkd_reason_name((enum rkd_reason)e->reason));
	}
	pthread_mutex_unlock(mu);
}
