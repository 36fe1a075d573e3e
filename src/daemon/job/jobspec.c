/*
 * Strict validation of API request bodies (see jobspec.h and docs/api.md).
 * Every accepted field is listed in a table; anything else is an error
 * naming the field, as is every wrong type or out-of-range value.
 */
#include "daemon/job/jobspec.h"

#include "rubick/launch.h"
#include "rubick/zoo.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upper bounds that keep arithmetic exact and catch typos, not hardware limits. */
#define MAX_GPUS 65536
#define MAX_CPUS 1048576
#define MAX_BATCH 16777216
#define MAX_ITERS 1e12
#define MAX_MEM_MB ((int64_t)1 << 40)

int rkd_verr_set(struct rkd_verr *v, int code, const char *field, const char *fmt, ...)
{
	if (v) {
		va_list ap;
		va_start(ap, fmt);
		v->e.code = code;
		vsnprintf(v->e.msg, sizeof(v->e.msg), fmt, ap);
		va_end(ap);
		snprintf(v->field, sizeof(v->field), "%s", field ? field : "");
	}
	return code;
}

/* Load a body that must be one JSON object; duplicate keys are errors. */
static json_t *load_object(const char *body, size_t len, struct rkd_verr *v)
{
	json_error_t je;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		rkd_verr_set(v, RK_EINVAL, "", "body:%d:%d: invalid JSON: %s", je.line, je.column,
			     je.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		rkd_verr_set(v, RK_EINVAL, "", "body: expected a JSON object");
		return NULL;
	}
	return root;
}

/* Every key of `obj` must be in the NULL-terminated `allowed` list. */
static int check_fields(json_t *obj, const char *const *allowed, struct rkd_verr *v)
{
	const char *key;
	json_t *val;
	json_object_foreach(obj, key, val)
	{
		int ok = 0;
		for (const char *const *a = allowed; *a && !ok; a++)
			ok = !strcmp(*a, key);
		if (!ok)
			return rkd_verr_set(v, RK_EINVAL, key, "%s: unknown field", key);
	}
	return 0;
}

