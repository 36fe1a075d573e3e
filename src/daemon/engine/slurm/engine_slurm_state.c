/*
 * The Slurm engine's view of its jobs and of the cluster (engine_slurm.c
 * submits and stops them; what the two share is in engine_slurm_internal.h):
 * poll (one slurm_load_jobs per call, a run ended or failed to start),
 * adopt (a restarted rubickd's runs, from their run-N/slurm_id), capacity
 * and node states, what foreign jobs hold, and describe (the partition
 * against the cluster spec). Facts and gotchas: docs/slurm.md ("Slurm 22.05 facts").
 */
#define _GNU_SOURCE
#include "daemon/engine/slurm/engine_slurm_internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

/* A small decimal number at the start of s ("12\n"); -1 if none. */
static int atoi_ok(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	return end != s && v >= 0 && v < (1 << 30) ? (int)v : -1;
}

/* Exit status of a finished Slurm job in the rkd_exit encoding. */
static int finished_status(const slurm_job_info_t *j)
{
	uint32_t st = j->job_state & JOB_STATE_BASE;
	uint32_t code = j->exit_code;
	if (st == JOB_NODE_FAIL || st == JOB_BOOT_FAIL)
		return RKD_EXIT_LOST;
	if (WIFSIGNALED(code) && WTERMSIG(code))
		return -(int)WTERMSIG(code);
	if (WIFEXITED(code) && (WEXITSTATUS(code) || st == JOB_COMPLETE))
		return WEXITSTATUS(code);
	if (st == JOB_CANCELLED || st == JOB_TIMEOUT || st == JOB_DEADLINE)
		return -SIGTERM;
	return RKD_EXIT_LOST;
}

/*
 * Whether run r ended by checkpointing on rubick's request: the batch script
 * then exits 0 (Slurm: COMPLETED) and keeps the job's 75 in
 * ckpt/.exit-run-N, which it writes only when ckpt_request names this run
 * (engine_slurm_files.c). Read from the files, so a restarted rubickd that
 * adopts the run tells a checkpoint from a completion too. ckpt/ is the job's
 * own folder: what it plants there instead of the file (a FIFO, a symlink to
 * a file only root may read) is refused, said in `why`, and the run counts
 * as completed, as when the file is absent.
 */
static int ckpt_exit(const struct seng *e, const struct srun *r, char *why, size_t cap)
{
	char path[4200], buf[32];
	if (rkd_path_fmt(path, sizeof(path), "%s/job-%lld/ckpt_request", e->state_dir,
			 (long long)r->job_id) ||
	    rkd_read_small(path, buf, sizeof(buf)) || atoi_ok(buf) != r->run)
		return 0;
	if (rkd_path_fmt(path, sizeof(path), "%s/job-%lld/ckpt/.exit-run-%d", e->state_dir,
			 (long long)r->job_id, r->run))
		return 0;
	int ret = rkd_read_job_file(path, buf, sizeof(buf), why, cap);
	if (ret && why[0])
		fprintf(stderr, "rubickd: job %lld run %d: %s\n", (long long)r->job_id, r->run, why);
	return !ret && atoi_ok(buf) == RKD_EXIT_CHECKPOINTED;
}

/*
 * Whether run r has ended, from its job record (NULL = gone from Slurm).
 * Fills *status. A released job that Slurm cannot start (BadConstraints,
 * a node down in its list) has failed for Slurm's reason.
 */
