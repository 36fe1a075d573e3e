/*
 * The default plan space of a launch command (launch.h, rk_launch_default_space):
 * what the command shows its script can run, for a job that declares no space.
 * The rules, and why each bound is what it is, are in docs/launch.md "Default
 * plan space". Only words are read: no config file, and a command the reader
 * cannot place is opaque, so it gets data parallelism only.
 */
#include "rubick/launch.h"

#include "launch_internal.h"

#include <stdio.h>
#include <string.h>

/*
 * The repository's job-library scripts (python/rubick_job): each declares in
 * its code what it runs (Job.from_env(max_tp=, max_pp=)); these are those
 * declarations, which tests/daemon/test_space.py checks against the scripts.
 * The library runs every ZeRO stage and ZeRO-Offload under any tp and pp, so
 * neither is bounded.
 */
static const struct {
	const char *script; /* path suffix, matched at a '/' boundary */
	const char *space;
} library_scripts[] = {
	{"examples/train.py", "tp<=4,pp<=8"},
	{"examples/train_cnn.py", "tp<=4,pp=1"},
};

/* 1 when `word` is `suffix` or ends with "/" `suffix`. */
static int path_is(const char *word, const char *suffix)
{
	size_t n = strlen(word), k = strlen(suffix);
	if (n < k || strcmp(word + n - k, suffix))
		return 0;
	return n == k || word[n - k - 1] == '/';
}

/* The flag name of `word` normalised as launch.c does ("--a_b=1" -> "a-b"), or 0. */
static int flag_name(const char *word, char *buf, size_t cap)
{
	if (strncmp(word, "--", 2) || !word[2])
		return 0;
	size_t i = 0;
	for (const char *p = word + 2; *p && *p != '=' && i + 1 < cap; p++)
		buf[i++] = *p == '_' ? '-' : *p;
	buf[i] = '\0';
	return 1;
}

static int is_one_of(const char *name, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(name, *set))
			return 1;
	return 0;
}

static void set_space(struct rk_launch_space *out, const char *text)
{
	struct rk_error e;
	rk_error_clear(&e);
	/* the texts are ours and parse; a failure would leave the zeroed "all" */
	if (rk_plan_space_parse(text, "default space", &out->space, &e))
		memset(&out->space, 0, sizeof(out->space));
}

int rk_launch_default_space(const char *cmd, const struct rk_launch_opts *opts,
			    struct rk_launch_space *out, struct rk_error *err)
{
	const char *src = opts && opts->src ? opts->src : "<command>";
	if (!cmd || !out)
		return rk_error_set(err, RK_EINVAL, "%s: no command given", src);
	struct lx_words w;
	int ret = lx_split(cmd, src, &w, err);
	if (ret)
		return ret;
	static const char *const megatron_flags[] = {
		"tensor-model-parallel-size", "pipeline-model-parallel-size", "num-layers", NULL};
	static const char *const ds_flags[] = {"deepspeed", "deepspeed-config", "zero-stage", NULL};
	const char *script = NULL, *script_space = NULL, *megatron = NULL, *ds = NULL,
		   *dist_opt = NULL;
	for (size_t i = 0; i < w.n; i++) {
		const char *t = w.words[i].text;
		char name[64];
		if (flag_name(t, name, sizeof(name))) {
			if (!megatron && is_one_of(name, megatron_flags))
				megatron = t;
			if (!ds && is_one_of(name, ds_flags))
				ds = t;
			if (!dist_opt && !strcmp(name, "use-distributed-optimizer"))
				dist_opt = t;
			continue;
		}
		if (!ds && path_is(t, "deepspeed"))
			ds = t; /* the DeepSpeed launcher */
		for (size_t k = 0; !script && k < sizeof(library_scripts) / sizeof(library_scripts[0]);
		     k++)
			if (path_is(t, library_scripts[k].script)) {
				script = library_scripts[k].script;
				script_space = library_scripts[k].space;
			}
	}
	memset(out, 0, sizeof(*out));
	char text[RK_PLAN_SPACE_TEXT_MAX];
	if (script) {
		out->from = RK_SPACE_FROM_JOB_LIBRARY;
		set_space(out, script_space);
		snprintf(out->why, sizeof(out->why), "%s runs %s (its Job.from_env limits)", script,
			 script_space);
	} else if (megatron || ds) {
		/*
		 * Megatron's tp and pp flags take any degree; whether one divides the
		 * model's heads and layers the planner checks (rk_plan_enumerate), so
		 * a Megatron command bounds neither. DeepSpeed runs every ZeRO stage
		 * and ZeRO-Offload whatever stage the config names today. Without
		 * DeepSpeed, Megatron-LM's distributed optimizer is ZeRO-1's optimizer
		 * state sharding (Megatron-LM docs); without it, no ZeRO at all. A
		 * Hugging Face or plain DeepSpeed script has no tp or pp.
		 */
		out->from = megatron ? RK_SPACE_FROM_MEGATRON : RK_SPACE_FROM_DEEPSPEED;
		snprintf(text, sizeof(text), "%s%s", megatron ? "" : "tp=1,pp=1,",
			 ds ? "zero<=3" : dist_opt ? "zero<=1,offload=no" : "zero=0,offload=no");
		set_space(out, text);
		char st[RK_PLAN_SPACE_TEXT_MAX];
		rk_plan_space_format(&out->space, st, sizeof(st));
		snprintf(out->why, sizeof(out->why), "%s%s%s%s: %s", megatron ? megatron : "",
			 megatron && ds ? " and " : "", ds ? ds : "",
			 !ds && dist_opt ? " with --use-distributed-optimizer" : "", st);
	} else {
		out->from = RK_SPACE_FROM_OPAQUE;
		set_space(out, "dp");
		snprintf(out->why, sizeof(out->why),
			 "no Megatron or DeepSpeed flag and no job-library script: data parallel only");
	}
	lx_words_fini(&w);
	return RK_OK;
}
