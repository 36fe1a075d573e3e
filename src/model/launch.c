/*
 * The launch-command reader: Megatron-LM / Megatron-DeepSpeed / DeepSpeed /
 * Hugging Face Trainer flags into a model structure, the requested plan and the
 * global batch (docs/launch.md). Batch arithmetic follows the frameworks' own
 * rule, global batch = micro-batch x accumulation steps x data-parallel size,
 * with data-parallel size = GPUs / (tensor x pipeline degree) (Megatron-LM
 * arguments.py; DeepSpeed config reference, "Batch size related parameters").
 */
#include "rubick/launch.h"
#include "rubick/zoo.h"

#include "model/launch_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Largest global batch a plan may carry: the zoo's bound on global_batch. */
#define GLOBAL_BATCH_MAX 16777216

enum slot {
	S_LAYERS, S_HIDDEN, S_HEADS, S_SEQ, S_ENC_SEQ, S_MAXPOS, S_VOCAB, S_VOCAB_FILE,
	S_GBS, S_MBS, S_GA, S_TP, S_PP, S_NO_PP, S_GC, S_RECOMPUTE, S_HF_GC, S_ZERO,
	S_CPU_OPT, S_DS_CONFIG, S_DEEPSPEED, S_HF_MODEL, S_ITERS, S_NPROC, S_NNODES,
	S_NUM_GPUS, S_NUM_NODES, S_COUNT
};

enum arity {
	A_VALUE,    /* --flag V or --flag=V */
	A_SWITCH,   /* --flag */
	A_OPT_BOOL, /* --flag, --flag true|false, --flag=true|false (HF booleans) */
	A_OPT_JSON, /* --deepspeed [FILE.json]: a switch in Megatron-DeepSpeed, a path in HF */
};

/* Flag names after normalisation: leading "--" dropped, '_' read as '-'. */
static const struct {
	const char *name;
	enum slot slot;
	enum arity arity;
} flags[] = {
	{"num-layers", S_LAYERS, A_VALUE},
	{"hidden-size", S_HIDDEN, A_VALUE},
	{"num-attention-heads", S_HEADS, A_VALUE},
	{"seq-length", S_SEQ, A_VALUE},
	{"max-seq-length", S_SEQ, A_VALUE},
	{"block-size", S_SEQ, A_VALUE},
	{"model-max-length", S_SEQ, A_VALUE},
	{"encoder-seq-length", S_ENC_SEQ, A_VALUE},
	{"max-position-embeddings", S_MAXPOS, A_VALUE},
	{"vocab-size", S_VOCAB, A_VALUE},
	{"vocab-file", S_VOCAB_FILE, A_VALUE},
	{"global-batch-size", S_GBS, A_VALUE},
	{"micro-batch-size", S_MBS, A_VALUE},
	{"per-device-train-batch-size", S_MBS, A_VALUE},
	{"gradient-accumulation-steps", S_GA, A_VALUE},
	{"tensor-model-parallel-size", S_TP, A_VALUE},
	{"pipeline-model-parallel-size", S_PP, A_VALUE},
	{"no-pipeline-parallel", S_NO_PP, A_SWITCH},
	{"recompute-activations", S_GC, A_SWITCH},
	{"checkpoint-activations", S_GC, A_SWITCH},
	{"deepspeed-activation-checkpointing", S_GC, A_SWITCH},
	{"recompute-granularity", S_RECOMPUTE, A_VALUE},
	{"gradient-checkpointing", S_HF_GC, A_OPT_BOOL},
	{"zero-stage", S_ZERO, A_VALUE},
	{"cpu-optimizer", S_CPU_OPT, A_SWITCH},
	{"deepspeed-config", S_DS_CONFIG, A_VALUE},
	{"deepspeed", S_DEEPSPEED, A_OPT_JSON},
	{"model-name-or-path", S_HF_MODEL, A_VALUE},
	{"train-iters", S_ITERS, A_VALUE},
	{"max-steps", S_ITERS, A_VALUE},
	{"nproc-per-node", S_NPROC, A_VALUE},
	{"nnodes", S_NNODES, A_VALUE},
	{"num-gpus", S_NUM_GPUS, A_VALUE},
	{"num-nodes", S_NUM_NODES, A_VALUE},
};

