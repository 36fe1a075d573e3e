/*
 * What request handlers share to answer a message: an error naming the
 * field, one job's JSON, the job a change names (with the 404/409 a caller
 * gets otherwise) and whether a caller may see a tenant's jobs. Used by
 * sched_msgs.c, sched_hold.c, sched_submit.c, sched_slurm_opts.c and the
 * off-thread reads (sched_read*.c); it calls only the job table
 * (sched_jobs.c).
 */
#include "daemon/sched/sched_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sched_set_err(struct rkd_msg *m, int code, const char *field, const char *msg)
{
	m->status = rk_error_http_status(code);
	rkd_verr_set(&m->verr, code, field, "%s", msg);
}

/* Reply with one job (and its history when `with_hist`). */
void sched_reply_job(struct rkd_sched *s, struct rkd_msg *m, int status, int64_t id, int with_hist)
{
	struct rkd_job_row row, *rp = &row;
	struct rk_error e;
	struct sjob *j = sched_job_find(s, id);
	int ret = 0;
	if (j) {
		sched_row_sync(j);
		rp = &j->row;
	} else if ((ret = rkd_store_job_get(s->store, id, &row, &e))) {
		sched_set_err(m, ret, "", e.msg);
		return;
	}
	struct rkd_hist_row *hist = NULL;
	int n_hist = 0;
	if (with_hist && rkd_store_history_get(s->store, id, &hist, &n_hist, &e)) {
		hist = NULL;
		n_hist = 0;
	}
	m->body = rkd_job_json(rp, with_hist, hist, n_hist);
	m->body =
	    j ? rkd_refit_json_add(j, m->body) : rkd_refit_json_add_stored(s->store, id, m->body);
	m->status = m->body ? status : 503;
	free(hist);
	if (!j)
		rkd_job_row_fini(&row);
}

/*
 * The tracked, modifiable job named by the message, or NULL with the error
 * set. Another tenant's job is "does not exist" to a tenant token, word for
 * word what a missing job gets: a tenant learns nothing of others' jobs.
 */
struct sjob *sched_job_for_change(struct rkd_sched *s, struct rkd_msg *m)
{
	struct sjob *j = sched_job_find(s, m->job_id);
	char msg[128];
	struct rkd_job_row row;
	struct rk_error e;
	int stored = !j && !rkd_store_job_get(s->store, m->job_id, &row, &e);
	const char *tenant = j ? j->core.tenant : stored ? row.tenant : NULL;
	if (!tenant || (m->who->authed && !sched_caller_sees(m->who, tenant))) {
		if (stored)
			rkd_job_row_fini(&row);
		snprintf(msg, sizeof(msg), "job %lld does not exist", (long long)m->job_id);
		sched_set_err(m, RK_ENOTFOUND, "id", msg);
		return NULL;
	}
	if (!j || sched_state_terminal(j->core.state)) {
		snprintf(msg, sizeof(msg), "job %lld has already ended (%s)", (long long)m->job_id,
		         j ? rkd_state_name(j->core.state) : row.state);
		if (stored)
			rkd_job_row_fini(&row);
		sched_set_err(m, RK_ECONFLICT, "id", msg);
		return NULL;
	}
	return j;
}

int sched_caller_sees(const struct rkd_caller *who, const char *tenant)
{
	return who->admin || (who->authed && !strcmp(who->tenant, tenant));
}
