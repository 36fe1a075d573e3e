/* rubickd configuration file and token files (see config.h). */
#include "daemon/identity/config.h"
#include "daemon/identity/trusted.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void rkd_config_defaults(struct rkd_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->listen, sizeof(c->listen), "127.0.0.1:8642");
	snprintf(c->db, sizeof(c->db), "rubickd.db");
	snprintf(c->engine, sizeof(c->engine), "local");
	snprintf(c->cluster, sizeof(c->cluster), "1x8");
	snprintf(c->sync, sizeof(c->sync), "full");
	c->round_interval_ms = 1000;
	c->grace_ms = 10000;
	c->max_body_kb = 64;
	c->max_connections = 1024;
	c->header_timeout_s = 5;
	c->body_timeout_s = 10;
	c->reserved_per_addr = 16;
	c->send_timeout_s = 10;
	c->send_min_bytes_per_s = 65536;
	c->http_threads = 4;
	c->http_workers = 64;
}

static int set_str(char *dst, size_t cap, const char *value, const char *key, const char *where,
		   struct rk_error *err)
{
	size_t n = strlen(value);
	if (n == 0 || n >= cap)
		return rk_error_set(err, RK_ERANGE, "%s: %s: length %zu is out of range [1, %zu]", where,
				    key, n, cap - 1);
	memcpy(dst, value, n + 1);
	return 0;
}

static int set_int(int *dst, const char *value, long lo, long hi, const char *key,
		   const char *where, struct rk_error *err)
{
	char *end;
	errno = 0;
	long v = strtol(value, &end, 10);
	if (!*value || *end || errno)
		return rk_error_set(err, RK_EINVAL, "%s: %s: '%s' is not an integer", where, key, value);
	if (v < lo || v > hi)
		return rk_error_set(err, RK_ERANGE, "%s: %s: %ld is out of range [%ld, %ld]", where, key,
				    v, lo, hi);
	*dst = (int)v;
	return 0;
}

static int set_bool(int *dst, const char *value, const char *key, const char *where,
		    struct rk_error *err)
{
	if (strcmp(value, "yes") && strcmp(value, "no"))
		return rk_error_set(err, RK_EINVAL, "%s: %s: '%s' is not yes or no", where, key, value);
	*dst = !strcmp(value, "yes");
	return 0;
}

