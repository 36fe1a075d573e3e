/*
 * squeue's -o/--format (squeue(1), "-o <output_format>"): "%[.|-][size]type"
 * fields among literal text, where size is the minimum width, '.' justifies
 * right and left is the default; rubick's own fields are %{name}. Unlike
 * squeue a value is never cut to the width: a plan or node list is printed
 * whole (a wider value pushes the next column over).
 */
#include "cli/squeue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct {
	char letter;      /* squeue's type letter; 0 for a %{name} field */
	const char *name; /* the %{name} spelling, for every field */
	enum rk_sq_key key;
	const char *head; /* the column header, as squeue names it */
} fields[] = {
    {'i', "id", RK_SQ_ID, "JOBID"},
    {'j', "name", RK_SQ_NAME, "NAME"},
    {'u', "user", RK_SQ_USER, "USER"},
    {'T', "state", RK_SQ_STATE, "STATE"},
    {'t', "st", RK_SQ_ST, "ST"},
    {'M', "time", RK_SQ_TIME, "TIME"},
    {'V', "submit_time", RK_SQ_SUBMIT, "SUBMIT_TIME"},
    {'S', "start_time", RK_SQ_START, "START_TIME"},
    {'e', "end_time", RK_SQ_END, "END_TIME"},
    {'D', "nodes", RK_SQ_NNODES, "NODES"},
    {'N', "nodelist", RK_SQ_NODELIST, "NODELIST"},
    {'b', "gpus", RK_SQ_GPUS, "GPUS"},
    {'r', "reason", RK_SQ_REASON, "REASON"},
    {'R', "nodelist_reason", RK_SQ_NL_REASON, "NODELIST(REASON)"},
    {0, "plan", RK_SQ_PLAN, "PLAN"},
    {0, "alloc_gpus", RK_SQ_ALLOC, "ALLOC_GPUS"},
    {0, "gpu_ids", RK_SQ_GPU_IDS, "GPU_IDS"},
    {0, "restarts", RK_SQ_RESTARTS, "RESTARTS"},
    {0, "iters", RK_SQ_ITERS, "ITERS"},
};
#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

static int add_text(struct rk_sq_format *f, const char *s, size_t n)
{
	if (!n)
		return 0;
	struct rk_sq_field *last = f->n ? &f->f[f->n - 1] : NULL;
	if (last && last->key == RK_SQ_TEXT && strlen(last->text) + n < RK_SQ_TEXT_MAX) {
		strncat(last->text, s, n);
		return 0;
	}
	if (f->n == RK_SQ_MAX_FIELDS || n >= RK_SQ_TEXT_MAX)
		return -1;
	struct rk_sq_field *t = &f->f[f->n++];
	memset(t, 0, sizeof(*t));
	t->key = RK_SQ_TEXT;
	memcpy(t->text, s, n);
	return 0;
}

/* The field at p (after '%' and the width): OUT *key and the length it took; -1 when none. */
static int find_field(const char *p, enum rk_sq_key *key, size_t *used)
{
	if (*p == '{') {
		const char *end = strchr(p, '}');
		if (!end)
			return -1;
		size_t n = (size_t)(end - p - 1);
		for (size_t i = 0; i < N_FIELDS; i++)
			if (strlen(fields[i].name) == n && !strncmp(fields[i].name, p + 1, n)) {
				*key = fields[i].key;
				*used = n + 2;
				return 0;
			}
		return -1;
	}
	for (size_t i = 0; i < N_FIELDS; i++)
		if (fields[i].letter && fields[i].letter == *p) {
			*key = fields[i].key;
			*used = 1;
			return 0;
		}
	return -1;
}

int rk_sq_format_parse(const char *fmt, struct rk_sq_format *out, char *why, size_t cap)
{
	struct rk_sq_format *f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(why, cap, "out of memory");
		return -1;
	}
	const char *p = fmt;
	int rc = 0;
	while (*p && !rc) {
		const char *pct = strchr(p, '%');
		size_t lit = pct ? (size_t)(pct - p) : strlen(p);
		if (add_text(f, p, lit)) {
			snprintf(why, cap, "more than %d fields, or text of %d characters or more",
			         RK_SQ_MAX_FIELDS, RK_SQ_TEXT_MAX);
			rc = -1;
			break;
		}
		if (!pct)
			break;
		const char *q = pct + 1;
		if (*q == '%') {
			rc = add_text(f, "%", 1);
			p = q + 1;
			continue;
		}
		struct rk_sq_field fl = {.key = RK_SQ_TEXT};
		if (*q == '.' || *q == '-')
			fl.right = *q++ == '.';
		while (*q >= '0' && *q <= '9' && fl.width <= 1000)
			fl.width = fl.width * 10 + (*q++ - '0');
		size_t used = 0;
		const char *end = *q == '{' && strchr(q, '}') ? strchr(q, '}') + 1 : *q ? q + 1 : q;
		if (fl.width > 1000 || find_field(q, &fl.key, &used)) {
			snprintf(why, cap, "'%.*s' at %d is not a field%s", (int)(end - pct), pct,
			         (int)(pct - fmt) + 1,
			         fl.width > 1000 ? " (width above 1000)"
			                         : " (see rubick queue --help for the fields)");
			rc = -1;
			break;
		}
		if (f->n == RK_SQ_MAX_FIELDS) {
			snprintf(why, cap, "more than %d fields", RK_SQ_MAX_FIELDS);
			rc = -1;
			break;
		}
		f->f[f->n++] = fl;
		p = q + used;
	}
	if (!rc)
		*out = *f;
	free(f);
	return rc;
}

