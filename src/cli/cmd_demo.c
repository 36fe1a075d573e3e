/*
 * `rubick demo`: the sensitivity curves of every bundled model, in one short
 * table — the README's main job until the simulator comparison lands.
 */
#include "cli/commands.h"
#include "cli/whitebox.h"
#include "rubick/curve.h"
#include "rubick/plan.h"

#include <stdio.h>
#include <string.h>

static const int demo_gpus[] = {1, 2, 4, 8, 16, 32, 64};
#define N_DEMO ((int)(sizeof(demo_gpus) / sizeof(demo_gpus[0])))

static void usage(FILE *out)
{
	fprintf(out, "usage: rubick demo [--zoo DIR]\n\n"
		     "Print the sensitivity curve of every model in the zoo: predicted\n"
		     "throughput at 1..64 GPUs (8 per node, 80 GB, 8 CPU threads per GPU) with\n"
		     "the fewest GPUs reaching it within 1%%, and each model's best plan.\n"
		     "`rubick curve --model NAME` gives one model in full.\n\n" RK_EXIT_HELP);
}

int rk_cmd_demo(int argc, char **argv)
{
	const char *zoo_dir = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return RK_EXIT_OK;
		}
		if (!strcmp(argv[i], "--zoo") && i + 1 < argc) {
			zoo_dir = argv[++i];
			continue;
		}
		fprintf(stderr, "rubick demo: %s: %s (see --help)\n", argv[i],
			strcmp(argv[i], "--zoo") ? "unknown option" : "missing value");
		return RK_EXIT_USAGE;
	}
	struct rk_zoo zoo;
	int rc = rk_wb_zoo("demo", zoo_dir, &zoo);
	if (rc)
		return rc;
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	struct rk_curve_opts o;
	rk_curve_opts_default(&env, &o);
	const int ci = o.n_cpus - 1;

	printf("Sensitivity curves (docs/references.md §1.6): predicted samples/s at G GPUs on\n"
	       "80 GB A800s, %d per node, %d CPU threads per GPU; [n] = fewest GPUs reaching\n"
	       "it within 1%%; '-' = no plan fits.\n\n",
	       o.node_gpus, o.cpus_per_gpu[ci]);
	printf("%-8s %5s %-7s", "model", "batch", "params");
	for (int i = 0; i < N_DEMO; i++) {
		char h[16];
		snprintf(h, sizeof(h), "G=%d", demo_gpus[i]);
		printf(" %12s", h);
	}
	printf("\n");
	char best[64][160];
	size_t n_best = 0;
	for (size_t mi = 0; mi < zoo.n_models; mi++) {
		const struct rk_model *m = &zoo.models[mi];
		struct rk_perf_params k;
		int fitted = rk_wb_params(m, &env, &k);
		struct rk_curve c;
		struct rk_error err;
		if (rk_curve_build(m, &k, &env, m->global_batch, &o, &c, &err)) {
			fprintf(stderr, "rubick demo: %s\n", err.msg);
			rk_zoo_fini(&zoo);
			return RK_EXIT_FAILURE;
		}
		printf("%-8s %5d %-7s", m->name, m->global_batch, fitted ? "fitted" : "default");
		for (int i = 0; i < N_DEMO; i++) {
			const struct rk_curve_point *p = rk_curve_at(&c, demo_gpus[i], ci, 0);
			char cellbuf[32] = "-";
			if (p && p->feasible)
				snprintf(cellbuf, sizeof(cellbuf), "%.2f [%d]", p->min_tput_sps,
					 p->min_gpus);
			printf(" %12s", cellbuf);
		}
		printf("\n");
		const struct rk_curve_point *mx = rk_curve_max(&c);
		if (n_best < 64 && mx->feasible) {
			char pt[RK_PLAN_TEXT_MAX];
			rk_plan_format(&mx->min_plan, pt, sizeof(pt));
			snprintf(best[n_best++], sizeof(best[0]), "%-8s %2d GPUs x %d CPUs  %s",
				 m->name, mx->min_gpus, mx->min_cpus_per_gpu, pt);
		}
		rk_curve_fini(&c);
	}
	printf("\nBest plan of each model (fewest resources within 1%% of its top throughput):\n");
	for (size_t i = 0; i < n_best; i++)
		printf("  %s\n", best[i]);
	rk_zoo_fini(&zoo);
	return RK_EXIT_OK;
}
