/*
 * Trace dispatch: format detection from the first line, the line loop with
 * bad-line policy (fail with FILE:LINE:COL, or skip and count with the first
 * reasons kept — never silent), the common completion of
 * every record (default name, seeded model mapping, elastic range, unique
 * names), then ordering by submit time and the window / max-jobs cut.
 */
#include "sim/trace/trace_internal.h"

#include "rubick/zoo.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Listing order (for --help and rk_trace_formats). */
static const struct trace_reader *const readers[] = {
	&rk_trace_reader_rubick,  &rk_trace_reader_sia,	    &rk_trace_reader_philly,
	&rk_trace_reader_gavel,	  &rk_trace_reader_muri,    &rk_trace_reader_synergy,
	&rk_trace_reader_tiresias, &rk_trace_reader_alibaba, &rk_trace_reader_native,
	&rk_trace_reader_sacct,   &rk_trace_reader_history,
};
#define N_READERS (sizeof(readers) / sizeof(readers[0]))

/*
 * Detection order: Muri's header holds every Tiresias column (it adds
 * batch_size and the per-stage times), so Muri is tried first; header-less
 * formats (Gavel, Synergy) come last and look at the field layout.
 */
static const struct trace_reader *const detect_order[] = {
	&rk_trace_reader_rubick, &rk_trace_reader_sia,	   &rk_trace_reader_philly,
	&rk_trace_reader_muri,	 &rk_trace_reader_tiresias, &rk_trace_reader_alibaba,
	&rk_trace_reader_native, &rk_trace_reader_sacct,    &rk_trace_reader_history,
	&rk_trace_reader_gavel,  &rk_trace_reader_synergy,
};

const char *const *rk_trace_formats(void)
{
	static const char *const names[] = {
		"rubick", "sia", "philly", "gavel", "muri", "synergy", "tiresias", "alibaba",
		"native", "sacct", "history", NULL,
	};
	return names;
}

const char *rk_trace_format_summary(const char *name)
{
	for (size_t i = 0; i < N_READERS; i++)
		if (name && strcmp(readers[i]->name, name) == 0)
			return readers[i]->summary;
	return NULL;
}

struct rk_trace_options rk_trace_options_default(void)
{
	struct rk_trace_options o;
	memset(&o, 0, sizeof(o));
	return o;
}

size_t rk_trace_black_box(const struct rk_trace *t, double *gpu_h, double *total_gpu_h)
{
	size_t n = 0;
	double bb = 0, all = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct rk_trace_job *j = &t->jobs[i];
		double h = j->duration_s > 0 ? j->duration_s * j->gpus * (j->gpu_milli / 1000.0) / 3600.0
					     : 0;
		all += h;
		if (j->model_mapped) {
			n++;
			bb += h;
		}
	}
	if (gpu_h)
		*gpu_h = bb;
	if (total_gpu_h)
		*total_gpu_h = all;
	return n;
}

int rk_trace_format_is_history(const char *name)
{
	return name && (!strcmp(name, "sacct") || !strcmp(name, "history"));
}

void rk_trace_fini(struct rk_trace *t)
{
	if (!t)
		return;
	free(t->jobs);
	memset(t, 0, sizeof(*t));
}

/* Open-addressing set of job indices keyed by name, to reject duplicate names. */
struct name_set {
	uint64_t *slot; /* (hash tag << 32) | (index + 1); 0 = empty */
	size_t cap;     /* power of two */
	size_t n;
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	/* FNV's low bits cluster on names that differ only in a counter
	 * ("philly-1", "philly-2", ...); a splitmix64 finaliser spreads them. */
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

/* Index of the job named `name`, or -1 and the free slot in *free_slot. */
static long name_find(const struct name_set *s, const struct rk_trace_job *jobs,
		      const char *name, size_t *free_slot)
{
	uint64_t h = name_hash(name);
	uint64_t tag = h >> 32; /* compared first, so a probe rarely touches a job */
	size_t i = h & (s->cap - 1);
	while (s->slot[i]) {
		uint32_t j = (uint32_t)(s->slot[i] & 0xffffffffu) - 1;
		if ((s->slot[i] >> 32) == tag && strcmp(jobs[j].name, name) == 0)
			return (long)j;
		i = (i + 1) & (s->cap - 1);
	}
	*free_slot = i;
	return -1;
}

static void name_put(struct name_set *s, size_t slot, const char *name, size_t index)
{
	s->slot[slot] = ((name_hash(name) >> 32) << 32) | (uint64_t)(index + 1);
	s->n++;
}

static int name_set_grow(struct name_set *s, const struct rk_trace_job *jobs)
{
	size_t cap = s->cap ? s->cap * 2 : 1024;
	uint64_t *slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return RK_ENOMEM;
	struct name_set ns = {slot, cap, 0};
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->slot[i])
			continue;
		size_t f = 0;
		size_t j = (size_t)(s->slot[i] & 0xffffffffu) - 1;
		name_find(&ns, jobs, jobs[j].name, &f);
		name_put(&ns, f, jobs[j].name, j);
	}
	free(s->slot);
	*s = ns;
	return 0;
}

