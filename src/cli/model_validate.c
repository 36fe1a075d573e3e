/*
 * `rubick model validate` driver (model_validate.h): pairs measured tables
 * with profiles, fits, predicts and scores. Trap handling and pairing rules
 * are documented in docs/perf-model.md.
 */
#include "cli/model_validate.h"
#include "cli/model_validate_internal.h"

#include "cli/util.h"
#include "rubick/measured.h"
#include "rubick/memory.h"
#include "rubick/plan.h"
#include "rubick/profile.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MIB (1024.0 * 1024.0)
/* A profile whose parameter count differs more than this from its model's
 * is not that model's profile (the LLaMA-30B trap). */
#define PARAM_MISMATCH 0.15

void rk_validate_opts_default(struct rk_validate_opts *o)
{
	memset(o, 0, sizeof(*o));
	rk_perf_env_a800(&o->env);
	o->cpus_per_gpu = 4;          /* the profiles' num_cpu_threads for offload runs */
	o->gpu_mem_mb = 80 * 1024;    /* A800 80 GB */
	o->seed = 1;
}

void rk_validate_fini(struct rk_validate *v)
{
	if (!v)
		return;
	free(v->rows);
	free(v->inputs);
	free(v->fits);
	memset(v, 0, sizeof(*v));
}

static struct rk_validate_row *add_row(struct rk_validate *v)
{
	if (v->n_rows == v->cap_rows) {
		int ncap = v->cap_rows ? 2 * v->cap_rows : 256;
		void *p = realloc(v->rows, (size_t)ncap * sizeof(*v->rows));
		if (!p)
			return NULL;
		v->rows = p;
		p = realloc(v->inputs, (size_t)ncap * sizeof(*v->inputs));
		if (!p)
			return NULL;
		v->inputs = p;
		v->cap_rows = ncap;
	}
	memset(&v->inputs[v->n_rows], 0, sizeof(v->inputs[0]));
	struct rk_validate_row *r = &v->rows[v->n_rows++];
	memset(r, 0, sizeof(*r));
	return r;
}

static struct rk_validate_fit *add_fit(struct rk_validate *v)
{
	if (v->n_fits == v->cap_fits) {
		int ncap = v->cap_fits ? 2 * v->cap_fits : 16;
		void *p = realloc(v->fits, (size_t)ncap * sizeof(*v->fits));
		if (!p)
			return NULL;
		v->fits = p;
		v->cap_fits = ncap;
	}
	struct rk_validate_fit *f = &v->fits[v->n_fits++];
	memset(f, 0, sizeof(*f));
	return f;
}

/* Last path component of the folder holding `path` ("a/b/c.csv" -> "b"). */
static void parent_name(const char *path, char *out, size_t cap)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", path);
	char *slash = strrchr(buf, '/');
	if (!slash) {
		snprintf(out, cap, ".");
		return;
	}
	*slash = '\0';
	char *prev = strrchr(buf, '/');
	const char *src = prev ? prev + 1 : buf;
	size_t n = strlen(src);
	if (n >= cap)
		n = cap - 1;
	memcpy(out, src, n);
	out[n] = '\0';
}

static void base_name(const char *path, char *out, size_t cap)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", path);
	size_t n = strlen(buf);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	char *s = strrchr(buf, '/');
	snprintf(out, cap, "%s", s ? s + 1 : buf);
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Read the profile at `path` for model `src` (artifact pair or rubick format). */
static int load_profile(const char *path, const struct rk_model *src, struct rk_profile *p,
			struct rk_error *err)
{
	char cfg[1200], dat[1200];
	char *ct = NULL, *dt = NULL;
	size_t cl = 0, dl = 0;
	int rc;
	if (is_dir(path)) {
		snprintf(cfg, sizeof(cfg), "%s/config.csv", path);
		snprintf(dat, sizeof(dat), "%s/data.csv", path);
		if ((rc = rk_cli_read_file(cfg, &ct, &cl, err)) < 0)
			return rc;
		if ((rc = rk_cli_read_file(dat, &dt, &dl, err)) < 0) {
			free(ct);
			return rc;
		}
		rc = rk_profile_parse_artifact(ct, cl, cfg, dt, dl, dat, src->global_batch, p, err);
		free(ct);
		free(dt);
		return rc;
	}
	if ((rc = rk_cli_read_file(path, &ct, &cl, err)) < 0)
		return rc;
	rc = rk_profile_parse(ct, cl, path, p, err);
	free(ct);
	return rc;
}

