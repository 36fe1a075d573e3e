/*
 * `rubick model profile`: profile a real job on this machine and fit its
 * performance model (docs/perf-model.md, "Profiling your own job").
 *
 * The seven profiling configurations follow the Rubick artifact's profiles
 * (docs/references.md §1.5): data-parallel runs on few GPUs, with and without
 * the memory-saving variants. Offload does not exist on a CPU-only machine and
 * 8 GPUs do not fit on 2 cores, so here they are dp=1 and dp=2, each plain,
 * with gradient checkpointing and with gradient accumulation, plus dp=2 under
 * ZeRO-1. Each run is one launch as rubickd's local engine does it
 * (model_profile_run.c); its steps after the first --warmup are its sample
 * (median per phase). The samples are written in rubick's profile format
 * (docs/profile-format.md), read back, and fitted with rk_perf_fit.
 *
 * --validate FILE then runs other configurations, predicts each from the
 * profile fit alone (the strict protocol: nothing of the configuration is
 * seen) and again after rk_refit_observe has seen its first --observe
 * iterations (the online refit rubickd runs on a job's reports, refit.h),
 * scored on the iterations after those.
 */
#define _POSIX_C_SOURCE 200809L
#include "cli/commands.h"
#include "cli/model_env.h"
#include "cli/model_profile.h"
#include "cli/util.h"
#include "rubick/fit.h"
#include "rubick/perf.h"
#include "rubick/profile.h"
#include "rubick/refit.h"
#include "rubick/zoo.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_PROFILE 7
#define MAX_VALIDATE 64

struct popts {
	struct rk_prof_job job;
	const char *model, *spec, *out, *validate, *zoo, *env;
	int warmup, observe, holdout, val_iters;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rubick model profile --job CMD (--model NAME | --model-spec TEXT)\n"
		"         --global-batch N --out DIR [--validate FILE] [OPTIONS]\n"
		"\n"
		"Run the job's seven profiling configurations on this machine (one process\n"
		"per GPU, launched as rubickd's local engine does), write DIR/profile.txt\n"
		"(docs/profile-format.md) and fit the performance model on it. With --validate,\n"
		"also run FILE's configurations (one per line: a canonical plan, then\n"
		"optionally cpus=N), predict each from the profile alone (strict) and after an\n"
		"online refit on its first --observe iterations, and print APE and MAPE per\n"
		"plan family. The job must use python/rubick_job, which logs its steps'\n"
		"times to RUBICK_TIMES_FILE.\n"
		"\n"
		"options:\n"
		"  --iters N         iterations of each profiling run (default 10)\n"
		"  --warmup N        first iterations of a run not counted (default 3)\n"
		"  --observe N       iterations the online refit sees (default 20)\n"
		"  --holdout N       iterations after those it is scored on (default 5)\n"
		"  --timeout S       a run still going after S seconds fails (default 300)\n"
		"  --env KEY=V,...   cluster constants as for validate (default: this machine's\n"
		"                    loopback gloo, nvlink_gbps=1, docs/perf-model.md)\n"
		"  --zoo DIR         model zoo folder for --model\n\n"
		"A run that exits non-zero or logs no iterations fails the command (exit 1),\n"
		"naming the configuration and its log.\n" RK_EXIT_HELP);
}

