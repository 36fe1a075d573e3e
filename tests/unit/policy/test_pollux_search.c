/* Pollux's cluster-wide search (src/policy/pollux): the restart penalty, the power
 * mean, the repair's invariants, and the genetic algorithm against the exact
 * optimum on small rounds where every feasible allocation is scored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "policy/pollux/pollux_internal.h"

#define MJ 4
#define MN 3

/* A round's speedup table: s[j][nodes][replicas], concave in replicas, with a
 * per-job cost of spanning nodes. */
struct table {
	double s[MJ][MN + 1][MN * 4 + 1];
};

static double lookup(void *ctx, int j, int nodes, int replicas)
{
	const struct table *t = ctx;
	return t->s[j][nodes][replicas];
}

static void fill_table(struct table *t, uint64_t *rng, int n_jobs, int max_rep)
{
	for (int j = 0; j < n_jobs; j++) {
		double a = 0.3 + (double)(pollux_rand(rng) % 1000) / 1000.0; /* scalability */
		double c = (double)(pollux_rand(rng) % 500) / 1000.0;        /* spread cost */
		for (int n = 1; n <= MN; n++)
			for (int r = 1; r <= max_rep; r++)
				t->s[j][n][r] = pow(r, a) / (1.0 + c * (n - 1)) / 2.0;
	}
}

static void restart_factor(void **state)
{
	(void)state;
	assert_true(fabs(pollux_restart_factor(270, 0, 30) - 0.9) < 1e-12);
	assert_true(fabs(pollux_restart_factor(270, 3, 30) - 0.6) < 1e-12);
	assert_true(pollux_restart_factor(20, 1, 30) == 0.0); /* just moved: no credit */
	assert_true(pollux_restart_factor(100, 0, 0) == 1.0);  /* no delay, no penalty */
}

/* Two jobs, speedups 1 and 3 (scale 1): the p = -1 mean is the harmonic mean of
 * s + 1e-3, and a moved job loses its restart factor. */
static void power_mean(void **state)
{
	(void)state;
	struct table t = {0};
	t.s[0][1][1] = 1.0;
	t.s[1][1][2] = 3.0;
	int node_gpus[1] = {4}, base[2] = {1, 2}, lo[2] = {0, 0}, hi[2] = {4, 4};
	double rf[2] = {0.5, 0.5};
	struct pollux_problem pr = {2, 1, node_gpus, base, lo, hi, rf, -1.0, 1.0, lookup, &t};
	double e = 1e-3, want = 2.0 / (1.0 / (1 + e) + 1.0 / (3 + e));
	assert_true(fabs(pollux_fitness(&pr, NULL, base) - want) < 1e-12);
	int moved[2] = {1, 1}; /* job 1 shrinks to 1 GPU: speedup 0 (not in table) */
	want = 2.0 / (1.0 / (1 + e) + 1.0 / e);
	assert_true(fabs(pollux_fitness(&pr, NULL, moved) - want) < 1e-12);
	pr.p = 0; /* geometric mean */
	assert_true(fabs(pollux_fitness(&pr, NULL, base) - sqrt(3.0)) < 1e-12);
}

/* Any matrix comes out of the repair feasible. */
static void repair_feasible(void **state)
{
	(void)state;
	struct table t = {0};
	uint64_t rng = 7;
	int node_gpus[MN] = {4, 4, 2}, base[MJ * MN] = {0}, lo[MJ] = {0, 2, 0, 3},
	    hi[MJ] = {8, 3, 1, 10};
	double rf[MJ] = {1, 1, 1, 1};
	struct pollux_problem pr = {MJ, MN, node_gpus, base, lo, hi, rf, -1.0, 1.0, lookup, &t};
	for (int it = 0; it < 2000; it++) {
		int s[MJ * MN];
		for (int i = 0; i < MJ * MN; i++)
			s[i] = (int)(pollux_rand(&rng) % 7);
		pollux_repair(&pr, s, &rng);
		assert_true(pollux_feasible(&pr, s));
	}
}

