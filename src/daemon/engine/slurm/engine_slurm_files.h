/*
 * The Slurm engine's files and job script (engine_slurm_files.c), apart from
 * the libslurm calls in engine_slurm.c and engine_slurm_state.c: per-job
 * env.sh (the job's environment is frozen at Slurm submit,
 * docs/slurm.md ("Slurm 22.05 facts") gotcha 6), the batch script, run stamps. No
 * Slurm header here.
 */
#ifndef RUBICKD_ENGINE_SLURM_FILES_H
#define RUBICKD_ENGINE_SLURM_FILES_H

#include "daemon/engine/engine.h"
#include "daemon/engine/files.h"

#include <stddef.h>
#include <stdint.h>

int64_t rkd_sl_wall_ms(void);
#define RKD_SL_MAX_NODES 256

/*
 * The nodes of a run in allocation order, for the torch.distributed
 * rendezvous in env.sh: one rank per GPU, node i holding ranks
 * sum(gpus[0..i-1]) .. + gpus[i] - 1, rank 0 on node 0 (MASTER_ADDR).
 */
struct rkd_sl_ranks {
	int n;
	const char *name[RKD_SL_MAX_NODES]; /* Slurm node names */
	int gpus[RKD_SL_MAX_NODES];
	const char *master_addr;            /* node 0's address */
	int master_port;
};

/*
 * The job's folder (engine.h): JOB_DIR rubickd's (0711 for a job of another
 * user), its log, ckpt/ and work/ (Slurm's work_dir) the job user's, since
 * slurmstepd opens the log and enters work/ as that user.
 */
int rkd_sl_job_dirs(const struct rkd_launch *ln, const char *job_dir);
/* JOB_DIR/env.sh and JOB_DIR/plan (the job user's, 0600: env.sh holds its token). */
int rkd_sl_write_env(const struct rkd_launch *ln, const char *job_dir,
		     const struct rkd_sl_ranks *rk);
/*
 * The batch script (malloc'ed): source env.sh, forward USR1/TERM to the child
 * and keep its exit status. The child is the command itself on one node, or
 * `srun` of JOB_DIR/node.sh, one task per node, on several (env.sh says which).
 */
char *rkd_sl_make_script(const char *job_dir, const char *command);
/* JOB_DIR/node.sh: one node's share of a multi-node run (env.sh again, the command). */
int rkd_sl_write_node_script(const struct rkd_launch *ln, const char *job_dir);

#endif
