/*
 * A job's log and events for GET /v1/jobs/{id}/log and /events (api_ops.c),
 * read on the request thread through sched_read.c's read-only connections.
 *
 * The log is STATE_DIR/job-ID/log: every run's stdout and stderr appended,
 * by the supervisor of the local engine (engine_local.c) and by the Slurm
 * batch script (engine_slurm.c, --output there). Each reply carries at most
 * LOG_CHUNK bytes from the asked offset, so that a large log never fills
 * the daemon's memory; `rubick logs` asks again from offset + length.
 */
#include "daemon/sched/sched_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#define LOG_CHUNK (256 * 1024)

int sched_read_owned(struct rkd_store *store, struct rkd_msg *m)
{
	struct rkd_job_row row;
	struct rk_error e;
	int ret = rkd_store_job_get(store, m->job_id, &row, &e);
	if (ret && ret != RK_ENOTFOUND) {
		sched_set_err(m, ret, "", e.msg);
		return -1;
	}
	int seen = !ret && sched_caller_sees(m->who, row.tenant);
	if (!ret)
		rkd_job_row_fini(&row);
	if (!seen) { /* another tenant's job reads as a missing one (sched_read.c) */
		char msg[64];
		snprintf(msg, sizeof(msg), "job %lld does not exist", (long long)m->job_id);
		sched_set_err(m, RK_ENOTFOUND, "id", msg);
		return -1;
	}
	return 0;
}

void sched_read_log(const struct rkd_sched *s, struct rkd_store *store, struct rkd_msg *m)
{
	if (sched_read_owned(store, m))
		return;
	char path[4200];
	if ((size_t)snprintf(path, sizeof(path), "%s/job-%lld/log", s->state_dir,
	                     (long long)m->job_id) >= sizeof(path)) {
		sched_set_err(m, RK_ERANGE, "", "log path too long");
		return;
	}
	int64_t off = m->filter.before_id;
	char *buf = malloc(LOG_CHUNK + 1);
	if (!buf) {
		sched_set_err(m, RK_ENOMEM, "", "out of memory");
		return;
	}
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno != ENOENT) { /* a job never launched has no log yet: empty */
		char msg[4400];
		snprintf(msg, sizeof(msg), "%s: %s", path, strerror(errno));
		free(buf);
		sched_set_err(m, RK_EIO, "", msg);
		return;
	}
	while (fd >= 0 && len < LOG_CHUNK) {
		ssize_t r = pread(fd, buf + len, LOG_CHUNK - len, (off_t)(off + (int64_t)len));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	if (fd >= 0)
		close(fd);
	/* The reply is a C string: a NUL byte would end it early and stall --follow's offset. */
	for (size_t i = 0; i < len; i++)
		if (!buf[i])
			buf[i] = '?';
	buf[len] = '\0';
	m->body = buf;
	m->status = 200;
}

void sched_read_events(struct rkd_store *store, struct rkd_msg *m)
{
	if (sched_read_owned(store, m))
		return;
	struct rkd_event_row *rows = NULL;
	int n = 0;
	struct rk_error e;
	if (rkd_store_events_get(store, m->job_id, m->filter.before_id, m->filter.limit, &rows, &n,
	                         &e)) {
		sched_set_err(m, e.code, "", e.msg);
		return;
	}
	json_t *arr = json_array();
	for (int i = 0; arr && i < n; i++)
		json_array_append_new(arr,
		                      json_pack("{s:I,s:I,s:s,s:s}", "id", (json_int_t)rows[i].id,
		                                "t_ms", (json_int_t)rows[i].t_ms, "kind",
		                                rows[i].kind, "detail", rows[i].detail));
	json_t *o = json_pack("{s:I,s:o,s:i}", "job_id", (json_int_t)m->job_id, "events",
	                      arr ? arr : json_array(), "count", n);
	if (o && n == m->filter.limit)
		json_object_set_new(o, "next_after", json_integer(rows[n - 1].id));
	free(rows);
	m->body = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(o);
	m->status = m->body ? 200 : 503;
	if (!m->body)
		rkd_verr_set(&m->verr, RK_ENOMEM, "", "out of memory");
}
