/*
 * The SQLite store of rubickd (see store.h). The only file that includes
 * sqlite3.h. Statements used on hot paths are prepared once and reused.
 */
#include "daemon/store.h"

#include "daemon/secrets.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	/* 2: tenants' guaranteed-GPU quota (algorithms.md §1.7), -1 = none */
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

enum {
	ST_JOB_INSERT,
	ST_JOB_UPDATE,
	ST_HIST_ALLOC,
	ST_HIST_PLAN,
	ST_EVENT,
	ST_SAMPLE,
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_SAMPLE_TRIM,
	ST_COUNT
};

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
};

struct rkd_store {
	sqlite3 *db;
	sqlite3_stmt *st[ST_COUNT];
	char path[256];
	int version;
};

#define JOB_COLUMNS                                                                         \
	"id,name,tenant,state,spec,model_text,alloc,plan,reason,idem_key,submit_ms,"        \
	"first_start_ms,last_change_ms,end_ms,iters_total,iters_done,tput_sps,attained_gpu_s," \
	"req_gpus,run,restarts,stopping,exit_status,job_token,gpu_ids,live_run,hold"

static int db_error(struct rkd_store *s, struct rk_error *err, const char *what)
{
	int rc = sqlite3_errcode(s->db);
	int code = (rc == SQLITE_CONSTRAINT) ? RK_EEXIST
		   : (rc == SQLITE_NOMEM)    ? RK_ENOMEM
					     : RK_EIO;
	return rk_error_set(err, code, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

static int exec_sql(struct rkd_store *s, const char *sql, struct rk_error *err)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		rk_error_set(err, RK_EIO, "%s: %s", s->path, msg ? msg : "sqlite error");
		sqlite3_free(msg);
		return RK_EIO;
	}
	return 0;
}