static int run_ended(const struct seng *e, struct srun *r, const slurm_job_info_t *j,
		     int *status, int *cancelled, int *not_started, char *why, size_t cap)
{
	why[0] = '\0';
	*cancelled = *not_started = 0;
	if (!j) {
		*status = RKD_EXIT_LOST;
		snprintf(why, cap, "slurm job %u vanished", r->sid);
		return 1;
	}
	uint32_t st = j->job_state & JOB_STATE_BASE;
	if (st == JOB_RUNNING || (j->job_state & JOB_COMPLETING)) {
		if (st == JOB_RUNNING)
			r->was_running = 1;
		return 0;
	}
	if (st == JOB_PENDING) {
		if (r->phase >= PH_TERM && j->priority == 0) {
			/* requeued held by our stop: the job had its SIGTERM */
			*status = r->checkpoint ? RKD_EXIT_CHECKPOINTED : -SIGTERM;
			return 1;
		}
		if (r->was_running) {
			/* Slurm requeued it (node failure): hold it so that rubick re-places it */
			job_desc_msg_t u;
			slurm_init_job_desc_msg(&u);
			u.job_id = r->sid;
			u.priority = 0;
			slurm_update_job(&u);
			*status = RKD_EXIT_LOST;
			snprintf(why, cap, "slurm requeued job %u%s%s", r->sid,
				 j->state_desc ? ": " : " (node failure)",
				 j->state_desc ? j->state_desc : "");
			return 1;
		}
		enum job_state_reason rs = j->state_reason;
		if (rs == WAIT_HELD || rs == WAIT_PRIORITY || rs == WAIT_RESOURCES || rs == WAIT_NO_REASON ||
		    rs == WAIT_NODE_NOT_AVAIL || rs == WAIT_TIME || rs == WAIT_HELD_USER) {
			/*
			 * Placed and waiting: the nodes are freeing up (a requeued
			 * predecessor, KillWait). Past the grace, what holds them is not
			 * rubick's: hold it again and let rubick place it anew, so that a
			 * job shown running in rubick is running in Slurm (issue 13).
			 */
			if (r->phase != PH_PLACED || !r->released_ms || j->priority == 0 ||
			    rkd_sl_wall_ms() - r->released_ms < r->pend_grace_ms)
				return 0;
			job_desc_msg_t u;
			slurm_init_job_desc_msg(&u);
			u.job_id = r->sid;
			u.priority = 0;
			slurm_update_job(&u);
			*status = RKD_EXIT_LOST;
			*not_started = 1;
			snprintf(why, cap, "slurm kept job %u pending for %.0f s (%s): put back", r->sid,
				 (double)(rkd_sl_wall_ms() - r->released_ms) / 1e3,
				 slurm_job_reason_string(rs));
			return 1;
		}
		snprintf(why, cap, "slurm cannot start job %u: %s", r->sid,
			 slurm_job_reason_string(rs));
		slurm_kill_job(r->sid, SIGKILL, 0);
		r->checkpoint = 0;
		*status = 1;
		return 1;
	}
	*status = finished_status(j);
	if (st == JOB_COMPLETE && *status == 0 && ckpt_exit(e, r, why, cap)) {
		*status = RKD_EXIT_CHECKPOINTED; /* Slurm says COMPLETED: see ckpt_exit */
		return 1;
	}
	if (r->phase < PH_USR1 && (st == JOB_CANCELLED || st == JOB_TIMEOUT ||
				   st == JOB_DEADLINE || st == JOB_PREEMPTED)) {
		/*
		 * Not asked by rubick: its status (75 once the job checkpointed on
		 * the SIGTERM) must not read as "checkpointed, relaunch me" (issue 13).
		 */
		*cancelled = 1;
		snprintf(why, cap, "cancelled outside rubick: slurm job %u %s (%s)%s%s", r->sid,
			 slurm_job_state_string(j->job_state),
			 st == JOB_TIMEOUT    ? "its Slurm time limit"
			 : st == JOB_DEADLINE ? "its Slurm deadline"
			 : st == JOB_PREEMPTED ? "preempted by Slurm"
					       : "scancel or scontrol by a user or an operator",
			 j->state_desc ? ": " : "", j->state_desc ? j->state_desc : "");
		return 1;
	}
	if (st != JOB_COMPLETE)
		snprintf(why, cap, "slurm job %u %s%s%s", r->sid, slurm_job_state_string(j->job_state),
			 j->state_desc ? ": " : "", j->state_desc ? j->state_desc : "");
	return 1;
}

