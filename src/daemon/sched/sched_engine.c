/*
 * Engine events of the scheduler thread: stopping runs, the GPU ids live runs
 * hold, launching decided runs once their records are durable, what a run's
 * exit means for its job, and the attained service of running jobs.
 */
#include "daemon/sched/sched_internal.h"

#include "rubick/plan.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sched_stop_run(struct rkd_sched *s, struct sjob *j, enum stop_kind why, int64_t now)
{
	j->launch_pending = 0;
	if (!j->live_run)
		return;
	/* A cancel overrides a restart; a restart never downgrades a cancel. */
	if (j->stop == STOP_NONE || why == STOP_CANCEL)
		j->stop = why;
	s->engine->stop(s->engine_state, j->core.id, j->live_run, why != STOP_CANCEL, now);
	sched_dirty(s, j);
}

/* ---- GPU ids ---------------------------------------------------------------- */

/*
 * Live runs hold virtual GPU ids (global: node N's GPU g is gpu_base[N] + g).
 * A GPU has at most two holders: policies that share GPUs (rk_share.gpu_mask,
 * policy.h) put two jobs on one; every other share takes GPUs nobody holds.
 */
#define MAX_HOLDERS 2

/* Count the global ids in `text` as held (take = 1) or released. */
void sched_ids_mark(struct rkd_sched *s, const char *text, int take)
{
	const char *p = text;
	while (*p) {
		char *end;
		long g = strtol(p, &end, 10);
		if (end == p)
			break;
		if (g >= 0 && g < s->n_gpus) {
			if (take && s->gpu_holders[g] < 255)
				s->gpu_holders[g]++;
			else if (!take && s->gpu_holders[g] > 0)
				s->gpu_holders[g]--;
		}
		p = *end == ',' ? end + 1 : end;
	}
}

static int ids_append(char *buf, size_t cap, size_t *len, int id)
{
	int n = snprintf(buf + *len, cap - *len, "%s%d", *len ? "," : "", id);
	if (n < 0 || (size_t)n >= cap - *len)
		return RK_ERANGE;
	*len += (size_t)n;
	return 0;
}

/*
 * The ids for `a`: a share's gpu_mask when the policy named GPUs (each with
 * room for one more holder), else the lowest GPUs nobody holds. 0 and the
 * list in buf, or RK_EINFEASIBLE while a draining run still holds some.
 */
static int ids_pick(struct rkd_sched *s, const struct rk_alloc *a, char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int i = 0; i < a->n; i++) {
		const struct rk_share *sh = &a->shares[i];
		if (sh->node < 0 || sh->node >= s->cluster.n_nodes)
			return RK_EINVAL;
		int base = s->gpu_base[sh->node], got = 0;
		for (int g = 0; g < s->cluster.nodes[sh->node].gpus && got < sh->gpus; g++) {
			int named = sh->gpu_mask && ((sh->gpu_mask >> g) & 1);
			int ok = sh->gpu_mask ? named && s->gpu_holders[base + g] < MAX_HOLDERS
					      : s->gpu_holders[base + g] == 0;
			if (named && !ok)
				return RK_EINFEASIBLE;
			if (!ok)
				continue;
			if (ids_append(buf, cap, &len, base + g))
				return RK_ERANGE;
			got++;
		}
		if (got < sh->gpus)
			return RK_EINFEASIBLE;
	}
	return 0;
}

/* ---- launches and exits ------------------------------------------------------ */

static void job_finish(struct rkd_sched *s, struct sjob *j, enum rk_job_state st, int64_t now,
		       const char *reason)
{
	j->core.state = st;
	rk_alloc_fini(&j->core.alloc);
	j->launch_pending = 0;
	s->compact_check = 1;
	j->row.end_ms = now;
	sched_row_set(&j->row.reason, reason);
	j->core.last_change_ms = now;
	sched_dirty(s, j);
}

