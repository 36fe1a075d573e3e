/*
 * Who a job runs as (docs/rubickd.8, SECURITY): every tenant's jobs run as
 * the Unix user its [tenant] section names (`user`, `group`), jobs of tenants
 * that name none as `job_user`; when rubickd runs as root, a job with neither
 * never runs as root unless its tenant (or the whole file) says
 * `allow_root = yes`, and its submission is refused instead. When rubickd
 * runs unprivileged, every job runs as rubickd's own user.
 *
 * Also the job environment both engines build from scratch (never rubickd's
 * own variables) from the identity.
 */
#ifndef RUBICKD_IDENTITY_H
#define RUBICKD_IDENTITY_H

#include "rubick/error.h"

#include <stddef.h>
#include <sys/types.h>

struct rkd_config;

/* A Unix identity a job runs as, resolved from the passwd and group files at start-up. */
struct rkd_ident {
	uid_t uid;
	gid_t gid;       /* primary group: `group`, else the user's own */
	char user[64];   /* login name: USER, LOGNAME, and its supplementary groups */
	char home[1024]; /* HOME */
};

struct rkd_idmap_entry {
	char tenant[64];
	int has_user;   /* the section names a user */
	int allow_root; /* allow_root = yes in the section */
	struct rkd_ident id;
};

struct rkd_idmap {
	struct rkd_idmap_entry *t;
	int n;
	int privileged;   /* rubickd runs as root: identities are enforced */
	int has_job_user; /* job_user given */
	struct rkd_ident job_user;
	int allow_root;        /* top-level allow_root = yes */
	struct rkd_ident self; /* rubickd's own user */
	struct rkd_ident root; /* uid 0, for allow_root */
};

/*
 * Resolve every user and group the config names. Errors name the tenant and
 * the key: an unknown user or group, `user = root` without allow_root, or a
 * user other than rubickd's own while rubickd is unprivileged (it could not
 * switch to it). OUT: *m (rkd_idmap_fini frees it).
 */
int rkd_idmap_init(struct rkd_idmap *m, const struct rkd_config *c, struct rk_error *err);
void rkd_idmap_fini(struct rkd_idmap *m);

/*
 * The identity the jobs of `tenant` run as (borrowed from m). RK_EPERM with a
 * message naming the tenant when rubickd runs as root and the tenant has no
 * user, no job_user is given and root is not allowed.
 */
int rkd_idmap_find(const struct rkd_idmap *m, const char *tenant, const struct rkd_ident **out,
                   struct rk_error *err);

/*
 * The base environment of a job run as `id` (NULL = rubickd's own user):
 * PATH (a fixed default), HOME, USER, LOGNAME, LANG (C.UTF-8) and, with
 * slurm = 1, SLURM_CONF when rubickd has it (the job's srun and squeue need
 * the same cluster), then the submission's `extra` "K=V" entries, which
 * replace a default of the same name. The engines append RUBICK_* and
 * CUDA_VISIBLE_DEVICES. OUT: env[] (NULL-terminated malloc'd "K=V" strings,
 * the caller frees each; max >= 7 + n_extra), returns how many, or
 * RK_ENOMEM / RK_ERANGE.
 */
int rkd_ident_env(const struct rkd_ident *id, int slurm, char *const *extra, int n_extra,
		  char **env, int max);

#endif
