/*
 * Online refit of a job's performance model from its own progress reports
 * (issue 8; algorithms.md §1.5 "online variant"): every report with a
 * throughput is one observed iteration, iter_ms = global batch / throughput,
 * under the plan and placement the job runs with now. The sample joins the
 * job's set and the 7 parameters are refitted warm-started from the current
 * ones (rk_perf_fit with `warm`), so the next rounds decide with them
 * (core.model points at sjob.model). The fit's error and the miss of the
 * model on the newest sample before refitting are kept for the API.
 */
#include "daemon/sched_internal.h"
#include "rubick/fit.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Keep the newest samples only: the job's speed drifts, the fit stays cheap. */
#define REFIT_MAX_SAMPLES 32

struct rkd_fit {
	struct rk_perf_samples set;
	struct rk_perf_fit_result last;
	int n_fits;
	double last_pred_err; /* |predicted - measured| / measured of the newest sample, before the refit */
	char last_error[sizeof(((struct rk_error *)0)->msg)]; /* why the last refit failed; "" = it did not */
};

void rkd_refit_free(struct rkd_fit *f)
{
	if (!f)
		return;
	rk_perf_samples_fini(&f->set);
	free(f);
}

/* The placement a job's allocation spans: GPUs per node, in share order. */
static int alloc_placement(const struct rk_alloc *a, struct rk_placement *pl)
{
	memset(pl, 0, sizeof(*pl));
	for (int i = 0; i < a->n; i++) {
		if (a->shares[i].gpus <= 0)
			continue;
		if (pl->n_nodes == RK_PLACEMENT_MAX_NODES)
			return -1;
		pl->gpus[pl->n_nodes++] = a->shares[i].gpus;
	}
	return pl->n_nodes ? 0 : -1;
}

int rkd_refit_report(struct rkd_sched *s, struct sjob *j, double tput_sps, struct rk_error *err)
{
	if (!(tput_sps > 0) || !j->core.alloc.n || j->core.global_batch <= 0)
		return 0; /* nothing measured under a known plan */
	struct rk_perf_sample x;
	memset(&x, 0, sizeof(x));
	if (alloc_placement(&j->core.alloc, &x.placement))
		return 0;
	int gpus = rk_alloc_total_gpus(&j->core.alloc);
	int cpus = rk_alloc_total_cpus(&j->core.alloc);
	x.plan = j->core.plan;
	x.cpus_per_gpu = gpus > 0 && cpus >= gpus ? cpus / gpus : 1;
	x.fwd_ms = x.sync_ms = x.opt_ms = -1;
	x.iter_ms = 1000.0 * j->core.global_batch / tput_sps;
	if (!j->fit) {
		j->fit = calloc(1, sizeof(*j->fit));
		if (!j->fit)
			return rk_error_set(err, RK_ENOMEM, "refit: out of memory");
		rk_perf_samples_init(&j->fit->set);
	}
	struct rkd_fit *f = j->fit;
	double pred;
	if (rk_perf_predict(&j->model, &j->model.perf, &s->env, &x.plan, &x.placement,
			    x.cpus_per_gpu, &pred) == 0 && pred > 0)
		f->last_pred_err = fabs(pred - x.iter_ms) / x.iter_ms;
	if (f->set.n == REFIT_MAX_SAMPLES) {
		memmove(f->set.v, f->set.v + 1, (size_t)(f->set.n - 1) * sizeof(*f->set.v));
		f->set.n--;
	}
	int ret = rk_perf_samples_add(&f->set, &x, err);
	if (ret) {
		snprintf(f->last_error, sizeof(f->last_error), "%s", err->msg);
		return ret == RK_ENOMEM ? ret : 0; /* an unusable sample is not a daemon failure */
	}
	struct rk_perf_fit_result r;
	struct rk_error fe;
	rk_error_clear(&fe);
	ret = rk_perf_fit(&j->model, &s->env, f->set.v, f->set.n,
			  j->model.perf_fitted ? &j->model.perf : NULL, &r, &fe);
	if (ret) {
		snprintf(f->last_error, sizeof(f->last_error), "%s", fe.msg);
		return ret == RK_ENOMEM ? rk_error_set(err, ret, "%s", fe.msg) : 0;
	}
	j->model.perf = r.k;
	if (r.fwd_ms > 0)
		j->model.fwd_ms = r.fwd_ms;
	j->model.perf_fitted = 1;
	f->last = r;
	f->n_fits++;
	f->last_error[0] = '\0';
	return 0;
}

char *rkd_refit_json_add(const struct sjob *j, char *body)
{
	if (!j || !j->fit || !body)
		return body;
	const struct rkd_fit *f = j->fit;
	json_t *root = json_loads(body, 0, NULL);
	if (!root)
		return body;
	const struct rk_perf_params *k = &j->model.perf;
	json_t *o = json_pack("{s:i, s:i, s:f, s:f, s:{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}}",
			      "samples", f->set.n, "refits", f->n_fits,
			      "iter_rmse_log", f->last.iter_rmse_log,
			      "newest_prediction_error", f->last_pred_err, "params",
			      "k_bwd", k->k_bwd, "k_sync", k->k_sync, "k_opt", k->k_opt,
			      "k_os_offload", k->k_os_offload, "k_const", k->k_const,
			      "k_off", k->k_off, "k_swap", k->k_swap, "fwd_fixed_ms", k->fwd_fixed_ms);
	if (o && f->last_error[0])
		json_object_set_new(o, "error", json_string(f->last_error));
	if (!o || json_object_set_new(root, "fit", o)) {
		json_decref(root);
		return body;
	}
	char *text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	if (!text)
		return body;
	free(body);
	return text;
}
