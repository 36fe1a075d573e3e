/*
 * A hand-computed 4-job run shared by the metrics and report tests (numbers
 * worked out in test_metrics.c's comments). 8 GPUs, run window [0, 320 s].
 */
#ifndef RK_TEST_METRICS_FIXTURE_H
#define RK_TEST_METRICS_FIXTURE_H

#include "rubick/metrics.h"

#include <string.h>

static inline void fixture_outcome(struct rk_job_outcome *o, int64_t id, const char *name,
				   int gpus, int64_t submit, int64_t start, int64_t finish,
				   int restarts, int preempt, double gpu_s)
{
	memset(o, 0, sizeof(*o));
	o->id = id;
	strncpy(o->name, name, sizeof(o->name) - 1);
	strncpy(o->model, "bert", sizeof(o->model) - 1);
	o->req_gpus = gpus;
	o->submit_ms = submit;
	o->first_start_ms = start;
	o->finish_ms = finish;
	o->completed = finish >= 0;
	o->restarts = restarts;
	o->preemptions = preempt;
	o->gpu_s = gpu_s;
}

/* JCTs 100, 60, 300, 100 s; queueing 0, 10, 30, 70 s. */
static inline void fixture_outcomes(struct rk_job_outcome o[4])
{
	fixture_outcome(&o[0], 1, "j1", 4, 0, 0, 100000, 0, 0, 400.0);
	fixture_outcome(&o[1], 2, "j2", 2, 10000, 20000, 70000, 1, 0, 100.0);
	fixture_outcome(&o[2], 3, "j3", 2, 20000, 50000, 320000, 2, 1, 540.0);
	fixture_outcome(&o[3], 4, "j4", 2, 30000, 100000, 130000, 0, 0, 60.0);
}

/* A sample with designated fields (the struct may grow). */
#define SAMPLE(t, alloc, total, queue, run)                                                   \
	{ .t_ms = (t), .gpus_alloc = (alloc), .gpus_total = (total), .queue_len = (queue),  \
	  .running = (run) }

/* Allocated GPUs integrate to 1,100 GPU-s of 2,560; queue length to 110 job-s. */
static const struct rk_sim_sample fixture_samples[] = {
	SAMPLE(0, 4, 8, 0, 1),      SAMPLE(10000, 4, 8, 1, 1), SAMPLE(20000, 6, 8, 1, 2),
	SAMPLE(30000, 6, 8, 2, 2),  SAMPLE(50000, 8, 8, 1, 3), SAMPLE(70000, 6, 8, 1, 2),
	SAMPLE(100000, 4, 8, 0, 2), SAMPLE(130000, 2, 8, 0, 1), SAMPLE(320000, 0, 8, 0, 0),
};
#define FIXTURE_NS ((int)(sizeof(fixture_samples) / sizeof(fixture_samples[0])))

#endif
