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
#include "daemon/job/reason.h"
#include "daemon/sched/sched_internal.h"

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
	free(s->rchg);
	s->reasons_pub = s->reasons_build = NULL;
	s->rchg = NULL;
	pthread_mutex_destroy(&s->reasons_mu);
}

void sched_reasons_note_changed(struct rkd_sched *s, struct rk_job *const *chg, int n)
{
	s->n_rchg = 0;
	if (n > s->cap_rchg) {
		struct rk_job **v = realloc(s->rchg, (size_t)n * sizeof(*v));
		if (!v) {
			s->reasons_stale = 1; /* the next round recomputes every job */
			return;
		}
		s->rchg = v;
		s->cap_rchg = n;
	}
	if (n > 0)
		memcpy(s->rchg, chg, (size_t)n * sizeof(*chg));
	s->n_rchg = n;
}

static int grow_build(struct rkd_sched *s, int n)
{
	if (s->cap_reasons_build >= n)
		return 0;
	int cap = n + n / 2 + 16;
	struct rkd_reason_ent *v = realloc(s->reasons_build, (size_t)cap * sizeof(*v));
	if (!v)
		return RK_ENOMEM;
	s->reasons_build = v;
	s->cap_reasons_build = cap;
	return 0;
}

/* Swap reasons_build (n entries, id order) in for readers. */
static void publish(struct rkd_sched *s, int n)
{
	pthread_mutex_lock(&s->reasons_mu);
	struct rkd_reason_ent *old = s->reasons_pub;
	int old_cap = s->cap_reasons_pub;
	s->reasons_pub = s->reasons_build;
	s->cap_reasons_pub = s->cap_reasons_build;
	s->n_reasons_pub = n;
	pthread_mutex_unlock(&s->reasons_mu);
	s->reasons_build = old; /* readers only touch reasons_pub, under the lock */
	s->cap_reasons_build = old_cap;
}

/* j's new reason into its row; 1 when it changed. */
static int reason_store(struct sjob *j, enum rkd_reason r)
{
	const char *name = j->core.state == RK_JOB_PENDING ? rkd_reason_name(r) : "";
	if (!strcmp(j->row.pending_reason, name))
		return 0;
	memcpy(j->row.pending_reason, name, strlen(name) + 1); /* names fit: see above */
	return 1;
}

/* Every job the policy saw: O(queue), when capacity or quotas moved. */
static int recompute_all(struct rkd_sched *s, struct rkd_reason_ctx *c)
{
	if (grow_build(s, s->n_act))
		return RK_ENOMEM;
	int n = 0, moved = 0;
	for (int i = 0; i < s->n_act; i++) {
		struct sjob *j = SJOB_OF(s->act[i]);
		enum rkd_reason r = rkd_reason_of(c, &j->core, j->quota_held);
		moved |= reason_store(j, r);
		if (j->core.state == RK_JOB_PENDING)
			s->reasons_build[n++] =
			    (struct rkd_reason_ent){j->core.id, (unsigned char)r};
	}
	if (moved || s->reasons_stale || n != s->n_reasons_pub)
		publish(s, n);
	return 0;
}

static int by_id(const void *a, const void *b)
{
	int64_t x = (*(struct rk_job *const *)a)->id, y = (*(struct rk_job *const *)b)->id;
	return (x > y) - (x < y);
}

/*
 * Only the jobs the round changed or decided (the rest keep their reason:
 * nothing they depend on moved): O(changes log changes), plus one copy of
 * the published array merged with them.
 */
static int recompute_changed(struct rkd_sched *s, struct rkd_reason_ctx *c)
{
	int m = s->n_rchg + s->dec.n;
	struct rk_job **v = malloc((size_t)(m > 0 ? m : 1) * sizeof(*v));
	if (!v || grow_build(s, s->n_reasons_pub + m)) {
		free(v);
		return RK_ENOMEM;
	}
	int k = 0;
	for (int i = 0; i < s->n_rchg; i++)
		v[k++] = s->rchg[i];
	for (int i = 0; i < s->dec.n; i++) {
		struct sjob *j = sched_job_find(s, s->dec.v[i].job_id);
		if (j)
			v[k++] = &j->core;
	}
	if (k > 1)
		qsort(v, (size_t)k, sizeof(*v), by_id);
	int n = 0, p = 0, moved = 0;
	for (int i = 0; i < k; i++) {
		if (i > 0 && v[i] == v[i - 1])
			continue;
		struct sjob *j = SJOB_OF(v[i]);
		for (; p < s->n_reasons_pub && s->reasons_pub[p].id < j->core.id; p++)
			s->reasons_build[n++] = s->reasons_pub[p];
		if (p < s->n_reasons_pub && s->reasons_pub[p].id == j->core.id)
			p++; /* replaced by what it is now */
		/* A job the policy saw (held and ended jobs are not): its reason now. */
		if (!j->in_act)
			continue;
		enum rkd_reason r = rkd_reason_of(c, &j->core, j->quota_held);
		moved |= reason_store(j, r);
		if (j->core.state == RK_JOB_PENDING)
			s->reasons_build[n++] =
			    (struct rkd_reason_ent){j->core.id, (unsigned char)r};
	}
	for (; p < s->n_reasons_pub; p++)
		s->reasons_build[n++] = s->reasons_pub[p];
	free(v);
	if (moved || n != s->n_reasons_pub)
		publish(s, n);
	return 0;
}

void sched_reasons_update(struct rkd_sched *s, const struct rk_cluster *view, int incremental)
{
	if (incremental && !s->reasons_stale && s->n_rchg == 0 && s->dec.n == 0)
		return; /* nothing changed: every reason stands */
	int n_hl = 0;
	struct rk_job *const *hl = sched_feed_holders(s, &n_hl);
	struct rkd_reason_input in = {
	    .installed = &s->cluster,
	    .view = view,
	    .jobs = (struct rk_job *const *)s->act,
	    .n_jobs = s->n_act,
	    .holders = hl,
	    .n_holders = n_hl,
	    .quotas = s->quotas,
	    .n_quotas = s->n_quotas,
	};
	struct rkd_reason_ctx c;
	struct rk_error e;
	int rc = rkd_reason_ctx_init(&c, &in, &e);
	if (!rc) {
		int all = !incremental || s->reasons_stale || c.sig != s->reasons_sig;
		rc = all ? recompute_all(s, &c) : recompute_changed(s, &c);
		if (!rc)
			s->reasons_sig = c.sig;
		rkd_reason_ctx_fini(&c);
	}
	/* Out of memory: the reasons stay as they were, and all are redone next round. */
	s->reasons_stale = rc != 0;
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
