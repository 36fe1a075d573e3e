/*
 * The oracle's price of a job at its request (sim.h): its iteration time on
 * a gang placement in the empty cluster, and the check of a whole job list
 * against it. Duration scaling (engine_run.c), SLA baselines (engine_sla.c)
 * and `rubick sim` (src/cli) use it; it needs no simulator state, so it is a
 * leaf of the engine's files.
 */
#include "rubick/placement.h"
#include "rubick/sim.h"

#include <math.h>
#include <stdio.h>

int rk_sim_iter_at_request(const struct rk_cluster *cluster, const struct rk_job *j,
                           rk_sim_iter_fn iter, void *ctx, double *iter_s, struct rk_error *err)
{
	struct rk_capacity empty;
	int rc = rk_capacity_init(&empty, cluster);
	if (rc)
		return rk_error_set(err, rc, "simulator: out of memory");
	struct rk_place_req req;
	rk_place_req_from_job(j, &req);
	struct rk_alloc a;
	rk_alloc_init(&a);
	rc = rk_place_gang(&empty, &req, &a);
	rk_capacity_fini(&empty);
	if (rc) {
		rk_alloc_fini(&a);
		return rk_error_set(err, RK_EINFEASIBLE,
		                    "job %lld (%s): its request (%d GPUs, "
		                    "%d CPUs) does not fit the empty cluster",
		                    (long long)j->id, j->name, j->req_gpus, j->req_cpus);
	}
	rc = iter(ctx, j, &j->req_plan, &a, cluster, iter_s, err);
	rk_alloc_fini(&a);
	if (rc == 0 && !(*iter_s > 0 && isfinite(*iter_s)))
		rc = rk_error_set(err, RK_EINTERNAL, "oracle returned %g s per iteration", *iter_s);
	if (rc)
		rk_error_prefix(err, "job %lld (%s): iteration time at the request",
		                (long long)j->id, j->name);
	return rc;
}

int rk_sim_jobs_check_oracle(const struct rk_cluster *cluster, struct rk_job *jobs, int *n,
                             rk_sim_iter_fn iter, void *ctx, int skip_bad,
                             struct rk_sim_jobs_report *rep, struct rk_error *err)
{
	int m = 0;
	for (int i = 0; i < *n; i++) {
		double it_s;
		struct rk_error why;
		int rc = rk_sim_iter_at_request(cluster, &jobs[i], iter, ctx, &it_s, &why);
		if (rc == RK_ENOMEM)
			return rk_error_set(err, rc, "%s", why.msg);
		if (rc && !skip_bad) {
			if (err)
				*err = why;
			return rc;
		}
		if (rc) {
			if (rep->dropped++ == 0)
				snprintf(rep->first_reason, sizeof(rep->first_reason), "%.250s",
				         why.msg);
			rk_alloc_fini(&jobs[i].alloc);
			continue;
		}
		jobs[m++] = jobs[i];
	}
	*n = m;
	return 0;
}