/* splitmix64 (Steele et al., OOPSLA'14): the seeded generator of --seed. */
static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int family_of(const struct rk_plan *p, const struct rk_placement *pl)
{
	if (p->tp > 1 || p->pp > 1)
		return RK_VF_3D;
	return pl->n_nodes > 1 ? RK_VF_DP_MULTI : RK_VF_DP_SINGLE;
}

/*
 * Pick the model the profile's samples belong to. The profile's stated
 * parameter count must match its model's; when it does not (LLaMA-30B's
 * profile is a copy of LLaMA-7B's) the samples are attributed to the zoo
 * model whose parameter count matches, and the target is derived from it.
 */
static int profile_source(const struct rk_zoo *zoo, const struct rk_model *named,
			  const struct rk_profile *p, const char *path, const struct rk_model **src,
			  struct rk_validate_fit *f, struct rk_error *err)
{
	*src = named;
	if (!(p->param_mi > 0))
		return 0;
	double mi = named->params / MIB;
	if (fabs(p->param_mi - mi) <= PARAM_MISMATCH * mi)
		return 0;
	const struct rk_model *best = NULL;
	double best_d = PARAM_MISMATCH;
	for (size_t i = 0; i < zoo->n_models; i++) {
		double zm = zoo->models[i].params / MIB;
		double d = fabs(p->param_mi - zm) / zm;
		if (d <= best_d)
			best = &zoo->models[i], best_d = d;
	}
	if (!best)
		return rk_error_set(err, RK_EINVAL,
				    "%s: the profile states %.0f Mi parameters but model '%s' has "
				    "%.0f Mi, and no zoo model matches it",
				    path, p->param_mi, named->name, mi);
	rk_validate_note(f, "profile %s states %.0f Mi parameters, not %s's %.0f Mi: it is not %s's "
		"profile; its runs match %s and are fitted as %s",
	     path, p->param_mi, named->name, mi, named->name, best->name, best->name);
	*src = best;
	return 0;
}

/* Measured row -> plan (artifact name) and, for training, a sample. */
static int row_plan(const struct rk_measured_row *mr, const char *mpath,
		    const struct rk_model *m, int batch, const struct rk_validate_opts *o,
		    struct rk_plan *plan, struct rk_plan *alt, char *reason, size_t cap)
{
	struct rk_error e;
	char nm[1200];
	snprintf(nm, sizeof(nm), "%s:%d", mpath, mr->line);
	if (rk_plan_from_artifact(mr->plan, nm, m, batch, &mr->placement, o->gpu_mem_mb, plan,
				  &e) < 0) {
		snprintf(reason, cap, "%.200s", e.msg);
		return -1;
	}
	/* The measured 3D runs take one micro-batch per replica per iteration:
	 * their time is flat in the pipeline depth (gpt2 251/351/451/651/851,
	 * t5 181/281/481/881 within 10-25%), which a pipeline of B/dp
	 * micro-batches of 1 would not be (docs/perf-model.md). */
	*alt = *plan; /* the reader's choice: micro-batches of 1 (training protocol) */
	if (plan->tp > 1 || plan->pp > 1) {
		plan->mb = plan->mb * plan->ga;
		plan->ga = 1;
	}
	return 0;
}

/* lcm(1..16): divisible by any GPU count a profile row may have, so the
 * profile can be read before its model (and so its batch) is known. */
#define ANY_BATCH 720720

