/*
 * Internal to the Sia baseline: one round's state (sia.c), shared with the
 * quiet-round certificate (sia_quiet.c), and the steps both run (sia_round.c).
 */
#ifndef RUBICK_POLICY_SIA_ROUND_H
#define RUBICK_POLICY_SIA_ROUND_H

#include "policy/sia/sia_internal.h"
#include "rubick/policy.h"

/* One (job, configuration) pair of the ILP. */
struct sia_var {
	int job, cfg;
	double cost;         /* objective coefficient: G^p - λ_n (p < 0) or G^p + λ_n (p > 0) */
	double g;            /* normalised, clipped goodput before the restart factor */
	struct rk_plan plan; /* the user's plan scaled to the configuration */
	int local_bsz, accum_steps; /* goodput mode: the batch to run there (0, 0 = trace batch) */
};

struct sia_round {
	const struct sia_opts *o;
	struct sia_cache *cache; /* rows kept across rounds (policy state) */
	const struct sia_seen *seen; /* goodput mode: what jobs have run (policy state) */
	int goodput;             /* some job is priced with its goodput model */
	struct sia_row_var *row; /* scratch for a row being built */
	int cap_row;
	const struct rk_sched_input *in;
	struct sia_type types[SIA_MAX_TYPES];
	int n_types;
	int *node_type; /* per node: type index or -1 */
	struct sia_cfg *cfg;
	int n_cfg;
	struct sia_var *var;
	int n_var, cap_var;
	int *first_var; /* per job: first var index; vars of job j are contiguous */
	int *n_job_var;
	int *cur;    /* per job: current config index or -1 */
	int *choice; /* per job: chosen var index or -1 */
	/* Per representative: the two largest unscaled goodputs among its valid
	 * configurations (pruned ones too) and the configuration of the first;
	 * what the restart factor's growth could make beat the chosen one. */
	double *g1, *g2;
	int *g1_cfg;
	int unconstrained; /* this round's choice is unconstrained_choice's */
	int dp_solved;     /* this round's choice is sia_round_solve_one_type's */
	char *asked;       /* asked[g]: some job requests g GPUs */
	/* Pending jobs with identical requests form one class: only its first
	 * job (the representative) carries variables, general integers counting
	 * how many of the class take each configuration. */
	int *rep;          /* per job: index of its class representative */
	int *csize;        /* per representative: jobs in its class */
	int *members;      /* job indexes, each class contiguous in FIFO order */
	int *first_member; /* per representative: its class's start in members */
};

/* Benefit of a var in "larger is better" terms, whatever the sense. Inline:
 * the round's choices (sia.c) and the DP's weights (sia_round.c) read it per var. */
static inline double sia_var_benefit(const struct sia_round *r, int k)
{
	return r->o->p < 0 ? -r->var[k].cost : r->var[k].cost;
}

/*
 * The variables of representative `ji` (its row, from the cache or built),
 * with the restart factor `rf` on every configuration but the one it holds
 * (rf < 0: the factor of the round's own clock). Appends to r->var.
 */
int sia_round_job_vars(struct sia_round *r, int ji, double rf);
/* Sia's restart factor r_j (§5.1) at now_ms; 1 for jobs younger than the penalty. */
double sia_restart_factor(const struct rk_job *j, int64_t now_ms, double penalty_s);
/* One GPU type: the round's exact optimum by dynamic programming into
 * r->choice. Returns 0 (solved), 1 (use GLPK) or RK_ENOMEM. */
int sia_round_solve_one_type(struct sia_round *r);
/*
 * Hand each class's counts (count[k] jobs take var k) to its members in FIFO
 * order into r->choice, larger configurations to earlier jobs. Consumes `count`.
 */
void sia_round_hand_out(struct sia_round *r, int *count);

/*
 * After a round solved by sia_round_solve_one_type that decided nothing:
 * OUT: *until_ms, the instant before which every later round would answer
 * the same (INT64_MAX: until something happens; 0: none past this round is
 * proven), and *wake_ms, the wake-up that goes with it (0 = none, or
 * now + 1) (sia_quiet.c). event_gap_ms (0 = unknown) bounds how far it
 * tries to prove. RK_ENOMEM on failure.
 */
int sia_quiet_wake(const struct sia_round *r, double event_gap_ms, int64_t *wake_ms,
		   int64_t *until_ms);

#endif
