/*
 * Reading the events table (store.h): what GET /v1/jobs/{id}/events and
 * `rubick events` show. The scheduler writes events with
 * rkd_store_event_add (store.c); this file only reads, so it runs on the
 * read-only connections of sched_read.c.
 */
#include "daemon/store.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

static const char *nz(const char *s)
{
	return s ? s : "";
}

int rkd_store_events_get(struct rkd_store *s, int64_t job_id, int64_t after_id, int limit,
                         struct rkd_event_row **rows, int *n, struct rk_error *err)
{
	sqlite3 *db = rkd_store_handle(s);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db,
	                       "SELECT id, t_ms, kind, detail FROM events"
	                       " WHERE job_id=?1 AND id>?2 ORDER BY id LIMIT ?3",
	                       -1, &st, NULL))
		return rk_error_set(err, RK_EIO, "%s: reading events: %s", rkd_store_path(s),
		                    sqlite3_errmsg(db));
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, after_id);
	sqlite3_bind_int(st, 3, limit);
	struct rkd_event_row *v = NULL;
	int len = 0, cap = 0, rc, ret = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			int ncap = cap ? 2 * cap : 16;
			struct rkd_event_row *nv = realloc(v, (size_t)ncap * sizeof(*nv));
			if (!nv) {
				ret = rk_error_set(err, RK_ENOMEM, "events: out of memory");
				break;
			}
			v = nv;
			cap = ncap;
		}
		struct rkd_event_row *e = &v[len++];
		e->id = sqlite3_column_int64(st, 0);
		e->t_ms = sqlite3_column_int64(st, 1);
		snprintf(e->kind, sizeof(e->kind), "%s",
		         nz((const char *)sqlite3_column_text(st, 2)));
		snprintf(e->detail, sizeof(e->detail), "%s",
		         nz((const char *)sqlite3_column_text(st, 3)));
	}
	if (!ret && rc != SQLITE_DONE)
		ret = rk_error_set(err, RK_EIO, "%s: reading events: %s", rkd_store_path(s),
		                   sqlite3_errmsg(db));
	sqlite3_finalize(st);
	if (ret) {
		free(v);
		return ret;
	}
	*rows = v;
	*n = len;
	return 0;
}