/*
 * 40 random rounds of 3-4 jobs on 2-3 nodes of 4 GPUs, from a random held
 * allocation with restart penalties: the GA (Pollux's 100 x 100) comes within
 * 15% of the exact optimum on every round and 2% on average, never beats it, returns a feasible state, and never
 * does worse than the allocation held (its seed).
 */
static void ga_reaches_exact(void **state)
{
	(void)state;
	uint64_t rng = 2021;
	int worst_gap_ppm = 0;
	double sum_gap = 0;
	for (int round = 0; round < 40; round++) {
		int J = 3 + round % 2, N = 2 + (round / 2) % 2;
		struct table t = {0};
		int node_gpus[MN], base[MJ * MN] = {0}, lo[MJ], hi[MJ];
		double rf[MJ];
		for (int n = 0; n < N; n++)
			node_gpus[n] = 4;
		for (int j = 0; j < J; j++) {
			lo[j] = 0;
			hi[j] = 1 + (int)(pollux_rand(&rng) % (uint64_t)(4 * N));
			rf[j] = pollux_restart_factor((double)(pollux_rand(&rng) % 600), 1, 30);
		}
		fill_table(&t, &rng, J, 4 * N);
		struct pollux_problem pr = {J, N, node_gpus, base, lo, hi, rf, -1.0,
					    (double)N / (4.0 * N), lookup, &t};
		for (int i = 0; i < J * N; i++)
			base[i] = (int)(pollux_rand(&rng) % 3);
		pollux_repair(&pr, base, &rng);
		int ex[MJ * MN], ga[MJ * MN];
		double fe, fg;
		long long visited;
		assert_int_equal(pollux_exact_search(&pr, 10000000, ex, &fe, &visited, NULL), RK_OK);
		struct pollux_ga_opts o = {POLLUX_POP_DEFAULT, POLLUX_GENS_DEFAULT, (uint64_t)round};
		assert_int_equal(pollux_ga_search(&pr, &o, base, 1, ga, &fg, NULL, NULL, NULL), RK_OK);
		assert_true(pollux_feasible(&pr, ga));
		assert_true(fabs(pollux_fitness(&pr, NULL, ga) - fg) < 1e-12);
		assert_true(fg <= fe + 1e-12);
		assert_true(fg >= pollux_fitness(&pr, NULL, base) - 1e-12);
		/* Pollux's own GA is a heuristic: on these rounds it misses the
		 * optimum by up to ~11% where reaching it takes three jobs moving at
		 * once (each move alone pays its restart penalty); measured gaps are
		 * printed, and held to a worst case and a mean. */
		assert_true(fg >= fe * 0.85);
		sum_gap += (fe - fg) / fe;
		int gap = (int)((fe - fg) / fe * 1e6);
		if (gap > worst_gap_ppm)
			worst_gap_ppm = gap;
	}
	print_message("pollux GA vs exact: worst gap %d ppm, mean %.0f ppm over 40 rounds\n",
		      worst_gap_ppm, sum_gap / 40 * 1e6);
	assert_true(sum_gap / 40 < 0.02);
}


/*
 * The policy's default search (water-filling plus local search,
 * pollux_greedy.c) on the GA's 40 rounds above: feasible, never above the
 * exact optimum, within 5% of it on average. These rounds are adversarial
 * for a count-based search (any count from 1 to 12 on 4-GPU nodes, so
 * packing fragments); measured here: mean gap 2.5% against the GA's 0.7%,
 * below the GA on 13 of 40 rounds. The gaps are printed.
 */
