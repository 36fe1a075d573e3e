/*
 * Profile readers (profile.h): the Rubick artifact's config.csv + data.csv
 * pair and rubick's own format (docs/profile-format.md), both into fit
 * samples.
 */
#include "rubick/profile.h"

#include "rubick/csvline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rk_profile_fini(struct rk_profile *p)
{
	if (!p)
		return;
	free(p->samples);
	memset(p, 0, sizeof(*p));
}

static int grow(struct rk_profile *p, int *cap, const char *name, struct rk_error *err)
{
	if (p->n < *cap)
		return 0;
	int ncap = *cap ? 2 * *cap : 16;
	void *v = realloc(p->samples, (size_t)ncap * sizeof(*p->samples));
	if (!v)
		return rk_error_set(err, RK_ENOMEM, "%s: out of memory", name);
	p->samples = v;
	*cap = ncap;
	return 0;
}

/* ---- the artifact pair ------------------------------------------------------ */

enum cfg_col { K_NODES, K_GPUS, K_PSIZE, K_BSZ, K_SEQHID, K_THREADS, K_ZERO, K_TP, K_PP, K_NCFG };
static const char *const cfg_names[K_NCFG] = {
	"nodes", "gpus", "parameter_size", "batch_size", "seq_hid",
	"num_cpu_threads", "zero_type", "is_tp", "is_pp",
};
enum dat_col { D_FWD, D_TCC, D_TOPT, D_ITER, D_STRAT, D_NDAT };
static const char *const dat_names[D_NDAT] = {
	"forward_time", "Tcc", "Topt", "iter_time", "strategy",
};

static int header(const struct rk_csv *c, const char *name, const char *const *names, int n,
		  int *idx, struct rk_error *err)
{
	int rc = rk_csv_header(c, name, names, n, idx, "", err);
	if (rc < 0)
		return rc;
	for (int k = 0; k < n; k++)
		if (idx[k] < 0)
			return rk_error_set(err, RK_EINVAL, "%s:%d:1: missing column '%s'", name,
					    c->line, names[k]);
	return 0;
}

