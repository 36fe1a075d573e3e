/*
 * `rubick sim`: replay a trace on a cluster under one or more policies and
 * print the comparison (table or JSON), optionally writing the per-job CSV,
 * time series, summary JSON and HTML report. Reads files; everything else is
 * the library (trace readers, oracle, engine, metrics, report writers).
 */
#include "cli/commands.h"
#include "cli/sim_opts.h"
#include "cli/sim_coloc.h"
#include "cli/sim_native.h"
#include "cli/sim_loan.h"
#include "cli/sim_policies.h"
#include "cli/sim_prov.h"
#include "cli/sim_seeds.h"
#include "cli/sim_warn.h"
#include "cli/trace_arrivals.h"
#include "cli/util.h"

#include "rubick/gpu.h"
#include "rubick/oracle.h"
#include "rubick/perf.h"
#include "rubick/report.h"
#include "rubick/sim.h"
#include "rubick/trace.h"
#include "rubick/zoo.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_POLICIES 32

/* The folder --oracle reads (def: cap bytes for the default), NULL for `model` or a bad value. */
static const char *oracle_dir(const char *arg, char *def, size_t cap)
{
	if (!arg) {
		snprintf(def, cap, "%s/measured/rubick", RK_DEFAULT_DATA_DIR);
		return def;
	}
	return !strncmp(arg, "measured=", 9) && arg[9] ? arg + 9 : NULL;
}

static int load_oracle(const char *arg, const struct rk_perf_env *env, struct rk_oracle **o)
{
	struct rk_error err;
	char def[4096];
	int rc;
	if (arg && !strcmp(arg, "model")) {
		rc = rk_oracle_create_model(o, env, &err);
	} else {
		const char *dir = oracle_dir(arg, def, sizeof(def));
		if (!dir) {
			fprintf(stderr, "rubick sim: --oracle: expected measured=DIR or model, got '%s'\n",
				arg);
			return RK_EINVAL;
		}
		rc = rk_oracle_create_measured(o, env, RK_ORACLE_FALLBACK_MODEL, &err);
		if (!rc) {
			rc = rk_oracle_load_dir(*o, dir, &err);
			if (rc) {
				rk_oracle_destroy(*o);
				*o = NULL;
			}
		}
	}
	if (rc)
		fprintf(stderr, "rubick sim: --oracle: %s\n", err.msg);
	return rc;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct progress {
	const char *policy;
	int last_pct;
};

/* Progress bar on stderr (only installed when stderr is a terminal). */
static void show_progress(void *ctx, int64_t now_ms, int done, int total)
{
	struct progress *p = ctx;
	int pct = total > 0 ? (int)(100LL * done / total) : 100;
	if (pct == p->last_pct)
		return;
	p->last_pct = pct;
	char bar[41];
	int fill = pct * 40 / 100;
	for (int i = 0; i < 40; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[40] = '\0';
	fprintf(stderr, "\r%-10s [%s] %3d%% %d/%d jobs, t=%.1f h", p->policy, bar, pct, done, total,
		(double)now_ms / 3.6e6);
	fflush(stderr);
}

static int write_file(const char *dir, const char *name, const struct rk_report *rep,
		      int (*fn)(FILE *, const struct rk_report *, struct rk_error *))
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "rubick sim: --out: %s: %s\n", path, strerror(errno));
		return RK_EIO;
	}
	struct rk_error err;
	int rc = fn(f, rep, &err);
	if (fclose(f) && !rc) {
		fprintf(stderr, "rubick sim: --out: %s: %s\n", path, strerror(errno));
		return RK_EIO;
	}
	if (rc)
		fprintf(stderr, "rubick sim: %s: %s\n", path, err.msg);
	return rc;
}

static int write_json_pretty(FILE *f, const struct rk_report *r, struct rk_error *err)
{
	return rk_report_write_json(f, r, 1, err);
}

