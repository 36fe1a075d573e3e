/*
 * rubickd's own accounting, as `rubick history` prints it (src/cli/cmd_history.c):
 *
 * - `--csv`: id,name,tenant,state,exit,submit,start,end,elapsed,wait,gpu_hours,gpus
 *   (dates "YYYY-MM-DDTHH:MM:SSZ" or "-", elapsed "[D-]HH:MM:SS"). It names no
 *   model: every job runs as a black box.
 * - `--json`: {"jobs": [job objects of GET /v1/jobs, plus elapsed_s, wait_s,
 *   gpu_hours], "count", "truncated"}. A job object keeps its submission
 *   ("spec"): a zoo model, batch, plan, iterations done. history_doc renders
 *   the document as the CSV above with the optional columns model, plan,
 *   global_batch, iters, cpus, mem_mb, guaranteed, min_gpus, max_gpus, one
 *   line per job, each line remembering the JSON line and column of its object
 *   so that errors point into the file the user gave.
 *
 * Per row: name = the job id, its own name is the job type (the model mapping
 * reads it); run time at the request = GPU-hours / GPUs (the work it got,
 * whatever shape rubick gave it; elapsed when it got none); jobs that never
 * started (start "-") are counted in n_unstarted. With a zoo model the job
 * replays as a white box: its model, batch and plan, its iterations done; a
 * model outside the zoo runs as a black box with its name as the job type.
 */
#include "sim/trace/trace_internal.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	ID, NAME, TENANT, STATE, SUBMIT, START, END, ELAPSED, GPU_HOURS, GPUS, MODEL, PLAN,
	BATCH, ITERS, CPUS, MEM, GUARANTEED, MIN_GPUS, MAX_GPUS,
};

static const struct trace_col cols[] = {
	{"id", 1},	    {"name", 1},     {"tenant", 1},	{"state", 1},	   {"submit", 1},
	{"start", 1},	    {"end", 1},	     {"elapsed", 1},	{"gpu_hours", 1},  {"gpus", 1},
	{"model", 0},	    {"plan", 0},     {"global_batch", 0}, {"iters", 0},	   {"cpus", 0},
	{"mem_mb", 0},	    {"guaranteed", 0}, {"min_gpus", 0}, {"max_gpus", 0},   {NULL, 0},
};

/* The CSV header, or the first line of the JSON document ("{"). */
static int detect(const struct trace_row *first)
{
	return trace_header_matches(first, cols) ||
	       (first->n == 1 && first->f[0].len == 1 && first->f[0].p[0] == '{');
}

static int absent(const struct trace_row *r, int idx)
{
	return !trace_has(r, idx) || (r->f[idx].len == 1 && r->f[idx].p[0] == '-');
}

static int get_date(struct trace_ctx *ctx, const struct trace_row *r, int idx, const char *col,
		    int64_t *s)
{
	if (!trace_parse_datetime(&r->f[idx], s))
		return trace_fail(ctx, r, idx, RK_EINVAL,
				  "column '%s': '%.*s' is not YYYY-MM-DDTHH:MM:SSZ or -", col,
				  r->f[idx].len > 40 ? 40 : (int)r->f[idx].len, r->f[idx].p);
	return 0;
}

static int opt_int(struct trace_ctx *ctx, const struct trace_row *r, int c, const char *col,
		   int max, int *out)
{
	int idx = trace_idx(ctx, c);
	return trace_has(r, idx) ? trace_get_int(ctx, r, idx, col, 0, max, out) : 0;
}

