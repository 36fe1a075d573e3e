/*
 * Hold, release and requeue (issue 13; docs/api.md "Hold, release,
 * requeue"), as `scontrol hold|release|requeue` behave for a Slurm user:
 *
 * - hold keeps a pending job out of every round (sched_feed.c leaves it out
 *   of the policy's jobs) until it is released. A running job is refused,
 *   as Slurm refuses it: requeue with hold stops and holds it in one step.
 * - a hold is the owner's ("user") or the admin's ("admin"). The admin may
 *   release either and turn a user hold into an admin hold; the owner may
 *   release only its own, like Slurm's user vs. administrator hold
 *   (scontrol(1): "a user may only release a hold they placed").
 * - requeue stops a running job through the same checkpoint-and-stop path
 *   a policy's preemption takes (STOP_PREEMPT: the engine asks the run to
 *   checkpoint, exit 75 relaunches it from there), and puts it back pending.
 *
 * Hold state is the stored row's `hold` column, so a restart keeps it. A
 * hold or release changes what the policy sees, so the next round is a
 * full one (feed_valid = 0): policies keeping state drop or pick up the job.
 */
#include "daemon/job/reason.h"
#include "daemon/sched/sched_internal.h"

#include <stdio.h>
#include <string.h>

static const char *caller_name(const struct rkd_caller *who)
{
	return who->admin ? "admin" : who->tenant;
}

/*
 * Whether the caller's tenant is over its hold/release/requeue rate
 * (RKD_CHANGE_*); then m is the 429. Else one change is spent. Checked before
 * the job is looked up, so the answer says nothing about the job.
 */
static int change_throttled(struct rkd_sched *s, struct rkd_msg *m, int64_t now)
{
	if (m->who->admin)
		return 0;
	int t = -1;
	for (int i = 0; i < s->n_tenants; i++)
		if (!strcmp(s->tenants[i].name, m->who->tenant))
			t = i;
	if (t < 0 || !s->chg_budget)
		return 0; /* a token names its tenant's section: not reached */
	if (!s->chg_ms[t]) {
		s->chg_budget[t] = RKD_CHANGE_BURST;
		s->chg_ms[t] = now;
	}
	s->chg_budget[t] += (double)(now - s->chg_ms[t]) * RKD_CHANGE_PER_S / 1e3;
	if (s->chg_budget[t] > RKD_CHANGE_BURST)
		s->chg_budget[t] = RKD_CHANGE_BURST;
	s->chg_ms[t] = now;
	if (s->chg_budget[t] >= 1) {
		s->chg_budget[t] -= 1;
		return 0;
	}
	rkd_verr_set(&m->verr, RK_EUNAVAIL, "",
		     "tenant %s asks for more than %d holds, releases and requeues a second "
		     "(bursts of %d); retry after 1 s", m->who->tenant, RKD_CHANGE_PER_S,
		     RKD_CHANGE_BURST);
	m->status = 429;
	m->retry_after_s = 1;
	return 1;
}

/* Set or clear j's hold (by = "user", "admin" or ""), with its event. */
static void hold_write(struct rkd_sched *s, struct sjob *j, const char *by, const char *kind,
                       const char *detail)
{
	snprintf(j->row.hold, sizeof(j->row.hold), "%s", by);
	/* Held until released; once released, "None" until the next round says why it waits. */
	snprintf(j->row.pending_reason, sizeof(j->row.pending_reason), "%s",
	         *by ? rkd_reason_name(RKD_REASON_HELD) : "");
	s->feed_valid = 0;
	s->reasons_stale = 1;
	s->round_wanted = 1;
	sched_event(s, j->core.id, kind, detail);
	sched_job_write(s, j);
}

void sched_on_hold(struct rkd_sched *s, struct rkd_msg *m, int64_t now)
{
	if (change_throttled(s, m, now))
		return;
	struct sjob *j = sched_job_for_change(s, m);
	if (!j)
		return;
	char msg[256];
	long long id = (long long)j->core.id;
	if (j->core.state != RK_JOB_PENDING) {
		snprintf(msg, sizeof(msg),
		         "job %lld is %s: only a pending job can be held (requeue"
		         " with hold stops and holds it: `rubick requeue --hold %lld`)",
		         id, rkd_state_name(j->core.state), id);
		sched_set_err(m, RK_ECONFLICT, "id", msg);
		return;
	}
	const char *by = m->who->admin ? "admin" : "user";
	if (j->row.hold[0] && (!strcmp(j->row.hold, "admin") || !m->who->admin)) {
		snprintf(msg, sizeof(msg), "job %lld is already held (%s hold)", id, j->row.hold);
		sched_set_err(m, RK_ECONFLICT, "id", msg);
		return;
	}
	snprintf(msg, sizeof(msg), "%s hold by %s%s", by, caller_name(m->who),
	         j->row.hold[0] ? " (was a user hold)" : "");
	hold_write(s, j, by, "hold", msg);
	sched_reply_job(s, m, 200, j->core.id, 0);
}

void sched_on_release(struct rkd_sched *s, struct rkd_msg *m, int64_t now)
{
	if (change_throttled(s, m, now))
		return;
	struct sjob *j = sched_job_for_change(s, m);
	if (!j)
		return;
	char msg[256];
	long long id = (long long)j->core.id;
	if (!j->row.hold[0]) {
		snprintf(msg, sizeof(msg), "job %lld is not held", id);
		sched_set_err(m, RK_ECONFLICT, "id", msg);
		return;
	}
	if (!strcmp(j->row.hold, "admin") && !m->who->admin) {
		snprintf(msg, sizeof(msg),
		         "job %lld is held by the admin: only the admin can release"
		         " it",
		         id);
		sched_set_err(m, RK_EPERM, "id", msg);
		return;
	}
	snprintf(msg, sizeof(msg), "%s hold released by %s", j->row.hold, caller_name(m->who));
	hold_write(s, j, "", "release", msg);
	sched_reply_job(s, m, 200, j->core.id, 0);
}

void sched_on_requeue(struct rkd_sched *s, struct rkd_msg *m, int64_t now)
{
	if (change_throttled(s, m, now))
		return;
	struct sjob *j = sched_job_for_change(s, m);
	if (!j)
		return;
	char msg[256];
	long long id = (long long)j->core.id;
	if (j->core.state == RK_JOB_PENDING) {
		snprintf(msg, sizeof(msg),
		         "job %lld is pending: only a running job can be requeued%s", id,
		         m->hold_after ? " (`rubick hold` holds a pending job)" : "");
		sched_set_err(m, RK_ECONFLICT, "id", msg);
		return;
	}
	/* A policy's preemption (sched_round.c): checkpoint, stop, wait pending. */
	s->preemptions++;
	sched_preempt(s, j, now, "requeue");
	snprintf(msg, sizeof(msg), "requeued by %s: run %d checkpoints and stops%s",
	         caller_name(m->who), j->row.run, m->hold_after ? "; held" : "");
	sched_event(s, j->core.id, "requeue", msg);
	if (m->hold_after) {
		/* A running job holds nothing back: it was released before it started. */
		const char *by = m->who->admin ? "admin" : "user";
		snprintf(msg, sizeof(msg), "%s hold by %s (requeue)", by, caller_name(m->who));
		hold_write(s, j, by, "hold", msg);
	} else {
		s->reasons_stale = 1;
		s->round_wanted = 1;
		sched_job_write(s, j);
	}
	sched_reply_job(s, m, 200, j->core.id, 0);
}
