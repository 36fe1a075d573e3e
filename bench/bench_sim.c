/*
 * bench_sim: speed of the simulator engine (issue 3, "Speed"). Budgets, CPU
 * time of rk_sim_run alone (trace parsing, zoo and oracle loading excluded):
 *   - Rubick base trace (406 jobs) on 8x8 A800 with FIFO        <= 50 ms
 *   - Muri trace2 (5,755 jobs) on 8x8 GPUs with SRTF            <= 200 ms
 *   - Pollux philly.csv (82,247 jobs) on 256x8 GPUs with SRTF  <= 5 s
 * then a scaling table: time against the number of jobs (first N of a trace)
 * and against cluster size. Each figure is the median of R runs (1 for runs
 * over a second); an in-run reference (sorting the trace's submit times 100
 * times) is printed so that machines compare as ratios.
 *
 *   bench_sim [--reps R] [--quick] [TRACES_DIR]   (default $RK_SHARED_DIR/traces)
 *
 * Exit status 1 when a budget is missed or a run fails.
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
#include <sys/resource.h>
#include <time.h>

struct env {
	struct rk_zoo zoo;
	struct rk_oracle *oracle;
	struct rk_perf_env perf;
	int reps;
};

struct bcase {
	const char *label;
	const char *trace; /* relative to the traces dir */
	const char *cluster;
	const char *policy;
	size_t max_jobs;   /* 0 = all */
	double budget_ms;  /* 0 = no budget (scaling row) */
};

/* Run one case; prints a row. Returns 0, 1 over budget, -1 on failure. */
static int run_case(struct env *e, const char *dir, const struct bcase *c)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, c->trace);
	char *text = NULL;
	size_t len = 0;
	struct rk_error err;
	struct rk_cluster cl = {0, NULL};
	struct rk_trace tr;
	memset(&tr, 0, sizeof(tr));
	struct rk_job *jobs = NULL;
	int n = 0, rc = -1;
	if (rk_cli_read_file(path, &text, &len, &err) ||
	    rk_cluster_parse(&cl, c->cluster, "cluster", &err))
		goto out;
	struct rk_trace_options opt = rk_trace_options_default();
	opt.skip_bad = 1;
	opt.max_jobs = c->max_jobs;
	if (rk_trace_parse(text, len, path, "auto", &opt, &tr, &err))
		goto out;
	struct rk_sim_jobs_report rep;
	if (rk_sim_jobs_from_trace(&tr, path, &e->zoo, &cl, 1, &jobs, &n, &rep, &err) ||
	    rk_sim_jobs_check_oracle(&cl, jobs, &n, rk_sim_oracle_iter, e->oracle, 1, &rep, &err))
		goto out;
	struct rk_sim_config cfg;
	rk_sim_config_default(&cfg);
	cfg.iter = rk_sim_oracle_iter;
	cfg.iter_ctx = e->oracle;
	cfg.env = &e->perf;
	double t[16], ref[16];
	int reps = e->reps;
	struct rk_sim_result res;
	memset(&res, 0, sizeof(res));
	for (int r = 0; r < reps; r++) {
		rk_sim_result_fini(&res);
		double t0 = bench_cpu_ms();
		if (rk_sim_run(&cl, jobs, n, rk_policy_find(c->policy), &cfg, &res, &err))
			goto out;
		t[r] = bench_cpu_ms() - t0;
		if (t[r] > 1000)
			reps = r + 1; /* long runs: once is enough */
		/* Reference: sort the submit times 100 times. */
		double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(*v));
		t0 = bench_cpu_ms();
		for (int k = 0; k < 100 && v; k++) {
			for (int i = 0; i < n; i++)
				v[i] = (double)jobs[(i * 7919 + k) % n].submit_ms;
			qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
		}
		ref[r] = bench_cpu_ms() - t0;
		free(v);
	}
	qsort(t, (size_t)reps, sizeof(t[0]), bench_cmp_double);
	qsort(ref, (size_t)reps, sizeof(ref[0]), bench_cmp_double);
	double med = t[reps / 2], mref = ref[reps / 2];
	int done = 0;
	for (int i = 0; i < res.n_outcomes; i++)
		done += res.outcomes[i].completed;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("%-26s %-8s %-22s %7d %7d %9lld %10.1f %8.2f %8ld %s\n", c->label, c->policy,
	       c->cluster, n, done, (long long)res.rounds, med, mref > 0 ? med / mref : 0,
	       ru.ru_maxrss / 1024,
	       c->budget_ms > 0 ? (med <= c->budget_ms ? "ok" : "OVER BUDGET") : "");
	rc = c->budget_ms > 0 && med > c->budget_ms;
	rk_sim_result_fini(&res);