/* The zoo model, batch, plan and iterations of a job that names one (white box). */
static int white_box(struct trace_ctx *ctx, const struct trace_row *r, struct rk_trace_job *job)
{
	int mi = trace_idx(ctx, MODEL), rc;
	if (!trace_has(r, mi))
		return 0;
	char model[RK_MODEL_NAME_MAX];
	if ((rc = trace_get_str(ctx, r, mi, "model", model, sizeof(model), 0)) < 0)
		return rc;
	if (!trace_model_known(ctx, model)) {
		/* An inline or launch-described model: a black box that keeps its name. */
		snprintf(job->source_type, sizeof(job->source_type), "%s", model);
		return 0;
	}
	memcpy(job->model, model, sizeof(model));
	int64_t iters = 0;
	int ii = trace_idx(ctx, ITERS);
	if (trace_has(r, ii) &&
	    (rc = trace_get_i64(ctx, r, ii, "iters", 0, INT64_MAX / 2, &iters)) < 0)
		return rc;
	job->iters = iters;
	if ((rc = opt_int(ctx, r, BATCH, "global_batch", 1 << 24, &job->global_batch)) < 0)
		return rc;
	int pi = trace_idx(ctx, PLAN);
	if (trace_has(r, pi)) {
		char why[300];
		if ((rc = trace_get_str(ctx, r, pi, "plan", job->plan, sizeof(job->plan), 0)) < 0)
			return rc;
		if (trace_plan_check(job->plan, job->gpus, job->global_batch, why, sizeof(why)))
			return trace_fail(ctx, r, pi, RK_EINVAL, "column 'plan': %s", why);
	}
	return 0;
}

static int row(struct trace_ctx *ctx, const struct trace_row *r, struct rk_trace_job *job)
{
	int rc;
	int64_t submit, start = 0, end = 0;
	if ((rc = trace_get_str(ctx, r, trace_idx(ctx, ID), "id", job->name, sizeof(job->name),
				0)) < 0 ||
	    (rc = trace_get_str(ctx, r, trace_idx(ctx, NAME), "name", job->source_type,
				sizeof(job->source_type), 1)) < 0 ||
	    (rc = trace_get_str(ctx, r, trace_idx(ctx, TENANT), "tenant", job->tenant,
				sizeof(job->tenant), 0)) < 0)
		return rc;
	int si = trace_idx(ctx, SUBMIT), sti = trace_idx(ctx, START), ei = trace_idx(ctx, END);
	int st = trace_idx(ctx, STATE);
	if (!trace_has(r, st) || !(trace_field_is(&r->f[st], "done") ||
				   trace_field_is(&r->f[st], "failed") ||
				   trace_field_is(&r->f[st], "cancelled")))
		return trace_has(r, st) ? TRACE_ROW_UNFINISHED
					: trace_fail(ctx, r, st, RK_EINVAL, "column 'state': empty");
	if (absent(r, si))
		return trace_fail(ctx, r, si, RK_EINVAL, "column 'submit': no submit time");
	if ((rc = get_date(ctx, r, si, "submit", &submit)) < 0)
		return rc;
	job->submit_ms = submit * 1000;
	if (absent(r, sti))
		return TRACE_ROW_UNSTARTED;
	if (absent(r, ei))
		return TRACE_ROW_UNFINISHED;
	if ((rc = get_date(ctx, r, sti, "start", &start)) < 0 ||
	    (rc = get_date(ctx, r, ei, "end", &end)) < 0)
		return rc;
	if (end < start)
		return trace_fail(ctx, r, ei, RK_ERANGE, "column 'end': before start");
	double gpu_h = 0, elapsed = 0;
	int eli = trace_idx(ctx, ELAPSED);
	if (!absent(r, eli) && !trace_parse_hms(&r->f[eli], &elapsed))
		return trace_fail(ctx, r, eli, RK_EINVAL, "column 'elapsed': '%.*s' is not "
				  "[D-]HH:MM:SS", r->f[eli].len > 40 ? 40 : (int)r->f[eli].len,
				  r->f[eli].p);
	if ((rc = trace_get_f64(ctx, r, trace_idx(ctx, GPU_HOURS), "gpu_hours", 0, 1e9,
				&gpu_h)) < 0 ||
	    (rc = trace_get_int(ctx, r, trace_idx(ctx, GPUS), "gpus", 0, 1 << 20, &job->gpus)) < 0)
		return rc;
	if (job->gpus == 0)
		return 0; /* counted in n_no_gpu */
	/* The work it got at its request, whatever shape rubick gave it on the way. */
	job->duration_s = gpu_h > 0 ? gpu_h * 3600.0 / job->gpus : elapsed;
	job->duration_s = (double)trace_s_to_ms(job->duration_s) / 1000.0; /* ms, as every trace */
	if (!(job->duration_s > 0))
		return TRACE_ROW_UNSTARTED;
	int g = 0;
	if ((rc = opt_int(ctx, r, CPUS, "cpus", 1 << 24, &job->cpus)) < 0 ||
	    (rc = opt_int(ctx, r, GUARANTEED, "guaranteed", 1, &g)) < 0 ||
	    (rc = opt_int(ctx, r, MIN_GPUS, "min_gpus", 1 << 20, &job->min_gpus)) < 0 ||
	    (rc = opt_int(ctx, r, MAX_GPUS, "max_gpus", 1 << 20, &job->max_gpus)) < 0)
		return rc;
	job->guaranteed = g;
	int mmi = trace_idx(ctx, MEM);
	if (trace_has(r, mmi) &&
	    (rc = trace_get_i64(ctx, r, mmi, "mem_mb", 0, INT64_MAX / 2, &job->mem_mb)) < 0)
		return rc;
	return white_box(ctx, r, job);
}