int rkd_sl_poll(void *state, int64_t now_ms, struct rkd_exit *out, int max)
{
	struct seng *e = state;
	if (!e->n)
		return 0;
	for (int i = 0; i < e->n; i++) {
		struct srun *r = &e->runs[i];
		struct rk_error err;
		if (r->release_at && time(NULL) >= r->release_at && rkd_sl_release(r->sid, &err) == 0) {
			r->release_at = 0;
			r->released_ms = rkd_sl_wall_ms();
		}
	}
	if (rkd_sl_jobs_refresh(e, 0))
		return 0; /* controller unreachable: try again next time */
	int n_out = 0;
	for (int i = 0; i < e->n && n_out < max;) {
		struct srun *r = &e->runs[i];
		int status, cancelled, not_started;
		char why[256];
		int was = r->was_running;
		if (!run_ended(e, r, rkd_sl_job_info(e, r->sid), &status, &cancelled, &not_started, why,
			       sizeof(why))) {
			if (r->was_running && !was)
				rkd_sl_run_stamp(e, r->job_id, r->run, "running_ms");
			if (r->phase >= PH_USR1 && r->phase < PH_KILL && now_ms >= r->deadline_ms) {
				rkd_sl_run_signal(r, r->phase + 1);
				r->deadline_ms = now_ms + e->grace_ms;
			}
			i++;
			continue;
		}
		if (status == RKD_EXIT_LOST && !not_started) /* a copy may live on a dead node: fence */
			rkd_sl_run_stamp(e, r->job_id, r->run, "lost_ms");
		memset(&out[n_out], 0, sizeof(out[n_out]));
		out[n_out].job_id = r->job_id;
		out[n_out].run = r->run;
		out[n_out].status = status;
		out[n_out].cancelled = cancelled;
		out[n_out].not_started = not_started;
		snprintf(out[n_out].reason, sizeof(out[n_out].reason), "%s", why);
		n_out++;
		e->runs[i] = e->runs[--e->n];
	}
	return n_out;
}

int rkd_sl_adopt(void *state, int64_t job_id, int run, struct rkd_exit *ex,
		 struct rk_error *err)
{
	struct seng *e = state;
	char dir[4096], path[4200], buf[64];
	if (rkd_path_fmt(dir, sizeof(dir), "%s/job-%lld/run-%d", e->state_dir, (long long)job_id, run))
		return rk_error_set(err, RK_ERANGE, "job %lld: state path too long", (long long)job_id);
	memset(ex, 0, sizeof(*ex));
	ex->job_id = job_id;
	ex->run = run;
	rkd_path_fmt(path, sizeof(path), "%s/gpus", dir);
	rkd_read_small(path, ex->gpu_ids, sizeof(ex->gpu_ids));
	rkd_path_fmt(path, sizeof(path), "%s/slurm_id", dir);
	if (rkd_read_small(path, buf, sizeof(buf)))
		return RKD_ADOPT_ABSENT; /* never submitted */
	uint32_t sid = (uint32_t)strtoul(buf, NULL, 10);
	if (rkd_sl_jobs_refresh(e, 1))
		return rk_error_set(err, RK_EIO, "slurm: cannot list jobs: %s", rkd_sl_msg());
	slurm_job_info_t *j = rkd_sl_job_info(e, sid);
	if (j && (j->job_state & JOB_STATE_BASE) == JOB_PENDING && j->priority == 0)
		return RKD_ADOPT_ABSENT; /* still held: launch places and releases it */
	struct srun *r = rkd_sl_run_find(e, job_id, run);
	if (!r && !(r = rkd_sl_run_add(e)))
		return rk_error_set(err, RK_ENOMEM, "adopt: out of memory");
	r->job_id = job_id;
	r->run = run;
	r->sid = sid;
	r->released_ms = rkd_sl_wall_ms(); /* if pending: from now on, as if just released */
	r->pend_grace_ms = rkd_sl_pend_grace(e);
	char why[256];
	int status, cancelled, not_started;
	if (run_ended(e, r, j, &status, &cancelled, &not_started, why, sizeof(why))) {
		e->n--;
		if (status == RKD_EXIT_LOST)
			rkd_sl_run_stamp(e, job_id, run, "lost_ms");
		ex->status = status;
		ex->cancelled = cancelled;
		ex->not_started = not_started;
		snprintf(ex->reason, sizeof(ex->reason), "%s", why);
		return RKD_ADOPT_EXITED;
	}
	return RKD_ADOPT_ALIVE;
}

