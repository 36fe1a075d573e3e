/*
 * The seeded model mapping and the plan-text check of the trace readers.
 *
 * Most public traces do not name a white-box model: Gavel and Sia give a job
 * type ("ResNet-50 (batch size 64)", "deepspeech2"), Philly and Alibaba only a
 * size. The mapping (docs/trace-format.md, "Model mapping") first looks for a
 * job-type family, then falls back to the job's GPU count; within the
 * candidates it draws with a hash of (seed, job name), so the same seed gives
 * the same models whatever the parse order, and a different seed reshuffles
 * only the draws.
 */
#include "sim/trace/trace_internal.h"

#include "rubick/plan.h"
#include "rubick/zoo.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const trace_default_models[] = {
	"vit", "roberta", "bert", "t5", "t5_3b", "gpt2", "llama7", "llama30", NULL,
};

/*
 * Job-type families. A token of the source string (split at anything that is
 * not a letter or digit, lower-cased) that starts with one of `prefixes` puts
 * the job in the family; candidates are zoo models of the same kind of
 * network (Rubick's zoo, docs/references.md §1.3): vision -> vit, encoder NLP and
 * speech -> bert/roberta, seq2seq/translation -> t5, language models -> gpt2,
 * LLaMA -> llama7/llama30.
 */
struct family {
	const char *prefixes[20];
	const char *models[4];
};

static const struct family families[] = {
	{{"resnet", "res18", "res50", "res101", "res152", "vgg", "alexnet", "inception",
	  "googlenet", "mobilenet", "shufflenet", "cifar", "imagenet", "yolo", "cyclegan",
	  "densenet", "efficientnet", "image", "vit", NULL},
	 {"vit", NULL}},
	{{"roberta", "bert", "squad", "deepspeech", "speech", NULL}, {"bert", "roberta", NULL}},
	{{"transformer", "translation", "gnmt", "seq2seq", "t5", NULL}, {"t5", NULL}},
	{{"lm", "gpt", "language", "wikitext", "lstm", NULL}, {"gpt2", NULL}},
	{{"llama", NULL}, {"llama7", "llama30", NULL}},
};

/*
 * GPU-count buckets for jobs with no recognisable family (recommendation, RL,
 * Philly and Alibaba rows): bigger requests get bigger models, so a 64-GPU
 * Philly job is not replayed as a ViT that saturates at a few GPUs. The
 * boundaries follow the Rubick base trace, where 1-2 GPU jobs are ViT/BERT
 * class, 4-8 GPU jobs T5/GPT-2, and LLaMA jobs ask for 8-48 GPUs
 * (traces/rubick/workloads/workload-base.csv).
 */
struct bucket {
	int max_gpus;
	const char *models[4];
};

static const struct bucket buckets[] = {
	{2, {"vit", "roberta", "bert", NULL}},
	{8, {"bert", "roberta", "t5", "gpt2"}},
	{16, {"t5_3b", "gpt2", "llama7", NULL}},
	{32, {"llama7", NULL}},
	{1 << 30, {"llama7", "llama30", NULL}},
};

/* splitmix64 (Steele et al., 2014): a full-avalanche mix, so seed 1 and 2 differ everywhere. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* FNV-1a over the job key. */
static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

double trace_unit_draw(uint64_t seed, const char *key)
{
	/* A different stream from the model draw: mix the seed once more. */
	uint64_t h = mix64(mix64(seed) ^ mix64(hash_str(key)));
	return (double)(h >> 11) * (1.0 / 9007199254740992.0); /* 53 bits -> [0, 1) */
}

static int allowed(const char *const *models, const char *name)
{
	for (; *models; models++)
		if (strcmp(*models, name) == 0)
			return 1;
	return 0;
}

/* Draw one of `cands` (up to `n`, NULL-ended) that is allowed; 0 if none is. */
static int draw(const char *const *cands, int n, const char *const *models, uint64_t h,
		char model[RK_MODEL_NAME_MAX])
{
	const char *ok[16];
	int k = 0;
	for (int i = 0; i < n && cands[i] && k < 16; i++)
		if (allowed(models, cands[i]))
			ok[k++] = cands[i];
	if (k == 0)
		return 0;
	const char *pick = ok[h % (uint64_t)k];
	size_t len = strnlen(pick, RK_MODEL_NAME_MAX - 1);
	memcpy(model, pick, len);
	model[len] = '\0';
	return 1;
}

