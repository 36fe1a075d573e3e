/*
 * Pending reasons on the scheduler thread (reason.h): after each round's
 * decisions are applied, every pending job the policy saw gets the reason
 * rkd_reasons_compute gives; held jobs keep "Held" (sched_hold.c). Only a
 * changed reason is written, by a one-column UPDATE in the round's
 * transaction: it is no change to the job (the change feed does not list
 * it), and a round that changed nothing recomputes nothing.
 */
#include "daemon/reason.h"
#include "daemon/sched_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sched_reason_set(struct rkd_sched *s, struct sjob *j, const char *reason)
{
	if (!strcmp(j->row.pending_reason, reason))
		return;
	snprintf(j->row.pending_reason, sizeof(j->row.pending_reason), "%s", reason);
	if (j->dirty)
		return; /* the queued row write carries it */
	struct rk_error e;
	if (sched_txn(s))
		return;
	if (rkd_store_job_reason_set(s->store, j->core.id, j->row.pending_reason, &e))
		sched_fail(s, &e);
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
	/* Out of memory: the reasons stay as they were, and are tried again next round. */
	s->reasons_stale = rc != 0;
	for (int i = 0; !rc && i < n; i++)
		if (s->act[i]->state == RK_JOB_PENDING)
			sched_reason_set(s, SJOB_OF(s->act[i]), rkd_reason_name(r[i]));
	free(r);
	free(qd);
}
