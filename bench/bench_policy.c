/*
 * bench_policy: wall time of one scheduling round of the baseline policies at
 * scale, against the FIFO round on the same snapshot as the in-run reference.
 *
 *   bench_policy [--jobs N] [--nodes M] [--reps R] [--zoo DIR]
 *
 * Defaults: 1,000 active jobs on 128 nodes x 8 A800 (issue 4: one Sia round
 * at that size <= 200 ms). Jobs are drawn deterministically from the zoo
 * models with the Rubick traces' request sizes (docs/references.md §1.9) and the
 * users' plans (ZeRO-DP data parallel, or PP x TP 3D plans for the LLaMA
 * models at 8+ GPUs). Models without fitted parameters get the artifact's
 * fits of docs/references.md §1.4.2, so every throughput is predictable.
 *
 * Two snapshots: "cold" (every job pending, the first round) and "warm" (the
 * state after applying the cold round's decisions, a steady-state round).
 * Prints one line per policy and snapshot (thread CPU time): the first round
 * of a fresh policy instance (caches cold), the median ms over R more rounds, the ratio to
 * FIFO, and the budget verdicts for Sia (200 ms) and Rubick (20 ms, curves
 * built).
 */
#include "rubick/cluster.h"
#include "rubick/job.h"
#include "rubick/perf.h"
#include "rubick/policy.h"
#include "rubick/zoo.h"
#include "bench_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIA_BUDGET_MS 200.0
#define RUBICK_BUDGET_MS 20.0 /* issue 4, curves already built */

struct fit_row {
	const char *name;
	struct rk_perf_params k;
};

/* docs/references.md §1.4.2 (artifact fits); GPT-2's k_off < 1 is clamped to the p-norm bound. */
static const struct fit_row fits[] = {
	{"vit", {1.0, 13.547, 0.09786, 1e-8, 5.2013, 15.693, 21.647, 0}},
	{"roberta", {1.7226, 1.2055, 1e-8, 2.2005, 15.737, 16.635, 32.953, 0}},
	{"bert", {1.7763, 1.1410, 1e-8, 4.4006, 15.257, 37.289, 26.222, 0}},
	{"t5", {1.2754, 1.0, 1e-8, 3.4538, 11.616, 224.87, 61.680, 0}},
	{"gpt2", {2.2955, 71.217, 0.05217, 4.8772, 1.7865, 1.0, 51.489, 0}},
	{"llama7", {2.0, 10.0, 0.03, 1e-8, 1.0493, 1.1192, 1000, 0}},
};
#define N_MODELS ((int)(sizeof(fits) / sizeof(fits[0])))

/* CPU time of this thread: a round is single-threaded, and wall time on a
 * shared, oversubscribed build machine measures the neighbours instead. */
static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	if (fseek(f, 0, SEEK_END) == 0) {
		long n = ftell(f);
		if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
			*len = fread(buf, 1, (size_t)n, f);
			buf[*len] = '\0';
		}
	}
	fclose(f);
	return buf;
}

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* The user's plan for a request of g GPUs (g reduced until the batch divides). */
static struct rk_plan user_plan(const struct rk_model *m, int *g)
{
	int b = m->global_batch;
	if (m->allow_3d && *g >= 8 && *g <= 32) {
		int pp = *g / 8;
		return (struct rk_plan){.dp = 1, .tp = 8, .pp = pp, .mb = 1, .ga = b};
	}
	while (*g > 1 && (b % *g || *g > 8 * b))
		(*g)--;
	return (struct rk_plan){.dp = *g, .tp = 1, .pp = 1, .mb = b / *g, .ga = 1, .zero = 2};
}

static void apply(struct rk_job **jobs, int n, const struct rk_decisions *d, int64_t t_ms)
{
	for (int i = 0; i < d->n; i++)
		for (int k = 0; k < n; k++) {
			struct rk_job *j = jobs[k];
			if (j->id != d->v[i].job_id)
				continue;
			rk_alloc_copy(&j->alloc, &d->v[i].alloc);
			if (d->v[i].alloc.n > 0) {
				j->plan = d->v[i].plan;
				j->state = RK_JOB_RUNNING;
				if (j->first_start_ms < 0)
					j->first_start_ms = t_ms;
			} else {
				j->state = RK_JOB_PENDING;
				j->restarts++;
			}
			j->last_change_ms = t_ms;
			break;
		}
}

