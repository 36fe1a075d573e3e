/*
 * rubickd configuration: a `key = value` file with `[tenant NAME]` sections
 * (format in docs/rubickd.8, CONFIGURATION), overridden by command-line flags.
 * Token files must not be readable by group or others.
 */
#ifndef RUBICKD_CONFIG_H
#define RUBICKD_CONFIG_H

#include "daemon/http/http.h"
#include "daemon/sched/sched.h"
#include "rubick/error.h"

#define RKD_MAX_TENANTS 256

struct rkd_config {
	char listen[256];
	char db[1024];
	char engine[32];
	char policy[64];          /* "" = the stored choice */
	char policy_options[512];
	char cluster[1024];
	int cluster_given;        /* --cluster or `cluster =` was set (else the engine's own, if any) */
	char partition[64];       /* --engine slurm: the partition ("" = Slurm's default one) */
	char state_dir[1024];     /* "" = DB + ".jobs" */
	char zoo_dir[1024];       /* "" = the bundled data/zoo */
	char url[512];            /* RUBICK_URL for jobs; "" = from listen */
	char admin_token_file[1024];
	char sync[16];            /* "full" or "normal" */
	int round_interval_ms;
	int grace_ms;
	int max_body_kb;
	int max_connections;
	/* API availability (docs/rubickd.8, LIMITS) and who may read /metrics */
	int max_connections_per_addr; /* 0 = max_connections / 4 */
	int header_timeout_s;
	int body_timeout_s;
	int metrics_public;           /* metrics_public = yes|no (default no) */
	int n_tenants;
	struct rkd_tenant_cfg tenants[RKD_MAX_TENANTS];
	char tenant_token_file[RKD_MAX_TENANTS][1024];
	/* Who jobs run as (identity.h): per tenant `user`/`group`/`allow_root`, and
	 * `job_user`/`job_group` for tenants without a user, `allow_root` for all. */
	char tenant_user[RKD_MAX_TENANTS][64];
	char tenant_group[RKD_MAX_TENANTS][64];
	int tenant_allow_root[RKD_MAX_TENANTS];
	char job_user[64], job_group[64];
	int allow_root;
};

/* Built-in defaults. */
void rkd_config_defaults(struct rkd_config *c);

/*
 * Apply the config text `text` (named `name` in messages, "FILE:LINE:COL: ...")
 * on top of *c. Unknown keys, bad values and duplicate tenants are errors.
 */
int rkd_config_parse(struct rkd_config *c, const char *text, const char *name,
		     struct rk_error *err);

/* Set one key as the config file would ("--flag" names it in messages). */
int rkd_config_set(struct rkd_config *c, const char *key, const char *value, const char *where,
		   struct rk_error *err);

/*
 * Read the admin and tenant tokens (one token on the first line of each
 * file). Refuses files readable by group or others. OUT: tokens[] (up to
 * max), *n.
 */
int rkd_config_tokens(const struct rkd_config *c, struct rkd_token *tokens, int max, int *n,
		      struct rk_error *err);

#endif
