/*
 * The model zoo: the `key = value` text format of docs/zoo.md, validation,
 * formatting back to text, and an owned set of models found by name or alias.
 */
#include "rubick/zoo.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Longest value text accepted; longer values are an error, never truncated. */
#define VALUE_MAX 64

enum key_type { KEY_NAME, KEY_INT, KEY_DOUBLE, KEY_BOOL };

/*
 * One row per key of the format. Bounds are sanity limits that keep every
 * derived quantity (12*L*h^2, activation bytes) finite in double and int
 * arithmetic; see docs/zoo.md for the table.
 */
struct key_spec {
	const char *key;
	enum key_type type;
	size_t offset;  /* into struct rk_model */
	bool required;  /* must appear in a zoo file / inline spec */
	double min, max; /* inclusive range for numbers */
	bool perf;      /* one of the 7 fitted parameters: all or none */
};

#define OFF(f) offsetof(struct rk_model, f)
static const struct key_spec keys[] = {
	{"name", KEY_NAME, OFF(name), true, 0, 0, false},
	{"layers", KEY_INT, OFF(layers), true, 1, 100000, false},
	{"hidden", KEY_INT, OFF(hidden), true, 1, 1048576, false},
	{"heads", KEY_INT, OFF(heads), true, 1, 65536, false},
	{"seq_len", KEY_INT, OFF(seq_len), true, 1, 16777216, false},
	{"vocab", KEY_INT, OFF(vocab), true, 0, 100000000, false},
	{"params", KEY_DOUBLE, OFF(params), true, 1, 1e15, false},
	{"global_batch", KEY_INT, OFF(global_batch), true, 1, 16777216, false},
	{"fwd_ms", KEY_DOUBLE, OFF(fwd_ms), false, 0, 1e9, false},
	{"allow_3d", KEY_BOOL, OFF(allow_3d), false, 0, 1, false},
	{"perf_k_bwd", KEY_DOUBLE, OFF(perf.k_bwd), false, 0, 1e6, true},
	{"perf_k_sync", KEY_DOUBLE, OFF(perf.k_sync), false, 0, 1e6, true},
	{"perf_k_opt", KEY_DOUBLE, OFF(perf.k_opt), false, 0, 1e6, true},
	{"perf_k_os_offload", KEY_DOUBLE, OFF(perf.k_os_offload), false, 0, 1e6, true},
	{"perf_k_const", KEY_DOUBLE, OFF(perf.k_const), false, 0, 1e6, true},
	{"perf_k_off", KEY_DOUBLE, OFF(perf.k_off), false, 0, 1e6, true},
	{"perf_k_swap", KEY_DOUBLE, OFF(perf.k_swap), false, 0, 1e6, true},
	/* Optional beside the 7 (model.h): 0 = forward time proportional to the batch. */
	{"perf_fwd_fixed_ms", KEY_DOUBLE, OFF(perf.fwd_fixed_ms), false, 0, 1e6, false},
};
#undef OFF
#define N_KEYS (sizeof(keys) / sizeof(keys[0]))
#define N_PERF_KEYS 7

/*
 * Names traces, measured folders and launch commands use for zoo models.
 * Compared after squash(): lower case, with '-', '_', '.', ' ' removed.
 */
static const struct {
	const char *alias;
	const char *canonical;
} aliases[] = {
	{"vitbase", "vit"},
	{"vitb16", "vit"},
	{"vitbasepatch16224", "vit"},
	{"googlevitbasepatch16224", "vit"},
	{"robertalarge", "roberta"},
	{"bertlarge", "bert"},
	{"bertlargeuncased", "bert"},
	{"bertlargecased", "bert"},
	{"gpt2xl", "gpt2"},
	{"gpt215b", "gpt2"},
	{"t53b", "t5_3b"},
	{"googlet53b", "t5_3b"},
	{"llama7b", "llama7"},
	{"llama27b", "llama7"},
	{"llama27bhf", "llama7"},
	{"metallamallama27bhf", "llama7"},
	{"llama30b", "llama30"},
	{"huggyllamallama30b", "llama30"},
};

