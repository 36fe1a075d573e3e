/*
 * The Slurm engine: rubickd as the external scheduler of a Slurm 22.05
 * cluster, through libslurm (with engine_slurm_state.c and
 * engine_slurm_runs.c, the only files that include slurm/slurm.h, through
 * engine_slurm_internal.h).
 * Facts and gotchas this follows: docs/slurm.md ("Slurm 22.05 facts").
 *
 * One Slurm batch job per rubick job, reused across runs:
 *   launch  first run: submit held (priority 0, §4 "Hold every new job");
 *           later runs: the job was requeued held by stop(). Then place it:
 *           one update sets ReqNodeList, NumNodes=N-N, NumTasks, NumCPUs and
 *           the GPUs together (gotcha 1), the plan in the Comment and
 *           begin_time=now (gotcha 2); a second update releases it.
 *   stop    checkpoint: SIGUSR1 to the batch shell, then after the grace
 *           period requeue-hold (SIGTERM, SIGKILL after KillWait); cancel:
 *           Slurm's cancel (SIGTERM, SIGKILL after KillWait; CANCELLED).
 *   poll    one slurm_load_jobs per call (SLURM_NO_CHANGE_IN_DATA when
 *           nothing moved); a run has ended when its job is no longer
 *           RUNNING/COMPLETING after having run, or is held again after a
 *           requeue, or failed to start (BadConstraints and friends).
 *
 * The job's environment is frozen at submit (gotcha 6), so the batch script
 * sources STATE/job-ID/env.sh, rewritten before each release, for the plan,
 * run number and allocation; the plan is also in the Comment for humans
 * (`squeue -o %k`). rubick node i is the i-th node Slurm lists (the
 * cluster spec given to rubickd must match the Slurm partition).
 *
 * Per run STATE/job-ID/run-N/ holds `slurm_id`, `gpus` and timestamps
 * (`launch_ms`, `running_ms`, `stop_ms`, wall clock) that a restarted
 * rubickd uses to adopt the run and that tests read for latency figures.
 */
#define _GNU_SOURCE
#include "daemon/engine/slurm/engine_slurm_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *seng_node_state(void *state, int node)
{
	struct seng *e = state;
	return node >= 0 && node < e->n_nodes && e->node_st[node][0] ? e->node_st[node] : NULL;
}

static const char *seng_node_name(void *state, int node)
{
	struct seng *e = state;
	return node >= 0 && node < e->n_nodes ? e->nodes[node] : NULL;
}

/*
 * The partition rubick schedules: `want`, else Slurm's default one. Its
 * name and node list (malloc'd) into *name and *nodes.
 */
static int find_partition(const char *want, char **name, char **nodes, struct rk_error *err)
{
	partition_info_msg_t *pm = NULL;
	if (slurm_load_partitions(0, &pm, SHOW_ALL) || !pm)
		return rk_error_set(err, RK_EIO, "slurm: cannot list partitions: %s", rkd_sl_msg());
	const partition_info_t *hit = NULL;
	char names[512] = "";
	size_t len = 0;
	for (uint32_t i = 0; i < pm->record_count; i++) {
		const partition_info_t *p = &pm->partition_array[i];
		if (!p->name)
			continue;
		int n =
		    snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "", p->name);
		if (n > 0 && (size_t)n < sizeof(names) - len)
			len += (size_t)n;
		if (want && *want ? !strcmp(p->name, want) : (p->flags & PART_FLAG_DEFAULT) != 0)
			hit = hit ? hit : p;
	}
	int ret = 0;
	if (!hit)
		ret = want && *want ? rk_error_set(err, RK_ENOTFOUND,
		                                   "--partition %s: Slurm has no such "
		                                   "partition (it has: %s)",
		                                   want, names)
		                    : rk_error_set(err, RK_ENOTFOUND,
		                                   "slurm: no default partition: name "
		                                   "one with --partition (Slurm has: %s)",
		                                   names);
	else {
		*name = strdup(hit->name);
		*nodes = strdup(hit->nodes ? hit->nodes : "");
		if (!*name || !*nodes)
			ret = rk_error_set(err, RK_ENOMEM, "slurm engine: out of memory");
	}
	slurm_free_partition_info_msg(pm);
	return ret;
}

