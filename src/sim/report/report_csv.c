/*
 * Plain-text reports (report.h): the per-job CSV, the time-series CSV and the
 * comparison table. Fixed printf formats (milliseconds printed as seconds
 * with exactly 3 decimals, so no rounding happens) keep the bytes identical
 * for identical runs.
 */
#include "rubick/report.h"
#include "rubick/sim.h"

#include "sim/report/report_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

static const char *nz(const char *s)
{
	return s ? s : "";
}

void rk_report_put_csv_field(FILE *f, const char *s)
{
	s = nz(s);
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* Milliseconds as seconds with 3 decimals; exact for any int64. */
static void put_ms(FILE *f, int64_t ms)
{
	const char *sign = ms < 0 ? "-" : "";
	uint64_t a = ms < 0 ? (uint64_t)0 - (uint64_t)ms : (uint64_t)ms;
	fprintf(f, "%s%" PRIu64 ".%03" PRIu64, sign, a / 1000, a % 1000);
}

static int finish(FILE *f, const char *what, struct rk_error *err)
{
	if (fflush(f) != 0 || ferror(f))
		return rk_error_set(err, RK_EIO, "%s: write failed: %s", what, strerror(errno));
	return 0;
}

static int check_report(FILE *f, const struct rk_report *r, struct rk_error *err)
{
	if (!f || !r || r->n_runs < 0 || (r->n_runs > 0 && !r->runs))
		return rk_error_set(err, RK_EINVAL, "report: bad arguments");
	for (int i = 0; i < r->n_runs; i++) {
		const struct rk_report_run *u = &r->runs[i];
		if (u->n_outcomes < 0 || (u->n_outcomes > 0 && !u->outcomes) || u->n_samples < 0 ||
		    (u->n_samples > 0 && !u->samples))
			return rk_error_set(err, RK_EINVAL, "report: run %d (%s): bad outcome or sample list",
					    i, nz(u->policy));
		const struct rk_report_seeds *sd = u->seeds;
		for (int k = 0; sd && sd->outcomes && sd->n_outcomes && k < sd->n; k++)
			if (sd->n_outcomes[k] < 0 || (sd->n_outcomes[k] > 0 && !sd->outcomes[k]))
				return rk_error_set(err, RK_EINVAL,
				                    "report: run %d (%s): bad outcome list of repetition %d",
				                    i, nz(u->policy), k);
	}
	return 0;
}

/* One job's row; has_seed appends the `seed` column (under --seeds). */
static void put_job(FILE *f, const char *policy, const struct rk_job_outcome *o, int has_seed,
                    uint64_t seed)
{
	rk_report_put_csv_field(f, policy);
	fprintf(f, ",%" PRId64 ",", o->id);
	rk_report_put_csv_field(f, o->name);
	fputc(',', f);
	rk_report_put_csv_field(f, o->model);
	fprintf(f, ",%d,", o->req_gpus);
	put_ms(f, o->submit_ms);
	fputc(',', f);
	if (o->first_start_ms >= 0)
		put_ms(f, o->first_start_ms);
	fputc(',', f);
	if (o->completed)
		put_ms(f, o->finish_ms);
	fputc(',', f);
	if (o->completed)
		put_ms(f, o->finish_ms - o->submit_ms);
	fputc(',', f);
	if (o->first_start_ms >= 0)
		put_ms(f, o->first_start_ms - o->submit_ms);
	fprintf(f, ",%d,%d,%d,%.3f,%d,%.3f,%d,", o->restarts, o->preemptions, o->completed,
		o->gpu_s, o->guaranteed, o->sla_below_s, o->rejected);
	rk_report_put_csv_field(f, o->reason);
	if (has_seed)
		fprintf(f, ",%" PRIu64, seed);
	fputc('\n', f);
}

int rk_report_write_jobs_csv(FILE *f, const struct rk_report *r, struct rk_error *err)
{
	int rc = check_report(f, r, err);
	if (rc)
		return rc;
	int seeds = r->seeds_n > 0; /* only then the `seed` column: other outputs keep their bytes */
	fputs("policy,id,name,model,req_gpus,submit_s,first_start_s,finish_s,jct_s,queue_s,"
	      "restarts,preemptions,completed,gpu_s,guaranteed,sla_below_s,rejected,reason",
	      f);
	fputs(seeds ? ",seed\n" : "\n", f);
	for (int i = 0; i < r->n_runs; i++) {
		const struct rk_report_run *u = &r->runs[i];
		const struct rk_report_seeds *sd = u->seeds;
		if (seeds && sd && sd->seed && sd->outcomes && sd->n_outcomes) {
			for (int k = 0; k < sd->n; k++)
				for (int j = 0; j < sd->n_outcomes[k]; j++)
					put_job(f, u->policy, &sd->outcomes[k][j], 1, sd->seed[k]);
			continue;
		}
		for (int j = 0; j < u->n_outcomes; j++)
			put_job(f, u->policy, &u->outcomes[j], seeds, r->seeds_first);
	}
	return finish(f, "jobs CSV", err);
}

int rk_report_write_samples_csv(FILE *f, const struct rk_report *r, struct rk_error *err)
{
	int rc = check_report(f, r, err);
	if (rc)
		return rc;
	fputs("policy,t_s,gpus_alloc,gpus_total,queue_len,running\n", f);
	for (int i = 0; i < r->n_runs; i++) {
		const struct rk_report_run *u = &r->runs[i];
		for (int j = 0; j < u->n_samples; j++) {
			const struct rk_sim_sample *s = &u->samples[j];
			rk_report_put_csv_field(f, u->policy);
			fputc(',', f);
			put_ms(f, s->t_ms);
			fprintf(f, ",%d,%d,%d,%d\n", s->gpus_alloc, s->gpus_total, s->queue_len,
				s->running);
		}
	}
	return finish(f, "samples CSV", err);
}

int rk_report_write_table(FILE *f, const struct rk_report *r, struct rk_error *err)
{
	int rc = check_report(f, r, err);
	if (rc)
		return rc;
	fprintf(f, "trace %s: %d jobs", nz(r->trace), r->jobs);
	if (r->cluster)
		fprintf(f, ", cluster %s", r->cluster);
	if (r->oracle)
		fprintf(f, ", oracle %s", r->oracle);
	fputc('\n', f);
	/* New columns go last: scripts read the table by column number. */
	fprintf(f, "%-12s %12s %12s %12s %12s %12s %8s %10s %9s %10s %8s %10s %8s %11s\n",
		"policy", "avg_jct_s", "median_s", "p99_jct_s", "makespan_s", "avg_queue_s", "gpu_util",
		"gpu_hours", "reconfigs", "completed", "wall_s", "sla_viol", "rejected", "sla_preempt");
	for (int i = 0; i < r->n_runs; i++) {
		const struct rk_report_run *u = &r->runs[i];
		const struct rk_sim_summary *s = &u->summary;
		/* sla_viol: guaranteed jobs that ran below their baseline / guaranteed jobs;
		 * sla_preempt: guaranteed jobs preempted / guaranteed jobs (metrics.h). */
		char preempted[32];
		snprintf(preempted, sizeof(preempted), "%d/%d", s->sla_preempted, s->guaranteed);
		fprintf(f, "%-12s %12.1f %12.1f %12.1f %12.1f %12.1f %8.3f %10.2f %9.3f %5d/%-4d %8.3f "
			"%5d/%-4d %8d %11s\n",
			nz(u->policy), s->avg_jct_s, s->median_jct_s, s->p99_jct_s, s->makespan_s,
			s->avg_queue_s, s->gpu_util, s->gpu_hours, s->reconfigs_per_job, s->completed,
			s->jobs, u->wall_s, s->sla_violations, s->guaranteed, s->rejected, preempted);
	}
	if (report_seeds_table(f, r))
		return rk_error_set(err, RK_EINVAL, "table: a run's seed values are missing");
	return finish(f, "table", err);
}

/* The name of job `id` among the run's outcomes ("" when absent). */
static const char *job_name(const struct rk_report_run *u, int64_t id)
{
	for (int k = 0; k < u->n_outcomes; k++)
		if (u->outcomes[k].id == id)
			return u->outcomes[k].name;
	return "";
}

int rk_report_write_plans_csv(FILE *f, const struct rk_report *r, struct rk_error *err)
{
	int rc = check_report(f, r, err);
	if (rc)
		return rc;
	fputs("policy,t_s,id,name,gpus,plan\n", f);
	for (int i = 0; i < r->n_runs; i++) {
		const struct rk_report_run *u = &r->runs[i];
		for (int j = 0; u->plans && j < u->n_plans; j++) {
			const struct rk_sim_plan_change *p = &u->plans[j];
			char plan[RK_PLAN_TEXT_MAX];
			if (rk_plan_format(&p->plan, plan, sizeof(plan)) < 0)
				return rk_error_set(err, RK_EINTERNAL, "plans CSV: job %lld: plan does "
						    "not print", (long long)p->job_id);
			rk_report_put_csv_field(f, u->policy);
			fputc(',', f);
			put_ms(f, p->t_ms);
			fprintf(f, ",%lld,", (long long)p->job_id);
			rk_report_put_csv_field(f, job_name(u, p->job_id));
			fprintf(f, ",%d,", p->gpus);
			rk_report_put_csv_field(f, plan);
			fputc('\n', f);
		}
	}
	return finish(f, "plans CSV", err);
}
