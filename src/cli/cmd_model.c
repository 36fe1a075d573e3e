/*
 * `rubick model`: performance-model commands.
 *   rubick model validate --profile DIR --measured FILE [--model NAME] [options]
 *   rubick model validate --traces DIR [options]
 *   rubick model fit --profile DIR [--model NAME] [--zoo DIR]
 *   rubick model profile --job CMD --model NAME --global-batch N --out DIR (model_profile.c)
 */
#include "cli/commands.h"
#include "cli/model_env.h"
#include "cli/model_profile.h"
#include "cli/model_validate.h"
#include "cli/util.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rubick model validate --profile DIR --measured FILE [--model NAME] [OPTIONS]\n"
		"       rubick model validate --traces DIR [OPTIONS]\n"
		"       rubick model fit --profile DIR [--model NAME] [--zoo DIR]\n"
		"       rubick model profile --job CMD (--model NAME | --model-spec TEXT)\n"
		"                            --global-batch N --out DIR [--validate FILE] (see\n"
		"                            rubick model profile --help)\n"
		"\n"
		"validate: fit the performance model from a profile (artifact config.csv +\n"
		"data.csv folder, or a rubick profile file, docs/profile-format.md), predict\n"
		"every row of a measured placements.csv and print MAPE, median and max APE and\n"
		"the shares within 10%% and 20%%, per model, per plan family and overall.\n"
		"--traces DIR runs every DIR/placements/<model>/placements.csv with its profile\n"
		"from DIR/perf_model_profile/.\n"
		"\n"
		"options:\n"
		"  --json                 one JSON object instead of text\n"
		"  --rows                 also print every row (text mode)\n"
		"  --train-fraction F     fit on a seeded random fraction F (0 < F < 1) of each\n"
		"                         model's measured rows, score the rest\n"
		"  --seed N               seed of that split (default 1)\n"
		"  --cpus-per-gpu N       CPU threads per GPU for rows that do not say (default 4)\n"
		"  --overlap pnorm|additive  overlap functions (default pnorm)\n"
		"  --calibrate-internode loo  fit the effective inter-node bandwidth for each\n"
		"                         model on the other models' multi-node rows, re-predict\n"
		"                         its rows with it, print MAPE before and after (strict\n"
		"                         protocol only: not with --train-fraction)\n"
		"  --env KEY=V,...        cluster constants (perf.h: nvlink_gbps, pcie_gbps,\n"
		"                         host_mem_gbps, net_gbps, nics_per_node, gpus_per_node,\n"
		"                         gpu_tflops, recompute_factor, tp_eff, grad_bytes,\n"
		"                         act_bytes); default: the calibrated A800 values\n"
		"  --zoo DIR              model zoo folder (default: RUBICK_ZOO or the bundled one)\n\n"
		"exit 1 also when a --profile, --measured or --traces path does not exist; 4 when\n"
		"the model (--model, or the profile folder's name) is not in the zoo\n" RK_EXIT_HELP);
}

struct args {
	const char *profile, *measured, *model, *traces, *zoo;
	int json, rows;
	struct rk_validate_opts o;
};

/* The options that take a value (parse_args), so a last bare word is named for what it is. */
static int takes_value(const char *f)
{
	static const char *const flags[] = {"--profile", "--measured", "--model", "--traces",
	                                    "--zoo", "--train-fraction", "--seed", "--cpus-per-gpu",
	                                    "--env", "--overlap", "--calibrate-internode"};
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (!strcmp(f, flags[i]))
			return 1;
	return 0;
}

/*
 * An input the command line names must exist before anything is looked up
 * in it (a missing --profile is a missing input, exit 1, not an unknown
 * model). 0, or RK_EXIT_FAILURE after printing "rubick model: FLAG: PATH: why".
 */
static int need_path(const char *flag, const char *path)
{
	struct stat st;
	if (!path || !stat(path, &st))
		return 0;
	fprintf(stderr, "rubick model: %s: %s: %s\n", flag, path, strerror(errno));
	return RK_EXIT_FAILURE;
}

static int parse_args(int argc, char **argv, struct args *a)
{
	for (int i = 2; i < argc; i++) {
		const char *f = argv[i];
		if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
			usage(stdout);
			return 1;
		}
		if (!strcmp(f, "--json")) {
			a->json = 1;
			continue;
		}
		if (!strcmp(f, "--rows")) {
			a->rows = 1;
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "rubick model: %s: %s (see --help)\n", f,
			        takes_value(f) ? "missing value" : "unknown option");
			return -1;
		}
		const char *val = argv[++i];
		long l;
		if (!strcmp(f, "--profile"))
			a->profile = val;
		else if (!strcmp(f, "--measured"))
			a->measured = val;
		else if (!strcmp(f, "--model"))
			a->model = val;
		else if (!strcmp(f, "--traces"))
			a->traces = val;
		else if (!strcmp(f, "--zoo"))
			a->zoo = val;
		else if (!strcmp(f, "--train-fraction")) {
			if (rk_cli_model_parse_double(f, val, 0, 1, &a->o.train_fraction) < 0)
				return -1;
		} else if (!strcmp(f, "--seed")) {
			if (rk_cli_model_parse_long(f, val, 0, 2147483647L, &l) < 0)
				return -1;
			a->o.seed = (uint64_t)l;
		} else if (!strcmp(f, "--cpus-per-gpu")) {
			if (rk_cli_model_parse_long(f, val, 1, 1024, &l) < 0)
				return -1;
			a->o.cpus_per_gpu = (int)l;
		} else if (!strcmp(f, "--env")) {
			if (rk_cli_model_parse_env(val, &a->o.env) < 0)
				return -1;
		} else if (!strcmp(f, "--calibrate-internode")) {
			if (strcmp(val, "loo")) {
				fprintf(stderr,
					"rubick model: --calibrate-internode: '%s' must be loo "
					"(leave one model out)\n",
					val);
				return -1;
			}
			a->o.calibrate_loo = 1;
		} else if (!strcmp(f, "--overlap")) {
			if (!strcmp(val, "pnorm"))
				a->o.env.overlap = RK_OVERLAP_PNORM;
			else if (!strcmp(val, "additive"))
				a->o.env.overlap = RK_OVERLAP_ADDITIVE;
			else {
				fprintf(stderr,
					"rubick model: --overlap: '%s' must be pnorm or additive\n",
					val);
				return -1;
			}
		} else {
			fprintf(stderr, "rubick model: unknown option '%s' (see --help)\n", f);
			return -1;
		}
	}
	return 0;
}