/* Run a prepared statement that returns no rows, then reset it. */
static int step_done(struct rkd_store *s, sqlite3_stmt *st, struct rk_error *err,
		     const char *what)
{
	int rc = sqlite3_step(st);
	int ret = 0;
	if (rc != SQLITE_DONE)
		ret = db_error(s, err, what);
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
		return db_error(s, err, "reading schema version");
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
	int ret = exec_sql(s, "BEGIN IMMEDIATE", err);
	if (ret)
		return ret;
	for (int v = version; v < N_MIGRATIONS && !ret; v++)
		ret = exec_sql(s, migrations[v], err);
	if (!ret) {
		char sql[64];
		snprintf(sql, sizeof(sql), "PRAGMA user_version=%d", N_MIGRATIONS);
		ret = exec_sql(s, sql, err);
	}
	if (!ret)
		ret = exec_sql(s, "COMMIT", err);
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
	ret = exec_sql(s, sync == RKD_SYNC_NORMAL
			       ? "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
				 "PRAGMA foreign_keys=ON; PRAGMA wal_autocheckpoint=4000;"
			       : "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
				 "PRAGMA foreign_keys=ON; PRAGMA wal_autocheckpoint=4000;",
		       err);
	if (ret)
		goto fail;
	if (sqlite3_create_function(s->db, "rkd_sha256", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				    sql_sha256, NULL, NULL) != SQLITE_OK) {
		ret = db_error(s, err, "registering rkd_sha256");
		goto fail;
	}
	ret = migrate(s, err);
	if (ret)
		goto fail;
	for (int i = 0; i < ST_COUNT; i++) {
		if (sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
				       &s->st[i], NULL) != SQLITE_OK) {
			ret = db_error(s, err, "preparing statements");
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
	return step_done(s, s->st[ST_BEGIN], err, "begin");
}

int rkd_store_commit(struct rkd_store *s, struct rk_error *err)
{
	int ret = step_done(s, s->st[ST_COMMIT], err, "commit");
	if (ret)
		rkd_store_rollback(s);
	return ret;
}

void rkd_store_rollback(struct rkd_store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		step_done(s, s->st[ST_ROLLBACK], NULL, "rollback");
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
		return db_error(s, err, "meta");
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	int ret = sqlite3_step(st) == SQLITE_DONE ? 0 : db_error(s, err, "writing meta");
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

static const char *nz(const char *s)
{
	return s ? s : "";
}

static void bind_job(sqlite3_stmt *st, const struct rkd_job_row *r)
{
	sqlite3_bind_int64(st, 1, r->id);
	sqlite3_bind_text(st, 2, nz(r->name), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, nz(r->tenant), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, nz(r->state), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, nz(r->spec_json), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, nz(r->model_text), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, nz(r->alloc), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, nz(r->plan), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 9, nz(r->reason), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 10, nz(r->idem_key), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 11, r->submit_ms);
	sqlite3_bind_int64(st, 12, r->first_start_ms);
	sqlite3_bind_int64(st, 13, r->last_change_ms);
	sqlite3_bind_int64(st, 14, r->end_ms);
	sqlite3_bind_double(st, 15, r->iters_total);
	sqlite3_bind_double(st, 16, r->iters_done);
	sqlite3_bind_double(st, 17, r->tput_sps);
	sqlite3_bind_double(st, 18, r->attained_gpu_s);
	sqlite3_bind_int(st, 19, r->req_gpus);
	sqlite3_bind_int(st, 20, r->run);
	sqlite3_bind_int(st, 21, r->restarts);
	sqlite3_bind_int(st, 22, r->stopping);
	sqlite3_bind_int(st, 23, r->exit_status);
	sqlite3_bind_text(st, 24, nz(r->job_token), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 25, nz(r->gpu_ids), -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 26, r->live_run);
	sqlite3_bind_text(st, 27, r->hold, -1, SQLITE_STATIC);
}

int rkd_store_job_insert(struct rkd_store *s, const struct rkd_job_row *row,
			 struct rk_error *err)
{
	bind_job(s->st[ST_JOB_INSERT], row);
	return step_done(s, s->st[ST_JOB_INSERT], err, "inserting job");
}

int rkd_store_job_update(struct rkd_store *s, const struct rkd_job_row *row,
			 struct rk_error *err)
{
	bind_job(s->st[ST_JOB_UPDATE], row);
	int ret = step_done(s, s->st[ST_JOB_UPDATE], err, "updating job");
	if (!ret && sqlite3_changes(s->db) != 1)
		ret = rk_error_set(err, RK_ENOTFOUND, "%s: job %lld is not stored", s->path,
				   (long long)row->id);
	return ret;
}

static char *col_dup(sqlite3_stmt *st, int i)
{
	const char *v = (const char *)sqlite3_column_text(st, i);
	return strdup(v ? v : "");
}

/* A short column into a fixed buffer (values the daemon wrote: never longer). */
static void col_copy(sqlite3_stmt *st, int i, char *buf, size_t cap)
{
	const char *v = (const char *)sqlite3_column_text(st, i);
	snprintf(buf, cap, "%s", v ? v : "");
}

static int row_read(sqlite3_stmt *st, struct rkd_job_row *r)
{
	memset(r, 0, sizeof(*r));
	r->id = sqlite3_column_int64(st, 0);
	r->name = col_dup(st, 1);
	r->tenant = col_dup(st, 2);
	r->state = col_dup(st, 3);
	r->spec_json = col_dup(st, 4);
	r->model_text = col_dup(st, 5);
	r->alloc = col_dup(st, 6);
	r->plan = col_dup(st, 7);
	r->reason = col_dup(st, 8);
	r->idem_key = col_dup(st, 9);
	r->submit_ms = sqlite3_column_int64(st, 10);
	r->first_start_ms = sqlite3_column_int64(st, 11);
	r->last_change_ms = sqlite3_column_int64(st, 12);
	r->end_ms = sqlite3_column_int64(st, 13);
	r->iters_total = sqlite3_column_double(st, 14);
	r->iters_done = sqlite3_column_double(st, 15);
	r->tput_sps = sqlite3_column_double(st, 16);
	r->attained_gpu_s = sqlite3_column_double(st, 17);
	r->req_gpus = sqlite3_column_int(st, 18);
	r->run = sqlite3_column_int(st, 19);
	r->restarts = sqlite3_column_int(st, 20);
	r->stopping = sqlite3_column_int(st, 21);
	r->exit_status = sqlite3_column_int(st, 22);
	r->job_token = col_dup(st, 23);
	r->gpu_ids = col_dup(st, 24);
	r->live_run = sqlite3_column_int(st, 25);
	col_copy(st, 26, r->hold, sizeof(r->hold));
	if (!r->name || !r->tenant || !r->state || !r->spec_json || !r->model_text ||
	    !r->alloc || !r->plan || !r->reason || !r->idem_key || !r->job_token || !r->gpu_ids) {
		rkd_job_row_fini(r);
		return RK_ENOMEM;
	}
	return 0;
}

void rkd_job_row_fini(struct rkd_job_row *r)
{
	if (!r)
		return;
	free(r->name);
	free(r->tenant);
	free(r->state);
	free(r->spec_json);
	free(r->model_text);
	free(r->alloc);
	free(r->plan);
	free(r->reason);
	free(r->idem_key);
	free(r->job_token);
	free(r->gpu_ids);
	memset(r, 0, sizeof(*r));
}

void rkd_job_rows_free(struct rkd_job_row *rows, int n)
{
	for (int i = 0; i < n; i++)
		rkd_job_row_fini(&rows[i]);
	free(rows);
}

int rkd_store_job_get(struct rkd_store *s, int64_t id, struct rkd_job_row *row,
		      struct rk_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT " JOB_COLUMNS " FROM jobs WHERE id=?1", -1, &st,
			       NULL))
		return db_error(s, err, "reading job");
	sqlite3_bind_int64(st, 1, id);
	int rc = sqlite3_step(st);
	int ret;
	if (rc == SQLITE_ROW)
		ret = row_read(st, row);
	else if (rc == SQLITE_DONE)
		ret = rk_error_set(err, RK_ENOTFOUND, "job %lld does not exist", (long long)id);
	else
		ret = db_error(s, err, "reading job");
	sqlite3_finalize(st);
	return ret;
}

