/*
 * Execution engines: what actually runs a job's processes. One const struct
 * of methods per engine (local, later slurm), driven only by the scheduler
 * thread. Engines are asynchronous: launch and stop return at once, and
 * `poll` reports runs that have ended.
 *
 * A job's processes are identified by (job id, run number): every launch of a
 * job gets the next run number, so a relaunch after a reconfiguration or a
 * daemon crash can never be confused with an older run.
 *
 * Stop protocol (docs/rubickd.8, "JOB PROTOCOL"): SIGUSR1 asks the job to
 * checkpoint and exit with status RKD_EXIT_CHECKPOINTED; SIGTERM follows
 * after the grace period, SIGKILL after a second grace period.
 */
#ifndef RUBICKD_ENGINE_H
#define RUBICKD_ENGINE_H

#include "daemon/identity/identity.h"
#include "rubick/cluster.h"
#include "rubick/error.h"

#include <stdint.h>

/* Exit status a job uses after checkpointing on request (sysexits EX_TEMPFAIL). */
#define RKD_EXIT_CHECKPOINTED 75

struct rkd_launch {
	int64_t job_id;
	int run;                /* run number, >= 1 */
	const char *command;    /* run by /bin/sh -c */
	const char *plan_text;  /* canonical plan (RUBICK_PLAN) */
	const char *alloc_text; /* "node:gpus:cpus:mem_mb;..." (RUBICK_ALLOC) */
	const char *gpu_ids;    /* "0,1,2,3" (CUDA_VISIBLE_DEVICES) */
	const char *url;        /* where the job reports (RUBICK_URL) */
	const char *job_token;  /* the job's report token (RUBICK_JOB_TOKEN) */
	int global_batch;       /* RUBICK_GLOBAL_BATCH */
	double iters_total;     /* RUBICK_ITERS */
	int gpus;               /* RUBICK_GPUS */
	int cpus;               /* RUBICK_CPUS */
	/*
	 * Who the job runs as (identity.h; NULL = rubickd's own user). The job's
	 * folder is rubickd's (mode 0711 when the job runs as another user): the
	 * run records in it are what rubickd trusts, so the job must not write
	 * them. Its plan, log, env.sh, ckpt/ and work/ (the job's working folder)
	 * are the job user's, 0600/0700, so no other tenant can read them.
	 */
	const struct rkd_ident *ident;
	/* slurm: the job's (else its tenant's) partition, account, QOS (NULL/"" = default) */
	const char *partition;
	const char *account;
	const char *qos;
	int time_limit_min; /* slurm: the job's or tenant's time limit, minutes (0 = partition's) */
	char *const *env;   /* the submission's `env`, "K=V" (jobspec.h) */
	int n_env;
};

/* How a run ended. */
struct rkd_exit {
	int64_t job_id;
	int run;
	int status;         /* >= 0: exit code; < 0: -signal number; RKD_EXIT_LOST if unknown */
	char gpu_ids[1024]; /* adopt: the GPU ids the run was launched with */
	char
	    reason[256]; /* the engine's own words when it knows more (Slurm's reason); may be "" */
	/*
	 * 1: ended from outside rubick while rubick had asked for no stop
	 * (scancel, a Slurm time limit, an operator): the job is cancelled, not
	 * relaunched, whatever its status; `reason` says who and why.
	 */
	int cancelled;
	/*
	 * 1: the run never started (Slurm kept it pending past a grace period:
	 * its nodes are taken by what rubick does not control) and is held again:
	 * the job goes back to pending and is placed anew.
	 */
	int not_started;
};
#define RKD_EXIT_LOST (-1000)

/* What rkd_engine_ops.adopt found for a run recorded before a restart. */
enum rkd_adopt {
	RKD_ADOPT_ALIVE = 0,  /* still running: now tracked again */
	RKD_ADOPT_EXITED = 1, /* ended while we were away; *exit filled */
	RKD_ADOPT_ABSENT = 2, /* never started (crash before launch): launch it */
};