/* Lower-case `s` dropping separators into out (cap bytes); false if it does not fit. */
static bool squash(const char *s, char *out, size_t cap)
{
	size_t n = 0;
	for (; *s; s++) {
		if (*s == '-' || *s == '_' || *s == '.' || *s == ' ' || *s == '/')
			continue;
		if (n + 1 >= cap)
			return false;
		out[n++] = (char)tolower((unsigned char)*s);
	}
	out[n] = '\0';
	return true;
}

const char *rk_zoo_alias_canonical(const char *name)
{
	char sq[128];
	if (!name || !squash(name, sq, sizeof(sq)))
		return NULL;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(sq, aliases[i].alias))
			return aliases[i].canonical;
	return NULL;
}

double rk_model_params_estimate(int layers, int hidden, int vocab)
{
	double h = hidden;
	return 12.0 * layers * h * h + (double)vocab * h;
}

/* A zoo name: 1..RK_MODEL_NAME_MAX-1 of [a-z0-9_.-], starting with a letter or digit. */
static bool name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= RK_MODEL_NAME_MAX || !isalnum((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!(islower(c) || isdigit(c) || c == '_' || c == '-' || c == '.'))
			return false;
	}
	return true;
}

/*
 * Cross-field and range checks shared by the parser and rk_model_validate.
 * On failure returns the code, sets *bad to the key at fault and writes
 * "key 'K': what is wrong" into err.
 */
static int check_model(const struct rk_model *m, const char **bad, struct rk_error *err)
{
	char name[RK_MODEL_NAME_MAX + 1];
	memcpy(name, m->name, RK_MODEL_NAME_MAX);
	name[RK_MODEL_NAME_MAX] = '\0';
	if (!name_ok(name)) {
		*bad = "name";
		return rk_error_set(err, RK_EINVAL,
				    "key 'name': '%s' is not a model name (1-%d characters of "
				    "a-z 0-9 _ . -, starting with a letter or digit)",
				    name, RK_MODEL_NAME_MAX - 1);
	}
	for (size_t i = 0; i < N_KEYS; i++) {
		const struct key_spec *k = &keys[i];
		const char *p = (const char *)m + k->offset;
		double v;
		if (k->type == KEY_NAME || (k->perf && !m->perf_fitted))
			continue;
		if (k->type == KEY_DOUBLE)
			memcpy(&v, p, sizeof(v));
		else {
			int iv;
			memcpy(&iv, p, sizeof(iv));
			v = iv;
		}
		if (!isfinite(v) || v < k->min || v > k->max) {
			*bad = k->key;
			return rk_error_set(err, RK_ERANGE, "key '%s': %g is outside [%g, %g]",
					    k->key, v, k->min, k->max);
		}
	}
	if (m->perf_fitted != 0 && m->perf_fitted != 1) {
		*bad = "perf_k_bwd";
		return rk_error_set(err, RK_EINVAL, "perf_fitted must be 0 or 1, not %d",
				    m->perf_fitted);
	}
	if (m->hidden % m->heads != 0) {
		*bad = "heads";
		return rk_error_set(err, RK_EINVAL,
				    "key 'heads': %d heads do not divide hidden size %d", m->heads,
				    m->hidden);
	}
	return 0;
}

int rk_model_validate(const struct rk_model *m, struct rk_error *err)
{
	const char *bad = NULL;
	if (!m)
		return rk_error_set(err, RK_EINVAL, "model: NULL");
	int rc = check_model(m, &bad, err);
	if (rc) {
		char name[RK_MODEL_NAME_MAX + 1];
		memcpy(name, m->name, RK_MODEL_NAME_MAX);
		name[RK_MODEL_NAME_MAX] = '\0';
		rk_error_prefix(err, "model '%s'", name);
	}
	return rc;
}

