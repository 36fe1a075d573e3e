/*
 * Online refit in the simulator (cfg.refit, docs/sim.md): each running job's
 * performance model is refitted from the iteration times it is observed to
 * run at, with the daemon's sample rules and fit (rubick/refit.h; rubickd
 * does the same from progress reports, src/daemon/sched/refit.c). An observation is
 * the rate the job really advances at (sjob.iter_ms: the oracle's price of the
 * plan and allocation it runs, co-location included), taken once per
 * configuration, the first instant the job runs it (restart paid): the oracle
 * is deterministic, so repeating a sample would only weigh it more.
 *
 * The oracle prices jobs with their own model (the truth of the simulated
 * world); the policy sees the refitted copy: sim_refit_swap points each job's
 * rk_job.model at it for the duration of a policy call. rk_job's
 * model_refits, observed_sps and model_miss tell policies what was observed;
 * nothing is told about a configuration the job has not run.
 */
#include "sim/engine/engine_internal.h"

#include "rubick/refit.h"

#include <stdlib.h>
#include <string.h>

struct sim_fit {
	struct rk_refit r;
	struct rk_model model;      /* the refitted copy the policy sees */
	const struct rk_model *own; /* the trace's model, the oracle's */
	struct rk_plan plan;        /* the configuration observed last */
	struct rk_placement pl;
	int cpus;
	double iter_ms;
};

static int same_config(const struct sim_fit *f, const struct rk_plan *plan,
                       const struct rk_placement *pl, int cpus, double iter_ms)
{
	return rk_plan_equal(&f->plan, plan) && f->pl.n_nodes == pl->n_nodes &&
	       !memcmp(f->pl.gpus, pl->gpus, sizeof(pl->gpus[0]) * (size_t)pl->n_nodes) &&
	       f->cpus == cpus && f->iter_ms == iter_ms;
}

int sim_refit_sweep(struct sim *s, struct rk_error *err)
{
	if (!s->cfg.refit || !s->cfg.env)
		return 0;
	for (int i = 0; i < s->n_hl; i++) {
		struct sjob *sj = (struct sjob *)s->hl[i];
		struct rk_job *j = &sj->j;
		if (j->state != RK_JOB_RUNNING || !(sj->iter_ms > 0)) {
			j->observed_sps = 0; /* not observed under what it holds now */
			continue;
		}
		j->observed_sps = 1000.0 * j->global_batch / sj->iter_ms;
		struct rk_placement pl;
		if (rk_alloc_to_placement(&j->alloc, &pl))
			continue;
		int cpus = rk_alloc_total_cpus(&j->alloc);
		if (!sj->fit) {
			sj->fit = calloc(1, sizeof(*sj->fit));
			if (!sj->fit)
				return rk_error_set(err, RK_ENOMEM,
				                    "simulator: refit: out of memory");
			rk_refit_init(&sj->fit->r);
			sj->fit->own = j->model;
			sj->fit->model = *j->model;
		} else if (same_config(sj->fit, &j->plan, &pl, cpus, sj->iter_ms)) {
			continue;
		}
		struct sim_fit *f = sj->fit;
		f->plan = j->plan;
		f->pl = pl;
		f->cpus = cpus;
		f->iter_ms = sj->iter_ms;
		int fits = f->r.n_fits;
		int rc = rk_refit_observe(&f->r, &f->model, s->cfg.env, &j->plan, &pl, cpus,
		                          j->global_batch, j->observed_sps, err);
		if (rc)
			return rk_error_prefix(err, "simulator: job %lld (%s): refit",
			                       (long long)j->id, j->name);
		/* A refitted model is news to event-driven policies (Sia prices rows
		 * from it and may have asked for no wake-up, sia_quiet.c). */
		if (f->r.n_fits != fits)
			s->dirty = 1;
		j->model_refits = f->r.n_fits;
		j->model_miss = f->r.max_pred_err;
	}
	return 0;
}

void sim_refit_swap(struct sim *s, int fitted)
{
	if (!s->cfg.refit)
		return;
	for (int i = 0; i < s->n_act; i++) {
		struct sjob *sj = &s->jobs[s->act[i]];
		if (sj->fit && sj->fit->r.n_fits > 0)
			sj->j.model = fitted ? &sj->fit->model : sj->fit->own;
	}
}

void sim_refit_fini(struct sim *s)
{
	for (int i = 0; s->jobs && i < s->n; i++) {
		if (!s->jobs[i].fit)
			continue;
		rk_refit_fini(&s->jobs[i].fit->r);
		free(s->jobs[i].fit);
		s->jobs[i].fit = NULL;
	}
}
