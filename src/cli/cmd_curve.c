/*
 * `rubick curve`: a model's resource sensitivity curve (curve.h,
 * docs/references.md §1.6): for each GPU count the best plan and its predicted
 * throughput, the minimal resources reaching it under the 1% rule, and the
 * slope.
 */
#include "cli/commands.h"
#include "cli/whitebox.h"
#include "rubick/curve.h"
#include "rubick/plan.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rubick curve --model NAME [--global-batch B] [--gpus LO-HI]\n"
		"                    [--node-gpus N] [--cpus-per-gpu C] [--space SPACE]\n"
		"                    [--zoo DIR] [--json]\n\n"
		"The sensitivity curve of NAME at global batch B (default: the model's):\n"
		"for G = LO..HI GPUs (default 1-64) placed on nodes of N GPUs (default 8,\n"
		"full nodes first), the best feasible plan on an 80 GB GPU and its\n"
		"predicted throughput, the fewest GPUs and CPU threads reaching it within\n"
		"1%%, and the slope (samples/s one more GPU brings). The text table shows\n"
		"the CPU level C (1, 2, 4 or 8 threads per GPU; default 8); --json gives\n"
		"every level. --space keeps to the plans a job's script can run\n"
		"(docs/plans.md, e.g. tp=1,zero<=2; default all).\n\n" RK_EXIT_HELP);
}

struct args {
	const char *model, *zoo;
	long batch, lo, hi, node, cpus;
	int json;
	struct rk_plan_space space; /* zeroed = every plan */
};

static int parse_range(const char *v, long *lo, long *hi)
{
	char *end;
	errno = 0;
	long a = strtol(v, &end, 10), b = a;
	if (end == v || errno)
		return -1;
	if (*end == '-') {
		const char *s = end + 1;
		b = strtol(s, &end, 10);
		if (end == s || errno)
			return -1;
	}
	if (*end || a < 1 || b < a || b > RK_PLACEMENT_MAX_NODES * 8L)
		return -1;
	*lo = a;
	*hi = b;
	return 0;
}

static int parse(int argc, char **argv, struct args *a)
{
	static const char *const valued[] = {"--model", "--zoo", "--global-batch", "--gpus",
					     "--node-gpus", "--cpus-per-gpu", "--space", NULL};
	*a = (struct args){.lo = 1, .hi = 64, .node = 8, .cpus = 8};
	for (int i = 1; i < argc; i++) {
		const char *f = argv[i], *v;
		int rc = rk_wb_flag("curve", usage, valued, argc, argv, &i, &a->json, &v);
		if (rc)
			return rc;
		if (!v)
			continue; /* --json */
		if (!strcmp(f, "--model"))
			a->model = v;
		else if (!strcmp(f, "--zoo"))
			a->zoo = v;
		else if (!strcmp(f, "--space"))
			rc = rk_wb_space("curve", v, &a->space);
		else if (!strcmp(f, "--global-batch"))
			rc = rk_wb_int("curve", f, v, 1, RK_PLAN_DEGREE_MAX, &a->batch);
		else if (!strcmp(f, "--node-gpus"))
			rc = rk_wb_int("curve", f, v, 1, 64, &a->node);
		else if (!strcmp(f, "--cpus-per-gpu"))
			rc = rk_wb_int("curve", f, v, 1, 1024, &a->cpus);
		else if (parse_range(v, &a->lo, &a->hi)) {
			fprintf(stderr,
				"rubick curve: --gpus: '%s' must be N or LO-HI with 1 <= LO <= HI "
				"<= %d\n",
				v, RK_PLACEMENT_MAX_NODES * 8);
			rc = RK_EXIT_USAGE;
		}
		if (rc)
			return rc;
	}
	if (!a->model) {
		fprintf(stderr, "rubick curve: --model is required (see --help)\n");
		return RK_EXIT_USAGE;
	}
	if (a->hi > RK_PLACEMENT_MAX_NODES * a->node) {
		fprintf(stderr, "rubick curve: --gpus: %ld GPUs need more than %d nodes of %ld\n",
			a->hi, RK_PLACEMENT_MAX_NODES, a->node);
		return RK_EXIT_USAGE;
	}
	return 0;
}

static json_t *point_json(const struct rk_curve *c, int g, int ci)
{
	const struct rk_curve_point *p = rk_curve_at(c, g, ci, 0);
	char pt[RK_PLAN_TEXT_MAX], mt[RK_PLAN_TEXT_MAX];
	rk_plan_format(&p->plan, pt, sizeof(pt));
	rk_plan_format(&p->min_plan, mt, sizeof(mt));
	return json_pack("{s:i, s:i, s:b, s:s?, s:f, s:f, s:i, s:i, s:s?, s:f, s:f}", "gpus", g,
			 "cpus_per_gpu", c->opts.cpus_per_gpu[ci], "feasible", p->feasible, "plan",
			 p->has_plan ? pt : NULL, "iter_ms", p->iter_ms, "tput_sps", p->tput_sps,
			 "min_gpus", p->feasible ? p->min_gpus : 0, "min_cpus_per_gpu",
			 p->feasible ? p->min_cpus_per_gpu : 0, "min_plan",
			 p->feasible ? mt : NULL, "min_tput_sps", p->min_tput_sps, "slope_sps",
			 p->slope_sps);
}

