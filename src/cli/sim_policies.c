/*
 * Policy lists with per-policy options for `rubick sim` (sim_policies.h).
 * Two variants of one policy in one run (Sia's p = -0.5 against p = 1, its
 * fairness knob, §4) need options per entry: `--policy-options` alone gives
 * every policy the same string. The bracket form takes several keys
 * unambiguously because the list splits only at commas outside brackets.
 */
#include "cli/sim_policies.h"

#include "cli/commands.h"
#include "cli/util.h"

#include <stdio.h>
#include <string.h>

static int bad(const char *item, const char *what)
{
	fprintf(stderr, "rubick sim: --policy: '%s': %s (try `rubick sim --help`)\n", item, what);
	return RK_EXIT_USAGE;
}

/* Length of the next item of `s`: up to a comma outside brackets. -1 = unbalanced. */
static int item_len(const char *s)
{
	int depth = 0, i = 0;
	for (; s[i] && (s[i] != ',' || depth > 0); i++) {
		if (s[i] == '[')
			depth++;
		else if (s[i] == ']' && --depth < 0)
			return -1;
	}
	return depth ? -1 : i;
}

/* Length of the key of "KEY=VALUE" (all of it without '='). */
static size_t key_len(const char *kv, size_t n)
{
	const char *eq = memchr(kv, '=', n);
	return eq ? (size_t)(eq - kv) : n;
}

/*
 * defaults' items whose key `extra` does not set, then extra's items: the
 * policy parsers take the first or last of a repeated key differently, so
 * no key appears twice. 0, or -1 when it does not fit.
 */
static int merge(const char *defaults, const char *extra, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = '\0';
	for (const char *d = defaults ? defaults : ""; *d;) {
		size_t len = strcspn(d, ",");
		size_t kl = key_len(d, len);
		int overridden = 0;
		for (const char *e = extra; *e && !overridden;) {
			size_t el = strcspn(e, ",");
			overridden = key_len(e, el) == kl && !strncmp(e, d, kl);
			e += el + (e[el] == ',');
		}
		if (!overridden && len > 0) {
			int w = snprintf(out + n, cap - n, "%s%.*s", n ? "," : "", (int)len, d);
			if (w < 0 || (size_t)w >= cap - n)
				return -1;
			n += (size_t)w;
		}
		d += len + (d[len] == ',');
	}
	if (*extra) {
		int w = snprintf(out + n, cap - n, "%s%s", n ? "," : "", extra);
		if (w < 0 || (size_t)w >= cap - n)
			return -1;
	}
	return 0;
}

static int check_create(const struct rk_cli_policy *p)
{
	void *state = NULL;
	struct rk_error err;
	if (p->ops->create(&state, p->options, &err)) {
		fprintf(stderr, "rubick sim: --policy %s: %s\n", p->name, err.msg);
		return RK_EXIT_USAGE;
	}
	if (p->ops->destroy)
		p->ops->destroy(state);
	return 0;
}

static int add(const struct rk_policy_ops *ops, const char *opts, const char *defaults,
               struct rk_cli_policy *out, int cap, int *n, const char *item)
{
	if (*n == cap)
		return bad(item, "too many policies");
	struct rk_cli_policy *p = &out[*n];
	p->ops = ops;
	int w = *opts ? snprintf(p->name, sizeof(p->name), "%s[%s]", ops->name, opts)
	              : snprintf(p->name, sizeof(p->name), "%s", ops->name);
	if (w < 0 || (size_t)w >= sizeof(p->name))
		return bad(item, "name with options too long");
	if (merge(defaults, opts, p->options, sizeof(p->options)))
		return bad(item, "options too long");
	for (int i = 0; i < *n; i++)
		if (!strcmp(out[i].name, p->name))
			return bad(item, "listed twice (give each variant different options)");
	int rc = check_create(p);
	if (!rc)
		(*n)++;
	return rc;
}

static void list_registered(void)
{
	int n;
	const struct rk_policy_ops *const *all = rk_policy_list(&n);
	fprintf(stderr, " (registered:");
	for (int i = 0; i < n; i++)
		fprintf(stderr, " %s", all[i]->name);
	fprintf(stderr, ")\n");
}

int rk_cli_policies_parse(const char *list, const char *defaults, struct rk_cli_policy *out,
                          int cap, int *n)
{
	*n = 0;
	int pos = 0;
	for (const char *s = list; *s;) {
		int len = item_len(s);
		pos++;
		char item[RK_CLI_POLICY_OPTS_MAX];
		if (len < 0)
			return bad(s, "unbalanced '[' ']'");
		if ((size_t)len >= sizeof(item))
			return bad(s, "item too long");
		memcpy(item, s, (size_t)len);
		item[len] = '\0';
		/* "fifo," as ",fifo": an empty item anywhere is an error, with its position. */
		if (!*item || (s[len] == ',' && !s[len + 1])) {
			char what[64];
			snprintf(what, sizeof(what), "item %d is empty (drop the extra ',')",
			         pos + (*item != '\0'));
			return bad(list, what);
		}
		s += len + (s[len] == ',');
		char name[64], opts[RK_CLI_POLICY_OPTS_MAX] = "";
		size_t nl = strcspn(item, ":[");
		if (nl >= sizeof(name))
			return bad(item, "policy name too long");
		memcpy(name, item, nl);
		name[nl] = '\0';
		if (item[nl] == ':') {
			snprintf(opts, sizeof(opts), "%s", item + nl + 1);
		} else if (item[nl] == '[') {
			size_t ol = strlen(item + nl + 1);
			if (ol == 0 || item[nl + ol] != ']' || strchr(item + nl + 1, '[') ||
			    strchr(item + nl + 1, ']') != item + nl + ol)
				return bad(item, "expected NAME[KEY=VALUE,...] with ']' last");
			memcpy(opts, item + nl + 1, ol - 1);
			opts[ol - 1] = '\0';
			int e = rk_cli_list_empty_item(opts);
			if (e) {
				char what[64];
				snprintf(what, sizeof(what),
				         "option %d inside '[...]' is empty (drop the extra ',')", e);
				return bad(item, what);
			}
		}
		if ((item[nl] && !*opts) || strchr(opts, ':') == opts)
			return bad(item, "no options after the policy name");
		if (!strcmp(name, "all")) {
			if (*opts)
				return bad(item, "'all' takes no options (use --policy-options)");
			int na;
			const struct rk_policy_ops *const *all = rk_policy_list(&na);
			for (int i = 0; i < na; i++) {
				int rc = add(all[i], "", defaults, out, cap, n, item);
				if (rc)
					return rc;
			}
			continue;
		}
		const struct rk_policy_ops *ops = rk_policy_find(name);
		if (!ops) {
			fprintf(stderr, "rubick sim: --policy: unknown policy '%s'", name);
			list_registered();
			return RK_EXIT_USAGE;
		}
		int rc = add(ops, opts, defaults, out, cap, n, item);
		if (rc)
			return rc;
	}
	if (*n == 0)
		return bad(list, "no policy named");
	return 0;
}