/* ---- parser ---- */

struct cursor {
	const char *src;
	int line, col; /* 1-based position of the statement being read */
};

static int fail_at(struct rk_error *err, int code, const struct cursor *c, int col,
		   const char *fmt, const char *a, const char *b)
{
	char what[400];
	snprintf(what, sizeof(what), fmt, a, b ? b : "");
	return rk_error_set(err, code, "%s:%d:%d: %s", c->src, c->line, col, what);
}

static bool is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* Store value text `v` (NUL-terminated, trimmed) for key k into m. */
static int store_value(const struct key_spec *k, const char *v, struct rk_model *m,
		       const char **why)
{
	char *p = (char *)m + k->offset;
	char *end;
	switch (k->type) {
	case KEY_NAME: {
		char low[RK_MODEL_NAME_MAX + 1];
		size_t n = strlen(v);
		if (n >= RK_MODEL_NAME_MAX) {
			*why = "is too long (at most 31 characters)";
			return RK_EINVAL;
		}
		for (size_t i = 0; i <= n; i++)
			low[i] = (char)tolower((unsigned char)v[i]);
		if (!name_ok(low)) {
			*why = "is not a model name (a-z 0-9 _ . -, starting with a letter or digit)";
			return RK_EINVAL;
		}
		memset(p, 0, RK_MODEL_NAME_MAX);
		memcpy(p, low, n + 1);
		return 0;
	}
	case KEY_INT:
	case KEY_BOOL: {
		if (k->type == KEY_BOOL) {
			int b = -1;
			if (!strcasecmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes"))
				b = 1;
			else if (!strcasecmp(v, "0") || !strcasecmp(v, "false") ||
				 !strcasecmp(v, "no"))
				b = 0;
			if (b < 0) {
				*why = "is not a boolean (0/1, true/false, yes/no)";
				return RK_EINVAL;
			}
			memcpy(p, &b, sizeof(b));
			return 0;
		}
		errno = 0;
		long x = strtol(v, &end, 10);
		if (end == v || *end != '\0') {
			*why = "is not an integer";
			return RK_EINVAL;
		}
		if (errno == ERANGE || x < (long)k->min || x > (long)k->max) {
			*why = "is out of range";
			return RK_ERANGE;
		}
		int iv = (int)x;
		memcpy(p, &iv, sizeof(iv));
		return 0;
	}
	case KEY_DOUBLE: {
		errno = 0;
		double x = strtod(v, &end);
		if (end == v || *end != '\0') {
			*why = "is not a number";
			return RK_EINVAL;
		}
		if (errno == ERANGE || !isfinite(x) || x < k->min || x > k->max) {
			*why = "is out of range";
			return RK_ERANGE;
		}
		memcpy(p, &x, sizeof(x));
		return 0;
	}
	}
	return RK_EINTERNAL;
}

static const struct key_spec *find_key(const char *s, size_t n)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (strlen(keys[i].key) == n && !strncmp(keys[i].key, s, n))
			return &keys[i];
	return NULL;
}

