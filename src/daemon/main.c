/*
 * rubickd: the rubick scheduler as a service (docs/rubickd.8). Reads the
 * configuration, the model zoo and the cluster spec, recovers its state from
 * the store, then serves the HTTP API until SIGINT or SIGTERM.
 */
#include "daemon/api/api.h"
#include "daemon/engine/engine.h"
#include "daemon/http/http.h"
#include "daemon/identity/config.h"
#include "daemon/identity/identity.h"
#include "daemon/identity/secrets.h"
#include "daemon/identity/trusted.h"
#include "daemon/sched/sched.h"
#include "rubick/cluster.h"
#include "rubick/zoo.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_TOKENS (RKD_MAX_TENANTS + 1)

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rubickd [--listen HOST:PORT|unix:PATH] [--db FILE] [--engine local|slurm]\n"
		"               [--config FILE] [--policy NAME] [--policy-options K=V,...]\n"
		"               [--cluster SPEC] [--token-file FILE] [--state-dir DIR]\n"
		"               [--zoo DIR] [--url URL] [--round-ms N] [--grace-ms N]\n"
		"               [--sync full|normal] [--job-user NAME] [--allow-root yes|no]\n\n"
		"rubickd runs the rubick scheduler as a service: an HTTP/JSON API (docs/api.md),\n"
		"state in SQLite that survives crashes, and an engine that runs the jobs.\n\n"
		"  --listen      where to serve (default 127.0.0.1:8642)\n"
		"  --db          SQLite database (default rubickd.db)\n"
		"  --engine      local (processes on this machine) or slurm\n"
		"  --config      configuration file (see rubickd(8)); flags override it\n"
		"  --policy      scheduling policy (default: the stored choice, else fifo)\n"
		"  --cluster     cluster spec, e.g. 1x8:a800 or 8x8:a800,cpus=96 (default 1x8;\n"
		"                with --engine slurm: read from Slurm, a given one is checked)\n"
		"  --partition   --engine slurm: the partition to schedule (default: Slurm's default)\n"
		"  --token-file  admin bearer token file (mode 600), required\n"
		"  --state-dir   per-job folders: plan files, logs, run records (default DB.jobs)\n"
		"  --zoo         model zoo folder (default the bundled data/zoo)\n"
		"  --url         RUBICK_URL given to jobs (default from --listen)\n"
		"  --round-ms    periodic scheduling round interval (default 1000)\n"
		"  --grace-ms    SIGUSR1 -> SIGTERM -> SIGKILL spacing (default 10000)\n"
		"  --sync        full: a reply waits for stable storage (default); normal:\n"
		"                for the OS (survives kill -9, not power loss)\n"
		"  --job-user    as root: the user jobs of tenants without `user` run as\n"
		"  --allow-root  yes: as root, such jobs may run as root (default no)\n");
}

/* Read all of `path`; `trust` (NULL: none) names a file that must be rubickd's own (trusted.h). */
static int read_text(const char *path, const char *trust, char **text, struct rk_error *err)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return rk_error_set(err, RK_EIO, "%s: %s", path, strerror(errno));
	int ret = trust ? rkd_file_trusted(fileno(f), path, trust, err) : 0;
	if (ret) {
		fclose(f);
		return ret;
	}
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	int bad = ferror(f);
	fclose(f);
	if (!buf || bad) {
		free(buf);
		return rk_error_set(err, RK_EIO, "%s: read failed", path);
	}
	buf[len] = '\0';
	*text = buf;
	return 0;
}

static int load_zoo(const char *dir, struct rk_zoo *zoo, struct rk_error *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return rk_error_set(err, RK_EIO, "--zoo %s: %s", dir, strerror(errno));
	struct dirent *e;
	int ret = 0;
	while (!ret && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 7 || strcmp(e->d_name + n - 6, ".model"))
			continue;
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		char *text;
		ret = read_text(path, NULL, &text, err);
		if (!ret) {
			ret = rk_zoo_add_text(zoo, text, strlen(text), path, err);
			free(text);
		}
	}
	closedir(d);
	return ret;
}