struct rkd_engine_config {
	const char *state_dir; /* per-job folders: plan file, logs, run records */
	const char *self_exe;  /* path of rubickd, re-executed as the run supervisor */
	int grace_ms;          /* SIGUSR1 -> SIGTERM -> SIGKILL spacing */
	const char *partition; /* slurm: the partition rubick schedules ("" / NULL = the default) */
	int no_cgroup;         /* local: runs without a cgroup of their own (run_cgroup = off) */
};

struct rkd_engine_ops {
	const char *name;
	int (*create)(void **state, const struct rkd_engine_config *cfg, struct rk_error *err);
	void (*destroy)(void *state);
	/* Start a run; returns once the processes exist (or failed to start). */
	int (*launch)(void *state, const struct rkd_launch *l, struct rk_error *err);
	/*
	 * Ask a run to end: checkpoint = 1 starts with SIGUSR1 (reconfiguration,
	 * preemption), 0 with SIGTERM (cancel). Idempotent.
	 */
	int (*stop)(void *state, int64_t job_id, int run, int checkpoint, int64_t now_ms);
	/*
	 * Advance timers (signal escalation) and report ended runs: writes up to
	 * `max` entries to `out` and returns how many, each reported once.
	 */
	int (*poll)(void *state, int64_t now_ms, struct rkd_exit *out, int max);
	/* Re-attach to a run recorded before a daemon restart. */
	int (*adopt)(void *state, int64_t job_id, int run, struct rkd_exit *exit,
	             struct rk_error *err);
	/* Number of runs alive now. */
	int (*running)(void *state);
	/*
	 * Optional (NULL: capacity never changes): set nodes[i].up from what the
	 * engine sees (Slurm: down, drained, failing or not responding = 0);
	 * returns how many changed.
	 */
	int (*capacity)(void *state, struct rk_node *nodes, int n);
	/*
	 * Optional (NULL: "up"/"down" from rk_node.up): the engine's own word
	 * for node i's state as of the latest capacity() (Slurm: "idle",
	 * "mixed", "allocated", "drain", "draining", "down", ...).
	 */
	const char *(*node_state)(void *state, int node);
	/*
	 * Optional (NULL: "n" and the node's id, "n0" ..): node i's host name
	 * (Slurm: the partition's node name), which `rubick queue` lists as
	 * squeue does; NULL when the engine has none for it.
	 */
	const char *(*node_name)(void *state, int node);
	/*
	 * Optional (NULL: rubick owns every node wholly): what rubick does not
	 * control on node i, gpus[i] and cpus[i]: held by jobs it did not submit
	 * (Slurm: running jobs of other users) or by an active reservation (all
	 * of the node). Returns 1 when it changed since the previous call.
	 */
	int (*foreign)(void *state, int *gpus, int *cpus, int n);
	/*
	 * Optional (NULL: the cluster is what --cluster says): the nodes the
	 * engine really has. `c` comes filled from --cluster; it is resized to
	 * the engine's node count (new nodes copy node 0's types and links) and
	 * gets the engine's GPUs, CPUs and memory. Returns how many nodes
	 * differed from what `c` said (0 = it matched), the first difference in
	 * `diff`; or a negative RK_E* code.
	 */
	int (*describe)(void *state, struct rk_cluster *c, char *diff, size_t cap,
	                struct rk_error *err);
};

extern const struct rkd_engine_ops rkd_engine_local;
#ifdef RKD_HAVE_SLURM
extern const struct rkd_engine_ops rkd_engine_slurm; /* engine_slurm.c, when libslurm is found */
#endif

/* Find an engine by name; NULL when unknown. Sets *not_built for known-but-absent ones. */
const struct rkd_engine_ops *rkd_engine_find(const char *name, int *not_built);

/*
 * The body of `rubickd --supervise`: the per-run supervisor process the local
 * engine re-executes (see engine_local.c). Returns the process exit code.
 */
int rkd_supervise_main(int argc, char **argv);

#endif