static int num_arg(const char *flag, const char *s, long lo, long hi, int *out)
{
	long v;
	if (rk_cli_model_parse_long(flag, s, lo, hi, &v) < 0)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct popts *a)
{
	for (int i = 2; i < argc; i++) {
		const char *f = argv[i];
		if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
			usage(stdout);
			return 1;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "rubick model profile: %s: missing value or unknown option "
					"(see --help)\n", f);
			return -1;
		}
		const char *v = argv[++i];
		int bad = 0;
		if (!strcmp(f, "--job"))
			a->job.cmd = v;
		else if (!strcmp(f, "--model"))
			a->model = v;
		else if (!strcmp(f, "--model-spec"))
			a->spec = v;
		else if (!strcmp(f, "--out"))
			a->out = v;
		else if (!strcmp(f, "--validate"))
			a->validate = v;
		else if (!strcmp(f, "--zoo"))
			a->zoo = v;
		else if (!strcmp(f, "--env"))
			a->env = v;
		else if (!strcmp(f, "--global-batch"))
			bad = num_arg(f, v, 1, 1 << 20, &a->job.global_batch);
		else if (!strcmp(f, "--iters"))
			bad = num_arg(f, v, 2, RK_PROF_ITERS_MAX, &a->job.iters);
		else if (!strcmp(f, "--warmup"))
			bad = num_arg(f, v, 0, RK_PROF_ITERS_MAX - 2, &a->warmup);
		else if (!strcmp(f, "--observe"))
			bad = num_arg(f, v, 1, RK_REFIT_MAX_SAMPLES, &a->observe);
		else if (!strcmp(f, "--holdout"))
			bad = num_arg(f, v, 1, 500, &a->holdout);
		else if (!strcmp(f, "--timeout"))
			bad = num_arg(f, v, 1, 86400, &a->job.timeout_s);
		else {
			fprintf(stderr, "rubick model profile: unknown option '%s' (see --help)\n", f);
			return -1;
		}
		if (bad)
			return -1;
	}
	if (!a->job.cmd || !a->out || !a->job.global_batch || !a->model == !a->spec) {
		fprintf(stderr, "rubick model profile: give --job CMD, --global-batch N, --out DIR "
				"and one of --model NAME or --model-spec TEXT (see --help)\n");
		return -1;
	}
	if (a->warmup >= a->job.iters) {
		fprintf(stderr, "rubick model profile: --warmup %d: must be less than --iters %d\n",
			a->warmup, a->job.iters);
		return -1;
	}
	a->val_iters = a->warmup + a->observe + a->holdout;
	if (a->val_iters > RK_PROF_ITERS_MAX) {
		fprintf(stderr, "rubick model profile: --warmup + --observe + --holdout = %d: at "
				"most %d\n", a->val_iters, RK_PROF_ITERS_MAX);
		return -1;
	}
	return 0;
}

/* Plan family for the per-family MAPE: what the configuration exercises. */
static const char *family(const struct rk_plan *p)
{
	if (p->tp > 1 && p->pp > 1)
		return "3d";
	if (p->tp > 1)
		return "tp";
	if (p->pp > 1)
		return "pp";
	if (p->zero)
		return "zero";
	if (p->gc)
		return "gc";
	return "dp";
}

static void set_run(struct rk_prof_run *r, const struct rk_plan *p, int cpus, const char *out,
		    const char *kind, int idx)
{
	r->plan = *p;
	rk_plan_format(p, r->plan_text, sizeof(r->plan_text));
	r->procs = p->dp * p->tp * p->pp;
	r->cpus = cpus > 0 ? cpus : r->procs; /* default: one thread per process ("GPU") */
	snprintf(r->dir, sizeof(r->dir), "%s/%s-%02d", out, kind, idx);
}

/* The seven profiling plans at global batch G (see the file comment). */
static int profile_plans(int G, struct rk_prof_run *runs, const char *out)
{
	if (G % 4) {
		fprintf(stderr, "rubick model profile: --global-batch %d: the profiling plans "
				"split it over 2 replicas x 2 micro-batches, so it must be a multiple "
				"of 4\n", G);
		return -1;
	}
	const struct rk_plan p[N_PROFILE] = {
		{.dp = 1, .tp = 1, .pp = 1, .mb = G, .ga = 1},
		{.dp = 2, .tp = 1, .pp = 1, .mb = G / 2, .ga = 1},
		{.dp = 1, .tp = 1, .pp = 1, .mb = G, .ga = 1, .gc = 1},
		{.dp = 2, .tp = 1, .pp = 1, .mb = G / 2, .ga = 1, .gc = 1},
		{.dp = 1, .tp = 1, .pp = 1, .mb = G / 2, .ga = 2},
		{.dp = 2, .tp = 1, .pp = 1, .mb = G / 4, .ga = 2},
		{.dp = 2, .tp = 1, .pp = 1, .mb = G / 2, .ga = 1, .zero = 1},
	};
	for (int i = 0; i < N_PROFILE; i++)
		set_run(&runs[i], &p[i], 0, out, "profile", i + 1);
	return 0;
}