/* Whether `name` is in the hostlist expression `list`. */
static int in_hostlist(const char *list, const char *name)
{
	hostlist_t hl = slurm_hostlist_create(list);
	if (!hl)
		return 0;
	int found = 0;
	char *h;
	while (!found && (h = slurm_hostlist_shift(hl))) {
		found = !strcmp(h, name);
		free(h);
	}
	slurm_hostlist_destroy(hl);
	return found;
}

static int load_nodes(struct seng *e, const char *partition, struct rk_error *err)
{
	char *part_nodes = NULL;
	int pret = find_partition(partition, &e->partition, &part_nodes, err);
	if (pret)
		return pret;
	node_info_msg_t *nm = NULL;
	if (slurm_load_node(0, &nm, SHOW_ALL)) {
		free(part_nodes);
		return rk_error_set(err, RK_EIO, "slurm: cannot list nodes (SLURM_CONF=%s): %s",
		                    getenv("SLURM_CONF") ? getenv("SLURM_CONF") : "default",
		                    rkd_sl_msg());
	}
	size_t cnt = nm->record_count ? nm->record_count : 1;
	e->nodes = calloc(cnt, sizeof(*e->nodes));
	e->node_cpus = calloc(cnt, sizeof(*e->node_cpus));
	e->node_gpus = calloc(cnt, sizeof(*e->node_gpus));
	e->addrs = calloc(cnt, sizeof(*e->addrs));
	e->node_st = calloc(cnt, sizeof(*e->node_st));
	e->fgn_gpus = calloc(cnt, sizeof(*e->fgn_gpus));
	e->fgn_cpus = calloc(cnt, sizeof(*e->fgn_cpus));
	e->node_mem = calloc(cnt, sizeof(*e->node_mem));
	if (!e->nodes || !e->node_cpus || !e->node_gpus || !e->addrs || !e->node_st ||
	    !e->fgn_gpus || !e->fgn_cpus || !e->node_mem) {
		slurm_free_node_info_msg(nm);
		free(part_nodes);
		return rk_error_set(err, RK_ENOMEM, "slurm engine: out of memory");
	}
	for (uint32_t i = 0; i < nm->record_count; i++) {
		if (!nm->node_array[i].name || !in_hostlist(part_nodes, nm->node_array[i].name))
			continue; /* not in the partition rubick schedules */
		e->node_mem[e->n_nodes] = nm->node_array[i].real_memory;
		e->node_cpus[e->n_nodes] = nm->node_array[i].cpus;
		const char *g =
		    nm->node_array[i].gres ? strstr(nm->node_array[i].gres, "gpu:") : NULL;
		if (g) { /* "gpu:8" or "gpu:TYPE:8", maybe "(S:0-1)" after */
			const char *c = strrchr(g, ':');
			e->node_gpus[e->n_nodes] = (uint32_t)strtoul(c + 1, NULL, 10);
		}
		rkd_sl_node_state_set(e, e->n_nodes, nm->node_array[i].node_state);
		e->nodes[e->n_nodes] = strdup(nm->node_array[i].name);
		const char *addr = nm->node_array[i].node_addr;
		e->addrs[e->n_nodes] = strdup(addr && *addr ? addr : nm->node_array[i].name);
		if (!e->nodes[e->n_nodes] || !e->addrs[e->n_nodes]) {
			slurm_free_node_info_msg(nm);
			free(part_nodes);
			return rk_error_set(err, RK_ENOMEM, "slurm engine: out of memory");
		}
		e->n_nodes++;
	}
	slurm_free_node_info_msg(nm);
	free(part_nodes);
	return 0;
}

static void seng_destroy(void *state)
{
	struct seng *e = state;
	if (!e)
		return;
	/* Slurm jobs keep running: a restarted daemon adopts them. */
	for (int i = 0; i < e->n_nodes; i++) {
		free(e->nodes[i]);
		free(e->addrs ? e->addrs[i] : NULL);
	}
	free(e->nodes);
	free(e->addrs);
	free(e->node_cpus);
	free(e->node_gpus);
	free(e->node_st);
	free(e->node_mem);
	free(e->partition);
	free(e->fgn_gpus);
	free(e->fgn_cpus);
	if (e->resv)
		slurm_free_reservation_info_msg(e->resv);
	if (e->jobs)
		slurm_free_job_info_msg(e->jobs);
	free(e->runs);
	free(e->state_dir);
	free(e);
	slurm_fini();
}

