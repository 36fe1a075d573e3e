/*
 * Lookup rules 1-4 of oracle.h on one Rubick `placements.csv` table
 * (docs/references.md §6 D1: measured iteration time per plan family x placement
 * on the A800 testbed). Throughputs are compared as iterations per second;
 * the global batch is the same for every row of a table, so that is the
 * samples-per-second ratio as well. Where several rows tie, the answer is
 * their mean throughput (no row is preferred by file order).
 */
#include "sim/oracle/oracle_internal.h"

#include "rubick/perf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tables were measured on A800-80GB GPUs (traces/rubick/README.md): rule 4
 * rebuilds the plan the artifact ran for a family as the one fitting 80 GiB. */
#define TABLE_GPU_MEM_MB ((int64_t)80 * 1024)

struct query {
	const struct rubick_table *t;
	const char *fam;               /* family matched in the table, NULL if none */
	const struct rk_placement *pl; /* canonical */
	int g, n;                      /* GPUs, nodes */
	int cpus;                      /* CPU threads per GPU */
};

static int same_pl(const struct rk_placement *a, const struct rk_placement *b)
{
	if (a->n_nodes != b->n_nodes)
		return 0;
	for (int i = 0; i < a->n_nodes; i++)
		if (a->gpus[i] != b->gpus[i])
			return 0;
	return 1;
}

/* L1 distance between two canonical placements with the same node count. */
static int l1(const struct rk_placement *a, const struct rk_placement *b)
{
	int d = 0;
	for (int i = 0; i < a->n_nodes && i < b->n_nodes; i++)
		d += abs(a->gpus[i] - b->gpus[i]);
	return d;
}

/*
 * Tables with a cpu_threads column measure one point per thread count. For
 * `cpus` threads per GPU the row used is the one with exactly that many, else
 * the most threads not above it (fewer threads never run faster), else the
 * fewest measured.
 */
static int chosen_threads(const struct rubick_table *t, const struct rubick_row *r, int cpus)
{
	int exact = 0, below = 0, least = 0;
	for (int i = 0; i < t->n; i++) {
		const struct rubick_row *s = &t->rows[i];
		if (s->cpu_threads <= 0 || strcmp(s->family, r->family) || !same_pl(&s->pl, &r->pl))
			continue;
		if (s->cpu_threads == cpus)
			exact = cpus;
		if (s->cpu_threads <= cpus && s->cpu_threads > below)
			below = s->cpu_threads;
		if (least == 0 || s->cpu_threads < least)
			least = s->cpu_threads;
	}
	return exact ? exact : below ? below : least;
}

static int eligible(const struct query *q, const struct rubick_row *r)
{
	if (!q->t->has_cpu_threads || r->cpu_threads <= 0)
		return 1;
	return r->cpu_threads == chosen_threads(q->t, r, q->cpus);
}

static int infeasible(const struct query *q, const struct rk_job *job, const struct rubick_row *r,
		      struct rk_error *err)
{
	char buf[RK_PLACEMENT_TEXT_MAX];
	if (rk_placement_format(&r->pl, buf, sizeof(buf)) < 0)
		buf[0] = '\0';
	return rk_error_set(err, RK_EINFEASIBLE,
			    "job %lld (%s): plan family '%s' on placement %s failed (out of memory) "
			    "in the measured table %s:%d",
			    (long long)job->id, job->model->name, r->family, buf, q->t->file, r->line);
}

/*
 * Rules 1 and 2 share one shape: among the eligible rows of the family that
 * `match` accepts, keep those at the smallest distance; answer with the mean
 * throughput of the feasible ones, or fail as infeasible when all of them
 * failed. Returns 1 (answered), 0 (no such row) or RK_EINFEASIBLE.
 */
static int nearest_of(const struct query *q, const struct rk_job *job, int exact, double *iter_s,
		      struct rk_error *err)
{
	int best = -1, n_ok = 0;
	double sum_tput = 0.0;
	const struct rubick_row *failed = NULL, *one = NULL;
	for (int i = 0; i < q->t->n; i++) {
		const struct rubick_row *r = &q->t->rows[i];
		if (strcmp(r->family, q->fam) || r->gpus != q->g || r->pl.n_nodes != q->n ||
		    !eligible(q, r))
			continue;
		int d = l1(&r->pl, q->pl);
		if (exact && d != 0)
			continue;
		if (best >= 0 && d > best)
			continue;
		if (best < 0 || d < best) {
			best = d;
			n_ok = 0;
			sum_tput = 0.0;
			failed = NULL;
		}
		if (r->iter_s > 0.0) {
			sum_tput += 1.0 / r->iter_s;
			one = r;
			n_ok++;
		} else if (!failed) {
			failed = r;
		}
	}
	if (best < 0)
		return 0;
	if (n_ok == 0)
		return infeasible(q, job, failed, err);
	/* One row answers with its own value (1/(1/x) need not round back to x). */
	*iter_s = n_ok == 1 ? one->iter_s : (double)n_ok / sum_tput;
	return 1;
}