/*
 * One policy instance: the first round (which fills caches such as Rubick's
 * curves) timed alone, then the median of `reps` more rounds on the same
 * snapshot. OUT: the last round's decisions.
 */
static int time_round(const struct rk_policy_ops *ops, const struct rk_sched_input *in, int reps,
		      double *first_ms, double *median_ms, struct rk_decisions *last)
{
	void *st = NULL;
	struct rk_error err;
	if (ops->create(&st, NULL, &err)) {
		fprintf(stderr, "bench_policy: %s: %s\n", ops->name, err.msg);
		return 1;
	}
	double t[65];
	if (reps > 64)
		reps = 64;
	for (int r = 0; r <= reps; r++) {
		rk_decisions_clear(last);
		double t0 = now_ms();
		int rc = ops->schedule(st, in, last, &err);
		t[r] = now_ms() - t0;
		if (rc) {
			fprintf(stderr, "bench_policy: %s: %s\n", ops->name, err.msg);
			ops->destroy(st);
			return 1;
		}
		if (rk_decisions_validate(in, last, ops->name, &err)) {
			fprintf(stderr, "bench_policy: %s\n", err.msg);
			ops->destroy(st);
			return 1;
		}
	}
	ops->destroy(st);
	*first_ms = t[0];
	qsort(t + 1, (size_t)reps, sizeof(t[0]), bench_cmp_double);
	*median_ms = t[1 + reps / 2];
	return 0;
}

static int parse_int(const char *flag, const char *v, int lo, int hi, int *out)
{
	char *end;
	long x = v ? strtol(v, &end, 10) : 0;
	if (!v || *end || end == v || x < lo || x > hi) {
		fprintf(stderr, "bench_policy: %s: expected an integer in %d..%d\n", flag, lo, hi);
		return 1;
	}
	*out = (int)x;
	return 0;
}

