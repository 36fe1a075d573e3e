/*
 * The JSON summary of a simulation (report.h, docs/sim.md).
 * The only report file that includes jansson. Keys keep insertion order
 * (jansson >= 2.8) and reals print with 12 significant digits, so identical
 * runs give identical bytes.
 */
#include "rubick/report.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Builder that remembers the first allocation failure instead of checking every call. */
struct jb {
	int failed;
};

static void put(struct jb *b, json_t *obj, const char *key, json_t *val)
{
	if (!val || json_object_set_new(obj, key, val) != 0)
		b->failed = 1;
}

static void put_real(struct jb *b, json_t *obj, const char *key, double v)
{
	/* JSON has no NaN/Inf; the summary promises none, but never emit invalid JSON. */
	put(b, obj, key, isfinite(v) ? json_real(v) : json_null());
}

static void put_str(struct jb *b, json_t *obj, const char *key, const char *s)
{
	put(b, obj, key, json_string(s ? s : ""));
}

/* The "loan" line of `rubick sim --inference` (report.h struct rk_report_loan). */
static void put_loan(struct jb *b, json_t *o, const struct rk_report_loan *l)
{
	json_t *lo = json_object();
	if (!lo) {
		b->failed = 1;
		return;
	}
	put(b, lo, "servers_lent", json_integer((json_int_t)l->servers_lent));
	put(b, lo, "servers_reclaimed", json_integer((json_int_t)l->servers_reclaimed));
	put(b, lo, "reclaim_preemptions", json_integer((json_int_t)l->reclaim_preemptions));
	put(b, lo, "reclaim_scale_ins", json_integer((json_int_t)l->reclaim_scale_ins));
	put_real(b, lo, "preemptions_per_reclaimed_server", l->preemptions_per_reclaimed_server);
	put_real(b, lo, "lent_gpu_hours", l->lent_gpu_hours);
	put_real(b, lo, "window_days", l->window_days);
	put_real(b, lo, "training_usage", l->training_usage);
	put_real(b, lo, "cluster_usage", l->cluster_usage);
	put(b, lo, "cluster_gpus", json_integer(l->cluster_gpus));
	put(b, o, "loan", lo);
}

/* One figure over the seeds: its statistics and its n values in seed order. */
static void put_stat(struct jb *b, json_t *so, const char *key, const double *v, int n)
{
	struct rk_report_stat st;
	json_t *fo = json_object(), *vals = json_array();
	if (!fo || !vals || rk_report_stat_compute(v, n, &st)) {
		json_decref(fo);
		json_decref(vals);
		b->failed = 1;
		return;
	}
	put_real(b, fo, "mean", st.mean);
	put_real(b, fo, "sd", st.sd);
	put_real(b, fo, "half95", st.half95);
	put_real(b, fo, "ci95_lo", st.mean - st.half95);
	put_real(b, fo, "ci95_hi", st.mean + st.half95);
	for (int i = 0; i < n; i++)
		if (json_array_append_new(vals, json_real(v[i])))
			b->failed = 1;
	put(b, fo, "values", vals);
	put(b, so, key, fo);
}

/* A run's repetitions over seeds (report.h struct rk_report_seeds). */
static void put_seeds(struct jb *b, json_t *o, const struct rk_report_seeds *sd)
{
	json_t *so = json_object();
	if (!so) {
		b->failed = 1;
		return;
	}
	put(b, so, "n", json_integer(sd->n));
	for (int k = 0; k < RK_FIG_COUNT; k++)
		put_stat(b, so, rk_report_figure_name((enum rk_report_figure)k), sd->values[k], sd->n);
	if (sd->gpu_util)
		put_stat(b, so, "gpu_util", sd->gpu_util, sd->n);
	if (sd->gpu_hours)
		put_stat(b, so, "gpu_hours", sd->gpu_hours, sd->n);
	if (sd->reconfigs)
		put_stat(b, so, "reconfigs", sd->reconfigs, sd->n);
	put(b, o, "seeds", so);
}

/* An object of string pairs k0, v0, k1, v1, ..., NULL. */
static json_t *str_object(struct jb *b, const char *k, ...)
{
	json_t *o = json_object();
	if (!o) {
		b->failed = 1;
		return NULL;
	}
	va_list ap;
	va_start(ap, k);
	for (; k; k = va_arg(ap, const char *))
		put_str(b, o, k, va_arg(ap, const char *));
	va_end(ap);
	return o;
}

