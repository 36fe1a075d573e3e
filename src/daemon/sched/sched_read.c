/*
 * Reads of jobs (GET /v1/jobs/{id}, GET /v1/jobs) from the committed state,
 * on the request thread, through a small pool of read-only SQLite
 * connections: a listing never waits for, nor delays, the scheduler thread
 * (WAL readers take no lock a writer waits on). Every
 * acknowledged write is committed before its reply, so a reader sees it.
 *
 * Who sees what: the admin every job, a tenant token its tenant's jobs only.
 * Another tenant's job reads as "does not exist", as a missing one does, and
 * a listing never names it (a tenant's ?tenant=other lists nothing).
 */
#include "daemon/sched/sched_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Enough for the request threads that read at once on a small machine; more wait. */
#define N_READERS 8
/*
 * Listings at once. A listing is CPU-bound (~30 ms per thousand jobs; a
 * page is at most PAGE_JOBS): tenants' listings run one at a time, so they
 * never take more than one core from submissions and rounds, and single-job
 * reads go around them. The second lister is the admin's: behind one lister, 16
 * tenant listing threads raised an admin listing from 4 ms to 3 s (measured).
 */
#define N_LISTERS 2
/*
 * A tenant's listings running or waiting at once; beyond, 429 with Retry-After:
 * a tenant's flood waits in its own line, not in everyone's.
 */
#define TENANT_LISTINGS 2

struct rkd_readers {
	pthread_mutex_t mu;
	pthread_cond_t freed;
	const char *db_path;
	struct rkd_store *idle[N_READERS];
	int n_idle, n_open;
	int n_listing;         /* listings running (<= N_LISTERS; tenants' <= N_LISTERS - 1) */
	pthread_cond_t listed; /* a listing ended */
	/* per tenant (by name, first come): listings running or waiting */
	struct {
		char name[RK_TENANT_MAX];
		int n;
	} lines[RKD_MAX_TENANTS + 1];
	int n_lines;
};

static void read_job(const struct rkd_sched *s, struct rkd_store *store, struct rkd_msg *m)
{
	struct rkd_job_row row;
	struct rk_error e;
	int ret = rkd_store_job_get(store, m->job_id, &row, &e);
	if (ret && ret != RK_ENOTFOUND) {
		sched_set_err(m, ret, "", e.msg);
		return;
	}
	if (ret || !sched_caller_sees(m->who, row.tenant)) {
		char msg[64];
		snprintf(msg, sizeof(msg), "job %lld does not exist", (long long)m->job_id);
		sched_set_err(m, RK_ENOTFOUND, "id", msg);
		if (!ret)
			rkd_job_row_fini(&row);
		return;
	}
	struct rkd_hist_row *hist = NULL;
	int n_hist = 0;
	if (rkd_store_history_get(store, m->job_id, &hist, &n_hist, &e)) {
		hist = NULL;
		n_hist = 0;
	}
	sched_reasons_fill(s, &row, 1);
	m->body = rkd_job_json(&row, 1, hist, n_hist);
	m->body = rkd_refit_json_add_stored(store, m->job_id, m->body);
	m->status = m->body ? 200 : 503;
	if (!m->body)
		rkd_verr_set(&m->verr, RK_ENOMEM, "", "out of memory");
	free(hist);
	rkd_job_row_fini(&row);
}

/*
 * One page of GET /v1/jobs: at most PAGE_JOBS jobs and, past the first job,
 * at most PAGE_BYTES of JSON, whatever `limit` asks. The page's buffer is
 * what a reply costs for as long as the client takes to read it (issue 25:
 * 256 slow readers of 10,000-job pages held gigabytes); a client gets the
 * rest by following next_before_id, given only when more jobs follow.
 */
#define PAGE_JOBS  500
#define PAGE_BYTES (512 * 1024)

/* Append text (tl bytes) to *body (len, cap); 0, or -1 out of memory (*body kept). */
static int body_put(char **body, size_t *len, size_t *cap, const char *text, size_t tl)
{
	if (*len + tl + 1 > *cap) {
		size_t ncap = *cap;
		while (*len + tl + 1 > ncap)
			ncap *= 2;
		char *b = realloc(*body, ncap);
		if (!b)
			return -1;
		*body = b;
		*cap = ncap;
	}
	memcpy(*body + *len, text, tl);
	*len += tl;
	(*body)[*len] = '\0';
	return 0;
}

static void read_list(const struct rkd_sched *s, struct rkd_store *store, struct rkd_msg *m)
{
	struct rkd_job_filter f = m->filter;
	int none = 0;
	if (!m->who->admin) {
		none = f.tenant && strcmp(f.tenant, m->who->tenant);
		f.tenant = m->who->tenant;
	}
	int want = f.limit > 0 && f.limit < PAGE_JOBS ? f.limit : PAGE_JOBS;
	f.limit = want + 1; /* one more than the page: whether another follows */
	struct rkd_job_row *rows = NULL;
	int n = 0;
	struct rk_error e;
	int ret = none ? 0 : rkd_store_job_list(store, &f, &rows, &n, &e);
	if (ret) {
		sched_set_err(m, ret, "", e.msg);
		return;
	}
	/*
	 * The reply is the jobs' JSON texts joined as they are: no parse and
	 * re-dump of the objects (what bounds a listing's CPU time), each text
	 * freed once copied.
	 */
	int shown = n < want ? n : want;
	sched_reasons_fill(s, rows, shown);
	size_t cap = 64 * 1024, len = 0;
	char *body = malloc(cap);
	int oom = !body || body_put(&body, &len, &cap, "{\"jobs\":[", 9);
	for (int i = 0; !oom && i < shown; i++) {
		char *t = rkd_job_json(&rows[i], 0, NULL, 0);
		size_t tl = t ? strlen(t) : 0;
		if (i > 0 && len + tl + 1 > PAGE_BYTES)
			shown = i; /* the page is full: this job opens the next */
		else
			oom = !t || (i > 0 && body_put(&body, &len, &cap, ",", 1)) ||
			      body_put(&body, &len, &cap, t, tl);
		free(t);
	}
	char tail[64];
	int tn = shown < n ? snprintf(tail, sizeof(tail), "],\"count\":%d,\"next_before_id\":%lld}",
	                              shown, (long long)rows[shown - 1].id)
	                   : snprintf(tail, sizeof(tail), "],\"count\":%d}", shown);
	oom = oom || body_put(&body, &len, &cap, tail, (size_t)tn);
	rkd_job_rows_free(rows, n);
	if (oom) {
		free(body);
		body = NULL;
	}
	m->body = body;
	m->status = m->body ? 200 : 503;
	if (!m->body)
		rkd_verr_set(&m->verr, RK_ENOMEM, "", "out of memory");
}

