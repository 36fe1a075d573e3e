/*
 * Slurm accounting as printed by `sacct -P` (or `-p`): '|'-separated, a header
 * naming the fields, one row per job and one per job step. A site's own
 * history, replayed to ask what another policy would have done with it
 * (docs/replay.md). Columns are found by name, any subset a site exports:
 *
 * - JobID and Submit are required, and Elapsed (or ElapsedRaw) or Start and
 *   End; a GPU count comes from AllocTRES, ReqTRES, AllocGRES or ReqGRES.
 * - Steps (JobID with a '.': 123.batch, 123.extern, 123.0) are folded into
 *   their job, whose own row holds the job's times and allocation: n_steps.
 *   Array tasks (123_4) and heterogeneous components (123+0) are jobs.
 * - A REQUEUED row with an End (`sacct -D` lists every run of a requeued job)
 *   is a run that held its GPUs: it replays as a job of its own (JobID~line).
 * - Jobs pending or running at export (PENDING, RUNNING, ... or End Unknown)
 *   are dropped and counted (n_unfinished); jobs that ended without running
 *   (Start Unknown/None: cancelled before their start; 0 s elapsed) too
 *   (n_unstarted); jobs with no GPU (CPU jobs) are counted in n_no_gpu.
 * - Run time = Elapsed (ElapsedRaw, else End - Start): the job's time on the
 *   GPUs it had. GPUs = gres/gpu=N of AllocTRES (the sum of gres/gpu:TYPE=N
 *   when only typed counts appear); an empty AllocTRES (the job never got an
 *   allocation record) falls back to ReqTRES, then the GRES columns. cpu= and
 *   mem= of the same TRES give the host request.
 * - Tenant = Account, or User where the account is empty; JobName is the job
 *   type the model mapping reads. sacct names no model: every job runs as a
 *   black box, its run time at the request replayed through a stand-in
 *   (docs/oracle.md, "Job length").
 * Times are sacct's ISO form (local time, no zone), made relative to the
 * earliest submission.
 */
#include "sim/trace/trace_internal.h"

#include <string.h>

enum {
	JOBID, JOBNAME, USER, ACCOUNT, SUBMIT, START, END, ELAPSED, ELAPSED_RAW, STATE,
	ALLOC_TRES, REQ_TRES, ALLOC_GRES, REQ_GRES, ALLOC_CPUS,
};

static const struct trace_col cols[] = {
	{"JobID", 1},	   {"JobName", 0},   {"User", 0},	   {"Account", 0},
	{"Submit", 1},	   {"Start", 0},     {"End", 0},	   {"Elapsed", 0},
	{"ElapsedRaw", 0}, {"State", 0},     {"AllocTRES", 0},	   {"ReqTRES", 0},
	{"AllocGRES", 0},  {"ReqGRES", 0},   {"AllocCPUS", 0},	   {NULL, 0},
};

static int detect(const struct trace_row *first)
{
	return trace_header_matches(first, cols);
}

static int begin(struct trace_ctx *ctx, const struct trace_row *hdr)
{
	if (trace_idx(ctx, ELAPSED) < 0 && trace_idx(ctx, ELAPSED_RAW) < 0 &&
	    (trace_idx(ctx, START) < 0 || trace_idx(ctx, END) < 0))
		return trace_fail(ctx, hdr, -1, RK_EINVAL,
				  "header: no run time (needs Elapsed, ElapsedRaw, or Start and "
				  "End; sacct -P -o JobID,Submit,Elapsed,AllocTRES,...)");
	if (trace_idx(ctx, ALLOC_TRES) < 0 && trace_idx(ctx, REQ_TRES) < 0 &&
	    trace_idx(ctx, ALLOC_GRES) < 0 && trace_idx(ctx, REQ_GRES) < 0)
		return trace_fail(ctx, hdr, -1, RK_EINVAL,
				  "header: no GPU count (needs AllocTRES, ReqTRES, AllocGRES or "
				  "ReqGRES)");
	return 0;
}

/* 1 if field `f` starts with the word `w` ("CANCELLED by 0" starts with CANCELLED). */
static int word_is(const struct trace_field *f, const char *w)
{
	size_t n = strlen(w);
	if (f->len < n || (f->len > n && f->p[n] != ' '))
		return 0;
	struct trace_field head = {f->p, n, f->col};
	return trace_field_is(&head, w);
}

/* States of a job that has not ended: no final End or Elapsed yet. */
static int state_unfinished(const struct trace_field *f)
{
	static const char *const live[] = {
		"PENDING",    "RUNNING",  "SUSPENDED", "RESIZING",	"CONFIGURING",
		"COMPLETING", "STOPPED",  "SIGNALING", "STAGE_OUT",	"REQUEUE_HOLD",
		"REQUEUE_FED",
	};
	for (size_t i = 0; i < sizeof(live) / sizeof(live[0]); i++)
		if (word_is(f, live[i]))
			return 1;
	return 0;
}

/* An absent date: empty, "Unknown" or "None" (sacct's words). */
static int date_absent(const struct trace_row *r, int idx)
{
	return !trace_has(r, idx) || trace_field_is(&r->f[idx], "Unknown") ||
	       trace_field_is(&r->f[idx], "None");
}