int64_t rkd_store_job_by_key(struct rkd_store *s, const char *tenant, const char *key)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT id FROM jobs WHERE tenant=?1 AND idem_key=?2", -1,
			       &st, NULL))
		return 0;
	sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	int64_t id = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return id;
}

/* Read every row of a prepared SELECT of JOB_COLUMNS; finalizes `st`. */
static int rows_collect(struct rkd_store *s, sqlite3_stmt *st, struct rkd_job_row **rows,
			int *n, struct rk_error *err)
{
	struct rkd_job_row *v = NULL;
	int len = 0, cap = 0, rc, ret = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			int ncap = cap ? 2 * cap : 16;
			struct rkd_job_row *nv = realloc(v, (size_t)ncap * sizeof(*nv));
			if (!nv) {
				ret = rk_error_set(err, RK_ENOMEM, "listing jobs: out of memory");
				break;
			}
			v = nv;
			cap = ncap;
		}
		if (row_read(st, &v[len])) {
			ret = rk_error_set(err, RK_ENOMEM, "listing jobs: out of memory");
			break;
		}
		len++;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = db_error(s, err, "listing jobs");
	sqlite3_finalize(st);
	if (ret) {
		rkd_job_rows_free(v, len);
		return ret;
	}
	*rows = v;
	*n = len;
	return 0;
}

int rkd_store_job_list(struct rkd_store *s, const struct rkd_job_filter *f,
		       struct rkd_job_row **rows, int *n, struct rk_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
			       "SELECT " JOB_COLUMNS " FROM jobs WHERE (?1 IS NULL OR state=?1)"
			       " AND (?2 IS NULL OR tenant=?2) AND (?3 = 0 OR id < ?3)"
			       " ORDER BY id DESC LIMIT ?4",
			       -1, &st, NULL))
		return db_error(s, err, "listing jobs");
	if (f->state)
		sqlite3_bind_text(st, 1, f->state, -1, SQLITE_STATIC);
	if (f->tenant)
		sqlite3_bind_text(st, 2, f->tenant, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, f->before_id);
	sqlite3_bind_int(st, 4, f->limit > 0 ? f->limit : -1);
	return rows_collect(s, st, rows, n, err);
}

int rkd_store_job_list_active(struct rkd_store *s, struct rkd_job_row **rows, int *n,
			      struct rk_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
			       "SELECT " JOB_COLUMNS " FROM jobs WHERE state IN"
			       " ('pending','running','restarting') OR live_run > 0 ORDER BY id",
			       -1, &st, NULL))
		return db_error(s, err, "loading active jobs");
	return rows_collect(s, st, rows, n, err);
}