int main(int argc, char **argv)
{
	int n_jobs = 1000, n_nodes = 128, reps = 3;
	const char *zoo_dir = RK_DEFAULT_DATA_DIR "/zoo";
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(argv[i], "--jobs")) {
			if (parse_int("--jobs", v, 1, 1000000, &n_jobs))
				return 2;
		} else if (!strcmp(argv[i], "--nodes")) {
			if (parse_int("--nodes", v, 1, 100000, &n_nodes))
				return 2;
		} else if (!strcmp(argv[i], "--reps")) {
			if (parse_int("--reps", v, 1, 64, &reps))
				return 2;
		} else if (!strcmp(argv[i], "--zoo")) {
			if (!v) {
				fprintf(stderr, "bench_policy: --zoo: expected a directory\n");
				return 2;
			}
			zoo_dir = v;
		} else {
			fprintf(stderr, "usage: bench_policy [--jobs N] [--nodes M] [--reps R] [--zoo DIR]\n");
			return 2;
		}
		i++;
	}

	struct rk_model models[N_MODELS];
	for (int i = 0; i < N_MODELS; i++) {
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s.model", zoo_dir, fits[i].name);
		size_t len = 0;
		char *text = read_file(path, &len);
		struct rk_error err;
		if (!text || rk_model_parse(text, len, path, &models[i], &err)) {
			fprintf(stderr, "bench_policy: %s: %s\n", path, text ? err.msg : "cannot read");
			free(text);
			return 1;
		}
		free(text);
		if (!models[i].perf_fitted) {
			models[i].perf = fits[i].k;
			models[i].perf_fitted = 1;
		}
	}

	char spec[128];
	snprintf(spec, sizeof(spec), "%dx8:a800,cpus=96,mem=1600G,nvlink=400,net=100", n_nodes);
	struct rk_cluster cluster;
	struct rk_error err;
	if (rk_cluster_parse(&cluster, spec, "bench", &err)) {
		fprintf(stderr, "bench_policy: %s\n", err.msg);
		return 1;
	}
	struct rk_perf_env env;
	rk_perf_env_a800(&env);

	/* Request sizes weighted like the Rubick traces (§1.9), capped at 32. */
	static const int sizes[] = {1, 1, 2, 2, 2, 4, 4, 4, 8, 8, 8, 8, 16, 32};
	struct rk_job *jobs = calloc((size_t)n_jobs, sizeof(*jobs));
	struct rk_job **ptrs = calloc((size_t)n_jobs, sizeof(*ptrs));
	if (!jobs || !ptrs) {
		fprintf(stderr, "bench_policy: out of memory\n");
		return 1;
	}
	uint64_t seed = 42;
	for (int i = 0; i < n_jobs; i++) {
		struct rk_job *j = &jobs[i];
		const struct rk_model *m = &models[lcg(&seed) % N_MODELS];
		int g = sizes[lcg(&seed) % (sizeof(sizes) / sizeof(sizes[0]))];
		j->id = i + 1;
		snprintf(j->name, sizeof(j->name), "j%d", i + 1);
		j->model = m;
		j->global_batch = m->global_batch;
		j->req_plan = user_plan(m, &g);
		/* Free reconfiguration, as `rubick sim --gpu-range free` gives a trace's jobs. */
		j->req_gpus = g;
		j->min_gpus = 1;
		j->max_gpus = 8 * n_nodes;
		j->req_cpus = 8 * g;
		j->iters_total = 1000 + (double)(lcg(&seed) % 100000);
		j->est_duration_s = j->iters_total;
		j->submit_ms = (int64_t)i * 1000;
		j->guaranteed = (int)(lcg(&seed) % 2);
		j->state = RK_JOB_PENDING;
		j->first_start_ms = -1;
		ptrs[i] = j;
	}
	struct rk_sched_input in = {.now_ms = (int64_t)n_jobs * 1000, .cluster = &cluster,
				    .jobs = ptrs, .n_jobs = n_jobs, .env = &env};

	static const char *names[] = {"fifo", "sia", "antman", "synergy-fifo", "synergy-srtf", "rubick", "rubick-plan-only", "rubick-res-only"};
	const int n_pol = (int)(sizeof(names) / sizeof(names[0]));
	int rc = 0;
	printf("bench_policy: %d jobs, %d nodes x 8 GPUs, median of %d rounds\n", n_jobs, n_nodes, reps);
	for (int warm = 0; warm < 2 && !rc; warm++) {
		struct rk_decisions d;
		rk_decisions_init(&d);
		if (warm) {
			/* Steady state: apply Sia's cold round, then time every policy on it. */
			double ms, first;
			rc = time_round(rk_policy_find("sia"), &in, 1, &first, &ms, &d);
			apply(ptrs, n_jobs, &d, in.now_ms);
			in.now_ms += 60000;
		}
		double ref = 0;
		for (int p = 0; p < n_pol && !rc; p++) {
			const struct rk_policy_ops *ops = rk_policy_find(names[p]);
			if (!ops) {
				printf("  %-13s not registered\n", names[p]);
				continue;
			}
			double ms = 0, first = 0;
			rc = time_round(ops, &in, reps, &first, &ms, &d);
			if (rc)
				break;
			if (p == 0)
				ref = ms;
			printf("  %-5s %-17s %9.2f ms (first %9.2f ms) %8.1fx fifo %5d decisions",
			       warm ? "warm" : "cold", names[p], ms, first, ref > 0 ? ms / ref : 0.0, d.n);
			if (!strcmp(names[p], "sia"))
				printf("  [budget %.0f ms: %s]", SIA_BUDGET_MS,
				       ms <= SIA_BUDGET_MS ? "met" : "OVER");
			if (!strcmp(names[p], "rubick"))
				printf("  [budget %.0f ms: %s]", RUBICK_BUDGET_MS,
				       ms <= RUBICK_BUDGET_MS ? "met" : "OVER");
			printf("\n");
		}
		rk_decisions_fini(&d);
	}
	for (int i = 0; i < n_jobs; i++)
		rk_alloc_fini(&jobs[i].alloc);
	free(jobs);
	free(ptrs);
	rk_cluster_fini(&cluster);
	return rc;
}