/* One flag as the command gave it. */
struct given {
	const char *flag;  /* spelling as written, e.g. "--per_device_train_batch_size" */
	const char *value; /* NULL for switches */
	int line, col;
	bool set;
};

/* What rk_launch_parse works on; lives on its stack. */
struct ctx {
	const char *src;
	struct given g[S_COUNT];
	char flagbuf[S_COUNT][80]; /* "--flag" spellings (bounded copies) */
};

static int flag_err(const struct ctx *c, enum slot s, int code, struct rk_error *err,
		    const char *what)
{
	const struct given *g = &c->g[s];
	if (g->value)
		return rk_error_set(err, code, "%s:%d:%d: %s %s: %s", c->src, g->line, g->col,
				    g->flag, g->value, what);
	return rk_error_set(err, code, "%s:%d:%d: %s: %s", c->src, g->line, g->col, g->flag,
			    what);
}

/* Read slot s as an integer in [lo, hi] into *out; 0 when absent (out untouched). */
static int get_int(const struct ctx *c, enum slot s, long lo, long hi, long *out,
		   struct rk_error *err)
{
	const struct given *g = &c->g[s];
	if (!g->set)
		return 0;
	const char *v = g->value;
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (end == v || *end != '\0' || isspace((unsigned char)*v)) {
		if (strchr(v, '$'))
			return flag_err(c, s, RK_EINVAL, err,
					"not an integer (an unexpanded shell variable?)");
		return flag_err(c, s, RK_EINVAL, err, "not an integer");
	}
	if (errno == ERANGE || x < lo || x > hi) {
		char what[96];
		snprintf(what, sizeof(what), "out of range [%ld, %ld]", lo, hi);
		return flag_err(c, s, RK_ERANGE, err, what);
	}
	*out = x;
	return 0;
}

