/*
 * The Slurm engine's run table and the Slurm calls both its halves make
 * (engine_slurm.c launches and stops runs, engine_slurm_state.c polls and
 * adopts them): find or add a run, stamp its times, read and refresh Slurm's
 * job records, release and signal a job, and Slurm's node state words.
 * A leaf: it calls neither of them.
 */
#include "daemon/engine/slurm/engine_slurm_internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rkd_sl_run_stamp(const struct seng *e, int64_t job, int run, const char *what)
{
	char path[4200], v[32];
	if (rkd_path_fmt(path, sizeof(path), "%s/job-%lld/run-%d/%s", e->state_dir, (long long)job, run,
		what))
		return;
	snprintf(v, sizeof(v), "%lld\n", (long long)rkd_sl_wall_ms());
	rkd_write_atomic(path, v);
}

const char *rkd_sl_msg(void)
{
	return slurm_strerror(slurm_get_errno());
}

/* Slurm's state words ("IDLE+DRAIN" -> "idle+drain"; sinfo says "drain"/"draining"). */
void rkd_sl_node_state_set(struct seng *e, int k, uint32_t st)
{
	const char *w = slurm_node_state_string(st);
	size_t i = 0;
	for (; w && w[i] && i + 1 < sizeof(e->node_st[k]); i++)
		e->node_st[k][i] = (char)(w[i] >= 'A' && w[i] <= 'Z' ? w[i] - 'A' + 'a' : w[i]);
	e->node_st[k][i] = '\0';
}

/* How long a released run may stay pending: KillWait of a requeued predecessor and more. */
int64_t rkd_sl_pend_grace(const struct seng *e)
{
	int64_t g = 3 * (int64_t)e->grace_ms;
	return g > 15000 ? g : 15000;
}

struct srun *rkd_sl_run_find(struct seng *e, int64_t job, int run)
{
	for (int i = 0; i < e->n; i++)
		if (e->runs[i].job_id == job && e->runs[i].run == run)
			return &e->runs[i];
	return NULL;
}

struct srun *rkd_sl_run_add(struct seng *e)
{
	if (e->n == e->cap) {
		int ncap = e->cap ? 2 * e->cap : 16;
		struct srun *v = realloc(e->runs, (size_t)ncap * sizeof(*v));
		if (!v)
			return NULL;
		e->runs = v;
		e->cap = ncap;
	}
	struct srun *r = &e->runs[e->n++];
	memset(r, 0, sizeof(*r));
	return r;
}

/* The Slurm job's record in the last load; NULL when absent. */
slurm_job_info_t *rkd_sl_job_info(struct seng *e, uint32_t sid)
{
	if (!e->jobs)
		return NULL;
	for (uint32_t i = 0; i < e->jobs->record_count; i++)
		if (e->jobs->job_array[i].job_id == sid)
			return &e->jobs->job_array[i];
	return NULL;
}

/* Refresh e->jobs; keeps the old answer when Slurm says nothing changed. */
int rkd_sl_jobs_refresh(struct seng *e, int force)
{
	job_info_msg_t *m = NULL;
	time_t since = (!force && e->jobs) ? e->jobs->last_update : 0;
	int rc = slurm_load_jobs(since, &m, SHOW_ALL | SHOW_DETAIL); /* gres_detail_str */
	if (rc == 0 && m) {
		if (e->jobs)
			slurm_free_job_info_msg(e->jobs);
		e->jobs = m;
		return 0;
	}
	/* 1900 = SLURM_NO_CHANGE_IN_DATA, with a NULL answer (docs/slurm.md, "Slurm 22.05 facts") */
	return slurm_get_errno() == SLURM_NO_CHANGE_IN_DATA ? 0 : -1;
}

int rkd_sl_release(uint32_t sid, struct rk_error *err)
{
	job_desc_msg_t u;
	slurm_init_job_desc_msg(&u);
	u.job_id = sid;
	u.priority = INFINITE; /* = release */
	if (slurm_update_job(&u))
		return rk_error_set(err, RK_EIO, "slurm: releasing job %u: %s", sid, rkd_sl_msg());
	return 0;
}

void rkd_sl_run_signal(struct srun *r, enum phase ph)
{
	switch (ph) {
	case PH_USR1:
		slurm_kill_job(r->sid, SIGUSR1, KILL_JOB_BATCH);
		break;
	case PH_TERM:
		if (r->checkpoint)
			slurm_requeue(r->sid, JOB_REQUEUE_HOLD); /* SIGTERM, then SIGKILL */
		else /* Slurm's own cancel (scancel): SIGTERM to every process of the
		      * job, SIGKILL after KillWait, and CANCELLED in Slurm's record */
			slurm_kill_job(r->sid, SIGKILL, 0);
		break;
	case PH_KILL:
		if (!r->checkpoint)
			slurm_kill_job(r->sid, SIGKILL, 0);
		break;
	default:
		break;
	}
	r->phase = ph;
}
