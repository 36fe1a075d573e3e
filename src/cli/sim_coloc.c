/*
 * `rubick sim` co-location options (sim_coloc.h): flags, the interference
 * file (read here: the library takes the text) and the configuration.
 */
#include "cli/sim_coloc.h"

#include "cli/commands.h"
#include "cli/util.h"

#include "rubick/interference.h"
#include "rubick/perf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RK_DEFAULT_DATA_DIR
#define RK_DEFAULT_DATA_DIR "data"
#endif

const char rk_cli_coloc_help[] =
	"  --sharing on|off    GPU sharing: two jobs per GPU when their memory fits, each\n"
	"                      slowed by its measured interference (default off)\n"
	"  --interference SRC  gavel (default), tacc, or a Gavel-layout throughput JSON\n"
	"  --contention on|off ring-all-reduce jobs on several nodes share each node's NIC\n"
	"                      with the other cross-node jobs there (default off)\n"
	"  --contention-overhead MS  extra time per iteration per extra node (default 0)\n";

void rk_cli_coloc_init(struct rk_cli_coloc *c)
{
	memset(c, 0, sizeof(*c));
	rk_xi_table_init(&c->xi);
}

void rk_cli_coloc_fini(struct rk_cli_coloc *c)
{
	rk_xi_table_fini(&c->xi);
}

static int usage(const char *flag, const char *what)
{
	fprintf(stderr, "rubick sim: %s: %s (try `rubick sim --help`)\n", flag, what);
	return RK_EXIT_USAGE;
}

static int on_off(const char *flag, const char *v, int *out)
{
	if (!strcmp(v, "on"))
		*out = 1;
	else if (!strcmp(v, "off"))
		*out = 0;
	else
		return usage(flag, "expected on or off");
	return 0;
}

int rk_cli_coloc_arg(struct rk_cli_coloc *c, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	if (strcmp(a, "--sharing") && strcmp(a, "--contention") && strcmp(a, "--interference") &&
	    strcmp(a, "--contention-overhead"))
		return 0;
	if (*i + 1 >= argc)
		return usage(a, "needs a value");
	const char *v = argv[++*i];
	if (!strcmp(a, "--sharing"))
		return on_off(a, v, &c->sharing) ? RK_EXIT_USAGE : 1;
	if (!strcmp(a, "--contention"))
		return on_off(a, v, &c->contention) ? RK_EXIT_USAGE : 1;
	if (!strcmp(a, "--interference")) {
		if (!v[0])
			return usage(a, "expected gavel, tacc or a file");
		c->interference = v;
		return 1;
	}
	char *end;
	double ms = strtod(v, &end);
	if (end == v || *end || !isfinite(ms) || ms < 0 || ms > 3.6e6)
		return usage(a, "expected milliseconds in [0, 3600000]");
	c->overhead_ms = ms;
	return 1;
}

int rk_cli_coloc_load(struct rk_cli_coloc *c, const char *cluster_arg, struct rk_perf_env *env)
{
	if (c->contention) {
		struct rk_cluster cl = {0};
		struct rk_error err;
		if (rk_cli_cluster_read(cluster_arg, &cl, &err)) {
			fprintf(stderr, "rubick sim: %s\n", err.msg);
			return RK_EXIT_FAILURE;
		}
		double net = INFINITY;
		for (int i = 0; i < cl.n_nodes; i++)
			if (cl.nodes[i].up && cl.nodes[i].net_gbps < net)
				net = cl.nodes[i].net_gbps;
		rk_cluster_fini(&cl);
		if (isfinite(net) && net > 0)
			env->net_gbps = net / (env->nics_per_node > 0 ? env->nics_per_node : 1);
	}
	if (!c->sharing) {
		if (c->interference)
			fprintf(stderr, "rubick sim: --interference: ignored without --sharing on\n");
		return 0;
	}
	char *path = c->path;
	const char *src = c->interference ? c->interference : "gavel";
	if (!strcmp(src, "gavel"))
		snprintf(path, sizeof(c->path), "%s/interference/gavel_simulation_throughputs.json",
			 RK_DEFAULT_DATA_DIR);
	else if (!strcmp(src, "tacc"))
		snprintf(path, sizeof(c->path), "%s/interference/shockwave_tacc_throughputs.json",
			 RK_DEFAULT_DATA_DIR);
	else
		snprintf(path, sizeof(c->path), "%s", src);
	struct rk_error err;
	char *text;
	size_t len;
	if (rk_cli_read_file(path, &text, &len, &err)) {
		fprintf(stderr, "rubick sim: --interference: %s\n", err.msg);
		return RK_EXIT_FAILURE;
	}
	struct rk_xi_parse_report rep;
	int rc = rk_xi_parse_gavel(&c->xi, text, len, path, &rep, &err);
	free(text);
	if (rc) {
		fprintf(stderr, "rubick sim: --interference: %s\n", err.msg);
		return RK_EXIT_FAILURE;
	}
	if (rk_xi_table_finish(&c->xi)) {
		fprintf(stderr, "rubick sim: --interference: out of memory\n");
		return RK_EXIT_FAILURE;
	}
	fprintf(stderr,
	        "rubick sim: interference %s: %d pairs, %d measured unable to co-run "
	        "(never shared), %d zeros in rows never measured co-located and %d job types "
	        "that cannot run alone skipped, %d faster-when-shared clamped to xi = 1\n",
	        path, rep.pairs, rep.no_corun, rep.unmeasured, rep.no_isolated, rep.clamped);
	return 0;
}

void rk_cli_coloc_config(const struct rk_cli_coloc *c, struct rk_sim_config *cfg)
{
	cfg->sharing = c->sharing;
	cfg->contention = c->contention;
	cfg->xi = c->sharing ? &c->xi : NULL;
	cfg->contention_overhead_ms = c->overhead_ms;
}
