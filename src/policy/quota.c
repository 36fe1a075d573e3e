/*
 * Guaranteed-GPU quotas as text (policy.h rk_tenant_quotas_parse): the
 * "TENANT:GPUS/TENANT:GPUS" syntax of rubick's quota= option, parsed in one
 * place for the drivers (`rubick sim --quota`). No I/O: the caller names the
 * input for messages.
 */
#include "rubick/policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int rk_tenant_quotas_parse(const char *text, const char *what, struct rk_tenant_quota **quotas,
			   int *n, struct rk_error *err)
{
	*quotas = NULL;
	*n = 0;
	if (!text || !*text)
		return rk_error_set(err, RK_EINVAL, "%s: expected TENANT:GPUS[/TENANT:GPUS...]", what);
	/* Entries are separated by '/': there are at most (number of '/') + 1. */
	int cap = 1;
	for (const char *p = text; *p; p++)
		cap += *p == '/';
	struct rk_tenant_quota *q = calloc((size_t)cap, sizeof(*q));
	if (!q)
		return rk_error_set(err, RK_ENOMEM, "%s: out of memory", what);
	int m = 0, rc = 0;
	const char *v = text;
	while (*v && !rc) {
		size_t len = strcspn(v, "/");
		const char *colon = memchr(v, ':', len);
		char num[16];
		size_t nl = colon ? len - (size_t)(colon - v) - 1 : 0;
		if (!colon || colon == v || (size_t)(colon - v) >= RK_TENANT_MAX) {
			rc = rk_error_set(err, RK_EINVAL, "%s: entry '%.*s' is not TENANT:GPUS (tenant "
					  "of 1..%d characters)", what, (int)len, v, RK_TENANT_MAX - 1);
			break;
		}
		if (nl == 0 || nl >= sizeof(num)) {
			rc = rk_error_set(err, RK_EINVAL, "%s: entry '%.*s': bad GPU count", what,
					  (int)len, v);
			break;
		}
		memcpy(num, colon + 1, nl);
		num[nl] = '\0';
		char *end;
		errno = 0;
		long g = strtol(num, &end, 10);
		if (errno || *end || end == num || g < 0 || g > 1000000) {
			rc = rk_error_set(err, RK_ERANGE, "%s: entry '%.*s': GPUs must be an integer "
					  "0..1000000", what, (int)len, v);
			break;
		}
		struct rk_tenant_quota *e = &q[m];
		memcpy(e->tenant, v, (size_t)(colon - v));
		e->tenant[colon - v] = '\0';
		e->guaranteed_gpus = (int)g;
		for (int k = 0; k < m && !rc; k++)
			if (!strcmp(q[k].tenant, e->tenant))
				rc = rk_error_set(err, RK_EINVAL, "%s: tenant '%s' has two quotas", what,
						  e->tenant);
		m++;
		v += len;
		if (*v == '/' && !v[1] && !rc)
			rc = rk_error_set(err, RK_EINVAL, "%s: empty entry after the last '/'", what);
		v += *v == '/';
	}
	if (rc) {
		free(q);
		return rc;
	}
	*quotas = q;
	*n = m;
	return RK_OK;
}