static int write_out(const char *dir, const struct rk_report *rep)
{
	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "rubick sim: --out: %s: %s\n", dir, strerror(errno));
		return RK_EIO;
	}
	int rc = write_file(dir, "jobs.csv", rep, rk_report_write_jobs_csv);
	if (!rc)
		rc = write_file(dir, "samples.csv", rep, rk_report_write_samples_csv);
	if (!rc)
		rc = write_file(dir, "plans.csv", rep, rk_report_write_plans_csv);
	if (!rc)
		rc = write_file(dir, "summary.json", rep, write_json_pretty);
	if (!rc)
		rc = write_file(dir, "report.html", rep, rk_report_write_html);
	struct rk_error err;
	if (!rc && (rc = rk_report_write_figures(dir, rep, &err)))
		fprintf(stderr, "rubick sim: --out: %s\n", err.msg);
	/* stderr, so stdout stays what scripts compare; the one place a run says where it wrote. */
	if (!rc) {
		struct rk_report_figs figs;
		char names[256] = "";
		size_t n = 0;
		if (!rk_report_figures(rep, &figs, &err))
			for (int i = 0; i < figs.n && n < sizeof(names); i++)
				n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
				                      i ? ", " : "", figs.f[i].name);
		rk_report_figures_fini(&figs);
		fprintf(stderr, "rubick sim: wrote jobs.csv, samples.csv, plans.csv, summary.json, "
		        "report.html and fig-NAME.svg, fig-NAME.pdf for NAME in %s to %s\n", names, dir);
	}
	return rc;
}

/* Everything one invocation owns, released in one place. */
struct run_state {
	struct rk_zoo zoo;
	struct rk_cluster cl;
	struct rk_trace trace;
	struct rk_oracle *oracle;
	struct rk_job *jobs;
	int n_jobs;
	struct rk_sim_result results[MAX_POLICIES];
	struct rk_report_run runs[MAX_POLICIES];
	struct rk_report_loan loans[MAX_POLICIES]; /* with --inference: runs[i].loan */
	int n_runs;
	char *text;
	double *native; /* the jobs' rk_job.native_sps (rk_cli_native_speeds) */
};

static void run_state_fini(struct run_state *s)
{
	for (int i = 0; i < s->n_runs; i++)
		rk_sim_result_fini(&s->results[i]);
	rk_sim_jobs_free(s->jobs, s->n_jobs);
	rk_oracle_destroy(s->oracle);
	rk_trace_fini(&s->trace);
	rk_cluster_fini(&s->cl);
	rk_zoo_fini(&s->zoo);
	free(s->text);
	free(s->native);
}

/*
 * --job-length sia-target: a job whose trace gives its application's batch
 * runs the iterations that batch needs to reach the application's validation
 * target, as Sia's and Pollux's simulators end their jobs (without their
 * batch adaptation); its run-time estimate then comes from those iterations.
 */
static int sia_targets(const struct opts *o, struct run_state *s)
{
	int set = 0, kept = 0;
	for (int i = 0; i < s->n_jobs; i++) {
		struct rk_job *j = &s->jobs[i];
		double it;
		if (j->app_batch <= 0 || rk_oracle_target_iters(s->oracle, j->job_type, j->app_batch,
								&it) != 0) {
			kept++;
			continue;
		}
		j->iters_total = it;
		j->est_duration_s = 0;
		set++;
	}
	if (set == 0) {
		fprintf(stderr, "rubick sim: --job-length sia-target: no job of %s has a validation "
			"target (needs a Sia/Pollux trace and --oracle measured=DIR with "
			"validation-<batch>.csv files)\n", o->trace);
		return 1;
	}
	fprintf(stderr, "rubick sim: %s: %d job(s) run to their validation target; %d keep the "
		"trace's length\n", o->trace, set, kept);
	return 0;
}

