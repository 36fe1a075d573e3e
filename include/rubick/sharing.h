/*
 * Co-location models of issue 6 (library, no I/O):
 *  - GPU sharing of job pairs (SJF-BSBF, docs/references.md §3): the pairwise
 *    share-now-or-wait test of §3.3, the sub-batch (gradient accumulation)
 *    choice that makes a pair fit one GPU's memory, and the interference
 *    table xi = isolated / co-located throughput with its fallback;
 *  - network contention of ring-all-reduce jobs (SJF-BCO, §4.2): contention
 *    degrees per server and the iteration time under contention.
 * docs/sharing.md gives every formula, its source and each choice made.
 */
#ifndef RUBICK_SHARING_H
#define RUBICK_SHARING_H

#include "rubick/cluster.h"
#include "rubick/error.h"
#include "rubick/job.h"
#include "rubick/plan.h"

#include <stdint.h>

/* ---- §3.3 pairwise test ---------------------------------------------------- */

/*
 * Running job b (remaining exclusive time e_b_s) and new job a (e_a_s), both
 * at time 0; xi_x >= 1 = slowdown of x while the two share (t shared / t
 * alone). T_seq = E_b + E_a/2 (a waits for b); T_con per §3.3 (share at once:
 * the optimum is an end point of the sharing instant). Both are half the sum
 * of the two JCTs.
 */
struct rk_pair_outcome {
	double t_con_s;   /* half the JCT sum when sharing now */
	double t_seq_s;   /* half the JCT sum when a waits for b */
	double benefit_s; /* t_seq_s - t_con_s; > 0 means sharing helps */
	int share;        /* 1 iff t_con_s < t_seq_s */
};

/* RK_EINVAL naming the argument unless e >= 0, xi >= 1, all finite. */
int rk_pair_evaluate(double e_a_s, double e_b_s, double xi_a, double xi_b,
		     struct rk_pair_outcome *out, struct rk_error *err);

/*
 * §3.3 generalised to what the simulator runs (issue 15): a new job a (E_a
 * exclusive seconds) joins k >= 1 running partners at once. Partner i has
 * r_s seconds left at the rate it runs at now (its remaining exclusive time
 * times the factor of any job it already shares with), runs `rel` >= 1 times
 * slower next to a, and slows a by xi_a >= 1. While partners are left, a runs
 * at the slowest pair's rate (slow_a x the largest xi_a among them; the
 * engine's max rule, docs/sharing.md), then alone at slow_a (its accumulation
 * stays). Not sharing: a starts alone after wait_s (at most the last
 * partner's end; less when other GPUs free up first) and runs E_a. Both sums
 * are halved as in §3.3.
 *
 * The queue behind: §3.3 counts only the pair's two JCTs. Sharing also
 * changes the work the GPUs deliver: a GPU both run on delivers 1/xi_a +
 * 1/rel of one job alone (less than 1 when the pair interferes more than
 * time slicing would cost), a's own free GPUs 1/xi_a, a partner's other
 * GPUs 1/rel. The GPU-seconds lost (negative = gained) delay the work of
 * every job still queued; spread over the cluster, each waits lost / G
 * longer. `queue_w` = queued jobs behind a / GPUs of the cluster adds
 * queue_w x lost to the shared sum (0 = the pair alone). With k = 1, rel =
 * xi_b, wait_s = r_s and queue_w = 0 it is exactly rk_pair_evaluate(E_a,
 * r_s, slow_a x xi_a, xi_b). RK_EINVAL unless every time is finite >= 0,
 * every factor finite >= 1, 1 <= k <= 64 and the GPU counts add up.
 */
struct rk_share_partner {
	double r_s;  /* seconds left at its present rate */
	double xi_a; /* a's slowdown next to it */
	double rel;  /* its slowdown next to a, relative to its present rate */
	int gpus;    /* GPUs it holds */
	int shared;  /* of them, shared with a (1..gpus) */
};
int rk_group_evaluate(double e_a_s, double slow_a, int free_gpus, const struct rk_share_partner *p,
                      int k, double wait_s, double queue_w, struct rk_pair_outcome *out,
                      struct rk_error *err);