void sched_read_store(const struct rkd_sched *s, struct rkd_store *store, struct rkd_msg *m)
{
	if (m->kind == RKD_MSG_GET)
		read_job(s, store, m);
	else if (m->kind == RKD_MSG_LOG)
		sched_read_log(s, store, m);
	else if (m->kind == RKD_MSG_EVENTS)
		sched_read_events(store, m);
	else
		read_list(s, store, m);
}

int sched_readers_init(struct rkd_sched *s, struct rk_error *err)
{
	struct rkd_readers *r = calloc(1, sizeof(*r));
	if (!r)
		return rk_error_set(err, RK_ENOMEM, "out of memory");
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->freed, NULL);
	pthread_cond_init(&r->listed, NULL);
	r->db_path = s->db_path;
	s->readers = r;
	return 0;
}

void sched_readers_fini(struct rkd_sched *s)
{
	struct rkd_readers *r = s->readers;
	if (!r)
		return;
	for (int i = 0; i < r->n_idle; i++) /* every reader is back: request threads are gone */
		rkd_store_close(r->idle[i]);
	pthread_cond_destroy(&r->listed);
	pthread_cond_destroy(&r->freed);
	pthread_mutex_destroy(&r->mu);
	free(r);
	s->readers = NULL;
}

/* A read-only connection: an idle one, a new one while fewer than N_READERS are open, or wait. */
static struct rkd_store *reader_take(struct rkd_readers *r, struct rk_error *err)
{
	pthread_mutex_lock(&r->mu);
	while (!r->n_idle && r->n_open == N_READERS)
		pthread_cond_wait(&r->freed, &r->mu);
	struct rkd_store *st = r->n_idle ? r->idle[--r->n_idle] : NULL;
	int open_new = !st;
	r->n_open += open_new;
	pthread_mutex_unlock(&r->mu);
	if (open_new && rkd_store_open_reader(&st, r->db_path, err)) {
		pthread_mutex_lock(&r->mu);
		r->n_open--;
		pthread_cond_signal(&r->freed);
		pthread_mutex_unlock(&r->mu);
		return NULL;
	}
	return st;
}

static void reader_give(struct rkd_readers *r, struct rkd_store *st)
{
	pthread_mutex_lock(&r->mu);
	r->idle[r->n_idle++] = st;
	pthread_cond_signal(&r->freed);
	pthread_mutex_unlock(&r->mu);
}

void rkd_sched_read(struct rkd_sched *s, struct rkd_msg *m)
{
	m->status = 0;
	m->body = NULL;
	if (rkd_sched_failed(s)) { /* failed storage: the scheduler thread answers 503 */
		rkd_sched_call(s, m);
		return;
	}
	struct rkd_readers *r = s->readers;
	int listing = m->kind == RKD_MSG_LIST;
	int line = -1; /* a tenant's listing: its index in r->lines */
	if (listing) {
		pthread_mutex_lock(&r->mu);
		if (!m->who->admin) {
			for (int i = 0; i < r->n_lines && line < 0; i++)
				if (!strcmp(r->lines[i].name, m->who->tenant))
					line = i;
			if (line < 0 && r->n_lines < RKD_MAX_TENANTS + 1) {
				line = r->n_lines++;
				snprintf(r->lines[line].name, sizeof(r->lines[line].name), "%s",
				         m->who->tenant);
			}
			if (line < 0 || r->lines[line].n >= TENANT_LISTINGS) {
				pthread_mutex_unlock(&r->mu);
				rkd_verr_set(&m->verr, RK_EUNAVAIL, "",
				             "tenant %s has %d listings running or waiting already;"
				             " retry after 1 s",
				             m->who->tenant, TENANT_LISTINGS);
				m->status = 429;
				m->retry_after_s = 1;
				return;
			}
			r->lines[line].n++;
		}
		int cap = m->who->admin ? N_LISTERS : N_LISTERS - 1;
		while (r->n_listing >= cap)
			pthread_cond_wait(&r->listed, &r->mu);
		r->n_listing++;
		pthread_mutex_unlock(&r->mu);
	}
	struct rk_error e;
	rk_error_clear(&e);
	struct rkd_store *st = reader_take(r, &e);
	if (st) {
		sched_read_store(s, st, m);
		reader_give(r, st);
	} else {
		sched_set_err(m, RK_EUNAVAIL, "", e.msg);
	}
	if (listing) {
		pthread_mutex_lock(&r->mu);
		r->n_listing--;
		if (line >= 0)
			r->lines[line].n--;
		pthread_cond_broadcast(
		    &r->listed); /* the admin and tenants wait on different caps */
		pthread_mutex_unlock(&r->mu);
	}
}
