/*
 * The SQLite store of rubickd (see store.h): the connection, the schema and
 * its migrations, transactions, the meta table and the start-up integrity
 * check. The rows (jobs, history, samples, events, tenants, models) are in
 * store_rows.c. SQLite is behind store.h in these two files and
 * store_internal.h, which they share; they are split by responsibility
 * because together they passed the ~800-line mark. Statements used on hot
 * paths are prepared once here and reused.
 */
#include "daemon/store/store_internal.h"

#include "daemon/identity/secrets.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Schema migrations, applied in order; PRAGMA user_version holds how many ran.
 * Never edit a released step: append a new one.
 */
static const char *const migrations[] = {
	/* 1: the initial schema */
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE tenants(name TEXT PRIMARY KEY, gpu_quota INTEGER NOT NULL);"
	"CREATE TABLE jobs(id INTEGER PRIMARY KEY, name TEXT NOT NULL, tenant TEXT NOT NULL,"
	" state TEXT NOT NULL, spec TEXT NOT NULL, model_text TEXT NOT NULL,"
	" alloc TEXT NOT NULL DEFAULT '', plan TEXT NOT NULL DEFAULT '',"
	" reason TEXT NOT NULL DEFAULT '', idem_key TEXT NOT NULL DEFAULT '',"
	" job_token TEXT NOT NULL DEFAULT '', gpu_ids TEXT NOT NULL DEFAULT '',"
	" live_run INTEGER NOT NULL DEFAULT 0,"
	" submit_ms INTEGER NOT NULL, first_start_ms INTEGER NOT NULL DEFAULT -1,"
	" last_change_ms INTEGER NOT NULL DEFAULT 0, end_ms INTEGER NOT NULL DEFAULT -1,"
	" iters_total REAL NOT NULL, iters_done REAL NOT NULL DEFAULT 0,"
	" tput_sps REAL NOT NULL DEFAULT 0, attained_gpu_s REAL NOT NULL DEFAULT 0,"
	" req_gpus INTEGER NOT NULL, run INTEGER NOT NULL DEFAULT 0,"
	" restarts INTEGER NOT NULL DEFAULT 0, stopping INTEGER NOT NULL DEFAULT 0,"
	" exit_status INTEGER NOT NULL DEFAULT -1);"
	"CREATE INDEX jobs_state ON jobs(state);"
	"CREATE INDEX jobs_tenant ON jobs(tenant);"
	"CREATE UNIQUE INDEX jobs_idem ON jobs(tenant, idem_key) WHERE idem_key <> '';"
	"CREATE TABLE allocations(job_id INTEGER NOT NULL REFERENCES jobs(id), seq INTEGER NOT NULL,"
	" t_ms INTEGER NOT NULL, run INTEGER NOT NULL, alloc TEXT NOT NULL, reason TEXT NOT NULL,"
	" PRIMARY KEY(job_id, seq));"
	"CREATE TABLE plans(job_id INTEGER NOT NULL REFERENCES jobs(id), seq INTEGER NOT NULL,"
	" t_ms INTEGER NOT NULL, plan TEXT NOT NULL, PRIMARY KEY(job_id, seq));"
	"CREATE TABLE samples(job_id INTEGER NOT NULL REFERENCES jobs(id), t_ms INTEGER NOT NULL,"
	" run INTEGER NOT NULL, iters_done REAL NOT NULL, tput_sps REAL NOT NULL,"
	" gpus INTEGER NOT NULL, plan TEXT NOT NULL);"
	"CREATE INDEX samples_job ON samples(job_id);"
	"CREATE TABLE model_params(model TEXT PRIMARY KEY, k_bwd REAL, k_sync REAL, k_opt REAL,"
	" k_os_offload REAL, k_const REAL, k_off REAL, k_swap REAL,"
	" n_samples INTEGER NOT NULL, updated_ms INTEGER NOT NULL);"
	"CREATE TABLE events(id INTEGER PRIMARY KEY AUTOINCREMENT, t_ms INTEGER NOT NULL,"
	" job_id INTEGER NOT NULL, kind TEXT NOT NULL, detail TEXT NOT NULL);"
	"CREATE INDEX events_job ON events(job_id);",
	/* 2: tenants' guaranteed-GPU quota (docs/references.md §1.7), -1 = none */
	"ALTER TABLE tenants ADD COLUMN guaranteed_gpu_quota INTEGER NOT NULL DEFAULT -1;",
	/* 3: a job's online-refit state (refit.c), so that it survives a restart */
	"CREATE TABLE job_fits(job_id INTEGER PRIMARY KEY REFERENCES jobs(id),"
	" state TEXT NOT NULL, t_ms INTEGER NOT NULL);",
	/* 4: job tokens only as their SHA-256 (secrets.h); old plaintext ones had 32 digits */
	"UPDATE jobs SET job_token = rkd_sha256(job_token)"
	" WHERE job_token <> '' AND length(job_token) <> 64;",
	/* 5: holds ('' none, 'user', 'admin'; sched_hold.c) */
	"ALTER TABLE jobs ADD COLUMN hold TEXT NOT NULL DEFAULT '';",
};
#define N_MIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