/* Complete a record the reader filled: name, model, elastic range. */
static int complete_job(struct trace_ctx *ctx, const struct rk_trace *t,
			const struct trace_row *r, struct rk_trace_job *job)
{
	if (!job->name[0]) {
		/* "<format>-<line>", built by hand: snprintf per line is a tenth of
		 * philly.csv's parse time. format < 16 bytes, so this always fits. */
		size_t n = strlen(t->format);
		char digits[12];
		int nd = 0;
		for (unsigned v = (unsigned)r->line; nd == 0 || v; v /= 10)
			digits[nd++] = (char)('0' + v % 10);
		memcpy(job->name, t->format, n);
		job->name[n++] = '-';
		while (nd)
			job->name[n++] = digits[--nd];
		job->name[n] = '\0';
	}
	if (!job->model[0]) {
		int rc = trace_assign_model(ctx, r, -1, job);
		if (rc < 0)
			return rc;
	} else if (!trace_model_known(ctx, job->model)) {
		return trace_fail(ctx, r, -1, RK_ENOTFOUND, "unknown model '%s'", job->model);
	}
	/*
	 * Iterations count steps of the trace's own model. For a stand-in from the
	 * mapping they mean nothing, while a run time at the request is model-free:
	 * when both are given, the duration decides (docs/trace-format.md).
	 */
	job->source_iters = job->iters;
	if (job->model_mapped && job->duration_s > 0)
		job->iters = 0;
	job->has_range = job->min_gpus > 0 || job->max_gpus > 0;
	if (job->min_gpus == 0)
		job->min_gpus = job->gpus;
	if (job->max_gpus == 0)
		job->max_gpus = job->gpus;
	if (job->min_gpus > job->gpus || job->max_gpus < job->gpus)
		return trace_fail(ctx, r, -1, RK_ERANGE,
				  "elastic range [%d, %d] does not contain the %d GPUs requested",
				  job->min_gpus, job->max_gpus, job->gpus);
	job->line = r->line;
	return 0;
}

static const struct trace_reader *find_reader(const char *name)
{
	for (size_t i = 0; i < N_READERS; i++)
		if (strcmp(readers[i]->name, name) == 0)
			return readers[i];
	return NULL;
}

static const struct trace_reader *detect(const char *line, size_t len, int lineno)
{
	struct trace_row row;
	for (size_t i = 0; i < N_READERS; i++) {
		const struct trace_reader *rd = detect_order[i];
		if (trace_split(line, len, rd->sep, lineno, &row) == 0 && rd->detect(&row))
			return rd;
	}
	return NULL;
}

/* Sort keys: jobs are ~400 bytes, so sort these and move each job once. */
struct sort_key {
	int64_t submit_ms;
	int line;
	uint32_t idx;
};

