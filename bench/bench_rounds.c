/*
 * bench_rounds: the cost of each scheduling round of one policy in a
 * simulation (issue 15: "Sia's rounds stay under 1 s at 2,048 GPUs"). The
 * policy's schedule call is wrapped and timed in CPU time of the thread
 * (a loaded machine does not inflate it); prints the rounds, their total,
 * mean, p99 and max, and how many took over 1 s.
 *
 *   bench_rounds TRACE CLUSTER POLICY [MAX_JOBS] [BUDGET_MS]
 *
 * MAX_JOBS: the first N jobs by submit time (0 = all). BUDGET_MS (default
 * 1000): exit status 1 when the longest round exceeds it.
 */
#include "cli/util.h"

#include "rubick/oracle.h"
#include "rubick/perf.h"
#include "rubick/sim.h"
#include "rubick/trace.h"
#include "rubick/zoo.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct rk_policy_ops *inner;
static double *round_ms;
static size_t n_rounds, cap_rounds;

static double thread_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int timed_schedule(void *state, const struct rk_sched_input *in, struct rk_decisions *out,
			  struct rk_error *err)
{
	double t0 = thread_ms();
	int rc = inner->schedule(state, in, out, err);
	double t = thread_ms() - t0;
	if (n_rounds == cap_rounds) {
		size_t cap = cap_rounds ? 2 * cap_rounds : 4096;
		double *v = realloc(round_ms, cap * sizeof(*v));
		if (!v)
			return rk_error_set(err, RK_ENOMEM, "bench_rounds: out of memory");
		round_ms = v;
		cap_rounds = cap;
	}
	round_ms[n_rounds++] = t;
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: bench_rounds TRACE CLUSTER POLICY [MAX_JOBS] [BUDGET_MS]\n");
		return 2;
	}
	char *end;
	long max_jobs = argc > 4 ? strtol(argv[4], &end, 10) : 0;
	if (argc > 4 && (*end || max_jobs < 0)) {
		fprintf(stderr, "bench_rounds: MAX_JOBS '%s': not a whole number >= 0\n", argv[4]);
		return 2;
	}
	double budget = argc > 5 ? strtod(argv[5], &end) : 1000;
	if (argc > 5 && (*end || !(budget > 0))) {
		fprintf(stderr, "bench_rounds: BUDGET_MS '%s': not a number > 0\n", argv[5]);
		return 2;
	}
	inner = rk_policy_find(argv[3]);
	if (!inner) {
		fprintf(stderr, "bench_rounds: unknown policy '%s'\n", argv[3]);
		return 2;
	}
	struct rk_policy_ops ops = *inner;
	ops.schedule = timed_schedule;

	struct rk_error err;
	struct rk_zoo zoo;
	struct rk_oracle *oracle = NULL;
	struct rk_perf_env perf;
	rk_zoo_init(&zoo);
	rk_perf_env_a800(&perf);
	char mdir[4096];
	snprintf(mdir, sizeof(mdir), "%s/measured/rubick", RK_DEFAULT_DATA_DIR);
	char *text = NULL;
	size_t len = 0;
	struct rk_cluster cl = {0, NULL};
	struct rk_trace tr;
	memset(&tr, 0, sizeof(tr));
	struct rk_job *jobs = NULL;
	int n = 0, rc = 1;
	struct rk_trace_options opt = rk_trace_options_default();
	opt.skip_bad = 1;
	opt.max_jobs = (size_t)max_jobs;
	struct rk_sim_jobs_report rep;
	if (rk_cli_zoo_load(rk_cli_zoo_dir(NULL), &zoo, &err) ||
	    rk_oracle_create_measured(&oracle, &perf, RK_ORACLE_FALLBACK_MODEL, &err) ||
	    rk_oracle_load_dir(oracle, mdir, &err) || rk_cli_read_file(argv[1], &text, &len, &err) ||
	    rk_cluster_parse(&cl, argv[2], "cluster", &err) ||
	    rk_trace_parse(text, len, argv[1], "auto", &opt, &tr, &err) ||
	    rk_sim_jobs_from_trace(&tr, argv[1], &zoo, &cl, 1, &jobs, &n, &rep, &err) ||
	    rk_sim_jobs_check_oracle(&cl, jobs, &n, rk_sim_oracle_iter, oracle, 1, &rep, &err)) {
		fprintf(stderr, "bench_rounds: %s\n", err.msg);
		goto out;
	}
	struct rk_sim_config cfg;
	rk_sim_config_default(&cfg);
	cfg.iter = rk_sim_oracle_iter;
	cfg.iter_ctx = oracle;
	cfg.env = &perf;
	struct rk_sim_result res;
	memset(&res, 0, sizeof(res));
	double t0 = bench_cpu_ms();
	if (rk_sim_run(&cl, jobs, n, &ops, &cfg, &res, &err)) {
		fprintf(stderr, "bench_rounds: %s\n", err.msg);
		goto out;
	}
	double total_cpu = bench_cpu_ms() - t0;
	double sum = 0, max = 0;
	size_t over = 0;
	for (size_t i = 0; i < n_rounds; i++) {
		sum += round_ms[i];
		max = round_ms[i] > max ? round_ms[i] : max;
		over += round_ms[i] > 1000;
	}
	double p99 = 0;
	if (n_rounds > 0) {
		qsort(round_ms, n_rounds, sizeof(*round_ms), bench_cmp_double);
		p99 = round_ms[(size_t)((double)(n_rounds - 1) * 0.99)];
	}
	int done = 0;
	for (int i = 0; i < res.n_outcomes; i++)
		done += res.outcomes[i].completed;
	printf("policy %s cluster %s jobs %d completed %d: sim cpu %.0f ms, %zu rounds, policy "
	       "%.0f ms, mean %.3f p99 %.3f max %.1f ms, %zu over 1 s: %s\n",
	       argv[3], argv[2], n, done, total_cpu, n_rounds, sum,
	       n_rounds ? sum / (double)n_rounds : 0, p99, max, over,
	       max <= budget ? "ok" : "OVER BUDGET");
	rc = max > budget;
	rk_sim_result_fini(&res);
out:
	free(round_ms);
	rk_sim_jobs_free(jobs, n);
	rk_trace_fini(&tr);
	rk_cluster_fini(&cl);
	free(text);
	rk_oracle_destroy(oracle);
	rk_zoo_fini(&zoo);
	return rc;
}