static const char *type_name(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* Integer field in [lo, hi]; *present says whether it came. */
static int get_int(json_t *obj, const char *key, int64_t lo, int64_t hi, int64_t *out,
		   int *present, struct rkd_verr *v)
{
	json_t *j = json_object_get(obj, key);
	if (present)
		*present = j != NULL;
	if (!j)
		return 0;
	if (!json_is_integer(j))
		return rkd_verr_set(v, RK_EINVAL, key, "%s: expected an integer, got %s", key,
				    type_name(j));
	json_int_t x = json_integer_value(j);
	if (x < lo || x > hi)
		return rkd_verr_set(v, RK_ERANGE, key, "%s: %lld is out of range [%lld, %lld]", key,
				    (long long)x, (long long)lo, (long long)hi);
	*out = x;
	return 0;
}

/* Number field (integer or real) in [lo, hi]. */
static int get_num(json_t *obj, const char *key, double lo, double hi, double *out,
		   int *present, struct rkd_verr *v)
{
	json_t *j = json_object_get(obj, key);
	if (present)
		*present = j != NULL;
	if (!j)
		return 0;
	if (!json_is_number(j))
		return rkd_verr_set(v, RK_EINVAL, key, "%s: expected a number, got %s", key,
				    type_name(j));
	double x = json_number_value(j);
	if (!isfinite(x) || x < lo || x > hi)
		return rkd_verr_set(v, RK_ERANGE, key, "%s: %g is out of range [%g, %g]", key, x, lo,
				    hi);
	*out = x;
	return 0;
}

static int get_bool(json_t *obj, const char *key, int *out, int *present, struct rkd_verr *v)
{
	json_t *j = json_object_get(obj, key);
	if (present)
		*present = j != NULL;
	if (!j)
		return 0;
	if (!json_is_boolean(j))
		return rkd_verr_set(v, RK_EINVAL, key, "%s: expected a boolean, got %s", key,
				    type_name(j));
	*out = json_is_true(j);
	return 0;
}

/* String field of 1..max_len bytes without control characters; NULL when absent. */
static int get_str(json_t *obj, const char *key, size_t max_len, const char **out,
		   struct rkd_verr *v)
{
	json_t *j = json_object_get(obj, key);
	*out = NULL;
	if (!j)
		return 0;
	if (!json_is_string(j))
		return rkd_verr_set(v, RK_EINVAL, key, "%s: expected a string, got %s", key,
				    type_name(j));
	const char *s = json_string_value(j);
	size_t n = json_string_length(j);
	if (n == 0 || n > max_len)
		return rkd_verr_set(v, RK_ERANGE, key, "%s: length %zu is out of range [1, %zu]", key,
				    n, max_len);
	if (strlen(s) != n)
		return rkd_verr_set(v, RK_EINVAL, key, "%s: contains a NUL character", key);
	*out = s;
	return 0;
}

/* Names and tenants: letters, digits, '-', '_', '.'; starting with a letter or digit. */
static int check_ident(const char *s, const char *key, struct rkd_verr *v)
{
	for (const char *p = s; *p; p++) {
		int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			 (*p >= '0' && *p <= '9') || (p > s && (*p == '-' || *p == '_' || *p == '.'));
		if (!ok)
			return rkd_verr_set(v, RK_EINVAL, key,
					    "%s: character %d ('%c') is not allowed (letters, digits,"
					    " '-', '_', '.')",
					    key, (int)(p - s) + 1, *p >= 32 && *p < 127 ? *p : '?');
	}
	return 0;
}

static int get_plan(json_t *obj, struct rk_plan *plan, int *present, int *cleared,
		    struct rkd_verr *v)
{
	json_t *j = json_object_get(obj, "plan");
	*present = j != NULL;
	if (cleared)
		*cleared = j && json_is_null(j);
	if (!j || (cleared && json_is_null(j)))
		return 0;
	if (!json_is_string(j))
		return rkd_verr_set(v, RK_EINVAL, "plan", "plan: expected a string, got %s",
				    type_name(j));
	struct rk_error e;
	rk_error_clear(&e);
	int ret = rk_plan_parse(json_string_value(j), "plan", plan, &e);
	if (ret)
		return rkd_verr_set(v, ret, "plan", "%s", e.msg);
	return 0;
}

/* `plan_space`: the plan-space text (plan.h); errors name the field and the item's column. */
static int get_space(json_t *obj, struct rk_plan_space *space, int *present, struct rkd_verr *v)
{
	json_t *j = json_object_get(obj, "plan_space");
	*present = j != NULL;
	if (!j)
		return 0;
	if (!json_is_string(j))
		return rkd_verr_set(v, RK_EINVAL, "plan_space",
				    "plan_space: expected a string such as \"tp<=4,zero<=2\", got %s",
				    type_name(j));
	struct rk_error e;
	rk_error_clear(&e);
	int ret = rk_plan_space_parse(json_string_value(j), "plan_space", space, &e);
	if (ret)
		return rkd_verr_set(v, ret, "plan_space", "%s", e.msg);
	return 0;
}

/* A submitted or updated plan outside the job's space: 400 naming the dimension. */
int rkd_spec_plan_check(const struct rkd_spec *s, const struct rk_plan *plan, struct rkd_verr *v)
{
	if (!s->has_space)
		return 0;
	struct rk_error e;
	rk_error_clear(&e);
	if (!rk_plan_space_check(plan, &s->space, &e))
		return 0;
	return rkd_verr_set(v, RK_EINVAL, "plan", "plan: %s; the job's script cannot run it",
			    e.msg);
}

void rkd_spec_fini(struct rkd_spec *s)
{
	if (!s)
		return;
	free(s->model_spec);
	free(s->launch);
	free(s->command);
	for (int i = 0; i < s->n_env; i++)
		free(s->env[i]);
	free(s->env);
	memset(s, 0, sizeof(*s));
}

static const char *const spec_fields[] = {
	"name",    "tenant",     "model", "model_spec", "launch",     "command",
	"slurm_partition", "slurm_account", "slurm_qos", "slurm_time_limit",
	"global_batch", "iterations", "gpus", "cpus", "mem_mb", "net_gbps", "plan", "plan_space",
	"guaranteed", "min_gpus", "max_gpus", "est_duration_s", "idempotency_key", "env", "hold",
	NULL,
};

/* The Slurm names of a submission: like job names (letters, digits, '-', '_', '.'). */
static int spec_slurm(json_t *root, struct rkd_spec *s, struct rkd_verr *v)
{
	static const char *const keys[] = {"slurm_partition", "slurm_account", "slurm_qos"};
	char *dst[] = {s->slurm_partition, s->slurm_account, s->slurm_qos};
	for (int i = 0; i < 3; i++) {
		const char *val;
		int ret = get_str(root, keys[i], RKD_SLURM_NAME_MAX - 1, &val, v);
		if (!ret && val)
			ret = check_ident(val, keys[i], v);
		if (ret)
			return ret;
		snprintf(dst[i], RKD_SLURM_NAME_MAX, "%s", val ? val : "");
	}
	int64_t tl = 0;
	int ret = get_int(root, "slurm_time_limit", 1, 1 << 30, &tl, NULL, v);
	s->slurm_time_limit = (int)tl;
	return ret;
}

static int spec_strings(json_t *root, struct rkd_spec *s, struct rkd_verr *v)
{
	const char *name, *tenant, *model, *mspec, *launch, *cmd, *key;
	int ret;
	if ((ret = get_str(root, "name", RK_JOB_NAME_MAX - 1, &name, v)) ||
	    (ret = get_str(root, "tenant", RK_TENANT_MAX - 1, &tenant, v)) ||
	    (ret = get_str(root, "model", RK_MODEL_NAME_MAX - 1, &model, v)) ||
	    (ret = get_str(root, "model_spec", RKD_MODEL_TEXT_MAX, &mspec, v)) ||
	    (ret = get_str(root, "launch", RKD_COMMAND_MAX, &launch, v)) ||
	    (ret = get_str(root, "command", RKD_COMMAND_MAX, &cmd, v)) ||
	    (ret = get_str(root, "idempotency_key", RKD_KEY_MAX - 1, &key, v)))
		return ret;
	if ((name && (ret = check_ident(name, "name", v))) ||
	    (tenant && (ret = check_ident(tenant, "tenant", v))) ||
	    (key && (ret = check_ident(key, "idempotency_key", v))))
		return ret;
	int n_models = !!model + !!mspec + !!launch;
	if (n_models != 1)
		return rkd_verr_set(v, RK_EINVAL, n_models ? (model ? "model" : "model_spec") : "model",
				    "give exactly one of model, model_spec or launch (got %d)",
				    n_models);
	snprintf(s->name, sizeof(s->name), "%s", name ? name : "job");
	snprintf(s->tenant, sizeof(s->tenant), "%s", tenant ? tenant : "");
	snprintf(s->model, sizeof(s->model), "%s", model ? model : "");
	snprintf(s->key, sizeof(s->key), "%s", key ? key : "");
	if ((mspec && !(s->model_spec = strdup(mspec))) || (launch && !(s->launch = strdup(launch))) ||
	    (cmd && !(s->command = strdup(cmd))))
		return rkd_verr_set(v, RK_ENOMEM, "", "out of memory");
	return 0;
}

/* A variable the job may ask for: a shell name, not one rubick or Slurm sets. */
static int env_name_ok(const char *k)
{
	if (!((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') || *k == '_'))
		return 0;
	for (const char *c = k; *c; c++)
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
		      *c == '_'))
			return 0;
	return strncmp(k, "RUBICK_", 7) && strncmp(k, "SLURM_", 6) && strcmp(k, "CUDA_VISIBLE_DEVICES");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* `env`: an object of strings, into s->env ("K=V", sorted: the stored spec is canonical). */
static int get_env(json_t *root, struct rkd_spec *s, struct rkd_verr *v)
{
	json_t *o = json_object_get(root, "env"), *val;
	if (!o)
		return 0;
	if (!json_is_object(o))
		return rkd_verr_set(v, RK_EINVAL, "env", "env: expected an object, got %s", type_name(o));
	if (json_object_size(o) > RKD_ENV_MAX)
		return rkd_verr_set(v, RK_ERANGE, "env", "env: %zu variables, at most %d",
				    json_object_size(o), RKD_ENV_MAX);
	if (!(s->env = calloc(json_object_size(o) + 1, sizeof(*s->env))))
		return rkd_verr_set(v, RK_ENOMEM, "", "out of memory");
	const char *k;
	json_object_foreach(o, k, val) {
		if (strlen(k) > RKD_ENV_NAME_MAX || !env_name_ok(k))
			return rkd_verr_set(v, RK_EINVAL, "env",
					    "env: '%.*s' is not a variable a job may set (a shell name,"
					    " not RUBICK_*, SLURM_* or CUDA_VISIBLE_DEVICES)",
					    RKD_ENV_NAME_MAX, k);
		if (!json_is_string(val))
			return rkd_verr_set(v, RK_EINVAL, "env", "env: %s: expected a string, got %s", k,
					    type_name(val));
		size_t n = json_string_length(val);
		if (n > RKD_ENV_VALUE_MAX || strlen(json_string_value(val)) != n)
			return rkd_verr_set(v, RK_EINVAL, "env",
					    "env: %s: longer than %d bytes or holds a NUL", k,
					    RKD_ENV_VALUE_MAX);
		size_t cap = strlen(k) + n + 2;
		if (!(s->env[s->n_env] = malloc(cap)))
			return rkd_verr_set(v, RK_ENOMEM, "", "out of memory");
		snprintf(s->env[s->n_env++], cap, "%s=%s", k, json_string_value(val));
	}
	qsort(s->env, (size_t)s->n_env, sizeof(*s->env), cmp_str);
	return 0;
}

int rkd_spec_parse(const char *body, size_t len, struct rkd_spec *out, struct rkd_verr *v)
{
	struct rkd_spec s;
	memset(&s, 0, sizeof(s));
	json_t *root = load_object(body, len, v);
	if (!root)
		return v ? v->e.code : RK_EINVAL;
	int64_t gb = 0, gpus = 0, cpus = 0, mem = 0, mn = 0, mx = 0;
	int has_iters, has_gpus, has_mn, has_mx, has_plan;
	int ret = check_fields(root, spec_fields, v);
	if (!ret)
		ret = spec_strings(root, &s, v);
	if (!ret)
		ret = get_env(root, &s, v);
	if (!ret)
		ret = spec_slurm(root, &s, v);
	if (!ret &&
	    ((ret = get_int(root, "global_batch", 1, MAX_BATCH, &gb, NULL, v)) ||
	     (ret = get_num(root, "iterations", 1, MAX_ITERS, &s.iterations, &has_iters, v)) ||
	     (ret = get_int(root, "gpus", 1, MAX_GPUS, &gpus, &has_gpus, v)) ||
	     (ret = get_int(root, "cpus", 0, MAX_CPUS, &cpus, NULL, v)) ||
	     (ret = get_int(root, "mem_mb", 0, MAX_MEM_MB, &mem, NULL, v)) ||
	     (ret = get_num(root, "net_gbps", 0, 1e6, &s.net_gbps, NULL, v)) ||
	     (ret = get_bool(root, "guaranteed", &s.guaranteed, NULL, v)) ||
	     (ret = get_bool(root, "hold", &s.hold, NULL, v)) ||
	     (ret = get_int(root, "min_gpus", 1, MAX_GPUS, &mn, &has_mn, v)) ||
	     (ret = get_int(root, "max_gpus", 1, MAX_GPUS, &mx, &has_mx, v)) ||
	     (ret = get_num(root, "est_duration_s", 0, 1e10, &s.est_duration_s, NULL, v)) ||
	     (ret = get_plan(root, &s.plan, &has_plan, NULL, v)) ||
	     (ret = get_space(root, &s.space, &s.has_space, v))))
		goto out;
	if (ret)
		goto out;
	if (!has_iters) {
		ret = rkd_verr_set(v, RK_EINVAL, "iterations", "iterations: required");
		goto out;
	}
	if (s.iterations != floor(s.iterations)) {
		ret = rkd_verr_set(v, RK_EINVAL, "iterations", "iterations: %g is not a whole number",
				   s.iterations);
		goto out;
	}
	if (!has_gpus) {
		ret = rkd_verr_set(v, RK_EINVAL, "gpus", "gpus: required");
		goto out;
	}
	if (!s.command && !s.launch) {
		ret = rkd_verr_set(v, RK_EINVAL, "command",
				   "command: required unless launch gives the command");
		goto out;
	}
	s.global_batch = (int)gb;
	s.gpus = (int)gpus;
	s.cpus = (int)cpus;
	s.mem_mb = mem;
	s.has_plan = has_plan;
	s.min_gpus = has_mn ? (int)mn : s.gpus;
	s.max_gpus = has_mx ? (int)mx : s.gpus;
	if (s.min_gpus > s.gpus) {
		ret = rkd_verr_set(v, RK_ERANGE, "min_gpus", "min_gpus: %d exceeds gpus (%d)",
				   s.min_gpus, s.gpus);
		goto out;
	}
	if (s.max_gpus < s.gpus) {
		ret = rkd_verr_set(v, RK_ERANGE, "max_gpus", "max_gpus: %d is below gpus (%d)",
				   s.max_gpus, s.gpus);
		goto out;
	}
	if (s.has_plan) {
		int pg = s.plan.dp * s.plan.tp * s.plan.pp;
		if (pg != s.gpus) {
			ret = rkd_verr_set(v, RK_EINVAL, "plan",
					   "plan: dp*tp*pp = %d but gpus is %d", pg, s.gpus);
			goto out;
		}
		if (s.global_batch && s.plan.mb * s.plan.ga * s.plan.dp != s.global_batch) {
			ret = rkd_verr_set(v, RK_EINVAL, "plan",
					   "plan: mb*ga*dp = %d but global_batch is %d",
					   s.plan.mb * s.plan.ga * s.plan.dp, s.global_batch);
			goto out;
		}
		if ((ret = rkd_spec_plan_check(&s, &s.plan, v)))
			goto out;
	}
out:
	json_decref(root);
	if (ret) {
		rkd_spec_fini(&s);
		return ret;
	}
	*out = s;
	return 0;
}

char *rkd_spec_encode(const struct rkd_spec *s)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "name", json_string(s->name));
	json_object_set_new(o, "tenant", json_string(s->tenant));
	if (s->model[0])
		json_object_set_new(o, "model", json_string(s->model));
	if (s->model_spec)
		json_object_set_new(o, "model_spec", json_string(s->model_spec));
	if (s->launch)
		json_object_set_new(o, "launch", json_string(s->launch));
	if (s->command)
		json_object_set_new(o, "command", json_string(s->command));
	if (s->global_batch)
		json_object_set_new(o, "global_batch", json_integer(s->global_batch));
	json_object_set_new(o, "iterations", json_integer((json_int_t)s->iterations));
	json_object_set_new(o, "gpus", json_integer(s->gpus));
	json_object_set_new(o, "cpus", json_integer(s->cpus));
	json_object_set_new(o, "mem_mb", json_integer(s->mem_mb));
	json_object_set_new(o, "net_gbps", json_real(s->net_gbps));
	if (s->has_plan) {
		char buf[RK_PLAN_TEXT_MAX];
		if (rk_plan_format(&s->plan, buf, sizeof(buf)) >= 0)
			json_object_set_new(o, "plan", json_string(buf));
	}
	if (s->has_space) {
		char buf[RK_PLAN_SPACE_TEXT_MAX];
		if (rk_plan_space_format(&s->space, buf, sizeof(buf)) >= 0)
			json_object_set_new(o, "plan_space", json_string(buf));
	}
	json_object_set_new(o, "guaranteed", json_boolean(s->guaranteed));
	json_object_set_new(o, "min_gpus", json_integer(s->min_gpus));
	json_object_set_new(o, "max_gpus", json_integer(s->max_gpus));
	json_object_set_new(o, "est_duration_s", json_real(s->est_duration_s));
	if (s->key[0])
		json_object_set_new(o, "idempotency_key", json_string(s->key));
	if (s->n_env) {
		json_t *env = json_object();
		for (int i = 0; env && i < s->n_env; i++) {
			const char *eq = strchr(s->env[i], '=');
			char name[RKD_ENV_NAME_MAX + 1];
			snprintf(name, sizeof(name), "%.*s", (int)(eq - s->env[i]), s->env[i]);
			json_object_set_new(env, name, json_string(eq + 1));
		}
		json_object_set_new(o, "env", env);
	}
	if (s->slurm_partition[0])
		json_object_set_new(o, "slurm_partition", json_string(s->slurm_partition));
	if (s->slurm_account[0])
		json_object_set_new(o, "slurm_account", json_string(s->slurm_account));
	if (s->slurm_qos[0])
		json_object_set_new(o, "slurm_qos", json_string(s->slurm_qos));
	if (s->slurm_time_limit)
		json_object_set_new(o, "slurm_time_limit", json_integer(s->slurm_time_limit));
	char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return text;
}

int rkd_spec_model(const struct rkd_spec *s, const struct rk_zoo *zoo, struct rk_model *model,
		   struct rkd_verr *v)
{
	struct rk_error e;
	rk_error_clear(&e);
	if (s->model[0]) {
		const struct rk_model *m = zoo ? rk_zoo_find(zoo, s->model) : NULL;
		if (!m)
			return rkd_verr_set(v, RK_ENOTFOUND, "model",
					    "model: '%s' is not in the model zoo", s->model);
		*model = *m;
		return 0;
	}
	if (s->model_spec) {
		int ret = rk_model_parse(s->model_spec, strlen(s->model_spec), "model_spec", model, &e);
		return ret ? rkd_verr_set(v, ret, "model_spec", "%s", e.msg) : 0;
	}
	struct rk_launch_opts opts = {.src = "launch", .model_name = NULL, .gpus = s->gpus, .zoo = zoo};
	struct rk_launch ln;
	int ret = rk_launch_parse(s->launch, &opts, &ln, &e);
	if (ret == RK_ENOTFOUND)
		return rkd_verr_set(v, RK_EINVAL, "launch",
				    "launch: not a white-box launch command (no model structure"
				    " flags and no known model name): %s", e.msg);
	if (ret)
		return rkd_verr_set(v, ret, "launch", "%s", e.msg);
	*model = ln.model;
	return 0;
}

static const char *const update_fields[] = {"gpus", "min_gpus", "max_gpus", "plan", "guaranteed",
					    NULL};

int rkd_update_parse(const char *body, size_t len, struct rkd_update *out, struct rkd_verr *v)
{
	struct rkd_update u;
	memset(&u, 0, sizeof(u));
	json_t *root = load_object(body, len, v);
	if (!root)
		return v ? v->e.code : RK_EINVAL;
	int64_t g = 0, mn = 0, mx = 0;
	int ret = check_fields(root, update_fields, v);
	if (!ret && ((ret = get_int(root, "gpus", 1, MAX_GPUS, &g, &u.has_gpus, v)) ||
		     (ret = get_int(root, "min_gpus", 1, MAX_GPUS, &mn, &u.has_min_gpus, v)) ||
		     (ret = get_int(root, "max_gpus", 1, MAX_GPUS, &mx, &u.has_max_gpus, v)) ||
		     (ret = get_bool(root, "guaranteed", &u.guaranteed, &u.has_guaranteed, v)) ||
		     (ret = get_plan(root, &u.plan, &u.has_plan, &u.clear_plan, v))))
		goto out;
	if (!ret && json_object_size(root) == 0)
		ret = rkd_verr_set(v, RK_EINVAL, "", "body: no field to change");
out:
	json_decref(root);
	if (ret)
		return ret;
	u.gpus = (int)g;
	u.min_gpus = (int)mn;
	u.max_gpus = (int)mx;
	*out = u;
	return 0;
}

int rkd_job_op_parse(const char *body, size_t len, int *hold, struct rkd_verr *v)
{
	static const char *const requeue_fields[] = {"hold", NULL}, *const none[] = {NULL};
	int h = 0;
	if (len > 0) {
		json_t *root = load_object(body, len, v);
		if (!root)
			return v ? v->e.code : RK_EINVAL;
		int ret = check_fields(root, hold ? requeue_fields : none, v);
		if (!ret)
			ret = get_bool(root, "hold", &h, NULL, v);
		json_decref(root);
		if (ret)
			return ret;
	}
	if (hold)
		*hold = h;
	return 0;
}

static const char *const report_fields[] = {"iters_done", "throughput_sps", "run", NULL};

int rkd_report_parse(const char *body, size_t len, struct rkd_report *out, struct rkd_verr *v)
{
	struct rkd_report r = {.tput_sps = -1};
	json_t *root = load_object(body, len, v);
	if (!root)
		return v ? v->e.code : RK_EINVAL;
	int has_iters = 0;
	int64_t run = 0;
	int ret = check_fields(root, report_fields, v);
	if (!ret && ((ret = get_num(root, "iters_done", 0, MAX_ITERS, &r.iters_done, &has_iters, v)) ||
		     (ret = get_num(root, "throughput_sps", 0, 1e12, &r.tput_sps, NULL, v)) ||
		     (ret = get_int(root, "run", 1, 1 << 30, &run, NULL, v))))
		goto out;
	if (!ret && !has_iters)
		ret = rkd_verr_set(v, RK_EINVAL, "iters_done", "iters_done: required");
out:
	json_decref(root);
	if (ret)
		return ret;
	r.run = (int)run;
	*out = r;
	return 0;
}

static const char *const policy_fields[] = {"name", "options", NULL};

int rkd_policy_req_parse(const char *body, size_t len, struct rkd_policy_req *out,
			 struct rkd_verr *v)
{
	json_t *root = load_object(body, len, v);
	if (!root)
		return v ? v->e.code : RK_EINVAL;
	const char *name = NULL, *opts = NULL;
	int ret = check_fields(root, policy_fields, v);
	if (!ret && ((ret = get_str(root, "name", sizeof(out->name) - 1, &name, v)) ||
		     (ret = get_str(root, "options", sizeof(out->options) - 1, &opts, v))))
		goto out;
	if (!ret && !name)
		ret = rkd_verr_set(v, RK_EINVAL, "name", "name: required");
	if (!ret) {
		snprintf(out->name, sizeof(out->name), "%s", name);
		snprintf(out->options, sizeof(out->options), "%s", opts ? opts : "");
	}
out:
	json_decref(root);
	return ret;
}

void rkd_spec_default_space(struct rkd_spec *s)
{
	if (s->has_space)
		return;
	struct rk_launch_opts opts = {.src = s->launch ? "launch" : "command"};
	struct rk_launch_space ls;
	struct rk_error e;
	rk_error_clear(&e);
	if (rk_launch_default_space(s->launch ? s->launch : s->command, &opts, &ls, &e)) {
		/* words the reader cannot split: an opaque command */
		memset(&ls, 0, sizeof(ls));
		rk_plan_space_parse("dp", "default space", &ls.space, &e);
	}
	s->space = ls.space;
	if (s->has_plan && s->space.limited) {
		/* the submitter's own plan is what the job says it runs: admit it */
		struct rk_plan_space *sp = &s->space;
		sp->tp_max = s->plan.tp > sp->tp_max ? s->plan.tp : sp->tp_max;
		sp->pp_max = s->plan.pp > sp->pp_max ? s->plan.pp : sp->pp_max;
		sp->zero_max = s->plan.zero > sp->zero_max ? s->plan.zero : sp->zero_max;
		sp->offload |= s->plan.offload;
		sp->gc |= s->plan.gc;
		char text[RK_PLAN_SPACE_TEXT_MAX]; /* back through the text: canonical, "all" if so */
		if (rk_plan_space_format(sp, text, sizeof(text)) >= 0)
			rk_plan_space_parse(text, "default space", sp, &e);
	}
	s->has_space = 1;
}