/* The provenance part of "meta", each key only when recorded (docs/sim.md "Provenance"). */
static void put_provenance(struct jb *b, json_t *mo, const struct rk_report_meta *m)
{
	if (m->source) {
		json_t *so = str_object(b, "from", m->source, "commit", m->commit, NULL);
		if (so)
			put(b, so, "dirty", m->dirty < 0 ? json_null() : json_boolean(m->dirty));
		put(b, mo, "source", so);
	}
	if (m->build_type)
		put(b, mo, "build",
		    str_object(b, "type", m->build_type, "sanitize", m->sanitize, NULL));
	if (m->timestamp)
		put_str(b, mo, "timestamp", m->timestamp);
	if (m->host)
		put_str(b, mo, "host", m->host);
	if (m->n_reps > 0) {
		json_t *reps = json_array();
		for (int i = 0; reps && i < m->n_reps; i++) {
			json_t *r = json_object();
			if (!r || json_array_append_new(reps, r)) {
				b->failed = 1;
				break;
			}
			put(b, r, "run", json_integer(i + 1));
			put(b, r, "workload_seed", json_integer((json_int_t)m->rep_workload_seeds[i]));
			put(b, r, "policy_seed", json_integer((json_int_t)m->rep_policy_seeds[i]));
		}
		put(b, mo, "repetitions", reps);
	}
	if (m->workload_seed_draws)
		put_str(b, mo, "workload_seed_draws", m->workload_seed_draws);
	if (m->inputs) {
		json_t *in = json_array();
		for (int i = 0; in && i < m->n_inputs; i++) {
			const struct rk_report_input *x = &m->inputs[i];
			json_t *o = str_object(b, "role", x->role, "path", x->path, "kind", x->kind,
			                       "sha256", x->sha256, NULL);
			if (!o || json_array_append_new(in, o))
				b->failed = 1;
		}
		put(b, mo, "inputs", in);
	}
}

/* What produced the report (report.h struct rk_report_meta). */
static void put_meta(struct jb *b, json_t *root, const struct rk_report_meta *m)
{
	json_t *mo = json_object(), *opts = json_object();
	if (!mo || !opts) {
		json_decref(mo);
		json_decref(opts);
		b->failed = 1;
		return;
	}
	put_str(b, mo, "version", m->version);
	put_str(b, mo, "command", m->command);
	put(b, mo, "workload_seed", json_integer((json_int_t)m->workload_seed));
	put(b, mo, "policy_seed", json_integer((json_int_t)m->policy_seed));
	put_provenance(b, mo, m);
	for (int i = 0; i < m->n_options; i++)
		put_str(b, opts, m->option_keys[i], m->option_values[i]);
	put(b, mo, "options", opts);
	put(b, root, "meta", mo);
}

static json_t *run_json(struct jb *b, const struct rk_report_run *u)
{
	const struct rk_sim_summary *s = &u->summary;
	json_t *o = json_object();
	if (!o) {
		b->failed = 1;
		return NULL;
	}
	put_str(b, o, "policy", u->policy);
	put_real(b, o, "avg_jct_s", s->avg_jct_s);
	put_real(b, o, "median_jct_s", s->median_jct_s);
	put_real(b, o, "p95_jct_s", s->p95_jct_s);
	put_real(b, o, "p99_jct_s", s->p99_jct_s);
	put_real(b, o, "max_jct_s", s->max_jct_s);
	put_real(b, o, "makespan_s", s->makespan_s);
	put_real(b, o, "avg_queue_s", s->avg_queue_s);
	put_real(b, o, "gpu_util", s->gpu_util);
	put_real(b, o, "gpu_hours", s->gpu_hours);
	put_real(b, o, "reconfigs", s->reconfigs_per_job);
	put_real(b, o, "preemptions", s->preemptions_per_job);
	put(b, o, "completed", json_integer(s->completed));
	put(b, o, "unfinished", json_integer(s->unfinished));
	put(b, o, "never_started", json_integer(s->never_started));
	put_real(b, o, "avg_queue_len", s->avg_queue_len);
	put(b, o, "max_queue_len", json_integer(s->max_queue_len));
	put_real(b, o, "wall_s", u->wall_s);
	put(b, o, "rejected", json_integer(s->rejected));
	put(b, o, "guaranteed", json_integer(s->guaranteed));
	put(b, o, "sla_violations", json_integer(s->sla_violations));
	put_real(b, o, "sla_violation_s", s->sla_violation_s);
	put_real(b, o, "sla_worst_ratio", s->sla_worst_ratio);
	put(b, o, "sla_preempted", json_integer(s->sla_preempted));
	if (u->has_oracle_stats) {
		json_t *st = json_object();
		if (!st) {
			b->failed = 1;
		} else {
			for (int k = 0; k < RK_ORACLE_SRC_COUNT; k++)
				put(b, st, rk_oracle_source_name((enum rk_oracle_source)k),
				    json_integer((json_int_t)u->oracle_stats.by_source[k]));
			put(b, st, "infeasible", json_integer((json_int_t)u->oracle_stats.infeasible));
			put(b, st, "failed", json_integer((json_int_t)u->oracle_stats.failed));
			/* where each GPU type's answers came from (docs/oracle.md "GPU types") */
			json_t *bt = json_object();
			for (int t = 0; bt && t < u->oracle_stats.n_types; t++) {
				const struct rk_oracle_type_stats *ts = &u->oracle_stats.types[t];
				json_t *e = json_object();
				if (!e) {
					b->failed = 1;
					break;
				}
				put(b, e, "lookups", json_integer((json_int_t)ts->lookups));
				for (int k = 0; k < RK_ORACLE_SRC_COUNT; k++)
					if (ts->by_source[k])
						put(b, e, rk_oracle_source_name((enum rk_oracle_source)k),
						    json_integer((json_int_t)ts->by_source[k]));
				put(b, bt, ts->gpu_type[0] ? ts->gpu_type : "untyped", e);
			}
			if (!bt)
				b->failed = 1;
			else
				put(b, st, "by_gpu_type", bt);
			put(b, o, "oracle_lookups", st);
		}
	}
	if (u->loan)
		put_loan(b, o, u->loan);
	if (u->seeds)
		put_seeds(b, o, u->seeds);
	return o;
}