/* Family index of `src`, -1 if no token matches. */
static int family_of(const char *src)
{
	char tok[64];
	size_t n = 0;
	for (const char *p = src;; p++) {
		if (*p && isalnum((unsigned char)*p)) {
			if (n + 1 < sizeof(tok))
				tok[n++] = (char)tolower((unsigned char)*p);
			continue;
		}
		if (n > 0) {
			tok[n] = '\0';
			for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
				for (const char *const *pre = families[f].prefixes; *pre; pre++)
					if (strncmp(tok, *pre, strlen(*pre)) == 0 &&
					    /* "lm" must be the whole token: "lmdb" is no LM. */
					    (strlen(*pre) > 2 || strlen(tok) == strlen(*pre)))
						return (int)f;
		}
		n = 0;
		if (!*p)
			return -1;
	}
}

int rk_trace_map_model(const char *source_type, int gpus, const char *job_key, uint64_t seed,
		       const char *const *models, char model[RK_MODEL_NAME_MAX])
{
	if (!models)
		models = trace_default_models;
	if (!source_type)
		source_type = "";
	uint64_t h = mix64(seed ^ mix64(hash_str(job_key ? job_key : "")));

	/* A source that already is a zoo key ("bert", "gpt2" in Muri) keeps it. */
	char low[RK_MODEL_NAME_MAX];
	size_t n = strlen(source_type);
	if (n < sizeof(low)) {
		for (size_t i = 0; i <= n; i++)
			low[i] = (char)tolower((unsigned char)source_type[i]);
		if (allowed(models, low)) {
			snprintf(model, RK_MODEL_NAME_MAX, "%s", low);
			return 0;
		}
	}
	int f = family_of(source_type);
	if (f >= 0 && draw(families[f].models, 4, models, h, model))
		return 0;
	for (size_t b = 0; b < sizeof(buckets) / sizeof(buckets[0]); b++)
		if (gpus <= buckets[b].max_gpus) {
			if (draw(buckets[b].models, 4, models, h, model))
				return 0;
			break;
		}
	/* A caller's zoo without any bucket model: draw from the whole zoo. */
	int all = 0;
	while (models[all])
		all++;
	if (draw(models, all, models, h, model))
		return 0;
	return RK_ENOTFOUND;
}

int trace_assign_model(struct trace_ctx *ctx, const struct trace_row *r, int idx,
		       struct rk_trace_job *job)
{
	int rc = rk_trace_map_model(job->source_type, job->gpus, job->name, ctx->opt->seed,
				    ctx->models, job->model);
	if (rc < 0)
		return trace_fail(ctx, r, idx, rc, "no zoo model to map job type '%s' onto",
				  job->source_type);
	job->model_mapped = 1;
	return 0;
}

/* Canonical "dp=4,tp=2,pp=1,mb=2,ga=1,gc=0,zero=1,offload=0": the plan module's
 * own parser and invariants (plan.h), so a trace accepts exactly what the CLI does. */
static int check_canonical(const char *plan, int gpus, int batch, char *why, size_t cap)
{
	struct rk_plan p;
	struct rk_error e;
	rk_error_clear(&e);
	int rc = rk_plan_parse(plan, "plan", &p, &e);
	if (rc == 0 && batch > 0)
		rc = rk_plan_validate(&p, batch, gpus, &e);
	else if (rc == 0 && p.dp * p.tp * p.pp != gpus)
		rc = rk_error_set(&e, RK_EINVAL, "dp*tp*pp = %d, but %d GPUs requested",
				  p.dp * p.tp * p.pp, gpus);
	if (rc < 0) {
		snprintf(why, cap, "'%s': %s", plan, e.msg);
		return RK_EINVAL;
	}
	return 0;
}