static int load_inputs(const struct opts *o, struct run_state *s, const struct rk_perf_env *env,
                       uint64_t workload_seed)
{
	struct rk_error err;
	if (rk_cli_zoo_load(rk_cli_zoo_dir(o->zoo), &s->zoo, &err)) {
		fprintf(stderr, "rubick sim: zoo: %s\n", err.msg);
		return RK_EXIT_FAILURE;
	}
	if (rk_cli_cluster_read(o->cluster, &s->cl, &err)) {
		fprintf(stderr, "rubick sim: %s\n", err.msg);
		return RK_EXIT_FAILURE;
	}
	size_t len;
	if (rk_cli_read_file(o->trace, &s->text, &len, &err)) {
		fprintf(stderr, "rubick sim: --trace: %s\n", err.msg);
		return RK_EXIT_FAILURE;
	}
	struct rk_trace_options topt = rk_trace_options_default();
	topt.skip_bad = o->skip_bad;
	topt.seed = workload_seed;
	if (rk_trace_parse(s->text, len, o->trace, o->format, &topt, &s->trace, &err)) {
		fprintf(stderr, "rubick sim: %s\n", err.msg);
		return RK_EXIT_FAILURE;
	}
	char note[256];
	if (rk_cli_trace_arrivals_apply("rubick sim", &s->trace, o->load, o->poisson, workload_seed,
	                                note, sizeof(note)))
		return RK_EXIT_FAILURE;
	if (note[0])
		fprintf(stderr, "rubick sim: %s: arrivals: %s\n", o->trace, note);
	if (s->trace.n_skipped)
		fprintf(stderr, "rubick sim: %s: skipped %zu bad line(s); first: %s\n", o->trace,
			s->trace.n_skipped, s->trace.n_reasons ? s->trace.reasons[0] : "");
	if (s->trace.n_no_gpu)
		fprintf(stderr, "rubick sim: %s: dropped %zu job(s) that request no GPU\n", o->trace,
			s->trace.n_no_gpu);
	struct rk_sim_jobs_report rep;
	if (rk_sim_jobs_from_trace(&s->trace, o->trace, &s->zoo, &s->cl, o->skip_bad, &s->jobs,
				   &s->n_jobs, &rep, &err)) {
		fprintf(stderr, "rubick sim: %s (--skip-bad drops such jobs)\n", err.msg);
		return RK_EXIT_FAILURE;
	}
	if (o->trace_gpu)
		rk_sim_jobs_set_ref_gpu(s->jobs, s->n_jobs, strcmp(o->trace_gpu, "cluster")
							   ? rk_gpu_find(o->trace_gpu)->name : "");
	if (load_oracle(o->oracle, env, &s->oracle))
		return RK_EXIT_FAILURE;
	/* Trace-native speeds: Gavel-type jobs run their own steps at their file's speeds. */
	if (rk_cli_native_load("rubick sim", o->throughputs, &s->trace, &s->cl, s->oracle))
		return RK_EXIT_FAILURE;
	rk_cli_native_apply(&s->trace, s->jobs, s->n_jobs, s->oracle);
	/* ... and the policies may read them (Gavel's policies read the same matrix). */
	int native_gpus = rk_cluster_total_gpus(&s->cl);
	if (native_gpus > RK_CLI_NATIVE_MAX_GPUS)
		native_gpus = RK_CLI_NATIVE_MAX_GPUS;
	if (rk_cli_native_speeds(s->jobs, s->n_jobs, s->oracle, native_gpus, &s->native) < 0) {
		fprintf(stderr, "rubick sim: out of memory for trace-native speeds\n");
		return RK_EXIT_FAILURE;
	}
	rk_cli_native_warn("rubick sim", &s->trace, s->oracle, stderr);
	if (o->job_length && !strcmp(o->job_length, "sia-target") && sia_targets(o, s))
		return RK_EXIT_FAILURE;
	/* Jobs the oracle cannot price at their request would stop every run later. */
	if (rk_sim_jobs_check_oracle(&s->cl, s->jobs, &s->n_jobs, rk_sim_oracle_iter, s->oracle,
				     o->skip_bad, &rep, &err)) {
		fprintf(stderr, "rubick sim: %s: %s (--skip-bad drops such jobs)\n", o->trace,
			err.msg);
		return RK_EXIT_FAILURE;
	}
	if (rep.dropped)
		fprintf(stderr, "rubick sim: %s: skipped %d job(s) that cannot run here; first: %s\n",
			o->trace, rep.dropped, rep.first_reason);
	/* A run of nothing would print a row of zeros that reads like a result. */
	if (s->n_jobs == 0) {
		if (s->trace.n_lines == 0)
			fprintf(stderr, "rubick sim: %s: no jobs to replay (the %s trace has no data "
			        "line)\n", o->trace, s->trace.format);
		else
			fprintf(stderr, "rubick sim: %s: no jobs to replay (all %zu data line(s) "
			        "skipped or dropped, see above)\n", o->trace, s->trace.n_lines);
		return RK_EXIT_FAILURE;
	}
	if (rep.batch_adjusted)
		fprintf(stderr, "rubick sim: %s: %d job(s) without a batch in the trace got the model's "
			"batch rounded up to a multiple of their GPUs\n", o->trace, rep.batch_adjusted);
	return 0;
}