static int by_submit(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;
	if (x->submit_ms != y->submit_ms)
		return x->submit_ms < y->submit_ms ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

/* Order jobs by submit time, ties in file order (most traces already are). */
static int order_jobs(struct rk_trace *t)
{
	size_t i = 1;
	while (i < t->n && (t->jobs[i - 1].submit_ms < t->jobs[i].submit_ms ||
			    (t->jobs[i - 1].submit_ms == t->jobs[i].submit_ms &&
			     t->jobs[i - 1].line < t->jobs[i].line)))
		i++;
	if (i >= t->n)
		return 0;
	struct sort_key *keys = malloc(t->n * sizeof(*keys));
	if (!keys)
		return RK_ENOMEM;
	for (i = 0; i < t->n; i++)
		keys[i] = (struct sort_key){t->jobs[i].submit_ms, t->jobs[i].line, (uint32_t)i};
	qsort(keys, t->n, sizeof(*keys), by_submit);
	/* Apply the permutation in place, one cycle at a time: position j takes
	 * the job that was at keys[j].idx; a placed position points at itself. */
	for (i = 0; i < t->n; i++) {
		if (keys[i].idx == i)
			continue;
		struct rk_trace_job tmp = t->jobs[i];
		size_t j = i;
		for (;;) {
			size_t k = keys[j].idx;
			keys[j].idx = (uint32_t)j;
			if (k == i) {
				t->jobs[j] = tmp;
				break;
			}
			t->jobs[j] = t->jobs[k];
			j = k;
		}
	}
	free(keys);
	return 0;
}

/* Sort by submit time (ties: file order), then apply the window and max_jobs. */
static int order_and_cut(struct rk_trace *t, const struct rk_trace_options *opt)
{
	int rc = order_jobs(t);
	if (rc < 0)
		return rc;
	size_t k = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct rk_trace_job *j = &t->jobs[i];
		int in = j->submit_ms >= opt->window_start_ms &&
			 (opt->window_end_ms <= 0 || j->submit_ms < opt->window_end_ms) &&
			 (opt->max_jobs == 0 || k < opt->max_jobs);
		if (!in) {
			t->n_filtered++;
			continue;
		}
		if (k != i)
			t->jobs[k] = *j;
		t->jobs[k].submit_ms -= opt->window_start_ms;
		k++;
	}
	t->n = k;
	return 0;
}

/* Record a skipped line's reason (first few kept) and clear the error. */
static void note_skip(struct rk_trace *t, struct rk_error *err)
{
	if (t->n_reasons < RK_TRACE_REASONS_MAX) {
		/* A reason cut at 255 bytes still names file, line and column first. */
		char *dst = t->reasons[t->n_reasons++];
		size_t n = strnlen(err->msg, sizeof(t->reasons[0]) - 1);
		memcpy(dst, err->msg, n);
		dst[n] = '\0';
	}
	t->n_skipped++;
	rk_error_clear(err);
}

/*
 * One data line into t->jobs[t->n]: split, read, complete, give a unique name.
 * Returns 0 (job kept, or a CPU-only row dropped and counted) or the line's
 * error with ctx->err filled.
 */
static int take_row(struct trace_ctx *ctx, const struct trace_reader *rd, const char *line,
		    size_t n, int lineno, struct name_set *names, struct rk_trace *t)
{
	struct trace_row row;
	/* Filled in place: the array holds one slot per line (see parse_lines). */
	struct rk_trace_job *job = &t->jobs[t->n];
	memset(job, 0, sizeof(*job));
	job->gpu_milli = 1000;
	int rc = trace_split(line, n, rd->sep, lineno, &row);
	if (rc < 0)
		return trace_split_fail(ctx, lineno, rc);
	if (ctx->src && (size_t)lineno < ctx->n_src) {
		/* A line rendered from a document: point at the job's place in the document. */
		row.line = ctx->src[lineno].line;
		for (int i = 0; i < row.n; i++)
			row.f[i].col = ctx->src[lineno].col;
	}
	if (ctx->n_header && row.n != ctx->n_header)
		return trace_fail(ctx, &row, -1, RK_EINVAL, "line has %d fields, the header has %d",
				  row.n, ctx->n_header);
	if ((rc = rd->row(ctx, &row, job)) < 0)
		return rc;
	if (rc > 0) { /* a good line that is no job: counted, never silent */
		t->n_steps += rc == TRACE_ROW_STEP;
		t->n_unfinished += rc == TRACE_ROW_UNFINISHED;
		t->n_unstarted += rc == TRACE_ROW_UNSTARTED;
		return 0;
	}
	if (job->gpus == 0) {
		t->n_no_gpu++; /* Alibaba CPU-only pods: nothing for a GPU scheduler */
		return 0;
	}
	if ((rc = complete_job(ctx, t, &row, job)) < 0)
		return rc;
	if ((names->n + 1) * 2 > names->cap && (rc = name_set_grow(names, t->jobs)) < 0)
		return rc;
	size_t slot = 0;
	long dup = name_find(names, t->jobs, job->name, &slot);
	if (dup >= 0) {
		/* Upstream simulators replay every line as its own job whatever its
		 * name (Tiresias' tf_job.csv lists job 10 twice): keep it as
		 * "<name>~<line>" and count it in n_renamed. */
		char renamed[RK_JOB_NAME_MAX];
		snprintf(renamed, sizeof(renamed), "%.*s~%d", RK_JOB_NAME_MAX - 13, job->name,
			 row.line);
		if (name_find(names, t->jobs, renamed, &slot) >= 0)
			return trace_fail(ctx, &row, -1, RK_EEXIST,
					  "job name '%s' already used on line %d, and '%s' too",
					  job->name, t->jobs[dup].line, renamed);
		memcpy(job->name, renamed, sizeof(renamed));
		t->n_renamed++;
	}
	name_put(names, slot, job->name, t->n);
	t->n++;
	return 0;
}