int trace_plan_check(const char *plan, int gpus, int batch, char *why, size_t cap)
{
	/* The artifact names rk_plan_from_artifact reads (plan.h). */
	static const char *const artifact[] = {"ga",	       "gc",	      "zero-dp",
					       "zero-offload", "zero-offload+gc", "tp+ga"};
	if (!plan[0])
		return 0;
	for (size_t i = 0; i < sizeof(artifact) / sizeof(artifact[0]); i++)
		if (strcmp(plan, artifact[i]) == 0)
			return 0;
	/* Rubick artifact 3D code: digits (PP, TP, DP) multiply to the GPUs (traces/rubick/README.md). */
	if (strlen(plan) == 3 && isdigit((unsigned char)plan[0]) &&
	    isdigit((unsigned char)plan[1]) && isdigit((unsigned char)plan[2])) {
		int prod = (plan[0] - '0') * (plan[1] - '0') * (plan[2] - '0');
		if (prod != gpus) {
			snprintf(why, cap,
				 "plan '%s': digits (pp, tp, dp) multiply to %d, but %d GPUs requested",
				 plan, prod, gpus);
			return RK_EINVAL;
		}
		return 0;
	}
	if (strchr(plan, '='))
		return check_canonical(plan, gpus, batch, why, cap);
	snprintf(why, cap,
		 "plan '%s': not ga, gc, zero-dp, zero-offload, zero-offload+gc, tp+ga, a "
		 "3-digit PP-TP-DP code or dp=..,tp=..,pp=..",
		 plan);
	return RK_EINVAL;
}

int trace_get_model(struct trace_ctx *ctx, const struct trace_row *r, int idx, const char *col,
		    struct rk_trace_job *job)
{
	int rc = trace_get_str(ctx, r, idx, col, job->model, sizeof(job->model), 0);
	if (rc < 0)
		return rc;
	snprintf(job->source_type, sizeof(job->source_type), "%s", job->model);
	for (char *c = job->model; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	if (trace_model_known(ctx, job->model))
		return 0;
	/* The zoo's alias table ("t5_3B", "llama7b", "gpt-2") names the same models. */
	const char *canon = rk_zoo_alias_canonical(job->source_type);
	if (canon && trace_model_known(ctx, canon)) {
		snprintf(job->model, sizeof(job->model), "%s", canon);
		return 0;
	}
	char list[200] = "";
	size_t used = 0;
	for (const char *const *m = ctx->models; *m && used + 1 < sizeof(list); m++) {
		int w = snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "", *m);
		if (w < 0)
			break;
		used += (size_t)w;
	}
	return trace_fail(ctx, r, idx, RK_ENOTFOUND, "column '%s': unknown model '%s' (zoo: %s)",
			  col, job->source_type, list);
}

int trace_get_space(struct trace_ctx *ctx, const struct trace_row *r, int idx, const char *col,
		    int plan_idx, struct rk_trace_job *job)
{
	if (!trace_has(r, idx))
		return 0;
	char text[RK_PLAN_SPACE_TEXT_MAX * 2];
	int rc = trace_get_str(ctx, r, idx, col, text, sizeof(text), 0);
	if (rc < 0)
		return rc;
	struct rk_plan_space sp;
	struct rk_error e;
	rk_error_clear(&e);
	/* The parser's message reads "space:1:COL: what" with COL inside the field:
	 * moved onto the file's own column, so it points at the item at fault. */
	rc = rk_plan_space_parse(text, "space", &sp, &e);
	if (rc < 0) {
		unsigned long at = 0;
		int used = 0;
		const char *what = e.msg;
		if (sscanf(e.msg, "space:1:%lu: %n", &at, &used) == 1 && used > 0)
			what = e.msg + used;
		int fcol = r->f[idx].col + (at > 0 ? (int)at - 1 : 0);
		return rk_error_set(ctx->err, rc, "%s:%d:%d: column '%s': %s", ctx->filename,
				    r->line, fcol, col, what);
	}
	/* A job whose own requested plan its script cannot run is a contradiction in
	 * the trace, not something a policy could work around. */
	struct rk_plan p;
	if (job->plan[0] && strchr(job->plan, '=') && rk_plan_parse(job->plan, "plan", &p, NULL) == 0) {
		const char *dim = rk_plan_space_violation(&p, &sp);
		if (dim) {
			char shown[RK_PLAN_SPACE_TEXT_MAX];
			if (rk_plan_space_format(&sp, shown, sizeof(shown)) < 0)
				shown[0] = '\0';
			return trace_fail(ctx, r, plan_idx, RK_EINVAL,
					  "job %s: its plan '%s' is outside its own space '%s' (%s)",
					  job->name[0] ? job->name : "(unnamed)", job->plan, shown,
					  dim);
		}
	}
	job->space = sp;
	return 0;
}
