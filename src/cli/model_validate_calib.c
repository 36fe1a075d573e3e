/*
 * `rubick model validate --calibrate-internode loo` (issue 22, item 6): the
 * effective inter-node bandwidth of the cluster, fitted leave-one-model-out.
 *
 * In the Rubick model (Rubick, OSDI'25, §4) every inter-node transfer costs
 * volume / bandwidth; the nominal NIC figure (perf.h net_gbps) is a datasheet
 * number, and a model whose profiling runs are all single-node (the artifact's
 * ViT) has nothing of its own to correct it with. So, for each model M, one
 * bandwidth is fitted (rk_netcal_fit, include/rubick/netcal.h) on the scored
 * multi-node rows of all OTHER models, each predicted with its own fitted
 * parameters, and M's rows are re-predicted with it. M's rows never enter
 * M's fit (strict protocol). Datasets of the same zoo model (llama7 and
 * llama7b_bsz16) are one model here: both are held out together.
 *
 * Order: calibration is defined on the strict protocol only. The training
 * protocol's class scales (model_validate_train.c) are fitted on a model's
 * own rows per placement class, so applied first they would already absorb
 * the inter-node error the bandwidth is meant to explain; calibrating first
 * and refitting the scales on calibrated predictions is the right order, not
 * done yet, so cmd_model.c refuses the two together.
 */
#include "cli/model_validate.h"

#include "rubick/netcal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Search range of the bandwidth (GB/s): from far below any data-centre NIC
 * (0.1 GB/s = 0.8 Gb/s) to above one NVLink's; physical bounds, not fitted. */
#define CAL_LO_GBPS 0.1
#define CAL_HI_GBPS 1000.0

struct cal_ctx {
	const struct rk_validate *v;
	const struct rk_validate_opts *o;
};

static double predict_at(const struct rk_validate *v, const struct rk_validate_opts *o, size_t i,
			 double gbps)
{
	const struct rk_validate_row *r = &v->rows[i];
	const struct rk_validate_input *in = &v->inputs[i];
	const struct rk_model *m = &v->fits[r->fit].model;
	struct rk_perf_env env = o->env;
	env.net_gbps = gbps;
	double ms = NAN;
	if (rk_perf_predict(m, &m->perf, &env, &in->plan, &in->placement, in->cpus, &ms) < 0)
		return NAN;
	return ms;
}

static double cal_predict(size_t i, double gbps, void *p)
{
	const struct cal_ctx *c = p;
	return predict_at(c->v, c->o, i, gbps);
}

static int scored(const struct rk_validate_row *r)
{
	return !r->skipped && !r->train && r->meas_ms > 0;
}

int rk_validate_calibrate_loo(struct rk_validate *v, const struct rk_validate_opts *o,
			      struct rk_error *err)
{
	size_t n = (size_t)v->n_rows;
	double *meas = malloc(sizeof(double) * (n ? n : 1));
	unsigned char *use = malloc(n ? n : 1);
	if (!meas || !use) {
		free(meas);
		free(use);
		return rk_error_set(err, RK_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		meas[i] = v->rows[i].meas_ms;
	struct cal_ctx c = {v, o};
	/* First every model's bandwidth, from predictions recomputed at each
	 * trial bandwidth (never from stored pred_ms), then the re-prediction. */
	for (int m = 0; m < v->n_fits; m++) {
		struct rk_validate_fit *f = &v->fits[m];
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			const struct rk_validate_row *r = &v->rows[i];
			use[i] = scored(r) && r->n_nodes > 1 &&
				 strcmp(v->fits[r->fit].target, f->target) != 0;
			k += use[i];
		}
		struct rk_netcal_result res;
		if (!k || rk_netcal_fit(n, meas, use, cal_predict, &c, CAL_LO_GBPS, CAL_HI_GBPS,
					&res) < 0) {
			f->calibrated = 0; /* nothing to fit from: its rows keep the nominal figure */
			continue;
		}
		f->calibrated = 1;
		f->cal_gbps = res.gbps;
		f->cal_rows = (int)k;
	}
	for (size_t i = 0; i < n; i++) {
		struct rk_validate_row *r = &v->rows[i];
		const struct rk_validate_fit *f = &v->fits[r->fit];
		if (!scored(r) || !f->calibrated)
			continue;
		double ms = predict_at(v, o, i, f->cal_gbps);
		if (!(ms > 0) || !isfinite(ms))
			continue; /* keeps its uncalibrated prediction; cannot happen for a row
				     that predicted at the nominal bandwidth unless the fit hit a bound */
		r->pred_ms = ms;
		r->ape = fabs(ms - r->meas_ms) / r->meas_ms;
	}
	free(meas);
	free(use);
	v->calibrated = 1;
	return 0;
}

double rk_validate_mape(const struct rk_validate *v, const char *dataset, int family, int multi,
			int before)
{
	double sum = 0;
	int k = 0;
	for (int i = 0; i < v->n_rows; i++) {
		const struct rk_validate_row *r = &v->rows[i];
		if (!scored(r) || (dataset && strcmp(r->dataset, dataset)) ||
		    (family >= 0 && r->family != family) || (multi && r->n_nodes <= 1))
			continue;
		sum += before ? r->ape0 : r->ape;
		k++;
	}
	return k ? sum / k : -1;
}
