/*
 * `rubick sim`'s command line: the help text and the option parser
 * (sim_opts.h); cmd_sim.c runs what they describe.
 */
#include "cli/sim_opts.h"

#include "cli/commands.h"
#include "cli/sim_native.h"
#include "cli/sim_policies.h"
#include "cli/sim_seeds.h"
#include "cli/trace_arrivals.h"
#include "cli/util.h"

#include "rubick/gpu.h"
#include "rubick/policy.h"
#include "rubick/sim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rk_cli_sim_help(FILE *f)
{
	fprintf(
	    f,
	    "usage: rubick sim --trace FILE --cluster SPEC|FILE --policy NAME[,NAME...]\n"
	    "                  [--format auto|NAME] [--oracle measured=DIR|model]\n"
	    "                  [--interval SECONDS] [--restart-cost SECONDS[,MODEL=SECONDS...]]\n"
	    "                  [--seed N] [--workload-seed N] [--policy-seed N] [--seeds A-B]\n"
	    "                  [--load F] [--poisson RATE|mean]\n"
	    "                  [--json] [--out DIR] [--normalize POLICY] [--skip-bad] [--check]\n"
	    "                  [--horizon SECONDS] [--policy-options K=V,...] [--zoo DIR]\n"
	    "                  [--no-timing] [--quota TENANT:GPUS[/TENANT:GPUS...]] [--refit]\n"
	    "                  [--trace-gpu TYPE|cluster] [--job-length trace|sia-target]\n"
	    "                  [--first-start free|paid] [--gpu-range free|request]\n\n"
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
	    "                      duration draws, --poisson, --elastic-share (default 0;\n"
	    "                      summary.json's meta.workload_seed_draws says which)\n"
	    "  --policy-seed N     what the policies' randomness uses (default 0)\n"
	    "  --seeds A-B         run every policy once per seed A..B (both seeds, except one\n"
	    "                      pinned by --workload-seed/--policy-seed) and report mean and\n"
	    "                      95%% Student t interval of avg JCT, p99 and makespan\n"
	    "  --load F            inter-arrival times divided by F (as `rubick trace --load`)\n"
	    "  --poisson R         Poisson arrivals, R jobs/h or 'mean' (workload seed)\n"
	    "  --json              print the summary as JSON instead of a table\n"
	    "  --out DIR           write jobs.csv, samples.csv, plans.csv (every plan each job\n"
	    "                      was given), summary.json, report.html and the figures as\n"
	    "                      fig-NAME.svg and fig-NAME.pdf (created with its parents\n"
	    "                      and checked writable before the run)\n"
	    "  --normalize P       the report's bars relative to policy P (default the first)\n"
	    "  --skip-bad          skip and count bad trace lines and jobs instead of failing\n"
	    "  --check             verify the invariants after every event (slow)\n"
	    "  --horizon S         stop the simulated clock at S seconds of trace time\n"
	    "  --refit             refit each running job's model from the iteration times it\n"
	    "                      is observed to run at (rubickd's rule); policies decide with "
	    "it\n"
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
	    "  --gpu-range R       GPUs a job without a range in the trace accepts, which every\n"
	    "                      policy honours: free (default: 1 to the cluster's GPUs, the\n"
	    "                      free reconfiguration of the Rubick and Sia papers) or request\n"
	    "                      (exactly its request); --elastic-share overrides both\n"
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
	fprintf(f,
	        "\nComma lists (--policy, --policy-options, --restart-cost, --cluster keys,\n"
	        "--inference diurnal:...) refuse an empty item anywhere, naming its position.\n"
	        "Warnings go to stderr, one line each, once per run: a policy that cannot act as\n"
	        "named on this input (sjf-bsbf/sjf-ffs without --sharing on, antman on a trace\n"
	        "without guaranteed jobs), a Sia/Pollux workload without --job-length sia-target.\n"
	        "With --out, one line on stderr says where the files went.\n\n"
	        "Here exit 1 means an input (trace, cluster, zoo, oracle, --inference,\n"
	        "--throughputs; a --cluster or --inference spec is read as one) is missing,\n"
	        "unreadable, malformed or has no job, or the run or its outputs failed; 2 a bad\n"
	        "command line (unknown option, bad value, unknown policy or policy option, empty\n"
	        "item in --policy, --policy-options or --restart-cost). docs/sim.md, \"Exit\n"
	        "codes\".\n" RK_EXIT_HELP);
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

int rk_cli_sim_usage_error(const char *flag, const char *what)
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
	if (end == v || *end || errno || !isfinite(x) || x < 0 || (positive && x <= 0) || x > 1e9)
		return rk_cli_sim_usage_error(flag, positive ? "expected seconds > 0"
		                                             : "expected seconds >= 0");
	*out = x;
	return 0;
}

static int parse_restart(struct opts *o, const char *v)
{
	char buf[1024];
	if (strlen(v) >= sizeof(buf))
		return rk_cli_sim_usage_error("--restart-cost", "too long");
	snprintf(buf, sizeof(buf), "%s", v);
	if (rk_cli_list_check("rubick sim", "--restart-cost", v))
		return RK_EXIT_USAGE;
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
			return rk_cli_sim_usage_error("--restart-cost",
			                              "expected SECONDS then MODEL=SECONDS items");
		if (o->n_overrides == MAX_OVERRIDES)
			return rk_cli_sim_usage_error("--restart-cost",
			                              "too many MODEL=SECONDS items");
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

int rk_cli_sim_parse(int argc, char **argv, struct opts *o)
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
			rk_cli_sim_help(stdout);
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
		else if (!strcmp(a, "--gpu-range"))
			str = &o->gpu_range;
		else if (strcmp(a, "--interval") && strcmp(a, "--restart-cost") &&
		         strcmp(a, "--seed") && strcmp(a, "--horizon") &&
		         strcmp(a, "--workload-seed") && strcmp(a, "--policy-seed") &&
		         strcmp(a, "--load") && strcmp(a, "--poisson"))
			return rk_cli_sim_usage_error(a, "unknown option");
		if (i + 1 >= argc)
			return rk_cli_sim_usage_error(a, "needs a value");
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
				rc = rk_cli_sim_usage_error(a, "expected a non-negative integer");
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
		return rk_cli_sim_usage_error("--trace", "required");
	if (!o->cluster)
		return rk_cli_sim_usage_error("--cluster", "required");
	if (!o->policies)
		return rk_cli_sim_usage_error("--policy", "required");
	if (o->policy_options && rk_cli_list_check("rubick sim", "--policy-options",
	                                           o->policy_options))
		return RK_EXIT_USAGE;
	if (o->interval_s * 1000.0 < 1)
		return rk_cli_sim_usage_error("--interval", "must be at least 1 ms");
	/* --seed sets whichever of the two is not given on its own. */
	if (!o->have_workload_seed)
		o->workload_seed = o->seed;
	if (!o->have_policy_seed)
		o->policy_seed = o->seed;
	if (o->seeds && o->have_seed)
		return rk_cli_sim_usage_error("--seeds",
		                              "cannot be combined with --seed (pin one seed with "
		                              "--workload-seed or --policy-seed)");
	if (o->seeds && o->have_workload_seed && o->have_policy_seed)
		return rk_cli_sim_usage_error("--seeds",
		                              "varies nothing when both --workload-seed and "
		                              "--policy-seed are given");
	if (o->job_length && strcmp(o->job_length, "trace") && strcmp(o->job_length, "sia-target"))
		return rk_cli_sim_usage_error("--job-length", "expected trace or sia-target");
	if (o->first_start && strcmp(o->first_start, "free") && strcmp(o->first_start, "paid"))
		return rk_cli_sim_usage_error("--first-start", "expected free or paid");
	if (o->gpu_range && strcmp(o->gpu_range, "free") && strcmp(o->gpu_range, "request"))
		return rk_cli_sim_usage_error("--gpu-range", "expected free or request");
	if (o->trace_gpu && strcmp(o->trace_gpu, "cluster") && !rk_gpu_find(o->trace_gpu)) {
		char known[256];
		rk_gpu_list(known, sizeof(known));
		fprintf(stderr,
		        "rubick sim: --trace-gpu: unknown GPU type '%s' (known: %s, or "
		        "cluster)\n",
		        o->trace_gpu, known);
		return RK_EXIT_USAGE;
	}
	return 0;
}
