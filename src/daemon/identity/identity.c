/* Tenants to Unix users, and the clean job environment (identity.h). */
#include "daemon/identity/identity.h"

#include "daemon/identity/config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Resolve a user (by name) and optionally a group into *id. */
static int ident_lookup(struct rkd_ident *id, const char *user, const char *group, const char *what,
                        struct rk_error *err)
{
	char buf[16384];
	struct passwd pw, *pwp = NULL;
	int rc = getpwnam_r(user, &pw, buf, sizeof(buf), &pwp);
	if (rc || !pwp)
		return rk_error_set(err, RK_EINVAL, "%s: user '%s' %s", what, user,
		                    rc ? strerror(rc) : "does not exist (see /etc/passwd)");
	memset(id, 0, sizeof(*id));
	id->uid = pw.pw_uid;
	id->gid = pw.pw_gid;
	if (strlen(pw.pw_name) >= sizeof(id->user) || strlen(pw.pw_dir) >= sizeof(id->home))
		return rk_error_set(err, RK_ERANGE, "%s: user '%s': name or home folder too long",
		                    what, user);
	memcpy(id->user, pw.pw_name, strlen(pw.pw_name) + 1);
	memcpy(id->home, pw.pw_dir, strlen(pw.pw_dir) + 1);
	if (group && *group) {
		struct group gr, *grp = NULL;
		rc = getgrnam_r(group, &gr, buf, sizeof(buf), &grp);
		if (rc || !grp)
			return rk_error_set(err, RK_EINVAL, "%s: group '%s' %s", what, group,
			                    rc ? strerror(rc) : "does not exist (see /etc/group)");
		id->gid = gr.gr_gid;
	}
	return 0;
}

static int ident_self(struct rkd_ident *id, uid_t uid, struct rk_error *err)
{
	char buf[16384];
	struct passwd pw, *pwp = NULL;
	memset(id, 0, sizeof(*id));
	id->uid = uid;
	id->gid = uid == geteuid() ? getegid() : 0;
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &pwp) == 0 && pwp &&
	    strlen(pw.pw_name) < sizeof(id->user) && strlen(pw.pw_dir) < sizeof(id->home)) {
		memcpy(id->user, pw.pw_name, strlen(pw.pw_name) + 1);
		memcpy(id->home, pw.pw_dir, strlen(pw.pw_dir) + 1);
		return 0;
	}
	if (uid == 0) { /* no passwd entry for root (a bare container): the usual one */
		snprintf(id->user, sizeof(id->user), "root");
		snprintf(id->home, sizeof(id->home), "/root");
		return 0;
	}
	(void)err;
	snprintf(id->user, sizeof(id->user), "%u", (unsigned)uid);
	snprintf(id->home, sizeof(id->home), "/");
	return 0;
}

/* A named identity must be usable: not root unless allowed, rubickd's own when unprivileged. */
static int ident_check(const struct rkd_idmap *m, const struct rkd_ident *id, int allow_root,
                       const char *what, struct rk_error *err)
{
	if (id->uid == 0 && !allow_root)
		return rk_error_set(
		    err, RK_EPERM,
		    "%s: user '%s' is root; jobs run as root only with allow_root = yes", what,
		    id->user);
	if (!m->privileged && (id->uid != m->self.uid || id->gid != m->self.gid))
		return rk_error_set(
		    err, RK_EPERM,
		    "%s: user '%s' (uid %u, gid %u): rubickd runs as uid %u gid %u, not"
		    " root, and cannot run jobs as another user or group (docs/rubickd.8,"
		    " SECURITY)",
		    what, id->user, (unsigned)id->uid, (unsigned)id->gid, (unsigned)m->self.uid,
		    (unsigned)m->self.gid);
	return 0;
}