static int get_date(struct trace_ctx *ctx, const struct trace_row *r, int idx, const char *col,
		    int64_t *s)
{
	if (!trace_parse_datetime(&r->f[idx], s))
		return trace_fail(ctx, r, idx, RK_EINVAL,
				  "column '%s': '%.*s' is not YYYY-MM-DDTHH:MM:SS, Unknown or None",
				  col, r->f[idx].len > 40 ? 40 : (int)r->f[idx].len, r->f[idx].p);
	return 0;
}

/* A TRES amount "2", "16G", "62.50G", "4000M" as a number of `unit`s (1 = count, MiB). */
static int tres_amount(const char *p, const char *end, int mem, double *out)
{
	double v = 0, scale = 1;
	int seen = 0, frac = 0;
	for (; p < end && ((*p >= '0' && *p <= '9') || (*p == '.' && !frac)); p++) {
		if (*p == '.') {
			frac = 1;
			continue;
		}
		seen = 1;
		if (frac) {
			scale /= 10;
			v += (*p - '0') * scale;
		} else {
			v = v * 10 + (*p - '0');
		}
	}
	if (!seen)
		return 0;
	if (mem && p < end) { /* mem=: K, M, G, T, P suffixes; MiB without one */
		static const char sfx[] = "KMGTP";
		const char *s = memchr(sfx, *p, 5);
		if (!s)
			return 0;
		v *= (s == sfx) ? 1.0 / 1024 : (double)(1LL << (10 * (s - sfx - 1)));
		p++;
	}
	if (p != end || v > 1e12)
		return 0;
	*out = v;
	return 1;
}

struct tres {
	int gpus, typed_gpus, has_gpu, has_typed; /* gres/gpu=N and the sum of gres/gpu:T=N */
	int cpus;
	int64_t mem_mb;
};

/*
 * Read "billing=4,cpu=4,gres/gpu=2,gres/gpu:a100=2,mem=16G,node=1" (TRES) or
 * "gpu:2", "gpu:a100:2(IDX:0-1)" (GRES, `gres` = 1). Unknown keys are skipped.
 */
static int read_tres(struct trace_ctx *ctx, const struct trace_row *r, int idx, const char *col,
		     int gres, struct tres *out)
{
	const struct trace_field *f = &r->f[idx];
	const char *p = f->p, *end = f->p + f->len;
	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *e = comma ? comma : end;
		const char *paren = memchr(p, '(', (size_t)(e - p));
		const char *ve = paren ? paren : e;
		const char *eq = memchr(p, gres ? ':' : '=', (size_t)(ve - p));
		if (gres && eq) /* gpu[:TYPE]:N: the count follows the last ':' */
			for (const char *q = ve - 1; q > eq; q--)
				if (*q == ':') {
					eq = q;
					break;
				}
		size_t klen = eq ? (size_t)(eq - p) : 0;
		double v = 0;
		int is_gpu = eq && klen >= (gres ? 3 : 8) &&
			     !strncmp(p, gres ? "gpu" : "gres/gpu", gres ? 3 : 8);
		int typed = is_gpu && klen > (gres ? 3u : 8u);
		if (is_gpu && typed && p[gres ? 3 : 8] != ':')
			is_gpu = 0; /* gres/gpumem=, gres/gpuutil=: not a GPU count */
		if (is_gpu || (!gres && eq && (klen == 3 && !strncmp(p, "cpu", 3))) ||
		    (!gres && eq && klen == 3 && !strncmp(p, "mem", 3))) {
			int mem = !gres && !strncmp(p, "mem", 3) && klen == 3;
			if (!tres_amount(eq + 1, ve, mem, &v) || (!mem && v != (double)(int64_t)v) ||
			    (!mem && v > (1 << 20)))
				return trace_fail(ctx, r, idx, RK_EINVAL,
						  "column '%s': '%.*s' is not a count%s", col,
						  (int)(e - p) > 40 ? 40 : (int)(e - p), p,
						  mem ? " of K, M, G or T" : "");
			if (is_gpu && typed) {
				out->typed_gpus += (int)v;
				out->has_typed = 1;
			} else if (is_gpu) {
				out->gpus = (int)v;
				out->has_gpu = 1;
			} else if (mem) {
				out->mem_mb = (int64_t)(v + 0.5);
			} else {
				out->cpus = (int)v;
			}
		}
		p = comma ? comma + 1 : end;
	}
	if (!out->has_gpu && out->has_typed) {
		out->gpus = out->typed_gpus;
		out->has_gpu = 1;
	}
	return 0;
}