int rkd_sl_capacity(void *state, struct rk_node *nodes, int n)
{
	struct seng *e = state;
	node_info_msg_t *nm = NULL;
	if (slurm_load_node(e->nodes_update, &nm, SHOW_ALL) || !nm)
		return 0; /* unchanged (SLURM_NO_CHANGE_IN_DATA) or unreachable: keep what we know */
	e->nodes_update = nm->last_update;
	int changed = 0;
	for (uint32_t i = 0; i < nm->record_count; i++) {
		const node_info_t *x = &nm->node_array[i];
		int k = 0;
		while (k < e->n_nodes && k < n && (!x->name || strcmp(x->name, e->nodes[k])))
			k++;
		if (k >= e->n_nodes || k >= n)
			continue;
		rkd_sl_node_state_set(e, k, x->node_state);
		uint32_t base = x->node_state & NODE_STATE_BASE;
		int up = base != NODE_STATE_DOWN && base != NODE_STATE_FUTURE &&
			 base != NODE_STATE_UNKNOWN &&
			 !(x->node_state & (NODE_STATE_DRAIN | NODE_STATE_FAIL | NODE_STATE_NO_RESPOND));
		if (nodes[k].up != up) {
			nodes[k].up = up;
			changed++;
		}
	}
	slurm_free_node_info_msg(nm);
	return changed;
}

static int node_index(const struct seng *e, const char *name)
{
	for (int k = 0; name && k < e->n_nodes; k++)
		if (!strcmp(e->nodes[k], name))
			return k;
	return -1;
}

/* GPUs in one "gpu:8(IDX:0-7)" / "gpu:a100:2(IDX:0,3)" / "gres:gpu:4" string; 0 if none. */
static int gres_gpus(const char *g)
{
	const char *p = g ? strstr(g, "gpu") : NULL;
	if (!p)
		return 0;
	const char *end = strchr(p, '(');
	const char *c = NULL;
	for (const char *q = p; *q && (!end || q < end); q++)
		if (*q == ':')
			c = q;
	return c ? (int)strtol(c + 1, NULL, 10) : 0;
}

/* Whether Slurm job j is one of this rubickd's: its WorkDir is under our state folder. */
static int is_ours(const struct seng *e, const slurm_job_info_t *j)
{
	size_t n = strlen(e->state_dir);
	return j->work_dir && !strncmp(j->work_dir, e->state_dir, n) && j->work_dir[n] == '/';
}

/* Add what running job j holds on each of its nodes to gpus/cpus. */
static void foreign_job(const struct seng *e, const slurm_job_info_t *j, int *gpus, int *cpus,
			int n)
{
	hostlist_t hl = j->nodes ? slurm_hostlist_create(j->nodes) : NULL;
	if (!hl)
		return;
	uint32_t nn = j->num_nodes ? j->num_nodes : 1;
	char *h;
	for (uint32_t k = 0; (h = slurm_hostlist_shift(hl)); k++) {
		int i = node_index(e, h);
		free(h);
		if (i < 0 || i >= n)
			continue;
		int g = k < j->gres_detail_cnt && j->gres_detail_str ? gres_gpus(j->gres_detail_str[k])
								      : gres_gpus(j->tres_per_node);
		gpus[i] += g;
		cpus[i] += (int)((j->num_cpus + nn - 1) / nn);
	}
	slurm_hostlist_destroy(hl);
}