int rkd_idmap_init(struct rkd_idmap *m, const struct rkd_config *c, struct rk_error *err)
{
	struct rkd_idmap n = {0};
	int ret = 0;
	n.privileged = geteuid() == 0;
	n.allow_root = c->allow_root;
	if ((ret = ident_self(&n.self, geteuid(), err)) || (ret = ident_self(&n.root, 0, err)))
		return ret;
	if (c->job_group[0] && !c->job_user[0])
		return rk_error_set(err, RK_EINVAL, "job_group: needs job_user");
	if (c->job_user[0]) {
		n.has_job_user = 1;
		if ((ret = ident_lookup(&n.job_user, c->job_user, c->job_group, "job_user", err)) ||
		    (ret = ident_check(&n, &n.job_user, c->allow_root, "job_user", err)))
			return ret;
	}
	if (c->n_tenants > 0 && !(n.t = calloc((size_t)c->n_tenants, sizeof(*n.t))))
		return rk_error_set(err, RK_ENOMEM, "tenants: out of memory");
	for (int i = 0; i < c->n_tenants && !ret; i++) {
		struct rkd_idmap_entry *e = &n.t[n.n++];
		char what[128];
		snprintf(what, sizeof(what), "tenant %s: user", c->tenants[i].name);
		snprintf(e->tenant, sizeof(e->tenant), "%s", c->tenants[i].name);
		e->allow_root = c->tenant_allow_root[i] || c->allow_root;
		if (c->tenant_group[i][0] && !c->tenant_user[i][0])
			ret = rk_error_set(err, RK_EINVAL, "tenant %s: group: needs user",
			                   c->tenants[i].name);
		else if (c->tenant_user[i][0]) {
			e->has_user = 1;
			ret =
			    ident_lookup(&e->id, c->tenant_user[i], c->tenant_group[i], what, err);
			if (!ret)
				ret = ident_check(&n, &e->id, e->allow_root, what, err);
		}
	}
	if (ret) {
		free(n.t);
		return ret;
	}
	*m = n;
	return 0;
}

void rkd_idmap_fini(struct rkd_idmap *m)
{
	free(m->t);
	memset(m, 0, sizeof(*m));
}

int rkd_idmap_find(const struct rkd_idmap *m, const char *tenant, const struct rkd_ident **out,
                   struct rk_error *err)
{
	const struct rkd_idmap_entry *e = NULL;
	for (int i = 0; i < m->n; i++)
		if (!strcmp(m->t[i].tenant, tenant))
			e = &m->t[i];
	if (e && e->has_user) {
		*out = &e->id;
		return 0;
	}
	if (m->has_job_user) {
		*out = &m->job_user;
		return 0;
	}
	if (!m->privileged) {
		*out = &m->self; /* unprivileged: every job runs as rubickd's user */
		return 0;
	}
	if (e ? e->allow_root : m->allow_root) {
		*out = &m->root;
		return 0;
	}
	return rk_error_set(
	    err, RK_EPERM,
	    "tenant '%s' names no Unix user to run its jobs as and rubickd runs as"
	    " root: give user = NAME in its [tenant %s] section (or job_user = NAME;"
	    " allow_root = yes runs them as root)",
	    tenant, tenant);
}

static char *pair(const char *k, const char *v)
{
	size_t n = strlen(k) + strlen(v) + 2;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s=%s", k, v);
	return s;
}

/* Whether "K=V" entry e names the variable k (k ends at '\0' or '='). */
static int same_name(const char *e, const char *k)
{
	size_t n = strcspn(k, "=");
	return !strncmp(e, k, n) && e[n] == '=';
}

int rkd_ident_env(const struct rkd_ident *id, int slurm, char *const *extra, int n_extra,
		  char **env, int max)
{
	struct rkd_ident self;
	if (!id) {
		ident_self(&self, geteuid(), NULL);
		id = &self;
	}
	if (max < 7 + n_extra)
		return RK_ERANGE;
	/* The usual Debian defaults (login.defs ENV_PATH / ENV_SUPATH), never rubickd's PATH. */
	const char *path = id->uid == 0
				   ? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
				   : "/usr/local/bin:/usr/bin:/bin";
	const char *conf = slurm ? getenv("SLURM_CONF") : NULL;
	const char *kv[][2] = {
		{"PATH", path},        {"HOME", id->home},  {"USER", id->user},
		{"LOGNAME", id->user}, {"LANG", "C.UTF-8"}, {"SLURM_CONF", conf},
	};
	int n = 0;
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
		int replaced = !kv[i][1];
		for (int k = 0; k < n_extra && !replaced; k++)
			replaced = same_name(extra[k], kv[i][0]);
		if (replaced)
			continue;
		if (!(env[n] = pair(kv[i][0], kv[i][1])))
			goto oom;
		n++;
	}
	for (int k = 0; k < n_extra; k++) {
		if (!(env[n] = strdup(extra[k])))
			goto oom;
		n++;
	}
	env[n] = NULL;
	return n;
oom:
	while (n > 0)
		free(env[--n]);
	return RK_ENOMEM;
}