/* ---- --json: the document rendered as the CSV above, one line per job ---- */

/* Line and column of each element of the top-level "jobs" array: the '{' at depth 2. */
static void job_positions(const char *text, size_t len, struct trace_pos *pos, size_t n)
{
	int depth = 0, line = 1, col = 0, in_str = 0;
	size_t k = 0;
	for (size_t i = 0; i < len && k < n; i++) {
		char c = text[i];
		col++;
		if (c == '\n') {
			line++;
			col = 0;
		} else if (in_str) {
			if (c == '\\')
				i++, col++;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
		} else if (c == '{' || c == '[') {
			if (++depth == 3 && c == '{')
				pos[k++] = (struct trace_pos){line, col};
		} else if (c == '}' || c == ']') {
			depth--;
		}
	}
	for (; k < n; k++)
		pos[k] = (struct trace_pos){1, 1};
}

/* A text field for the CSV: no separator, quote or control character (names are checked
 * identifiers in rubickd; an edited file may not be). "" when absent or null. */
static int text_field(const json_t *o, const char *key, const char **out)
{
	const json_t *v = json_object_get(o, key);
	*out = "";
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return -1;
	const char *s = json_string_value(v);
	for (const char *c = s; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == ',' || *c == '"')
			return -1;
	*out = s;
	return 0;
}

/* A number as CSV text ("" when absent or null); -1 when it is something else. */
static int num_field(const json_t *o, const char *key, char *buf, size_t cap, double scale)
{
	const json_t *v = json_object_get(o, key);
	buf[0] = '\0';
	if (!v || json_is_null(v))
		return 0;
	if (json_is_boolean(v)) {
		snprintf(buf, cap, "%d", json_is_true(v));
		return 0;
	}
	if (!json_is_number(v))
		return -1;
	double x = json_number_value(v) * scale;
	if (json_is_integer(v) && scale == 1)
		snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
	else
		snprintf(buf, cap, "%.9g", x);
	return 0;
}

