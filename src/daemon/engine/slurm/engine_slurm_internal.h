/*
 * What the Slurm engine's files share: engine_slurm.c creates the engine,
 * reads the partition's nodes, submits, places, releases and stops the Slurm
 * jobs, and holds the ops table; engine_slurm_state.c polls and adopts runs
 * and gives the capacity, foreign-job and cluster views; engine_slurm_runs.c
 * keeps the run table and the Slurm calls both make. With slurm/slurm.h,
 * which only these three files include.
 *
 * Calls go one way (scripts/callgraph.py over engine_slurm_*.o):
 *
 *   core    engine_slurm.c       -> state runs files
 *   parts   engine_slurm_state.c -> runs files
 *   leaves  engine_slurm_runs.c  -> files
 *           engine_slurm_files.c (the job script and env.sh; none of them)
 */
#ifndef RUBICKD_ENGINE_SLURM_INTERNAL_H
#define RUBICKD_ENGINE_SLURM_INTERNAL_H

#include "daemon/engine/engine.h"
#include "daemon/engine/slurm/engine_slurm_files.h"

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Exported by libslurm.so.38 but not declared in slurm.h (docs/slurm.md, "Slurm 22.05 facts"). */
extern char *slurm_job_state_string(uint32_t state);
extern char *slurm_job_reason_string(enum job_state_reason reason);
extern char *slurm_node_state_string(uint32_t state);

enum phase { PH_PLACED = 0, PH_RUNNING, PH_USR1, PH_TERM, PH_KILL };

struct srun {
	int64_t job_id;
	int run;
	uint32_t sid;      /* Slurm job id */
	enum phase phase;
	int checkpoint;    /* stop asked for a checkpoint */
	int was_running;   /* seen RUNNING once */
	time_t release_at; /* placed but not yet released: release once time(NULL) >= this */
	int64_t released_ms; /* wall clock of the release (0: not yet) */
	int64_t pend_grace_ms; /* how long Slurm may keep it pending once released */
	int64_t deadline_ms;
};

struct seng {
	char *state_dir;
	int grace_ms;
	char **nodes; /* Slurm node names in Slurm's order: rubick node i = nodes[i] */
	char **addrs; /* their addresses (NodeAddr): MASTER_ADDR of a run */
	uint32_t *node_cpus, *node_gpus; /* what Slurm says each node has */
	uint64_t *node_mem;              /* RealMemory (MiB) */
	char *partition;                 /* the partition's name (jobs are submitted to it) */
	char (*node_st)[32];             /* Slurm's state of each node, lower case (node_state) */
	int *fgn_gpus, *fgn_cpus;        /* foreign(): what others hold, as last reported */
	reserve_info_msg_t *resv;        /* last slurm_load_reservations answer */
	int n_nodes;
	time_t nodes_update; /* last_update of the last node list read by capacity() */
	struct srun *runs;
	int n, cap;
	job_info_msg_t *jobs; /* last slurm_load_jobs answer */
};

/* engine_slurm_runs.c */
void rkd_sl_run_stamp(const struct seng *e, int64_t job, int run, const char *what);
const char *rkd_sl_msg(void);
void rkd_sl_node_state_set(struct seng *e, int k, uint32_t st);
int64_t rkd_sl_pend_grace(const struct seng *e);
struct srun *rkd_sl_run_find(struct seng *e, int64_t job, int run);
struct srun *rkd_sl_run_add(struct seng *e);
slurm_job_info_t *rkd_sl_job_info(struct seng *e, uint32_t sid);
int rkd_sl_jobs_refresh(struct seng *e, int force);
int rkd_sl_release(uint32_t sid, struct rk_error *err);
void rkd_sl_run_signal(struct srun *r, enum phase ph);

/* engine_slurm_state.c: the ops of the same names in rkd_engine_slurm */
int rkd_sl_poll(void *state, int64_t now_ms, struct rkd_exit *out, int max);
int rkd_sl_adopt(void *state, int64_t job_id, int run, struct rkd_exit *ex,
		 struct rk_error *err);
int rkd_sl_capacity(void *state, struct rk_node *nodes, int n);
int rkd_sl_foreign(void *state, int *gpus, int *cpus, int n);
int rkd_sl_describe(void *state, struct rk_cluster *c, char *diff, size_t cap,
		    struct rk_error *err);

#endif