/* What every policy run of one repetition shares. */
struct run_ctx {
	const struct opts *o;
	const struct rk_cli_policy *pols;
	int n_pols;
	const struct rk_perf_env *env;
	const struct rk_tenant_quota *quotas;
	int n_quotas;
	uint64_t policy_seed;
	int tty;
	int warned; /* the warnings of sim_warn.h were given: once per invocation, not per seed */
};

/* Every policy on the workload of `s`, one after the other: s->runs[0..n_pols). */
static int run_policies(const struct run_ctx *c, struct run_state *s)
{
	const struct opts *o = c->o;
	int rc = 0;
	for (int i = 0; !rc && i < c->n_pols; i++) {
		struct rk_sim_config cfg;
		rk_sim_config_default(&cfg);
		cfg.interval_ms = (int64_t)llround(o->interval_s * 1000.0);
		cfg.restart_ms = (int64_t)llround(o->restart_s * 1000.0);
		cfg.overrides = o->overrides;
		cfg.n_overrides = o->n_overrides;
		cfg.seed = c->policy_seed;
		cfg.check = o->check;
		cfg.refit = o->refit;
		cfg.horizon_ms = (int64_t)llround(o->horizon_s * 1000.0);
		cfg.first_start_paid = o->first_start && !strcmp(o->first_start, "paid");
		cfg.iter = rk_sim_oracle_iter;
		cfg.iter_ctx = s->oracle;
		cfg.env = c->env;
		cfg.policy_options = c->pols[i].options;
		cfg.quotas = c->quotas;
		cfg.n_quotas = c->n_quotas;
		rk_cli_coloc_config(&o->coloc, &cfg);
		rk_cli_loan_config(&o->loan, &cfg);
		struct progress pr = {c->pols[i].name, -1};
		if (c->tty) {
			cfg.progress = show_progress;
			cfg.progress_ctx = &pr;
		}
		struct rk_error err;
		rk_oracle_stats_reset(s->oracle); /* each run reports its own lookups */
		double t0 = now_s();
		rc = rk_sim_run(&s->cl, s->jobs, s->n_jobs, c->pols[i].ops, &cfg, &s->results[i],
		                &err);
		double wall = now_s() - t0;
		if (c->tty)
			fprintf(stderr, "\n");
		if (rc) {
			fprintf(stderr, "rubick sim: %s\n", err.msg);
			break;
		}
		s->n_runs++;
		struct rk_sim_result *r = &s->results[i];
		struct rk_report_run *run = &s->runs[i];
		run->policy = c->pols[i].name;
		run->wall_s = o->no_timing ? 0 : wall;
		run->outcomes = r->outcomes;
		run->n_outcomes = r->n_outcomes;
		run->samples = r->samples;
		run->n_samples = r->n_samples;
		run->plans = r->plans;
		run->n_plans = r->n_plans;
		rk_oracle_stats_get(s->oracle, &run->oracle_stats);
		if (o->loan.inference) {
			rk_cli_loan_stats(&o->loan, &s->cl, r, &s->loans[i]);
			run->loan = &s->loans[i];
		}
		rc = rk_metrics_summarize(r->outcomes, r->n_outcomes, r->samples, r->n_samples,
					  r->start_ms, r->end_ms, &run->summary, &err);
		if (rc)
			fprintf(stderr, "rubick sim: %s: metrics: %s\n", c->pols[i].name, err.msg);
	}
	return rc;
}