/* ms since the epoch (a JSON number or null) as the CSV's date; "-" when absent. */
static int date_field(const json_t *o, const char *key, char *buf, size_t cap, int64_t *ms)
{
	const json_t *v = json_object_get(o, key);
	*ms = -1;
	snprintf(buf, cap, "-");
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > (json_int_t)253402300799000LL) /* 9999-12-31 */
		return -1;
	*ms = (int64_t)json_integer_value(v);
	int64_t s = *ms / 1000, days = s / 86400, sod = s % 86400;
	/* civil_from_days (H. Hinnant), the inverse of trace_parse_datetime's */
	int64_t z = days + 719468, era = z / 146097, doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
	int64_t d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
	int64_t y = yoe + era * 400 + (m <= 2);
	snprintf(buf, cap, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lldZ", (long long)y,
		 (long long)m, (long long)d, (long long)(sod / 3600), (long long)(sod % 3600 / 60),
		 (long long)(sod % 60));
	return 0;
}

/* One job object as one CSV line; the key at fault in *bad on failure. */
static int job_line(FILE *f, const json_t *j, const char **bad)
{
	const json_t *spec = json_object_get(j, "spec");
	if (spec && !json_is_null(spec) && !json_is_object(spec))
		return *bad = "spec", -1;
	if (!json_is_object(spec))
		spec = NULL;
	const char *name, *tenant, *state, *model = "", *plan = "";
	char id[32], sub[80], st[80], end[80], gh[40], gpus[32], batch[32], iters[32], cpus[32],
	    mem[32], guar[8], mn[32], mx[32];
	int64_t sub_ms, st_ms, end_ms;
	if (!json_is_integer(json_object_get(j, "id")))
		return *bad = "id", -1;
	num_field(j, "id", id, sizeof(id), 1);
	if (text_field(j, "name", &name))
		return *bad = "name", -1;
	if (text_field(j, "tenant", &tenant))
		return *bad = "tenant", -1;
	if (text_field(j, "state", &state))
		return *bad = "state", -1;
	if (date_field(j, "submit_ms", sub, sizeof(sub), &sub_ms))
		return *bad = "submit_ms", -1;
	if (date_field(j, "first_start_ms", st, sizeof(st), &st_ms))
		return *bad = "first_start_ms", -1;
	if (date_field(j, "end_ms", end, sizeof(end), &end_ms))
		return *bad = "end_ms", -1;
	if (json_object_get(j, "gpu_hours") ? num_field(j, "gpu_hours", gh, sizeof(gh), 1)
					    : num_field(j, "attained_gpu_s", gh, sizeof(gh), 1 / 3600.0))
		return *bad = "gpu_hours", -1;
	if (num_field(j, "gpus", gpus, sizeof(gpus), 1))
		return *bad = "gpus", -1;
	if (num_field(j, "iters_done", iters, sizeof(iters), 1))
		return *bad = "iters_done", -1;
	if (strchr(iters, '.') || strchr(iters, 'e')) /* iterations done, whole */
		snprintf(iters, sizeof(iters), "%lld",
			 (long long)json_number_value(json_object_get(j, "iters_done")));
	batch[0] = cpus[0] = mem[0] = guar[0] = mn[0] = mx[0] = '\0';
	if (spec) {
		if (text_field(spec, "model", &model))
			return *bad = "model", -1;
		const json_t *pv = json_object_get(spec, "plan");
		if (json_is_string(pv)) /* canonical plans hold commas: written quoted */
			plan = json_string_value(pv);
		else if (pv && !json_is_null(pv))
			return *bad = "plan", -1;
		for (const char *c = plan; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == '"')
				return *bad = "plan", -1;
		if (num_field(spec, "global_batch", batch, sizeof(batch), 1) ||
		    num_field(spec, "cpus", cpus, sizeof(cpus), 1) ||
		    num_field(spec, "mem_mb", mem, sizeof(mem), 1) ||
		    num_field(spec, "guaranteed", guar, sizeof(guar), 1) ||
		    num_field(spec, "min_gpus", mn, sizeof(mn), 1) ||
		    num_field(spec, "max_gpus", mx, sizeof(mx), 1))
			return *bad = "spec", -1;
		/* rubickd gives a job without a range [gpus, gpus]: only a real range is one */
		if (!strcmp(mn, gpus) && !strcmp(mx, gpus))
			mn[0] = mx[0] = '\0';
		if (!strcmp(cpus, "0"))
			cpus[0] = '\0';
		if (!strcmp(mem, "0"))
			mem[0] = '\0';
		if (!strcmp(batch, "0"))
			batch[0] = '\0';
	}
	char el[32] = "-";
	if (st_ms >= 0 && end_ms >= st_ms) {
		long long s = (end_ms - st_ms) / 1000;
		snprintf(el, sizeof(el), "%lld-%02lld:%02lld:%02lld", s / 86400, s % 86400 / 3600,
			 s % 3600 / 60, s % 60);
	}
	fprintf(f, "%s,%s,%s,%s,-,%s,%s,%s,%s,-,%s,%s,%s,%s%s%s,%s,%s,%s,%s,%s,%s,%s\n", id, name,
		tenant, state, sub, st, end, el, gh, gpus, model, plan[0] ? "\"" : "", plan,
		plan[0] ? "\"" : "", batch, model[0] ? iters : "", cpus, mem, guar, mn, mx);
	return 0;
}

