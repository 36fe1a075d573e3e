/*
 * Sia/Pollux job targets (oracle.h rk_oracle_add_sia_target): a profile's
 * `validation-<B>.csv` traces training at global batch B until the
 * application's validation target; its last row's `iteration` is how many
 * iterations of batch B reach the target. Sia's and Pollux's simulators end a
 * job there (traces/sia-artifacts/README.md); `rubick sim --job-length
 * sia-target` does the same for jobs of a fixed batch.
 */
#include "sim/oracle/oracle_internal.h"

#include "rubick/csvline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rk_oracle_add_sia_target(struct rk_oracle *o, const char *model_name, int batch,
			     const char *text, size_t len, const char *filename,
			     struct rk_error *err)
{
	const char *name = filename ? filename : "validation.csv";
	if (!o || !model_name || !*model_name || (!text && len > 0))
		return rk_error_set(err, RK_EINVAL, "%s: oracle: bad arguments", name);
	if (batch < 1)
		return rk_error_set(err, RK_ERANGE, "%s: batch %d must be >= 1", name, batch);
	if (strlen(model_name) >= RK_MODEL_NAME_MAX)
		return rk_error_set(err, RK_ERANGE, "%s: model name too long", name);
	char key[RK_MODEL_NAME_MAX];
	oracle_model_key(model_name, key, sizeof(key));
	for (int i = 0; i < o->n_targets; i++)
		if (!strcmp(o->targets[i].model, key) && o->targets[i].batch == batch)
			return rk_error_set(err, RK_EEXIST, "%s: model '%s' at batch %d already has a "
					    "target", name, model_name, batch);
	static const char *const cols[] = {"progress", "iteration", "metric", "grad_sqr", "grad_var"};
	struct rk_csv c;
	int idx[5], rc;
	rk_csv_init(&c, text ? text : "", len, ',');
	if ((rc = rk_csv_next(&c, 0, name, err)) <= 0)
		return rc < 0 ? rc : rk_error_set(err, RK_EINVAL, "%s:1:1: empty file", name);
	if ((rc = rk_csv_header(&c, name, cols, 5, idx,
				" (expected progress, iteration, metric, grad_sqr, grad_var)", err)) < 0)
		return rc;
	if (idx[1] < 0)
		return rk_error_set(err, RK_EINVAL, "%s:%d:1: missing column 'iteration'", name, c.line);
	double last = -1, v;
	while ((rc = rk_csv_next(&c, 0, name, err)) > 0) {
		if ((rc = rk_csv_double(&c, idx[1], name, "iteration", &v, err)) < 0)
			return rc;
		if (!(v >= 0))
			return rk_error_set(err, RK_ERANGE, "%s:%d:%d: iteration must be >= 0", name,
					    c.line, c.col[idx[1]]);
		last = v;
	}
	if (rc < 0)
		return rc;
	if (!(last > 0))
		return rk_error_set(err, RK_EINVAL, "%s: no row with a positive iteration", name);
	struct sia_target *nt = realloc(o->targets, (size_t)(o->n_targets + 1) * sizeof(*nt));
	if (!nt)
		return rk_error_set(err, RK_ENOMEM, "%s: out of memory", name);
	o->targets = nt;
	struct sia_target *t = &o->targets[o->n_targets++];
	memset(t, 0, sizeof(*t));
	snprintf(t->model, sizeof(t->model), "%s", key);
	t->batch = batch;
	t->iters = last;
	return 0;
}

int rk_oracle_target_iters(const struct rk_oracle *o, const char *app, int batch, double *iters)
{
	if (!o || !app || batch < 1 || !iters)
		return RK_EINVAL;
	char key[RK_MODEL_NAME_MAX];
	oracle_model_key(app, key, sizeof(key));
	const struct sia_target *lo = NULL, *hi = NULL;
	for (int i = 0; i < o->n_targets; i++) {
		const struct sia_target *t = &o->targets[i];
		if (strcmp(t->model, key))
			continue;
		if (t->batch <= batch && (!lo || t->batch > lo->batch))
			lo = t;
		if (t->batch >= batch && (!hi || t->batch < hi->batch))
			hi = t;
	}
	if (!lo && !hi)
		return RK_ENOTFOUND;
	/* Outside the measured batches: the nearest one's iterations (no extrapolation). */
	if (!lo || !hi || lo == hi) {
		*iters = (lo ? lo : hi)->iters;
		return 0;
	}
	/* Between two measured batches: log(iterations) linear in log(batch). */
	double w = log((double)batch / lo->batch) / log((double)hi->batch / lo->batch);
	*iters = exp(log(lo->iters) + w * (log(hi->iters) - log(lo->iters)));
	return 0;
}
