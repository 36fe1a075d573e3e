/*
 * Internal to SJF-BSBF and SJF-FFS: sjf_bsbf.c holds the policy (state, the
 * round and the vtables), sjf_bsbf_place.c places one waiting job (the GPU
 * scan, exclusive starts, and sharing with the benefit test), sjf_bsbf_job.c
 * answers what both ask of a job. Not a public header. Calls go one way:
 *   sjf_bsbf.c -> sjf_bsbf_place.c, sjf_bsbf_job.c, sjf_queue.c
 *   sjf_bsbf_place.c -> sjf_bsbf_job.c
 */
#ifndef RUBICK_POLICY_SJF_BSBF_INTERNAL_H
#define RUBICK_POLICY_SJF_BSBF_INTERNAL_H

#include "rubick/policy.h"
#include "rubick/sharing.h"

#include "rubick/placement.h"
#include "policy/sjf/sjf_queue.h"

#include <stdint.h>

#define MAX_SUBBATCH RK_SUBBATCH_MAX
#define SB_CACHE 64

/* The round's arrays, kept across rounds: scratch_grow(). */
struct scratch {
	int cap, cap_nodes;
	int *free_cpus, *node_free, *node_single; /* per node */
	int64_t *free_mem;
	double *e_rem, *mem_gpu, *xcur; /* per job, as in struct round */
	double *gfree;                  /* per GPU, as in struct round */
	int cap_gpus;
	int *gpus, *side, *seen;
	int64_t *gpu_mem;
	struct rk_job **job;
	struct cand *cands, *part;
	struct rk_alloc *kept;
	const struct rk_alloc **held;
};

struct bsbf_state {
	int ffs;        /* 1 = SJF-FFS: no benefit test, first fit */
	int order_tcon; /* 1 = candidates by T_con ascending instead of benefit */
	int window;     /* pending jobs per round that may try sharing (SJF order) */
	int consolidated;         /* placement=consolidated: a job one node holds starts on one */
	struct rk_xi_pairs pairs; /* interference answers by interned job sides */
	struct rk_sjfq queue;     /* waiting jobs, kept across rounds */
	struct scratch w;
	struct rk_subbatch_cache sb; /* sub-batch settings per (model, batch, plan) */
	struct mem_entry {
		const struct rk_model *model;
		struct rk_plan plan;
		double mb;
	} mem[SB_CACHE]; /* per-GPU memory of (model, plan): the memory model, once */
	int mem_next;
};


struct cand {
	int who;          /* the round's job number */
	double key;       /* sort key: -benefit, T_con or first GPU position */
	int64_t tie[2];   /* then the snapshot order: (0, position) or (submit, id) */
	struct rk_plan plan;
	double slow;               /* the plan's accumulation slowdown of a (>= 1) */
	struct rk_share_partner p; /* the partner as the group test sees it */
};

#define SIDE_UNSET (-1000) /* struct round.side not interned yet (errors are > it) */

/*
 * Per round scratch, indexed by the round's own job numbers: the jobs holding
 * resources first, then each waiting job as the round takes it from the
 * queue. Ties between equally good partners go to the earlier snapshot
 * position (struct cand.tie), whatever the numbering.
 */
struct round {
	const struct rk_sched_input *in;
	struct rk_job **job; /* by round number */
	struct rk_gpu_occ occ;
	int *free_cpus;
	int64_t *free_mem;
	double *e_rem;   /* remaining exclusive time (s), +inf unknown */
	double *mem_gpu; /* per-GPU memory of its current plan (MiB) */
	double *xcur;    /* running jobs: present sharing factor (1 alone), NAN = not yet known */
	double *gfree;   /* per GPU: seconds until nobody holds it, sorted; n_gfree valid */
	int n_gfree;     /* -1 = not computed since the last bsbf_scan() */
	int *gpus;       /* GPUs held */
	int *side;       /* running jobs: rk_xi_pairs id on their GPUs, < 0 none */
	int64_t *gpu_mem; /* running jobs: smallest GPU memory of their nodes (MiB) */
	struct rk_alloc *tmp;
	struct rk_alloc *kept; /* copies of what jobs hold, GPU masks filled */
	const struct rk_alloc **held; /* running jobs: what they hold, GPU masks named */
	struct bsbf_state *st;
	/*
	 * The GPUs as they stand, from bsbf_scan(): rebuilt after every start (the
	 * only thing that changes them in a round), not by every sharing try.
	 */
	int *node_free;       /* GPUs nobody holds, per node (0 on a down node) */
	int *node_single;     /* GPUs one running job holds alone, per node */
	int max_node_gpus;    /* GPUs of the largest up node */
	int n_free, n_single; /* GPUs nobody holds; GPUs one running job holds alone */
	struct cand *part;    /* running jobs holding a GPU alone, by their first such GPU */
	int n_part;
	int *seen;            /* scratch of bsbf_scan(), all 0 between calls */
	int n_round;          /* round numbers in use (holders, then jobs taken) */
	int n_hold;           /* of them, the holders */
	int n_waiting;        /* jobs queued at the round's start */
	int total_gpus;       /* GPUs of the up nodes */
};

/* Remaining exclusive time of `j` (s), +inf when unknown (sjf_bsbf_job.c). */
double bsbf_remaining_s(const struct rk_job *j);
/* Per-GPU memory of `j` running `plan`, cached; +inf if the model cannot price it
 * (sjf_bsbf_job.c). */
double bsbf_mem_get(struct bsbf_state *st, const struct rk_job *j, const struct rk_plan *plan);

/* Free GPUs, single-held GPUs and sharing partners of the round (sjf_bsbf_place.c). */
void bsbf_scan(struct round *r);
/* Exclusive start of round job ai: 1 = placed, 0 = not, < 0 error (sjf_bsbf_place.c). */
int bsbf_start_free(struct round *r, int ai, struct rk_decisions *out);
/* Start round job ai sharing GPUs with running jobs: as bsbf_start_free (sjf_bsbf_place.c). */
int bsbf_start_shared(struct bsbf_state *st, struct round *r, int ai, struct rk_decisions *out,
		      struct cand *cands);

#endif
