/*
 * `rubick sim` capacity loaning options (issue 5, docs/aryl.md).
 *
 * Elastic share: job i is elastic when splitmix64(seed ^ job id) / 2^64 < F;
 * an elastic job accepts min = max(1, request / 2) to max = 2 x request
 * workers (issue 5's rule; the global batch stays fixed, aryl.h).
 */
#include "cli/sim_loan.h"

#include "rubick/policy.h"
#include "cli/commands.h"
#include "cli/util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char rk_cli_loan_help[] =
	"  --inference FILE|diurnal:servers=N,peak=F,trough=F,period=S,step=S,noise=F,seed=N\n"
	"                      capacity loaning (docs/aryl.md): nodes of pool=loaned are the\n"
	"                      inference cluster; the series says how many servers inference\n"
	"                      needs, the rest are lent to training\n"
	"  --reclaim-deadline S  notice given before inference needs a lent server (default 600)\n"
	"  --elastic-share F   seeded share of jobs made elastic: min = request/2, max = 2 x request\n";

void rk_cli_loan_init(struct rk_cli_loan *c)
{
	memset(c, 0, sizeof *c);
	c->deadline_s = 600;
}

void rk_cli_loan_fini(struct rk_cli_loan *c)
{
	rk_load_series_fini(&c->series);
}

static int bad(const char *flag, const char *what)
{
	fprintf(stderr, "rubick sim: %s: %s (try `rubick sim --help`)\n", flag, what);
	return RK_EXIT_USAGE;
}

static int num(const char *flag, const char *v, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (end == v || *end || errno || !isfinite(x) || x < lo || x > hi) {
		char msg[96];
		snprintf(msg, sizeof msg, "expected a number in %g..%g, got '%s'", lo, hi, v);
		return bad(flag, msg);
	}
	*out = x;
	return 0;
}

int rk_cli_loan_arg(struct rk_cli_loan *c, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	if (strcmp(a, "--inference") && strcmp(a, "--reclaim-deadline") &&
	    strcmp(a, "--elastic-share"))
		return 0;
	if (*i + 1 >= argc)
		return bad(a, "needs a value");
	const char *v = argv[++*i];
	if (!strcmp(a, "--inference")) {
		c->inference = v;
		return 1;
	}
	int rc = !strcmp(a, "--reclaim-deadline") ? num(a, v, 0, 1e8, &c->deadline_s)
						   : num(a, v, 0, 1, &c->elastic_share);
	return rc ? rc : 1;
}

static uint64_t mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int rk_cli_loan_load(struct rk_cli_loan *c, const struct rk_cluster *cl, struct rk_job *jobs,
		     int n, uint64_t seed)
{
	int marked = 0;
	for (int i = 0; i < n && c->elastic_share > 0; i++) {
		struct rk_job *j = &jobs[i];
		double u = (double)(mix(seed ^ mix((uint64_t)j->id)) >> 11) / 9007199254740992.0;
		if (u >= c->elastic_share || j->req_plan.tp > 1 || j->req_plan.pp > 1)
			continue; /* tensor/pipeline-parallel plans do not resize as data parallel */
		j->min_gpus = j->req_gpus / 2 > 1 ? j->req_gpus / 2 : 1;
		j->max_gpus = 2 * j->req_gpus;
		marked++;
	}
	c->n_elastic = marked;
	if (c->elastic_share > 0)
		fprintf(stderr, "rubick sim: --elastic-share %g: %d of %d job(s) elastic\n",
			c->elastic_share, marked, n);
	if (!c->inference)
		return 0;
	struct rk_error err;
	int rc;
	if (!strncmp(c->inference, "diurnal:", 8) || !strcmp(c->inference, "diurnal")) {
		struct rk_diurnal d;
		rk_diurnal_default(&d);
		d.servers = 0;
		for (int i = 0; i < cl->n_nodes; i++)
			d.servers += cl->nodes[i].pool == RK_POOL_LOANED;
		if (d.servers == 0)
			d.servers = 1; /* the engine names the missing pool=loaned group */
		rc = rk_diurnal_parse(&d, c->inference[7] ? c->inference + 8 : "", "--inference", &err);
		int64_t lo = 0, hi = 0;
		for (int i = 0; i < n; i++) {
			if (i == 0 || jobs[i].submit_ms < lo)
				lo = jobs[i].submit_ms;
			if (jobs[i].submit_ms > hi)
				hi = jobs[i].submit_ms;
		}
		/* Past the last arrival: a long tail of jobs may still run; 30 days more. */
		if (!rc)
			rc = rk_diurnal_generate(&d, (hi - lo) / 1000 + 30 * 86400, &c->series, &err);
	} else {
		char *text;
		size_t len;
		rc = rk_cli_read_file(c->inference, &text, &len, &err);
		if (!rc) {
			rc = rk_load_series_parse(&c->series, text, c->inference, &err);
			free(text);
		}
	}
	if (rc) {
		fprintf(stderr, "rubick sim: %s%s\n", strstr(err.msg, "--inference") ? "" : "--inference: ",
			err.msg);
		return RK_EXIT_FAILURE;
	}
	return 0;
}