/*
 * Sub-batch choice for job `a` joining GPUs that already hold a job whose
 * per-GPU memory is `partner_mb` (MiB). Candidates keep a's dp/tp/pp, ZeRO and
 * offload and the global batch: mb * ga fixed per replica, ga = every divisor
 * of the per-replica batch, smallest ga first. A candidate is feasible when
 * rk_memory_estimate(a) + partner_mb <= gpu_mem_mb. `slow` = t(ga)/t(base):
 * with env, the performance model's ratio on a one-node placement of the
 * plan's GPUs; without, 1 (same samples, same FLOPs). OUT: the feasible choices,
 * at most `max`, in ascending ga; returns how many (0 = none fits) or a
 * negative RK_E* code.
 */
struct rk_subbatch {
	struct rk_plan plan; /* the plan a runs with while sharing */
	double mem_mb;       /* its per-GPU memory (memory model) */
	double slow;         /* iteration time relative to the base plan */
};

struct rk_perf_env;
int rk_subbatch_options(const struct rk_model *m, int global_batch, const struct rk_plan *base,
			double partner_mb, int64_t gpu_mem_mb, const struct rk_perf_env *env,
			struct rk_subbatch *out, int max, struct rk_error *err);

/*
 * The settings of rk_subbatch_options with no partner (partner_mb = 0, no
 * memory limit), remembered per (model, global batch, base plan, env) so a
 * policy asking every round prices each job's accumulation once; callers
 * filter by memory against each partner. Zero-initialise; entries are
 * replaced round-robin (src/policy/sharing/coloc_place.c). A model whose settings
 * cannot be computed gets n = 0.
 */
#define RK_SUBBATCH_MAX 32
#define RK_SUBBATCH_CACHE 64
struct rk_subbatch_set {
	const struct rk_model *model;
	const struct rk_perf_env *env;
	int batch;
	struct rk_plan plan;
	int n;
	struct rk_subbatch opt[RK_SUBBATCH_MAX];
};
struct rk_subbatch_cache {
	struct rk_subbatch_set set[RK_SUBBATCH_CACHE];
	int next;
};
const struct rk_subbatch_set *rk_subbatch_cache_get(struct rk_subbatch_cache *c,
						    const struct rk_model *m, int global_batch,
						    const struct rk_plan *base,
						    const struct rk_perf_env *env);

/* ---- interference table (docs/references.md §3.2, §6) ------------------------------ */

#define RK_XI_TYPE_MAX 64
#define RK_XI_GPU_MAX 24
/* Slowdown assumed with no measurement at all: plain time slicing, each job
 * gets half the GPU. The §3.3 test then shares only when a short job would
 * otherwise wait behind a much longer one (conservative, never a speed-up). */
#define RK_XI_NO_DATA 2.0

/* One measured pair on one GPU type: a runs at 1/xi_a of its isolated speed. */
struct rk_xi_entry {
	char gpu_type[RK_XI_GPU_MAX]; /* "v100", "k80", ... as the source names it */
	char a[RK_XI_TYPE_MAX];       /* job type, e.g. "ResNet-50 (batch size 64)" */
	int sf_a;                     /* its GPUs (scale factor) */
	char b[RK_XI_TYPE_MAX];
	int sf_b;
	double xi_a;                  /* isolated / co-located throughput of a, >= 1 */
};

/* How a lookup was answered (worst first is the fallback chain). */
enum rk_xi_how {
	RK_XI_EXACT = 0,   /* the measured pair on that GPU type */
	RK_XI_FAMILY,      /* mean over measured pairs of the same two families, that GPU type */
	RK_XI_FAMILY_ANY,  /* the same, over every GPU type */
	RK_XI_GPU_MEDIAN,  /* median of every pair measured on that GPU type */
	RK_XI_MEDIAN,      /* median of the whole table */
	RK_XI_DEFAULT,     /* empty table: RK_XI_NO_DATA */
};

struct rk_xi_family; /* private */

struct rk_xi_table {
	struct rk_xi_entry *v; /* owned; sorted by rk_xi_table_finish */
	int n, cap;
	int finished;
	struct rk_xi_family *fam; /* owned: per (gpu, family a, family b) means */
	int n_fam;
	double *gpu_median;       /* owned: one per distinct gpu type, order of gpu_names */
	char (*gpu_names)[RK_XI_GPU_MAX];
	int n_gpu;
	double median;            /* RK_XI_NO_DATA when empty */
	/* Pairs measured unable to co-run (0 steps/s paired): xi_a unused, sorted by finish. */
	struct rk_xi_entry *nc; /* owned */
	int n_nc, cap_nc;
};

