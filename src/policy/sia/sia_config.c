/*
 * Sia baseline, part 2 (see sia.c): options, GPU types of the cluster and
 * Sia's configuration set (docs/references.md §5.1).
 */
#include "policy/sia/sia_internal.h"

#include "policy/common/baseline.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int parse_double(const char *v, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(x))
		return -1;
	*out = x;
	return 0;
}

int sia_parse_opts(struct sia_opts *o, const char *options, struct rk_error *err)
{
	*o = (struct sia_opts){.p = SIA_P_DEFAULT, .lambda_n = SIA_LAMBDA_N_DEFAULT,
			       .restart_s = SIA_RESTART_S_DEFAULT,
			       .time_limit_ms = SIA_TIME_LIMIT_MS_DEFAULT, .gap = SIA_GAP_DEFAULT,
			       .max_nodes = SIA_MAX_NODES_DEFAULT, .range_job = 1,
			       .quiet = 1};
	if (!options || !*options)
		return RK_OK;
	/* Walk "k=v,k=v" in place; the option text is short and caller-owned. */
	const char *kv = options;
	while (*kv) {
		size_t len = strcspn(kv, ",");
		char item[128];
		if (len >= sizeof(item))
			return rk_error_set(err, RK_EINVAL, "sia: option '%.*s' is too long", (int)len,
					    kv);
		memcpy(item, kv, len);
		item[len] = '\0';
		kv += len + (kv[len] == ',');
		char *eq = strchr(item, '=');
		if (!eq)
			return rk_error_set(err, RK_EINVAL, "sia: option '%s' is not key=value", item);
		*eq = '\0';
		const char *k = item, *v = eq + 1;
		double x = 0;
		if (!strcmp(k, "range")) {
			/* range=plan (GPU counts limited by the plan alone) ignored the
			 * job's min_gpus/max_gpus, which every policy now honours
			 * (docs/policies.md "GPU ranges"): give the jobs a wide range. */
			if (!strcmp(v, "plan"))
				return rk_error_set(err, RK_EINVAL,
						    "sia: range=plan: no longer supported: every policy "
						    "keeps a job within its min_gpus..max_gpus; widen the "
						    "jobs' ranges instead (rubick sim --gpu-range free)");
			if (strcmp(v, "job"))
				return rk_error_set(err, RK_EINVAL, "sia: range=%s: must be 'job'", v);
			continue;
		}
		if (!strcmp(k, "quiet")) {
			if (strcmp(v, "on") && strcmp(v, "off"))
				return rk_error_set(err, RK_EINVAL, "sia: quiet=%s: must be 'on' or 'off'",
						    v);
			o->quiet = !strcmp(v, "on");
			continue;
		}
		if (parse_double(v, &x))
			return rk_error_set(err, RK_EINVAL, "sia: %s=%s: not a finite number", k, v);
		if (!strcmp(k, "p")) {
			if (x == 0 || x < -10 || x > 10)
				return rk_error_set(err, RK_ERANGE, "sia: p=%s: must be non-zero in [-10, 10]", v);
			o->p = x;
		} else if (!strcmp(k, "lambda_n")) {
			if (x < 0)
				return rk_error_set(err, RK_ERANGE, "sia: lambda_n=%s: must be >= 0", v);
			o->lambda_n = x;
		} else if (!strcmp(k, "restart_s")) {
			if (x < 0)
				return rk_error_set(err, RK_ERANGE, "sia: restart_s=%s: must be >= 0", v);
			o->restart_s = x;
		} else if (!strcmp(k, "time_limit_ms")) {
			if (x <= 0)
				return rk_error_set(err, RK_ERANGE, "sia: time_limit_ms=%s: must be > 0", v);
			o->time_limit_ms = x;
		} else if (!strcmp(k, "max_nodes")) {
			if (x < 0 || x > 1e9 || x != floor(x))
				return rk_error_set(err, RK_ERANGE,
						    "sia: max_nodes=%s: must be a whole number in [0, 1e9] "
						    "(0 = no limit)",
						    v);
			o->max_nodes = (int)x;
		} else if (!strcmp(k, "gap")) {
			if (x < 0 || x >= 1)
				return rk_error_set(err, RK_ERANGE, "sia: gap=%s: must be in [0, 1)", v);
			o->gap = x;
		} else {
			return rk_error_set(err, RK_EINVAL,
					    "sia: unknown option '%s' (known: p, lambda_n, restart_s, "
					    "time_limit_ms, max_nodes, gap, range, quiet)",
					    k);
		}
	}
	return RK_OK;
}

/* GPU types of the up nodes, in order of first appearance. */
int sia_collect_types(const struct rk_cluster *c, struct sia_type *t, int *n_types,
			 int *node_type, struct rk_error *err)
{
	int n = 0;
	for (int i = 0; i < c->n_nodes; i++) {
		const struct rk_node *nd = &c->nodes[i];
		node_type[i] = -1;
		if (!nd->up || nd->gpus < 1)
			continue;
		int k = 0;
		while (k < n && strcmp(t[k].name, nd->gpu_type))
			k++;
		if (k == n) {
			if (n == SIA_MAX_TYPES)
				return rk_error_set(err, RK_ERANGE, "sia: more than %d GPU types",
						    SIA_MAX_TYPES);
			t[n++] = (struct sia_type){.name = nd->gpu_type, .node_gpus = nd->gpus,
						   .cpus_per_gpu = nd->cpus / nd->gpus,
						   .mem_mb_per_gpu = nd->mem_mb / nd->gpus};
		}
		struct sia_type *ty = &t[k];
		node_type[i] = k;
		ty->n_nodes++;
		ty->total_gpus += nd->gpus;
		if (nd->gpus < ty->node_gpus)
			ty->node_gpus = nd->gpus;
		if (nd->cpus / nd->gpus < ty->cpus_per_gpu)
			ty->cpus_per_gpu = nd->cpus / nd->gpus;
		if (nd->mem_mb / nd->gpus < ty->mem_mb_per_gpu)
			ty->mem_mb_per_gpu = nd->mem_mb / nd->gpus;
	}
	*n_types = n;
	return RK_OK;
}