static int history_doc(struct trace_ctx *ctx, const char *text, size_t len, char **out,
		       size_t *out_len, struct trace_pos **out_src)
{
	json_error_t je;
	json_t *root = json_loadb(text, len, 0, &je);
	if (!root)
		return rk_error_set(ctx->err, RK_EINVAL, "%s:%d:%d: not JSON: %s", ctx->filename,
				    je.line, je.column, je.text);
	const json_t *jobs = json_object_get(root, "jobs");
	if (!json_is_array(jobs)) {
		json_decref(root);
		return rk_error_set(ctx->err, RK_EINVAL,
				    "%s:1:1: no \"jobs\" array (not `rubick history --json` output)",
				    ctx->filename);
	}
	size_t n = json_array_size(jobs);
	struct trace_pos *src = malloc((n + 2) * sizeof(*src));
	char *buf = NULL;
	size_t size = 0;
	FILE *f = src ? open_memstream(&buf, &size) : NULL;
	int rc = 0;
	if (!f) {
		rc = rk_error_set(ctx->err, RK_ENOMEM, "%s: out of memory", ctx->filename);
		goto out;
	}
	job_positions(text, len, src + 2, n);
	src[0] = src[1] = (struct trace_pos){1, 1};
	fputs("id,name,tenant,state,exit,submit,start,end,elapsed,wait,gpu_hours,gpus,model,plan,"
	      "global_batch,iters,cpus,mem_mb,guaranteed,min_gpus,max_gpus\n",
	      f);
	for (size_t k = 0; k < n && rc == 0; k++) {
		const json_t *j = json_array_get(jobs, k);
		const char *bad = "";
		if (!json_is_object(j) || job_line(f, j, &bad))
			rc = rk_error_set(ctx->err, RK_EINVAL, "%s:%d:%d: jobs[%zu]: %s%s%s",
					  ctx->filename, src[k + 2].line, src[k + 2].col, k,
					  json_is_object(j) ? "key '" : "not an object", bad,
					  json_is_object(j) ? "' is missing or of the wrong type" : "");
	}
	if (fclose(f) && rc == 0)
		rc = rk_error_set(ctx->err, RK_ENOMEM, "%s: out of memory", ctx->filename);
out:
	json_decref(root);
	if (rc < 0) {
		free(buf);
		free(src);
		return rc;
	}
	*out = buf;
	*out_len = size;
	*out_src = src;
	return 0;
}

const struct trace_reader rk_trace_reader_history = {
	.name = "history",
	.summary = "rubick history --csv or --json (rubickd's ended jobs; with --json the zoo "
		   "model, batch and plan of each job)",
	.sep = ',',
	.has_header = 1,
	.cols = cols,
	.detect = detect,
	.row = row,
	.doc = history_doc,
	.finish = trace_finish_relative,
};