static int fit_profile(const struct rk_zoo *zoo, const char *ppath, const struct rk_model *target,
		       const struct rk_validate_opts *o, struct rk_validate_fit *f,
		       struct rk_model *tgt, struct rk_profile *keep, struct rk_error *err)
{
	char pname[256];
	struct rk_profile peek, p;
	int rc;
	base_name(ppath, pname, sizeof(pname));
	const struct rk_model *named = rk_zoo_find(zoo, pname);
	if (!named)
		named = target;
	if ((rc = load_profile(ppath, &(struct rk_model){.global_batch = ANY_BATCH}, &peek, err)) < 0)
		return rc;
	const struct rk_model *src = NULL;
	rc = profile_source(zoo, named, &peek, ppath, &src, f, err);
	rk_profile_fini(&peek);
	if (rc < 0)
		return rc;
	if ((rc = load_profile(ppath, src, &p, err)) < 0)
		return rc;
	snprintf(f->source, sizeof(f->source), "%s", src->name);
	rc = rk_perf_fit(src, &o->env, p.samples, p.n, NULL, &f->fit, err);
	if (rc < 0) {
		rk_profile_fini(&p);
		return rk_error_prefix(err, "%s", ppath);
	}
	for (int i = 0; i < f->fit.n_fwd_rejected; i++)
		rk_validate_note(f, "%s: data.csv line %d: forward_time %.0f ms rejected as an outlier (the other "
			"runs predict %.0f ms there); its other columns are kept",
		     ppath, p.samples[f->fit.fwd_rejected[i]].line, f->fit.fwd_rejected_ms[i],
		     f->fit.fwd_expected_ms[i]);
	for (int i = 0; i < f->fit.n_phase_ignored; i++)
		rk_validate_note(f, "%s: data.csv line %d: optimizer phase %.1f ms is below what any optimizer "
			"needs for its parameters: the run booked it elsewhere, so its phase split is "
			"ignored (forward and iteration time kept)",
		     ppath, p.samples[f->fit.phase_ignored[i]].line,
		     p.samples[f->fit.phase_ignored[i]].opt_ms);
	int same = src == target || !strcmp(src->name, target->name);
	if (keep && same)
		*keep = p; /* the training protocol refits on these runs too */
	else
		rk_profile_fini(&p);
	double src_fwd = f->fit.fwd_ms > 0 ? f->fit.fwd_ms : src->fwd_ms;
	tgt->perf = f->fit.k;
	tgt->perf_fitted = 1;
	if (same) {
		if (src_fwd > 0)
			tgt->fwd_ms = src_fwd;
		return 0;
	}
	/* Transfer to a model without its own profile: same parameters, forward
	 * time from the target's own measured value when the zoo has one, else
	 * scaled by the forward FLOPs of the two structures. */
	if (target->fwd_ms > 0) {
		tgt->fwd_ms = target->fwd_ms;
		rk_validate_note(f, "%s has no profile of its own: parameters fitted on %s's runs, forward time "
			"%.0f ms from the zoo",
		     target->name, src->name, target->fwd_ms);
	} else if (src_fwd > 0) {
		double ratio = rk_perf_fwd_flops(target) / rk_perf_fwd_flops(src) * target->global_batch /
			       src->global_batch;
		tgt->fwd_ms = src_fwd * ratio;
		tgt->perf.fwd_fixed_ms = f->fit.k.fwd_fixed_ms * target->layers / src->layers;
		rk_validate_note(f, "%s has no profile of its own: parameters fitted on %s's runs, forward time "
			"%.0f ms = %s's %.0f ms x %.3f (forward FLOPs of the structures x batch)",
		     target->name, src->name, tgt->fwd_ms, src->name, src_fwd, ratio);
	} else {
		return rk_error_set(err, RK_EINVAL, "%s: no forward time for %s or %s", ppath,
				    src->name, target->name);
	}
	return 0;
}

int rk_validate_dataset(struct rk_validate *v, const struct rk_zoo *zoo, const char *ppath,
			const char *mpath, const char *model_name, const struct rk_validate_opts *o,
			struct rk_error *err)
{
	char dataset[32];
	int rc, batch = 0;
	const struct rk_model *target = NULL;
	char *text = NULL;
	size_t len = 0;
	struct rk_measured t = {0};
	struct rk_profile prof = {0};
	unsigned char *is_train = NULL;
	struct rk_plan *plans = NULL, *alt = NULL;
	char (*reasons)[256] = NULL;

	if (model_name)
		snprintf(dataset, sizeof(dataset), "%s", model_name);
	else
		parent_name(mpath, dataset, sizeof(dataset));
	if ((rc = rk_zoo_resolve(zoo, dataset, &target, &batch, err)) < 0)
		return rk_error_prefix(err, "%s", mpath);
	if ((rc = rk_cli_read_file(mpath, &text, &len, err)) < 0)
		return rc;
	rc = rk_measured_parse(text, len, mpath, &t, err);
	free(text);
	if (rc < 0)
		return rc;
	struct rk_validate_fit *f = add_fit(v);
	if (!f) {
		rc = rk_error_set(err, RK_ENOMEM, "out of memory");
		goto out;
	}
	snprintf(f->dataset, sizeof(f->dataset), "%s", dataset);
	snprintf(f->target, sizeof(f->target), "%s", target->name);
	struct rk_model tgt = *target;
	int have_fit = 0;
	if (ppath) {
		if ((rc = fit_profile(zoo, ppath, target, o, f, &tgt, &prof, err)) < 0)
			goto out;
		have_fit = 1;
	}
	if (t.n_phases_in_s)
		rk_validate_note(f, "%s: %d of %d rows have their phase columns in seconds (read as such)",
		     mpath, t.n_phases_in_s, t.n_rows);