void rk_xi_table_init(struct rk_xi_table *t);
void rk_xi_table_fini(struct rk_xi_table *t);
/* Append one entry (copied); RK_EINVAL unless xi_a >= 1 and finite, names set. */
int rk_xi_table_add(struct rk_xi_table *t, const struct rk_xi_entry *e, struct rk_error *err);
/* Record a pair measured unable to co-run (xi_a ignored); RK_EINVAL without names. */
int rk_xi_table_add_nocorun(struct rk_xi_table *t, const struct rk_xi_entry *e,
                            struct rk_error *err);
/* Sort and build the fallback levels; call once after the last add (RK_ENOMEM). */
int rk_xi_table_finish(struct rk_xi_table *t);

/*
 * The family of a job type: lower-cased letters and digits before " (batch
 * size", with aliases for the Muri/SJF-BSBF model names onto Gavel's
 * families (vgg* -> resnet50, shufflenet* -> resnet18, bert* -> transformer,
 * gpt* -> lm, dqn/a2c -> a3c; docs/sharing.md). OUT: buf (cap bytes).
 */
void rk_xi_family_of(const char *type, char *buf, int cap);

/*
 * xi of `a` (sf_a GPUs) sharing with `b` on GPUs of `gpu_type`, walking the
 * chain of enum rk_xi_how; `how` may be NULL. The table must be finished.
 */
double rk_xi_lookup(const struct rk_xi_table *t, const char *gpu_type, const char *a, int sf_a,
		    const char *b, int sf_b, enum rk_xi_how *how);

/*
 * Did the table measure `a` (sf_a GPUs) and `b` (sf_b) co-located on one GPU
 * of `gpu_type`? 1 = measured running together (an exact entry, in either
 * order), -1 = measured unable to (0 steps/s, in either order: out of
 * memory in Gavel's runs), 0 = not measured (the memory model decides).
 * A measurement decides whether the pair fits one GPU before the memory
 * model of the jobs' (stand-in) models does (docs/sharing.md, "Which pairs
 * fit"). The table must be finished.
 */
int rk_xi_corun(const struct rk_xi_table *t, const char *gpu_type, const char *a, int sf_a,
                const char *b, int sf_b);
/* 1 when the finished table holds any measured pair (co-running or not) on
 * `gpu_type`; 0 = rk_xi_corun answers 0 for every pair there. */
int rk_xi_table_measures(const struct rk_xi_table *t, const char *gpu_type);

/*
 * A memo of answered lookups (the caller's: a simulator run, a policy
 * instance), so repeated questions cost a hash probe: full keys compared, a
 * colliding entry is replaced. Zero-initialise; reset when the table changes.
 */
#define RK_XI_MEMO_SLOTS 8192
struct rk_xi_memo_slot {
	int used, sf_a, sf_b;
	uint64_t key; /* hash of the whole key: checked before the strings */
	char gpu_type[RK_XI_GPU_MAX], a[RK_XI_TYPE_MAX], b[RK_XI_TYPE_MAX];
	double xi;
};
struct rk_xi_memo {
	const struct rk_xi_table *table; /* the table the entries came from */
	struct rk_xi_memo_slot slot[RK_XI_MEMO_SLOTS];
};
double rk_xi_lookup_memo(struct rk_xi_memo *m, const struct rk_xi_table *t, const char *gpu_type,
			 const char *a, int sf_a, const char *b, int sf_b);
/* FNV-1a of a string: pass it as ha/hb to skip hashing the job types again. */
uint64_t rk_xi_hash(const char *s);
/* The same with the hashes of a and b precomputed (rk_xi_hash). */
double rk_xi_lookup_memo_h(struct rk_xi_memo *m, const struct rk_xi_table *t,
			   const char *gpu_type, const char *a, uint64_t ha, int sf_a, const char *b,
			   uint64_t hb, int sf_b);

/*
 * Interned interference lookups (src/policy/sharing/xi_pairs.c), for callers that ask
 * the same pairs over and over: name each side once (GPU type, job type,
 * GPUs -> a small id, stable for the object's life), then ask by ids: one
 * integer probe, no string compares, nothing evicted. Same answers as
 * rk_xi_lookup. Initialise with rk_xi_pairs_init; rk_xi_pairs_fini frees.
 */
