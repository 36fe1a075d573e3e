/*
 * `rubick sim`: replay a trace on a cluster under one or more policies and
 * print the comparison (table or JSON), optionally writing the per-job CSV,
 * time series, summary JSON and HTML report. Reads files; everything else is
 * the library (trace readers, oracle, engine, metrics, report writers).
 */
#include "cli/commands.h"
#include "cli/sim_coloc.h"
#include "cli/sim_native.h"
#include "cli/sim_loan.h"
#include "cli/sim_policies.h"
#include "cli/sim_seeds.h"
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
#define MAX_OVERRIDES 32

struct opts {
	const char *trace, *format, *cluster, *policies, *oracle, *out, *zoo, *policy_options;
	const char *quota; /* --quota TENANT:GPUS[/...] */
	const char *throughputs; /* --throughputs (sim_native.h); NULL = auto */
	const char *trace_gpu; /* --trace-gpu TYPE|cluster; NULL = the trace format's own type */
	const char *job_length; /* --job-length trace|sia-target; NULL = trace */
	const char *first_start; /* --first-start free|paid; NULL = free */
	double interval_s, restart_s, horizon_s;
	struct rk_sim_restart_override overrides[MAX_OVERRIDES];
	int n_overrides;
	const char *seeds, *normalize; /* --seeds A-B, --normalize POLICY */
	double load;                   /* --load F (0 = the trace's arrivals) */
	const char *poisson;           /* --poisson RATE|mean */
	uint64_t seed, workload_seed, policy_seed;
	int have_seed, have_workload_seed, have_policy_seed;
	int json, skip_bad, check, no_timing, refit;
	struct rk_cli_coloc coloc; /* --sharing, --contention, ... (sim_coloc.h) */
	struct rk_cli_loan loan;   /* --inference, --reclaim-deadline, --elastic-share (sim_loan.h) */
};