/* Launch j if its GPUs are free (else look again later). */
static void launch_one(struct rkd_sched *s, struct sjob *j, int64_t now)
{
	char ids[1024], alloc[4096], plan[RK_PLAN_TEXT_MAX];
	struct rk_error se;
	rk_error_clear(&se);
	if (rk_plan_space_check(&j->core.plan, &j->core.space, &se)) {
		/*
		 * Never run a plan the job's script cannot run. Rounds drop such a
		 * decision (rk_decisions_validate), so only a stored run from before
		 * gets here: back to the queue, where the policy picks another plan.
		 */
		char msg[sizeof(se.msg) + 160];
		rk_plan_format(&j->core.plan, plan, sizeof(plan));
		snprintf(msg, sizeof(msg), "run %d plan %s not launched: %s", j->row.run, plan,
			 se.msg);
		j->launch_pending = 0;
		sched_event(s, j->core.id, "launch-refused", msg);
		sched_preempt(s, j, now, "plan outside space");
		sched_dirty(s, j);
		s->round_wanted = 1;
		return;
	}
	if (ids_pick(s, &j->core.alloc, ids, sizeof(ids))) {
		s->launch_check = 1; /* a draining run still holds some: look again */
		return;
	}
	rkd_alloc_format(&j->core.alloc, alloc, sizeof(alloc));
	rk_plan_format(&j->core.plan, plan, sizeof(plan));
	struct rk_error e;
	rk_error_clear(&e);
	const struct rkd_ident *ident = NULL;
	char token[RKD_TOKEN_HEX];
	rkd_token_derive(s->token_key, j->core.id, token);
	if (s->ids && rkd_idmap_find(s->ids, j->row.tenant, &ident, &e)) {
		/* the config changed since it was accepted: it never runs as root */
		j->launch_pending = 0;
		job_finish(s, j, RK_JOB_FAILED, now, e.msg);
		sched_event(s, j->core.id, "launch-failed", e.msg);
		s->round_wanted = 1;
		return;
	}
	const struct rkd_tenant_cfg *tc = sched_tenant_find(s, j->row.tenant);
	struct rkd_launch ln = {
		.job_id = j->core.id,
		.run = j->row.run,
		.command = j->spec.command ? j->spec.command : j->spec.launch,
		.plan_text = plan,
		.alloc_text = alloc,
		.gpu_ids = ids,
		.url = s->url,
		.job_token = token,
		.global_batch = j->core.global_batch,
		.iters_total = j->core.iters_total,
		.gpus = rk_alloc_total_gpus(&j->core.alloc),
		.cpus = rk_alloc_total_cpus(&j->core.alloc),
		.ident = ident,
		/* the submission's own Slurm options, else the tenant's (sched_slurm_opts.c) */
		.partition = j->spec.slurm_partition[0] ? j->spec.slurm_partition
			     : tc ? tc->slurm_partition : NULL,
		.account = j->spec.slurm_account[0] ? j->spec.slurm_account
			   : tc ? tc->slurm_account : NULL,
		.qos = j->spec.slurm_qos[0] ? j->spec.slurm_qos : tc ? tc->slurm_qos : NULL,
		.time_limit_min = j->spec.slurm_time_limit ? j->spec.slurm_time_limit
				  : tc ? tc->slurm_time_limit : 0,
		.env = j->spec.env,
		.n_env = j->spec.n_env,
	};
	j->launch_pending = 0;
	if (s->engine->launch(s->engine_state, &ln, &e)) {
		job_finish(s, j, RK_JOB_FAILED, now, e.msg);
		sched_event(s, j->core.id, "launch-failed", e.msg);
		s->round_wanted = 1;
		return;
	}
	j->live_run = j->row.run;
	j->stop = STOP_NONE;
	sched_ids_mark(s, ids, 1);
	sched_row_set(&j->row.gpu_ids, ids);
	sched_dirty(s, j);
	s->launches++;
	char detail[1200];
	snprintf(detail, sizeof(detail), "run %d gpus %s plan %s", j->row.run, ids, plan);
	sched_event(s, j->core.id, "launch", detail);
}

/*
 * Launch every job whose run is decided, stored and whose GPUs are free, in
 * id order (which job gets the lowest free GPU ids). Such jobs hold their
 * allocation: the change feed's holders are looked at, not the queue.
 */
void sched_launch_ready(struct rkd_sched *s, int64_t now)
{
	if (!s->launch_check)
		return; /* nothing decided or freed since the last look */
	s->launch_check = 0;
	int n = 0;
	struct rk_job *const *c = sched_feed_launchable(s, &n);
	for (int i = 0; c && i < n; i++)
		launch_one(s, SJOB_OF(c[i]), now);
	for (int i = 0; !c && i < s->n_jobs; i++)
		if (sched_launchable(s->jobs[i]))
			launch_one(s, s->jobs[i], now);
}

/* Next run of a job: number stored now, launched after the commit. */
void sched_run_next(struct rkd_sched *s, struct sjob *j)
{
	j->row.run++;
	j->core.observed_sps = 0; /* nothing observed of the new run yet (refit.c) */
	j->launch_pending = 1;
	s->launch_check = 1;
	sched_dirty(s, j);
}

static void exit_describe(int status, char *buf, size_t cap)
{
	if (status == RKD_EXIT_LOST)
		snprintf(buf, cap, "run lost (its supervisor died)");
	else if (status < 0)
		snprintf(buf, cap, "killed by signal %d", -status);
	else
		snprintf(buf, cap, "exited with status %d", status);
}

/*
 * Preempt j: back to pending with its allocation given up, its live run
 * asked to checkpoint and stop (STOP_PREEMPT), to resume from the checkpoint
 * when a round places it again. A policy's preemption (sched_round.c), a
 * requeue (sched_hold.c) and a changed request (sched_msgs.c) take this one
 * path; `why` is the history entry. The caller counts it (a preemption or a
 * reconfiguration) and queues or writes the row.
 */