/* The line loop; `t` is the caller's output, left for the caller to release on failure. */
static int parse_lines(const char *text, size_t len, struct trace_ctx *ctx,
		       const struct trace_reader *forced, struct rk_trace *t)
{
	const struct trace_reader *rd = forced;
	struct name_set names = {0};
	struct trace_row row;
	int lineno = 0, started = 0, rc = 0;
	size_t pos = 0;
	/* One allocation for the whole job array: a line is at most one job. */
	size_t lines = 1;
	for (const char *p = text; (p = memchr(p, '\n', len - (size_t)(p - text))); p++)
		lines++;
	/* Line numbers are ints and job indices 32-bit in the name set and sort keys. */
	if (lines >= (size_t)INT32_MAX)
		return rk_error_set(ctx->err, RK_ERANGE, "%s: more than %d lines", ctx->filename,
				    INT32_MAX - 1);
	t->jobs = malloc(lines * sizeof(*t->jobs));
	if (!t->jobs) {
		rc = RK_ENOMEM;
		goto out;
	}
	t->cap = lines;
	while (names.cap < 2 * lines)
		names.cap = names.cap ? names.cap * 2 : 1024;
	names.slot = calloc(names.cap, sizeof(*names.slot));
	if (!names.slot) {
		rc = RK_ENOMEM;
		goto out;
	}
	/* Several upstream CSVs start with a UTF-8 byte-order mark. */
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		pos = 3;
	while (pos < len) {
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		pos += n + 1;
		lineno++;
		if (n > 0 && line[n - 1] == '\r')
			n--;
		size_t lead = 0;
		while (lead < n && (line[lead] == ' ' || line[lead] == '\t'))
			lead++;
		if (lead == n || line[lead] == '#')
			continue; /* blank lines and # comments carry no job */
		struct trace_row probe; /* for messages about the whole line; fields unused */
		probe.n = 0;
		probe.line = lineno;
		if (memchr(line, '\0', n)) {
			rc = trace_fail(ctx, &probe, -1, RK_EINVAL, "NUL byte in line");
			if (started && ctx->opt->skip_bad) {
				note_skip(t, ctx->err);
				t->n_lines++;
				rc = 0;
				continue;
			}
			goto out;
		}
		if (!started) {
			started = 1;
			if (!rd)
				rd = detect(line, n, lineno);
			if (!rd) {
				rc = rk_error_set(ctx->err, RK_EINVAL,
						  "%s:%d:1: unknown trace format (first line matches "
						  "none of the known headers or layouts; give --format)",
						  ctx->filename, lineno);
				goto out;
			}
			snprintf(t->format, sizeof(t->format), "%s", rd->name);
			if ((rc = trace_split(line, n, rd->sep, lineno, &row)) < 0) {
				rc = trace_split_fail(ctx, lineno, rc);
				goto out;
			}
			if (rd->has_header) {
				rc = trace_header_map(ctx, rd, &row);
				if (rc == 0 && rd->begin)
					rc = rd->begin(ctx, &row);
				if (rc < 0)
					goto out;
				continue;
			}
			if (rd->begin && (rc = rd->begin(ctx, &row)) < 0)
				goto out;
		}
		t->n_lines++;
		rc = take_row(ctx, rd, line, n, lineno, &names, t);
		if (rc == RK_ENOMEM || (rc < 0 && !ctx->opt->skip_bad))
			goto out;
		if (rc < 0) {
			note_skip(t, ctx->err);
			rc = 0;
		}
	}
	if (!started)
		rc = rk_error_set(ctx->err, RK_EINVAL, "%s: empty trace (no header or job line)",
				  ctx->filename);
	if (rc == 0 && rd->finish)
		rd->finish(t);
out:
	free(names.slot);
	if (rc == RK_ENOMEM)
		rk_error_set(ctx->err, RK_ENOMEM, "%s:%d: out of memory", ctx->filename, lineno);
	return rc;
}

