/*
 * The native CSV writer (docs/trace-format.md): any parsed trace written back
 * in rubick's own format, so a replayed workload — with the models the seeded
 * mapping chose — can be read, edited and shared. Output goes to a growing
 * buffer; the CLI prints it (the library does no I/O).
 */
#include "rubick/trace.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct buf {
	char *p;
	size_t n, cap;
	int oom;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct buf *b, const char *fmt, ...)
{
	if (b->oom)
		return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int w = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
		va_end(ap);
		if (w < 0) {
			b->oom = 1;
			return;
		}
		if ((size_t)w < b->cap - b->n) {
			b->n += (size_t)w;
			return;
		}
		size_t cap = b->cap * 2 + (size_t)w + 1;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}

/*
 * A text field: quoted when the reader would otherwise change it (a comma, a
 * leading '#' that reads as a comment, spaces at either end that read as
 * padding); '"' turned into '\''.
 */
static void put_text(struct buf *b, const char *s)
{
	char tmp[256];
	size_t n = 0, len = strlen(s);
	int comma = strchr(s, ',') != NULL || s[0] == '#' ||
		    (len > 0 && (s[0] == ' ' || s[len - 1] == ' '));
	for (; *s && n + 1 < sizeof(tmp); s++)
		tmp[n++] = *s == '"' ? '\'' : *s;
	tmp[n] = '\0';
	if (comma)
		put(b, "\"%s\"", tmp);
	else
		put(b, "%s", tmp);
}

int rk_trace_write_native(const struct rk_trace *t, char **text, size_t *len,
			  struct rk_error *err)
{
	struct buf b = {malloc(4096), 0, 4096, 0};
	if (!b.p)
		return rk_error_set(err, RK_ENOMEM, "out of memory writing a trace");
	b.p[0] = '\0';
	put(&b, "# rubick native trace, from a %s trace (docs/trace-format.md)\n",
	    t->format[0] ? t->format : "native");
	/* The space column only when some job declares one: a trace of jobs that
	 * run every plan is written as it was before spaces existed. */
	int spaces = 0;
	for (size_t i = 0; i < t->n && !spaces; i++)
		spaces = t->jobs[i].space.limited;
	put(&b, "name,submit_s,duration_s,model,job_type,gpus,gpu_milli,cpus,mem_mb,net_gbps,"
		"global_batch,plan,iters,guaranteed,tenant,min_gpus,max_gpus%s\n",
	    spaces ? ",space" : "");
	for (size_t i = 0; i < t->n && !b.oom; i++) {
		const struct rk_trace_job *j = &t->jobs[i];
		put_text(&b, j->name);
		/* Milliseconds are exact in 3 decimals; %.17g keeps every double. */
		put(&b, ",%lld.%03lld,%.17g,%s,", (long long)(j->submit_ms / 1000),
		    (long long)(j->submit_ms % 1000), j->duration_s, j->model);
		put_text(&b, j->source_type);
		put(&b, ",%d,%d,%d,%lld,%.17g,", j->gpus, j->gpu_milli, j->cpus,
		    (long long)j->mem_mb, j->net_gbps);
		if (j->global_batch > 0)
			put(&b, "%d", j->global_batch);
		put(&b, ",");
		put_text(&b, j->plan);
		put(&b, ",%lld,%d,", (long long)j->iters, j->guaranteed);
		put_text(&b, j->tenant);
		/* No range in the source: empty, so the reader's --gpu-range decides again. */
		if (j->has_range)
			put(&b, ",%d,%d", j->min_gpus, j->max_gpus);
		else
			put(&b, ",,");
		if (spaces) {
			char sp[RK_PLAN_SPACE_TEXT_MAX];
			if (rk_plan_space_format(&j->space, sp, sizeof(sp)) < 0)
				sp[0] = '\0';
			put(&b, ",");
			put_text(&b, sp);
		}
		put(&b, "\n");
	}
	if (b.oom) {
		free(b.p);
		return rk_error_set(err, RK_ENOMEM, "out of memory writing a trace");
	}
	*text = b.p;
	*len = b.n;
	return 0;
}