void sched_preempt(struct rkd_sched *s, struct sjob *j, int64_t now, const char *why)
{
	j->core.state = RK_JOB_PENDING;
	rk_alloc_fini(&j->core.alloc);
	j->core.restarts++;
	j->core.last_change_ms = now;
	sched_stop_run(s, j, STOP_PREEMPT, now);
	sched_history(s, j, now, why);
}

void sched_on_exit(struct rkd_sched *s, const struct rkd_exit *x, int64_t now)
{
	struct sjob *j = sched_job_find(s, x->job_id);
	if (!j || x->run != j->live_run)
		return; /* not the run we track: nothing holds resources for it */
	s->exits++;
	enum stop_kind why = j->stop;
	j->live_run = 0;
	j->stop = STOP_NONE;
	s->launch_check = 1; /* its GPUs are free */
	s->compact_check = 1;
	sched_ids_mark(s, j->row.gpu_ids, 0);
	sched_row_set(&j->row.gpu_ids, "");
	j->row.exit_status = x->status;
	sched_dirty(s, j);
	s->round_wanted = 1;
	char what[300];
	exit_describe(x->status, what, sizeof(what));
	if (x->reason[0]) /* the engine knows more (Slurm's state and reason) */
		snprintf(what, sizeof(what), "%s", x->reason);
	sched_event(s, j->core.id, "exit", what);
	if (sched_state_terminal(j->core.state))
		return; /* cancelled: the run was only draining */
	if (x->not_started && why == STOP_NONE) {
		/* Slurm could not start it where it was placed: back to pending, placed anew. */
		j->core.state = RK_JOB_PENDING;
		rk_alloc_fini(&j->core.alloc);
		j->core.last_change_ms = now;
		sched_history(s, j, now, "put back");
		sched_event(s, j->core.id, "put-back", what);
		return;
	}
	if (x->cancelled || (why == STOP_NONE && (x->status == RKD_EXIT_CHECKPOINTED ||
						   x->status == -SIGTERM || x->status == -SIGINT ||
						   x->status == -SIGHUP))) {
		/*
		 * Ended from outside while rubick asked for no stop (issue 13): 75
		 * means "checkpointed, relaunch me" only after rubick's own request,
		 * so a scancel, a time limit or a user's kill is a cancel.
		 */
		char reason[400];
		snprintf(reason, sizeof(reason), "%s%s", x->cancelled ? "" : "stopped outside rubick "
			 "(rubick asked for no checkpoint): ", what);
		sched_history(s, j, now, "cancel");
		job_finish(s, j, RK_JOB_CANCELLED, now, reason);
		sched_event(s, j->core.id, "cancelled-outside", reason);
		return;
	}
	if (x->status == 0) {
		j->core.iters_done = j->core.iters_total;
		job_finish(s, j, RK_JOB_DONE, now, "completed");
		return;
	}
	if (why != STOP_NONE || x->status == RKD_EXIT_CHECKPOINTED || x->status == RKD_EXIT_LOST) {
		/* Stopped on request (or lost): go on with whatever is decided now. */
		if (j->row.run > x->run)
			return; /* a newer run is decided and waits for this one's GPUs */
		if (j->core.state == RK_JOB_RESTARTING || j->core.state == RK_JOB_RUNNING) {
			if (why == STOP_NONE) { /* the job itself asked to be restarted */
				j->core.state = RK_JOB_PENDING;
				rk_alloc_fini(&j->core.alloc);
				j->core.restarts++;
				sched_history(s, j, now, what);
				return;
			}
			j->core.state = RK_JOB_RUNNING;
			sched_run_next(s, j);
		}
		return;
	}
	job_finish(s, j, RK_JOB_FAILED, now, what);
}

/* GPU-seconds of service (Tiresias' attained service), brought up to date once a second. */
void sched_accrue(struct rkd_sched *s, int64_t now, int64_t *last)
{
	if (now - *last < 1000)
		return;
	double dt_s = (double)(now - *last) / 1e3;
	*last = now;
	if (dt_s <= 0)
		return;
	/* Only holders have GPUs to count: the change feed lists them, not the queue. */
	int n_hl = 0;
	struct rk_job *const *hl = sched_feed_holders(s, &n_hl);
	for (int i = 0; hl && i < n_hl; i++)
		if (SJOB_OF(hl[i])->live_run)
			hl[i]->attained_gpu_s += dt_s * rk_alloc_total_gpus(&hl[i]->alloc);
	for (int i = 0; !hl && i < s->n_jobs; i++)
		if (s->jobs[i]->live_run)
			s->jobs[i]->core.attained_gpu_s +=
				dt_s * rk_alloc_total_gpus(&s->jobs[i]->core.alloc);
}
