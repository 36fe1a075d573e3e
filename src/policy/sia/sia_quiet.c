/*
 * Quiet rounds of the Sia baseline (sia.c): after a constrained round that
 * decided nothing, the instant up to which every later round would repeat
 * it, so that the driver need not run them (rk_decisions.wake_ms; Sia is
 * RK_POLICY_EVENT_DRIVEN, and anything that arrives, finishes or ends a
 * restart runs a round anyway).
 *
 * Under contention (Gavel's VC trace at its stand-ins' zoo speeds on 8x8:
 * ~1,000 jobs queued for ~10 million 60 s rounds, bench/README.md "Speed") nearly
 * every round is constrained and decides nothing, and each costs a class
 * sort and a knapsack over all queued jobs.
 *
 * Why such rounds repeat. Between two rounds with nothing in between, a
 * round's ILP changes only through the clock, and the clock enters only
 * through the restart factor r_j(t) of each placed job j (sia.c): every
 * configuration but the one j holds has benefit B(g·r_j(t)), with B
 * nondecreasing (B = λ_n − max(g, SIA_MIN_GOODPUT)^p for p < 0, or
 * max(g, ...)^p + λ_n for p > 0). Pending jobs' rows are not scaled, and a
 * placed job's current configuration is not. A round that decided nothing
 * chose, for every placed job, the configuration it holds (anything else is
 * a decision: a move or a preemption), so its answer x* uses no scaled
 * variable, and its objective B(x*) is the same at every later instant.
 *
 * Over an interval [now, T], r_j(t) is at most s_j = 1 while the job is
 * younger than the penalty P at `now` (r = 1 before age P, then drops), else
 * r_j(T): past age P, r = (age − R·P)/(age + P) only grows (R, its restart
 * count, changes only through a decision) and tends to 1 (s_j = 1 for
 * T = infinity). Let ILP(s) be the round's ILP with every scaled variable
 * priced at s_j instead. For every solution x and every t in [now, T]:
 *   B_t(x) <= B_s(x) <= max_y B_s(y)  and  B_t(x*) = B_s(x*).
 * So if the exact solver (sia_round_solve_one_type, dynamic programming)
 * answers x* for ILP(s) too, then x* is an optimum of the ILP at every t in
 * [now, T] (to the solver's own tolerance, SIA_DP_EPS per job class), and a
 * round at t would answer x* (up to ties within that tolerance, which the
 * DP breaks by its table; tests/unit/policy/test_sia_quiet.c compares whole
 * simulations with quiet=off) and, meeting the same holders and free GPUs,
 * map it to the same nothing. The rest of a round (configurations, classes,
 * rows, placement) does not read the clock.
 *
 * The certificate is tried at T = now + 1 minute, then, if it holds, at
 * T = infinity (the steady queue: every placed job at its best configuration
 * even were restarts free), else at now + 2, 4, ... minutes while it holds;
 * each try is one more DP. When and how far to try is free (a round without
 * a proof asks for the next grid round, as before), so tries are spent where
 * they pay: not at all while events (rounds with something in the change
 * feed) come less than two grid rounds apart on average (philly.csv on 256x8:
 * tries there cost more DPs than the rounds they skipped), up to about twice
 * the mean gap between events (an event runs a round anyway), T = infinity
 * only when that gap is 16 minutes or more, and after a failed try sia.c
 * waits 1, 2, 4, ... (up to SIA_QUIET_MAX_BACKOFF) eligible rounds. Only
 * one-GPU-type clusters are covered (GLPK's answers, gap- and node-limited,
 * are not exact optima); with several types every round runs, as before.
 */
#include "policy/sia/sia_round.h"

#include "rubick/error.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* First step of the finite search (the simulator's default round); a search
 * step only: what is proven does not depend on it. */
#define SIA_QUIET_STEP_MS 60000
/* Doublings of the step tried (2^20 minutes: about two years). */
#define SIA_QUIET_MAX_DOUBLINGS 20
/* The proof for good (T = infinity) is tried when events are this many
 * doublings of the step apart (16 minutes) or more. */
#define SIA_QUIET_FOREVER_K 4

