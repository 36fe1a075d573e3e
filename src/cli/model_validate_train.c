/*
 * The training protocol of `rubick model validate` (--train-fraction): the
 * 3D micro-batching choice, the warm refit on the profile plus the training
 * rows, and the per-placement-class residual scales (docs/perf-model.md).
 */
#include "cli/model_validate.h"
#include "cli/model_validate_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Sum of |log(pred/measured)| over the 3D training rows with plans `pl`;
 * *n counts them. */
static double miss_3d(const struct rk_measured *t, const struct rk_plan *pl,
		      const unsigned char *is_train, const struct rk_validate_opts *o,
		      const struct rk_model *m, int *n)
{
	double e = 0;
	*n = 0;
	for (int i = 0; i < t->n_rows; i++) {
		double pred;
		if (!is_train[i] || (pl[i].tp == 1 && pl[i].pp == 1))
			continue;
		int cpus = t->rows[i].cpu_threads > 0 ? t->rows[i].cpu_threads : o->cpus_per_gpu;
		if (rk_perf_predict(m, &m->perf, &o->env, &pl[i], &t->rows[i].placement, cpus,
				    &pred) < 0)
			continue;
		e += fabs(log(pred / (t->rows[i].iter_s * 1000.0)));
		(*n)++;
	}
	return e;
}

/*
 * Training protocol: an artifact 3-digit plan name does not say how the
 * per-replica batch was cut into micro-batches. The strict protocol takes one
 * micro-batch (row_plan); with training rows, the cut that explains the 3D
 * training rows better at the warm start is used for the table (llama7b_bsz16
 * ran pipelined, micro-batches of 1), and reported.
 */
void rk_validate_choose_microbatching(const struct rk_measured *t, struct rk_plan *plans,
				 const struct rk_plan *alt, const unsigned char *is_train,
				 const struct rk_validate_opts *o, const struct rk_model *m,
				 struct rk_validate_fit *f)
{
	int n1, n2;
	double one = miss_3d(t, plans, is_train, o, m, &n1);
	double many = miss_3d(t, alt, is_train, o, m, &n2);
	if (n1 < 2 || n2 != n1 || !(many < one))
		return;
	for (int i = 0; i < t->n_rows; i++)
		if (plans[i].tp > 1 || plans[i].pp > 1)
			plans[i] = alt[i];
	rk_validate_note(f, "3D rows read as pipelined with micro-batches of 1: the %d 3D training rows "
		"are missed by %.2f (mean |log|) that way, %.2f with one micro-batch",
	     n1, many / n1, one / n1);
}

static const char *const class_names[RK_VC_N] = {
	"3D",
	"single-node DP",
	"multi-node DP, even GPUs per node",
	"multi-node DP, single-GPU nodes",
	"multi-node DP, a node with an odd GPU count >= 3",
	"single-node ZeRO-Offload",
	"multi-node ZeRO-Offload, even GPUs per node",
	"multi-node ZeRO-Offload, single-GPU nodes",
	"multi-node ZeRO-Offload, a node with an odd GPU count >= 3",
};

/* Placement class of a row for the residual scales of the training protocol. */
int rk_validate_placement_class(const struct rk_plan *p, const struct rk_placement *pl)
{
	if (p->tp > 1 || p->pp > 1)
		return RK_VC_3D;
	int off = p->offload ? RK_VC_OFF_SINGLE - RK_VC_DP_SINGLE : 0;
	if (pl->n_nodes <= 1)
		return RK_VC_DP_SINGLE + off;
	int ones = 0;
	for (int i = 0; i < pl->n_nodes; i++) {
		if (pl->gpus[i] % 2 && pl->gpus[i] >= 3)
			return RK_VC_DP_ODD + off;
		ones += pl->gpus[i] == 1;
	}
	return (ones ? RK_VC_DP_ONES : RK_VC_DP_EVEN) + off;
}

/*
 * Training protocol only: what the refit cannot express (an implementation's
 * own efficiency for 3D plans, the slow multi-node runs with an odd GPU count
 * on a node - the ViT trap) is measured on the training rows as the median
 * ratio measured/predicted per placement class (>= 2 rows) and applied to the
 * class's scored rows. Reported per class.
 */
void rk_validate_class_scales(struct rk_validate *v, int first, struct rk_validate_fit *f)
{
	for (int c = 0; c < RK_VC_N; c++) {
		double ratio[512];
		int n = 0;
		for (int i = first; i < v->n_rows && n < 512; i++) {
			const struct rk_validate_row *r = &v->rows[i];
			if (r->train && !r->skipped && r->cls == c && r->pred_ms > 0)
				ratio[n++] = r->meas_ms / r->pred_ms;
		}
		if (n < 2)
			continue;
		qsort(ratio, (size_t)n, sizeof(double), rk_validate_cmp_dbl);
		double med = n % 2 ? ratio[n / 2] : 0.5 * (ratio[n / 2 - 1] + ratio[n / 2]);
		for (int i = first; i < v->n_rows; i++) {
			struct rk_validate_row *r = &v->rows[i];
			if (r->train || r->skipped || r->cls != c)
				continue;
			r->pred_ms *= med;
			r->ape = fabs(r->pred_ms - r->meas_ms) / r->meas_ms;
		}
		rk_validate_note(f, "class '%s': predictions x %.3f (median measured/predicted of %d training "
			"rows)",
		     class_names[c], med, n);
	}
}