/* --validate FILE: "PLAN [cpus=N]" per line, '#' comments. Errors name FILE:LINE. */
static int read_validate(const char *path, int G, struct rk_prof_run *runs, int *n,
			 const char *out)
{
	char *text = NULL;
	size_t len = 0;
	struct rk_error err = {0};
	if (rk_cli_read_file(path, &text, &len, &err) < 0) {
		fprintf(stderr, "rubick model profile: --validate: %s\n", err.msg);
		return -1;
	}
	int ln = 0, rc = 0;
	*n = 0;
	for (char *line = text, *next; line && !rc; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		ln++;
		char ptxt[256] = "", extra[64] = "", more[8] = "";
		int k = sscanf(line, " %255s %63s %7s", ptxt, extra, more);
		if (k <= 0 || ptxt[0] == '#')
			continue;
		char where[600];
		snprintf(where, sizeof(where), "%s:%d", path, ln);
		struct rk_plan p;
		int cpus = 0;
		if (rk_plan_parse(ptxt, where, &p, &err) < 0 ||
		    rk_plan_validate(&p, G, p.dp * p.tp * p.pp, &err) < 0) {
			fprintf(stderr, "rubick model profile: --validate: %s: %s\n", where, err.msg);
			rc = -1;
		} else if (k == 3 || (k == 2 && (strncmp(extra, "cpus=", 5) ||
						 num_arg(where, extra + 5, 1, 1024, &cpus)))) {
			fprintf(stderr, "rubick model profile: --validate: %s: after the plan only "
					"cpus=N may follow\n", where);
			rc = -1;
		} else if (*n == MAX_VALIDATE) {
			fprintf(stderr, "rubick model profile: --validate: %s: more than %d "
					"configurations\n", where, MAX_VALIDATE);
			rc = -1;
		} else {
			set_run(&runs[*n], &p, cpus, out, "validate", *n + 1);
			(*n)++;
		}
	}
	free(text);
	if (!rc && !*n) {
		fprintf(stderr, "rubick model profile: --validate: %s: no configurations\n", path);
		rc = -1;
	}
	return rc;
}

static int cpus_per_gpu(const struct rk_prof_run *r)
{
	return r->cpus / r->procs > 0 ? r->cpus / r->procs : 1;
}

static void fmt_ms(char *buf, size_t cap, double v)
{
	if (isfinite(v) && v >= 0)
		snprintf(buf, cap, "%.3f", v);
	else
		snprintf(buf, cap, "-");
}