int rkd_sl_foreign(void *state, int *gpus, int *cpus, int n)
{
	struct seng *e = state;
	memset(gpus, 0, (size_t)n * sizeof(*gpus));
	memset(cpus, 0, (size_t)n * sizeof(*cpus));
	rkd_sl_jobs_refresh(e, 0);
	for (uint32_t i = 0; e->jobs && i < e->jobs->record_count; i++) {
		const slurm_job_info_t *j = &e->jobs->job_array[i];
		uint32_t st = j->job_state & JOB_STATE_BASE;
		if ((st == JOB_RUNNING || st == JOB_SUSPENDED || (j->job_state & JOB_COMPLETING)) &&
		    !is_ours(e, j))
			foreign_job(e, j, gpus, cpus, n);
	}
	/*
	 * A reservation takes its nodes wholly: rubick's jobs are in none. Also one
	 * that starts later: Slurm starts no job on its nodes whose time limit
	 * reaches into it, and rubick's jobs mostly have none (INFINITE), so
	 * placing there leaves the run pending ("ReqNodeNotAvail, May be reserved
	 * for other job", measured on the emulated cluster) until put back. A job
	 * with a short time limit could still fit before it: rubick does not use
	 * that gap.
	 */
	reserve_info_msg_t *rm = NULL;
	if (slurm_load_reservations(e->resv ? e->resv->last_update : 0, &rm) == 0 && rm) {
		if (e->resv)
			slurm_free_reservation_info_msg(e->resv);
		e->resv = rm;
	}
	time_t now = time(NULL);
	for (uint32_t r = 0; e->resv && r < e->resv->record_count; r++) {
		const reserve_info_t *v = &e->resv->reservation_array[r];
		if ((v->end_time && v->end_time <= now) || !v->node_list)
			continue;
		if (!strcmp(v->node_list, "ALL")) {
			for (int k = 0; k < n && k < e->n_nodes; k++) {
				gpus[k] = (int)e->node_gpus[k];
				cpus[k] = (int)e->node_cpus[k];
			}
			continue;
		}
		hostlist_t hl = slurm_hostlist_create(v->node_list);
		char *h;
		while (hl && (h = slurm_hostlist_shift(hl))) {
			int k = node_index(e, h);
			free(h);
			if (k >= 0 && k < n) {
				gpus[k] = (int)e->node_gpus[k];
				cpus[k] = (int)e->node_cpus[k];
			}
		}
		if (hl)
			slurm_hostlist_destroy(hl);
	}
	int changed = 0;
	for (int k = 0; k < n && k < e->n_nodes; k++) {
		if (gpus[k] > (int)e->node_gpus[k])
			gpus[k] = (int)e->node_gpus[k];
		changed |= gpus[k] != e->fgn_gpus[k] || cpus[k] != e->fgn_cpus[k];
		e->fgn_gpus[k] = gpus[k];
		e->fgn_cpus[k] = cpus[k];
	}
	return changed;
}

int rkd_sl_describe(void *state, struct rk_cluster *c, char *diff, size_t cap,
		    struct rk_error *err)
{
	struct seng *e = state;
	if (c->n_nodes < 1)
		return rk_error_set(err, RK_EINVAL, "slurm: no template node");
	int n = e->n_nodes, diffs = 0;
	diff[0] = '\0';
	if (n != c->n_nodes) {
		snprintf(diff, cap, "--cluster has %d nodes, Slurm's partition %s has %d", c->n_nodes,
			 e->partition, n);
		diffs++;
		struct rk_node *v = realloc(c->nodes, (size_t)n * sizeof(*v));
		if (!v)
			return rk_error_set(err, RK_ENOMEM, "slurm engine: out of memory");
		for (int i = c->n_nodes; i < n; i++)
			v[i] = v[0];
		c->nodes = v;
		c->n_nodes = n;
	}
	for (int i = 0; i < n; i++) {
		struct rk_node *d = &c->nodes[i];
		int gpus = (int)e->node_gpus[i], cpus = (int)e->node_cpus[i];
		int64_t mem = (int64_t)e->node_mem[i];
		int same = d->gpus == gpus && d->cpus == cpus && (!mem || d->mem_mb == mem);
		if (!same && !diffs++)
			snprintf(diff, cap, "node %d (%s): --cluster says %d GPUs, %d CPUs, %lld MiB; "
				 "Slurm says %d GPUs, %d CPUs, %lld MiB", i, e->nodes[i], d->gpus, d->cpus,
				 (long long)d->mem_mb, gpus, cpus, (long long)mem);
		d->id = i;
		d->gpus = gpus;
		d->cpus = cpus;
		if (mem)
			d->mem_mb = mem;
	}
	return diffs;
}