/* Mean throughput of the feasible rows at GPU count g with the node count closest to q->n. */
static double tput_at(const struct query *q, int g)
{
	int best = -1, n_ok = 0;
	double sum = 0.0;
	for (int i = 0; i < q->t->n; i++) {
		const struct rubick_row *r = &q->t->rows[i];
		if (strcmp(r->family, q->fam) || r->gpus != g || r->iter_s <= 0.0 || !eligible(q, r))
			continue;
		int d = abs(r->pl.n_nodes - q->n);
		if (best >= 0 && d > best)
			continue;
		if (best < 0 || d < best) {
			best = d;
			n_ok = 0;
			sum = 0.0;
		}
		sum += 1.0 / r->iter_s;
		n_ok++;
	}
	return n_ok ? sum / n_ok : 0.0;
}

/*
 * Rule 3: no row of the family at this GPU count; bracket it by the nearest
 * measured counts and interpolate log(throughput) linearly in the GPU count
 * (scaling is closer to geometric than additive). Returns 1 or 0.
 */
static int interp_gpus(const struct query *q, double *iter_s)
{
	int lo = 0, hi = 0;
	for (int i = 0; i < q->t->n; i++) {
		const struct rubick_row *r = &q->t->rows[i];
		if (strcmp(r->family, q->fam) || !eligible(q, r))
			continue;
		if (r->gpus == q->g)
			return 0; /* measured count, other node counts: rule 4 */
		if (r->iter_s <= 0.0)
			continue;
		if (r->gpus < q->g && r->gpus > lo)
			lo = r->gpus;
		if (r->gpus > q->g && (hi == 0 || r->gpus < hi))
			hi = r->gpus;
	}
	if (lo == 0 || hi == 0)
		return 0;
	double t_lo = tput_at(q, lo), t_hi = tput_at(q, hi);
	if (t_lo <= 0.0 || t_hi <= 0.0)
		return 0;
	double w = (double)(q->g - lo) / (double)(hi - lo);
	double lt = log(t_lo) + w * (log(t_hi) - log(t_lo));
	*iter_s = 1.0 / exp(lt);
	return 1;
}

/* Rule 4 orders reference points: nearest GPU count, then node count, then shape, then line. */
struct ref {
	int dg, dn, dl, line, idx;
};

static int ref_less(const struct ref *a, const struct ref *b)
{
	if (a->dg != b->dg)
		return a->dg < b->dg;
	if (a->dn != b->dn)
		return a->dn < b->dn;
	if (a->dl != b->dl)
		return a->dl < b->dl;
	return a->line < b->line;
}

