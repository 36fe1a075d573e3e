/*
 * Leave-one-out over every row of the bundled Rubick tables
 * (data/measured/rubick): drop the row, ask the table-only oracle for its
 * (family, placement), and check the answer's properties - an interpolated
 * time lies between the two measured counts it was drawn from, a nearest
 * answer is one of the remaining rows' values or their tie mean, nothing
 * fails except for lack of data. The relative errors are printed for the
 * record (docs/oracle.md); no threshold is tuned to them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rubick/measured.h"
#include "rubick/oracle.h"
#include "rubick/perf.h"
#include "rubick/zoo.h"

#include "data_file.h"

/* The text without its line `skip` (1-based). */
static char *drop_line(const char *text, size_t len, int skip, size_t *out_len)
{
	char *out = malloc(len + 2);
	assert_non_null(out);
	size_t o = 0;
	int line = 1;
	for (size_t i = 0; i < len; i++) {
		if (line != skip)
			out[o++] = text[i];
		if (text[i] == '\n')
			line++;
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}

/* A plan of the row's family on g GPUs (the oracle reads family and GPU count). */
static int plan_for(const char *fam, int g, int batch, struct rk_plan *p)
{
	memset(p, 0, sizeof(*p));
	p->dp = g, p->tp = 1, p->pp = 1, p->ga = 1;
	p->mb = batch / g > 0 ? batch / g : 1;
	if (strlen(fam) == 3 && fam[0] >= '1' && fam[0] <= '9' && fam[1] >= '1' && fam[1] <= '9' &&
	    fam[2] >= '1' && fam[2] <= '9') {
		p->pp = fam[0] - '0', p->tp = fam[1] - '0', p->dp = fam[2] - '0';
		return p->pp * p->tp * p->dp == g ? 0 : -1;
	}
	if (!strcmp(fam, "ga"))
		return 0;
	if (!strcmp(fam, "gc"))
		return p->gc = 1, 0;
	if (!strcmp(fam, "zero-dp"))
		return p->zero = 2, 0;
	if (!strcmp(fam, "zero-offload"))
		return p->zero = 2, p->offload = 1, 0;
	if (!strcmp(fam, "zero-offload+gc"))
		return p->zero = 2, p->offload = 1, p->gc = 1, 0;
	if (!strcmp(fam, "tp+ga"))
		return p->dp = 1, p->tp = g, 0;
	return -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static const struct {
	const char *folder, *model;
	int batch;
} tables[] = {
	{"bert", "bert", 32},     {"gpt2", "gpt2", 16},    {"llama30", "llama30", 4},
	{"llama7", "llama7", 8},  {"llama7b_bsz16", "llama7", 16}, {"roberta", "roberta", 64},
	{"t5", "t5", 16},         {"t5_3B", "t5_3b", 4},   {"vit", "vit", 64},
};

/* The zoo entry of `name` (data/zoo/NAME.model, fitted parameters included). */
static void load_model(const char *name, struct rk_model *m)
{
	char rel[128];
	snprintf(rel, sizeof(rel), "zoo/%s.model", name);
	size_t len;
	char *text = slurp("RK_DATA_DIR", rel, &len);
	struct rk_error err;
	int rc = rk_model_parse(text, len, rel, m, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, 0);
	free(text);
}

static void run_loo(int with_model)
{
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	double *err_by[RK_ORACLE_SRC_COUNT];
	int n_by[RK_ORACLE_SRC_COUNT] = {0};
	for (int k = 0; k < RK_ORACLE_SRC_COUNT; k++) {
		err_by[k] = malloc(1024 * sizeof(double));
		assert_non_null(err_by[k]);
	}
	int rows = 0, unanswered = 0, oom_kept = 0;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		char rel[256];
		snprintf(rel, sizeof(rel), "measured/rubick/%s/placements.csv", tables[t].folder);
		size_t len;
		char *text = slurp("RK_DATA_DIR", rel, &len);
		struct rk_measured m;
		assert_int_equal(rk_measured_parse(text, len, rel, &m, NULL), 0);
		for (int r = 0; r < m.n_rows; r++) {
			const struct rk_measured_row *row = &m.rows[r];
			if (row->failed)
				continue;
			size_t tl;
			char *rest = drop_line(text, len, row->line, &tl);
			struct rk_oracle *o;
			struct rk_error err;
			assert_int_equal(rk_oracle_create_measured(&o, with_model ? &env : NULL,
								   with_model ? RK_ORACLE_FALLBACK_MODEL
									      : RK_ORACLE_FALLBACK_NONE,
								   NULL),
					 0);
			int rc = rk_oracle_add_rubick_table(o, tables[t].model, tables[t].batch, rest, tl,
							    rel, &err);
			free(rest);
			if (rc == RK_EINVAL && m.n_rows == 1) { /* nothing left */
				rk_oracle_destroy(o);
				continue;
			}
			assert_int_equal(rc, 0);
			struct rk_model model;
			load_model(tables[t].model, &model);
			model.perf_fitted = model.perf_fitted && with_model;
			struct rk_node nodes[RK_PLACEMENT_MAX_NODES];
			struct rk_share shares[RK_PLACEMENT_MAX_NODES];
			memset(nodes, 0, sizeof(nodes));
			int g = 0;
			for (int i = 0; i < row->placement.n_nodes; i++) {
				nodes[i].id = i;
				nodes[i].gpus = 8;
				nodes[i].cpus = 96;
				nodes[i].up = 1;
				shares[i] = (struct rk_share){
					.node = i,
					.gpus = row->placement.gpus[i],
					.cpus = (row->cpu_threads ? row->cpu_threads : 4) *
						row->placement.gpus[i],
				};
				g += row->placement.gpus[i];
			}
			struct rk_cluster cl = {.n_nodes = row->placement.n_nodes, .nodes = nodes};
			struct rk_alloc a = {.n = row->placement.n_nodes, .shares = shares};
			struct rk_job job = {.id = r, .model = &model, .global_batch = tables[t].batch};
			struct rk_plan p;
			if (plan_for(row->plan, g, tables[t].batch, &p) != 0) {
				rk_oracle_destroy(o);
				continue;
			}
			rows++;
			struct rk_oracle_result res;
			rc = rk_oracle_lookup(o, &job, &p, &a, &cl, &res, &err);
			rk_oracle_destroy(o);
			if (rc == RK_ENOTFOUND) {
				unanswered++;
				continue;
			}
			if (rc == RK_EINFEASIBLE) { /* a neighbour of a working run failed */
				oom_kept++;
				continue;
			}
			assert_int_equal(rc, 0);
			/* the row is gone: exact only where the same point was measured at
			 * another CPU thread count (llama7b_bsz16) */
			assert_true(res.iter_s > 0 && isfinite(res.iter_s));
			if (res.source == RK_ORACLE_SRC_EXACT)
				assert_true(m.has_cpu_threads);
			double e = fabs(res.iter_s - row->iter_s) / row->iter_s;
			err_by[res.source][n_by[res.source]++] = e;
		}
		rk_measured_fini(&m);
		free(text);
	}
	fprintf(stderr, "leave-one-out over %d measured rows (%s): %d unanswered, %d read as out of "
			"memory\n",
		rows, with_model ? "fitted zoo models as fallback" : "tables only, no model",
		unanswered, oom_kept);
	for (int k = 0; k < RK_ORACLE_SRC_COUNT; k++) {
		if (n_by[k] == 0)
			continue;
		qsort(err_by[k], (size_t)n_by[k], sizeof(double), cmp_double);
		double sum = 0;
		for (int i = 0; i < n_by[k]; i++)
			sum += err_by[k][i];
		fprintf(stderr, "  %-14s %4d rows: mean |error| %5.1f%%, median %5.1f%%, p90 %5.1f%%\n",
			rk_oracle_source_name((enum rk_oracle_source)k), n_by[k], 100 * sum / n_by[k],
			100 * err_by[k][(n_by[k] - 1) / 2], 100 * err_by[k][(n_by[k] * 9 + 9) / 10 - 1]);
	}
	assert_true(rows > 400); /* every bundled table was read */
	if (with_model) /* every model is fitted, so nothing lacks an answer */
		assert_int_equal(unanswered, 0);
	for (int k = 0; k < RK_ORACLE_SRC_COUNT; k++)
		free(err_by[k]);
}

static void leave_one_out(void **state)
{
	(void)state;
	run_loo(0);
}

static void leave_one_out_model(void **state)
{
	(void)state;
	run_loo(1);
}

/* Interpolation stays inside the bracket it was drawn from. */
static void interp_is_bracketed(void **state)
{
	(void)state;
	size_t len;
	char *text = slurp("RK_DATA_DIR", "measured/rubick/vit/placements.csv", &len);
	struct rk_oracle *o;
	struct rk_error err;
	assert_int_equal(rk_oracle_create_measured(&o, NULL, RK_ORACLE_FALLBACK_NONE, NULL), 0);
	assert_int_equal(rk_oracle_add_rubick_table(o, "vit", 0, text, len, "vit", &err), 0);
	free(text);
	struct rk_model model = {.name = "vit", .global_batch = 64};
	struct rk_node nodes[1] = {{.id = 0, .gpus = 8, .cpus = 96, .up = 1}};
	struct rk_cluster cl = {.n_nodes = 1, .nodes = nodes};
	/* vit ga on one node: 4 GPUs 0.0627868..., 8 GPUs 0.0492192...; 5, 6, 7 in between */
	double prev = 0.06278684559990377;
	for (int g = 5; g <= 7; g++) {
		struct rk_share sh = {.node = 0, .gpus = g, .cpus = 4 * g};
		struct rk_alloc a = {.n = 1, .shares = &sh};
		struct rk_job job = {.id = g, .model = &model, .global_batch = 64};
		struct rk_plan p = {.dp = g, .tp = 1, .pp = 1, .mb = 64 / g, .ga = 1};
		struct rk_oracle_result res;
		assert_int_equal(rk_oracle_lookup(o, &job, &p, &a, &cl, &res, &err), 0);
		assert_int_equal(res.source, RK_ORACLE_SRC_INTERP);
		assert_true(res.iter_s < prev && res.iter_s > 0.049219243666704965);
		prev = res.iter_s;
	}
	rk_oracle_destroy(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(leave_one_out),
		cmocka_unit_test(leave_one_out_model),
		cmocka_unit_test(interp_is_bracketed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
