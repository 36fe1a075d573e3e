/*
 * What the files of rubickd's store share (store.h is the interface): the
 * connection with its prepared statements and the helpers around SQLite's
 * calls. Only store.c and store_rows.c include it: with store.h they are
 * where SQLite lives, and none of its types leaves them.
 */
#ifndef RUBICKD_STORE_INTERNAL_H
#define RUBICKD_STORE_INTERNAL_H

#include "daemon/store/store.h"

#include <sqlite3.h>

/* Statements used on hot paths, prepared once at open (store.c) and reused. */
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
	ST_EVENT_TRIM,
	ST_COUNT
};

struct rkd_store {
	sqlite3 *db;
	sqlite3_stmt *st[ST_COUNT];
	char path[256];
	int version;
};

#define JOB_COLUMNS                                                                                \
	"id,name,tenant,state,spec,model_text,alloc,plan,reason,idem_key,submit_ms,"               \
	"first_start_ms,last_change_ms,end_ms,iters_total,iters_done,tput_sps,attained_gpu_s,"     \
	"req_gpus,run,restarts,stopping,exit_status,job_token,gpu_ids,live_run,hold"

/* err from the connection's last error (RK_EEXIST for a constraint), prefixed by `what`. */
int store_db_error(struct rkd_store *s, struct rk_error *err, const char *what);
/* Run SQL text (no rows). RK_EIO with SQLite's message. */
int store_exec(struct rkd_store *s, const char *sql, struct rk_error *err);
/* Run a prepared statement that returns no rows, then reset it. */
int store_step_done(struct rkd_store *s, sqlite3_stmt *st, struct rk_error *err, const char *what);

#endif