static void help(FILE *f)
{
	fprintf(f,
		"usage: rubick sim --trace FILE --cluster SPEC|FILE --policy NAME[,NAME...]\n"
		"                  [--format auto|NAME] [--oracle measured=DIR|model]\n"
		"                  [--interval SECONDS] [--restart-cost SECONDS[,MODEL=SECONDS...]]\n"
		"                  [--seed N] [--workload-seed N] [--policy-seed N] [--seeds A-B]\n"
		"                  [--load F] [--poisson RATE|mean]\n"
		"                  [--json] [--out DIR] [--normalize POLICY] [--skip-bad] [--check]\n"
		"                  [--horizon SECONDS] [--policy-options K=V,...] [--zoo DIR]\n"
		"                  [--no-timing] [--quota TENANT:GPUS[/TENANT:GPUS...]] [--refit]\n"
		"                  [--trace-gpu TYPE|cluster] [--job-length trace|sia-target]\n"
		"                  [--first-start free|paid]\n\n"
		"Replay a job trace on a simulated cluster under each policy and compare them.\n"
		"Jobs advance with the throughput oracle (measured tables, or the analytic model),\n"
		"never with the policy's own model.\n\n"
		"  --trace FILE        job trace; every format below is detected from its header\n"
		"  --format NAME       force a trace format (default auto)\n"
		"  --cluster SPEC      NODESxGPUS[:TYPE][,cpus=N][,mem=SIZE][,nvlink=GBPS][,net=GBPS]\n"
		"                      [,gpumem=SIZE][,pool=training|loaned], '+'-joined groups, or a\n"
		"                      file with one group per line; e.g. the Rubick testbed\n"
		"                      8x8:a800,cpus=96,mem=1600G,nvlink=400,net=100\n"
		"  --policy LIST       comma-separated policies, run one after the other; 'all' =\n"
		"                      every registered policy; per-policy options: NAME:KEY=VALUE\n"
		"                      (one key) or 'NAME[KEY=VALUE,...]', e.g. sia:p=-0.5,sia:p=1;\n"
		"                      such a run is named NAME[KEY=VALUE,...] in every output\n"
		"  --policy-options O  KEY=VALUE,... for every policy (an item's own keys win)\n"
		"  --oracle SRC        measured=DIR (folders of placements.csv tables, with the\n"
		"                      analytic model where no table answers) or model;\n"
		"                      default measured=%s/measured/rubick\n"
		"  --interval S        scheduling round (default 60 s); rounds also run at every\n"
		"                      arrival and completion\n"
		"  --restart-cost S    delay of every reconfiguration and resume (default 260 s),\n"
		"                      then MODEL=S overrides, e.g. 260,llama30=600\n"
		"  --seed N            shorthand for --workload-seed N --policy-seed N\n"
		"  --workload-seed N   what draws the workload: the trace's model mapping and\n"
		"                      duration draws, --elastic-share (default 0)\n"
		"  --policy-seed N     what the policies' randomness uses (default 0)\n"
		"  --seeds A-B         run every policy once per seed A..B (both seeds, except one\n"
		"                      pinned by --workload-seed/--policy-seed) and report mean and\n"
		"                      95%% Student t interval of avg JCT, p99 and makespan\n"
		"  --load F            inter-arrival times divided by F (as `rubick trace --load`)\n"
		"  --poisson R         Poisson arrivals, R jobs/h or 'mean' (workload seed)\n"
		"  --json              print the summary as JSON instead of a table\n"
		"  --out DIR           write jobs.csv, samples.csv, summary.json and report.html\n"
		"                      (created and checked writable before the run)\n"
		"  --normalize P       the report's bars relative to policy P (default the first)\n"
		"  --skip-bad          skip and count bad trace lines and jobs instead of failing\n"
		"  --check             verify the invariants after every event (slow)\n"
		"  --horizon S         stop the simulated clock at S seconds of trace time\n"
		"  --refit             refit each running job's model from the iteration times it\n"
		"                      is observed to run at (rubickd's rule); policies decide with it\n"
		"  --no-timing         report wall_s as 0, so that output is byte-identical\n"
		"  --quota Q           guaranteed-GPU quotas per tenant, e.g. a:32/b:16: a guaranteed\n"
		"                      job arriving over its tenant's quota is rejected (never runs);\n"
		"                      jobs without a tenant in the trace belong to 'default'\n"
		"  --trace-gpu TYPE    GPU type the trace's run times were measured on (default: the\n"
		"                      format's own, e.g. t4 for Sia, v100 for Philly-derived traces;\n"
		"                      docs/oracle.md); 'cluster' = the type each job runs on\n"
		"  --job-length L      trace (default: the trace's run time or iterations) or\n"
		"                      sia-target: a job whose trace gives its application's batch\n"
		"                      runs the iterations that batch needs to reach the\n"
		"                      application's validation target (Sia/Pollux validation-*.csv\n"
		"                      in the --oracle folder)\n"
		"  --first-start F     free (default: a first start costs nothing, the trace's\n"
		"                      length includes start-up) or paid: it waits the restart\n"
		"                      delay too, as Pollux's and Sia's simulators charge it\n"
		"%s%s%s\n"
		"policies:\n",
		RK_DEFAULT_DATA_DIR, rk_cli_coloc_help, rk_cli_loan_help, rk_cli_native_help);
	int n;
	const struct rk_policy_ops *const *all = rk_policy_list(&n);
	for (int i = 0; i < n; i++)
		fprintf(f, "  %-12s %s\n", all[i]->name, all[i]->summary);
	fprintf(f, "\ntrace formats:\n");
	for (const char *const *fm = rk_trace_formats(); *fm; fm++) {
		const char *s = rk_trace_format_summary(*fm);
		fprintf(f, "  %-12s %s\n", *fm, s ? s : "");
	}
}

/* Split a comma list in place: the next item, or NULL at the end. */
static char *next_item(char **cursor)
{
	char *p = *cursor;
	if (!p)
		return NULL;
	char *comma = strchr(p, ',');
	if (comma) {
		*comma = '\0';
		*cursor = comma + 1;
	} else {
		*cursor = NULL;
	}
	return p;
}