/*
 * Sia's configuration set for every type (see the file comment), plus every
 * size an active job requests (`asked[g]` != 0, g <= max_asked) that the set
 * lacks: a job whose model-parallel width is not a power of two (tp = 5), or
 * whose request is no multiple of n_k (20 GPUs on 8-GPU nodes, placed 8+8+4),
 * or a whole-node request the set skips (12 nodes), can then still run at
 * its request, which Sia's scale unit would forbid.
 *
 * Whole nodes: m = 2 .. SIA_DENSE_GPUS / n_k nodes, every m, as the
 * artifact's CONFIGS_8GPU (2..8 nodes) and CONFIGS_4GPU (2..16 nodes), whose
 * sets end at 64 GPUs; beyond that, powers of two of nodes (16, 32, ... up to
 * N_k) so that a job can still grow to the whole type on a cluster larger than
 * the artifact's, with O(log N_k) configurations instead of N_k (a 256-node
 * type had 259, each a goodput prediction per job per round).
 */
int sia_build_configs(const struct sia_type *t, int n_types, const char *asked, int max_asked,
			 struct sia_cfg **out, int *n_out)
{
	int cap = 0;
	for (int k = 0; k < n_types; k++)
		cap += t[k].node_gpus + t[k].n_nodes + max_asked + 1;
	struct sia_cfg *c = malloc((size_t)cap * sizeof(*c));
	if (!c)
		return RK_ENOMEM;
	int n = 0;
	for (int k = 0; k < n_types; k++) {
		int ng = t[k].node_gpus;
		int dense = SIA_DENSE_GPUS / ng > 1 ? SIA_DENSE_GPUS / ng : 1;
		for (int g = 1; g < ng; g++)
			if ((g & (g - 1)) == 0 || (g <= max_asked && asked[g]))
				c[n++] = (struct sia_cfg){k, 1, g, 0};
		c[n++] = (struct sia_cfg){k, 1, ng, 0};
		for (int m = 2; m <= t[k].n_nodes; m++) {
			int req = m * ng <= max_asked && asked[m * ng];
			if (m <= dense || (m & (m - 1)) == 0 || req)
				c[n++] = (struct sia_cfg){k, m, m * ng, 0};
		}
		for (int g = ng + 1; g <= max_asked && g < t[k].total_gpus; g++)
			if (asked[g] && g % ng && (g + ng - 1) / ng <= t[k].n_nodes)
				c[n++] = (struct sia_cfg){k, (g + ng - 1) / ng, g, 1};
	}
	*out = c;
	*n_out = n;
	return RK_OK;
}

/* The placement a configuration stands for (equal shares, or ragged). */
int sia_cfg_placement(const struct sia_cfg *cf, const struct sia_type *t, struct rk_placement *pl)
{
	if (cf->ragged)
		return rk_placement_consolidated(cf->gpus, t->node_gpus, pl, NULL);
	if (cf->nodes > RK_PLACEMENT_MAX_NODES)
		return RK_ERANGE;
	pl->n_nodes = cf->nodes;
	for (int i = 0; i < cf->nodes; i++)
		pl->gpus[i] = cf->gpus / cf->nodes;
	return RK_OK;
}

/* CPUs per GPU a job gets: its request per GPU, capped at the proportional share. */
int sia_job_cpus_per_gpu(const struct rk_job *j, const struct sia_type *t)
{
	int want = j->req_cpus > 0 && j->req_gpus > 0 ? (j->req_cpus + j->req_gpus - 1) / j->req_gpus
						      : t->cpus_per_gpu;
	return want < t->cpus_per_gpu ? want : t->cpus_per_gpu;
}

int64_t sia_job_mem_per_gpu(const struct rk_job *j, const struct sia_type *t)
{
	int64_t want = j->req_mem_mb > 0 && j->req_gpus > 0
			       ? (j->req_mem_mb + j->req_gpus - 1) / j->req_gpus
			       : t->mem_mb_per_gpu;
	return want < t->mem_mb_per_gpu ? want : t->mem_mb_per_gpu;
}

/* Index of the configuration matching what `j` holds now, or -1. */
int sia_current_config(const struct rk_job *j, const int *node_type, const struct sia_cfg *cfg,
			  int n_cfg)
{
	if (!rk_baseline_is_placed(j))
		return -1;
	int m = 0, g = 0, type = -2, per = -1, uniform = 1;
	for (int s = 0; s < j->alloc.n; s++) {
		const struct rk_share *sh = &j->alloc.shares[s];
		if (sh->gpus < 1)
			continue;
		int k = node_type[sh->node];
		if (k < 0 || (type != -2 && k != type))
			return -1;
		if (per >= 0 && sh->gpus != per)
			uniform = 0;
		type = k;
		per = sh->gpus;
		m++;
		g += sh->gpus;
	}
	for (int c = 0; c < n_cfg; c++)
		if (cfg[c].type == type && cfg[c].nodes == m && cfg[c].gpus == g &&
		    (cfg[c].ragged || uniform))
			return c;
	return -1;
}