static const char *const stmt_sql[ST_COUNT] = {
	[ST_JOB_INSERT] =
		"INSERT INTO jobs(id,name,tenant,state,spec,model_text,alloc,plan,reason,idem_key,"
		"submit_ms,first_start_ms,last_change_ms,end_ms,iters_total,iters_done,tput_sps,"
		"attained_gpu_s,req_gpus,run,restarts,stopping,exit_status,job_token,gpu_ids,live_run,"
		"hold)"
		" VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24,?25,?26,"
		"?27)",
	[ST_JOB_UPDATE] =
		"UPDATE jobs SET state=?4,alloc=?7,plan=?8,reason=?9,first_start_ms=?12,"
		"last_change_ms=?13,end_ms=?14,iters_done=?16,tput_sps=?17,attained_gpu_s=?18,"
		"req_gpus=?19,run=?20,restarts=?21,stopping=?22,exit_status=?23,spec=?5,gpu_ids=?25,live_run=?26"
		",hold=?27 WHERE id=?1",
	[ST_HIST_ALLOC] = "INSERT INTO allocations(job_id,seq,t_ms,run,alloc,reason) VALUES(?1,"
			  "(SELECT COUNT(*) FROM allocations WHERE job_id=?1),?2,?3,?4,?5)",
	[ST_HIST_PLAN] = "INSERT INTO plans(job_id,seq,t_ms,plan) VALUES(?1,"
			 "(SELECT COUNT(*) FROM plans WHERE job_id=?1),?2,?3)",
	[ST_EVENT] = "INSERT INTO events(t_ms,job_id,kind,detail) VALUES(?1,?2,?3,?4)",
	[ST_SAMPLE] = "INSERT INTO samples(job_id,t_ms,run,iters_done,tput_sps,gpus,plan)"
		      " VALUES(?1,?2,?3,?4,?5,?6,?7)",
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	/* the oldest samples of a job beyond its newest RKD_SAMPLES_PER_JOB (?2) */
	[ST_SAMPLE_TRIM] = "DELETE FROM samples WHERE job_id=?1 AND rowid <= (SELECT rowid FROM"
			   " samples WHERE job_id=?1 ORDER BY rowid DESC LIMIT 1 OFFSET ?2)",
	/* likewise the events of a job beyond its newest RKD_EVENTS_PER_JOB, but its first */
	[ST_EVENT_TRIM] = "DELETE FROM events WHERE job_id=?1 AND id <= (SELECT id FROM events"
			  " WHERE job_id=?1 ORDER BY id DESC LIMIT 1 OFFSET ?2) AND id > (SELECT"
			  " MIN(id) FROM events WHERE job_id=?1)",
};

int store_db_error(struct rkd_store *s, struct rk_error *err, const char *what)
{
	int rc = sqlite3_errcode(s->db);
	int code = (rc == SQLITE_CONSTRAINT) ? RK_EEXIST
		   : (rc == SQLITE_NOMEM)    ? RK_ENOMEM
					     : RK_EIO;
	return rk_error_set(err, code, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

int store_exec(struct rkd_store *s, const char *sql, struct rk_error *err)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		rk_error_set(err, RK_EIO, "%s: %s", s->path, msg ? msg : "sqlite error");
		sqlite3_free(msg);
		return RK_EIO;
	}
	return 0;
}

int store_step_done(struct rkd_store *s, sqlite3_stmt *st, struct rk_error *err, const char *what)
{
	int rc = sqlite3_step(st);
	int ret = 0;
	if (rc != SQLITE_DONE)
		ret = store_db_error(s, err, what);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return ret;
}