static int usage_error(const char *flag, const char *what)
{
	fprintf(stderr, "rubick sim: %s: %s (try `rubick sim --help`)\n", flag, what);
	return RK_EXIT_USAGE;
}

/* A non-negative number of seconds, at most a year of simulated time per step. */
static int parse_seconds(const char *flag, const char *v, int positive, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (end == v || *end || errno || !isfinite(x) || x < 0 || (positive && x <= 0) ||
	    x > 1e9)
		return usage_error(flag, positive ? "expected seconds > 0" : "expected seconds >= 0");
	*out = x;
	return 0;
}

static int parse_restart(struct opts *o, const char *v)
{
	char buf[1024];
	if (strlen(v) >= sizeof(buf))
		return usage_error("--restart-cost", "too long");
	snprintf(buf, sizeof(buf), "%s", v);
	char *cur = buf;
	int first = 1;
	for (char *tok = next_item(&cur); tok; tok = next_item(&cur)) {
		char *eq = strchr(tok, '=');
		if (first && !eq) {
			if (parse_seconds("--restart-cost", tok, 0, &o->restart_s))
				return RK_EXIT_USAGE;
			first = 0;
			continue;
		}
		first = 0;
		if (!eq || eq == tok || eq - tok >= RK_MODEL_NAME_MAX)
			return usage_error("--restart-cost", "expected SECONDS then MODEL=SECONDS items");
		if (o->n_overrides == MAX_OVERRIDES)
			return usage_error("--restart-cost", "too many MODEL=SECONDS items");
		struct rk_sim_restart_override *ov = &o->overrides[o->n_overrides++];
		memcpy(ov->model, tok, (size_t)(eq - tok));
		ov->model[eq - tok] = '\0';
		double s;
		if (parse_seconds("--restart-cost", eq + 1, 0, &s))
			return RK_EXIT_USAGE;
		ov->restart_ms = (int64_t)llround(s * 1000.0);
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->format = "auto";
	o->interval_s = RK_SIM_DEFAULT_INTERVAL_MS / 1000.0;
	o->restart_s = RK_SIM_DEFAULT_RESTART_MS / 1000.0;
	rk_cli_coloc_init(&o->coloc);
	rk_cli_loan_init(&o->loan);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **str = NULL;
		int used = rk_cli_coloc_arg(&o->coloc, argc, argv, &i);
		if (!used)
			used = rk_cli_loan_arg(&o->loan, argc, argv, &i);
		if (!used)
			used = rk_cli_native_arg("rubick sim", &o->throughputs, argc, argv, &i);
		if (used == 1)
			continue;
		if (used)
			return used;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			help(stdout);
			return -1;
		}
		if (!strcmp(a, "--json")) {
			o->json = 1;
			continue;
		}
		if (!strcmp(a, "--skip-bad")) {
			o->skip_bad = 1;
			continue;
		}
		if (!strcmp(a, "--check")) {
			o->check = 1;
			continue;
		}
		if (!strcmp(a, "--refit")) {
			o->refit = 1;
			continue;
		}
		if (!strcmp(a, "--no-timing")) {
			o->no_timing = 1;
			continue;
		}
		if (!strcmp(a, "--trace"))
			str = &o->trace;
		else if (!strcmp(a, "--format"))
			str = &o->format;
		else if (!strcmp(a, "--cluster"))
			str = &o->cluster;
		else if (!strcmp(a, "--policy"))
			str = &o->policies;
		else if (!strcmp(a, "--oracle"))
			str = &o->oracle;
		else if (!strcmp(a, "--out"))
			str = &o->out;
		else if (!strcmp(a, "--zoo"))
			str = &o->zoo;
		else if (!strcmp(a, "--policy-options"))
			str = &o->policy_options;
		else if (!strcmp(a, "--quota"))
			str = &o->quota;
		else if (!strcmp(a, "--seeds"))
			str = &o->seeds;
		else if (!strcmp(a, "--normalize"))
			str = &o->normalize;
		else if (!strcmp(a, "--trace-gpu"))
			str = &o->trace_gpu;
		else if (!strcmp(a, "--job-length"))
			str = &o->job_length;
		else if (!strcmp(a, "--first-start"))
			str = &o->first_start;
		else if (strcmp(a, "--interval") && strcmp(a, "--restart-cost") &&
		         strcmp(a, "--seed") && strcmp(a, "--horizon") &&
		         strcmp(a, "--workload-seed") && strcmp(a, "--policy-seed") &&
		         strcmp(a, "--load") && strcmp(a, "--poisson"))
			return usage_error(a, "unknown option");
		if (i + 1 >= argc)
			return usage_error(a, "needs a value");
		const char *v = argv[++i];
		if (str) {
			*str = v;
			continue;
		}
		int rc = 0;
		if (!strcmp(a, "--interval"))
			rc = parse_seconds(a, v, 1, &o->interval_s);
		else if (!strcmp(a, "--horizon"))
			rc = parse_seconds(a, v, 1, &o->horizon_s);
		else if (!strcmp(a, "--restart-cost"))
			rc = parse_restart(o, v);
		else if (!strcmp(a, "--load") || !strcmp(a, "--poisson"))
			rc = rk_cli_trace_arrivals_arg("rubick sim", a, v, &o->load, &o->poisson);
		else {
			char *end;
			errno = 0;
			unsigned long long s = strtoull(v, &end, 10);
			if (end == v || *end || errno || v[0] == '-')
				rc = usage_error(a, "expected a non-negative integer");
			int w = !strcmp(a, "--workload-seed"), p = !strcmp(a, "--policy-seed");
			uint64_t *dst = w ? &o->workload_seed : p ? &o->policy_seed : &o->seed;
			int *have = w   ? &o->have_workload_seed
			            : p ? &o->have_policy_seed
			                : &o->have_seed;
			*dst = (uint64_t)s;
			*have = 1;
		}
		if (rc)
			return rc;
	}
	if (!o->trace)
		return usage_error("--trace", "required");
	if (!o->cluster)
		return usage_error("--cluster", "required");
	if (!o->policies)
		return usage_error("--policy", "required");
	if (o->interval_s * 1000.0 < 1)
		return usage_error("--interval", "must be at least 1 ms");
	/* --seed sets whichever of the two is not given on its own. */
	if (!o->have_workload_seed)
		o->workload_seed = o->seed;
	if (!o->have_policy_seed)
		o->policy_seed = o->seed;
	if (o->seeds && o->have_seed)
		return usage_error("--seeds", "cannot be combined with --seed (pin one seed with "
		                              "--workload-seed or --policy-seed)");
	if (o->seeds && o->have_workload_seed && o->have_policy_seed)
		return usage_error("--seeds", "varies nothing when both --workload-seed and "
		                              "--policy-seed are given");
	if (o->job_length && strcmp(o->job_length, "trace") && strcmp(o->job_length, "sia-target"))
		return usage_error("--job-length", "expected trace or sia-target");
	if (o->first_start && strcmp(o->first_start, "free") && strcmp(o->first_start, "paid"))
		return usage_error("--first-start", "expected free or paid");
	if (o->trace_gpu && strcmp(o->trace_gpu, "cluster") && !rk_gpu_find(o->trace_gpu)) {
		char known[256];
		rk_gpu_list(known, sizeof(known));
		fprintf(stderr, "rubick sim: --trace-gpu: unknown GPU type '%s' (known: %s, or "
			"cluster)\n", o->trace_gpu, known);
		return RK_EXIT_USAGE;
	}
	return 0;
}