/* Parse one statement s[0..n) (no terminator) at cursor c. */
static int parse_statement(const char *s, size_t n, struct cursor *c, struct rk_model *m,
			   int *seen_line, int *seen_col, struct rk_error *err)
{
	size_t i = 0;
	while (i < n && is_space(s[i]))
		i++;
	if (i == n || s[i] == '#')
		return 0;
	size_t key0 = i;
	while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
		i++;
	size_t key1 = i;
	char key[VALUE_MAX + 1];
	size_t klen = key1 - key0 < VALUE_MAX ? key1 - key0 : VALUE_MAX;
	memcpy(key, s + key0, klen);
	key[klen] = '\0';
	while (i < n && is_space(s[i]))
		i++;
	if (key1 == key0 || i == n || s[i] != '=') {
		if (key1 == key0) {
			char found[21];
			size_t fl = 0;
			while (fl < 20 && key0 + fl < n && s[key0 + fl] != '\0')
				fl++;
			memcpy(found, s + key0, fl);
			found[fl] = '\0';
			return fail_at(err, RK_EINVAL, c, c->col + (int)key0,
				       "expected 'key = value', found '%s'%s", found, "");
		}
		return fail_at(err, RK_EINVAL, c, c->col + (int)i,
			       "key '%s': expected '=' after the key%s", key, "");
	}
	const struct key_spec *k = find_key(s + key0, key1 - key0);
	if (!k)
		return fail_at(err, RK_EINVAL, c, c->col + (int)key0,
			       "unknown key '%s'%s (see docs/zoo.md)", key, "");
	size_t ki = (size_t)(k - keys);
	if (seen_line[ki])
		return fail_at(err, RK_EINVAL, c, c->col + (int)key0,
			       "key '%s': given twice%s", key, "");
	i++; /* '=' */
	while (i < n && is_space(s[i]))
		i++;
	size_t v0 = i;
	while (i < n && s[i] != '#')
		i++;
	size_t v1 = i;
	while (v1 > v0 && is_space(s[v1 - 1]))
		v1--;
	if (v1 == v0)
		return fail_at(err, RK_EINVAL, c, c->col + (int)v0, "key '%s': missing value%s",
			       key, "");
	if (v1 - v0 > VALUE_MAX)
		return fail_at(err, RK_EINVAL, c, c->col + (int)v0,
			       "key '%s': value longer than 64 characters%s", key, "");
	char val[VALUE_MAX + 1];
	memcpy(val, s + v0, v1 - v0);
	val[v1 - v0] = '\0';
	if (memchr(val, '\0', v1 - v0))
		return fail_at(err, RK_EINVAL, c, c->col + (int)v0,
			       "key '%s': value contains a NUL byte%s", key, "");
	const char *why = "is invalid";
	int rc = store_value(k, val, m, &why);
	if (rc) {
		char msg[160];
		snprintf(msg, sizeof(msg), "value '%s' %s", val, why);
		if (rc == RK_ERANGE && k->type != KEY_NAME) {
			size_t used = strlen(msg);
			snprintf(msg + used, sizeof(msg) - used, " [%g, %g]", k->min, k->max);
		}
		return fail_at(err, rc, c, c->col + (int)v0, "key '%s': %s", key, msg);
	}
	seen_line[ki] = c->line;
	seen_col[ki] = c->col + (int)key0;
	return 0;
}

