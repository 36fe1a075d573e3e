/* Gavel's allocation LPs and round mechanism (src/policy/gavel): hand-checked max-min
 * and finish-time-fairness optima, heterogeneity, infeasible pairs, and realised time
 * shares converging to the allocation over many rounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "policy/gavel/gavel_internal.h"
#include "rubick/policy.h"

/* Normalised effective throughput of job j under x (Gavel's LAS objective term). */
static double las_level(const struct gavel_problem *p, const double *x, int j)
{
	double iso[8];
	gavel_equal_share(p, iso);
	double e = 0;
	for (int t = 0; t < p->n_types; t++)
		e += p->tput[j * p->n_types + t] * x[j * p->n_types + t];
	return p->scale[j] * e / iso[j];
}

/* One GPU, two equal jobs: each gets half the time, the equal share itself. */
static void two_jobs_one_gpu(void **state)
{
	(void)state;
	const double tput[] = {3.0, 3.0};
	const int scale[] = {1, 1}, cap[] = {1};
	struct gavel_problem p = {2, 1, tput, scale, cap, NULL, NULL, NULL};
	double x[2];
	int lps;
	assert_int_equal(gavel_allocate(&p, GAVEL_LAS, x, &lps, NULL), RK_OK);
	assert_int_equal(lps, 1);
	assert_true(fabs(x[0] - 0.5) < 1e-6 && fabs(x[1] - 0.5) < 1e-6);
}

/*
 * Types V100 and K80, one GPU each; job A runs 4x faster on V100, jobs B and C
 * the same on both. Equal share: 1/3 of each type for everyone, so A's
 * normaliser is 5/3 and B's and C's 2/3. The optimum gives A V100 only:
 * A at v of V100, B and C splitting K80 and the rest of V100, 2.4 v = 1.5 -
 * 0.75 v, so v = 10/21 and every job at level 8/7 > 1 (the equal share).
 */
static const double het_tput[] = {4.0, 1.0, 1.0, 1.0, 1.0, 1.0};
static const int het_scale[] = {1, 1, 1}, het_cap[] = {1, 1};

static void heterogeneity_helps(void **state)
{
	(void)state;
	struct gavel_problem p = {3, 2, het_tput, het_scale, het_cap, NULL, NULL, NULL};
	double x[6];
	int lps;
	assert_int_equal(gavel_allocate(&p, GAVEL_LAS, x, &lps, NULL), RK_OK);
	assert_true(fabs(x[0] - 10.0 / 21) < 1e-6);
	assert_true(x[1] < 1e-9);               /* A never on K80, where it is least ahead */
	assert_true(x[0] > 1.0 / 3);            /* more V100 than its equal share */
	assert_true(x[2] + x[4] < x[3] + x[5]); /* B and C lean on K80 */
	for (int j = 0; j < 3; j++)
		assert_true(las_level(&p, x, j) > 8.0 / 7 - 1e-6);
	/* Capacity and rows hold. */
	for (int t = 0; t < 2; t++)
		assert_true(x[t] + x[2 + t] + x[4 + t] <= 1 + 1e-9);
	for (int j = 0; j < 3; j++)
		assert_true(x[2 * j] + x[2 * j + 1] <= 1 + 1e-9);
}

/*
 * A pair with throughput 0 (the job does not fit that GPU) gets no share and
 * is never picked, even with that type idle; a job wider than every type
 * gets a zero row and waits.
 */