/* HF-style boolean words. */
static int bool_word(const char *v)
{
	if (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes"))
		return 1;
	if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no"))
		return 0;
	return -1;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

/* Record word i (and maybe i+1) into the context; *used = words consumed. */
static int take_flag(struct ctx *c, const struct lx_words *w, size_t i, size_t *used,
		     struct rk_error *err)
{
	const struct lx_word *wd = &w->words[i];
	const char *t = wd->text;
	*used = 1;
	if (strncmp(t, "--", 2) || !t[2])
		return 0;
	const char *eq = strchr(t, '=');
	size_t nlen = eq ? (size_t)(eq - t) - 2 : strlen(t) - 2;
	char name[64];
	if (nlen >= sizeof(name))
		return 0; /* longer than any flag we read: someone else's */
	for (size_t k = 0; k < nlen; k++)
		name[k] = t[2 + k] == '_' ? '-' : (char)tolower((unsigned char)t[2 + k]);
	name[nlen] = '\0';
	size_t f;
	for (f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
		if (!strcmp(flags[f].name, name))
			break;
	if (f == sizeof(flags) / sizeof(flags[0]))
		return 0; /* unknown flags are ignored (docs/launch.md) */
	enum slot s = flags[f].slot;
	const char *value = eq ? eq + 1 : NULL;
	const char *next = i + 1 < w->n ? w->words[i + 1].text : NULL;
	switch (flags[f].arity) {
	case A_VALUE:
		if (!value) {
			if (!next || !strncmp(next, "--", 2))
				return rk_error_set(err, RK_EINVAL, "%s:%d:%d: %.*s: missing value",
						    c->src, wd->line, wd->col, (int)(nlen + 2), t);
			value = next;
			*used = 2;
		}
		break;
	case A_SWITCH:
		if (value)
			return rk_error_set(err, RK_EINVAL, "%s:%d:%d: %.*s takes no value",
					    c->src, wd->line, wd->col, (int)(nlen + 2), t);
		break;
	case A_OPT_BOOL:
		if (!value && next && bool_word(next) >= 0) {
			value = next;
			*used = 2;
		}
		if (value && bool_word(value) < 0)
			return rk_error_set(err, RK_EINVAL,
					    "%s:%d:%d: %.*s %s: not a boolean (true/false)", c->src,
					    wd->line, wd->col, (int)(nlen + 2), t, value);
		break;
	case A_OPT_JSON:
		if (!value && next && strncmp(next, "--", 2) && ends_with(next, ".json")) {
			value = next;
			*used = 2;
		}
		break;
	}
	struct given *g = &c->g[s];
	if (g->set) {
		/* argparse keeps the last; a repeat that disagrees is a contradiction. */
		bool same = (!g->value && !value) || (g->value && value && !strcmp(g->value, value));
		if (!same)
			return rk_error_set(err, RK_EINVAL,
					    "%s:%d:%d: %.*s %s contradicts %s %s given before", c->src,
					    wd->line, wd->col, (int)(nlen + 2), t,
					    value ? value : "(switch)", g->flag,
					    g->value ? g->value : "(switch)");
		return 0;
	}
	snprintf(c->flagbuf[s], sizeof(c->flagbuf[s]), "%.*s", (int)(nlen + 2), t);
	*g = (struct given){c->flagbuf[s], value, wd->line, wd->col, true};
	return 0;
}

int rk_launch_files_lookup(void *ctx, const char *path, const char **text, size_t *len,
			   struct rk_error *err)
{
	const struct rk_launch_files *t = ctx;
	for (const struct rk_launch_file *f = t ? t->files : NULL; f && f->path; f++)
		if (!strcmp(f->path, path)) {
			*text = f->text;
			*len = f->len;
			return 0;
		}
	return rk_error_set(err, RK_ENOTFOUND, "%s: no such config was supplied", path);
}

/* A value with the place it came from, for messages that name both sides. */
struct sourced {
	long v;        /* 0 = unknown */
	char from[512]; /* "--micro-batch-size 4" or "ds.json train_micro_batch_size_per_gpu 4" */
};

static void from_flag(struct sourced *q, const struct ctx *c, enum slot s, long v)
{
	q->v = v;
	snprintf(q->from, sizeof(q->from), "%s %ld", c->g[s].flag, v);
}

/* Merge a DeepSpeed config value into q; a disagreement is an error naming both. */
static int merge_ds(struct sourced *q, long ds_v, const char *ds_path, const char *ds_key,
		    const char *src, struct rk_error *err)
{
	if (ds_v <= 0)
		return 0;
	if (q->v && q->v != ds_v)
		return rk_error_set(err, RK_EINVAL, "%s: %s contradicts %s: %s is %ld", src, q->from,
				    ds_path, ds_key, ds_v);
	if (!q->v) {
		q->v = ds_v;
		snprintf(q->from, sizeof(q->from), "%s %s %ld", ds_path, ds_key, ds_v);
	}
	return 0;
}

/* Vocabulary sizes of the tokenizer files Megatron examples name (--vocab-file). */
static int vocab_from_file(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!strcmp(base, "gpt2-vocab.json"))
		return 50257; /* GPT-2 BPE (Radford et al. 2019) */
	if (!strncmp(base, "bert-", 5) && ends_with(base, "vocab.txt"))
		return 30522; /* BERT WordPiece, uncased (Devlin et al. 2019) */
	return 0;
}

/* Find --model_name_or_path in the zoo: as given, then its last path component. */
static const struct rk_model *zoo_model(const struct rk_zoo *zoo, const char *name)
{
	if (!zoo)
		return NULL;
	const struct rk_model *m = rk_zoo_find(zoo, name);
	if (m)
		return m;
	const char *base = strrchr(name, '/');
	if (base && base[1])
		m = rk_zoo_find(zoo, base + 1);
	return m;
}

/* The model: from the zoo, from the structure flags, or both (flags must agree). */
static int resolve_model(const struct ctx *c, const struct rk_launch_opts *o,
			 struct rk_launch *L, struct rk_error *err)
{
	const struct given *g = c->g;
	bool structure = g[S_LAYERS].set || g[S_HIDDEN].set || g[S_HEADS].set;
	const struct rk_model *zm = NULL;
	if (g[S_HF_MODEL].set)
		zm = zoo_model(o->zoo, g[S_HF_MODEL].value);
	if (!structure && !zm) {
		if (g[S_HF_MODEL].set)
			return rk_error_set(err, RK_ENOTFOUND,
					    "%s:%d:%d: %s %s: not a zoo model and the command gives no "
					    "structure (--num-layers, --hidden-size, "
					    "--num-attention-heads)",
					    c->src, g[S_HF_MODEL].line, g[S_HF_MODEL].col,
					    g[S_HF_MODEL].flag, g[S_HF_MODEL].value);
		return rk_error_set(err, RK_ENOTFOUND,
				    "%s: not a white-box launch command: no model structure "
				    "(--num-layers, --hidden-size, --num-attention-heads) and no "
				    "--model_name_or_path",
				    c->src);
	}
	L->kind = structure ? RK_LAUNCH_MEGATRON : RK_LAUNCH_HF;
	struct rk_model m;
	memset(&m, 0, sizeof(m));
	if (zm) {
		m = *zm;
		L->from_zoo = 1;
	}
	long layers = m.layers, hidden = m.hidden, heads = m.heads, seq = 0, maxpos = 0;
	long vocab = -1;
	int rc;
	static const enum slot need[] = {S_LAYERS, S_HIDDEN, S_HEADS};
	static const char *const need_flag[] = {"--num-layers", "--hidden-size",
						"--num-attention-heads"};
	long *dst[] = {&layers, &hidden, &heads};
	static const long hi[] = {100000, 1048576, 65536};
	for (int k = 0; k < 3; k++) {
		long before = *dst[k];
		if (!g[need[k]].set) {
			if (!zm)
				return rk_error_set(err, RK_EINVAL,
						    "%s: %s missing: the structure flags come together "
						    "(--num-layers, --hidden-size, --num-attention-heads)",
						    c->src, need_flag[k]);
			continue;
		}
		if ((rc = get_int(c, need[k], 1, hi[k], dst[k], err)))
			return rc;
		if (zm && *dst[k] != before) {
			char what[160];
			snprintf(what, sizeof(what), "contradicts %s %s of the zoo model '%s' (%ld)",
				 g[S_HF_MODEL].flag, g[S_HF_MODEL].value, zm->name, before);
			return flag_err(c, need[k], RK_EINVAL, err, what);
		}
	}
	if ((rc = get_int(c, S_SEQ, 1, 16777216, &seq, err)))
		return rc;
	if (!seq && (rc = get_int(c, S_ENC_SEQ, 1, 16777216, &seq, err)))
		return rc;
	if ((rc = get_int(c, S_MAXPOS, 1, 16777216, &maxpos, err)))
		return rc;
	if ((rc = get_int(c, S_VOCAB, 0, 100000000, &vocab, err)))
		return rc;
	if (!seq) {
		if (!zm)
			return rk_error_set(err, RK_EINVAL,
					    "%s: --seq-length missing (or --encoder-seq-length, "
					    "--max_seq_length)",
					    c->src);
		seq = m.seq_len;
	}
	if (maxpos && seq > maxpos) {
		char what[128];
		snprintf(what, sizeof(what), "is shorter than the sequence length %ld", seq);
		return flag_err(c, S_MAXPOS, RK_EINVAL, err, what);
	}
	if (hidden % heads) {
		char what[128];
		snprintf(what, sizeof(what), "does not divide %s %ld", g[S_HIDDEN].set ?
			 g[S_HIDDEN].flag : "the hidden size", hidden);
		return flag_err(c, S_HEADS, RK_EINVAL, err, what);
	}
	if (vocab < 0) {
		vocab = zm ? m.vocab : 0;
		if (!zm && g[S_VOCAB_FILE].set)
			vocab = vocab_from_file(g[S_VOCAB_FILE].value);
	} else if (zm && vocab != m.vocab) {
		char what[160];
		snprintf(what, sizeof(what), "contradicts the zoo model '%s' (%d)", zm->name,
			 m.vocab);
		return flag_err(c, S_VOCAB, RK_EINVAL, err, what);
	}
	if (zm && seq != m.seq_len)
		m.fwd_ms = 0; /* measured at another length: unknown at this one */
	if (!zm) {
		const char *name = o->model_name ? o->model_name : "launch";
		size_t n = strlen(name);
		if (n >= RK_MODEL_NAME_MAX)
			return rk_error_set(err, RK_EINVAL, "%s: model name '%s' is too long", c->src,
					    name);
		for (size_t k = 0; k <= n; k++)
			m.name[k] = (char)tolower((unsigned char)name[k]);
		m.params = rk_model_params_estimate((int)layers, (int)hidden, (int)vocab);
		L->params_estimated = 1;
		/* Megatron runs tensor/pipeline-parallel plans; the HF Trainer does not. */
		m.allow_3d = 1;
	}
	m.layers = (int)layers;
	m.hidden = (int)hidden;
	m.heads = (int)heads;
	m.seq_len = (int)seq;
	m.vocab = (int)vocab;
	L->model = m;
	return 0;
}

/* Read the DeepSpeed config the command names, if any, into *ds. */
static int read_ds(const struct ctx *c, const struct rk_launch_opts *o, struct rk_ds_config *ds,
		   const char **ds_path, struct rk_error *err)
{
	const struct given *g = c->g;
	enum slot s = g[S_DS_CONFIG].set ? S_DS_CONFIG : S_DEEPSPEED;
	*ds = (struct rk_ds_config){0, 0, 0, -1, -1};
	*ds_path = NULL;
	if (!g[s].set || !g[s].value)
		return 0;
	if (g[S_DS_CONFIG].set && g[S_DEEPSPEED].value && strcmp(g[S_DEEPSPEED].value,
								  g[S_DS_CONFIG].value))
		return rk_error_set(err, RK_EINVAL, "%s: %s %s contradicts %s %s", c->src,
				    g[S_DEEPSPEED].flag, g[S_DEEPSPEED].value, g[S_DS_CONFIG].flag,
				    g[S_DS_CONFIG].value);
	const char *path = g[s].value;
	const char *text = NULL;
	size_t len = 0;
	struct rk_error ferr;
	rk_error_clear(&ferr);
	int rc = o->read_file ? o->read_file(o->read_ctx, path, &text, &len, &ferr) : RK_ENOTFOUND;
	if (rc || !text) {
		char what[300];
		snprintf(what, sizeof(what), "the config's text was not supplied%s%.240s",
			 ferr.msg[0] ? " (" : "", ferr.msg[0] ? ferr.msg : "");
		if (ferr.msg[0])
			strncat(what, ")", sizeof(what) - strlen(what) - 1);
		return flag_err(c, s, rc && rc != RK_ENOTFOUND ? rc : RK_ENOTFOUND, err, what);
	}
	if ((rc = rk_ds_config_parse(text, len, path, ds, err)))
		return rk_error_prefix(err, "%s: %s", c->src, g[s].flag);
	*ds_path = path;
	return 0;
}

/* World size from --nproc_per_node x --nnodes (torchrun) or --num_gpus x --num_nodes (deepspeed). */
static int launcher_gpus(const struct ctx *c, long *gpus, char *from, size_t cap,
			 struct rk_error *err)
{
	long per = 0, nodes = 1;
	int rc;
	enum slot sp = c->g[S_NPROC].set ? S_NPROC : S_NUM_GPUS;
	enum slot sn = c->g[S_NPROC].set ? S_NNODES : S_NUM_NODES;
	*gpus = 0;
	/* torchrun's "--nproc_per_node auto|gpu" counts the node's GPUs at run time:
	 * unknown here, so the job's GPU count (opts.gpus) must say. */
	const char *pv = c->g[sp].value, *nv = c->g[sn].value;
	if (c->g[sp].set && pv && (!strcmp(pv, "auto") || !strcmp(pv, "gpu")))
		return 0;
	/* "--nproc_per_node=$NPROC": the scheduler sets it at launch; same answer. */
	if ((pv && strchr(pv, '$')) || (nv && strchr(nv, '$')))
		return 0;
	if ((rc = get_int(c, sp, 1, 4096, &per, err)) || (rc = get_int(c, sn, 1, 65536, &nodes, err)))
		return rc;
	if (!per)
		return 0;
	*gpus = per * nodes;
	if (c->g[sn].set)
		snprintf(from, cap, "%s %ld x %s %ld", c->g[sp].flag, per, c->g[sn].flag, nodes);
	else
		snprintf(from, cap, "%s %ld", c->g[sp].flag, per);
	return 0;
}

static int resolve_plan(const struct ctx *c, const struct rk_launch_opts *o, struct rk_launch *L,
			struct rk_error *err)
{
	const struct given *g = c->g;
	const char *src = c->src;
	long tp = 1, pp = 1, zero = -1, v;
	int rc;
	if ((rc = get_int(c, S_TP, 1, RK_PLAN_DEGREE_MAX, &tp, err)) ||
	    (rc = get_int(c, S_PP, 1, RK_PLAN_DEGREE_MAX, &pp, err)) ||
	    (rc = get_int(c, S_ZERO, 0, 3, &zero, err)))
		return rc;
	if (g[S_NO_PP].set && pp > 1)
		return flag_err(c, S_PP, RK_EINVAL, err, "contradicts --no-pipeline-parallel");
	if (L->kind == RK_LAUNCH_HF && (tp > 1 || pp > 1))
		return flag_err(c, tp > 1 ? S_TP : S_PP, RK_EINVAL, err,
				"tensor/pipeline parallelism needs Megatron structure flags");
	struct rk_ds_config ds;
	const char *ds_path;
	if ((rc = read_ds(c, o, &ds, &ds_path, err)))
		return rc;

	/* ZeRO stage and offload: flags, then the config; they must agree. */
	struct sourced zq = {0, ""};
	if (zero >= 0)
		from_flag(&zq, c, S_ZERO, zero);
	if (ds.zero_stage >= 0 && zero >= 0 && ds.zero_stage != zero)
		return rk_error_set(err, RK_EINVAL, "%s: %s contradicts %s: zero_optimization.stage "
				    "is %d", src, zq.from, ds_path, ds.zero_stage);
	if (zero < 0)
		zero = ds.zero_stage >= 0 ? ds.zero_stage : 0;
	int offload = ds.offload == 1;
	if (g[S_CPU_OPT].set) {
		if (ds.offload == 0)
			return rk_error_set(err, RK_EINVAL,
					    "%s: %s contradicts %s: zero_optimization.offload_optimizer "
					    "is not \"cpu\"",
					    src, g[S_CPU_OPT].flag, ds_path);
		offload = 1;
		if (zero == 0)
			return flag_err(c, S_CPU_OPT, RK_EINVAL, err,
					"CPU offload needs ZeRO stage 1-3 (--zero-stage or the "
					"DeepSpeed config)");
	}
	if ((zero > 0 || offload) && (tp > 1 || pp > 1))
		return rk_error_set(err, RK_EINVAL,
				    "%s: ZeRO stage %ld%s with tensor/pipeline parallelism (tp %ld, pp "
				    "%ld) is outside rubick's plan space (plan.h)",
				    src, zero, offload ? " + offload" : "", tp, pp);

	/* Activation checkpointing. */
	int gc = g[S_GC].set;
	if (g[S_RECOMPUTE].set) {
		if (strcmp(g[S_RECOMPUTE].value, "full") && strcmp(g[S_RECOMPUTE].value, "selective"))
			return flag_err(c, S_RECOMPUTE, RK_EINVAL, err, "must be full or selective");
		gc = 1;
	}
	if (g[S_HF_GC].set && (!g[S_HF_GC].value || bool_word(g[S_HF_GC].value) == 1))
		gc = 1;

	/* Batch: micro-batch, accumulation steps, global batch, from flags and config. */
	struct sourced mb = {0, ""}, ga = {0, ""}, gb = {0, ""}, gq = {0, ""};
	v = 0;
	if ((rc = get_int(c, S_MBS, 1, RK_PLAN_DEGREE_MAX, &v, err)))
		return rc;
	if (v)
		from_flag(&mb, c, S_MBS, v);
	v = 0;
	if ((rc = get_int(c, S_GA, 1, RK_PLAN_DEGREE_MAX, &v, err)))
		return rc;
	if (v)
		from_flag(&ga, c, S_GA, v);
	v = 0;
	if ((rc = get_int(c, S_GBS, 1, GLOBAL_BATCH_MAX, &v, err)))
		return rc;
	if (v)
		from_flag(&gb, c, S_GBS, v);
	if ((rc = merge_ds(&mb, ds.micro_batch, ds_path, "train_micro_batch_size_per_gpu", src,
			   err)) ||
	    (rc = merge_ds(&ga, ds.grad_accum, ds_path, "gradient_accumulation_steps", src, err)) ||
	    (rc = merge_ds(&gb, ds.train_batch_size, ds_path, "train_batch_size", src, err)))
		return rc;

	/* GPUs: the caller's count, else the launcher's; both given must agree. */
	char lfrom[160] = "";
	long lg = 0;
	if ((rc = launcher_gpus(c, &lg, lfrom, sizeof(lfrom), err)))
		return rc;
	if (o->gpus > 0) {
		if (lg && lg != o->gpus)
			return rk_error_set(err, RK_EINVAL, "%s: %s = %ld GPUs, but the job runs on %d",
					    src, lfrom, lg, o->gpus);
		gq.v = o->gpus;
		snprintf(gq.from, sizeof(gq.from), "the job's %d GPUs", o->gpus);
	} else if (lg) {
		gq.v = lg;
		snprintf(gq.from, sizeof(gq.from), "%s = %ld GPUs", lfrom, lg);
	} else if (gb.v && mb.v && ga.v) {
		/* DeepSpeed's own identity gives the data-parallel size. */
		if (gb.v % (mb.v * ga.v))
			return rk_error_set(err, RK_EINVAL, "%s: %s is not a multiple of %s x %s", src,
					    gb.from, mb.from, ga.from);
		gq.v = gb.v / (mb.v * ga.v) * tp * pp;
		snprintf(gq.from, sizeof(gq.from), "%.150s / (%.150s x %.150s) x tp x pp", gb.from, mb.from,
			 ga.from);
	} else {
		return rk_error_set(err, RK_EINVAL,
				    "%s: number of GPUs unknown: give --nproc_per_node [--nnodes], "
				    "--num_gpus [--num_nodes] or the job's GPU count",
				    src);
	}
	if (gq.v > RK_PLAN_DEGREE_MAX)
		return rk_error_set(err, RK_ERANGE, "%s: %s: more than %d GPUs", src, gq.from,
				    RK_PLAN_DEGREE_MAX);
	if (gq.v % (tp * pp))
		return rk_error_set(err, RK_EINVAL,
				    "%s: tensor x pipeline degree %ld x %ld (%s, %s) does not divide "
				    "%s",
				    src, tp, pp, g[S_TP].set ? g[S_TP].flag : "tp 1",
				    g[S_PP].set ? g[S_PP].flag : "pp 1", gq.from);
	if (L->model.heads % tp)
		return flag_err(c, S_TP, RK_EINVAL, err,
				"does not divide the number of attention heads");
	if (L->model.layers % pp)
		return flag_err(c, S_PP, RK_EINVAL, err, "does not divide the number of layers");
	long dp = gq.v / (tp * pp);

	if (!gb.v && !mb.v)
		return rk_error_set(err, RK_EINVAL,
				    "%s: batch size missing: give --global-batch-size, "
				    "--micro-batch-size or --per_device_train_batch_size (or "
				    "train_batch_size in the DeepSpeed config)",
				    src);
	long n_ga = ga.v ? ga.v : 1;
	if (gb.v && mb.v) {
		if (gb.v % (mb.v * dp))
			return rk_error_set(err, RK_EINVAL,
					    "%s: %s is not divisible by %s x data-parallel size %ld (%s "
					    "/ (tp %ld x pp %ld))",
					    src, gb.from, mb.from, dp, gq.from, tp, pp);
		long want = gb.v / (mb.v * dp);
		if (ga.v && ga.v != want)
			return rk_error_set(err, RK_EINVAL,
					    "%s: %s contradicts %s / (%s x data-parallel size %ld) = %ld",
					    src, ga.from, gb.from, mb.from, dp, want);
		n_ga = want;
	} else if (gb.v) {
		if (gb.v % (n_ga * dp))
			return rk_error_set(err, RK_EINVAL,
					    "%s: %s is not divisible by %ld accumulation steps x "
					    "data-parallel size %ld",
					    src, gb.from, n_ga, dp);
		mb.v = gb.v / (n_ga * dp);
	} else {
		gb.v = mb.v * n_ga * dp;
		if (gb.v > GLOBAL_BATCH_MAX)
			return rk_error_set(err, RK_ERANGE,
					    "%s: global batch %s x %ld steps x %ld replicas exceeds %d",
					    src, mb.from, n_ga, dp, GLOBAL_BATCH_MAX);
	}
	if (n_ga > RK_PLAN_DEGREE_MAX)
		return rk_error_set(err, RK_ERANGE, "%s: %ld accumulation steps exceed %d", src, n_ga,
				    RK_PLAN_DEGREE_MAX);
	L->plan = (struct rk_plan){(int)dp, (int)tp, (int)pp, (int)mb.v, (int)n_ga,
				   gc, (int)zero, offload};
	L->global_batch = (int)gb.v;
	L->gpus = (int)gq.v;
	return 0;
}

int rk_launch_parse(const char *cmd, const struct rk_launch_opts *opts, struct rk_launch *out,
		    struct rk_error *err)
{
	static const struct rk_launch_opts none;
	const struct rk_launch_opts *o = opts ? opts : &none;
	struct ctx c;
	memset(&c, 0, sizeof(c));
	c.src = o->src ? o->src : "<command>";
	if (!cmd || !out)
		return rk_error_set(err, RK_EINVAL, "%s: no command to read", c.src);
	struct lx_words w;
	int rc = lx_split(cmd, c.src, &w, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < w.n && !rc;) {
		size_t used;
		rc = take_flag(&c, &w, i, &used, err);
		i += used;
	}
	struct rk_launch L;
	memset(&L, 0, sizeof(L));
	if (!rc)
		rc = resolve_model(&c, o, &L, err);
	if (!rc)
		rc = resolve_plan(&c, o, &L, err);
	long iters = 0;
	if (!rc)
		rc = get_int(&c, S_ITERS, 1, 2000000000L, &iters, err);
	if (!rc && L.from_zoo && L.global_batch != L.model.global_batch && L.model.fwd_ms > 0)
		/* Forward time grows with the samples per iteration (docs/references.md §1.4: T_f
		 * is the forward time of the whole global batch). */
		L.model.fwd_ms *= (double)L.global_batch / L.model.global_batch;
	if (!rc) {
		L.model.global_batch = L.global_batch;
		L.iterations = iters;
		rc = rk_model_validate(&L.model, err);
		if (rc)
			rk_error_prefix(err, "%s", c.src);
	}
	lx_words_fini(&w);
	if (!rc)
		*out = L;
	return rc;
}
