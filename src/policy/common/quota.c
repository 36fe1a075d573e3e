/*
 * Tenant quotas (policy.h): the "TENANT:GPUS/TENANT:GPUS" syntax of rubick's
 * quota= option, parsed in one place for the drivers (`rubick sim --quota`),
 * and what every driver applies after a policy's round so that no tenant
 * holds more than its quotas (rk_decisions_apply_quotas). No I/O: the caller
 * names the input for messages.
 */
#include "rubick/policy.h"

#include "rubick/cluster.h"

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
		e->has_gpu_quota = 0;
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

int rk_tenant_gpu_quota(const struct rk_sched_input *in, const char *tenant)
{
	for (int i = 0; in && i < in->n_quotas; i++)
		if (in->quotas[i].has_gpu_quota && !strcmp(in->quotas[i].tenant, tenant))
			return in->quotas[i].gpu_quota;
	return -1;
}

struct by_id {
	int64_t id;
	int index;
};

static int by_id_cmp(const void *a, const void *b)
{
	const struct by_id *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

static const struct rk_job *job_of(const struct rk_sched_input *in, const struct by_id *idx,
				   int64_t id)
{
	int lo = 0, hi = in->n_jobs;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (idx[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < in->n_jobs && idx[lo].id == id ? in->jobs[idx[lo].index] : NULL;
}

/*
 * Drop decisions of `q`'s tenant (its guaranteed jobs only when `guaranteed`)
 * that grow a job, last first, until the tenant's GPUs after the round fit
 * `cap`. dropped[i] marks decision i.
 */
static void fit_quota(const struct rk_sched_input *in, const struct rk_decisions *ds,
		      const struct by_id *idx, const struct rk_tenant_quota *q, int guaranteed,
		      int cap, unsigned char *dropped, struct rk_quota_drop *drops, int max_drops,
		      int *n_drops)
{
	long long held = 0;
	for (int i = 0; i < in->n_jobs; i++) { /* what the tenant holds now */
		const struct rk_job *j = in->jobs[i];
		if ((!guaranteed || j->guaranteed) && !strcmp(j->tenant, q->tenant))
			held += rk_alloc_total_gpus(&j->alloc);
	}
	for (int i = 0; i < ds->n; i++) { /* and after the round */
		const struct rk_job *j = job_of(in, idx, ds->v[i].job_id);
		if (j && !dropped[i] && (!guaranteed || j->guaranteed) && !strcmp(j->tenant, q->tenant))
			held += rk_alloc_total_gpus(&ds->v[i].alloc) - rk_alloc_total_gpus(&j->alloc);
	}
	for (int i = ds->n - 1; i >= 0 && held > cap; i--) {
		const struct rk_job *j = job_of(in, idx, ds->v[i].job_id);
		if (!j || dropped[i] || (guaranteed && !j->guaranteed) || strcmp(j->tenant, q->tenant))
			continue;
		int now = rk_alloc_total_gpus(&j->alloc), after = rk_alloc_total_gpus(&ds->v[i].alloc);
		if (after <= now)
			continue; /* shrinking or stopping only helps */
		dropped[i] = 1;
		if (*n_drops < max_drops)
			drops[*n_drops] = (struct rk_quota_drop){.job_id = j->id,
								 .guaranteed = guaranteed,
								 .quota = cap,
								 .job_gpus = after,
								 .tenant_gpus = (int)held};
		(*n_drops)++;
		held -= after - now;
	}
}

int rk_decisions_apply_quotas(const struct rk_sched_input *in, struct rk_decisions *ds,
			      const char *policy_name, struct rk_quota_drop *drops, int max_drops,
			      int *n_drops, struct rk_error *err)
{
	*n_drops = 0;
	if (!in->n_quotas || !ds->n)
		return 0;
	struct by_id *idx = malloc((size_t)(in->n_jobs ? in->n_jobs : 1) * sizeof(*idx));
	unsigned char *dropped = calloc((size_t)ds->n, 1);
	int rc = 0, n = 0;
	if (!idx || !dropped) {
		rc = rk_error_set(err, RK_ENOMEM, "quotas: out of memory");
		goto done;
	}
	for (int i = 0; i < in->n_jobs; i++)
		idx[i] = (struct by_id){in->jobs[i]->id, i};
	qsort(idx, (size_t)in->n_jobs, sizeof(*idx), by_id_cmp);
	for (int k = 0; k < in->n_quotas; k++) {
		const struct rk_tenant_quota *q = &in->quotas[k];
		if (q->has_gpu_quota && q->gpu_quota >= 0)
			fit_quota(in, ds, idx, q, 0, q->gpu_quota, dropped, drops, max_drops, &n);
		if (q->guaranteed_gpus >= 0)
			fit_quota(in, ds, idx, q, 1, q->guaranteed_gpus, dropped, drops, max_drops, &n);
	}
	*n_drops = n;
	if (!n)
		goto done;
	/* The dropped jobs keep what they hold: take their decisions out. */
	int k = 0;
	for (int i = 0; i < ds->n; i++) {
		if (dropped[i]) {
			rk_alloc_fini(&ds->v[i].alloc);
			continue;
		}
		ds->v[k++] = ds->v[i];
	}
	ds->n = k;
	struct rk_error verr;
	if (!rk_decisions_validate(in, ds, policy_name, &verr))
		goto done;
	/* Another decision took what a dropped one gave up: stop those jobs instead
	 * (a stop only frees, so the rest stays valid). */
	for (int d = 0; d < n && !rc; d++) {
		const struct rk_job *j = job_of(in, idx, d < max_drops ? drops[d].job_id : -1);
		if (!j || !j->alloc.n)
			continue;
		rc = rk_decisions_push(ds, j->id, NULL, NULL);
		drops[d].stopped = 1;
	}
	if (rc)
		rc = rk_error_set(err, rc, "quotas: out of memory");
	else
		rc = rk_decisions_validate(in, ds, policy_name, err);
done:
	free(idx);
	free(dropped);
	return rc;
}
