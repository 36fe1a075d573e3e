/*
 * Online refit of a job's performance model from its own progress reports
 * (issue 8; docs/references.md §1.5 "online variant"): every report with a
 * throughput is one observed iteration, iter_ms = global batch / throughput,
 * under the plan and placement the job runs with now. The sample joins the
 * job's set and the 7 parameters are refitted warm-started from the current
 * ones (rk_perf_fit with `warm`), so the next rounds decide with them
 * (core.model points at sjob.model). The fit's error and the miss of the
 * model on the newest sample before refitting are kept for the API. The
 * sample rules and the refit itself are the model library's (rubick/refit.h,
 * src/model/refit.c), shared with the simulator; this file keeps what is the
 * daemon's: the allocation's placement, the store and the API.
 *
 * The whole state (samples, counters, fitted parameters) is saved in the
 * store with every report and reloaded on recovery, so a restarted rubickd
 * decides with the refitted model and refits on from the same samples.
 */
#include "daemon/sched/sched_internal.h"
#include "rubick/fit.h"
#include "rubick/refit.h"
#include "rubick/plan.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * The shared refit state (rubick/refit.h): the simulator refits with the same
 * rules. Beside it, the guaranteed baseline as observed: the mean throughput
 * of the reports the job sent while it ran exactly its request (plan and GPU
 * count). The policy's floor is the higher of this and the model's price of
 * the request (rubick.c guarantee_init), as the simulator's baseline is the
 * oracle's price of the request (engine_sla.c).
 */
struct rkd_fit {
	struct rk_refit r;
	double base_sum; /* sum of the throughputs reported at the request */
	int base_n;
};

/* Tell the policy what was observed (rk_job's refit fields; rubick/job.h). */
static void fit_publish(struct sjob *j)
{
	const struct rkd_fit *f = j->fit;
	j->core.model_refits = f->r.n_fits;
	j->core.model_miss = f->r.max_pred_err;
	j->core.baseline_sps = f->base_n > 0 ? f->base_sum / f->base_n : 0;
}

/* Does the job run exactly what it asked for: its plan on its GPU count? */
static int at_request(const struct sjob *j)
{
	return j->core.alloc.n && rk_alloc_total_gpus(&j->core.alloc) == j->core.req_gpus &&
	       rk_plan_equal(&j->core.plan, &j->core.req_plan);
}

void rkd_refit_free(struct rkd_fit *f)
{
	if (!f)
		return;
	rk_refit_fini(&f->r);
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
	struct rk_placement pl;
	if (alloc_placement(&j->core.alloc, &pl))
		return 0;
	if (!j->fit) {
		j->fit = calloc(1, sizeof(*j->fit));
		if (!j->fit)
			return rk_error_set(err, RK_ENOMEM, "refit: out of memory");
		rk_refit_init(&j->fit->r);
	}
	int ret = rk_refit_observe(&j->fit->r, &j->model, &s->env, &j->core.plan, &pl,
				   rk_alloc_total_cpus(&j->core.alloc), j->core.global_batch,
				   tput_sps, err);
	if (ret)
		return ret;
	/* A report comes from the current run (sched_msgs.c refuses older ones),
	 * under the allocation and plan the job holds now; sched_run_next clears it. */
	j->core.observed_sps = tput_sps;
	if (at_request(j)) {
		j->fit->base_sum += tput_sps;
		j->fit->base_n++;
	}
	fit_publish(j);
	return 0;
}

/* The parameters in a fixed order: the stored form is an array. */
#define N_PARAMS 8
static void params_ptrs(struct rk_perf_params *k, double *v[N_PARAMS])
{
	double *p[N_PARAMS] = {&k->k_bwd,   &k->k_sync, &k->k_opt,  &k->k_os_offload,
			       &k->k_const, &k->k_off,  &k->k_swap, &k->fwd_fixed_ms};
	memcpy(v, p, sizeof(p));
}

