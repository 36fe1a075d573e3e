/*
 * Trace-native speeds for `rubick sim` and `rubick trace` (sim_native.h).
 */
#include "cli/sim_native.h"

#include "cli/commands.h"
#include "cli/util.h"
#include "rubick/perf.h"
#include "rubick/sim.h"

#include <stdlib.h>
#include <string.h>

const char rk_cli_native_help[] =
    "  --throughputs SRC   trace-native speeds of Gavel/Shockwave job types: auto (the\n"
    "                      trace's own file: Shockwave's tacc for traces with run\n"
    "                      times, else Gavel's), gavel, tacc, none or a FILE in\n"
    "                      Gavel's layout; nodes of other GPU types run at v100's\n";

/* The reference GPU type: Gavel's cluster_specs.json is 500 V100, and Shockwave's
 * durations are its steps at the tacc file's v100 throughputs (docs/oracle.md). */
#define REF_GPU "v100"

int rk_cli_native_arg(const char *prog, const char **arg, int argc, char **argv, int *i)
{
	if (strcmp(argv[*i], "--throughputs"))
		return 0;
	if (*i + 1 >= argc || !argv[*i + 1][0]) {
		fprintf(stderr, "%s: --throughputs: needs auto, gavel, tacc, none or a file\n",
		        prog);
		return RK_EXIT_USAGE;
	}
	*arg = argv[++*i];
	return 1;
}

static int has_durations(const struct rk_trace *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->jobs[i].duration_s > 0)
			return 1;
	return 0;
}

/* "a800, t4": the distinct GPU types of `cl` the file lacks; "" when none. */
static void missing_types(const struct rk_cluster *cl, const struct rk_oracle *o, char *buf,
                          size_t cap)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; cl && i < cl->n_nodes; i++) {
		const char *g = cl->nodes[i].gpu_type;
		int seen = 0;
		for (int k = 0; k < i && !seen; k++)
			seen = !strcmp(cl->nodes[k].gpu_type, g);
		if (seen || rk_oracle_gavel_has_type(o, g))
			continue;
		int w = snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", g);
		if (w < 0 || (size_t)w >= cap - n)
			return;
		n += (size_t)w;
	}
}

int rk_cli_native_path(const char *arg, const struct rk_trace *t, char *path, size_t cap)
{
	const char *src = arg ? arg : "auto";
	if (!strcmp(src, "none"))
		return 0;
	if (!strcmp(src, "auto")) {
		if (strcmp(t->format, "gavel"))
			return 0;
		src = has_durations(t) ? "tacc" : "gavel";
	}
	if (!strcmp(src, "gavel"))
		snprintf(path, cap, "%s/interference/gavel_simulation_throughputs.json",
		         RK_DEFAULT_DATA_DIR);
	else if (!strcmp(src, "tacc"))
		snprintf(path, cap, "%s/interference/shockwave_tacc_throughputs.json",
		         RK_DEFAULT_DATA_DIR);
	else
		snprintf(path, cap, "%s", src);
	return 1;
}

int rk_cli_native_load(const char *prog, const char *arg, const struct rk_trace *t,
                       const struct rk_cluster *cl, struct rk_oracle *o)
{
	char path[4096];
	if (!rk_cli_native_path(arg, t, path, sizeof(path)))
		return 0;
	struct rk_error err;
	char *text;
	size_t len;
	if (rk_cli_read_file(path, &text, &len, &err)) {
		fprintf(stderr, "%s: --throughputs: %s\n", prog, err.msg);
		return RK_EXIT_FAILURE;
	}
	int rc = rk_oracle_add_gavel_throughputs(o, text, len, path, REF_GPU, &err);
	free(text);
	if (rc) {
		fprintf(stderr, "%s: --throughputs: %s\n", prog, err.msg);
		return RK_EXIT_FAILURE;
	}
	size_t known = 0;
	for (size_t i = 0; i < t->n; i++)
		known += (size_t)rk_oracle_gavel_knows(o, t->jobs[i].source_type);
	fprintf(stderr,
	        "%s: trace-native speeds: %s for %zu of %zu jobs (per GPU type; other "
	        "types run at %s's)\n",
	        prog, path, known, t->n, REF_GPU);
	char miss[256];
	missing_types(cl, o, miss, sizeof(miss));
	if (known && miss[0])
		fprintf(stderr,
		        "%s: warning: GPU type(s) %s not in %s: their nodes run these jobs at "
		        "%s's speed\n",
		        prog, miss, path, REF_GPU);
	return 0;
}