static const struct {
	const char *flag, *key;
} flag_keys[] = {
	{"--listen", "listen"},       {"--db", "db"},
	{"--engine", "engine"},       {"--policy", "policy"},
	{"--policy-options", "policy_options"},
	{"--cluster", "cluster"},     {"--partition", "partition"},     {"--token-file", "admin_token_file"},
	{"--state-dir", "state_dir"}, {"--zoo", "zoo_dir"},
	{"--url", "url"},             {"--round-ms", "round_interval_ms"},
	{"--grace-ms", "grace_ms"},   {"--sync", "sync"},
	{"--job-user", "job_user"},   {"--allow-root", "allow_root"},
};

static int parse_args(int argc, char **argv, struct rkd_config *c, struct rk_error *err)
{
	const char *config = NULL;
	for (int i = 1; i < argc; i += 2) /* the file first, so flags override it */
		if (!strcmp(argv[i], "--config")) {
			if (i + 1 >= argc)
				return rk_error_set(err, RK_EINVAL, "--config: needs a FILE");
			config = argv[i + 1];
		}
	if (config) {
		/*
		 * It says which token files count and who jobs run as: no other user
		 * may change it, and jobs (other users) may not read it (SECURITY);
		 * read_text also refuses one another user owns (trusted.h).
		 */
		struct stat st;
		if (stat(config, &st) == 0 && (st.st_mode & 026))
			return rk_error_set(err, RK_EPERM,
					    "--config %s: %s by others (mode %03o); run chmod 600 (or 640"
					    " for an admin group)",
					    config, (st.st_mode & 022) ? "writable" : "readable",
					    (unsigned)(st.st_mode & 0777));
		char *text;
		int ret = read_text(config, "--config", &text, err);
		if (!ret) {
			ret = rkd_config_parse(c, text, config, err);
			free(text);
		}
		if (ret)
			return ret;
	}
	for (int i = 1; i < argc; i += 2) {
		if (!strcmp(argv[i], "--config"))
			continue;
		const char *key = NULL;
		for (size_t k = 0; k < sizeof(flag_keys) / sizeof(flag_keys[0]); k++)
			if (!strcmp(argv[i], flag_keys[k].flag))
				key = flag_keys[k].key;
		if (!key)
			return rk_error_set(err, RK_EINVAL, "%s: unknown option (try --help)", argv[i]);
		if (i + 1 >= argc)
			return rk_error_set(err, RK_EINVAL, "%s: needs a value", argv[i]);
		int ret = rkd_config_set(c, key, argv[i + 1], argv[i], err);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Each connection holds a descriptor: raise the soft RLIMIT_NOFILE to the
 * hard one, and keep max_connections under what that allows (with room for
 * the database, the engine and the jobs' pipes).
 */
static void fit_connections(struct rkd_config *c)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	rlim_t room = rl.rlim_cur > 256 ? rl.rlim_cur - 128 : rl.rlim_cur / 2;
	if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)c->max_connections > room) {
		fprintf(stderr, "rubickd: max_connections %d lowered to %d (RLIMIT_NOFILE %llu)\n",
			c->max_connections, (int)room, (unsigned long long)rl.rlim_cur);
		c->max_connections = room >= 4 ? (int)room : 4;
	}
}

/* Make `path` (a buffer of `cap` bytes) absolute against the working folder; 0 or -1 (said). */
static int abs_path(char *path, size_t cap, const char *what)
{
	if (!path[0] || path[0] == '/')
		return 0;
	char cwd[PATH_MAX], buf[PATH_MAX + 1100];
	if (!getcwd(cwd, sizeof(cwd))) {
		fprintf(stderr, "rubickd: %s %s: cannot resolve against the working folder: %s\n", what,
			path, strerror(errno));
		return -1;
	}
	int n = snprintf(buf, sizeof(buf), "%s/%s", cwd, path);
	if (n < 0 || (size_t)n >= cap) {
		fprintf(stderr, "rubickd: %s %s: the absolute path is longer than %zu bytes\n", what, path,
			cap - 1);
		return -1;
	}
	memcpy(path, buf, (size_t)n + 1);
	return 0;
}

/*
 * A new database (none at --db) over an old state folder: the folder is an
 * earlier database's - rubickd(8) advises moving a corrupt one away - and its
 * job-N folders would become the new database's job N's, another tenant's log
 * and checkpoint handed over (rubickd chowns them to the new owner). Moved
 * aside whole, never deleted. 0, or -1 with the reason on stderr.
 */