/* rkd_sha256(TEXT): the hex SHA-256 that migration 4 stores instead of a token. */
static void sql_sha256(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const unsigned char *t = argc == 1 ? sqlite3_value_text(argv[0]) : NULL;
	char h[RKD_TOKEN_HEX];
	rkd_token_hash(t ? (const char *)t : "", h);
	sqlite3_result_text(ctx, h, -1, SQLITE_TRANSIENT);
}

static int migrate(struct rkd_store *s, struct rk_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return store_db_error(s, err, "reading schema version");
	int version = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	if (version > N_MIGRATIONS)
		return rk_error_set(err, RK_EINVAL,
				    "%s: schema version %d is newer than this rubickd knows (%d)",
				    s->path, version, N_MIGRATIONS);
	if (version == N_MIGRATIONS) {
		s->version = version;
		return 0;
	}
	int ret = store_exec(s, "BEGIN IMMEDIATE", err);
	if (ret)
		return ret;
	for (int v = version; v < N_MIGRATIONS && !ret; v++)
		ret = store_exec(s, migrations[v], err);
	if (!ret) {
		char sql[64];
		snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", N_MIGRATIONS);
		ret = store_exec(s, sql, err);
	}
	if (!ret)
		ret = store_exec(s, "COMMIT", err);
	if (ret) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return rk_error_prefix(err, "migrating schema from version %d", version);
	}
	s->version = N_MIGRATIONS;
	return 0;
}

int rkd_store_open(struct rkd_store **out, const char *path, enum rkd_sync sync,
		   struct rk_error *err)
{
	struct rkd_store *s = calloc(1, sizeof(*s));
	if (!s)
		return rk_error_set(err, RK_ENOMEM, "%s: out of memory", path);
	snprintf(s->path, sizeof(s->path), "%s", path);
	int ret;
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		ret = rk_error_set(err, RK_EIO, "%s: cannot open database: %s", path,
				   s->db ? sqlite3_errmsg(s->db) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 5000);
	/*
	 * WAL: readers never block the writer and a commit appends to one file.
	 * synchronous=FULL: the WAL is fsynced at every commit, so an acknowledged
	 * submission survives power loss, not only a process crash. The cost, one
	 * fsync per commit (9 ms on the CI disk), is shared by every submission of
	 * a group commit (see sched.c). synchronous=NORMAL with WAL fsyncs only at
	 * checkpoints: a commit is in the OS page cache when it returns, so it
	 * survives any crash or kill -9 of rubickd, and the database stays
	 * consistent on power loss but may lose the last commits — the operator's
	 * choice (`sync = normal`) for disks with slow fsync.
	 */
	ret = store_exec(s,
	                 sync == RKD_SYNC_NORMAL
	                     ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
	                       "PRAGMA foreign_keys=ON; PRAGMA wal_autocheckpoint=4000;"
	                     : "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
	                       "PRAGMA foreign_keys=ON; PRAGMA wal_autocheckpoint=4000;",
	                 err);
	if (ret)
		goto fail;
	if (sqlite3_create_function(s->db, "rkd_sha256", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				    sql_sha256, NULL, NULL) != SQLITE_OK) {
		ret = store_db_error(s, err, "registering rkd_sha256");
		goto fail;
	}
	ret = migrate(s, err);
	if (ret)
		goto fail;
	for (int i = 0; i < ST_COUNT; i++) {
		if (sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
				       &s->st[i], NULL) != SQLITE_OK) {
			ret = store_db_error(s, err, "preparing statements");
			goto fail;
		}
	}
	*out = s;
	return 0;
fail:
	rkd_store_close(s);
	return ret;
}

int rkd_store_open_reader(struct rkd_store **out, const char *path, struct rk_error *err)
{
	struct rkd_store *s = calloc(1, sizeof(*s));
	if (!s)
		return rk_error_set(err, RK_ENOMEM, "%s: out of memory", path);
	snprintf(s->path, sizeof(s->path), "%s", path);
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		int ret = rk_error_set(err, RK_EIO, "%s: cannot open database for reading: %s", path,
				       s->db ? sqlite3_errmsg(s->db) : "out of memory");
		rkd_store_close(s);
		return ret;
	}
	sqlite3_busy_timeout(s->db, 5000);
	s->version = N_MIGRATIONS;
	*out = s;
	return 0;
}

