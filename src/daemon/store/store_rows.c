/*
 * The rows of rubickd's store (store.h): jobs, their allocation and plan
 * history, throughput samples, events, tenants, fitted model parameters and
 * refit states. The connection, the schema and the prepared statements are
 * store.c's (store_internal.h).
 */
#include "daemon/store/store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int rkd_store_job_insert(struct rkd_store *s, const struct rkd_job_row *row, struct rk_error *err)
{
	bind_job(s->st[ST_JOB_INSERT], row);
	return store_step_done(s, s->st[ST_JOB_INSERT], err, "inserting job");
}

int rkd_store_job_update(struct rkd_store *s, const struct rkd_job_row *row, struct rk_error *err)
{
	bind_job(s->st[ST_JOB_UPDATE], row);
	int ret = store_step_done(s, s->st[ST_JOB_UPDATE], err, "updating job");
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
	if (!r->name || !r->tenant || !r->state || !r->spec_json || !r->model_text || !r->alloc ||
	    !r->plan || !r->reason || !r->idem_key || !r->job_token || !r->gpu_ids) {
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
		return store_db_error(s, err, "reading job");
	sqlite3_bind_int64(st, 1, id);
	int rc = sqlite3_step(st);
	int ret;
	if (rc == SQLITE_ROW)
		ret = row_read(st, row);
	else if (rc == SQLITE_DONE)
		ret = rk_error_set(err, RK_ENOTFOUND, "job %lld does not exist", (long long)id);
	else
		ret = store_db_error(s, err, "reading job");
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
static int rows_collect(struct rkd_store *s, sqlite3_stmt *st, struct rkd_job_row **rows, int *n,
                        struct rk_error *err)
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
		ret = store_db_error(s, err, "listing jobs");
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
		return store_db_error(s, err, "listing jobs");
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
		return store_db_error(s, err, "loading active jobs");
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
	int ret = store_step_done(s, st, err, "recording allocation");
	if (ret)
		return ret;
	st = s->st[ST_HIST_PLAN];
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int64(st, 2, t_ms);
	sqlite3_bind_text(st, 3, nz(plan), -1, SQLITE_STATIC);
	return store_step_done(s, st, err, "recording plan");
}

int rkd_store_history_get(struct rkd_store *s, int64_t job_id, struct rkd_hist_row **rows, int *n,
                          struct rk_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT a.t_ms, a.run, a.alloc, COALESCE(p.plan,''), a.reason"
	                       " FROM allocations a LEFT JOIN plans p"
	                       " ON p.job_id = a.job_id AND p.seq = a.seq"
	                       " WHERE a.job_id=?1 ORDER BY a.seq",
	                       -1, &st, NULL))
		return store_db_error(s, err, "reading history");
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
		snprintf(h->alloc, sizeof(h->alloc), "%s",
		         nz((const char *)sqlite3_column_text(st, 2)));
		snprintf(h->plan, sizeof(h->plan), "%s",
		         nz((const char *)sqlite3_column_text(st, 3)));
		snprintf(h->reason, sizeof(h->reason), "%s",
		         nz((const char *)sqlite3_column_text(st, 4)));
	}
	if (!ret && rc != SQLITE_DONE)
		ret = store_db_error(s, err, "reading history");
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
	int ret = store_step_done(s, st, err, "recording throughput sample");
	if (ret)
		return ret;
	st = s->st[ST_SAMPLE_TRIM]; /* a bounded history: a report flood cannot grow the file */
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int(st, 2, RKD_SAMPLES_PER_JOB);
	return store_step_done(s, st, err, "dropping old throughput samples");
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
	int ret = store_step_done(s, st, err, "recording event");
	if (ret)
		return ret;
	st = s->st[ST_EVENT_TRIM]; /* bounded: a flood of changes cannot grow the file */
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_int(st, 2, RKD_EVENTS_PER_JOB - 1);
	return store_step_done(s, st, err, "dropping old events");
}

int rkd_store_tenant_set(struct rkd_store *s, const char *name, int gpu_quota,
                         int guaranteed_gpu_quota, struct rk_error *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	                       "INSERT INTO tenants(name,gpu_quota,guaranteed_gpu_quota)"
	                       " VALUES(?1,?2,?3) ON CONFLICT(name) DO UPDATE SET"
	                       " gpu_quota=excluded.gpu_quota,"
	                       " guaranteed_gpu_quota=excluded.guaranteed_gpu_quota",
	                       -1, &st, NULL))
		return store_db_error(s, err, "tenants");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, gpu_quota);
	sqlite3_bind_int(st, 3, guaranteed_gpu_quota);
	int ret = sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_error(s, err, "writing tenant");
	sqlite3_finalize(st);
	return ret;
}

int rkd_store_tenant_get(struct rkd_store *s, const char *name, int *gpu_quota,
                         int *guaranteed_gpu_quota)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT gpu_quota,guaranteed_gpu_quota FROM tenants"
	                       " WHERE name=?1",
	                       -1, &st, NULL))
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
		return store_db_error(s, err, "model parameters");
	sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
	for (int i = 0; i < 7; i++)
		sqlite3_bind_double(st, 2 + i, k[i]);
	sqlite3_bind_int(st, 9, n_samples);
	sqlite3_bind_int64(st, 10, t_ms);
	int ret =
	    sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_error(s, err, "writing parameters");
	sqlite3_finalize(st);
	return ret;
}

int rkd_store_model_params_get(struct rkd_store *s, const char *model, double k[7], int *n_samples)
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
	if (sqlite3_prepare_v2(s->db,
	                       "INSERT OR REPLACE INTO job_fits(job_id,state,t_ms)"
	                       " VALUES(?1,?2,?3)",
	                       -1, &st, NULL))
		return store_db_error(s, err, "refit state");
	sqlite3_bind_int64(st, 1, job_id);
	sqlite3_bind_text(st, 2, state, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, t_ms);
	int ret =
	    sqlite3_step(st) == SQLITE_DONE ? 0 : store_db_error(s, err, "writing refit state");
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

/* What GET /v1/jobs/{id}/events shows; run on the read-only connections of sched_read.c. */
int rkd_store_events_get(struct rkd_store *s, int64_t job_id, int64_t after_id, int limit,
                         struct rkd_event_row **rows, int *n, struct rk_error *err)
{
	sqlite3 *db = s->db;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db,
	                       "SELECT id, t_ms, kind, detail FROM events"
	                       " WHERE job_id=?1 AND id>?2 ORDER BY id LIMIT ?3",
	                       -1, &st, NULL))
		return rk_error_set(err, RK_EIO, "%s: reading events: %s", s->path,
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
		ret = rk_error_set(err, RK_EIO, "%s: reading events: %s", s->path,
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