/* One repetition: load the workload drawn by `wseed` into a fresh `s` and run it. */
static int run_once(struct run_ctx *c, struct opts *o, struct run_state *s, struct rk_perf_env *env,
                    uint64_t wseed)
{
	rk_zoo_init(&s->zoo);
	int rc = load_inputs(o, s, env, wseed);
	if (!rc) {
		rk_load_series_fini(&o->loan.series); /* the last repetition's, if any */
		rc = rk_cli_loan_load(&o->loan, &s->cl, s->jobs, s->n_jobs, wseed);
	}
	/* Every policy keeps a job within its range: a trace without ranges gets the
	 * papers' free reconfiguration unless asked for rigid requests or Aryl's
	 * drawn elastic share (whose other jobs stay at their request). */
	if (!rc && !(o->loan.elastic_share > 0) && (!o->gpu_range || !strcmp(o->gpu_range, "free")))
		rk_sim_jobs_free_range(&s->trace, s->jobs, s->n_jobs,
		                       rk_cluster_total_gpus(&s->cl));
	if (!rc && !c->warned) {
		struct rk_cli_sim_warn_in w = {
		    .pols = c->pols,
		    .n_pols = c->n_pols,
		    .jobs = s->jobs,
		    .n_jobs = s->n_jobs,
		    .trace = &s->trace,
		    .trace_path = o->trace,
		    .sharing = o->coloc.sharing,
		    .sia_target = o->job_length && !strcmp(o->job_length, "sia-target"),
		};
		rk_cli_sim_warn(&w, stderr);
		rk_cli_sim_history_note(&s->trace, o->trace, stderr);
		c->warned = 1;
	}
	if (!rc)
		rc = run_policies(c, s);
	return rc;
}

/* Repetition k's header on stderr: the warnings of its inputs follow it. */
static void say_run(uint64_t k, uint64_t n, uint64_t wseed, uint64_t pseed)
{
	fprintf(stderr,
	        "rubick sim: --seeds: run %llu of %llu: workload seed %llu, policy seed %llu\n",
	        (unsigned long long)(k + 1), (unsigned long long)n, (unsigned long long)wseed,
	        (unsigned long long)pseed);
}

/*
 * Every input the run read, by content (docs/sim.md "Provenance"): the trace,
 * a --cluster file, the zoo and --oracle folders, the trace-native throughput
 * file, the interference file (--sharing on) and an --inference file.
 */
static int prov_inputs(struct rk_cli_prov *p, const struct opts *o, const struct run_state *s)
{
	struct stat st;
	char path[4096];
	int rc = rk_cli_prov_add(p, "trace", o->trace);
	if (!rc && !stat(o->cluster, &st) && S_ISREG(st.st_mode)) /* as rk_cli_cluster_read */
		rc = rk_cli_prov_add(p, "cluster", o->cluster);
	if (!rc)
		rc = rk_cli_prov_add(p, "zoo", rk_cli_zoo_dir(o->zoo));
	const char *dir = oracle_dir(o->oracle, path, sizeof(path));
	if (!rc && dir)
		rc = rk_cli_prov_add(p, "oracle", dir);
	if (!rc && rk_cli_native_path(o->throughputs, &s->trace, path, sizeof(path)))
		rc = rk_cli_prov_add(p, "throughputs", path);
	if (!rc && o->coloc.sharing && o->coloc.path[0])
		rc = rk_cli_prov_add(p, "interference", o->coloc.path);
	const char *inf = o->loan.inference;
	if (!rc && inf && strncmp(inf, "diurnal:", 8) && strcmp(inf, "diurnal")) /* as sim_loan.c */
		rc = rk_cli_prov_add(p, "inference", inf);
	return rc;
}