/* GPUs, CPUs and memory from the first non-empty of the allocation and request columns. */
static int read_request(struct trace_ctx *ctx, const struct trace_row *r,
			struct rk_trace_job *job)
{
	static const struct {
		int c;
		const char *name;
		int gres;
	} order[] = {
		{ALLOC_TRES, "AllocTRES", 0},
		{REQ_TRES, "ReqTRES", 0},
		{ALLOC_GRES, "AllocGRES", 1},
		{REQ_GRES, "ReqGRES", 1},
	};
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		int idx = trace_idx(ctx, order[i].c);
		if (!trace_has(r, idx))
			continue;
		struct tres t;
		int rc = read_tres(ctx, r, idx, order[i].name, order[i].gres, &t);
		if (rc < 0)
			return rc;
		job->gpus = t.gpus; /* a TRES without gres/gpu: a CPU job, 0 GPUs */
		if (!order[i].gres) {
			job->cpus = t.cpus;
			job->mem_mb = t.mem_mb;
		}
		break;
	}
	int ci = trace_idx(ctx, ALLOC_CPUS);
	if (!job->cpus && trace_has(r, ci))
		return trace_get_int(ctx, r, ci, "AllocCPUS", 0, 1 << 24, &job->cpus);
	return 0;
}

static int row(struct trace_ctx *ctx, const struct trace_row *r, struct rk_trace_job *job)
{
	int rc, id = trace_idx(ctx, JOBID);
	if ((rc = trace_get_str(ctx, r, id, "JobID", job->name, sizeof(job->name), 0)) < 0)
		return rc;
	if (strchr(job->name, '.'))
		return TRACE_ROW_STEP;
	int64_t submit, start = 0, end = 0;
	int si = trace_idx(ctx, SUBMIT), st = trace_idx(ctx, STATE);
	if (date_absent(r, si))
		return trace_fail(ctx, r, si, RK_EINVAL, "column 'Submit': no submit time");
	if ((rc = get_date(ctx, r, si, "Submit", &submit)) < 0)
		return rc;
	if (submit < 0)
		return trace_fail(ctx, r, si, RK_ERANGE, "column 'Submit': before 1970");
	job->submit_ms = submit * 1000;
	if (trace_has(r, st) && state_unfinished(&r->f[st]))
		return TRACE_ROW_UNFINISHED;
	int sti = trace_idx(ctx, START), ei = trace_idx(ctx, END);
	int has_start = sti >= 0 && !date_absent(r, sti), has_end = ei >= 0 && !date_absent(r, ei);
	if (sti >= 0 && !has_start)
		return TRACE_ROW_UNSTARTED; /* cancelled (or failed) before it started */
	if (ei >= 0 && !has_end)
		return TRACE_ROW_UNFINISHED; /* running when exported */
	if ((has_start && (rc = get_date(ctx, r, sti, "Start", &start)) < 0) ||
	    (has_end && (rc = get_date(ctx, r, ei, "End", &end)) < 0))
		return rc;
	if (has_start && has_end && end < start)
		return trace_fail(ctx, r, ei, RK_ERANGE, "column 'End': before Start");
	if (has_start && start < submit)
		return trace_fail(ctx, r, sti, RK_ERANGE, "column 'Start': before Submit");
	int eri = trace_idx(ctx, ELAPSED_RAW), eli = trace_idx(ctx, ELAPSED);
	if (trace_has(r, eri)) {
		if ((rc = trace_get_f64(ctx, r, eri, "ElapsedRaw", 0, 1e10, &job->duration_s)) < 0)
			return rc;
	} else if (trace_has(r, eli)) {
		if (!trace_parse_hms(&r->f[eli], &job->duration_s))
			return trace_fail(ctx, r, eli, RK_EINVAL,
					  "column 'Elapsed': '%.*s' is not [D-]HH:MM:SS",
					  r->f[eli].len > 40 ? 40 : (int)r->f[eli].len, r->f[eli].p);
	} else if (has_start && has_end) {
		job->duration_s = (double)(end - start);
	} else {
		return trace_fail(ctx, r, eli >= 0 ? eli : -1, RK_EINVAL,
				  "no run time: Elapsed empty and no Start and End");
	}
	if (!(job->duration_s > 0))
		return TRACE_ROW_UNSTARTED; /* ran under sacct's 1 s resolution: nothing to replay */
	if ((rc = read_request(ctx, r, job)) < 0)
		return rc;
	int ai = trace_idx(ctx, ACCOUNT), ui = trace_idx(ctx, USER);
	int ti = trace_has(r, ai) ? ai : ui;
	if (trace_has(r, ti) &&
	    (rc = trace_get_str(ctx, r, ti, ti == ai ? "Account" : "User", job->tenant,
				sizeof(job->tenant), 0)) < 0)
		return rc;
	int ni = trace_idx(ctx, JOBNAME);
	if (trace_has(r, ni) && (rc = trace_get_str(ctx, r, ni, "JobName", job->source_type,
						    sizeof(job->source_type), 1)) < 0)
		return rc;
	return 0;
}

const struct trace_reader rk_trace_reader_sacct = {
	.name = "sacct",
	.summary = "Slurm accounting, sacct -P (JobID|Submit|...|Elapsed|AllocTRES...; steps "
		   "folded, unfinished and CPU jobs counted; black boxes)",
	.sep = '|',
	.has_header = 1,
	.cols = cols,
	.detect = detect,
	.begin = begin,
	.row = row,
	.finish = trace_finish_relative,
};