static int seng_create(void **state, const struct rkd_engine_config *cfg, struct rk_error *err)
{
	/* 0711 as root: jobs of other users reach their own folders, list none (engine.h). */
	if (rkd_mkdir_p(cfg->state_dir) ||
	    rkd_dir_ensure(cfg->state_dir, geteuid() == 0 ? 0711 : 0700, (uid_t)-1, (gid_t)-1))
		return rk_error_set(err, RK_EIO, "%s: cannot create state folder: %s",
		                    cfg->state_dir, strerror(errno));
	slurm_init(NULL); /* first; NULL reads $SLURM_CONF (docs/slurm.md, "Slurm 22.05 facts") */
	struct seng *e = calloc(1, sizeof(*e));
	if (!e) {
		slurm_fini();
		return rk_error_set(err, RK_ENOMEM, "slurm engine: out of memory");
	}
	e->grace_ms = cfg->grace_ms;
	/* Absolute: jobs run in their work/ folder and get these paths (RUBICK_CKPT_DIR). */
	e->state_dir = realpath(cfg->state_dir, NULL);
	int ret = e->state_dir ? load_nodes(e, cfg->partition, err)
	                       : rk_error_set(err, RK_ENOMEM, "slurm engine: out of memory");
	if (!ret && e->n_nodes == 0)
		ret = rk_error_set(err, RK_EINVAL, "slurm: partition %s lists no nodes",
		                   e->partition ? e->partition : "?");
	if (ret) {
		seng_destroy(e);
		return ret;
	}
	*state = e;
	return 0;
}

/* Submit a held batch job; its Slurm id into *sid. */
static int submit_held(const struct rkd_launch *ln, const char *job_dir, const char *e_partition,
                       uint32_t *sid, struct rk_error *err)
{
	/*
	 * A clean environment (identity.h), never rubickd's: slurmd adds SLURM_*
	 * and the GPUs' CUDA_VISIBLE_DEVICES, env.sh the RUBICK_* of each run.
	 */
	char **env = calloc((size_t)ln->n_env + 8, sizeof(*env));
	int n_env =
	    env ? rkd_ident_env(ln->ident, 1, ln->env, ln->n_env, env, ln->n_env + 8) : RK_ENOMEM;
	char *script = rkd_sl_make_script(job_dir, ln->command);
	char name[64], out[4200], work[4200];
	snprintf(name, sizeof(name), "rubick-%lld", (long long)ln->job_id);
	rkd_path_fmt(out, sizeof(out), "%s/log", job_dir);
	rkd_path_fmt(work, sizeof(work), "%s/work", job_dir);
	int ret = 0;
	if (n_env <= 0 || !script) {
		ret = !script && strstr(ln->command, "RUBICK_CMD_EOF")
		          ? rk_error_set(err, RK_EINVAL,
		                         "slurm submit: job %lld: its command has a "
		                         "line RUBICK_CMD_EOF, which ends the batch script's copy "
		                         "of it",
		                         (long long)ln->job_id)
		          : rk_error_set(err, RK_ENOMEM, "slurm submit: out of memory");
		goto out;
	}
	uint32_t k = (uint32_t)n_env;
	job_desc_msg_t d;
	slurm_init_job_desc_msg(&d);
	d.name = name;
	d.script = script;
	d.environment = env;
	d.env_size = k;
	d.work_dir = work; /* the job user's own folder: job_dir holds rubickd's records */
	d.std_out = out;
	d.std_err = out;
	d.open_mode = OPEN_MODE_APPEND; /* every run appends to the one log */
	/* Slurm's USER, accounting and file permissions are the tenant's user's (identity.h). */
	d.user_id = ln->ident ? ln->ident->uid : getuid();
	d.group_id = ln->ident ? ln->ident->gid : getgid();
	d.min_nodes = d.max_nodes = 1;
	d.num_tasks = 1;
	d.priority = 0; /* held until placed */
	/* another partition must hold the nodes rubick places on (docs/slurm.md) */
	d.partition = (char *)(ln->partition && *ln->partition ? ln->partition : e_partition);
	if (ln->account && *ln->account)
		d.account = (char *)ln->account;
	if (ln->qos && *ln->qos)
		d.qos = (char *)ln->qos;
	if (ln->time_limit_min > 0)
		d.time_limit = (uint32_t)ln->time_limit_min; /* Slurm's TIMEOUT: a cancel */
	d.requeue = 1;
	d.comment = (char *)ln->plan_text;
	submit_response_msg_t *r = NULL;
	if (slurm_submit_batch_job(&d, &r) || !r) {
		ret = rk_error_set(err, RK_EIO, "slurm: submitting job %lld: %s",
		                   (long long)ln->job_id, rkd_sl_msg());
		goto out;
	}
	*sid = r->job_id; /* error_code 2042 (held) is informational */
	slurm_free_submit_response_response_msg(r);
out:
	for (int i = 0; i < n_env; i++)
		free(env[i]);
	free(env);
	free(script);
	return ret;
}