void rk_cli_loan_config(const struct rk_cli_loan *c, struct rk_sim_config *cfg)
{
	if (!c->inference)
		return;
	cfg->inference = &c->series;
	cfg->reclaim_deadline_ms = (int64_t)llround(c->deadline_s * 1000.0);
}

/*
 * Usage is measured over the arrival window [first submit, last submit]
 * (the 15 days of the evaluation), not the makespan: a few very long Philly
 * jobs run for months after the last arrival and would dilute every policy.
 */
void rk_cli_loan_stats(const struct rk_cli_loan *c, const struct rk_cluster *cl,
		       const struct rk_sim_result *r, struct rk_report_loan *out)
{
	int tg = 0, ig = 0, in = 0;
	for (int i = 0; i < cl->n_nodes; i++) {
		if (cl->nodes[i].pool == RK_POOL_LOANED) {
			ig += cl->nodes[i].gpus;
			in++;
		} else {
			tg += cl->nodes[i].gpus;
		}
	}
	int64_t w0 = r->start_ms, w1 = r->start_ms;
	for (int i = 0; i < r->n_outcomes; i++)
		if (r->outcomes[i].submit_ms > w1)
			w1 = r->outcomes[i].submit_ms;
	double span_s = (double)(w1 - w0) / 1000.0;
	/* Training GPUs held and GPUs available (training + lent), from the samples. */
	double train_s = 0, avail_s = 0;
	for (int k = 0; k < r->n_samples; k++) {
		int64_t a = r->samples[k].t_ms, b = k + 1 < r->n_samples ? r->samples[k + 1].t_ms : r->end_ms;
		if (a < w0)
			a = w0;
		if (b > w1)
			b = w1;
		if (b <= a)
			continue;
		train_s += (double)r->samples[k].gpus_alloc * (double)(b - a) / 1000.0;
		avail_s += (double)r->samples[k].gpus_total * (double)(b - a) / 1000.0;
	}
	/* Inference's own GPU-seconds: servers needed x GPUs per server over the window. */
	double inf_s = 0;
	if (c->inference && in > 0) {
		double gpn = (double)ig / in;
		const struct rk_load_series *ls = &c->series;
		for (int i = 0; i < ls->n; i++) {
			double a = (double)ls->t_ms[i] / 1000.0;
			double b = i + 1 < ls->n ? (double)ls->t_ms[i + 1] / 1000.0 : span_s;
			if (b > span_s)
				b = span_s;
			if (b > a)
				inf_s += (b - a) * (ls->need[i] < in ? ls->need[i] : in) * gpn;
		}
	}
	double all = (double)(tg + ig) * span_s;
	memset(out, 0, sizeof *out);
	out->servers_lent = r->servers_loaned;
	out->servers_reclaimed = r->servers_reclaimed;
	out->reclaim_preemptions = r->reclaim_preemptions;
	out->reclaim_scale_ins = r->reclaim_scale_ins;
	out->preemptions_per_reclaimed_server =
		r->servers_reclaimed ? (double)r->reclaim_preemptions / (double)r->servers_reclaimed : 0.0;
	out->lent_gpu_hours = r->loaned_gpu_s / 3600.0;
	out->window_days = span_s / 86400.0;
	out->training_usage = avail_s > 0 ? train_s / avail_s : 0.0;
	out->cluster_usage = all > 0 ? (train_s + inf_s) / all : 0.0;
	out->cluster_gpus = tg + ig;
}

void rk_cli_loan_report(FILE *f, const char *policy, const struct rk_report_loan *l)
{
	fprintf(f,
		"loan %-12s servers lent %lld, reclaimed %lld, reclaim preemptions %lld (%.3f per "
		"reclaimed server), scale-ins %lld, lent GPU-h %.1f; over the arrival window "
		"(%.1f days): training usage %.1f%% of training+lent GPUs, cluster usage %.1f%% "
		"(training + inference over %d GPUs)\n",
		policy, (long long)l->servers_lent, (long long)l->servers_reclaimed,
		(long long)l->reclaim_preemptions, l->preemptions_per_reclaimed_server,
		(long long)l->reclaim_scale_ins, l->lent_gpu_hours, l->window_days,
		100.0 * l->training_usage, 100.0 * l->cluster_usage, l->cluster_gpus);
}
