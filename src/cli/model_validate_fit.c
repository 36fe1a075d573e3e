/*
 * What the `rubick model validate` driver (model_validate.c) and its training
 * protocol (model_validate_train.c) both build a fit from: a measured row as a
 * fit sample, a note on the fit's report, the order medians sort by. A leaf:
 * both call it, it calls neither, so the driver calls the protocol one way.
 */
#include "cli/model_validate_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void rk_validate_note(struct rk_validate_fit *f, const char *fmt, ...)
{
	if (f->n_notes >= 24)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(f->notes[f->n_notes++], sizeof(f->notes[0]), fmt, ap);
	va_end(ap);
}

void rk_validate_row_sample(const struct rk_measured_row *mr, const struct rk_plan *plan,
		       const struct rk_validate_opts *o, struct rk_perf_sample *s)
{
	memset(s, 0, sizeof(*s));
	s->plan = *plan;
	s->placement = mr->placement;
	s->cpus_per_gpu = mr->cpu_threads > 0 ? mr->cpu_threads : o->cpus_per_gpu;
	s->iter_ms = mr->iter_s * 1000.0;
	s->fwd_ms = mr->has_phases && mr->fwd_ms > 0 ? mr->fwd_ms : -1;
	s->sync_ms = mr->has_phases && mr->sync_ms > 0 ? mr->sync_ms : -1;
	s->opt_ms = mr->has_phases && mr->opt_ms > 0 ? mr->opt_ms : -1;
	s->line = mr->line;
}

int rk_validate_cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}