/* s_j: the largest restart factor of job j over [now, t_ms] (file comment). */
static double factor_sup(const struct sia_round *r, const struct rk_job *j, int64_t t_ms)
{
	double P = r->o->restart_s;
	double age_s = (double)(r->in->now_ms - j->submit_ms) / 1000.0;
	if (t_ms == INT64_MAX || P <= 0 || age_s < P)
		return 1.0;
	return sia_restart_factor(j, t_ms, P);
}

/* Configuration job ji takes in round q's answer, or -1. */
static int chosen_cfg(const struct sia_round *q, int ji)
{
	return q->choice[ji] >= 0 ? q->var[q->choice[ji]].cfg : -1;
}

/*
 * Whether the DP answers r's choice for ILP(s) of [now, t_ms] (file comment).
 * OUT: *same. A scratch round shares r's input, configurations and classes.
 */
static int holds_until(const struct sia_round *r, int64_t t_ms, int *same)
{
	int n = r->in->n_jobs, rc = RK_OK;
	struct sia_round q = *r;
	q.var = NULL;
	q.n_var = q.cap_var = 0;
	q.row = NULL;
	q.cap_row = 0;
	q.first_var = calloc((size_t)n, sizeof(int));
	q.n_job_var = calloc((size_t)n, sizeof(int));
	q.choice = malloc((size_t)n * sizeof(int));
	q.g1 = malloc((size_t)n * sizeof(double));
	q.g2 = malloc((size_t)n * sizeof(double));
	q.g1_cfg = malloc((size_t)n * sizeof(int));
	*same = 0;
	if (!q.first_var || !q.n_job_var || !q.choice || !q.g1 || !q.g2 || !q.g1_cfg) {
		rc = RK_ENOMEM;
		goto out;
	}
	for (int ji = 0; ji < n; ji++) {
		q.choice[ji] = -1;
		q.g1[ji] = q.g2[ji] = -INFINITY;
		q.g1_cfg[ji] = -1;
	}
	for (int ji = 0; ji < n && !rc; ji++)
		if (q.rep[ji] == ji)
			rc = sia_round_job_vars(&q, ji, factor_sup(r, r->in->jobs[ji], t_ms));
	if (rc)
		goto out;
	if (q.n_var > 0) {
		rc = sia_round_solve_one_type(&q);
		if (rc == 1) { /* too large for the DP: nothing proven */
			rc = RK_OK;
			goto out;
		}
		if (rc)
			goto out;
	}
	*same = 1;
	for (int ji = 0; ji < n && *same; ji++)
		*same = chosen_cfg(&q, ji) == chosen_cfg(r, ji);
out:
	free(q.var);
	free(q.row);
	free(q.first_var);
	free(q.n_job_var);
	free(q.choice);
	free(q.g1);
	free(q.g2);
	free(q.g1_cfg);
	return rc;
}

int sia_quiet_wake(const struct sia_round *r, double event_gap_ms, int64_t *wake_ms,
                   int64_t *until_ms)
{
	int64_t now = r->in->now_ms, proven = now;
	int same = 0, rc = RK_OK;
	/* Past about twice the usual time to the next event a longer proof
	 * saves nothing: the event runs a round anyway. */
	int max_k = SIA_QUIET_MAX_DOUBLINGS;
	*wake_ms = now + 1;
	*until_ms = 0;
	if (event_gap_ms > 0 && event_gap_ms < 2.0 * SIA_QUIET_STEP_MS)
		return RK_OK; /* events come about every grid round: little to skip */
	if (event_gap_ms > 0) {
		max_k = 0;
		while (max_k < SIA_QUIET_MAX_DOUBLINGS &&
		       (double)((int64_t)SIA_QUIET_STEP_MS << max_k) < 2 * event_gap_ms)
			max_k++;
	}
	for (int k = 0; k <= max_k; k++) {
		int64_t t = now + ((int64_t)SIA_QUIET_STEP_MS << k);
		rc = holds_until(r, t, &same);
		if (rc)
			return rc;
		if (!same)
			break;
		proven = t;
		/* The first step holds: try for good. */
		if (k == 0 && max_k >= SIA_QUIET_FOREVER_K) {
			rc = holds_until(r, INT64_MAX, &same);
			if (rc)
				return rc;
			if (same) {
				*wake_ms = 0; /* until something happens */
				*until_ms = INT64_MAX;
				return RK_OK;
			}
		}
	}
	*wake_ms = proven + 1;
	*until_ms = proven > now ? proven + 1 : 0;
	return RK_OK;
}