out:
	if (rc < 0)
		fprintf(stderr, "bench_sim: %s: %s\n", c->label, err.msg);
	rk_sim_jobs_free(jobs, n);
	rk_trace_fini(&tr);
	rk_cluster_fini(&cl);
	free(text);
	return rc;
}

int main(int argc, char **argv)
{
	struct env e;
	memset(&e, 0, sizeof(e));
	e.reps = 3;
	int quick = 0;
	const char *dir = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			long r = strtol(argv[++i], NULL, 10);
			e.reps = r > 0 && r <= 16 ? (int)r : 3;
		}
		else if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else
			dir = argv[i];
	}
	char def[4096];
	if (!dir) {
		const char *sh = getenv("RK_SHARED_DIR");
		snprintf(def, sizeof(def), "%s/traces", sh ? sh : RK_DEFAULT_DATA_DIR "/../../shared");
		dir = def;
	}
	struct rk_error err;
	rk_zoo_init(&e.zoo);
	rk_perf_env_a800(&e.perf);
	char mdir[4096];
	snprintf(mdir, sizeof(mdir), "%s/measured/rubick", RK_DEFAULT_DATA_DIR);
	if (rk_cli_zoo_load(rk_cli_zoo_dir(NULL), &e.zoo, &err) ||
	    rk_oracle_create_measured(&e.oracle, &e.perf, RK_ORACLE_FALLBACK_MODEL, &err) ||
	    rk_oracle_load_dir(e.oracle, mdir, &err)) {
		fprintf(stderr, "bench_sim: %s\n", err.msg);
		return 1;
	}
	const char *a800 = "8x8:a800,cpus=96,mem=1600G";
	const struct bcase budgets[] = {
		{"rubick base (budget)", "rubick/workloads/workload-base.csv", a800, "fifo", 0, 50},
		{"muri trace2 (budget)", "muri/trace-data/trace2.csv", "8x8", "srtf", 0, 200},
		{"philly.csv (budget)", "pollux-osdi21/philly.csv", "256x8", "srtf", 0, 5000},
	};
	const struct bcase scaling[] = {
		{"rubick base", "rubick/workloads/workload-base.csv", a800, "srtf", 0, 0},
		{"rubick base", "rubick/workloads/workload-base.csv", a800, "tiresias", 0, 0},
		{"muri trace2 first 1000", "muri/trace-data/trace2.csv", "8x8", "srtf", 1000, 0},
		{"muri trace2 first 2000", "muri/trace-data/trace2.csv", "8x8", "srtf", 2000, 0},
		{"muri trace2 first 4000", "muri/trace-data/trace2.csv", "8x8", "srtf", 4000, 0},
		{"muri trace2 on 16x8", "muri/trace-data/trace2.csv", "16x8", "srtf", 0, 0},
		{"muri trace2 on 32x8", "muri/trace-data/trace2.csv", "32x8", "srtf", 0, 0},
		{"philly first 10000", "pollux-osdi21/philly.csv", "256x8", "srtf", 10000, 0},
		{"philly first 40000", "pollux-osdi21/philly.csv", "256x8", "srtf", 40000, 0},
		{"philly on 64x8", "pollux-osdi21/philly.csv", "64x8", "srtf", 0, 0},
		{"philly on 1024x8", "pollux-osdi21/philly.csv", "1024x8", "srtf", 0, 0},
	};
	printf("%-26s %-8s %-22s %7s %7s %9s %10s %8s %8s\n", "case", "policy", "cluster", "jobs",
	       "done", "rounds", "cpu_ms", "x_ref", "rss_mb");
	int bad = 0;
	for (size_t i = 0; i < sizeof(budgets) / sizeof(budgets[0]); i++)
		bad |= run_case(&e, dir, &budgets[i]) != 0;
	for (size_t i = 0; !quick && i < sizeof(scaling) / sizeof(scaling[0]); i++)
		bad |= run_case(&e, dir, &scaling[i]) < 0;
	rk_oracle_destroy(e.oracle);
	rk_zoo_fini(&e.zoo);
	return bad;
}
