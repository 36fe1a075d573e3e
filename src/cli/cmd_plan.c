/*
 * `rubick plan`: every feasible execution plan of a model on a placement, with
 * its predicted iteration time and memory, best first (issue 2, "Sensitivity
 * curves"). Plans come from rk_plan_enumerate, memory from memory.h, times
 * from the performance model (perf.h).
 */
#include "cli/commands.h"
#include "cli/whitebox.h"
#include "rubick/memory.h"
#include "rubick/perf.h"
#include "rubick/plan.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rubick plan --model NAME --placement GPUS [--global-batch B]\n"
		"                   [--cpus-per-gpu C] [--gpu-mem-mb M] [--host-mem-mb M]\n"
		"                   [--space SPACE] [--zoo DIR] [--json]\n\n"
		"Every plan NAME can run with global batch B (default: the model's) on the\n"
		"placement (GPUs per node: 8888, or 16,16 for nodes of more than 9 GPUs)\n"
		"that fits M MiB per GPU (default 81920, an 80 GB A800) and M MiB of host\n"
		"memory per node (default 1638400), with its predicted iteration time,\n"
		"throughput and memory, best first. C CPU threads per GPU (default 8) feed\n"
		"ZeRO-Offload's host optimizer. --space keeps the plans a job's script can\n"
		"run (docs/plans.md, e.g. tp<=2,zero<=1,offload=no; default all).\n\n" RK_EXIT_HELP);
}

struct row {
	struct rk_plan plan;
	double iter_ms;
	struct rk_mem_usage mem;
	size_t order; /* enumeration order: ties keep it */
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->iter_ms != y->iter_ms)
		return x->iter_ms < y->iter_ms ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

struct args {
	const char *model, *placement, *zoo;
	long batch, cpus, gpu_mem, host_mem;
	int json;
	struct rk_plan_space space; /* zeroed = every plan */
};

static int parse(int argc, char **argv, struct args *a)
{
	static const char *const valued[] = {"--model", "--placement", "--zoo", "--global-batch",
					     "--cpus-per-gpu", "--gpu-mem-mb", "--host-mem-mb",
					     "--space", NULL};
	*a = (struct args){.batch = 0, .cpus = 8, .gpu_mem = 81920, .host_mem = 1600L * 1024};
	for (int i = 1; i < argc; i++) {
		const char *f = argv[i], *v;
		int rc = rk_wb_flag("plan", usage, valued, argc, argv, &i, &a->json, &v);
		if (rc)
			return rc;
		if (!v)
			continue; /* --json */
		if (!strcmp(f, "--model"))
			a->model = v;
		else if (!strcmp(f, "--placement"))
			a->placement = v;
		else if (!strcmp(f, "--zoo"))
			a->zoo = v;
		else if (!strcmp(f, "--space"))
			rc = rk_wb_space("plan", v, &a->space);
		else if (!strcmp(f, "--global-batch"))
			rc = rk_wb_int("plan", f, v, 1, RK_PLAN_DEGREE_MAX, &a->batch);
		else if (!strcmp(f, "--cpus-per-gpu"))
			rc = rk_wb_int("plan", f, v, 1, 1024, &a->cpus);
		else if (!strcmp(f, "--gpu-mem-mb"))
			rc = rk_wb_int("plan", f, v, 1, 1L << 30, &a->gpu_mem);
		else
			rc = rk_wb_int("plan", f, v, 0, 1L << 40, &a->host_mem);
		if (rc)
			return rc;
	}
	if (!a->model || !a->placement) {
		fprintf(stderr, "rubick plan: %s is required (see --help)\n",
			a->model ? "--placement" : "--model");
		return RK_EXIT_USAGE;
	}
	return 0;
}

static void print_text(const struct rk_model *m, int batch, const char *pl_text, int gpus,
		       int fitted, const struct rk_plan_space *space, const struct row *rows, size_t n)
{
	char sp[RK_PLAN_SPACE_TEXT_MAX] = "";
	if (space->limited && rk_plan_space_format(space, sp, sizeof(sp)) < 0)
		sp[0] = '\0';
	printf("%s, global batch %d, placement %s (%d GPUs), performance parameters %s%s%s\n",
	       m->name, batch, pl_text, gpus, fitted ? "fitted" : "default (model not fitted)",
	       space->limited ? ", plan space " : "", sp);
	if (n == 0) {
		printf("no feasible plan%s%s\n", space->limited ? " in plan space " : "", sp);
		return;
	}
	printf("%4s  %-48s %10s %10s %11s %11s\n", "rank", "plan", "iter_ms", "samples/s",
	       "gpu_mem_mb", "host_mem_mb");
	for (size_t i = 0; i < n; i++) {
		char pt[RK_PLAN_TEXT_MAX];
		rk_plan_format(&rows[i].plan, pt, sizeof(pt));
		printf("%4zu  %-48s %10.1f %10.2f %11.0f %11.0f\n", i + 1, pt, rows[i].iter_ms,
		       batch / (rows[i].iter_ms / 1000.0), rows[i].mem.gpu_mb, rows[i].mem.host_mb);
	}
}