static int load_oracle(const char *arg, const struct rk_perf_env *env, struct rk_oracle **o)
{
	struct rk_error err;
	char def[4096];
	int rc;
	if (arg && !strcmp(arg, "model")) {
		rc = rk_oracle_create_model(o, env, &err);
	} else {
		const char *dir = NULL;
		if (!arg) {
			snprintf(def, sizeof(def), "%s/measured/rubick", RK_DEFAULT_DATA_DIR);
			dir = def;
		} else if (!strncmp(arg, "measured=", 9) && arg[9]) {
			dir = arg + 9;
		} else {
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
		rc = write_file(dir, "summary.json", rep, write_json_pretty);
	if (!rc)
		rc = write_file(dir, "report.html", rep, rk_report_write_html);
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

/* summary.json's and the report's "meta": every option with its effective value. */
static void fill_meta(struct rk_cli_meta *m, const struct opts *o, const struct rk_cli_policy *pols,
                      int n_pols, int argc, char **argv)
{
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
	rk_cli_meta_add(m, "workload_seed", "%llu", (unsigned long long)o->workload_seed);
	rk_cli_meta_add(m, "policy_seed", "%llu", (unsigned long long)o->policy_seed);
	rk_cli_meta_add(m, "seeds", "%s", o->seeds ? o->seeds : "");
	rk_cli_meta_add(m, "normalize", "%s", o->normalize ? o->normalize : pols[0].name);
	rk_cli_meta_add(m, "quota", "%s", o->quota ? o->quota : "");
	rk_cli_meta_add(m, "skip_bad", "%d", o->skip_bad);
	rk_cli_meta_add(m, "check", "%d", o->check);
	if (o->refit) /* only when on: earlier outputs stay byte-identical */
		rk_cli_meta_add(m, "refit", "%d", o->refit);
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
	int rc = parse_args(argc, argv, &o);
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
		return usage_error("--normalize", "not one of the --policy names (e.g. sia[p=1])");
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
	/* Before the run: a typo in --out must not cost the whole simulation. */
	if (o.out && rk_cli_out_prepare(o.out)) {
		free(quotas);
		return RK_EXIT_FAILURE;
	}

	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	struct run_state *s = calloc(1, sizeof(*s));
	struct run_state *rep_s = o.seeds ? calloc(1, sizeof(*rep_s)) : NULL;
	struct rk_cli_seed_values sv = {0};
	if (!s || (o.seeds &&
	           (!rep_s || rk_cli_seed_values_init(&sv, n_pols, (int)(last - first + 1))))) {
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
	                      isatty(STDERR_FILENO)};
	rc = rk_cli_coloc_load(&o.coloc, o.cluster, &env); /* before the oracle keeps env */
	if (!rc && o.seeds)
		say_run(0, last - first + 1, wseed, ctx.policy_seed);
	if (!rc)
		rc = run_once(&ctx, &o, s, &env, wseed);
	/* Repetitions: each seed's figures are kept, its jobs and samples are not. */
	for (uint64_t k = 0; !rc && o.seeds && k <= last - first; k++) {
		if (k > 0) {
			memset(rep_s, 0, sizeof(*rep_s));
			ctx.policy_seed = vary_p ? first + k : o.policy_seed;
			uint64_t w = vary_w ? first + k : o.workload_seed;
			say_run(k, last - first + 1, w, ctx.policy_seed);
			rc = run_once(&ctx, &o, rep_s, &env, w);
		}
		const struct run_state *from = k ? rep_s : s;
		for (int i = 0; !rc && i < n_pols; i++)
			rk_cli_seed_values_set(&sv, i, (int)k, &from->runs[i].summary);
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
		fill_meta(&meta, &o, pols, n_pols, argc, argv);
		struct rk_report_meta rmeta = {
		    .version = RK_VERSION,
		    .command = meta.command,
		    .option_keys = meta.keys,
		    .option_values = meta.values,
		    .n_options = meta.n,
		    .workload_seed = wseed,
		    .policy_seed = vary_p ? first : o.policy_seed,
		};
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
		rc = o.json ? rk_report_write_json(stdout, &rep, 0, &err)
			    : rk_report_write_table(stdout, &rep, &err);
		if (rc)
			fprintf(stderr, "rubick sim: output: %s\n", err.msg);
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
	return rc ? RK_EXIT_FAILURE : RK_EXIT_OK;
}