static void infeasible_never_allocated(void **state)
{
	(void)state;
	const double tput[] = {2.0, 0.0, 1.0, 1.0, 5.0, 5.0};
	const int scale[] = {1, 1, 4}, cap[] = {2, 2};
	struct gavel_problem p = {3, 2, tput, scale, cap, NULL, NULL, NULL};
	double x[6];
	int lps;
	assert_int_equal(gavel_allocate(&p, GAVEL_LAS, x, &lps, NULL), RK_OK);
	assert_true(x[1] == 0.0);
	assert_true(x[4] == 0.0 && x[5] == 0.0);
	int rounds[3] = {0}, on[6] = {0}, pick[3];
	const int free_gpus[] = {0, 2}; /* only K80s free */
	assert_int_equal(gavel_round_pick(&p, x, rounds, on, free_gpus, pick), 0);
	assert_int_equal(pick[0], -1); /* A waits rather than run out of memory */
	assert_int_equal(pick[1], 1);
	assert_int_equal(pick[2], -1);
	/* FTF too. */
	const double el[] = {0, 0, 0}, rem[] = {10, 10, 10}, tot[] = {10, 10, 10};
	p.elapsed_s = el;
	p.remaining = rem;
	p.total = tot;
	assert_int_equal(gavel_allocate(&p, GAVEL_FTF, x, &lps, NULL), RK_OK);
	assert_true(x[1] == 0.0 && x[4] == 0.0 && x[5] == 0.0);
}

/* Run `n` rounds of the mechanism on x; OUT: rounds, on. */
static void run_rounds(const struct gavel_problem *p, const double *x, int n, int *rounds, int *on)
{
	int pick[8];
	for (int r = 0; r < n; r++) {
		assert_int_equal(gavel_round_pick(p, x, rounds, on, p->cap, pick), 0);
		for (int j = 0; j < p->n_jobs; j++) {
			rounds[j]++;
			if (pick[j] >= 0)
				on[j * p->n_types + pick[j]]++;
		}
	}
}

/* The realised fraction of rounds on each type converges to X. */
static void rounds_converge_to_x(void **state)
{
	(void)state;
	struct gavel_problem p = {3, 2, het_tput, het_scale, het_cap, NULL, NULL, NULL};
	double x[6];
	int lps;
	assert_int_equal(gavel_allocate(&p, GAVEL_LAS, x, &lps, NULL), RK_OK);
	int rounds[3] = {0}, on[6] = {0};
	run_rounds(&p, x, 2000, rounds, on);
	for (int c = 0; c < 6; c++)
		assert_true(fabs((double)on[c] / rounds[c / 2] - x[c]) < 0.01);
	/*
	 * Two 1-GPU jobs and a 2-GPU job on 2 GPUs of one type: equal shares 2/3,
	 * 2/3 and 1/3, weights 1.5, 1.5 and 6; levels equal and the GPUs full give
	 * x = 0.8, 0.8, 0.2 (level 1.2), realised although the 2-GPU job needs
	 * both GPUs whenever it runs.
	 */
	const double t1[] = {1.0, 1.0, 1.0};
	const int s1[] = {1, 1, 2}, c1[] = {2};
	struct gavel_problem q = {3, 1, t1, s1, c1, NULL, NULL, NULL};
	double y[3];
	assert_int_equal(gavel_allocate(&q, GAVEL_LAS, y, &lps, NULL), RK_OK);
	assert_true(fabs(y[0] - 0.8) < 1e-6 && fabs(y[1] - 0.8) < 1e-6 && fabs(y[2] - 0.2) < 1e-6);
	int r2[3] = {0}, o2[3] = {0};
	run_rounds(&q, y, 3000, r2, o2);
	for (int j = 0; j < 3; j++)
		assert_true(fabs((double)o2[j] / r2[j] - y[j]) < 0.01);
}

/*
 * Finish-time fairness, Gavel's rho_j = (t_j + R_j / e_j(X)) / (t_j + R_j /
 * e_j(X^equal)) (FinishTimeFairnessPolicyWithPerf). Types V100 and K80, one
 * GPU each; A runs 4 / 1 steps/s, B runs on K80 only (1 step/s); 10 steps
 * left each; A just arrived, B waited 10 s. Equal share: A half of each
 * type (e_A = 2.5), B half the K80 (e_B = 0.5); denominators 10 / 2.5 = 4
 * and 10 + 20 = 30. Best: A all of V100 (rho_A = 2.5 / 4 = 0.625), B all of
 * K80 (rho_B = 20 / 30 = 2/3): max rho 2/3. Dividing by the whole job's
 * isolated time instead (B: 20 / 0.5 = 40, rho_B = 1/2) would give 0.625.
 */