static void print_json(const struct rk_curve *c, int fitted, long lo, long hi)
{
	json_t *pts = json_array(), *levels = json_array();
	for (int ci = 0; ci < c->opts.n_cpus; ci++)
		json_array_append_new(levels, json_integer(c->opts.cpus_per_gpu[ci]));
	for (long g = lo; g <= hi; g++)
		for (int ci = 0; ci < c->opts.n_cpus; ci++)
			json_array_append_new(pts, point_json(c, (int)g, ci));
	const struct rk_curve_point *mx = rk_curve_max(c);
	char mt[RK_PLAN_TEXT_MAX];
	rk_plan_format(&mx->min_plan, mt, sizeof(mt));
	json_t *o = json_pack(
		"{s:s, s:i, s:s, s:i, s:o, s:f, s:{s:i, s:i, s:s?, s:f}, s:o}", "model", c->model,
		"global_batch", c->global_batch, "params", fitted ? "fitted" : "default",
		"node_gpus", c->opts.node_gpus, "cpus_per_gpu_levels", levels, "net_gbps",
		c->opts.net_gbps[0], "max", "gpus", mx->feasible ? mx->min_gpus : 0,
		"cpus_per_gpu", mx->feasible ? mx->min_cpus_per_gpu : 0, "plan",
		mx->feasible ? mt : NULL, "tput_sps", mx->min_tput_sps, "points", pts);
	/* Only when given: the output of a query without --space is unchanged. */
	char sp[RK_PLAN_SPACE_TEXT_MAX];
	if (c->opts.space.limited && rk_plan_space_format(&c->opts.space, sp, sizeof(sp)) >= 0)
		json_object_set_new(o, "space", json_string(sp));
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	printf("\n");
	json_decref(o);
}

static void print_text(const struct rk_curve *c, int fitted, long lo, long hi, long cpus)
{
	int ci = 0; /* the highest CPU level not above --cpus-per-gpu */
	for (int i = 1; i < c->opts.n_cpus; i++)
		if (c->opts.cpus_per_gpu[i] <= cpus)
			ci = i;
	char sp[RK_PLAN_SPACE_TEXT_MAX] = "";
	if (c->opts.space.limited && rk_plan_space_format(&c->opts.space, sp, sizeof(sp)) < 0)
		sp[0] = '\0';
	printf("%s, global batch %d, %d GPUs per node, %d CPU threads per GPU, performance "
	       "parameters %s%s%s\n",
	       c->model, c->global_batch, c->opts.node_gpus, c->opts.cpus_per_gpu[ci],
	       fitted ? "fitted" : "default (model not fitted)",
	       c->opts.space.limited ? ", plan space " : "", sp);
	printf("%5s %-48s %10s  %-4s %-4s %10s %9s\n", "gpus", "best plan at these GPUs",
	       "samples/s", "minG", "minC", "min s/s", "slope");
	for (long g = lo; g <= hi; g++) {
		const struct rk_curve_point *p = rk_curve_at(c, (int)g, ci, 0);
		char pt[RK_PLAN_TEXT_MAX] = "-";
		if (p->has_plan)
			rk_plan_format(&p->plan, pt, sizeof(pt));
		if (!p->feasible) {
			printf("%5ld %-48s %10s  infeasible\n", g, pt, "-");
			continue;
		}
		char own[32] = "-";
		if (p->has_plan)
			snprintf(own, sizeof(own), "%.2f", p->tput_sps);
		printf("%5ld %-48s %10s  %-4d %-4d %10.2f %9.3f\n", g, pt, own, p->min_gpus,
		       p->min_cpus_per_gpu, p->min_tput_sps, p->slope_sps);
	}
	const struct rk_curve_point *mx = rk_curve_max(c);
	if (mx->feasible) {
		char mt[RK_PLAN_TEXT_MAX];
		rk_plan_format(&mx->min_plan, mt, sizeof(mt));
		printf("max: %.2f samples/s with %d GPUs x %d CPU threads: %s\n", mx->min_tput_sps,
		       mx->min_gpus, mx->min_cpus_per_gpu, mt);
	}
}

int rk_cmd_curve(int argc, char **argv)
{
	struct args a;
	int rc = parse(argc, argv, &a);
	if (rc)
		return rc < 0 ? RK_EXIT_OK : rc;
	struct rk_zoo zoo;
	if ((rc = rk_wb_zoo("curve", a.zoo, &zoo)))
		return rc;
	const struct rk_model *m = rk_wb_model("curve", &zoo, a.model);
	if (!m) {
		rk_zoo_fini(&zoo);
		return RK_EXIT_NOTFOUND;
	}
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	struct rk_perf_params k;
	int fitted = rk_wb_params(m, &env, &k);
	struct rk_curve_opts o;
	rk_curve_opts_default(&env, &o);
	o.max_gpus = (int)a.hi;
	o.node_gpus = (int)a.node;
	o.space = a.space;
	struct rk_curve c;
	struct rk_error err;
	int batch = a.batch ? (int)a.batch : m->global_batch;
	if (rk_curve_build(m, &k, &env, batch, &o, &c, &err)) {
		fprintf(stderr, "rubick curve: %s\n", err.msg);
		rk_zoo_fini(&zoo);
		return RK_EXIT_FAILURE;
	}
	if (a.json)
		print_json(&c, fitted, a.lo, a.hi);
	else
		print_text(&c, fitted, a.lo, a.hi, a.cpus);
	rk_curve_fini(&c);
	rk_zoo_fini(&zoo);
	return RK_EXIT_OK;
}