	plans = calloc((size_t)t.n_rows, sizeof(*plans));
	alt = calloc((size_t)t.n_rows, sizeof(*alt));
	reasons = calloc((size_t)t.n_rows, sizeof(*reasons));
	is_train = calloc((size_t)t.n_rows, 1);
	if (!plans || !alt || !reasons || !is_train) {
		rc = rk_error_set(err, RK_ENOMEM, "out of memory");
		goto out;
	}
	int n_ok = 0;
	for (int i = 0; i < t.n_rows; i++) {
		const struct rk_measured_row *mr = &t.rows[i];
		if (mr->failed) {
			snprintf(reasons[i], sizeof(reasons[i]),
				 "iter_time = 0: failed run (out of memory), nothing to compare");
			continue;
		}
		if (row_plan(mr, mpath, target, batch, o, &plans[i], &alt[i], reasons[i],
			     sizeof(reasons[i])) < 0)
			continue;
		n_ok++;
	}
	if (o->train_fraction > 0) {
		/* Seeded shuffle of the usable rows; the first fraction trains. */
		int *idx = malloc(sizeof(int) * (size_t)(n_ok ? n_ok : 1));
		if (!idx) {
			rc = rk_error_set(err, RK_ENOMEM, "out of memory");
			goto out;
		}
		int k = 0;
		for (int i = 0; i < t.n_rows; i++)
			if (!reasons[i][0])
				idx[k++] = i;
		uint64_t s = o->seed ^ name_hash(dataset);
		for (int i = k - 1; i > 0; i--) {
			int j = (int)(splitmix(&s) % (uint64_t)(i + 1));
			int tmp = idx[i];
			idx[i] = idx[j], idx[j] = tmp;
		}
		int n_train = (int)lround(o->train_fraction * k);
		if (n_train < 1 && k > 0)
			n_train = 1;
		for (int i = 0; i < n_train; i++)
			is_train[idx[i]] = 1;
		free(idx);
		if (n_train > 0 && have_fit)
			rk_validate_choose_microbatching(&t, plans, alt, is_train, o, &tgt, f);
		if (n_train > 0) {
			rc = rk_validate_train_refit(&t, plans, is_train, &prof, mpath, o, ppath != NULL,
					 have_fit, &tgt, f, err);
			if (rc < 0)
				goto out;
			have_fit = 1;
			rk_validate_note(f, "refit on %d of %d usable measured rows (seed %llu), %s", n_train, k,
			     (unsigned long long)o->seed,
			     ppath ? "warm-started from the profile fit" : "cold start");
		}
	}
	if (!have_fit) {
		rc = rk_error_set(err, RK_EINVAL,
				  "%s: nothing to fit: give --profile DIR or --train-fraction F", mpath);
		goto out;
	}
	f->fwd_ms = tgt.fwd_ms;
	f->model = tgt;
	int fit_index = (int)(f - v->fits);
	int first = v->n_rows;
	for (int i = 0; i < t.n_rows; i++) {
		const struct rk_measured_row *mr = &t.rows[i];
		struct rk_validate_row *r = add_row(v);
		if (!r) {
			rc = rk_error_set(err, RK_ENOMEM, "out of memory");
			goto out;
		}
		snprintf(r->dataset, sizeof(r->dataset), "%s", dataset);
		r->line = mr->line;
		snprintf(r->plan, sizeof(r->plan), "%s", mr->plan);
		rk_placement_format(&mr->placement, r->placement, sizeof(r->placement));
		r->meas_ms = mr->iter_s * 1000.0;
		r->n_nodes = mr->placement.n_nodes;
		r->fit = fit_index;
		if (reasons[i][0]) {
			r->skipped = 1;
			snprintf(r->reason, sizeof(r->reason), "%s", reasons[i]);
			continue;
		}
		rk_plan_format(&plans[i], r->canon, sizeof(r->canon));
		r->family = family_of(&plans[i], &mr->placement);
		r->train = is_train[i];
		int cpus = mr->cpu_threads > 0 ? mr->cpu_threads : o->cpus_per_gpu;
		struct rk_validate_input *in = &v->inputs[v->n_rows - 1];
		in->plan = plans[i];
		in->placement = mr->placement;
		in->cpus = cpus;
		int prc = rk_perf_predict(&tgt, &tgt.perf, &o->env, &plans[i], &mr->placement, cpus,
					  &r->pred_ms);
		if (prc < 0) {
			r->skipped = 1;
			snprintf(r->reason, sizeof(r->reason), "prediction failed: %s",
				 rk_strerror(prc));
			continue;
		}
		r->ape = fabs(r->pred_ms - r->meas_ms) / r->meas_ms;
		r->cls = rk_validate_placement_class(&plans[i], &mr->placement);
	}
	if (o->train_fraction > 0)
		rk_validate_class_scales(v, first, f);
	for (int i = first; i < v->n_rows; i++) {
		v->rows[i].pred0_ms = v->rows[i].pred_ms;
		v->rows[i].ape0 = v->rows[i].ape;
	}
	rc = 0;
out:
	free(plans);
	free(alt);
	free(reasons);
	free(is_train);
	rk_profile_fini(&prof);
	rk_measured_fini(&t);
	return rc;
}