void rkd_store_close(struct rkd_store *s)
{
	if (!s)
		return;
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(s->st[i]);
	sqlite3_close(s->db);
	free(s);
}

int rkd_store_schema_version(struct rkd_store *s)
{
	return s->version;
}

int rkd_store_begin(struct rkd_store *s, struct rk_error *err)
{
	return store_step_done(s, s->st[ST_BEGIN], err, "begin");
}

int rkd_store_commit(struct rkd_store *s, struct rk_error *err)
{
	int ret = store_step_done(s, s->st[ST_COMMIT], err, "commit");
	if (ret)
		rkd_store_rollback(s);
	return ret;
}

void rkd_store_rollback(struct rkd_store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		store_step_done(s, s->st[ST_ROLLBACK], NULL, "rollback");
}

int rkd_store_meta_get(struct rkd_store *s, const char *key, char *buf, size_t cap)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key=?1", -1, &st, NULL))
		return RK_EIO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	int ret = RK_ENOTFOUND;
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 0);
		size_t n = strlen(v ? v : "");
		if (n >= cap) {
			ret = RK_ERANGE;
		} else {
			memcpy(buf, v ? v : "", n + 1);
			ret = 0;
		}
	}
	sqlite3_finalize(st);
	return ret;
}

int rkd_store_meta_set(struct rkd_store *s, const char *key, const char *value,
		       struct rk_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "INSERT INTO meta(key,value) VALUES(?1,?2)"
				      " ON CONFLICT(key) DO UPDATE SET value=excluded.value",
			       -1, &st, NULL))
		return store_db_error(s, err, "meta");
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	int ret = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_error(s, err, "writing meta");
	sqlite3_finalize(st);
	return ret;
}

int64_t rkd_store_max_job_id(struct rkd_store *s)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT COALESCE(MAX(id),0) FROM jobs", -1, &st, NULL))
		return 0;
	int64_t id = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return id;
}

int rkd_store_check(const char *path, struct rk_error *err)
{
	struct stat st;
	if (stat(path, &st) && errno == ENOENT)
		return 0; /* a new database: created by rkd_store_open */
	/*
	 * A database closed cleanly has no -wal: read it as immutable, which
	 * creates no -wal or -shm and takes no lock. One left by a crash is read
	 * with its WAL, without the checkpoint a last close would run.
	 */
	char wal[1100], uri[3400];
	snprintf(wal, sizeof(wal), "%s-wal", path);
	int has_wal = access(wal, F_OK) == 0;
	size_t u = (size_t)snprintf(uri, sizeof(uri), "file:");
	for (const char *p = path; *p && u + 4 < sizeof(uri); p++) {
		if (*p == '%' || *p == '?' || *p == '#')
			u +=
			    (size_t)snprintf(uri + u, sizeof(uri) - u, "%%%02X", (unsigned char)*p);
		else
			uri[u++] = *p;
	}
	snprintf(uri + u, sizeof(uri) - u, "?immutable=1");
	sqlite3 *db = NULL;
	int rc = has_wal
	             ? sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL)
	             : sqlite3_open_v2(uri, &db,
	                               SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
	                               NULL);
	if (rc == SQLITE_OK && has_wal)
		rc = sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	if (rc != SQLITE_OK) {
		int ret = rk_error_set(err, RK_EIO, "--db %s: cannot open the database: %s", path,
		                       db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return ret;
	}
	sqlite3_busy_timeout(db, 5000);
	sqlite3_stmt *q = NULL;
	char first[300] = "";
	rc = sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &q, NULL);
	int rows = 0, ok = rc == SQLITE_OK;
	while (ok && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(q, 0);
		if (!rows++)
			snprintf(first, sizeof(first), "%s", t ? t : "");
	}
	if (rc != SQLITE_DONE && !first[0]) {
		snprintf(first, sizeof(first), "%s", sqlite3_errmsg(db));
		ok = 0;
	}
	sqlite3_finalize(q);
	sqlite3_close(db);
	if (ok && rows == 1 && !strcmp(first, "ok"))
		return 0;
	return rk_error_set(err, RK_EIO,
	                    "--db %s: the database is corrupt (PRAGMA quick_check: %s%s); refusing"
	                    " to start and writing nothing: restore it from a backup, or move it"
	                    " away to start empty",
	                    path, first, rows > 1 ? ", ..." : "");
}