/* Feasible eligible rows of `fam` (NULL = any family), sorted nearest first. OUT: *refs. */
static int collect_refs(const struct query *q, const char *fam, struct ref **refs)
{
	struct ref *v = malloc((size_t)(q->t->n > 0 ? q->t->n : 1) * sizeof(*v));
	if (!v)
		return RK_ENOMEM;
	int n = 0;
	for (int i = 0; i < q->t->n; i++) {
		const struct rubick_row *r = &q->t->rows[i];
		if ((fam && strcmp(r->family, fam)) || r->iter_s <= 0.0 || !eligible(q, r))
			continue;
		struct ref x = {abs(r->gpus - q->g), abs(r->pl.n_nodes - q->n),
				r->pl.n_nodes == q->n ? l1(&r->pl, q->pl) : 0, r->line, i};
		int j = n++;
		for (; j > 0 && ref_less(&x, &v[j - 1]); j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	*refs = v;
	return n;
}

/*
 * Rule 4: the model at the query times measured/model at the nearest measured
 * point it can predict (same family first, else any). Without a usable model
 * the nearest point of the same family answers as is (NEAREST_POINT).
 * Returns 0 with res filled, or a negative code.
 */
static int model_scaled(const struct rk_oracle *o, const struct query *q, const struct rk_job *job,
			const struct rk_plan *plan, struct rk_oracle_result *res,
			struct rk_error *err)
{
	const struct rk_model *m = job->model;
	int use_model = oracle_model_usable(o, m);
	for (int pass = 0; pass < 2; pass++) {
		const char *fam = pass == 0 ? q->fam : NULL;
		if (pass == 0 && !fam)
			continue;
		if (pass == 1 && !use_model)
			break;
		struct ref *refs = NULL;
		int n = collect_refs(q, fam, &refs);
		if (n < 0)
			return rk_error_set(err, RK_ENOMEM, "oracle: out of memory");
		if (!use_model) {
			if (n > 0) {
				res->iter_s = q->t->rows[refs[0].idx].iter_s;
				res->source = RK_ORACLE_SRC_NEAREST_POINT;
			}
			free(refs);
			if (n > 0)
				return 0;
			break;
		}
		double query_s = 0.0;
		int rc = n > 0 ? oracle_model_iter_s(o, m, plan, q->pl, q->cpus, &query_s, err) : 0;
		for (int k = 0; rc == 0 && k < n; k++) {
			const struct rubick_row *r = &q->t->rows[refs[k].idx];
			struct rk_plan rp;
			double ref_s = 0.0;
			if (rk_plan_from_artifact(r->family, q->t->file, m, job->global_batch, &r->pl,
						  TABLE_GPU_MEM_MB, &rp, NULL) != 0)
				continue;
			int cpus = r->cpu_threads > 0 ? r->cpu_threads : q->cpus;
			if (oracle_model_iter_s(o, m, &rp, &r->pl, cpus, &ref_s, NULL) != 0)
				continue;
			res->iter_s = query_s * r->iter_s / ref_s;
			res->source = RK_ORACLE_SRC_MODEL_SCALED;
			free(refs);
			return 0;
		}
		free(refs);
		if (rc) {
			rk_error_prefix(err, "job %lld", (long long)job->id);
			return rc;
		}
	}
	if (use_model) {
		/* No measured point the model can reproduce: the model alone (rule 5). */
		int rc = oracle_model_iter_s(o, m, plan, q->pl, q->cpus, &res->iter_s, err);
		if (rc) {
			rk_error_prefix(err, "job %lld", (long long)job->id);
			return rc;
		}
		res->source = RK_ORACLE_SRC_MODEL;
		return 0;
	}
	return rk_error_set(err, RK_ENOTFOUND,
			    "job %lld (%s): no measured row of plan family '%s' in %s and no model "
			    "fallback",
			    (long long)job->id, m->name, q->fam ? q->fam : res->family, q->t->file);
}

/* Families to try, in order: the plan's own, then the artifact's near synonyms. */
static int family_candidates(const struct rk_plan *plan, char fam[2][RK_ORACLE_FAMILY_MAX])
{
	int n = 0;
	if (rk_oracle_plan_family(plan, fam[0], RK_ORACLE_FAMILY_MAX) == 0)
		n = 1;
	if (plan->offload && plan->gc)
		snprintf(fam[n++], RK_ORACLE_FAMILY_MAX, "zero-offload"); /* no +gc rows measured */
	else if (plan->tp > 1 && plan->pp == 1 && plan->dp == 1)
		snprintf(fam[n++], RK_ORACLE_FAMILY_MAX, "tp+ga"); /* t5_3B's name for 1-T-1 */
	return n;
}

static int table_has_family(const struct rubick_table *t, const char *fam)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->rows[i].family, fam))
			return 1;
	return 0;
}

int oracle_rubick_lookup(const struct rk_oracle *o, const struct rubick_table *t,
			 const struct rk_job *job, const struct rk_plan *plan,
			 const struct rk_placement *pl, int cpus_per_gpu,
			 struct rk_oracle_result *res, struct rk_error *err)
{
	char fam[2][RK_ORACLE_FAMILY_MAX];
	int nf = family_candidates(plan, fam);
	struct query q = {.t = t, .fam = NULL, .pl = pl, .n = pl->n_nodes, .cpus = cpus_per_gpu};
	for (int i = 0; i < pl->n_nodes; i++)
		q.g += pl->gpus[i];
	for (int i = 0; i < nf && !q.fam; i++)
		if (table_has_family(t, fam[i]))
			q.fam = fam[i];
	const char *shown = q.fam ? q.fam : nf > 0 ? fam[0] : "";
	size_t sl = strnlen(shown, sizeof(res->family) - 1);
	memcpy(res->family, shown, sl);
	res->family[sl] = '\0';
	if (q.fam) {
		double it = 0.0;
		int rc = nearest_of(&q, job, 1, &it, err);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			res->iter_s = it;
			res->source = RK_ORACLE_SRC_EXACT;
			return 0;
		}
		rc = nearest_of(&q, job, 0, &it, err);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			res->iter_s = it;
			res->source = RK_ORACLE_SRC_NEAREST;
			return 0;
		}
		if (interp_gpus(&q, &it)) {
			res->iter_s = it;
			res->source = RK_ORACLE_SRC_INTERP;
			return 0;
		}
	}
	return model_scaled(o, &q, job, plan, res, err);
}
