/*
 * Execution plans: the canonical text form, its parser and printer, and the
 * invariants every engine relies on (plan.h). The global batch is invariant:
 * mb * ga * dp == B for every plan of a job (docs/references.md §1.1).
 */
#include "rubick/plan.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The keys in canonical order, with their allowed range. */
static const struct {
	const char *key;
	int lo, hi;
} plan_keys[] = {
	{"dp", 1, RK_PLAN_DEGREE_MAX}, {"tp", 1, RK_PLAN_DEGREE_MAX},
	{"pp", 1, RK_PLAN_DEGREE_MAX}, {"mb", 1, RK_PLAN_DEGREE_MAX},
	{"ga", 1, RK_PLAN_DEGREE_MAX}, {"gc", 0, 1},
	{"zero", 0, 3},                {"offload", 0, 1},
};
#define N_KEYS ((int)(sizeof(plan_keys) / sizeof(plan_keys[0])))

static int *plan_field(struct rk_plan *p, int i)
{
	int *f[N_KEYS] = {&p->dp, &p->tp, &p->pp, &p->mb, &p->ga, &p->gc, &p->zero, &p->offload};
	return f[i];
}

static int find_key(const char *s, size_t len)
{
	for (int i = 0; i < N_KEYS; i++)
		if (strlen(plan_keys[i].key) == len && !memcmp(plan_keys[i].key, s, len))
			return i;
	return -1;
}

/*
 * Parse an optionally signed decimal integer of exactly `len` characters.
 * Values beyond +-10^9 saturate so range checks still see them as too large.
 * Returns 0, or -1 when the text is not an integer.
 */
static int parse_int(const char *s, size_t len, long long *out)
{
	size_t i = 0;
	int neg = 0;
	if (len > 0 && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (i == len)
		return -1;
	long long v = 0;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (v < 1000000000LL)
			v = v * 10 + (s[i] - '0');
	}
	*out = neg ? -v : v;
	return 0;
}

#define PERR(code, col, ...) plan_error(err, code, name, col, __VA_ARGS__)