static void print_json(const struct rk_model *m, int batch, const char *pl_text, int gpus,
		       int fitted, const struct rk_plan_space *space, const struct row *rows, size_t n)
{
	json_t *plans = json_array();
	for (size_t i = 0; i < n; i++) {
		char pt[RK_PLAN_TEXT_MAX];
		rk_plan_format(&rows[i].plan, pt, sizeof(pt));
		json_array_append_new(
			plans, json_pack("{s:s, s:f, s:f, s:f, s:f}", "plan", pt, "iter_ms",
					 rows[i].iter_ms, "tput_sps",
					 batch / (rows[i].iter_ms / 1000.0), "gpu_mem_mb",
					 rows[i].mem.gpu_mb, "host_mem_mb", rows[i].mem.host_mb));
	}
	json_t *o = json_pack("{s:s, s:i, s:s, s:i, s:s, s:o}", "model", m->name, "global_batch",
			      batch, "placement", pl_text, "gpus", gpus, "params",
			      fitted ? "fitted" : "default", "plans", plans);
	/* Only when given: the output of a query without --space is unchanged. */
	char sp[RK_PLAN_SPACE_TEXT_MAX];
	if (space->limited && rk_plan_space_format(space, sp, sizeof(sp)) >= 0)
		json_object_set_new(o, "space", json_string(sp));
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	printf("\n");
	json_decref(o);
}

int rk_cmd_plan(int argc, char **argv)
{
	struct args a;
	int rc = parse(argc, argv, &a);
	if (rc)
		return rc < 0 ? RK_EXIT_OK : rc;
	struct rk_error err;
	struct rk_placement pl;
	if (rk_placement_parse(a.placement, "--placement", &pl, &err)) {
		fprintf(stderr, "rubick plan: %s\n", err.msg);
		return RK_EXIT_USAGE;
	}
	struct rk_zoo zoo;
	if ((rc = rk_wb_zoo("plan", a.zoo, &zoo)))
		return rc;
	struct row *rows = NULL;
	struct rk_plan *plans = NULL;
	const struct rk_model *m = rk_wb_model("plan", &zoo, a.model);
	if (!m) {
		rc = RK_EXIT_NOTFOUND;
		goto out;
	}
	int batch = a.batch ? (int)a.batch : m->global_batch;
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	struct rk_perf_params k;
	int fitted = rk_wb_params(m, &env, &k);
	size_t n = 0;
	if (rk_plan_enumerate(m, batch, &pl, a.gpu_mem, a.host_mem, NULL, 0, &n, &err) ||
	    !(plans = calloc(n ? n : 1, sizeof(*plans))) || !(rows = calloc(n ? n : 1, sizeof(*rows))) ||
	    rk_plan_enumerate(m, batch, &pl, a.gpu_mem, a.host_mem, plans, n, &n, &err)) {
		fprintf(stderr, "rubick plan: %s\n", plans && rows ? err.msg : "out of memory");
		rc = RK_EXIT_FAILURE;
		goto out;
	}
	/* The declared space filters what the enumeration found, as the curves do. */
	size_t kept = 0;
	for (size_t i = 0; i < n; i++)
		if (rk_plan_in_space(&plans[i], &a.space))
			plans[kept++] = plans[i];
	n = kept;
	for (size_t i = 0; i < n; i++) {
		rows[i].plan = plans[i];
		rows[i].order = i;
		int prc = rk_perf_predict(m, &k, &env, &plans[i], &pl, (int)a.cpus, &rows[i].iter_ms);
		if (!prc)
			prc = rk_memory_estimate(m, &plans[i], &rows[i].mem, &err);
		if (prc) {
			fprintf(stderr, "rubick plan: model '%s': prediction failed: %s\n", m->name,
				rk_strerror(prc));
			rc = RK_EXIT_FAILURE;
			goto out;
		}
	}
	qsort(rows, n, sizeof(*rows), cmp_row);
	char pl_text[RK_PLACEMENT_TEXT_MAX];
	rk_placement_format(&pl, pl_text, sizeof(pl_text));
	if (a.json)
		print_json(m, batch, pl_text, rk_placement_total(&pl), fitted, &a.space, rows, n);
	else
		print_text(m, batch, pl_text, rk_placement_total(&pl), fitted, &a.space, rows, n);
	rc = n ? RK_EXIT_OK : RK_EXIT_FAILURE;
out:
	free(plans);
	free(rows);
	rk_zoo_fini(&zoo);
	return rc;
}