/* Median measured/predicted per placement class over the training rows
 * (1 for a class with fewer than 2). */
static void compute_scales(const struct rk_measured *t, const struct rk_plan *plans,
			   const unsigned char *is_train, const struct rk_validate_opts *o,
			   const struct rk_model *tgt, double *scale)
{
	for (int c = 0; c < RK_VC_N; c++) {
		double ratio[512];
		int n = 0;
		for (int i = 0; i < t->n_rows && n < 512; i++) {
			double pred;
			if (!is_train[i] || rk_validate_placement_class(&plans[i], &t->rows[i].placement) != c)
				continue;
			int cpus = t->rows[i].cpu_threads > 0 ? t->rows[i].cpu_threads
							      : o->cpus_per_gpu;
			if (rk_perf_predict(tgt, &tgt->perf, &o->env, &plans[i], &t->rows[i].placement,
					    cpus, &pred) == 0)
				ratio[n++] = t->rows[i].iter_s * 1000.0 / pred;
		}
		scale[c] = 1;
		if (n >= 2) {
			qsort(ratio, (size_t)n, sizeof(double), rk_validate_cmp_dbl);
			scale[c] = n % 2 ? ratio[n / 2] : 0.5 * (ratio[n / 2 - 1] + ratio[n / 2]);
		}
	}
}

/*
 * Training protocol refit: the training rows become samples (forward times
 * dropped when a profile gave the forward), fitted warm from the profile fit;
 * alternating with the class scales (class_scales) for 3 rounds, so rows of
 * a class the model cannot describe (the ViT trap) are compared at their
 * class's level instead of dragging the shared parameters.
 */
/* Add `x` with its times divided by its class's scale (phases only when measured). */
static int add_scaled(struct rk_perf_samples *set, struct rk_perf_sample x, double sc,
		      struct rk_error *err)
{
	x.iter_ms /= sc;
	if (x.sync_ms > 0)
		x.sync_ms /= sc;
	if (x.opt_ms > 0)
		x.opt_ms /= sc;
	return rk_perf_samples_add(set, &x, err);
}

int rk_validate_train_refit(const struct rk_measured *t, const struct rk_plan *plans,
		       const unsigned char *is_train, const struct rk_profile *prof,
		       const char *mpath,
		       const struct rk_validate_opts *o, int have_profile, int warm,
		       struct rk_model *tgt, struct rk_validate_fit *f, struct rk_error *err)
{
	struct rk_perf_samples set;
	double scale[RK_VC_N];
	const struct rk_perf_params base = tgt->perf;
	const double base_fwd = tgt->fwd_ms;
	struct rk_perf_fit_result r = {0};
	int rc = 0;
	/* start from the warm start's view of each class (all 1 when cold) */
	for (int c = 0; c < RK_VC_N; c++)
		scale[c] = 1;
	if (warm)
		compute_scales(t, plans, is_train, o, tgt, scale);
	for (int round = 0; round < 3; round++) {
		rk_perf_samples_init(&set);
		/* the profile's own runs stay in the set, at their class's level */
		for (int i = 0; i < prof->n; i++) {
			struct rk_perf_sample x = prof->samples[i];
			double sc = scale[rk_validate_placement_class(&x.plan, &x.placement)];
			if ((rc = add_scaled(&set, x, sc, err)) < 0)
				goto fail;
		}
		for (int i = 0; i < t->n_rows; i++) {
			if (!is_train[i])
				continue;
			struct rk_perf_sample x;
			rk_validate_row_sample(&t->rows[i], &plans[i], o, &x);
			/* With a profile, the forward time stays the profile's: its runs
			 * time the forward alone, while some measured tables' forward
			 * column is not per-run (roberta: 22 ms at every GPU count). */
			if (have_profile)
				x.fwd_ms = -1;
			double sc = scale[rk_validate_placement_class(&plans[i], &t->rows[i].placement)];
			if ((rc = add_scaled(&set, x, sc, err)) < 0)
				goto fail;
		}
		struct rk_model m = *tgt;
		m.fwd_ms = base_fwd;
		rc = rk_perf_fit(&m, &o->env, set.v, set.n, warm ? &base : NULL, &r, err);
		if (rc < 0) {
			rk_error_prefix(err, "%s (training rows)", mpath);
			goto fail;
		}
		tgt->perf = r.k;
		tgt->perf_fitted = 1;
		tgt->fwd_ms = r.fwd_ms > 0 ? r.fwd_ms : base_fwd;
		compute_scales(t, plans, is_train, o, tgt, scale);
		if (round < 2)
			rk_perf_samples_fini(&set);
	}
	f->fit = r;
	for (int j = 0; j < r.n_iter_rejected; j++) {
		const struct rk_perf_sample *x = &set.v[r.iter_rejected[j]];
		rk_validate_note(f, "%s:%d: training row left out of the refit: the model misses its iteration "
			"time by more than the other rows allow",
		     mpath, x->line);
	}
fail:
	rk_perf_samples_fini(&set);
	return rc;
}