int rkd_store_history_add(struct rkd_store *s, int64_t job_id, int64_t t_ms, int run,
			  const char *alloc, const char *plan, const char *reason,
			  struct rk_error *err)
{
	sqlite3_stmt *st = s->st[ST_HIST_ALLOC];
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, t_ms);
	sqlite3_bind_int(st, 3, run);
	sqlite3_bind_text(st, 4, nz(alloc), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, nz(reason), -1, SQLITE_STATIC);
	int ret = step_done(s, st, err, "recording allocation");
	if (ret)
		return ret;
	st = s->st[ST_HIST_PLAN];
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, t_ms);
	sqlite3_bind_text(st, 3, nz(plan), -1, SQLITE_STATIC);
	return step_done(s, st, err, "recording plan");
}

int rkd_store_history_get(struct rkd_store *s, int64_t job_id, struct rkd_hist_row **rows,
			  int *n, struct rk_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
			       "SELECT a.t_ms, a.run, a.alloc, COALESCE(p.plan,''), a.reason"
			       " FROM allocations a LEFT JOIN plans p"
			       " ON p.job_id = a.job_id AND p.seq = a.seq"
			       " WHERE a.job_id=?1 ORDER BY a.seq",
			       -1, &st, NULL))
		return db_error(s, err, "reading history");
	sqlite3_bind_int64(st, 1, job_id);
	struct rkd_hist_row *v = NULL;
	int len = 0, cap = 0, rc, ret = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			int ncap = cap ? 2 * cap : 8;
			struct rkd_hist_row *nv = realloc(v, (size_t)ncap * sizeof(*nv));
			if (!nv) {
				ret = rk_error_set(err, RK_ENOMEM, "history: out of memory");
				break;
			}
			v = nv;
			cap = ncap;
		}
		struct rkd_hist_row *h = &v[len++];
		h->t_ms = sqlite3_column_int64(st, 0);
		h->run = sqlite3_column_int(st, 1);
		snprintf(h->alloc, sizeof(h->alloc), "%s", nz((const char *)sqlite3_column_text(st, 2)));
		snprintf(h->plan, sizeof(h->plan), "%s", nz((const char *)sqlite3_column_text(st, 3)));
		snprintf(h->reason, sizeof(h->reason), "%s",
			 nz((const char *)sqlite3_column_text(st, 4)));
	}
	if (!ret && rc != SQLITE_DONE)
		ret = db_error(s, err, "reading history");
	sqlite3_finalize(st);
	if (ret) {
		free(v);
		return ret;
	}
	*rows = v;
	*n = len;
	return 0;
}

int rkd_store_sample_add(struct rkd_store *s, int64_t job_id, int64_t t_ms, int run,
			 double iters_done, double tput_sps, int gpus, const char *plan,
			 struct rk_error *err)
{
	sqlite3_stmt *st = s->st[ST_SAMPLE];
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, t_ms);
	sqlite3_bind_int(st, 3, run);
	sqlite3_bind_double(st, 4, iters_done);
	sqlite3_bind_double(st, 5, tput_sps);
	sqlite3_bind_int(st, 6, gpus);
	sqlite3_bind_text(st, 7, nz(plan), -1, SQLITE_STATIC);
	int ret = step_done(s, st, err, "recording throughput sample");
	if (ret)
		return ret;
	st = s->st[ST_SAMPLE_TRIM]; /* a bounded history: a report flood cannot grow the file */
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int(st, 2, RKD_SAMPLES_PER_JOB);
	return step_done(s, st, err, "dropping old throughput samples");
}

int rkd_store_sample_count(struct rkd_store *s, int64_t job_id)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT COUNT(*) FROM samples WHERE job_id=?1", -1, &st,
			       NULL))
		return 0;
	sqlite3_bind_int64(st, 1, job_id);
	int n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	return n;
}

int rkd_store_event_add(struct rkd_store *s, int64_t t_ms, int64_t job_id, const char *kind,
			const char *detail, struct rk_error *err)
{
	sqlite3_stmt *st = s->st[ST_EVENT];
	sqlite3_bind_int64(st, 1, t_ms);
	sqlite3_bind_int64(st, 2, job_id);
	sqlite3_bind_text(st, 3, nz(kind), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, nz(detail), -1, SQLITE_STATIC);
	return step_done(s, st, err, "recording event");
}