static double ftf_rho(const struct gavel_problem *p, const double *x, int j)
{
	double iso[4], e = 0;
	gavel_equal_share(p, iso);
	for (int t = 0; t < p->n_types; t++)
		e += p->tput[j * p->n_types + t] * x[j * p->n_types + t];
	return (p->elapsed_s[j] + p->remaining[j] / e) /
	       (p->elapsed_s[j] + p->remaining[j] / iso[j]);
}

static void ftf_hand_checked(void **state)
{
	(void)state;
	const double tput[] = {4.0, 1.0, 0.0, 1.0};
	const int scale[] = {1, 1}, cap[] = {1, 1};
	const double el[] = {0, 10}, rem[] = {10, 10}, tot[] = {10, 20};
	struct gavel_problem p = {2, 2, tput, scale, cap, el, rem, tot};
	double x[4];
	int lps;
	assert_int_equal(gavel_allocate(&p, GAVEL_FTF, x, &lps, NULL), RK_OK);
	assert_true(lps > 1); /* bisection */
	double r = fmax(ftf_rho(&p, x, 0), ftf_rho(&p, x, 1));
	assert_true(fabs(r - 2.0 / 3) < 0.005);
	assert_true(x[2] < 1e-9 && x[3] > 1 - 0.01); /* B on K80 all the time */
	for (int t = 0; t < 2; t++)
		assert_true(x[t] + x[2 + t] <= 1 + 1e-9);
}

/*
 * Max-sum throughput, 2 jobs x 2 types of one GPU each: A runs 4 / 1 steps/s
 * on types 0 / 1, B 2 / 1.5. The LP is an assignment problem; A on 0 and B
 * on 1 gives 5.5, the other way 3, so the optimum is that permutation, where
 * max-min fairness would split the fast type.
 */
static void tput_hand_checked(void **state)
{
	(void)state;
	const double tput[] = {4.0, 1.0, 2.0, 1.5};
	const int scale[] = {1, 1}, cap[] = {1, 1};
	struct gavel_problem p = {2, 2, tput, scale, cap, NULL, NULL, NULL};
	double x[4];
	int lps;
	assert_int_equal(gavel_allocate(&p, GAVEL_TPUT, x, &lps, NULL), RK_OK);
	assert_int_equal(lps, 1);
	assert_true(fabs(x[0] - 1) < 1e-6 && x[1] < 1e-6);
	assert_true(x[2] < 1e-6 && fabs(x[3] - 1) < 1e-6);
	/* A asks for 2 GPUs; type 0 has 2, type 1 one: A can run on type 0 only.
	 * A there all the time and B on type 1 gives 4 + 1.5 = 5.5; A half the
	 * time and B on type 0 gives 2 + 2 = 4. */
	const int scale2[] = {2, 1}, cap2[] = {2, 1};
	struct gavel_problem q = {2, 2, tput, scale2, cap2, NULL, NULL, NULL};
	assert_int_equal(gavel_allocate(&q, GAVEL_TPUT, x, &lps, NULL), RK_OK);
	assert_true(x[1] < 1e-6);             /* A (2 GPUs) never on the 1-GPU type */
	assert_true(fabs(x[0] - 1) < 1e-6);   /* A on both GPUs of type 0: 4 */
	assert_true(fabs(x[3] - 1) < 1e-6);   /* B on type 1: 1.5; total 5.5 */
}

/*
 * Makespan, one GPU: A at 1 step/s and B at 2, 10 steps left each. On one
 * GPU they need 10 s and 5 s of it, so T* = 15 s with A 2/3 of the time and
 * B 1/3 (both finish at 15 s); max-min fairness gives them 1/2 each.
 */
