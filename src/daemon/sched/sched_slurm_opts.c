/*
 * A submission's own Slurm options (issue 13: partition, account, QOS and
 * time limit per job, not only per tenant) against what its tenant allows:
 *   - slurm_partition / slurm_account / slurm_qos: when the tenant lists
 *     slurm_allowed_partitions / _accounts / _qos, the name must be one of
 *     them (or the tenant's own default); without a list any name goes to
 *     Slurm, whose association checks for the job's user (AccountingStorage-
 *     Enforce) then apply;
 *   - slurm_time_limit: at most the tenant's slurm_time_limit when it has one
 *     (the tenant's limit is a cap as well as the default).
 * Checked at submission, so a refusal is a 403 naming the field rather than a
 * job that fails at launch. docs/slurm.md, "Slurm options of a job".
 */
#include "daemon/sched/sched_internal.h"

#include <stdio.h>
#include <string.h>

/* Whether `name` is one of the comma-separated `list` (spaces around names ignored). */
static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		while (*p == ' ' || *p == ',')
			p++;
		const char *end = p;
		while (*end && *end != ',')
			end++;
		const char *last = end;
		while (last > p && last[-1] == ' ')
			last--;
		if ((size_t)(last - p) == n && n && !strncmp(p, name, n))
			return 1;
		p = end;
	}
	return 0;
}

int sched_slurm_opts_check(const struct rkd_tenant_cfg *tc, const char *tenant,
                           const struct rkd_spec *sp, struct rkd_msg *m)
{
	if (!tc)
		return 0; /* no [tenant] section: nothing to restrict */
	const char *given[] = {sp->slurm_partition, sp->slurm_account, sp->slurm_qos};
	const char *dflt[] = {tc->slurm_partition, tc->slurm_account, tc->slurm_qos};
	const char *allowed[] = {tc->slurm_allowed_partitions, tc->slurm_allowed_accounts,
	                         tc->slurm_allowed_qos};
	static const char *const field[] = {"slurm_partition", "slurm_account", "slurm_qos"};
	char msg[512];
	for (int i = 0; i < 3; i++) {
		if (!given[i][0] || !allowed[i][0] || !strcmp(given[i], dflt[i]) ||
		    in_list(allowed[i], given[i]))
			continue;
		snprintf(msg, sizeof(msg), "%s: tenant '%s' may not use '%s' (allowed: %s)",
		         field[i], tenant, given[i], allowed[i]);
		sched_set_err(m, RK_EPERM, field[i], msg);
		return RK_EPERM;
	}
	if (sp->slurm_time_limit && tc->slurm_time_limit &&
	    sp->slurm_time_limit > tc->slurm_time_limit) {
		snprintf(msg, sizeof(msg),
		         "slurm_time_limit: %d minutes exceeds tenant '%s' limit of %d minutes",
		         sp->slurm_time_limit, tenant, tc->slurm_time_limit);
		sched_set_err(m, RK_EPERM, "slurm_time_limit", msg);
		return RK_EPERM;
	}
	return 0;
}