static void print_rows(const struct rk_validate *v, FILE *out)
{
	fprintf(out, "\nrows:\n");
	for (int i = 0; i < v->n_rows; i++) {
		const struct rk_validate_row *r = &v->rows[i];
		if (r->skipped)
			continue;
		fprintf(out, "  %-14s %4d %-16s %-10s %-48s %9.1f %9.1f %6.1f%%%s\n", r->dataset,
			r->line, r->plan, r->placement, r->canon, r->meas_ms, r->pred_ms,
			100 * r->ape, r->train ? " (train)" : "");
	}
}

static int run_validate(int argc, char **argv, int fit_only)
{
	struct args a = {0};
	rk_validate_opts_default(&a.o);
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc > 0 ? RK_EXIT_OK : RK_EXIT_USAGE;
	if (fit_only) {
		if (!a.profile || a.measured || a.traces) {
			fprintf(stderr, "rubick model fit: give --profile DIR (see --help)\n");
			return RK_EXIT_USAGE;
		}
	} else if (a.traces ? (a.profile || a.measured || a.model) : !a.measured) {
		fprintf(stderr, "rubick model validate: give --measured FILE (with --profile DIR "
				"and/or --train-fraction F) or --traces DIR alone (see --help)\n");
		return RK_EXIT_USAGE;
	} else if (!a.traces && !a.profile && a.o.train_fraction <= 0) {
		fprintf(stderr, "rubick model validate: --profile: needed unless --train-fraction "
				"is given\n");
		return RK_EXIT_USAGE;
	}
	if (a.o.calibrate_loo && (fit_only || a.o.train_fraction > 0)) {
		fprintf(stderr, "rubick model: --calibrate-internode: only for validate under the "
				"strict protocol (not with --train-fraction, whose class scales would "
				"absorb the inter-node error; docs/perf-model.md)\n");
		return RK_EXIT_USAGE;
	}
	if (need_path("--profile", a.profile) || need_path("--measured", a.measured) ||
	    need_path("--traces", a.traces))
		return RK_EXIT_FAILURE;
	struct rk_zoo zoo;
	struct rk_error err = {0};
	rk_zoo_init(&zoo);
	const char *zdir = rk_cli_zoo_dir(a.zoo);
	if ((rc = rk_cli_zoo_load(zdir, &zoo, &err)) < 0) {
		fprintf(stderr, "rubick model: %s\n", err.msg);
		rk_zoo_fini(&zoo);
		return RK_EXIT_FAILURE;
	}
	struct rk_validate v = {0};
	if (fit_only) {
		/* a measured-free fit: validate machinery with no rows */
		char name[128];
		const char *m = a.model;
		if (!m) {
			const char *s = strrchr(a.profile, '/');
			snprintf(name, sizeof(name), "%s", s && s[1] ? s + 1 : a.profile);
			m = name;
		}
		const struct rk_model *model = rk_zoo_find(&zoo, m);
		if (!model) {
			fprintf(stderr, "rubick model fit: --model: '%s' is not in the zoo %s\n", m,
				zdir);
			rk_zoo_fini(&zoo);
			return RK_EXIT_NOTFOUND;
		}
		rc = rk_validate_fit_only(&v, &zoo, a.profile, model, &a.o, &err);
	} else if (a.traces) {
		rc = rk_validate_traces(&v, &zoo, a.traces, &a.o, &err);
	} else {
		rc = rk_validate_dataset(&v, &zoo, a.profile, a.measured, a.model, &a.o, &err);
	}
	if (rc >= 0 && a.o.calibrate_loo)
		rc = rk_validate_calibrate_loo(&v, &a.o, &err);
	if (rc < 0) {
		fprintf(stderr, "rubick model: %s\n", err.msg);
		rk_validate_fini(&v);
		rk_zoo_fini(&zoo);
		return rc == RK_ENOTFOUND ? RK_EXIT_NOTFOUND : RK_EXIT_FAILURE;
	}
	if (a.json)
		rk_validate_print_json(&v, stdout);
	else {
		rk_validate_print_text(&v, stdout);
		if (a.rows)
			print_rows(&v, stdout);
	}
	rk_validate_fini(&v);
	rk_zoo_fini(&zoo);
	return RK_EXIT_OK;
}

int rk_cmd_model(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? RK_EXIT_USAGE : RK_EXIT_OK;
	}
	if (!strcmp(argv[1], "validate"))
		return run_validate(argc, argv, 0);
	if (!strcmp(argv[1], "fit"))
		return run_validate(argc, argv, 1);
	if (!strcmp(argv[1], "profile"))
		return rk_cmd_model_profile(argc, argv);
	fprintf(stderr, "rubick model: unknown subcommand '%s' (validate, fit, profile)\n",
		argv[1]);
	return RK_EXIT_USAGE;
}