/* Build the Slurm placement of an "node:gpus:cpus:mem[:mask];..." allocation. */
struct place {
	char nodes[2048];
	uint32_t n_nodes, cpus_per_node, gpus_total, gpus_per_node; /* per node 0 if uneven */
	struct rkd_sl_ranks ranks; /* the same nodes, for the rendezvous (env.sh) */
};

static int place_parse(const struct seng *e, const char *alloc, struct place *p,
                       struct rk_error *err)
{
	memset(p, 0, sizeof(*p));
	size_t len = 0;
	int uneven = 0;
	for (const char *s = alloc; *s;) {
		int node, gpus, cpus, used = 0;
		if (sscanf(s, "%d:%d:%d%n", &node, &gpus, &cpus, &used) != 3)
			return rk_error_set(err, RK_EINVAL, "slurm: allocation '%s': bad share",
			                    alloc);
		if (node < 0 || node >= e->n_nodes)
			return rk_error_set(
			    err, RK_EINVAL,
			    "slurm: allocation '%s': node %d, but Slurm has %d nodes", alloc, node,
			    e->n_nodes);
		/* Held jobs are not checked by Slurm until released (gotcha 10): check here. */
		if ((uint32_t)cpus > e->node_cpus[node] || (uint32_t)gpus > e->node_gpus[node])
			return rk_error_set(
			    err, RK_EINVAL,
			    "slurm: allocation '%s': %d GPUs and %d CPUs on node %s, which "
			    "has %u GPUs and %u CPUs in Slurm (make --cluster match Slurm)",
			    alloc, gpus, cpus, e->nodes[node], e->node_gpus[node],
			    e->node_cpus[node]);
		int n = snprintf(p->nodes + len, sizeof(p->nodes) - len, "%s%s", len ? "," : "",
		                 e->nodes[node]);
		if (n < 0 || (size_t)n >= sizeof(p->nodes) - len)
			return rk_error_set(err, RK_ERANGE,
			                    "slurm: allocation '%s': too many nodes", alloc);
		len += (size_t)n;
		if (p->ranks.n == RKD_SL_MAX_NODES)
			return rk_error_set(err, RK_ERANGE,
			                    "slurm: allocation '%s': too many nodes", alloc);
		p->ranks.name[p->ranks.n] = e->nodes[node];
		p->ranks.gpus[p->ranks.n++] = gpus;
		if (p->n_nodes && (uint32_t)gpus != p->gpus_per_node)
			uneven = 1;
		p->gpus_per_node = (uint32_t)gpus;
		p->gpus_total += (uint32_t)gpus;
		if ((uint32_t)cpus > p->cpus_per_node)
			p->cpus_per_node = (uint32_t)cpus;
		p->n_nodes++;
		s += used;
		while (*s && *s != ';')
			s++;
		if (*s == ';')
			s++;
	}
	if (!p->n_nodes)
		return rk_error_set(err, RK_EINVAL, "slurm: empty allocation");
	if (uneven)
		p->gpus_per_node = 0;
	if (!p->cpus_per_node)
		p->cpus_per_node = 1;
	for (int i = 0; i < e->n_nodes; i++)
		if (e->nodes[i] == p->ranks.name[0])
			p->ranks.master_addr = e->addrs[i];
	return 0;
}

