/*
 * Plan spaces (plan.h): the upper bound per plan dimension that a job's
 * script supports, declared by the user or read off its launch command, and
 * kept by every policy. A space is a product of per-dimension limits (no
 * cross-dimension rules): a script that can run tp=4 and pp=4 can run them
 * together, which is how Megatron-style 3D parallelism composes (Narayanan et
 * al. 2021, §2).
 */
#include "rubick/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum item { IT_TP, IT_PP, IT_ZERO, IT_OFFLOAD, IT_GC, IT_DP, N_ITEMS };

static const char *const item_names[N_ITEMS] = {"tp", "pp", "zero", "offload", "gc", "dp"};

static int space_error(struct rk_error *err, int code, const char *name, size_t col,
		       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int space_error(struct rk_error *err, int code, const char *name, size_t col,
		       const char *fmt, ...)
{
	if (!err)
		return code;
	char what[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return rk_error_set(err, code, "%s:1:%zu: %s", name ? name : "plan space", col, what);
}

#define SERR(code, col, ...) space_error(err, code, name, col, __VA_ARGS__)

static void space_all(struct rk_plan_space *s)
{
	s->limited = 0;
	s->tp_max = RK_PLAN_DEGREE_MAX;
	s->pp_max = RK_PLAN_DEGREE_MAX;
	s->zero_max = 3;
	s->offload = 1;
	s->gc = 1;
}

/* Limits of `s`, with an unlimited space spelled out. */
static struct rk_plan_space effective(const struct rk_plan_space *s)
{
	struct rk_plan_space e;
	space_all(&e);
	if (s && s->limited)
		e = *s;
	return e;
}

static int is_all(const struct rk_plan_space *s)
{
	return s->tp_max >= RK_PLAN_DEGREE_MAX && s->pp_max >= RK_PLAN_DEGREE_MAX &&
	       s->zero_max >= 3 && s->offload && s->gc;
}

/* Decimal integer of exactly len characters, saturating above 10^9; -1 if not one. */
static int parse_uint(const char *s, size_t len, long long *out)
{
	if (len == 0)
		return -1;
	long long v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (v < 1000000000LL)
			v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

static int find_item(const char *s, size_t len)
{
	for (int i = 0; i < N_ITEMS; i++)
		if (strlen(item_names[i]) == len && !memcmp(item_names[i], s, len))
			return i;
	return -1;
}

/* One item "KEY<=N", "KEY=V" or "dp" at text[start, end) into *s. */
static int parse_item(const char *text, size_t start, size_t end, const char *name,
		      struct rk_plan_space *s, int *seen, struct rk_error *err)
{
	const char *it = text + start;
	size_t len = end - start, klen = 0;
	while (klen < len && it[klen] != '<' && it[klen] != '=')
		klen++;
	int k = find_item(it, klen);
	if (k < 0)
		return SERR(RK_EINVAL, start + 1,
			    "unknown item '%.*s' (items: tp<=N, pp<=N, zero<=Z, "
			    "offload=yes|no, gc=yes|no, dp, all)",
			    (int)(klen > 24 ? 24 : klen), it);
	if (seen[k])
		return SERR(RK_EINVAL, start + 1, "'%s' given twice", item_names[k]);
	if (k != IT_DP && k != IT_GC && seen[IT_DP])
		return SERR(RK_EINVAL, start + 1,
			    "'%s' contradicts 'dp', which already sets tp=1,pp=1,zero=0,offload=no",
			    item_names[k]);
	seen[k] = 1;
	if (k == IT_DP) {
		if (klen != len)
			return SERR(RK_EINVAL, start + 1, "'dp' takes no value");
		for (int d = IT_TP; d <= IT_OFFLOAD; d++)
			if (seen[d])
				return SERR(RK_EINVAL, start + 1,
					    "'dp' contradicts the '%s' item before it",
					    item_names[d]);
		s->tp_max = s->pp_max = 1;
		s->zero_max = 0;
		s->offload = 0;
		return RK_OK;
	}
	int le = klen + 1 < len && it[klen] == '<' && it[klen + 1] == '=';
	if (klen == len || (!le && it[klen] != '='))
		return SERR(RK_EINVAL, start + 1, "item '%s' needs a value (e.g. %s)",
			    item_names[k],
			    k == IT_OFFLOAD || k == IT_GC ? "gc=no" : "tp<=4");
	size_t vcol = start + klen + (le ? 2 : 1);
	const char *v = text + vcol;
	size_t vlen = end - vcol;
	if (k == IT_OFFLOAD || k == IT_GC) {
		int yes = vlen == 3 && !memcmp(v, "yes", 3);
		if (le || (!yes && !(vlen == 2 && !memcmp(v, "no", 2))))
			return SERR(RK_EINVAL, start + 1, "'%s' must be '%s=yes' or '%s=no'",
				    item_names[k], item_names[k], item_names[k]);
		*(k == IT_GC ? &s->gc : &s->offload) = yes;
		return RK_OK;
	}
	long long n;
	if (parse_uint(v, vlen, &n))
		return SERR(RK_EINVAL, vcol + 1, "'%s' needs a non-negative integer, got '%.*s'",
			    item_names[k], (int)(vlen > 24 ? 24 : vlen), v);
	long long lo = k == IT_ZERO ? 0 : 1, hi = k == IT_ZERO ? 3 : RK_PLAN_DEGREE_MAX;
	if (n < lo || n > hi)
		return SERR(RK_ERANGE, vcol + 1, "'%s' bound %lld out of range %lld..%lld",
			    item_names[k], n, lo, hi);
	/* "=" is only the way to forbid a dimension: a space is a set of upper
	 * bounds, so "tp=4" (exactly 4) would promise what no limit keeps. */
	if (!le && n != lo)
		return SERR(RK_EINVAL, start + 1,
			    "'%s=%lld': a space bounds a dimension from above; write '%s<=%lld' "
			    "(or '%s=%lld' to forbid it)",
			    item_names[k], n, item_names[k], n, item_names[k], lo);
	*(k == IT_TP ? &s->tp_max : k == IT_PP ? &s->pp_max : &s->zero_max) = (int)n;
	return RK_OK;
}

int rk_plan_space_parse(const char *text, const char *name, struct rk_plan_space *out,
			struct rk_error *err)
{
	if (!text || !out)
		return rk_error_set(err, RK_EINVAL, "%s: no plan space given",
				    name ? name : "plan space");
	size_t n = strlen(text);
	if (n == 0)
		return SERR(RK_EINVAL, 1, "empty plan space (expected e.g. 'all', 'dp' or "
					  "'tp<=4,pp<=4,zero<=2,offload=no')");
	struct rk_plan_space s;
	space_all(&s);
	if (!strcmp(text, "all")) {
		*out = s;
		return RK_OK;
	}
	int seen[N_ITEMS] = {0};
	for (size_t pos = 0;;) {
		size_t end = pos;
		while (end < n && text[end] != ',')
			end++;
		if (end == pos)
			return SERR(RK_EINVAL, pos + 1, "empty item");
		if (end - pos == 3 && !memcmp(text + pos, "all", 3))
			return SERR(RK_EINVAL, pos + 1, "'all' must stand alone");
		int rc = parse_item(text, pos, end, name, &s, seen, err);
		if (rc)
			return rc;
		if (end == n)
			break;
		pos = end + 1;
		if (pos == n)
			return SERR(RK_EINVAL, pos + 1, "trailing comma");
	}
	s.limited = !is_all(&s);
	if (!s.limited)
		space_all(&s);
	*out = s;
	return RK_OK;
}

int rk_plan_space_format(const struct rk_plan_space *space, char *buf, size_t cap)
{
	struct rk_plan_space e = effective(space);
	char tmp[RK_PLAN_SPACE_TEXT_MAX * 2];
	size_t len = 0;
	tmp[0] = '\0';
	if (!e.limited || is_all(&e)) {
		len = (size_t)snprintf(tmp, sizeof(tmp), "all");
	} else {
		const struct {
			const char *key;
			int v, lo, unlimited;
		} b[] = {{"tp", e.tp_max, 1, RK_PLAN_DEGREE_MAX},
			 {"pp", e.pp_max, 1, RK_PLAN_DEGREE_MAX},
			 {"zero", e.zero_max, 0, 3}};
		for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
			if (b[i].v < b[i].unlimited)
				len += (size_t)snprintf(tmp + len, sizeof(tmp) - len, "%s%s%s%d",
							len ? "," : "", b[i].key,
							b[i].v <= b[i].lo ? "=" : "<=", b[i].v);
		if (!e.offload)
			len += (size_t)snprintf(tmp + len, sizeof(tmp) - len, "%soffload=no",
						len ? "," : "");
		if (!e.gc)
			len += (size_t)snprintf(tmp + len, sizeof(tmp) - len, "%sgc=no",
						len ? "," : "");
	}
	if (!buf || cap == 0)
		return RK_ERANGE;
	snprintf(buf, cap, "%s", tmp);
	return len < cap ? (int)len : RK_ERANGE;
}

const char *rk_plan_space_violation(const struct rk_plan *plan,
				    const struct rk_plan_space *space)
{
	if (!plan || !space || !space->limited)
		return NULL;
	if (plan->tp > space->tp_max)
		return "tp";
	if (plan->pp > space->pp_max)
		return "pp";
	if (plan->zero > space->zero_max)
		return "zero";
	if (plan->offload && !space->offload)
		return "offload";
	if (plan->gc && !space->gc)
		return "gc";
	return NULL;
}

int rk_plan_in_space(const struct rk_plan *plan, const struct rk_plan_space *space)
{
	return rk_plan_space_violation(plan, space) == NULL;
}

int rk_plan_space_check(const struct rk_plan *plan, const struct rk_plan_space *space,
			struct rk_error *err)
{
	const char *d = rk_plan_space_violation(plan, space);
	if (!d)
		return RK_OK;
	char st[RK_PLAN_SPACE_TEXT_MAX];
	rk_plan_space_format(space, st, sizeof(st));
	int v = !strcmp(d, "tp")     ? plan->tp
		: !strcmp(d, "pp")   ? plan->pp
		: !strcmp(d, "zero") ? plan->zero
		: !strcmp(d, "gc")   ? plan->gc
				     : plan->offload;
	return rk_error_set(err, RK_EINFEASIBLE,
			    "plan has %s=%d, outside the job's plan space '%s' (dimension %s)", d,
			    v, st, d);
}

int rk_plan_space_equal(const struct rk_plan_space *a, const struct rk_plan_space *b)
{
	struct rk_plan_space x = effective(a), y = effective(b);
	return x.tp_max == y.tp_max && x.pp_max == y.pp_max && x.zero_max == y.zero_max &&
	       x.offload == y.offload && x.gc == y.gc;
}