int rkd_store_tenant_set(struct rkd_store *s, const char *name, int gpu_quota,
			 int guaranteed_gpu_quota, struct rk_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "INSERT INTO tenants(name,gpu_quota,guaranteed_gpu_quota)"
				      " VALUES(?1,?2,?3) ON CONFLICT(name) DO UPDATE SET"
				      " gpu_quota=excluded.gpu_quota,"
				      " guaranteed_gpu_quota=excluded.guaranteed_gpu_quota",
			       -1, &st, NULL))
		return db_error(s, err, "tenants");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, gpu_quota);
	sqlite3_bind_int(st, 3, guaranteed_gpu_quota);
	int ret = sqlite3_step(st) == SQLITE_DONE ? 0 : db_error(s, err, "writing tenant");
	sqlite3_finalize(st);
	return ret;
}

int rkd_store_tenant_get(struct rkd_store *s, const char *name, int *gpu_quota,
			 int *guaranteed_gpu_quota)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "SELECT gpu_quota,guaranteed_gpu_quota FROM tenants"
				      " WHERE name=?1", -1, &st, NULL))
		return RK_EIO;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	int ret = RK_ENOTFOUND;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*gpu_quota = sqlite3_column_int(st, 0);
		*guaranteed_gpu_quota = sqlite3_column_int(st, 1);
		ret = 0;
	}
	sqlite3_finalize(st);
	return ret;
}

int rkd_store_model_params_set(struct rkd_store *s, const char *model, const double k[7],
			       int n_samples, int64_t t_ms, struct rk_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
			       "INSERT OR REPLACE INTO model_params(model,k_bwd,k_sync,k_opt,"
			       "k_os_offload,k_const,k_off,k_swap,n_samples,updated_ms)"
			       " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
			       -1, &st, NULL))
		return db_error(s, err, "model parameters");
	sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
	for (int i = 0; i < 7; i++)
		sqlite3_bind_double(st, 2 + i, k[i]);
	sqlite3_bind_int(st, 9, n_samples);
	sqlite3_bind_int64(st, 10, t_ms);
	int ret = sqlite3_step(st) == SQLITE_DONE ? 0 : db_error(s, err, "writing parameters");
	sqlite3_finalize(st);
	return ret;
}

int rkd_store_model_params_get(struct rkd_store *s, const char *model, double k[7],
			       int *n_samples)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
			       "SELECT k_bwd,k_sync,k_opt,k_os_offload,k_const,k_off,k_swap,"
			       "n_samples FROM model_params WHERE model=?1",
			       -1, &st, NULL))
		return RK_EIO;
	sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
	int ret = RK_ENOTFOUND;
	if (sqlite3_step(st) == SQLITE_ROW) {
		for (int i = 0; i < 7; i++)
			k[i] = sqlite3_column_double(st, i);
		*n_samples = sqlite3_column_int(st, 7);
		ret = 0;
	}
	sqlite3_finalize(st);
	return ret;
}

int rkd_store_job_fit_set(struct rkd_store *s, int64_t job_id, const char *state, int64_t t_ms,
			  struct rk_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO job_fits(job_id,state,t_ms)"
				      " VALUES(?1,?2,?3)", -1, &st, NULL))
		return db_error(s, err, "refit state");
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_text(st, 2, state, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, t_ms);
	int ret = sqlite3_step(st) == SQLITE_DONE ? 0 : db_error(s, err, "writing refit state");
	sqlite3_finalize(st);
	return ret;
}

int rkd_store_job_fit_get(struct rkd_store *s, int64_t job_id, char **state)
{
	sqlite3_stmt *st;
	*state = NULL;
	if (sqlite3_prepare_v2(s->db, "SELECT state FROM job_fits WHERE job_id=?1", -1, &st, NULL))
		return RK_EIO;
	sqlite3_bind_int64(st, 1, job_id);
	int ret = RK_ENOTFOUND;
	if (sqlite3_step(st) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(st, 0);
		*state = strdup(t ? t : "");
		ret = *state ? 0 : RK_ENOMEM;
	}
	sqlite3_finalize(st);
	return ret;
}

struct sqlite3 *rkd_store_handle(struct rkd_store *s)
{
	return s->db;
}

const char *rkd_store_path(const struct rkd_store *s)
{
	return s->path;
}