/* DIR/profile.txt in rubick's format from the profile runs' medians. */
static int write_profile(const struct popts *a, const struct rk_model *m,
			 const struct rk_prof_run *runs, char *path, size_t cap)
{
	snprintf(path, cap, "%s/profile.txt", a->out);
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "rubick model profile: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# rubick model profile: %s, one process per GPU on this machine\n# job: ",
		m->name);
	for (const char *c = a->job.cmd; *c; c++) /* one comment line, whatever the command */
		fputc(*c == '\n' || *c == '\r' ? ' ' : *c, f);
	fprintf(f, "\n# medians of iterations %d..%d of each run\n"
		   "model = %s\nglobal_batch = %d\nparam_mi = %.6g\n\n",
		a->warmup + 1, a->job.iters, m->name, a->job.global_batch, m->params / 1048576.0);
	fprintf(f, "# plan placement cpus_per_gpu fwd_ms sync_ms opt_ms iter_ms\n");
	for (int i = 0; i < N_PROFILE; i++) {
		const struct rk_prof_run *r = &runs[i];
		char ph[4][32];
		fmt_ms(ph[0], sizeof(ph[0]), rk_prof_median(r->fwd, a->warmup, r->n));
		fmt_ms(ph[1], sizeof(ph[1]), rk_prof_median(r->sync, a->warmup, r->n));
		fmt_ms(ph[2], sizeof(ph[2]), rk_prof_median(r->opt, a->warmup, r->n));
		fmt_ms(ph[3], sizeof(ph[3]), rk_prof_median(r->iter, a->warmup, r->n));
		fprintf(f, "%s %d %d %s %s %s %s\n", r->plan_text, r->procs, cpus_per_gpu(r), ph[0],
			ph[1], ph[2], ph[3]);
	}
	if (fclose(f)) {
		fprintf(stderr, "rubick model profile: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int load_model(const struct popts *a, struct rk_model *m)
{
	struct rk_error err = {0};
	if (a->spec) {
		if (rk_model_parse(a->spec, strlen(a->spec), "--model-spec", m, &err) < 0 ||
		    rk_model_validate(m, &err) < 0) {
			fprintf(stderr, "rubick model profile: %s\n", err.msg);
			return RK_EXIT_USAGE;
		}
		return 0;
	}
	struct rk_zoo zoo;
	rk_zoo_init(&zoo);
	const char *dir = rk_cli_zoo_dir(a->zoo);
	int rc = 0;
	if (rk_cli_zoo_load(dir, &zoo, &err) < 0) {
		fprintf(stderr, "rubick model profile: %s\n", err.msg);
		rc = RK_EXIT_FAILURE;
	} else {
		const struct rk_model *z = rk_zoo_find(&zoo, a->model);
		if (!z) {
			fprintf(stderr, "rubick model profile: --model: '%s' is not in the zoo %s\n",
				a->model, dir);
			rc = RK_EXIT_NOTFOUND;
		} else {
			*m = *z;
		}
	}
	rk_zoo_fini(&zoo);
	return rc;
}

static int run_all(const struct rk_prof_job *job, struct rk_prof_run *runs, int n, const char *what)
{
	char why[1400];
	for (int i = 0; i < n; i++) {
		fprintf(stderr, "rubick model profile: %s %d/%d: %s (%d processes, %d cpus)\n", what,
			i + 1, n, runs[i].plan_text, runs[i].procs, runs[i].cpus);
		if (rk_prof_run_exec(job, &runs[i], why, sizeof(why)) < 0) {
			fprintf(stderr, "rubick model profile: %s\n", why);
			return -1;
		}
	}
	return 0;
}

/* Fit on the written profile, read back as any rubick profile is (the file is the record). */
static int fit_profile(const char *path, struct rk_model *m, const struct rk_perf_env *env,
		       struct rk_perf_fit_result *res)
{
	char *text = NULL;
	size_t len = 0;
	struct rk_error err = {0};
	struct rk_profile p = {0};
	int rc = rk_cli_read_file(path, &text, &len, &err);
	if (rc >= 0)
		rc = rk_profile_parse(text, len, path, &p, &err);
	if (rc >= 0)
		rc = rk_perf_fit(m, env, p.samples, p.n, NULL, res, &err);
	if (rc < 0)
		fprintf(stderr, "rubick model profile: %s\n", err.msg);
	else {
		m->perf = res->k;
		m->perf_fitted = 1;
		if (res->fwd_ms > 0)
			m->fwd_ms = res->fwd_ms;
	}
	rk_profile_fini(&p);
	free(text);
	return rc < 0 ? -1 : 0;
}

static void print_profile(const struct popts *a, const struct rk_prof_run *runs, const char *path)
{
	printf("profile: %d runs of %d iterations (first %d not counted), %s\n", N_PROFILE,
	       a->job.iters, a->warmup, path);
	printf("  %-48s %5s %4s %9s %9s %9s %9s\n", "plan", "procs", "cpus", "fwd_ms", "sync_ms",
	       "opt_ms", "iter_ms");
	for (int i = 0; i < N_PROFILE; i++) {
		const struct rk_prof_run *r = &runs[i];
		char ph[4][32];
		fmt_ms(ph[0], sizeof(ph[0]), rk_prof_median(r->fwd, a->warmup, r->n));
		fmt_ms(ph[1], sizeof(ph[1]), rk_prof_median(r->sync, a->warmup, r->n));
		fmt_ms(ph[2], sizeof(ph[2]), rk_prof_median(r->opt, a->warmup, r->n));
		fmt_ms(ph[3], sizeof(ph[3]), rk_prof_median(r->iter, a->warmup, r->n));
		printf("  %-48s %5d %4d %9s %9s %9s %9s\n", r->plan_text, r->procs, r->cpus, ph[0],
		       ph[1], ph[2], ph[3]);
	}
}

static void print_params(const struct rk_model *m, const struct rk_perf_fit_result *res)
{
	const struct rk_perf_params *k = &m->perf;
	printf("fit: %d samples, %d forward and %d iteration outliers left out, "
	       "iteration RMSE(log) %.4f\n",
	       res->n_samples, res->n_fwd_rejected, res->n_iter_rejected, res->iter_rmse_log);
	printf("  perf_k_bwd = %.6g\n  perf_k_sync = %.6g\n  perf_k_opt = %.6g\n"
	       "  perf_k_os_offload = %.6g\n  perf_k_const = %.6g\n  perf_k_off = %.6g\n"
	       "  perf_k_swap = %.6g\n  perf_fwd_fixed_ms = %.6g\n  fwd_ms = %.6g\n",
	       k->k_bwd, k->k_sync, k->k_opt, k->k_os_offload, k->k_const, k->k_off, k->k_swap,
	       k->fwd_fixed_ms, m->fwd_ms);
}

struct score {
	const char *fam;
	int shared; /* 1 = the run's threads outnumber this machine's cores: they time-share */
	double strict_ape, refit_ape; /* refit_ape NaN when it could not be computed */
};

/* Predict, refit on the observed iterations, predict again; one row per configuration. */
static void score_run(const struct popts *a, const struct rk_model *fitted,
		      const struct rk_perf_env *env, const struct rk_prof_run *r, long cores,
		      struct score *s)
{
	const int G = a->job.global_batch, w = a->warmup, obs = a->observe;
	struct rk_placement pl = {.n_nodes = 1, .gpus = {r->procs}};
	double meas = rk_prof_median(r->iter, w, r->n), pred = NAN, pred2 = NAN;
	double held = rk_prof_median(r->iter, w + obs, r->n);
	if (rk_perf_predict(fitted, &fitted->perf, env, &r->plan, &pl, cpus_per_gpu(r), &pred) < 0)
		pred = NAN;
	struct rk_model m = *fitted;
	struct rk_refit f;
	struct rk_error err = {0};
	rk_refit_init(&f);
	int ok = 1;
	for (int i = w; i < w + obs && i < r->n && ok; i++)
		ok = rk_refit_observe(&f, &m, env, &r->plan, &pl, r->cpus, G, 1000.0 * G / r->iter[i],
				      &err) == 0;
	if (ok && rk_perf_predict(&m, &m.perf, env, &r->plan, &pl, cpus_per_gpu(r), &pred2) < 0)
		pred2 = NAN;
	rk_refit_fini(&f);
	s->fam = family(&r->plan);
	s->shared = cores > 0 && (long)r->procs * cpus_per_gpu(r) > cores;
	s->strict_ape = fabs(pred - meas) / meas;
	s->refit_ape = fabs(pred2 - held) / held;
	char c[4][32];
	fmt_ms(c[0], sizeof(c[0]), meas);
	fmt_ms(c[1], sizeof(c[1]), pred);
	fmt_ms(c[2], sizeof(c[2]), held);
	fmt_ms(c[3], sizeof(c[3]), pred2);
	printf("  %-5s %-48s %5d %4d %9s %9s %6.1f%% %9s %9s %6.1f%%\n", s->fam, r->plan_text,
	       r->procs, r->cpus, c[0], c[1], 100 * s->strict_ape, c[2], c[3], 100 * s->refit_ape);
}

/*
 * MAPE per family, overall, and split by whether a run's threads fit this
 * machine's cores: the model gives every GPU its own compute, which a process
 * sharing a core with others does not have (docs/perf-model.md).
 */
static void print_mape(const struct score *s, int n, long cores)
{
	static const char *const fams[] = {"dp", "gc", "zero", "tp", "pp", "3d", "all",
					   "own-core", "shared"};
	printf("MAPE (strict: profile fit only; refit: after the first observed iterations; "
	       "own-core: threads <= the %ld cores, shared: more)\n", cores);
	printf("  %-8s %3s %8s %8s\n", "family", "n", "strict", "refit");
	for (size_t j = 0; j < sizeof(fams) / sizeof(fams[0]); j++) {
		double a = 0, b = 0;
		int k = 0, kb = 0;
		for (int i = 0; i < n; i++) {
			int keep = !strcmp(fams[j], "all") || !strcmp(fams[j], s[i].fam) ||
				   (!strcmp(fams[j], "own-core") && !s[i].shared) ||
				   (!strcmp(fams[j], "shared") && s[i].shared);
			if (!keep)
				continue;
			k++;
			a += s[i].strict_ape;
			if (isfinite(s[i].refit_ape)) {
				b += s[i].refit_ape;
				kb++;
			}
		}
		if (k)
			printf("  %-8s %3d %7.1f%% %7.1f%%\n", fams[j], k, 100 * a / k,
			       kb ? 100 * b / kb : NAN);
	}
}

int rk_cmd_model_profile(int argc, char **argv)
{
	struct popts a = {.job = {.iters = 10, .timeout_s = 300}, .warmup = 3, .observe = 20,
			  .holdout = 5};
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc > 0 ? RK_EXIT_OK : RK_EXIT_USAGE;
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	/* A "GPU" here is a process; its gradients meet over loopback gloo, about 1 GB/s
	 * of all-reduce bus bandwidth, not NVLink's 150 (docs/perf-model.md). */
	env.nvlink_gbps = 1.0;
	if (a.env && rk_cli_model_parse_env(a.env, &env) < 0)
		return RK_EXIT_USAGE;
	struct rk_model m;
	if ((rc = load_model(&a, &m)))
		return rc;
	m.global_batch = a.job.global_batch;
	struct rk_prof_run *runs = calloc(N_PROFILE + MAX_VALIDATE, sizeof(*runs));
	struct score *sc = calloc(MAX_VALIDATE, sizeof(*sc));
	int n_val = 0;
	char path[600], failed[600];
	rc = RK_EXIT_FAILURE;
	if (!runs || !sc) {
		fprintf(stderr, "rubick model profile: out of memory\n");
		goto out;
	}
	if (profile_plans(a.job.global_batch, runs, a.out) < 0) {
		rc = RK_EXIT_USAGE;
		goto out;
	}
	if (a.validate && read_validate(a.validate, a.job.global_batch, runs + N_PROFILE, &n_val,
					a.out) < 0)
		goto out;
	int e = rk_cli_mkdirs(a.out, failed, sizeof(failed));
	if (e) {
		fprintf(stderr, "rubick model profile: --out: %s: %s\n", failed, strerror(e));
		goto out;
	}
	if (run_all(&a.job, runs, N_PROFILE, "profile") < 0)
		goto out;
	if (write_profile(&a, &m, runs, path, sizeof(path)) < 0)
		goto out;
	struct rk_perf_fit_result res;
	if (fit_profile(path, &m, &env, &res) < 0)
		goto out;
	printf("rubick model profile: %s, global batch %d, job: %s\n", m.name,
	       a.job.global_batch, a.job.cmd);
	print_profile(&a, runs, path);
	print_params(&m, &res);
	if (n_val) {
		struct rk_prof_job vj = a.job;
		vj.iters = a.val_iters;
		fflush(stdout);
		if (run_all(&vj, runs + N_PROFILE, n_val, "validate") < 0)
			goto out;
		printf("validation: %d configurations of %d iterations; strict = median of "
		       "iterations %d..%d vs the profile fit; refit = median of %d..%d vs the fit "
		       "after observing %d..%d\n",
		       n_val, vj.iters, a.warmup + 1, vj.iters, a.warmup + a.observe + 1, vj.iters,
		       a.warmup + 1, a.warmup + a.observe);
		printf("  %-5s %-48s %5s %4s %9s %9s %7s %9s %9s %7s\n", "fam", "plan", "procs",
		       "cpus", "meas_ms", "pred_ms", "ape", "held_ms", "refit_ms", "ape");
		long cores = sysconf(_SC_NPROCESSORS_ONLN);
		for (int i = 0; i < n_val; i++)
			score_run(&a, &m, &env, &runs[N_PROFILE + i], cores, &sc[i]);
		print_mape(sc, n_val, cores);
	}
	rc = RK_EXIT_OK;
out:
	free(runs);
	free(sc);
	return rc;
}