static int plan_error(struct rk_error *err, int code, const char *name, size_t col,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int plan_error(struct rk_error *err, int code, const char *name, size_t col,
		      const char *fmt, ...)
{
	if (!err)
		return code;
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return rk_error_set(err, code, "%s:1:%zu: %s", name ? name : "plan", col, what);
}

/* Copy at most 24 characters of a token for a message, marking a cut. */
static void quote(char *buf, size_t cap, const char *s, size_t len)
{
	if (len + 1 > cap)
		snprintf(buf, cap, "%.*s...", (int)(cap - 4), s);
	else
		snprintf(buf, cap, "%.*s", (int)len, s);
}

int rk_plan_parse(const char *text, const char *name, struct rk_plan *out,
		  struct rk_error *err)
{
	if (!text || !out)
		return rk_error_set(err, RK_EINVAL, "%s: no plan text given", name ? name : "plan");
	struct rk_plan p = {0};
	int seen[N_KEYS] = {0};
	size_t seen_col[N_KEYS] = {0};
	size_t n = strlen(text);
	if (n == 0)
		return PERR(RK_EINVAL, 1, "empty plan (expected e.g. %s)",
			    "dp=1,tp=1,pp=1,mb=1,ga=1,gc=0,zero=0,offload=0");
	size_t pos = 0;
	for (;;) {
		size_t start = pos, end = pos;
		while (end < n && text[end] != ',')
			end++;
		char tok[32];
		if (end == start)
			return PERR(RK_EINVAL, start + 1, "empty field (expected KEY=VALUE)");
		const char *eq = memchr(text + start, '=', end - start);
		if (!eq) {
			quote(tok, sizeof(tok), text + start, end - start);
			return PERR(RK_EINVAL, start + 1, "expected KEY=VALUE, got '%s'", tok);
		}
		size_t klen = (size_t)(eq - (text + start));
		int k = find_key(text + start, klen);
		if (k < 0) {
			quote(tok, sizeof(tok), text + start, klen);
			return PERR(RK_EINVAL, start + 1,
				    "unknown key '%s' (keys: dp, tp, pp, mb, ga, gc, zero, offload)",
				    tok);
		}
		if (seen[k])
			return PERR(RK_EINVAL, start + 1, "duplicate key '%s' (first at column %zu)",
				    plan_keys[k].key, seen_col[k]);
		size_t vstart = start + klen + 1;
		long long v;
		if (parse_int(text + vstart, end - vstart, &v)) {
			quote(tok, sizeof(tok), text + vstart, end - vstart);
			return PERR(RK_EINVAL, vstart + 1, "value of '%s' is not an integer: '%s'",
				    plan_keys[k].key, tok);
		}
		if (v < plan_keys[k].lo || v > plan_keys[k].hi)
			return PERR(RK_ERANGE, vstart + 1, "'%s' must be in %d..%d, got %lld",
				    plan_keys[k].key, plan_keys[k].lo, plan_keys[k].hi, v);
		*plan_field(&p, k) = (int)v;
		seen[k] = 1;
		seen_col[k] = start + 1;
		if (end == n)
			break;
		pos = end + 1;
		if (pos == n)
			return PERR(RK_EINVAL, pos + 1, "empty field after trailing ','");
	}
	for (int k = 0; k < N_KEYS; k++)
		if (!seen[k])
			return PERR(RK_EINVAL, n + 1, "missing key '%s'", plan_keys[k].key);
	if (p.offload && p.zero < 1)
		return PERR(RK_EINVAL, seen_col[7], "offload=1 needs zero >= 1 (ZeRO-Offload)");
	if ((p.tp > 1 || p.pp > 1) && (p.zero || p.offload))
		return PERR(RK_EINVAL, seen_col[p.zero ? 6 : 7],
			    "tensor/pipeline parallel plans (tp or pp > 1) exclude ZeRO and offload");
	*out = p;
	return RK_OK;
}

int rk_plan_format(const struct rk_plan *p, char *buf, size_t cap)
{
	if (!p || !buf || cap == 0)
		return RK_EINVAL;
	int n = snprintf(buf, cap, "dp=%d,tp=%d,pp=%d,mb=%d,ga=%d,gc=%d,zero=%d,offload=%d", p->dp,
			 p->tp, p->pp, p->mb, p->ga, p->gc, p->zero, p->offload);
	if (n < 0)
		return RK_EINTERNAL;
	return (size_t)n >= cap ? RK_ERANGE : n;
}

int rk_plan_validate(const struct rk_plan *p, int global_batch, int gpus, struct rk_error *err)
{
	if (!p)
		return rk_error_set(err, RK_EINVAL, "plan: none given");
	if (global_batch < 1)
		return rk_error_set(err, RK_EINVAL, "global batch must be >= 1, got %d",
				    global_batch);
	if (gpus < 1)
		return rk_error_set(err, RK_EINVAL, "GPU count must be >= 1, got %d", gpus);
	struct rk_plan c = *p;
	for (int k = 0; k < N_KEYS; k++) {
		int v = *plan_field(&c, k);
		if (v < plan_keys[k].lo || v > plan_keys[k].hi)
			return rk_error_set(err, RK_EINVAL, "plan: '%s' must be in %d..%d, got %d",
					    plan_keys[k].key, plan_keys[k].lo, plan_keys[k].hi, v);
	}
	int64_t batch = (int64_t)p->mb * p->ga * p->dp;
	if (batch != global_batch)
		return rk_error_set(err, RK_EINVAL,
				    "plan: mb*ga*dp = %d*%d*%d = %lld, but the global batch is %d",
				    p->mb, p->ga, p->dp, (long long)batch, global_batch);
	int64_t g = (int64_t)p->dp * p->tp * p->pp;
	if (g != gpus)
		return rk_error_set(err, RK_EINVAL,
				    "plan: dp*tp*pp = %d*%d*%d = %lld, but the job has %d GPUs", p->dp,
				    p->tp, p->pp, (long long)g, gpus);
	if (p->offload && p->zero < 1)
		return rk_error_set(err, RK_EINVAL, "plan: offload=1 needs zero >= 1");
	if ((p->tp > 1 || p->pp > 1) && (p->zero || p->offload))
		return rk_error_set(err, RK_EINVAL,
				    "plan: tensor/pipeline parallel plans exclude ZeRO and offload");
	return RK_OK;
}

int rk_plan_equal(const struct rk_plan *a, const struct rk_plan *b)
{
	return a->dp == b->dp && a->tp == b->tp && a->pp == b->pp && a->mb == b->mb &&
	       a->ga == b->ga && a->gc == b->gc && a->zero == b->zero && a->offload == b->offload;
}