/* summary.json's and the report's "meta": every option with its effective value. */
static void fill_meta(struct rk_cli_meta *m, const struct opts *o, const struct rk_cli_policy *pols,
                      int n_pols, int argc, char **argv, uint64_t first, uint64_t last)
{
	/* The value each seed option took: "A-B" when --seeds varies it, else the one seed
	 * (meta.workload_seed / policy_seed are the first run's, meta.repetitions every run's). */
	int vary_w = o->seeds && !o->have_workload_seed, vary_p = o->seeds && !o->have_policy_seed;
	rk_cli_meta_command(m, argc, argv);
	rk_cli_meta_add(m, "trace", "%s", o->trace);
	rk_cli_meta_add(m, "format", "%s", o->format);
	rk_cli_meta_add(m, "cluster", "%s", o->cluster);
	char names[1024] = "";
	for (int i = 0; i < n_pols; i++) {
		size_t n = strlen(names);
		snprintf(names + n, sizeof(names) - n, "%s%s", i ? " " : "", pols[i].name);
	}
	rk_cli_meta_add(m, "policy", "%s", names);
	rk_cli_meta_add(m, "policy_options", "%s", o->policy_options ? o->policy_options : "");
	rk_cli_meta_add(m, "oracle", "%s",
	                o->oracle ? o->oracle : "measured=" RK_DEFAULT_DATA_DIR "/measured/rubick");
	rk_cli_meta_add(m, "interval_s", "%g", o->interval_s);
	char ov[1024] = "";
	for (int i = 0; i < o->n_overrides; i++) {
		size_t n = strlen(ov);
		snprintf(ov + n, sizeof(ov) - n, ",%s=%g", o->overrides[i].model,
		         (double)o->overrides[i].restart_ms / 1000.0);
	}
	rk_cli_meta_add(m, "restart_cost_s", "%g%s", o->restart_s, ov);
	rk_cli_meta_add(m, "horizon_s", "%g", o->horizon_s);
	rk_cli_meta_add(m, "first_start", "%s", o->first_start ? o->first_start : "free");
	rk_cli_meta_add(m, "load", "%g", o->load > 0 ? o->load : 1.0);
	rk_cli_meta_add(m, "poisson", "%s", o->poisson ? o->poisson : "");
	if (vary_w)
		rk_cli_meta_add(m, "workload_seed", "%llu-%llu", (unsigned long long)first,
		                (unsigned long long)last);
	else
		rk_cli_meta_add(m, "workload_seed", "%llu", (unsigned long long)o->workload_seed);
	if (vary_p)
		rk_cli_meta_add(m, "policy_seed", "%llu-%llu", (unsigned long long)first,
		                (unsigned long long)last);
	else
		rk_cli_meta_add(m, "policy_seed", "%llu", (unsigned long long)o->policy_seed);
	rk_cli_meta_add(m, "seeds", "%s", o->seeds ? o->seeds : "");
	rk_cli_meta_add(m, "normalize", "%s", o->normalize ? o->normalize : pols[0].name);
	rk_cli_meta_add(m, "quota", "%s", o->quota ? o->quota : "");
	rk_cli_meta_add(m, "skip_bad", "%d", o->skip_bad);
	rk_cli_meta_add(m, "check", "%d", o->check);
	if (o->refit) /* only when on: earlier outputs stay byte-identical */
		rk_cli_meta_add(m, "refit", "%d", o->refit);
	if (o->gpu_range && strcmp(o->gpu_range, "free")) /* likewise, only when not the default */
		rk_cli_meta_add(m, "gpu_range", "%s", o->gpu_range);
	rk_cli_meta_add(m, "zoo", "%s", rk_cli_zoo_dir(o->zoo));
	rk_cli_meta_add(m, "sharing", "%s", o->coloc.sharing ? "on" : "off");
	rk_cli_meta_add(m, "interference", "%s",
	                o->coloc.interference ? o->coloc.interference : "gavel");
	rk_cli_meta_add(m, "contention", "%s", o->coloc.contention ? "on" : "off");
	rk_cli_meta_add(m, "contention_overhead_ms", "%g", o->coloc.overhead_ms);
	rk_cli_meta_add(m, "inference", "%s", o->loan.inference ? o->loan.inference : "");
	rk_cli_meta_add(m, "reclaim_deadline_s", "%g", o->loan.deadline_s);
	rk_cli_meta_add(m, "elastic_share", "%g", o->loan.elastic_share);
	for (int i = 0; i < n_pols; i++) { /* what each policy's create() got */
		char key[RK_CLI_POLICY_NAME_MAX + 16];
		snprintf(key, sizeof(key), "options[%s]", pols[i].name);
		rk_cli_meta_add(m, key, "%s", pols[i].options);
	}
}