/* One config row + data row into a sample. */
static int artifact_row(const struct rk_csv *cc, const int *ci, const char *cname,
			const struct rk_csv *dc, const int *di, const char *dname,
			int global_batch, struct rk_profile *p, struct rk_perf_sample *s,
			struct rk_error *err)
{
	long nodes, gpus, threads, zero, is_tp, is_pp;
	double psize, bsz, seqhid, v[4];
	int rc;
	if (cc->n != K_NCFG)
		return rk_error_set(err, RK_EINVAL, "%s:%d:1: %d fields, the header has %d", cname,
				    cc->line, cc->n, K_NCFG);
	if (dc->n != D_NDAT)
		return rk_error_set(err, RK_EINVAL, "%s:%d:1: %d fields, the header has %d", dname,
				    dc->line, dc->n, D_NDAT);
	if ((rc = rk_csv_int(cc, ci[K_NODES], cname, "nodes", 1, RK_PLACEMENT_MAX_NODES, &nodes,
			     err)) < 0 ||
	    (rc = rk_csv_int(cc, ci[K_GPUS], cname, "gpus", 1, 1024, &gpus, err)) < 0 ||
	    (rc = rk_csv_double(cc, ci[K_PSIZE], cname, "parameter_size", &psize, err)) < 0 ||
	    (rc = rk_csv_double(cc, ci[K_BSZ], cname, "batch_size", &bsz, err)) < 0 ||
	    (rc = rk_csv_double(cc, ci[K_SEQHID], cname, "seq_hid", &seqhid, err)) < 0 ||
	    (rc = rk_csv_int(cc, ci[K_THREADS], cname, "num_cpu_threads", 1, 1024, &threads,
			     err)) < 0 ||
	    (rc = rk_csv_int(cc, ci[K_ZERO], cname, "zero_type", 0, 2, &zero, err)) < 0 ||
	    (rc = rk_csv_int(cc, ci[K_TP], cname, "is_tp", 0, 1, &is_tp, err)) < 0 ||
	    (rc = rk_csv_int(cc, ci[K_PP], cname, "is_pp", 0, 1, &is_pp, err)) < 0)
		return rc;
	if (is_tp || is_pp)
		return rk_error_set(err, RK_EINVAL,
				    "%s:%d:%d: tensor/pipeline-parallel profile rows are not "
				    "supported (the format does not record their degrees)",
				    cname, cc->line, cc->col[ci[is_tp ? K_TP : K_PP]]);
	if (p->n == 0) {
		p->param_mi = psize;
		p->seq_hid = seqhid;
	} else if (fabs(psize - p->param_mi) > 1e-6 * p->param_mi) {
		return rk_error_set(err, RK_EINVAL,
				    "%s:%d:%d: parameter_size %g differs from the first row's %g "
				    "(one profile describes one model)",
				    cname, cc->line, cc->col[ci[K_PSIZE]], psize, p->param_mi);
	} else if (fabs(seqhid - p->seq_hid) > 1e-6 * p->seq_hid) {
		return rk_error_set(err, RK_EINVAL, "%s:%d:%d: seq_hid %g differs from the first "
				    "row's %g", cname, cc->line, cc->col[ci[K_SEQHID]], seqhid,
				    p->seq_hid);
	}
	static const char *const what[4] = {"forward_time", "Tcc", "Topt", "iter_time"};
	for (int k = 0; k < 4; k++)
		if ((rc = rk_csv_double(dc, di[k], dname, what[k], &v[k], err)) < 0)
			return rc;
	if (v[3] <= 0)
		return rk_error_set(err, RK_ERANGE, "%s:%d:%d: iter_time must be > 0", dname,
				    dc->line, dc->col[di[D_ITER]]);
	const char *st = dc->field[di[D_STRAT]];
	if (strlen(st) != 4 || strspn(st, "0123456789") != 4)
		return rk_error_set(err, RK_EINVAL,
				    "%s:%d:%d: strategy '%s' is not 4 digits (alpha_f alpha_b "
				    "alpha_c zero_type)",
				    dname, dc->line, dc->col[di[D_STRAT]], st);
	if (st[0] != '1' && st[0] != '2')
		return rk_error_set(err, RK_EINVAL,
				    "%s:%d:%d: strategy '%s': alpha_f must be 1 (no recompute) or "
				    "2 (checkpointing)",
				    dname, dc->line, dc->col[di[D_STRAT]], st);
	if (st[3] - '0' != zero)
		return rk_error_set(err, RK_EINVAL,
				    "%s:%d:%d: strategy '%s' says zero_type %c but the config "
				    "row (%s:%d) says %ld",
				    dname, dc->line, dc->col[di[D_STRAT]] + 3, st, st[3], cname,
				    cc->line, zero);
	long g = nodes * gpus;
	if (global_batch < 1 || global_batch % g)
		return rk_error_set(err, RK_EINVAL,
				    "%s:%d:%d: %ld GPUs do not divide the global batch %d", cname,
				    cc->line, cc->col[ci[K_GPUS]], g, global_batch);
	memset(s, 0, sizeof(*s));
	s->plan = (struct rk_plan){.dp = (int)g, .tp = 1, .pp = 1, .mb = global_batch / (int)g,
				   .ga = 1, .gc = st[0] == '2'};
	/* §1.2: zero_type 1 = ZeRO-Offload, 2 = ZeRO-DP (DeepSpeed stage 2 in both). */
	if (zero == 1)
		s->plan.zero = 2, s->plan.offload = 1;
	else if (zero == 2)
		s->plan.zero = 2;
	s->placement.n_nodes = (int)nodes;
	for (int i = 0; i < nodes; i++)
		s->placement.gpus[i] = (int)gpus;
	s->cpus_per_gpu = (int)threads;
	s->fwd_ms = v[0] > 0 ? v[0] : -1;
	s->sync_ms = v[1] > 0 ? v[1] : -1;
	s->opt_ms = v[2] > 0 ? v[2] : -1;
	s->iter_ms = v[3];
	s->line = dc->line;
	return 0;
}