struct rk_xi_side;
struct rk_xi_pair_slot;
struct rk_xi_pairs {
	const struct rk_xi_table *table; /* the table the answers came from */
	struct rk_xi_side *sides;        /* by id */
	int n_sides, cap_sides;
	int *side_ix, side_cap;          /* open addressing over sides, -1 = empty */
	struct rk_xi_pair_slot *slot;    /* answered pairs */
	int n_slots, used;
};
void rk_xi_pairs_init(struct rk_xi_pairs *p);
void rk_xi_pairs_fini(struct rk_xi_pairs *p);
/* Id (>= 0) of `type` running on `sf` GPUs of `gpu_type`; RK_EINVAL for names
 * too long to keep (ask rk_xi_lookup instead), RK_ENOMEM. Strings are copied. */
int rk_xi_pairs_side(struct rk_xi_pairs *p, const char *gpu_type, const char *type, int sf);
/* xi of side `a` sharing with side `b` on a's GPU type: rk_xi_lookup(t, ...). */
double rk_xi_pairs_get(struct rk_xi_pairs *p, const struct rk_xi_table *t, int a, int b);
/* rk_xi_corun(t, ...) of sides `a` and `b` on a's GPU type, kept with the xi answer. */
int rk_xi_pairs_corun(struct rk_xi_pairs *p, const struct rk_xi_table *t, int a, int b);

/* ---- GPU occupancy (who holds each GPU, at most two jobs) -------------------- */

/*
 * The GPUs of a cluster with up to two holders each (rk_share.gpu_mask bits).
 * Holders are caller's indices >= 0; -1 = none.
 */
struct rk_gpu_occ {
	const struct rk_cluster *cluster; /* borrowed */
	int *first;                       /* owned: n_nodes + 1 offsets into who */
	int (*who)[2];                    /* owned: one pair per GPU */
	int busy;                         /* GPUs with at least one holder */
};

int rk_gpu_occ_init(struct rk_gpu_occ *o, const struct rk_cluster *c); /* RK_ENOMEM */
void rk_gpu_occ_fini(struct rk_gpu_occ *o);
void rk_gpu_occ_clear(struct rk_gpu_occ *o);
/* Holders of GPU `g` of node `node` (0, 1 or 2); *a, *b get them (-1 = none). */
int rk_gpu_occ_holders(const struct rk_gpu_occ *o, int node, int g, int *a, int *b);
/*
 * Record `a` as held by `who`. A share with gpu_mask = 0 takes the lowest
 * GPUs nobody holds and, when `fill` is set, writes that mask back into the
 * share. RK_EINVAL (mask bits beyond the node's GPUs, popcount != gpus, node
 * out of range) or RK_EINFEASIBLE (a GPU would get a third holder, not enough
 * GPUs nobody holds); nothing is recorded then. Messages name node and GPU.
 */
int rk_gpu_occ_add(struct rk_gpu_occ *o, struct rk_alloc *a, int who, int fill,
		   struct rk_error *err);
/* Forget `who` on the GPUs of `a` (masks must be set). */
void rk_gpu_occ_remove(struct rk_gpu_occ *o, const struct rk_alloc *a, int who);

/* Per-GPU memory (MiB) of `job` running `plan` (memory model); RK_EINVAL. */
int rk_job_gpu_mem_mb(const struct rk_job *job, const struct rk_plan *plan, double *mb,
		      struct rk_error *err);

/*
 * Validate the GPU-level rules of sharing for decisions `ds` on snapshot
 * `in` (the count-level checks are rk_decisions_validate's, run on a view
 * with two slots per GPU): every GPU held by at most two jobs, and for each
 * shared GPU both jobs' per-GPU memory fits the node's gpu_mem_mb (a pair
 * the table `in->xi` measured on that GPU type: the measurement, rk_xi_corun). Shares
 * without a mask get the lowest GPUs nobody holds, written into `ds`, so that
 * the driver applies exactly what was checked. Returns 0 or an RK_E* code
 * with "policy NAME: job ID (NAME): what is wrong".
 */