static const char *head_of(enum rk_sq_key key)
{
	for (size_t i = 0; i < N_FIELDS; i++)
		if (fields[i].key == key)
			return fields[i].head;
	return "";
}

static void put(const struct rk_sq_field *fl, const char *s, FILE *out)
{
	fprintf(out, fl->right ? "%*s" : "%-*s", fl->width, s);
}

void rk_sq_print_header(const struct rk_sq_format *f, FILE *out)
{
	for (int i = 0; i < f->n; i++)
		put(&f->f[i], f->f[i].key == RK_SQ_TEXT ? f->f[i].text : head_of(f->f[i].key), out);
}

static const char *date(long long t_ms, char *buf, size_t cap)
{
	time_t t = (time_t)(t_ms / 1000);
	struct tm tm;
	if (t_ms < 0 || !gmtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, cap, "N/A");
	return buf;
}

static const char *str_or(const char *s, const char *dflt)
{
	return s && *s ? s : dflt;
}

/* The value of field `key` of job j, in buf (or a string of j's). */
static const char *value(enum rk_sq_key key, const struct rk_sq_job *j, long long now_ms, char *buf,
                         size_t cap)
{
	switch (key) {
	case RK_SQ_TEXT:
		return "";
	case RK_SQ_ID:
		snprintf(buf, cap, "%lld", j->id);
		return buf;
	case RK_SQ_NAME:
		return str_or(j->name, "");
	case RK_SQ_USER:
		return str_or(j->user, "");
	case RK_SQ_STATE:
		return rk_sq_state_long(str_or(j->state, "UNKNOWN"));
	case RK_SQ_ST:
		return rk_sq_state_short(str_or(j->state, "?"));
	case RK_SQ_TIME: {
		long long to = j->end_ms >= 0 ? j->end_ms : now_ms;
		return rk_sq_time(j->start_ms >= 0 ? to - j->start_ms : 0, buf, cap);
	}
	case RK_SQ_SUBMIT:
		return date(j->submit_ms, buf, cap);
	case RK_SQ_START:
		return date(j->start_ms, buf, cap);
	case RK_SQ_END:
		return date(j->end_ms, buf, cap);
	case RK_SQ_NNODES:
		snprintf(buf, cap, "%d", j->n_nodes);
		return buf;
	case RK_SQ_NODELIST:
		return str_or(j->nodelist, "");
	case RK_SQ_GPUS:
		snprintf(buf, cap, "%d", j->gpus);
		return buf;
	case RK_SQ_REASON:
		return str_or(j->reason, "None");
	case RK_SQ_NL_REASON:
		if (j->nodelist && *j->nodelist)
			return j->nodelist;
		snprintf(buf, cap, "(%s)", str_or(j->reason, "None"));
		return buf;
	case RK_SQ_PLAN:
		return str_or(j->plan, "-");
	case RK_SQ_ALLOC:
		snprintf(buf, cap, "%d", j->alloc_gpus);
		return buf;
	case RK_SQ_GPU_IDS:
		return str_or(j->gpu_ids, "-");
	case RK_SQ_RESTARTS:
		snprintf(buf, cap, "%d", j->restarts);
		return buf;
	case RK_SQ_ITERS:
		snprintf(buf, cap, "%.0f/%.0f", j->iters_done, j->iters);
		return buf;
	}
	return "";
}

void rk_sq_print_job(const struct rk_sq_format *f, const struct rk_sq_job *j, long long now_ms,
                     FILE *out)
{
	for (int i = 0; i < f->n; i++) {
		char buf[64];
		const struct rk_sq_field *fl = &f->f[i];
		put(fl,
		    fl->key == RK_SQ_TEXT ? fl->text : value(fl->key, j, now_ms, buf, sizeof(buf)),
		    out);
	}
}