/* Profile folder for a measured folder (docs/perf-model.md): the profile
 * folder that names the same zoo model, else the one that names the model
 * its name prefix before '_' names (t5_3B -> t5). */
static int find_profile(const struct rk_zoo *zoo, const char *pdir, const struct rk_model *m,
			const char *dataset, char *out, size_t cap)
{
	DIR *d = opendir(pdir);
	if (!d)
		return 0;
	struct dirent *e;
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "%s", dataset);
	char *us = strchr(prefix, '_');
	if (us)
		*us = '\0';
	const struct rk_model *pm = rk_zoo_find(zoo, prefix);
	char best[2][256] = {"", ""};
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char full[1400];
		snprintf(full, sizeof(full), "%.1000s/%.255s", pdir, e->d_name);
		if (!is_dir(full))
			continue;
		const struct rk_model *zm = rk_zoo_find(zoo, e->d_name);
		if (!zm)
			continue;
		int slot = zm == m ? 0 : (pm && zm == pm && pm != m) ? 1 : -1;
		/* lowest name wins: readdir order is not deterministic */
		if (slot >= 0 && (!best[slot][0] || strcmp(e->d_name, best[slot]) < 0))
			snprintf(best[slot], sizeof(best[slot]), "%s", e->d_name);
	}
	closedir(d);
	const char *pick = best[0][0] ? best[0] : best[1][0] ? best[1] : NULL;
	if (!pick)
		return 0;
	snprintf(out, cap, "%s/%s", pdir, pick);
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rk_validate_traces(struct rk_validate *v, const struct rk_zoo *zoo, const char *dir,
		       const struct rk_validate_opts *o, struct rk_error *err)
{
	char mdir[1024], pdir[1024];
	snprintf(mdir, sizeof(mdir), "%s/placements", dir);
	snprintf(pdir, sizeof(pdir), "%s/perf_model_profile", dir);
	DIR *d = opendir(mdir);
	if (!d)
		return rk_error_set(err, RK_EIO, "%s: cannot open (expected DIR/placements/<model>/)",
				    mdir);
	char *names[256];
	int n = 0, rc = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 256) {
		if (e->d_name[0] == '.')
			continue;
		names[n] = strdup(e->d_name);
		if (!names[n]) {
			closedir(d);
			rc = rk_error_set(err, RK_ENOMEM, "out of memory");
			goto out;
		}
		n++;
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), cmp_str);
	for (int i = 0; i < n; i++) {
		char mpath[1400], ppath[1400];
		snprintf(mpath, sizeof(mpath), "%s/%s/placements.csv", mdir, names[i]);
		struct stat st;
		if (stat(mpath, &st) != 0)
			continue;
		const struct rk_model *m = NULL;
		int batch;
		if ((rc = rk_zoo_resolve(zoo, names[i], &m, &batch, err)) < 0) {
			rk_error_prefix(err, "%s", mpath);
			goto out;
		}
		int have = find_profile(zoo, pdir, m, names[i], ppath, sizeof(ppath));
		if (!have && o->train_fraction <= 0) {
			rc = rk_error_set(err, RK_ENOTFOUND, "%s: no profile in %s for model '%s'",
					  mpath, pdir, m->name);
			goto out;
		}
		if ((rc = rk_validate_dataset(v, zoo, have ? ppath : NULL, mpath, names[i], o, err)) <
		    0)
			goto out;
	}
out:
	for (int i = 0; i < n; i++)
		free(names[i]);
	return rc;
}

int rk_validate_fit_only(struct rk_validate *v, const struct rk_zoo *zoo, const char *ppath,
			 const struct rk_model *model, const struct rk_validate_opts *o,
			 struct rk_error *err)
{
	struct rk_validate_fit *f = add_fit(v);
	if (!f)
		return rk_error_set(err, RK_ENOMEM, "out of memory");
	snprintf(f->dataset, sizeof(f->dataset), "%s", model->name);
	snprintf(f->target, sizeof(f->target), "%s", model->name);
	struct rk_model tgt = *model;
	int rc = fit_profile(zoo, ppath, model, o, f, &tgt, NULL, err);
	if (rc < 0) {
		v->n_fits--;
		return rc;
	}
	f->fwd_ms = tgt.fwd_ms;
	return 0;
}