/*
 * The stored form: {"v":1, "refits", "pred_err", "rmse", "error", "fwd_ms",
 * "k": [8 parameters], "samples": [[plan, placement, cpus_per_gpu, iter_ms]...],
 * "max_err", "base_sum", "base_n"}; the last three came later and are optional
 * on reading (a state saved before them reads as never missed, no baseline).
 * Reals are written with 17 digits (jansson's default), so they read back exactly.
 */
static char *state_dump(const struct rkd_fit *df, const struct rk_model *m)
{
	const struct rk_refit *f = &df->r;
	struct rk_perf_params k = m->perf;
	double *kv[N_PARAMS];
	params_ptrs(&k, kv);
	json_t *o = json_pack("{s:i, s:i, s:f, s:f, s:s, s:f, s:f, s:f, s:i}", "v", 1, "refits",
			      f->n_fits, "pred_err", f->last_pred_err, "rmse",
			      f->last.iter_rmse_log, "error", f->last_error, "fwd_ms", m->fwd_ms,
			      "max_err", f->max_pred_err, "base_sum", df->base_sum, "base_n",
			      df->base_n);
	json_t *ka = json_array(), *sa = json_array();
	int bad = !o || !ka || !sa;
	for (int i = 0; i < N_PARAMS && !bad; i++)
		bad = json_array_append_new(ka, json_real(*kv[i]));
	for (int i = 0; i < f->set.n && !bad; i++) {
		const struct rk_perf_sample *x = &f->set.v[i];
		char plan[RK_PLAN_TEXT_MAX], pl[512];
		bad = rk_plan_format(&x->plan, plan, sizeof(plan)) < 0 ||
		      rk_placement_format(&x->placement, pl, sizeof(pl)) < 0 ||
		      json_array_append_new(sa, json_pack("[s, s, i, f]", plan, pl, x->cpus_per_gpu,
							  x->iter_ms));
	}
	char *text = NULL;
	if (!bad && !json_object_set(o, "k", ka) && !json_object_set(o, "samples", sa))
		text = json_dumps(o, JSON_COMPACT);
	json_decref(ka);
	json_decref(sa);
	json_decref(o);
	return text;
}

/* Read a stored state into *f (initialised here), *k and *fwd_ms; -1 when unreadable. */
static int state_load(const char *text, struct rkd_fit *df, struct rk_perf_params *k,
		      double *fwd_ms)
{
	memset(df, 0, sizeof(*df));
	struct rk_refit *f = &df->r;
	rk_perf_samples_init(&f->set);
	json_t *o = json_loads(text, 0, NULL), *ka, *sa;
	const char *e = "";
	int v = 0;
	if (!o || json_unpack(o, "{s:i, s:i, s:F, s:F, s:s, s:F, s:o, s:o}", "v", &v, "refits",
			      &f->n_fits, "pred_err", &f->last_pred_err, "rmse",
			      &f->last.iter_rmse_log, "error", &e, "fwd_ms", fwd_ms, "k", &ka,
			      "samples", &sa) ||
	    v != 1 || json_array_size(ka) != N_PARAMS || !json_is_array(sa))
		goto bad;
	/* optional keys: absent in a state saved before them */
	if (json_unpack(o, "{s?F, s?F, s?i}", "max_err", &f->max_pred_err, "base_sum",
			&df->base_sum, "base_n", &df->base_n) ||
	    df->base_n < 0)
		goto bad;
	snprintf(f->last_error, sizeof(f->last_error), "%s", e);
	double *kv[N_PARAMS];
	params_ptrs(k, kv);
	for (int i = 0; i < N_PARAMS; i++)
		*kv[i] = json_number_value(json_array_get(ka, (size_t)i));
	for (size_t i = 0; i < json_array_size(sa); i++) {
		struct rk_perf_sample x;
		memset(&x, 0, sizeof(x));
		const char *plan, *pl;
		struct rk_error pe;
		rk_error_clear(&pe);
		if (json_unpack(json_array_get(sa, i), "[s, s, i, F]", &plan, &pl, &x.cpus_per_gpu,
				&x.iter_ms) ||
		    rk_plan_parse(plan, "stored refit sample", &x.plan, &pe) ||
		    rk_placement_parse(pl, "stored refit sample", &x.placement, &pe))
			goto bad;
		x.fwd_ms = x.sync_ms = x.opt_ms = -1;
		if (rk_perf_samples_add(&f->set, &x, &pe))
			goto bad;
	}
	json_decref(o);
	return 0;
bad:
	json_decref(o);
	rk_perf_samples_fini(&f->set);
	return -1;
}