int rk_report_json_encode(const struct rk_report *r, int pretty, char **json, struct rk_error *err)
{
	if (!r || !json || r->n_runs < 0 || (r->n_runs > 0 && !r->runs))
		return rk_error_set(err, RK_EINVAL, "report: bad arguments");
	*json = NULL;
	struct jb b = {0};
	json_t *root = json_object();
	json_t *results = json_array();
	if (!root || !results) {
		json_decref(root);
		json_decref(results);
		return rk_error_set(err, RK_ENOMEM, "report: out of memory");
	}
	put_str(&b, root, "trace", r->trace);
	put(&b, root, "jobs", json_integer(r->jobs));
	put_str(&b, root, "cluster", r->cluster);
	put_str(&b, root, "oracle", r->oracle);
	put_real(&b, root, "interval_s", r->interval_s);
	put_real(&b, root, "restart_cost_s", r->restart_cost_s);
	/* json_int_t is signed 64-bit: a seed above 2^63 keeps its bits, printed negative. */
	put(&b, root, "seed", json_integer((json_int_t)r->seed));
	if (r->seeds_n > 0) {
		json_t *so = json_object();
		if (!so)
			b.failed = 1;
		put(&b, so, "first", json_integer((json_int_t)r->seeds_first));
		put(&b, so, "last", json_integer((json_int_t)r->seeds_last));
		put(&b, so, "n", json_integer(r->seeds_n));
		put_str(&b, so, "vary", r->seeds_vary);
		put(&b, root, "seeds", so);
	}
	for (int i = 0; i < r->n_runs; i++) {
		json_t *o = run_json(&b, &r->runs[i]);
		if (!o || json_array_append_new(results, o) != 0)
			b.failed = 1;
	}
	put(&b, root, "results", results);
	if (r->meta)
		put_meta(&b, root, r->meta);
	char *s = NULL;
	if (!b.failed) {
		size_t flags = JSON_REAL_PRECISION(12) | (pretty ? JSON_INDENT(2) : JSON_COMPACT);
		s = json_dumps(root, flags);
	}
	json_decref(root);
	if (!s)
		return rk_error_set(err, RK_ENOMEM, "report: out of memory encoding JSON");
	*json = s;
	return 0;
}

int rk_report_write_json(FILE *f, const struct rk_report *r, int pretty, struct rk_error *err)
{
	if (!f)
		return rk_error_set(err, RK_EINVAL, "report: bad arguments");
	char *s = NULL;
	int rc = rk_report_json_encode(r, pretty, &s, err);
	if (rc)
		return rc;
	fputs(s, f);
	fputc('\n', f);
	free(s);
	if (fflush(f) != 0 || ferror(f))
		return rk_error_set(err, RK_EIO, "summary JSON: write failed: %s", strerror(errno));
	return 0;
}