int rkd_config_set(struct rkd_config *c, const char *key, const char *value, const char *where,
		   struct rk_error *err)
{
	struct {
		const char *key;
		char *dst;
		size_t cap;
	} strs[] = {
		{"listen", c->listen, sizeof(c->listen)},
		{"db", c->db, sizeof(c->db)},
		{"engine", c->engine, sizeof(c->engine)},
		{"policy", c->policy, sizeof(c->policy)},
		{"policy_options", c->policy_options, sizeof(c->policy_options)},
		{"cluster", c->cluster, sizeof(c->cluster)},
		{"partition", c->partition, sizeof(c->partition)},
		{"state_dir", c->state_dir, sizeof(c->state_dir)},
		{"zoo_dir", c->zoo_dir, sizeof(c->zoo_dir)},
		{"url", c->url, sizeof(c->url)},
		{"admin_token_file", c->admin_token_file, sizeof(c->admin_token_file)},
	};
	if (!strcmp(key, "cluster"))
		c->cluster_given = 1;
	if (!strcmp(key, "allow_root"))
		return set_bool(&c->allow_root, value, key, where, err);
	if (!strcmp(key, "job_user"))
		return set_str(c->job_user, sizeof(c->job_user), value, key, where, err);
	if (!strcmp(key, "job_group"))
		return set_str(c->job_group, sizeof(c->job_group), value, key, where, err);
	if (!strcmp(key, "sync")) {
		if (strcmp(value, "full") && strcmp(value, "normal"))
			return rk_error_set(err, RK_EINVAL, "%s: sync: '%s' is not full or normal", where,
					    value);
		return set_str(c->sync, sizeof(c->sync), value, key, where, err);
	}
	if (!strcmp(key, "metrics_public")) {
		if (strcmp(value, "yes") && strcmp(value, "no"))
			return rk_error_set(err, RK_EINVAL, "%s: metrics_public: '%s' is not yes or no",
					    where, value);
		c->metrics_public = !strcmp(value, "yes");
		return 0;
	}
	if (!strcmp(key, "run_cgroup")) {
		if (strcmp(value, "auto") && strcmp(value, "off"))
			return rk_error_set(err, RK_EINVAL, "%s: run_cgroup: '%s' is not auto or off",
					    where, value);
		c->run_cgroup_off = !strcmp(value, "off");
		return 0;
	}
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (!strcmp(key, strs[i].key))
			return set_str(strs[i].dst, strs[i].cap, value, key, where, err);
	struct {
		const char *key;
		int *dst;
		long lo, hi;
	} ints[] = {
		{"round_interval_ms", &c->round_interval_ms, 10, 3600000},
		{"grace_ms", &c->grace_ms, 0, 3600000},
		{"max_body_kb", &c->max_body_kb, 1, 65536},
		{"max_connections", &c->max_connections, 4, 65536},
		{"max_connections_per_addr", &c->max_connections_per_addr, 1, 65536},
		{"header_timeout_s", &c->header_timeout_s, 1, 600},
		{"body_timeout_s", &c->body_timeout_s, 1, 600},
		{"reserved_per_addr", &c->reserved_per_addr, 0, 4096},
		{"send_timeout_s", &c->send_timeout_s, 1, 600},
		{"send_min_bytes_per_s", &c->send_min_bytes_per_s, 1024, 1 << 30},
		{"http_threads", &c->http_threads, 1, 64},
		{"http_workers", &c->http_workers, 2, 4096},
	};
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (!strcmp(key, ints[i].key))
			return set_int(ints[i].dst, value, ints[i].lo, ints[i].hi, key, where, err);
	return rk_error_set(err, RK_EINVAL, "%s: unknown key '%s'", where, key);
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	char *e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

static int tenant_key(struct rkd_config *c, int t, const char *key, const char *value,
		      const char *where, struct rk_error *err)
{
	if (!strcmp(key, "token_file"))
		return set_str(c->tenant_token_file[t], sizeof(c->tenant_token_file[t]), value, key,
			       where, err);
	if (!strcmp(key, "gpu_quota"))
		return set_int(&c->tenants[t].gpu_quota, value, -1, 1 << 30, key, where, err);
	if (!strcmp(key, "guaranteed_gpu_quota"))
		return set_int(&c->tenants[t].guaranteed_gpu_quota, value, -1, 1 << 30, key, where, err);
	if (!strcmp(key, "user"))
		return set_str(c->tenant_user[t], sizeof(c->tenant_user[t]), value, key, where, err);
	if (!strcmp(key, "group"))
		return set_str(c->tenant_group[t], sizeof(c->tenant_group[t]), value, key, where, err);
	if (!strcmp(key, "allow_root"))
		return set_bool(&c->tenant_allow_root[t], value, key, where, err);
	if (!strcmp(key, "slurm_account"))
		return set_str(c->tenants[t].slurm_account, sizeof(c->tenants[t].slurm_account), value,
			       key, where, err);
	if (!strcmp(key, "slurm_qos"))
		return set_str(c->tenants[t].slurm_qos, sizeof(c->tenants[t].slurm_qos), value, key,
			       where, err);
	if (!strcmp(key, "slurm_time_limit"))
		return set_int(&c->tenants[t].slurm_time_limit, value, 0, 1 << 30, key, where, err);
	if (!strcmp(key, "slurm_partition"))
		return set_str(c->tenants[t].slurm_partition, sizeof(c->tenants[t].slurm_partition),
			       value, key, where, err);
	struct rkd_tenant_cfg *tc = &c->tenants[t];
	char *lists[] = {tc->slurm_allowed_partitions, tc->slurm_allowed_accounts,
			 tc->slurm_allowed_qos};
	static const char *const list_keys[] = {"slurm_allowed_partitions", "slurm_allowed_accounts",
						"slurm_allowed_qos"};
	for (int i = 0; i < 3; i++)
		if (!strcmp(key, list_keys[i]))
			return set_str(lists[i], sizeof(tc->slurm_allowed_qos), value, key, where, err);
	return rk_error_set(err, RK_EINVAL, "%s: unknown tenant key '%s' (token_file, gpu_quota, "
			    "guaranteed_gpu_quota, user, group, allow_root, slurm_account, slurm_qos, "
			    "slurm_partition, slurm_time_limit, slurm_allowed_partitions, "
			    "slurm_allowed_accounts, slurm_allowed_qos)", where, key);
}

int rkd_config_parse(struct rkd_config *c, const char *text, const char *name,
		     struct rk_error *err)
{
	char *copy = strdup(text);
	if (!copy)
		return rk_error_set(err, RK_ENOMEM, "%s: out of memory", name);
	int ret = 0, line_no = 0, tenant = -1;
	char *save = copy;
	while (save && !ret) {
		char *line = save;
		char *nl = strchr(line, '\n');
		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		line_no++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *l = trim(line);
		if (!*l)
			continue;
		char where[1200];
		snprintf(where, sizeof(where), "%s:%d:%d", name, line_no, (int)(l - line) + 1);
		if (*l == '[') {
			char tname[RK_TENANT_MAX + 1];
			int used = 0;
			if (sscanf(l, "[tenant %32[A-Za-z0-9_.-]]%n", tname, &used) != 1 || !used ||
			    l[used]) {
				ret = rk_error_set(err, RK_EINVAL, "%s: expected [tenant NAME]", where);
				break;
			}
			if (strlen(tname) >= RK_TENANT_MAX) {
				ret = rk_error_set(err, RK_ERANGE, "%s: tenant name is too long", where);
				break;
			}
			for (int i = 0; i < c->n_tenants; i++)
				if (!strcmp(c->tenants[i].name, tname))
					ret = rk_error_set(err, RK_EEXIST, "%s: tenant '%s' given twice",
							   where, tname);
			if (!ret && c->n_tenants == RKD_MAX_TENANTS)
				ret = rk_error_set(err, RK_ERANGE, "%s: more than %d tenants", where,
						   RKD_MAX_TENANTS);
			if (ret)
				break;
			tenant = c->n_tenants++;
			memcpy(c->tenants[tenant].name, tname, strlen(tname) + 1); /* length checked */
			c->tenants[tenant].gpu_quota = -1;
			c->tenants[tenant].guaranteed_gpu_quota = -1;
			c->tenant_token_file[tenant][0] = '\0';
			c->tenant_user[tenant][0] = c->tenant_group[tenant][0] = '\0';
			c->tenant_allow_root[tenant] = 0;
			continue;
		}
		char *eq = strchr(l, '=');
		if (!eq) {
			ret = rk_error_set(err, RK_EINVAL, "%s: expected KEY = VALUE", where);
			break;
		}
		*eq = '\0';
		char *key = trim(l), *value = trim(eq + 1);
		ret = tenant >= 0 ? tenant_key(c, tenant, key, value, where, err)
				  : rkd_config_set(c, key, value, where, err);
	}
	free(copy);
	return ret;
}

/* Read the first line of a token file that only its owner, rubickd's user or root, may read. */
static int read_token(const char *path, char *out, size_t cap, const char *what,
		      struct rk_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return rk_error_set(err, RK_EIO, "%s %s: %s", what, path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) || (st.st_mode & 077)) {
		close(fd);
		return rk_error_set(err, RK_EPERM,
				    "%s %s: readable by group or others (mode %03o); run chmod 600",
				    what, path, (unsigned)(st.st_mode & 0777));
	}
	/* a token another user owns or may replace is that user's choice, not the admin's */
	int ret = rkd_file_trusted(fd, path, what, err);
	if (ret) {
		close(fd);
		return ret;
	}
	char buf[256];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return rk_error_set(err, RK_EIO, "%s %s: %s", what, path, strerror(errno));
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	size_t len = strlen(buf);
	if (len < 16 || len >= cap)
		return rk_error_set(err, RK_ERANGE, "%s %s: token must be 16..%zu characters (got %zu)",
				    what, path, cap - 1, len);
	for (size_t i = 0; i < len; i++)
		if (buf[i] <= ' ' || buf[i] > '~')
			return rk_error_set(err, RK_EINVAL,
					    "%s %s: token holds a space or non-printable character",
					    what, path);
	memcpy(out, buf, len + 1);
	return 0;
}