/*
 * MASTER_PORT of a run: below the ephemeral range (32768+, where a listener
 * on port 0 may sit), different for every job and run of this rubickd, and
 * offset by a hash of its state folder so that two rubickd sharing nodes (the
 * tests' emulated clusters on one machine) are unlikely to pick the same one.
 */
static int master_port(const struct seng *e, int64_t job, int run)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (const char *c = e->state_dir; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	return 10000 + (int)((h + (uint64_t)job * 8 + (uint64_t)run) % 20000);
}

/* Set nodes, sizes, GPUs, plan and begin time in one update (gotcha 1). */
static int place(uint32_t sid, const struct place *p, const char *plan, struct rk_error *err)
{
	char tres_node[64] = "", tres_job[64] = "";
	/*
	 * Even shares: GPUs per node. Uneven: GPUs per job, which cons_tres
	 * spreads over the listed nodes (--gpus=12 on 2 nodes gave 8+4:
	 * docs/slurm.md, "Slurm 22.05 facts").
	 */
	if (p->gpus_per_node)
		snprintf(tres_node, sizeof(tres_node), "gres:gpu:%u", p->gpus_per_node);
	else if (p->gpus_total)
		snprintf(tres_job, sizeof(tres_job), "gres:gpu:%u", p->gpus_total);
	job_desc_msg_t u;
	slurm_init_job_desc_msg(&u);
	u.job_id = sid;
	u.req_nodes = (char *)p->nodes;
	u.min_nodes = u.max_nodes = p->n_nodes;
	u.num_tasks = p->n_nodes;
	u.ntasks_per_node = 1;
	u.cpus_per_task = (uint16_t)p->cpus_per_node;
	u.min_cpus = p->n_nodes * p->cpus_per_node;
	u.tres_per_node = tres_node;
	u.tres_per_job = tres_job;
	u.comment = (char *)plan;  /* replaces the last run's stop note (stop_mark) */
	u.begin_time = time(NULL); /* a requeue sets a ~121 s BeginTime (gotcha 2) */
	if (slurm_update_job(&u))
		return rk_error_set(err, RK_EIO, "slurm: placing job %u on %s: %s", sid, p->nodes,
		                    rkd_sl_msg());
	return 0;
}