struct rk_sched_input;
struct rk_decisions;
int rk_gpu_share_resolve(const struct rk_sched_input *in, struct rk_decisions *ds,
			 const char *policy_name, struct rk_error *err);

/*
 * The same rules over what `jobs` hold now (check mode): masks set, at most
 * two holders per GPU, memory fits on every shared GPU. RK_EINTERNAL.
 */
int rk_gpu_share_audit(const struct rk_cluster *c, struct rk_job *const *jobs, int n,
		       struct rk_error *err);
/* The same with the interference table's measured pairs deciding their fit
 * (rk_xi_corun), as rk_gpu_share_resolve does with rk_sched_input.xi. */
int rk_gpu_share_audit_xi(const struct rk_cluster *c, const struct rk_xi_table *xi,
                          struct rk_job *const *jobs, int n, struct rk_error *err);

/* ---- §4.2 ring all-reduce under contention ----------------------------------- */

/*
 * Contention degree of every job (n allocations): k_s = cross-server jobs
 * (spanning >= 2 nodes) with workers on node s; p_j = max k_s over j's nodes
 * for a cross-server job, 0 for a single-node or empty one. `n_nodes` bounds
 * node ids. OUT: p[n]. RK_EINVAL for a node id out of range, RK_ENOMEM.
 */
int rk_contention_degrees(const struct rk_alloc *const *allocs, int n, int n_nodes, int *p,
			  struct rk_error *err);

/* Inputs of the §4.2 iteration time of one ring-all-reduce job. */
struct rk_rar_job {
	double compute_s;    /* Δ: forward + backward of one worker */
	double grad_gb;      /* m: gradient bytes exchanged per iteration (GB) */
	int gpus;            /* G workers */
	int servers;         /* n servers spanned */
};

/*
 * tau = Δ + 2(G-1)/G * m / b_in                       (n == 1, NVLink ring)
 *     = Δ + 2(G-1)/G * m * p / b_ex + (n-1) * overhead_s  (n >= 2)
 * with p >= 1 the contention degree (docs/references.md §4.2, reconstructed form).
 * Bandwidths in GB/s. RK_EINVAL naming the bad input.
 */
int rk_rar_iter_s(const struct rk_rar_job *j, int p, double b_in_gbps, double b_ex_gbps,
		  double overhead_s, double *iter_s, struct rk_error *err);

/*
 * SJF-BCO's node choice (docs/references.md §4.3 line 6, reconstructed;
 * src/policy/sharing/coloc_place.c), shared by sjf-bco and rubick's option
 * placement=contention: `g` GPUs out of `cap_g[n]` usable GPUs on each of
 * `nn` nodes, where `k[n]` cross-node jobs already hold GPUs. One node when
 * one has room (best fit: the fewest usable GPUs); otherwise the fewest nodes
 * among those with k_s <= kk, for the lowest contention level kk < u that
 * allows that many, taking the nodes with most usable GPUs first (balanced
 * contention). `scratch`: nn ints. OUT: nodes[], per[] (GPUs on each, at
 * most RK_PLACEMENT_MAX_NODES entries), *n_nodes. 1 = placed, 0 = no fit.
 */
int rk_contention_choose(const int *cap_g, const int *k, int nn, int g, int u, int *scratch,
			 int *nodes, int *per, int *n_nodes);
/* Sort node ids v[0..n) by key[v[i]], ascending or (desc) descending; stable. */
void rk_nodes_sort_by(int *v, int n, const int *key, int desc);

/*
 * CPUs and host memory of a job on node `nd` that holds `whole` GPUs alone
 * and `shared` GPUs together with a running job (sjf-bsbf, sjf-ffs, rubick
 * sharing=on): its per-GPU request (req->cpus_per_gpu / mem_mb_per_gpu, the
 * node's proportional share for RK_SHARE_PROPORTIONAL) for each whole GPU,
 * required; for shared GPUs up to half of that from what is left (the
 * partner holds the GPU's host share; the GPU is what the pair contends
 * for). OUT: *cpus, *mem. 1 = fits in free_cpus / free_mem, 0 = not.
 */
struct rk_place_req;
int rk_share_node_need(const struct rk_place_req *req, const struct rk_node *nd, int whole,
		       int shared, int free_cpus, int64_t free_mem, int *cpus, int64_t *mem);

#endif