int rkd_refit_save(struct rkd_sched *s, const struct sjob *j, int64_t now, struct rk_error *err)
{
	if (!j->fit)
		return 0;
	char *text = state_dump(j->fit, &j->model);
	if (!text)
		return rk_error_set(err, RK_ENOMEM, "job %lld: refit state: out of memory",
				    (long long)j->core.id);
	int ret = rkd_store_job_fit_set(s->store, j->core.id, text, now, err);
	free(text);
	return ret;
}

void rkd_refit_recover(struct rkd_sched *s, struct sjob *j)
{
	char *text = NULL;
	if (rkd_store_job_fit_get(s->store, j->core.id, &text))
		return; /* none stored: the refit starts at the next report */
	struct rkd_fit *f = calloc(1, sizeof(*f));
	struct rk_perf_params k = j->model.perf;
	double fwd_ms = 0;
	if (f && state_load(text, f, &k, &fwd_ms) == 0) {
		j->fit = f;
		f = NULL;
		fit_publish(j); /* observed_sps stays 0 until the run reports again */
		if (j->fit->r.n_fits > 0) { /* the model the job was last decided with */
			j->model.perf = k;
			if (fwd_ms > 0)
				j->model.fwd_ms = fwd_ms;
			j->model.perf_fitted = 1;
		}
	}
	/* An unreadable state is dropped: refitting afresh is safe, failing recovery is not. */
	free(f);
	free(text);
}

static json_t *fit_json(const struct rkd_fit *df, const struct rk_perf_params *k)
{
	const struct rk_refit *f = &df->r;
	json_t *o = json_pack("{s:i, s:i, s:f, s:f, s:f, s:f, s:i, "
			      "s:{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}}",
			      "samples", f->set.n, "refits", f->n_fits,
			      "iter_rmse_log", f->last.iter_rmse_log,
			      "newest_prediction_error", f->last_pred_err,
			      "largest_prediction_error", f->max_pred_err, "baseline_sps",
			      df->base_n > 0 ? df->base_sum / df->base_n : 0.0,
			      "baseline_reports", df->base_n, "params",
			      "k_bwd", k->k_bwd, "k_sync", k->k_sync, "k_opt", k->k_opt,
			      "k_os_offload", k->k_os_offload, "k_const", k->k_const,
			      "k_off", k->k_off, "k_swap", k->k_swap, "fwd_fixed_ms", k->fwd_fixed_ms);
	if (o && f->last_error[0])
		json_object_set_new(o, "error", json_string(f->last_error));
	return o;
}

/* Add "fit" (object `o`, consumed) to the job's JSON `body`; returns the new body. */
static char *body_add(char *body, json_t *o)
{
	json_t *root = o ? json_loads(body, 0, NULL) : NULL;
	if (!root) {
		json_decref(o);
		return body;
	}
	if (json_object_set_new(root, "fit", o)) {
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

char *rkd_refit_json_add(const struct sjob *j, char *body)
{
	if (!j || !j->fit || !body)
		return body;
	return body_add(body, fit_json(j->fit, &j->model.perf));
}

char *rkd_refit_json_add_stored(struct rkd_store *store, int64_t id, char *body)
{
	char *text = NULL;
	if (!body || rkd_store_job_fit_get(store, id, &text))
		return body;
	struct rkd_fit f;
	struct rk_perf_params k;
	double fwd_ms = 0;
	memset(&k, 0, sizeof(k));
	if (state_load(text, &f, &k, &fwd_ms) == 0) {
		body = body_add(body, fit_json(&f, &k));
		rk_perf_samples_fini(&f.r.set);
	}
	free(text);
	return body;
}