static int seng_launch(void *state, const struct rkd_launch *ln, struct rk_error *err)
{
	struct seng *e = state;
	char job_dir[4096], run_dir[4200], path[4300], buf[64];
	if (rkd_sl_run_find(e, ln->job_id, ln->run))
		return rk_error_set(err, RK_EEXIST, "job %lld run %d is already running",
		                    (long long)ln->job_id, ln->run);
	char rel[64];
	if (rkd_path_fmt(job_dir, sizeof(job_dir), "%s/job-%lld", e->state_dir,
	                 (long long)ln->job_id) ||
	    rkd_path_fmt(run_dir, sizeof(run_dir), "%s/run-%d", job_dir, ln->run) ||
	    rkd_path_fmt(rel, sizeof(rel), "job-%lld/run-%d", (long long)ln->job_id, ln->run))
		return rk_error_set(err, RK_ERANGE, "job %lld: state path too long",
		                    (long long)ln->job_id);
	/* Made and checked from descriptors (files.h): rubickd's own all the way, so that
	 * the path-based writes below cannot be redirected by anyone but rubickd's user. */
	int run_fd = rkd_dir_below(e->state_dir, rel, 0700);
	if (run_fd < 0)
		return rk_error_set(err, RK_EIO, "%s: %s", run_dir,
		                    errno == EPERM ? "a folder on the way is not rubickd's own or "
		                                     "others can write it; not used"
		                                   : strerror(errno));
	close(run_fd);
	rkd_sl_run_stamp(e, ln->job_id, ln->run, "launch_ms");
	struct place p;
	int ret = place_parse(e, ln->alloc_text, &p, err);
	if (ret)
		return ret;
	p.ranks.master_port = master_port(e, ln->job_id, ln->run);
	if (rkd_sl_job_dirs(ln, job_dir) || rkd_sl_write_env(ln, job_dir, &p.ranks) ||
	    rkd_sl_write_node_script(ln, job_dir))
		return rk_error_set(err, RK_EIO, "%s/env.sh, node.sh: cannot write: %s", job_dir,
		                    strerror(errno));
	/* Reuse the job's Slurm job: requeue it held unless it already waits held. */
	uint32_t sid = 0;
	time_t ended = 0;
	rkd_path_fmt(path, sizeof(path), "%s/slurm_id", job_dir);
	if (rkd_read_small(path, buf, sizeof(buf)) == 0)
		sid = (uint32_t)strtoul(buf, NULL, 10);
	if (sid) {
		rkd_sl_jobs_refresh(e, 1);
		slurm_job_info_t *j = rkd_sl_job_info(e, sid);
		uint32_t st = j ? (j->job_state & JOB_STATE_BASE) : JOB_END;
		if (!j || st == JOB_END)
			sid = 0; /* purged (MinJobAge) or unknown: submit afresh */
		else if (st != JOB_PENDING) {
			int rc = slurm_requeue(sid, JOB_REQUEUE_HOLD); /* returns the code (§5) */
			if (rc && rc != SLURM_SUCCESS) {
				slurm_kill_job(sid, SIGKILL, 0);
				sid = 0;
			}
			ended = time(NULL);
		} else if (j->restart_cnt > 0) {
			/* requeued (by stop() or by Slurm): EndTime may read Unknown */
			time_t now = time(NULL);
			ended = (j->end_time > 0 && j->end_time <= now) ? j->end_time : now;
		}
	}
	if (!sid && (ret = submit_held(ln, job_dir, e->partition, &sid, err)))
		return ret;
	snprintf(buf, sizeof(buf), "%u\n", sid);
	if (rkd_write_atomic(path, buf))
		return rk_error_set(err, RK_EIO, "%s: %s", path, strerror(errno));
	rkd_path_fmt(path, sizeof(path), "%s/slurm_id", run_dir);
	rkd_write_atomic(path, buf);
	rkd_path_fmt(path, sizeof(path), "%s/gpus", run_dir);
	rkd_write_atomic(path, ln->gpu_ids ? ln->gpu_ids : "");
	if ((ret = place(sid, &p, ln->plan_text, err)))
		return ret;
	/*
	 * slurmd revokes the credentials of a requeued job issued up to the
	 * second it ended (whole seconds), so a release within that second
	 * fails at once with "Job credential revoked": release only once the
	 * clock has moved past it (poll does, without blocking the daemon).
	 */
	time_t release_at = ended ? ended + 1 : 0;
	/*
	 * Fencing: the run number every run of this job checks
	 * before each step and before publishing a checkpoint (RUBICK_FENCE_FILE,
	 * rubickd's file: the job cannot forge it); a stale copy stops at its
	 * next step. When the previous run was lost with its node (Slurm cannot
	 * say its processes are gone), the new run starts only once a stale copy
	 * has had a grace period and a step to see the fence.
	 */
	rkd_path_fmt(path, sizeof(path), "%s/current_run", job_dir);
	snprintf(buf, sizeof(buf), "%d\n", ln->run);
	if (rkd_write_atomic(path, buf) || chmod(path, 0644))
		return rk_error_set(err, RK_EIO, "%s: %s", path, strerror(errno));
	char lost[4300];
	if (ln->run > 1 &&
	    !rkd_path_fmt(lost, sizeof(lost), "%s/run-%d/lost_ms", job_dir, ln->run - 1) &&
	    access(lost, F_OK) == 0) {
		time_t fenced = time(NULL) + (e->grace_ms + 999) / 1000 + 1;
		if (fenced > release_at)
			release_at = fenced;
	}
	if (time(NULL) >= release_at) {
		if ((ret = rkd_sl_release(sid, err)))
			return ret;
		release_at = 0;
	}
	struct srun *r = rkd_sl_run_add(e);
	if (!r)
		return rk_error_set(err, RK_ENOMEM, "launch: out of memory");
	r->job_id = ln->job_id;
	r->run = ln->run;
	r->sid = sid;
	r->release_at = release_at;
	r->pend_grace_ms = rkd_sl_pend_grace(e);
	r->released_ms = release_at ? 0 : rkd_sl_wall_ms();
	return 0;
}