int rk_cli_native_apply(const struct rk_trace *t, struct rk_job *jobs, int n,
                        const struct rk_oracle *o)
{
	int set = 0;
	for (int k = 0; k < n; k++) {
		if (jobs[k].id < 1 || (size_t)jobs[k].id > t->n)
			continue;
		const struct rk_trace_job *tj = &t->jobs[jobs[k].id - 1];
		int64_t steps = tj->source_iters > 0 ? tj->source_iters : tj->iters;
		double it;
		if (rk_oracle_gavel_ref_iter_s(o, tj->source_type, tj->gpus, &it))
			continue;
		/*
		 * A run time in the trace is its length on the reference type (Shockwave's
		 * are steps at its generator's v100 throughputs: exact for the 120-job trace
		 * and tacc, not for the scale traces made with wisr_throughputs.json, which
		 * is not shared), so it wins over the steps, as for every other reader.
		 */
		if (tj->duration_s > 0)
			jobs[k].iters_total = tj->duration_s / it;
		else if (steps > 0)
			jobs[k].iters_total = (double)steps;
		else
			continue;
		set++;
	}
	return set;
}

int rk_cli_native_speeds(struct rk_job *jobs, int n, const struct rk_oracle *o, int max_gpus,
                         double **store)
{
	*store = NULL;
	if (max_gpus < 1 || n < 1)
		return 0;
	int known = 0;
	double it;
	for (int k = 0; k < n; k++)
		if (jobs[k].job_type[0] &&
		    rk_oracle_gavel_ref_iter_s(o, jobs[k].job_type, 1, &it) == 0)
			known++;
	if (!known)
		return 0;
	size_t row = (size_t)max_gpus + 1;
	double *v = calloc((size_t)known * row, sizeof(*v));
	if (!v)
		return RK_ENOMEM;
	int set = 0;
	for (int k = 0; k < n && set < known; k++) {
		if (!jobs[k].job_type[0] || rk_oracle_gavel_ref_iter_s(o, jobs[k].job_type, 1, &it))
			continue;
		double *r = v + (size_t)set * row;
		for (int g = 1; g <= max_gpus; g++)
			r[g] = rk_oracle_gavel_ref_iter_s(o, jobs[k].job_type, g, &it) == 0
			           ? 1.0 / it
			           : 0;
		jobs[k].native_sps = r;
		jobs[k].native_max = max_gpus;
		set++;
	}
	*store = v;
	return set;
}

/* "1,181": thousands separated, as in the messages. */
static const char *grouped(size_t v, char *buf, size_t cap)
{
	char raw[32];
	int n = snprintf(raw, sizeof(raw), "%zu", v);
	size_t o = 0;
	for (int i = 0; i < n && o + 2 < cap; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = raw[i];
	}
	buf[o] = '\0';
	return buf;
}

struct name_count {
	const char *name;
	size_t n;
};

static void tally(struct name_count *v, int *n, int cap, const char *name)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(v[i].name, name)) {
			v[i].n++;
			return;
		}
	if (*n < cap)
		v[(*n)++] = (struct name_count){name, 1};
}