int rkd_config_tokens(const struct rkd_config *c, struct rkd_token *tokens, int max, int *n,
		      struct rk_error *err)
{
	int k = 0, ret;
	if (!c->admin_token_file[0])
		return rk_error_set(err, RK_EINVAL,
				    "admin_token_file: required (writes need a bearer token); give"
				    " --token-file FILE or admin_token_file in the config");
	memset(&tokens[0], 0, sizeof(tokens[0]));
	if ((ret = read_token(c->admin_token_file, tokens[0].token, sizeof(tokens[0].token),
			      "admin_token_file", err)))
		return ret;
	tokens[0].admin = 1;
	k = 1;
	for (int i = 0; i < c->n_tenants; i++) {
		if (!c->tenant_token_file[i][0])
			continue;
		if (k == max)
			return rk_error_set(err, RK_ERANGE, "too many tokens");
		memset(&tokens[k], 0, sizeof(tokens[k]));
		char what[96];
		snprintf(what, sizeof(what), "tenant %s token_file", c->tenants[i].name);
		if ((ret = read_token(c->tenant_token_file[i], tokens[k].token, sizeof(tokens[k].token),
				      what, err)))
			return ret;
		snprintf(tokens[k].tenant, sizeof(tokens[k].tenant), "%s", c->tenants[i].name);
		for (int j = 0; j < k; j++)
			if (!strcmp(tokens[j].token, tokens[k].token))
				return rk_error_set(err, RK_EEXIST, "%s: the same token as another",
						    what);
		k++;
	}
	*n = k;
	return 0;
}