int rk_profile_parse_artifact(const char *config, size_t config_len, const char *config_name,
			      const char *data, size_t data_len, const char *data_name,
			      int global_batch, struct rk_profile *out, struct rk_error *err)
{
	struct rk_csv cc, dc;
	int ci[K_NCFG], di[D_NDAT];
	int rc, cap = 0;
	struct rk_profile p = {0};
	if (!config_name)
		config_name = "<config.csv>";
	if (!data_name)
		data_name = "<data.csv>";
	if (!out)
		return rk_error_set(err, RK_EINVAL, "%s: no output", config_name);
	memset(out, 0, sizeof(*out));
	if (global_batch < 1)
		return rk_error_set(err, RK_EINVAL, "%s: global batch %d must be >= 1", config_name,
				    global_batch);
	rk_csv_init(&cc, config, config_len, ',');
	rk_csv_init(&dc, data, data_len, ',');
	if ((rc = rk_csv_next(&cc, 0, config_name, err)) <= 0)
		return rc < 0 ? rc : rk_error_set(err, RK_EINVAL, "%s:1:1: empty file", config_name);
	if ((rc = header(&cc, config_name, cfg_names, K_NCFG, ci, err)) < 0)
		return rc;
	if ((rc = rk_csv_next(&dc, 0, data_name, err)) <= 0)
		return rc < 0 ? rc : rk_error_set(err, RK_EINVAL, "%s:1:1: empty file", data_name);
	if ((rc = header(&dc, data_name, dat_names, D_NDAT, di, err)) < 0)
		return rc;
	p.global_batch = global_batch;
	for (;;) {
		int a = rk_csv_next(&cc, 0, config_name, err);
		if (a < 0) {
			rc = a;
			goto fail;
		}
		int b = rk_csv_next(&dc, 0, data_name, err);
		if (b < 0) {
			rc = b;
			goto fail;
		}
		if (!a && !b)
			break;
		if (!a || !b) {
			rc = rk_error_set(err, RK_EINVAL,
					  "%s:%d:1: row count differs: %s has %d data rows, %s has "
					  "more",
					  a ? data_name : config_name, a ? dc.line + 1 : cc.line + 1,
					  a ? data_name : config_name, p.n, a ? config_name : data_name);
			goto fail;
		}
		if ((rc = grow(&p, &cap, config_name, err)) < 0)
			goto fail;
		if ((rc = artifact_row(&cc, ci, config_name, &dc, di, data_name, global_batch, &p,
				       &p.samples[p.n], err)) < 0)
			goto fail;
		p.n++;
	}
	if (p.n == 0) {
		rc = rk_error_set(err, RK_EINVAL, "%s:2:1: no data rows", config_name);
		goto fail;
	}
	*out = p;
	return 0;
fail:
	free(p.samples);
	return rc;
}

/* ---- rubick's own format ------------------------------------------------------ */

/* A phase value: a number >= 0, or '-' for "not measured" (stored as -1). */
static int phase(const struct rk_csv *c, int i, const char *name, const char *what, double *out,
		 struct rk_error *err)
{
	if (!strcmp(c->field[i], "-")) {
		*out = -1;
		return 0;
	}
	return rk_csv_double(c, i, name, what, out, err);
}

static int native_key(const struct rk_csv *c, const char *name, struct rk_profile *p,
		      int *have_batch, struct rk_error *err)
{
	/* "key = value" arrives as 3 fields, "key=value" as 1 */
	char key[RK_CSV_FIELD_MAX], val[RK_CSV_FIELD_MAX];
	int vcol;
	if (c->n == 3 && !strcmp(c->field[1], "=")) {
		snprintf(key, sizeof(key), "%s", c->field[0]);
		snprintf(val, sizeof(val), "%s", c->field[2]);
		vcol = c->col[2];
	} else if (c->n == 1 && strchr(c->field[0], '=')) {
		const char *eq = strchr(c->field[0], '=');
		snprintf(key, sizeof(key), "%.*s", (int)(eq - c->field[0]), c->field[0]);
		snprintf(val, sizeof(val), "%s", eq + 1);
		vcol = c->col[0] + (int)(eq - c->field[0]) + 1;
	} else {
		return rk_error_set(err, RK_EINVAL, "%s:%d:%d: expected 'key = value'", name,
				    c->line, c->col[0]);
	}
	struct rk_csv one = *c; /* reuse the number parsers on the value */
	one.n = 1;
	snprintf(one.field[0], sizeof(one.field[0]), "%s", val);
	one.col[0] = vcol;
	if (!strcmp(key, "model")) {
		size_t vl = strlen(val);
		if (!vl || vl >= RK_MODEL_NAME_MAX)
			return rk_error_set(err, RK_EINVAL, "%s:%d:%d: model: name must be 1..%d "
					    "characters", name, c->line, vcol, RK_MODEL_NAME_MAX - 1);
		memcpy(p->model, val, vl + 1);
		return 0;
	}
	if (!strcmp(key, "global_batch")) {
		long v;
		int rc = rk_csv_int(&one, 0, name, "global_batch", 1, 1 << 24, &v, err);
		if (rc < 0)
			return rc;
		p->global_batch = (int)v;
		*have_batch = 1;
		return 0;
	}
	if (!strcmp(key, "param_mi"))
		return rk_csv_double(&one, 0, name, "param_mi", &p->param_mi, err);
	if (!strcmp(key, "seq_hid"))
		return rk_csv_double(&one, 0, name, "seq_hid", &p->seq_hid, err);
	return rk_error_set(err, RK_EINVAL,
			    "%s:%d:%d: unknown key '%s' (model, global_batch, param_mi, seq_hid)",
			    name, c->line, c->col[0], key);
}