static void greedy_vs_ga(void **state)
{
	(void)state;
	uint64_t rng = 2021;
	double gap_ga = 0, gap_greedy = 0;
	int worse = 0;
	for (int round = 0; round < 40; round++) {
		int J = 3 + round % 2, N = 2 + (round / 2) % 2;
		struct table t = {0};
		int node_gpus[MN], base[MJ * MN] = {0}, lo[MJ], hi[MJ];
		double rf[MJ];
		for (int n = 0; n < N; n++)
			node_gpus[n] = 4;
		for (int j = 0; j < J; j++) {
			lo[j] = 0;
			hi[j] = 1 + (int)(pollux_rand(&rng) % (uint64_t)(4 * N));
			rf[j] = pollux_restart_factor((double)(pollux_rand(&rng) % 600), 1, 30);
		}
		fill_table(&t, &rng, J, 4 * N);
		struct pollux_problem pr = {J, N, node_gpus, base, lo, hi, rf, -1.0,
					    (double)N / (4.0 * N), lookup, &t};
		for (int i = 0; i < J * N; i++)
			base[i] = (int)(pollux_rand(&rng) % 3);
		pollux_repair(&pr, base, &rng);
		int ex[MJ * MN], ga[MJ * MN], gr[MJ * MN];
		double fe, fg, fr;
		assert_int_equal(pollux_exact_search(&pr, 10000000, ex, &fe, NULL, NULL), RK_OK);
		struct pollux_ga_opts o = {POLLUX_POP_DEFAULT, POLLUX_GENS_DEFAULT, (uint64_t)round};
		assert_int_equal(pollux_ga_search(&pr, &o, base, 1, ga, &fg, NULL, NULL, NULL), RK_OK);
		assert_int_equal(pollux_greedy_problem(&pr, 16, gr, &fr, NULL), RK_OK);
		assert_true(pollux_feasible(&pr, gr));
		assert_true(fabs(pollux_fitness(&pr, NULL, gr) - fr) < 1e-12);
		assert_true(fr <= fe + 1e-12);
		worse += fr < fg - 1e-12;
		gap_ga += (fe - fg) / fe;
		gap_greedy += (fe - fr) / fe;
	}
	print_message("pollux greedy vs GA vs exact: mean gap greedy %.0f ppm, GA %.0f ppm; "
		      "greedy below GA on %d of 40 rounds\n",
		      gap_greedy / 40 * 1e6, gap_ga / 40 * 1e6, worse);
	assert_true(gap_greedy / 40 < 0.05);
}

/* Same seed, same answer; the exact search refuses instances above its bound. */
static void deterministic_and_bounded(void **state)
{
	(void)state;
	struct table t = {0};
	uint64_t rng = 5;
	fill_table(&t, &rng, MJ, 12);
	int node_gpus[MN] = {4, 4, 4}, base[MJ * MN] = {0}, lo[MJ] = {0}, hi[MJ] = {12, 12, 12, 12};
	double rf[MJ] = {1, 1, 1, 1};
	struct pollux_problem pr = {MJ, MN, node_gpus, base, lo, hi, rf, -1.0, 0.25, lookup, &t};
	int a[MJ * MN], b[MJ * MN];
	double fa, fb;
	struct pollux_ga_opts o = {20, 10, 99};
	assert_int_equal(pollux_ga_search(&pr, &o, base, 1, a, &fa, NULL, NULL, NULL), RK_OK);
	assert_int_equal(pollux_ga_search(&pr, &o, base, 1, b, &fb, NULL, NULL, NULL), RK_OK);
	assert_memory_equal(a, b, sizeof(a));
	struct rk_error err = {0};
	assert_int_equal(pollux_exact_search(&pr, 10, a, &fa, NULL, &err), RK_ERANGE);
	assert_non_null(strstr(err.msg, "more than 10 feasible states"));
	o.pop = 1;
	assert_int_equal(pollux_ga_search(&pr, &o, base, 1, a, &fa, NULL, NULL, &err), RK_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(restart_factor),
		cmocka_unit_test(power_mean),
		cmocka_unit_test(repair_feasible),
		cmocka_unit_test(ga_reaches_exact),
		cmocka_unit_test(greedy_vs_ga),
		cmocka_unit_test(deterministic_and_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