int rk_model_parse(const char *text, size_t len, const char *src, struct rk_model *out,
		   struct rk_error *err)
{
	struct rk_model m;
	int seen_line[N_KEYS] = {0}, seen_col[N_KEYS] = {0};
	struct cursor c = {src ? src : "<model>", 1, 1};
	if (!out || (!text && len))
		return rk_error_set(err, RK_EINVAL, "%s: no text to parse", c.src);
	memset(&m, 0, sizeof(m));
	size_t pos = 0;
	while (pos < len) {
		size_t end = pos;
		while (end < len && text[end] != '\n' && text[end] != ';')
			end++;
		/* A comment runs to the end of the line, ';' included. */
		const char *hash = memchr(text + pos, '#', end - pos);
		if (hash && end < len && text[end] == ';') {
			while (end < len && text[end] != '\n')
				end++;
		}
		int rc = parse_statement(text + pos, end - pos, &c, &m, seen_line, seen_col, err);
		if (rc)
			return rc;
		if (end < len && text[end] == '\n') {
			c.line++;
			c.col = 1;
		} else {
			c.col += (int)(end - pos) + 1;
		}
		pos = end + 1;
	}
	for (size_t i = 0; i < N_KEYS; i++)
		if (keys[i].required && !seen_line[i])
			return rk_error_set(err, RK_EINVAL, "%s: missing required key '%s'", c.src,
					    keys[i].key);
	int n_perf = 0;
	const char *perf_seen = NULL, *perf_missing = NULL;
	for (size_t i = 0; i < N_KEYS; i++) {
		if (!keys[i].perf)
			continue;
		if (seen_line[i]) {
			n_perf++;
			perf_seen = keys[i].key;
		} else if (!perf_missing) {
			perf_missing = keys[i].key;
		}
	}
	if (n_perf != 0 && n_perf != N_PERF_KEYS)
		return rk_error_set(err, RK_EINVAL,
				    "%s: key '%s' given but '%s' missing: the 7 perf_k_* "
				    "parameters come all together or not at all",
				    c.src, perf_seen, perf_missing);
	m.perf_fitted = n_perf == N_PERF_KEYS;
	const char *bad = NULL;
	int rc = check_model(&m, &bad, err);
	if (rc) {
		for (size_t i = 0; i < N_KEYS; i++)
			if (bad && !strcmp(keys[i].key, bad) && seen_line[i])
				return rk_error_prefix(err, "%s:%d:%d", c.src, seen_line[i],
						       seen_col[i]);
		return rk_error_prefix(err, "%s", c.src);
	}
	*out = m;
	return 0;
}

/* ---- formatting ---- */

/* Shortest "%.*g" text of x that reads back as exactly x. */
static void format_double(double x, char *buf, size_t cap)
{
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(buf, cap, "%.*g", prec, x);
		if (strtod(buf, NULL) == x)
			return;
	}
}

int rk_model_format(const struct rk_model *m, char *buf, size_t cap)
{
	if (!m || (!buf && cap))
		return RK_EINVAL;
	char name[RK_MODEL_NAME_MAX + 1];
	memcpy(name, m->name, RK_MODEL_NAME_MAX);
	name[RK_MODEL_NAME_MAX] = '\0';
	size_t used = 0;
	int total = 0;
	for (size_t i = 0; i < N_KEYS; i++) {
		const struct key_spec *k = &keys[i];
		const char *p = (const char *)m + k->offset;
		char val[64];
		if (k->perf && !m->perf_fitted)
			continue;
		if (!k->required && !k->perf) {
			/* Optional keys at their documented default are left out. */
			if (k->type == KEY_DOUBLE) {
				double d;
				memcpy(&d, p, sizeof(d));
				if (d == 0)
					continue;
			} else {
				int iv;
				memcpy(&iv, p, sizeof(iv));
				if (iv == 0)
					continue;
			}
		}
		switch (k->type) {
		case KEY_NAME:
			snprintf(val, sizeof(val), "%s", name);
			break;
		case KEY_INT:
		case KEY_BOOL: {
			int iv;
			memcpy(&iv, p, sizeof(iv));
			snprintf(val, sizeof(val), "%d", iv);
			break;
		}
		case KEY_DOUBLE: {
			double d;
			memcpy(&d, p, sizeof(d));
			format_double(d, val, sizeof(val));
			break;
		}
		}
		int n = snprintf(buf ? buf + used : NULL, cap > used ? cap - used : 0,
				 "%s = %s\n", k->key, val);
		if (n < 0)
			return RK_EINTERNAL;
		total += n;
		used = (size_t)total < cap ? (size_t)total : (cap ? cap - 1 : 0);
	}
	if (cap && total == 0)
		buf[0] = '\0';
	return total;
}

/* ---- the zoo ---- */

void rk_zoo_init(struct rk_zoo *zoo)
{
	zoo->models = NULL;
	zoo->n_models = 0;
	zoo->cap = 0;
}

void rk_zoo_fini(struct rk_zoo *zoo)
{
	if (!zoo)
		return;
	free(zoo->models);
	rk_zoo_init(zoo);
}