static int native_row(const struct rk_csv *c, const char *name, const struct rk_profile *p,
		      struct rk_perf_sample *s, struct rk_error *err)
{
	int rc;
	long cpus;
	if (c->n != 7)
		return rk_error_set(err, RK_EINVAL,
				    "%s:%d:%d: %d fields; a sample is: plan placement "
				    "cpus_per_gpu fwd_ms sync_ms opt_ms iter_ms",
				    name, c->line, c->n > 7 ? c->col[7] : 1, c->n);
	memset(s, 0, sizeof(*s));
	struct rk_error e2;
	char where[256];
	snprintf(where, sizeof(where), "%s:%d", name, c->line);
	if ((rc = rk_plan_parse(c->field[0], where, &s->plan, &e2)) < 0)
		return rk_error_set(err, rc, "%s (plan at column %d)", e2.msg, c->col[0]);
	if ((rc = rk_placement_parse(c->field[1], where, &s->placement, &e2)) < 0)
		return rk_error_set(err, rc, "%s (placement at column %d)", e2.msg, c->col[1]);
	if ((rc = rk_csv_int(c, 2, name, "cpus_per_gpu", 1, 1024, &cpus, err)) < 0)
		return rc;
	s->cpus_per_gpu = (int)cpus;
	if ((rc = phase(c, 3, name, "fwd_ms", &s->fwd_ms, err)) < 0 ||
	    (rc = phase(c, 4, name, "sync_ms", &s->sync_ms, err)) < 0 ||
	    (rc = phase(c, 5, name, "opt_ms", &s->opt_ms, err)) < 0 ||
	    (rc = rk_csv_double(c, 6, name, "iter_ms", &s->iter_ms, err)) < 0)
		return rc;
	if (s->iter_ms <= 0)
		return rk_error_set(err, RK_ERANGE, "%s:%d:%d: iter_ms must be > 0", name, c->line,
				    c->col[6]);
	int g = rk_placement_total(&s->placement);
	if ((long)s->plan.dp * s->plan.tp * s->plan.pp != g)
		return rk_error_set(err, RK_EINVAL,
				    "%s:%d:%d: plan uses dp*tp*pp = %ld GPUs, the placement has %d",
				    name, c->line, c->col[1], (long)s->plan.dp * s->plan.tp * s->plan.pp,
				    g);
	if ((long)s->plan.dp * s->plan.mb * s->plan.ga != p->global_batch)
		return rk_error_set(err, RK_EINVAL,
				    "%s:%d:%d: plan runs dp*mb*ga = %ld samples, global_batch is %d",
				    name, c->line, c->col[0],
				    (long)s->plan.dp * s->plan.mb * s->plan.ga, p->global_batch);
	s->line = c->line;
	return 0;
}

int rk_profile_parse(const char *text, size_t len, const char *name, struct rk_profile *out,
		     struct rk_error *err)
{
	struct rk_csv c;
	struct rk_profile p = {0};
	int rc, cap = 0, have_batch = 0;
	if (!name)
		name = "<profile>";
	if (!out)
		return rk_error_set(err, RK_EINVAL, "%s: no output", name);
	memset(out, 0, sizeof(*out));
	rk_csv_init(&c, text, len, ' ');
	while ((rc = rk_csv_next(&c, 1, name, err)) > 0) {
		int is_key = (c.n == 3 && !strcmp(c.field[1], "=")) ||
			     (c.n == 1 && strchr(c.field[0], '=') && !strchr(c.field[0], ','));
		if (is_key) {
			if (p.n > 0) {
				rc = rk_error_set(err, RK_EINVAL,
						  "%s:%d:%d: keys come before the samples", name,
						  c.line, c.col[0]);
				goto fail;
			}
			if ((rc = native_key(&c, name, &p, &have_batch, err)) < 0)
				goto fail;
			continue;
		}
		if (!have_batch) {
			rc = rk_error_set(err, RK_EINVAL,
					  "%s:%d:1: 'global_batch = N' must come before the samples",
					  name, c.line);
			goto fail;
		}
		if ((rc = grow(&p, &cap, name, err)) < 0)
			goto fail;
		if ((rc = native_row(&c, name, &p, &p.samples[p.n], err)) < 0)
			goto fail;
		p.n++;
	}
	if (rc < 0)
		goto fail;
	if (p.n == 0) {
		rc = rk_error_set(err, RK_EINVAL, "%s:%d:1: no samples", name, c.line + 1);
		goto fail;
	}
	*out = p;
	return 0;
fail:
	free(p.samples);
	return rc;
}