/*
 * Say in Slurm's own record why rubick stops a run (the job's Comment, after
 * its plan: squeue %k, sacct, scontrol show job; place() sets it back to the
 * plan), and for a checkpoint name the run in ckpt_request (rubickd's file,
 * mode 0644, RUBICK_CKPT_REQ in the batch script) before the signal: only
 * then does the script end the Slurm job COMPLETED rather than FAILED 75
 * (engine_slurm_files.c). Not the AdminComment: libslurm 22.05's
 * slurm_free_job_info_msg does not free it, so every poll would leak it
 * (ASan, measured). Best effort: a failed update only leaves Slurm's record
 * less clear.
 */
static void stop_mark(struct seng *e, const struct srun *r, int checkpoint)
{
	char path[4200], buf[32], note[512];
	if (checkpoint && !rkd_path_fmt(path, sizeof(path), "%s/job-%lld/ckpt_request",
	                                e->state_dir, (long long)r->job_id)) {
		snprintf(buf, sizeof(buf), "%d\n", r->run);
		if (rkd_write_atomic(path, buf) == 0)
			chmod(path, 0644);
	}
	const slurm_job_info_t *j = rkd_sl_job_info(e, r->sid);
	const char *plan = j && j->comment ? j->comment : "";
	size_t n = strcspn(plan, ";"); /* the plan without an earlier note */
	while (n > 0 && plan[n - 1] == ' ')
		n--;
	snprintf(note, sizeof(note), "%.*s%srubick: %s (job %lld run %d)", (int)(n < 256 ? n : 256),
	         plan, n ? "; " : "",
	         checkpoint ? "checkpoint to reconfigure, preempt or requeue"
	                    : "cancelled by rubick",
	         (long long)r->job_id, r->run);
	job_desc_msg_t u;
	slurm_init_job_desc_msg(&u);
	u.job_id = r->sid;
	u.comment = note;
	slurm_update_job(&u);
}

static int seng_stop(void *state, int64_t job_id, int run, int checkpoint, int64_t now_ms)
{
	struct seng *e = state;
	struct srun *r = rkd_sl_run_find(e, job_id, run);
	if (!r)
		return RK_ENOTFOUND;
	if (r->phase >= PH_USR1 && (checkpoint || r->phase != PH_USR1))
		return 0; /* already on its way out; a cancel hurries a checkpoint along */
	rkd_sl_run_stamp(e, job_id, run, "stop_ms");
	r->checkpoint = checkpoint;
	stop_mark(e, r, checkpoint);
	if (!r->was_running) {
		/*
		 * Not seen running yet: nothing to checkpoint. Hold it again (if
		 * still pending) and requeue-hold it (if it just started), or
		 * cancel it; never release it later.
		 */
		r->release_at = 0;
		if (checkpoint) {
			job_desc_msg_t u;
			slurm_init_job_desc_msg(&u);
			u.job_id = r->sid;
			u.priority = 0;
			slurm_update_job(&u);
			slurm_requeue(r->sid, JOB_REQUEUE_HOLD);
		} else
			slurm_kill_job(r->sid, SIGKILL, 0);
		r->phase = PH_KILL;
	} else
		rkd_sl_run_signal(r, checkpoint ? PH_USR1 : PH_TERM);
	r->deadline_ms = now_ms + e->grace_ms;
	return 0;
}

static int seng_running(void *state)
{
	return ((struct seng *)state)->n;
}

const struct rkd_engine_ops rkd_engine_slurm = {
    .name = "slurm",
    .create = seng_create,
    .destroy = seng_destroy,
    .launch = seng_launch,
    .stop = seng_stop,
    .poll = rkd_sl_poll,
    .adopt = rkd_sl_adopt,
    .running = seng_running,
    .capacity = rkd_sl_capacity,
    .node_state = seng_node_state,
    .node_name = seng_node_name,
    .foreign = rkd_sl_foreign,
    .describe = rkd_sl_describe,
};