static const struct rk_model *find_exact(const struct rk_zoo *zoo, const char *name)
{
	for (size_t i = 0; i < zoo->n_models; i++)
		if (!strncasecmp(zoo->models[i].name, name, RK_MODEL_NAME_MAX) &&
		    strlen(name) < RK_MODEL_NAME_MAX)
			return &zoo->models[i];
	return NULL;
}

int rk_zoo_add(struct rk_zoo *zoo, const struct rk_model *m, struct rk_error *err)
{
	if (!zoo || !m)
		return rk_error_set(err, RK_EINVAL, "rk_zoo_add: NULL argument");
	int rc = rk_model_validate(m, err);
	if (rc)
		return rc;
	if (find_exact(zoo, m->name))
		return rk_error_set(err, RK_EEXIST, "model '%s' is already in the zoo", m->name);
	if (zoo->n_models == zoo->cap) {
		size_t cap = zoo->cap ? zoo->cap * 2 : 8;
		struct rk_model *grown = realloc(zoo->models, cap * sizeof(*grown));
		if (!grown)
			return rk_error_set(err, RK_ENOMEM, "model '%s': out of memory", m->name);
		zoo->models = grown;
		zoo->cap = cap;
	}
	zoo->models[zoo->n_models++] = *m;
	return 0;
}

int rk_zoo_add_text(struct rk_zoo *zoo, const char *text, size_t len, const char *src,
		    struct rk_error *err)
{
	struct rk_model m;
	int rc = rk_model_parse(text, len, src, &m, err);
	if (rc)
		return rc;
	rc = rk_zoo_add(zoo, &m, err);
	if (rc)
		rk_error_prefix(err, "%s", src ? src : "<model>");
	return rc;
}

const struct rk_model *rk_zoo_find(const struct rk_zoo *zoo, const char *name)
{
	if (!zoo || !name)
		return NULL;
	const struct rk_model *m = find_exact(zoo, name);
	if (m)
		return m;
	const char *canon = rk_zoo_alias_canonical(name);
	if (canon && (m = find_exact(zoo, canon)))
		return m;
	/* "T5_3B" and "t5-3b" squash alike; compare squashed names too. */
	char want[128], have[RK_MODEL_NAME_MAX + 1];
	if (!squash(name, want, sizeof(want)))
		return NULL;
	for (size_t i = 0; i < zoo->n_models; i++)
		if (squash(zoo->models[i].name, have, sizeof(have)) && !strcmp(want, have))
			return &zoo->models[i];
	return NULL;
}

int rk_zoo_resolve(const struct rk_zoo *zoo, const char *name, const struct rk_model **model,
		   int *global_batch, struct rk_error *err)
{
	if (!zoo || !name || !model || !global_batch)
		return rk_error_set(err, RK_EINVAL, "rk_zoo_resolve: NULL argument");
	char base[128];
	int batch = 0;
	size_t n = strlen(name);
	if (n >= sizeof(base))
		return rk_error_set(err, RK_ENOTFOUND, "model '%.40s...': name too long", name);
	memcpy(base, name, n + 1);
	/* "<model>_bsz<N>": the measured folder of <model> run at global batch N. */
	char *suffix = strstr(base, "_bsz");
	if (suffix) {
		char *end;
		errno = 0;
		long b = strtol(suffix + 4, &end, 10);
		if (end == suffix + 4 || *end != '\0' || errno || b < 1 || b > 16777216)
			return rk_error_set(err, RK_ENOTFOUND,
					    "model '%s': '_bsz' must be followed by a positive "
					    "global batch",
					    name);
		batch = (int)b;
		*suffix = '\0';
	}
	const struct rk_model *m = rk_zoo_find(zoo, base);
	if (!m)
		return rk_error_set(err, RK_ENOTFOUND, "model '%s' is not in the zoo", base);
	*model = m;
	*global_batch = batch ? batch : m->global_batch;
	return 0;
}