static int by_count(const void *a, const void *b)
{
	const struct name_count *x = a, *y = b;
	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* "A x 3, B x 2, ... (N more)" of the `max` largest. */
static void list(FILE *f, struct name_count *v, int n, int max)
{
	qsort(v, (size_t)n, sizeof(*v), by_count);
	for (int i = 0; i < n && i < max; i++)
		fprintf(f, "%s%s x %zu", i ? ", " : "", v[i].name, v[i].n);
	if (n > max)
		fprintf(f, ", %d more", n - max);
}

#define NAMES_MAX 256

size_t rk_cli_native_warn(const char *prog, const struct rk_trace *t, const struct rk_oracle *o,
                          FILE *f)
{
	struct name_count *src = calloc(NAMES_MAX, sizeof(*src));
	struct name_count *sub = calloc(NAMES_MAX, sizeof(*sub));
	int n_src = 0, n_sub = 0;
	size_t count = 0;
	for (size_t i = 0; src && sub && i < t->n; i++) {
		const struct rk_trace_job *j = &t->jobs[i];
		if (!j->model_mapped || j->iters <= 0 || rk_oracle_gavel_knows(o, j->source_type))
			continue;
		count++;
		tally(src, &n_src, NAMES_MAX, j->source_type[0] ? j->source_type : "(none)");
		tally(sub, &n_sub, NAMES_MAX, j->model);
	}
	if (count) {
		char a[32], b[32];
		fprintf(f,
		        "%s: warning: %s of %s jobs name models the zoo lacks and give only "
		        "steps (",
		        prog, grouped(count, a, sizeof(a)), grouped(t->n, b, sizeof(b)));
		list(f, src, n_src, 6);
		fprintf(f, "); they run at their stand-ins' speeds (");
		list(f, sub, n_sub, 6);
		fprintf(f, ")\n");
	}
	free(src);
	free(sub);
	return count;
}

void rk_cli_native_work(const struct rk_trace *t, const struct rk_job *jobs, int n,
                        struct rk_oracle *o, const struct rk_cluster *cl, struct rk_cli_work *w)
{
	memset(w, 0, sizeof(*w));
	int k = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct rk_trace_job *tj = &t->jobs[i];
		const struct rk_job *j = NULL;
		while (jobs && k < n && jobs[k].id < (int64_t)i + 1)
			k++;
		if (jobs && k < n && jobs[k].id == (int64_t)i + 1)
			j = &jobs[k];
		double share = tj->gpus * (tj->gpu_milli / 1000.0) / 3600.0;
		int64_t steps = tj->source_iters > 0 ? tj->source_iters : tj->iters;
		double it;
		if (tj->duration_s <= 0 && steps > 0 &&
		    rk_oracle_gavel_ref_iter_s(o, tj->source_type, tj->gpus, &it) == 0) {
			w->from_gavel += (double)steps * it * share;
			w->n_gavel++;
		} else if ((tj->iters <= 0 || rk_oracle_gavel_knows(o, tj->source_type)) &&
		           tj->duration_s > 0) {
			w->from_duration += tj->duration_s * share;
			w->n_duration++;
		} else if (j && o && cl &&
		           rk_sim_iter_at_request(cl, j, rk_sim_oracle_iter, o, &it, NULL) == 0) {
			w->from_oracle += j->iters_total * it * share;
			w->n_oracle++;
		} else {
			w->n_unpriced++;
		}
	}
	w->gpu_hours = w->from_duration + w->from_gavel + w->from_oracle;
}

int rk_cli_native_price(const char *prog, const char *file, const char *cluster_arg,
                        const char *throughputs, const struct rk_trace *t, const struct rk_zoo *zoo,
                        struct rk_cli_work *w)
{
	struct rk_perf_env env;
	rk_perf_env_a800(&env);
	struct rk_cluster cl = {0};
	struct rk_oracle *orc = NULL;
	struct rk_job *jobs = NULL;
	int n = 0, rc = RK_EXIT_FAILURE;
	struct rk_error err;
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/measured/rubick", RK_DEFAULT_DATA_DIR);
	if (rk_cli_cluster_read(cluster_arg ? cluster_arg : "8x8", &cl, &err) ||
	    rk_oracle_create_measured(&orc, &env, RK_ORACLE_FALLBACK_MODEL, &err) ||
	    rk_oracle_load_dir(orc, dir, &err)) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		goto out;
	}
	if (rk_cli_native_load(prog, throughputs, t, NULL, orc))
		goto out;
	/* Jobs that cannot be built here (too big for the cluster) count as unpriced. */
	struct rk_sim_jobs_report rep;
	if (rk_sim_jobs_from_trace(t, file, zoo, &cl, 1, &jobs, &n, &rep, &err)) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		goto out;
	}
	rk_cli_native_apply(t, jobs, n, orc);
	rk_cli_native_warn(prog, t, orc, stderr);
	rk_cli_native_work(t, jobs, n, orc, &cl, w);
	rc = 0;
out:
	rk_sim_jobs_free(jobs, n);
	rk_oracle_destroy(orc);
	rk_cluster_fini(&cl);
	return rc;
}
