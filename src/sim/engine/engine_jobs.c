/*
 * The simulator's job primitives (engine_internal.h): the event heap, a
 * job's progress settled to an instant, its start of accrual, the change
 * feed's marks and the id lookup. A leaf of the engine's files: the loop
 * (engine.c), applying decisions (engine_apply.c), co-location, loaning and
 * set-up call it, and it calls none of them (call graph in
 * engine_internal.h).
 */
#include "sim/engine/engine_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int ev_before(const struct ev *a, const struct ev *b)
{
	if (a->t_ms != b->t_ms)
		return a->t_ms < b->t_ms;
	if (a->kind != b->kind)
		return a->kind < b->kind;
	return a->job < b->job;
}

int sim_heap_push(struct sim *s, int64_t t_ms, int kind, int job)
{
	if (s->n_heap == s->cap_heap) {
		int ncap = s->cap_heap ? s->cap_heap * 2 : 64;
		struct ev *h = realloc(s->heap, (size_t)ncap * sizeof(*h));
		if (!h)
			return RK_ENOMEM;
		s->heap = h;
		s->cap_heap = ncap;
	}
	struct ev e = {t_ms, kind, job, s->jobs[job].version};
	int i = s->n_heap++;
	while (i > 0) {
		int p = (i - 1) / 2;
		if (!ev_before(&e, &s->heap[p]))
			break;
		s->heap[i] = s->heap[p];
		i = p;
	}
	s->heap[i] = e;
	return 0;
}

void sim_heap_pop(struct sim *s)
{
	struct ev last = s->heap[--s->n_heap];
	int i = 0, n = s->n_heap;
	for (;;) {
		int c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && ev_before(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!ev_before(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (n > 0)
		s->heap[i] = last;
}

/* Drop events made stale by a later change of their job. */
void sim_heap_clean_top(struct sim *s)
{
	while (s->n_heap > 0 && s->heap[0].version != s->jobs[s->heap[0].job].version)
		sim_heap_pop(s);
}

/* Bring iters_done and the GPU-seconds held up to `now`. */
void sim_settle(struct sim *s, struct sjob *sj, int64_t now)
{
	struct rk_job *j = &sj->j;
	if (j->alloc.n > 0 && now > sj->hold_from_ms) {
		sj->gpu_s +=
		    (double)(now - sj->hold_from_ms) / 1000.0 * rk_alloc_total_gpus(&j->alloc);
		sj->hold_from_ms = now;
	}
	j->attained_gpu_s = sj->gpu_s;
	if (j->state == RK_JOB_RUNNING && sj->iter_ms > 0) {
		double done = sj->iters_at_run + (double)(now - sj->run_from_ms) / sj->iter_ms;
		j->iters_done = done < j->iters_total ? done : j->iters_total;
	}
	(void)s;
}

void sim_mark(struct sim *s, struct sjob *sj)
{
	if (!sj->in_chg) {
		sj->in_chg = 1;
		s->chg[s->n_chg++] = &sj->j;
	}
}

void sim_hold_add(struct sim *s, struct sjob *sj)
{
	if (sj->hl_pos < 0) {
		sj->hl_pos = s->n_hl;
		s->hl[s->n_hl++] = &sj->j;
	}
	sim_mark(s, sj);
}

void sim_hold_del(struct sim *s, struct sjob *sj)
{
	if (sj->hl_pos >= 0) {
		struct rk_job *last = s->hl[--s->n_hl];
		s->hl[sj->hl_pos] = last;
		((struct sjob *)last)->hl_pos = sj->hl_pos; /* j is sjob's first member */
		sj->hl_pos = -1;
	}
	sim_mark(s, sj);
}

/* Start accruing progress at `now` and schedule the completion. */
int sim_start_running(struct sim *s, int idx, int64_t now)
{
	struct sjob *sj = &s->jobs[idx];
	sj->j.state = RK_JOB_RUNNING;
	sj->run_from_ms = now;
	sj->iters_at_run = sj->j.iters_done;
	double left = sj->j.iters_total - sj->j.iters_done;
	double ms = ceil((left > 0 ? left : 0) * sj->iter_ms);
	int64_t end = now + (ms < 1 ? (left > 0 ? 1 : 0) : (int64_t)ms);
	return sim_heap_push(s, end, EV_COMPLETE, idx);
}

int sim_job_index(const struct sim *s, int64_t id)
{
	int lo = 0, hi = s->n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (s->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return s->ids[lo].index;
}