int rk_cmd_sim(int argc, char **argv)
{
	struct opts o;
	int rc = rk_cli_sim_parse(argc, argv, &o);
	if (rc)
		return rc < 0 ? RK_EXIT_OK : rc;
	static struct rk_cli_policy pols[MAX_POLICIES];
	int n_pols = 0;
	rc = rk_cli_policies_parse(o.policies, o.policy_options, pols, MAX_POLICIES, &n_pols);
	if (rc)
		return rc;
	int known = !o.normalize;
	for (int i = 0; i < n_pols && !known; i++)
		known = !strcmp(pols[i].name, o.normalize);
	if (!known)
		return rk_cli_sim_usage_error("--normalize", "not one of the --policy names (e.g. sia[p=1])");
	uint64_t first = 0, last = 0;
	if (o.seeds && rk_cli_seeds_parse(o.seeds, &first, &last))
		return RK_EXIT_USAGE;
	int vary_w = o.seeds && !o.have_workload_seed, vary_p = o.seeds && !o.have_policy_seed;

	struct rk_tenant_quota *quotas = NULL;
	int n_quotas = 0;
	if (o.quota) {
		struct rk_error qerr;
		if (rk_tenant_quotas_parse(o.quota, "--quota", &quotas, &n_quotas, &qerr)) {
			fprintf(stderr, "rubick sim: %s (try `rubick sim --help`)\n", qerr.msg);
			return RK_EXIT_USAGE;
		}
	}
	/* Before the run: a typo in --out (or in SOURCE_DATE_EPOCH) must not cost the whole
	 * simulation. The report's clock is the start of the run. */
	static struct rk_cli_prov prov;
	int n_reps = o.seeds ? (int)(last - first + 1) : 1;
	if (o.out && (rk_cli_out_prepare(o.out) || rk_cli_prov_init(&prov))) {
		free(quotas);
		return RK_EXIT_FAILURE;
	}
	if (o.out && rk_cli_prov_reps(&prov, n_reps)) {
		fprintf(stderr, "rubick sim: out of memory\n");
		free(quotas);
		return RK_EXIT_FAILURE;
	}

	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	struct run_state *s = calloc(1, sizeof(*s));
	struct run_state *rep_s = o.seeds ? calloc(1, sizeof(*rep_s)) : NULL;
	struct rk_cli_seed_values sv = {0};
	if (!s || (o.seeds &&
	           (!rep_s || rk_cli_seed_values_init(&sv, n_pols, (int)(last - first + 1),
	                                                o.out != NULL)))) {
		fprintf(stderr, "rubick sim: out of memory\n");
		free(s);
		free(rep_s);
		free(quotas);
		return RK_EXIT_FAILURE;
	}
	uint64_t wseed = vary_w ? first : o.workload_seed;
	struct run_ctx ctx = {&o,
	                      pols,
	                      n_pols,
	                      &env,
	                      quotas,
	                      n_quotas,
	                      vary_p ? first : o.policy_seed,
	                      isatty(STDERR_FILENO),
	                      0};
	rc = rk_cli_coloc_load(&o.coloc, o.cluster, &env); /* before the oracle keeps env */
	if (!rc && o.seeds)
		say_run(0, last - first + 1, wseed, ctx.policy_seed);
	if (!rc)
		rc = run_once(&ctx, &o, s, &env, wseed);
	if (!rc && o.out) {
		prov.wseeds[0] = wseed;
		prov.pseeds[0] = ctx.policy_seed;
		struct rk_cli_prov_draws dr = {&s->trace, s->n_jobs,          o.poisson,
		                               o.loan.elastic_share, o.loan.n_elastic, wseed};
		rk_cli_prov_draws(&prov, &dr);
	}
	/* Repetitions: each seed's figures are kept, and its jobs' outcomes for jobs.csv
	 * under --out; its samples are not. */
	for (uint64_t k = 0; !rc && o.seeds && k <= last - first; k++) {
		if (k > 0) {
			memset(rep_s, 0, sizeof(*rep_s));
			ctx.policy_seed = vary_p ? first + k : o.policy_seed;
			uint64_t w = vary_w ? first + k : o.workload_seed;
			say_run(k, last - first + 1, w, ctx.policy_seed);
			if (o.out) {
				prov.wseeds[k] = w;
				prov.pseeds[k] = ctx.policy_seed;
			}
			rc = run_once(&ctx, &o, rep_s, &env, w);
		}
		struct run_state *from = k ? rep_s : s;
		for (int i = 0; !rc && i < n_pols; i++)
			rk_cli_seed_values_set(&sv, i, (int)k, first + k, &from->runs[i].summary,
			                       &from->results[i]);
		if (k > 0)
			run_state_fini(rep_s);
	}
	for (int i = 0; !rc && o.seeds && i < n_pols; i++)
		s->runs[i].seeds = &sv.per[i];
	if (!rc) {
		char oracle_text[4200];
		snprintf(oracle_text, sizeof(oracle_text), "%s",
			 o.oracle ? o.oracle : "measured=" RK_DEFAULT_DATA_DIR "/measured/rubick");
		static struct rk_cli_meta meta;
		fill_meta(&meta, &o, pols, n_pols, argc, argv, first, last);
		if (rk_trace_format_is_history(s->trace.format)) { /* docs/replay.md */
			double bb_h = 0, all_h = 0;
			size_t bb = rk_trace_black_box(&s->trace, &bb_h, &all_h);
			rk_cli_meta_add(&meta, "black_box_jobs", "%zu", bb);
			rk_cli_meta_add(&meta, "trace_jobs", "%zu", s->trace.n);
			rk_cli_meta_add(&meta, "black_box_gpu_hours", "%.3f", bb_h);
			rk_cli_meta_add(&meta, "trace_gpu_hours", "%.3f", all_h);
		}
		struct rk_report_meta rmeta = {
		    .version = RK_VERSION,
		    .command = meta.command,
		    .option_keys = meta.keys,
		    .option_values = meta.values,
		    .n_options = meta.n,
		    .workload_seed = wseed,
		    .policy_seed = vary_p ? first : o.policy_seed,
		};
		if (o.out) {
			rc = prov_inputs(&prov, &o, s);
			rk_cli_prov_meta(&prov, &rmeta);
		}
		struct rk_report rep = {
		    .trace = o.trace,
		    .jobs = s->n_jobs,
		    .cluster = o.cluster,
		    .oracle = oracle_text,
		    .interval_s = o.interval_s,
		    .restart_cost_s = o.restart_s,
		    .seed = wseed,
		    .runs = s->runs,
		    .n_runs = s->n_runs,
		    .normalize = o.normalize,
		    .seeds_n = o.seeds ? (int)(last - first + 1) : 0,
		    .seeds_first = first,
		    .seeds_last = last,
		    .seeds_vary = vary_w && vary_p ? "workload+policy"
		                  : vary_w         ? "workload"
		                                   : "policy",
		};
		struct rk_error err;
		if (!rc) {
			rc = o.json ? rk_report_write_json(stdout, &rep, 0, &err)
			            : rk_report_write_table(stdout, &rep, &err);
			if (rc)
				fprintf(stderr, "rubick sim: output: %s\n", err.msg);
		}
		rep.meta = &rmeta; /* stdout stays comparable across machines and paths */
		/* Lookup provenance (per GPU type) goes to summary.json and report.html only,
		 * so the stdout formats stay as scripts read them. */
		for (int i = 0; i < s->n_runs; i++)
			s->runs[i].has_oracle_stats = 1;
		if (!rc && o.out)
			rc = write_out(o.out, &rep);
		for (int i = 0; !rc && !o.json && o.loan.inference && i < s->n_runs; i++)
			rk_cli_loan_report(stdout, s->runs[i].policy, &s->loans[i]);
	}
	run_state_fini(s);
	free(s);
	free(rep_s);
	rk_cli_seed_values_fini(&sv);
	free(quotas);
	rk_cli_coloc_fini(&o.coloc);
	rk_cli_loan_fini(&o.loan);
	rk_cli_prov_fini(&prov);
	return rc ? RK_EXIT_FAILURE : RK_EXIT_OK;
}