static void makespan_hand_checked(void **state)
{
	(void)state;
	const double tput[] = {1.0, 2.0};
	const int scale[] = {1, 1}, cap[] = {1};
	const double rem[] = {10, 10};
	struct gavel_problem p = {2, 1, tput, scale, cap, NULL, rem, NULL};
	double x[2];
	int lps;
	assert_int_equal(gavel_allocate(&p, GAVEL_MAKESPAN, x, &lps, NULL), RK_OK);
	assert_int_equal(lps, 1);
	assert_true(fabs(x[0] - 2.0 / 3) < 1e-6 && fabs(x[1] - 1.0 / 3) < 1e-6);
	assert_int_equal(gavel_allocate(&p, GAVEL_LAS, x, &lps, NULL), RK_OK);
	assert_true(fabs(x[0] - 0.5) < 1e-6 && fabs(x[1] - 0.5) < 1e-6);
	/* Heterogeneous: A 4x faster on type 0, B the same on both, 8 and 2
	 * steps left; A alone on type 0 (2 s) and B on type 1 (2 s): T* = 2. */
	const double tput2[] = {4.0, 1.0, 1.0, 1.0}, rem2[] = {8, 2};
	const int cap2[] = {1, 1};
	struct gavel_problem q = {2, 2, tput2, scale, cap2, NULL, rem2, NULL};
	double y[4];
	assert_int_equal(gavel_allocate(&q, GAVEL_MAKESPAN, y, &lps, NULL), RK_OK);
	double tA = 4 * y[0] + y[1], tB = y[2] + y[3];
	assert_true(8 / tA <= 2 + 1e-6 && 2 / tB <= 2 + 1e-6);
}

/* The policies refuse bad options, naming the option. */
static void bad_options(void **state)
{
	(void)state;
	const char *names[] = {"gavel", "gavel-ftf", "gavel-tput", "gavel-makespan"};
	for (int i = 0; i < 4; i++) {
		const struct rk_policy_ops *ops = rk_policy_find(names[i]);
		assert_non_null(ops);
		void *st = NULL;
		struct rk_error err;
		rk_error_clear(&err);
		assert_int_equal(ops->create(&st, "round_s=0", &err), RK_ERANGE);
		assert_non_null(strstr(err.msg, "round_s"));
		assert_non_null(strstr(err.msg, names[i]));
		rk_error_clear(&err);
		assert_int_equal(ops->create(&st, "rounds=5", &err), RK_EINVAL);
		assert_non_null(strstr(err.msg, "'rounds'"));
		assert_int_equal(ops->create(&st, "round_s=120", &err), RK_OK);
		ops->destroy(st);
	}
}

/* Bad shapes are refused, not solved. */
static void errors(void **state)
{
	(void)state;
	const double tput[] = {1.0};
	const int scale[] = {1}, cap[] = {1};
	struct gavel_problem p = {1, 0, tput, scale, cap, NULL, NULL, NULL};
	double x[1];
	int lps;
	assert_int_equal(gavel_allocate(&p, GAVEL_LAS, x, &lps, NULL), RK_EINVAL);
	p.n_types = 1;
	assert_int_equal(gavel_allocate(&p, GAVEL_FTF, x, &lps, NULL), RK_EINVAL);
	assert_int_equal(gavel_allocate(&p, GAVEL_MAKESPAN, x, &lps, NULL), RK_EINVAL);
	assert_int_equal(gavel_allocate(&p, (enum gavel_objective)9, x, &lps, NULL), RK_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(two_jobs_one_gpu),           cmocka_unit_test(heterogeneity_helps),
	    cmocka_unit_test(infeasible_never_allocated), cmocka_unit_test(rounds_converge_to_x),
	    cmocka_unit_test(ftf_hand_checked),           cmocka_unit_test(errors),
	    cmocka_unit_test(tput_hand_checked),          cmocka_unit_test(makespan_hand_checked),
	    cmocka_unit_test(bad_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
