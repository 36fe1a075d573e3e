/*
 * What the oracle tests share: the bundled Rubick tables, a cluster of 8
 * nodes x 8 GPUs of one type, allocations and plans, a fitted BERT model.
 */
#ifndef TEST_ORACLE_FIXTURE_H
#define TEST_ORACLE_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four it needs */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rubick/oracle.h"
#include "rubick/perf.h"

#include "data_file.h"

static inline void add_table(struct rk_oracle *o, const char *folder, const char *model, int batch)
{
	char rel[256];
	size_t len;
	snprintf(rel, sizeof(rel), "measured/rubick/%s/placements.csv", folder);
	char *text = slurp("RK_DATA_DIR", rel, &len);
	struct rk_error err;
	int rc = rk_oracle_add_rubick_table(o, model, batch, text, len, rel, &err);
	if (rc)
		fprintf(stderr, "%s\n", err.msg);
	assert_int_equal(rc, 0);
	free(text);
}

/* A cluster of n nodes with 8 GPUs and 64 CPUs each, all of one type. */
struct fixture {
	struct rk_node nodes[8];
	struct rk_cluster cluster;
	struct rk_share shares[8];
	struct rk_alloc alloc;
	struct rk_model model;
	struct rk_job job;
};

static inline void fx_init(struct fixture *fx, const char *gpu_type, const char *model, int batch)
{
	memset(fx, 0, sizeof(*fx));
	for (int i = 0; i < 8; i++) {
		fx->nodes[i].id = i;
		snprintf(fx->nodes[i].gpu_type, sizeof(fx->nodes[i].gpu_type), "%s", gpu_type);
		fx->nodes[i].gpus = 8;
		fx->nodes[i].cpus = 64;
		fx->nodes[i].mem_mb = 1600 * 1024;
		fx->nodes[i].up = 1;
	}
	fx->cluster.n_nodes = 8;
	fx->cluster.nodes = fx->nodes;
	snprintf(fx->model.name, sizeof(fx->model.name), "%s", model);
	fx->model.global_batch = batch;
	fx->job.id = 7;
	fx->job.model = &fx->model;
	fx->job.global_batch = batch;
}

/* Allocation with `gpus[i]` GPUs on node i (in the order given) and `cpg` CPUs per GPU. */
static inline void fx_alloc(struct fixture *fx, const char *digits, int cpg)
{
	int n = (int)strlen(digits);
	for (int i = 0; i < n; i++) {
		fx->shares[i].node = i;
		fx->shares[i].gpus = digits[i] - '0';
		fx->shares[i].cpus = cpg * fx->shares[i].gpus;
	}
	fx->alloc.n = n;
	fx->alloc.shares = fx->shares;
}

static inline struct rk_plan dp_plan(int gpus, int batch)
{
	struct rk_plan p = {.dp = gpus, .tp = 1, .pp = 1, .mb = batch / gpus, .ga = 1};
	if (p.mb < 1)
		p.mb = 1;
	return p;
}

static inline int look(struct rk_oracle *o, struct fixture *fx, const struct rk_plan *p,
                       struct rk_oracle_result *res, struct rk_error *err)
{
	return rk_oracle_lookup(o, &fx->job, p, &fx->alloc, &fx->cluster, res, err);
}

static inline void fit_bert(struct rk_model *m)
{
	m->layers = 24;
	m->hidden = 1024;
	m->heads = 16;
	m->seq_len = 512;
	m->vocab = 30522;
	m->params = 336.3e6;
	m->fwd_ms = 225;
	m->perf_fitted = 1;
	m->perf = (struct rk_perf_params){.k_bwd = 1.7763,
	                                  .k_sync = 1.1410,
	                                  .k_opt = 1e-8,
	                                  .k_os_offload = 4.4006,
	                                  .k_const = 15.257,
	                                  .k_off = 37.289,
	                                  .k_swap = 26.222};
}

#endif
