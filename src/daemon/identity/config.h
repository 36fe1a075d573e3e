/*
 * rubickd configuration: a `key = value` file with `[tenant NAME]` sections
 * (format in docs/rubickd.8, CONFIGURATION), overridden by command-line flags.
 * Token files must not be readable by group or others. The tokens read from
 * them (which the HTTP server checks) and the tenant sections (which the
 * scheduler enforces) are typed here, so identity/ includes nothing of the
 * services that use them.
 */
#ifndef RUBICKD_CONFIG_H
#define RUBICKD_CONFIG_H

#include "rubick/error.h"
#include "rubick/job.h"

#define RKD_MAX_TENANTS 256

/* One bearer token: a tenant's, or the admin's (tenant ""). */
struct rkd_token {
	char token[128];
	char tenant[RK_TENANT_MAX];
	int admin;
};

/* A [tenant NAME] section: what the scheduler enforces for the tenant's jobs. */
struct rkd_tenant_cfg {
	char name[RK_TENANT_MAX];
	int gpu_quota; /* -1 = unlimited: GPUs all of a tenant's active jobs may request */
	/*
	 * -1 = none: GPUs the tenant's active guaranteed jobs may request together
	 * (docs/references.md §1.7); best-effort jobs do not count. Rounds get it in
	 * rk_sched_input.quotas.
	 */
	int guaranteed_gpu_quota;
	/* --engine slurm: the tenant's jobs' Slurm account, QOS ("" = Slurm's default) and
	 * time limit in minutes (0 = the partition's) */
	char slurm_account[64], slurm_qos[64], slurm_partition[64];
	int slurm_time_limit;
	/*
	 * What a submission may name instead (comma lists; "" = any name, left to
	 * Slurm's own checks for the job's user); a submission's time limit may
	 * not exceed slurm_time_limit (sched_slurm_opts.c, docs/slurm.md).
	 */
	char slurm_allowed_partitions[256], slurm_allowed_accounts[256], slurm_allowed_qos[256];
};

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
	/* http_guard.h: the admin's and reports' connections beyond per_addr; a reply's send deadline */
	int reserved_per_addr;
	int send_timeout_s;
	int send_min_bytes_per_s;
	int http_threads;             /* http.h: event threads and request workers */
	int http_workers;
	int metrics_public;           /* metrics_public = yes|no (default no) */
	int run_cgroup_off;           /* run_cgroup = auto|off (default auto; engine/local/contain.h) */
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
 * file). Refuses files readable by group or others, and files another
 * user owns or may replace (trusted.h). OUT: tokens[] (up to max), *n.
 */
int rkd_config_tokens(const struct rkd_config *c, struct rkd_token *tokens, int max, int *n,
		      struct rk_error *err);

#endif