static int set_state_aside(const char *db, const char *state_dir)
{
	struct stat st;
	if (lstat(db, &st) == 0 || errno != ENOENT)
		return 0; /* a database to open: the folder is its own */
	DIR *d = opendir(state_dir);
	if (!d)
		return 0; /* none yet */
	int empty = 1;
	for (struct dirent *e; empty && (e = readdir(d));)
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	if (empty)
		return 0;
	char aside[1200], stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(aside, sizeof(aside), "%s.before-%s", state_dir, stamp);
	if (rename(state_dir, aside)) {
		fprintf(stderr, "rubickd: --db %s is new but %s holds an earlier database's job"
		                " folders, and moving them to %s failed: %s\n",
		        db, state_dir, aside, strerror(errno));
		return -1;
	}
	fprintf(stderr, "rubickd: --db %s is new: the job folders of an earlier database moved"
	                " from %s to %s (a new job N must not inherit an old job N's files)\n",
	        db, state_dir, aside);
	return 0;
}

static int serve(struct rkd_config *c, char **argv)
{
	struct rk_error err;
	rk_error_clear(&err);
	int not_built = 0;
	const struct rkd_engine_ops *engine = rkd_engine_find(c->engine, &not_built);
	if (!engine) {
		fprintf(stderr, "rubickd: --engine: %s\n",
			not_built ? "the slurm engine is not built yet (see the Slurm issue); use --engine local"
				  : "unknown engine (local, slurm)");
		return 2;
	}
	static struct rkd_token tokens[MAX_TOKENS];
	int n_tokens = 0;
	if (rkd_config_tokens(c, tokens, MAX_TOKENS, &n_tokens, &err)) {
		fprintf(stderr, "rubickd: %s\n", err.msg);
		return 2;
	}
	/* Who the jobs run as, resolved once (identity.h); refused tenants are named now. */
	static struct rkd_idmap ids;
	if (rkd_idmap_init(&ids, c, &err)) {
		fprintf(stderr, "rubickd: %s\n", err.msg);
		return 2;
	}
	const struct rkd_ident *who;
	for (int i = 0; i < c->n_tenants; i++)
		if (rkd_idmap_find(&ids, c->tenants[i].name, &who, &err))
			fprintf(stderr, "rubickd: warning: submissions will be refused: %s\n", err.msg);
	if (rkd_idmap_find(&ids, "default", &who, &err))
		fprintf(stderr, "rubickd: warning: admin submissions without a tenant will be refused:"
				" %s\n", err.msg);
	struct rk_cluster cluster = {0};
	if (rk_cluster_parse(&cluster, c->cluster, "--cluster", &err)) {
		fprintf(stderr, "rubickd: %s\n", err.msg);
		return 2;
	}
	struct rk_zoo zoo;
	rk_zoo_init(&zoo);
	const char *zoo_dir = c->zoo_dir[0] ? c->zoo_dir : RK_DEFAULT_DATA_DIR "/zoo";
	char state_dir[1100], self[PATH_MAX];
	/*
	 * Absolute: job folders, logs and Slurm's WorkDir/StdOut are built from
	 * these, and Slurm resolves a relative one against the job's own folder
	 * (a relative --db once gave "rubickd.db.jobs/job-1/rubickd.db.jobs/job-1/log").
	 */
	if (abs_path(c->db, sizeof(c->db), "--db") ||
	    (c->state_dir[0] && abs_path(c->state_dir, sizeof(c->state_dir), "--state-dir")))
		return 2;
	snprintf(state_dir, sizeof(state_dir), "%s", c->state_dir[0] ? c->state_dir : c->db);
	if (!c->state_dir[0])
		strncat(state_dir, ".jobs", sizeof(state_dir) - strlen(state_dir) - 1);
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[sl > 0 ? sl : 0] = '\0';
	int rc = 1, lock_fd = -1;
	struct rkd_sched *sched = NULL;
	struct rkd_http *http = NULL;
	fit_connections(c);
	/* Files rubickd writes as root are its own; then one daemon per database, then a
	 * sound database, before anything writes to it. */
	if (rkd_db_files_trusted(c->db, state_dir, &err)) {
		fprintf(stderr, "rubickd: %s\n", err.msg);
		goto out;
	}
	if (set_state_aside(c->db, state_dir))
		goto out;
	if (rkd_store_lock(c->db, &lock_fd, &err) || rkd_store_check(c->db, &err)) {
		fprintf(stderr, "rubickd: %s\n", err.msg);
		goto out;
	}
	if (load_zoo(zoo_dir, &zoo, &err)) {
		fprintf(stderr, "rubickd: %s\n", err.msg);
		goto out;
	}
	struct rkd_sched_config sc = {
		.db_path = c->db,
		.sync = strcmp(c->sync, "normal") ? RKD_SYNC_FULL : RKD_SYNC_NORMAL,
		.cluster = &cluster,
		.cluster_spec = c->cluster,
		.policy = c->policy[0] ? c->policy : NULL,
		.policy_options = c->policy_options,
		.engine = engine,
		.engine_cfg = {.state_dir = state_dir,
			       .self_exe = self,
			       .grace_ms = c->grace_ms,
			       .partition = c->partition,
			       .no_cgroup = c->run_cgroup_off},
		.cluster_given = c->cluster_given,
		.round_interval_ms = c->round_interval_ms,
		.tenants = c->tenants,
		.n_tenants = c->n_tenants,
		.ids = &ids,
		.zoo = &zoo,
	};
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL); /* every thread inherits it; we sigwait */
	signal(SIGPIPE, SIG_IGN);
	if (rkd_sched_create(&sched, &sc, &err) || rkd_secret_db_files(c->db, &err)) {
		fprintf(stderr, "rubickd: %s\n", err.msg);
		goto out;
	}
	struct rkd_api api = {.sched = sched, .zoo = &zoo};
	struct rkd_http_config hc = {
		.listen = c->listen,
		.routes = rkd_api_routes,
		.n_routes = rkd_api_n_routes,
		.api = &api,
		.tokens = tokens,
		.n_tokens = n_tokens,
		.max_body = (size_t)c->max_body_kb * 1024,
		.max_connections = c->max_connections,
		.metrics_public = c->metrics_public,
		.max_connections_per_addr = c->max_connections_per_addr,
		.header_timeout_s = c->header_timeout_s,
		.body_timeout_s = c->body_timeout_s,
		.reserved_per_addr = c->reserved_per_addr ? c->reserved_per_addr : -1, /* 0: none */
		.send_timeout_s = c->send_timeout_s,
		.send_min_bytes_per_s = c->send_min_bytes_per_s,
		.threads = c->http_threads,
		.workers = c->http_workers,
	};
	if (rkd_http_start(&http, &hc, &err)) {
		fprintf(stderr, "rubickd: %s\n", err.msg);
		goto out;
	}
	char where[600];
	if (!strncmp(c->listen, "unix:", 5))
		snprintf(where, sizeof(where), "%s", c->listen);
	else
		snprintf(where, sizeof(where), "http://%.*s:%d",
			 (int)(strrchr(c->listen, ':') - c->listen), c->listen, rkd_http_port(http));
	/* Jobs report to --url, else to where we listen (with the port bound for :0). */
	if (rkd_sched_set_url(sched, c->url[0] ? c->url : where) || rkd_sched_start(sched, &err)) {
		fprintf(stderr, "rubickd: %s\n", err.msg[0] ? err.msg : "out of memory");
		goto out;
	}
	printf("rubickd: listening on %s\n", where);
	fflush(stdout);
	(void)argv;
	for (;;) {
		struct timespec ts = {0, 200 * 1000000L};
		int sig = sigtimedwait(&sigs, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM) {
			rc = 0;
			break;
		}
		if (rkd_sched_failed(sched)) {
			fprintf(stderr, "rubickd: stopping after a storage failure\n");
			break;
		}
	}
out:
	rkd_http_stop(http);
	rkd_sched_destroy(sched);
	rkd_store_unlock(lock_fd); /* the database is closed: another rubickd may have it */
	rk_zoo_fini(&zoo);
	rk_cluster_fini(&cluster);
	rkd_idmap_fini(&ids);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "--supervise"))
		return rkd_supervise_main(argc, argv);
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
	/* Whatever the caller's umask: the database, its key and the run records are private. */
	umask(077);
	struct rkd_config c;
	rkd_config_defaults(&c);
	struct rk_error err;
	rk_error_clear(&err);
	if (parse_args(argc, argv, &c, &err)) {
		fprintf(stderr, "rubickd: %s\n", err.msg);
		return 2;
	}
	return serve(&c, argv);
}