/*
 * The whole-document reader for `text`, or NULL: a document starts with '{'
 * (after blanks), and only a reader with a doc() reads one (`history` for
 * `rubick history --json`).
 */
static const struct trace_reader *doc_reader(const char *text, size_t len,
					     const struct trace_reader *forced)
{
	size_t i = 0;
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
		i++;
	if (i >= len || text[i] != '{')
		return NULL;
	if (forced)
		return forced->doc ? forced : NULL;
	for (size_t k = 0; k < N_READERS; k++)
		if (readers[k]->doc)
			return readers[k];
	return NULL;
}

/* A document rendered as lines by its reader, then read as those lines. */
static int parse_doc(const char *text, size_t len, struct trace_ctx *ctx,
		     const struct trace_reader *rd, struct rk_trace *t)
{
	char *lines = NULL;
	size_t n = 0;
	struct trace_pos *src = NULL;
	int rc = rd->doc(ctx, text, len, &lines, &n, &src);
	if (rc < 0)
		return rc;
	size_t n_src = 1; /* src[0] unused: lines count from 1 */
	for (size_t i = 0; i < n; i++)
		n_src += lines[i] == '\n';
	ctx->src = src;
	ctx->n_src = n_src;
	rc = parse_lines(lines, n, ctx, rd, t);
	ctx->src = NULL;
	free(lines);
	free(src);
	return rc;
}

int rk_trace_parse(const char *text, size_t len, const char *filename, const char *format,
		   const struct rk_trace_options *opt, struct rk_trace *out, struct rk_error *err)
{
	struct rk_trace_options defaults = rk_trace_options_default();
	if (!opt)
		opt = &defaults;
	if (!filename)
		filename = "<trace>";
	memset(out, 0, sizeof(*out));
	if (!text && len > 0)
		return rk_error_set(err, RK_EINVAL, "%s: no text", filename);
	if (opt->window_start_ms < 0 || opt->window_end_ms < 0 ||
	    (opt->window_end_ms > 0 && opt->window_end_ms <= opt->window_start_ms))
		return rk_error_set(err, RK_EINVAL,
				    "%s: time window [%lld, %lld) ms is empty or negative", filename,
				    (long long)opt->window_start_ms, (long long)opt->window_end_ms);
	const struct trace_reader *forced = NULL;
	if (format && strcmp(format, "auto") != 0) {
		forced = find_reader(format);
		if (!forced)
			return rk_error_set(err, RK_ENOTFOUND,
					    "--format: unknown trace format '%s' (known: rubick, sia, "
					    "philly, gavel, muri, synergy, tiresias, alibaba, native, "
					    "sacct, history)",
					    format);
	}
	struct rk_error local;
	struct trace_ctx ctx = {
		.filename = filename,
		.opt = opt,
		.models = opt->models ? opt->models : trace_default_models,
		.err = err ? err : &local,
	};
	/* A caller's zoo names the allowed models unless `models` does. */
	const char **zoo_names = NULL;
	if (!opt->models && opt->zoo) {
		zoo_names = malloc((opt->zoo->n_models + 1) * sizeof(*zoo_names));
		if (!zoo_names)
			return rk_error_set(err, RK_ENOMEM, "%s: out of memory", filename);
		for (size_t i = 0; i < opt->zoo->n_models; i++)
			zoo_names[i] = opt->zoo->models[i].name;
		zoo_names[opt->zoo->n_models] = NULL;
		ctx.models = zoo_names;
	}
	int rc = doc_reader(text, len, forced)
			 ? parse_doc(text, len, &ctx, doc_reader(text, len, forced), out)
			 : parse_lines(text ? text : "", len, &ctx, forced, out);
	free(zoo_names);
	if (rc < 0) {
		rk_trace_fini(out);
		return rc;
	}
	rc = order_and_cut(out, opt);
	if (rc < 0) {
		rk_error_set(err, rc, "%s: out of memory sorting %zu jobs", filename, out->n);
		rk_trace_fini(out);
		return rc;
	}
	for (size_t i = 0; i < out->n; i++)
		out->n_mapped += (size_t)out->jobs[i].model_mapped;
	rk_error_clear(err);
	return 0;
}
