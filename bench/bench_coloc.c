/*
 * bench_coloc: speed of the co-location policies inside the simulator (issue
 * 6: "a 5,000-job trace in <= 1 s"). CPU time of rk_sim_run alone (trace,
 * zoo, oracle and interference table loading excluded), the first 5,000 jobs
 * of Muri's trace2 on 8x8 GPUs (Philly-derived, 1..32 GPUs per job):
 *   sjf-bsbf, sjf-ffs with --sharing on (Gavel interference table);
 *   sjf-bco, sjf-ff, sjf-bf, sjf-random with --contention on (12.5 GB/s NICs).
 * Budget 1,000 ms each; median of R runs.
 *
 *   bench_coloc [--reps R] [TRACES_DIR]   (default $RK_SHARED_DIR/traces)
 *
 * Exit status 1 when a budget is missed or a run fails.
 */
#include "cli/util.h"

#include "rubick/interference.h"
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

#define BUDGET_MS 1000.0
#define JOBS 5000

int main(int argc, char **argv)
{
	int reps = 3;
	const char *dir = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			long r = strtol(argv[++i], NULL, 10);
			reps = r > 0 && r <= 16 ? (int)r : 3;
		} else {
			dir = argv[i];
		}
	}
	char def[4096], path[8192];
	if (!dir) {
		const char *sh = getenv("RK_SHARED_DIR");
		snprintf(def, sizeof(def), "%s/traces", sh ? sh : RK_DEFAULT_DATA_DIR "/../../shared");
		dir = def;
	}
	struct rk_error err;
	struct rk_zoo zoo;
	rk_zoo_init(&zoo);
	struct rk_perf_env perf;
	rk_perf_env_a800(&perf);
	struct rk_oracle *oracle = NULL;
	struct rk_xi_table xi;
	rk_xi_table_init(&xi);
	struct rk_cluster cl = {0, NULL};
	struct rk_trace tr;
	memset(&tr, 0, sizeof(tr));
	struct rk_job *jobs = NULL;
	int n = 0, bad = 1;
	char *text = NULL;
	size_t len = 0;
	struct rk_xi_parse_report xrep;
	snprintf(path, sizeof(path), "%s/interference/gavel_simulation_throughputs.json",
		 RK_DEFAULT_DATA_DIR);
	if (rk_cli_zoo_load(rk_cli_zoo_dir(NULL), &zoo, &err) ||
	    rk_oracle_create_model(&oracle, &perf, &err) ||
	    rk_cli_read_file(path, &text, &len, &err) ||
	    rk_xi_parse_gavel(&xi, text, len, path, &xrep, &err) || rk_xi_table_finish(&xi))
		goto out;
	free(text);
	text = NULL;
	snprintf(path, sizeof(path), "%s/muri/trace-data/trace2.csv", dir);
	if (rk_cli_read_file(path, &text, &len, &err) ||
	    rk_cluster_parse(&cl, "8x8,net=12.5", "cluster", &err))
		goto out;
	struct rk_trace_options opt = rk_trace_options_default();
	opt.skip_bad = 1;
	opt.max_jobs = JOBS;
	struct rk_sim_jobs_report rep;
	if (rk_trace_parse(text, len, path, "auto", &opt, &tr, &err) ||
	    rk_sim_jobs_from_trace(&tr, path, &zoo, &cl, 1, &jobs, &n, &rep, &err) ||
	    rk_sim_jobs_check_oracle(&cl, jobs, &n, rk_sim_oracle_iter, oracle, 1, &rep, &err))
		goto out;
	const char *pols[] = {"sjf-bsbf", "sjf-ffs", "sjf-bco", "sjf-ff", "sjf-bf", "sjf-random"};
	printf("%-11s %-12s %6s %6s %9s %10s %s\n", "policy", "physics", "jobs", "done", "rounds",
	       "cpu_ms", "budget");
	bad = 0;
	for (int p = 0; p < 6; p++) {
		struct rk_sim_config cfg;
		rk_sim_config_default(&cfg);
		cfg.iter = rk_sim_oracle_iter;
		cfg.iter_ctx = oracle;
		cfg.env = &perf;
		cfg.sharing = p < 2;
		cfg.contention = p >= 2;
		cfg.xi = &xi;
		double t[16];
		struct rk_sim_result res;
		memset(&res, 0, sizeof(res));
		for (int r = 0; r < reps; r++) {
			rk_sim_result_fini(&res);
			double t0 = bench_cpu_ms();
			if (rk_sim_run(&cl, jobs, n, rk_policy_find(pols[p]), &cfg, &res, &err)) {
				fprintf(stderr, "bench_coloc: %s: %s\n", pols[p], err.msg);
				bad = 1;
				goto out;
			}
			t[r] = bench_cpu_ms() - t0;
		}
		qsort(t, (size_t)reps, sizeof(t[0]), bench_cmp_double);
		int done = 0;
		for (int i = 0; i < res.n_outcomes; i++)
			done += res.outcomes[i].completed;
		double med = t[reps / 2];
		printf("%-11s %-12s %6d %6d %9lld %10.1f %s\n", pols[p],
		       cfg.sharing ? "sharing" : "contention", n, done, (long long)res.rounds, med,
		       med <= BUDGET_MS ? "ok" : "OVER BUDGET");
		bad |= med > BUDGET_MS;
		rk_sim_result_fini(&res);
	}
out:
	if (bad && err.msg[0])
		fprintf(stderr, "bench_coloc: %s\n", err.msg);
	rk_sim_jobs_free(jobs, n);
	rk_trace_fini(&tr);
	rk_cluster_fini(&cl);
	rk_xi_table_fini(&xi);
	rk_oracle_destroy(oracle);
	rk_zoo_fini(&zoo);
	free(text);
	return bad;
}
