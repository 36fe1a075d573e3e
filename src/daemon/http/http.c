/*
 * HTTP server of rubickd on libmicrohttpd (see http.h). A few event threads
 * (MHD's thread pool, each on its own epoll set) read requests and send
 * replies; a request that needs a handler is suspended and handed to a
 * request worker (http_pool.h), which resumes it when its reply is ready.
 * Handlers block while the scheduler thread works on their message, and
 * the many workers are what lets the scheduler group-commit many
 * submissions into one fsync. An idle connection costs a socket and an
 * epoll entry, not a thread (issue 25: with one thread per connection,
 * 2,000 idle and 300 slowloris connections made every accept cost the one
 * listening thread a thread creation, and the admin's p99 was 736 ms):
 * http_guard.c times out slow requests and evicts waiting connections when
 * the server fills up. Errors found before a handler (404, 401, 405, 413,
 * the reserve's 503) are answered on the event thread: they do not block.
 */
#include "daemon/http/http.h"

#include "daemon/http/http_guard.h"
#include "daemon/http/http_pool.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

struct rkd_http {
	struct MHD_Daemon *d;
	struct rkd_http_config cfg;
	struct rkd_token *tokens;
	struct rkd_guard *guard;
	struct rkd_pool *pool;
	pthread_mutex_t stop_mu; /* orders hand-offs to the pool before its end */
	int stopping;
	char unix_path[108];
};

static void *guard_ctx(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *i =
	    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return i ? i->socket_context : NULL;
}

/*
 * Per-request state: the body, then, once handed to a worker, what it runs
 * and the reply it leaves. `item` is first: the pool hands it back.
 */
struct upload {
	struct rkd_pool_item item;
	char *buf;
	size_t len, cap;
	int too_big;
	int queued;   /* suspended, with a worker */
	int ready;    /* resp holds the handler's reply */
	int anonymous;
	struct rkd_http *h;
	struct MHD_Connection *conn;
	const struct rkd_route *hit;
	struct rkd_req req;
	struct rkd_resp resp;
};

static const char *code_name(int code, int status)
{
	if (status == 401)
		return "unauthorized";
	if (status == 405)
		return "method_not_allowed";
	if (status == 413)
		return "body_too_large";
	if (status == 429)
		return "too_many_requests";
	switch (code) {
	case RK_EINVAL:
		return "invalid";
	case RK_ERANGE:
		return "out_of_range";
	case RK_ENOTFOUND:
		return "not_found";
	case RK_EEXIST:
		return "exists";
	case RK_EINFEASIBLE:
		return "infeasible";
	case RK_EPERM:
		return "forbidden";
	case RK_ECONFLICT:
		return "conflict";
	case RK_EUNAVAIL:
		return "unavailable";
	case RK_ENOMEM:
		return "unavailable";
	default:
		return "internal";
	}
}

static char *error_body(int status, const struct rkd_verr *v)
{
	json_t *o =
	    json_pack("{s:{s:s,s:s,s:o}}", "error", "code", code_name(v->e.code, status), "message",
	              v->e.msg, "field", v->field[0] ? json_string(v->field) : json_null());
	char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(o);
	return text;
}

static enum MHD_Result send_resp(struct rkd_http *h, struct MHD_Connection *conn,
                                 struct rkd_resp *resp, const char *allow)
{
	if (resp->status >= 400 && !resp->body)
		resp->body = error_body(resp->status, &resp->verr);
	const char *body = resp->body ? resp->body : "";
	size_t len = strlen(body);
	int add_nl = !resp->raw && resp->body && len && body[len - 1] != '\n';
	struct MHD_Response *r;
	if (add_nl) {
		char *b = malloc(len + 2);
		if (!b)
			return MHD_NO;
		memcpy(b, body, len);
		b[len] = '\n';
		b[len + 1] = '\0';
		r = MHD_create_response_from_buffer(len + 1, b, MHD_RESPMEM_MUST_FREE);
	} else {
		r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	}
	free(resp->body);
	resp->body = NULL;
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type",
	                        resp->content_type ? resp->content_type : "application/json");
	if (allow)
		MHD_add_response_header(r, "Allow", allow);
	if (resp->status == 401)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"rubickd\"");
	if (resp->retry_after_s > 0) {
		char ra[16];
		snprintf(ra, sizeof(ra), "%d", resp->retry_after_s);
		MHD_add_response_header(r, "Retry-After", ra);
	}
	if (resp->close)
		MHD_add_response_header(r, "Connection", "close");
	size_t bytes = add_nl ? len + 1 : len;
	enum MHD_Result ret = MHD_queue_response(conn, (unsigned)resp->status, r);
	MHD_destroy_response(r);
	if (ret == MHD_YES)
		rkd_guard_sending(h->guard, guard_ctx(conn), bytes);
	return ret;
}

/* Match `path` against a route pattern; fills *id for "{id}". */
static int path_match(const char *pattern, const char *path, int64_t *id, int *bad_id)
{
	while (*pattern && *path) {
		if (!strncmp(pattern, "{id}", 4)) {
			const char *end = strchr(path, '/');
			size_t n = end ? (size_t)(end - path) : strlen(path);
			int64_t v = 0;
			int ok = n > 0 && n <= 18;
			for (size_t i = 0; i < n && ok; i++) {
				ok = path[i] >= '0' && path[i] <= '9';
				v = v * 10 + (path[i] - '0');
			}
			if (!ok || v <= 0)
				*bad_id = 1;
			*id = ok ? v : 0;
			pattern += 4;
			path += n;
			continue;
		}
		if (*pattern != *path)
			return 0;
		pattern++;
		path++;
	}
	return !*pattern && (!*path || (path[0] == '/' && !path[1]));
}

static int token_eq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;
	for (size_t i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/* Resolve the Authorization header. -1 when a token was given but is not known. */
static int authenticate(struct rkd_http *h, struct MHD_Connection *conn, struct rkd_caller *who)
{
	memset(who, 0, sizeof(*who));
	const char *a = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	if (!a)
		return 0;
	if (strncmp(a, "Bearer ", 7))
		return -1;
	const char *tok = a + 7;
	who->bearer = tok;
	for (int i = 0; i < h->cfg.n_tokens; i++)
		if (token_eq(tok, h->tokens[i].token)) {
			who->authed = 1;
			who->admin = h->tokens[i].admin;
			snprintf(who->tenant, sizeof(who->tenant), "%s", h->tokens[i].tenant);
			return 0;
		}
	return 1; /* unknown: may still be a job's report token */
}

/* The query string through libmicrohttpd, for the handlers' helpers (http_reply.c). */
static const char *query_get(void *conn, const char *key)
{
	return MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, key);
}

struct args_check {
	const char *const *allowed;
	const char *bad;
};

static enum MHD_Result arg_iter(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
	(void)kind;
	(void)value;
	struct args_check *c = cls;
	for (const char *const *a = c->allowed; *a; a++)
		if (!strcmp(*a, key))
			return MHD_YES;
	c->bad = key;
	return MHD_NO;
}

static const char *query_first_not_in(void *conn, const char *const *allowed)
{
	struct args_check c = {allowed, NULL};
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, arg_iter, &c);
	return c.bad;
}

static const struct rkd_query_ops query_ops = {query_get, query_first_not_in};

/*
 * An error answered to a caller without a tenant's or the admin's token closes
 * the connection (issue 25): 32 token-less clients pipelining 404s kept 32
 * request threads answering tens of thousands of them each, close to a core
 * of rubickd, and raised the admin's p99 from 5 ms to over 1 s. Each such
 * request now costs a connection, and connections come in one at a time
 * through the listening thread. Job reports (their own bearer) and public
 * /metrics are answered on a kept connection while they succeed.
 */
static enum MHD_Result reply(struct rkd_http *h, struct MHD_Connection *conn, struct rkd_resp *resp,
                             const char *allow, int anonymous)
{
	if (anonymous && resp->status >= 400)
		resp->close = 1;
	return send_resp(h, conn, resp, allow);
}

/*
 * On a worker: run the handler, then resume the connection, whose event
 * thread calls on_request again to send the reply. `up` is the
 * connection's until the resume: nothing touches it after.
 */
static void run_handler(struct rkd_pool_item *it)
{
	struct upload *up = (struct upload *)it;
	up->hit->fn(up->h->cfg.api, &up->req, &up->resp);
	up->ready = 1;
	MHD_resume_connection(up->conn);
}

static enum MHD_Result dispatch(struct rkd_http *h, struct MHD_Connection *conn, const char *url,
                                const char *method, struct upload *up)
{
	struct rkd_resp resp;
	memset(&resp, 0, sizeof(resp));
	char allow[64] = "";
	const struct rkd_route *hit = NULL;
	int64_t id = 0;
	int path_known = 0, bad_id = 0;
	for (size_t i = 0; i < h->cfg.n_routes; i++) {
		const struct rkd_route *r = &h->cfg.routes[i];
		int b = 0;
		int64_t rid = 0;
		if (!path_match(r->pattern, url, &rid, &b))
			continue;
		path_known = 1;
		size_t al = strlen(allow);
		snprintf(allow + al, sizeof(allow) - al, "%s%s", al ? ", " : "", r->method);
		if (!strcmp(r->method, method)) {
			hit = r;
			id = rid;
			bad_id = b;
		}
	}
	struct rkd_req req = {.method = method,
	                      .path = url,
	                      .body = up->buf ? up->buf : "",
	                      .body_len = up->len,
	                      .id = id,
	                      .query = &query_ops,
	                      .conn = conn};
	int a = authenticate(h, conn, &req.who);
	int anonymous = !(a == 0 && req.who.authed);
	/*
	 * A connection in its address's reserve (http_guard.h) is the admin's or a job's
	 * report's, and that is checked first: anyone else, a 404 or an unauthenticated
	 * request included, is told to come back, cheaply, and the slot freed. (A 404
	 * answered first let a client pipelining 404s keep the reserve.)
	 */
	if (rkd_guard_reserved(h->guard, guard_ctx(conn))) {
		int admin = a == 0 && req.who.admin;
		if (!admin && !(hit && hit->auth == RKD_AUTH_BEARER)) {
			rkd_resp_error(
			    &resp, RK_EUNAVAIL, "",
			    "every connection your address may hold is busy; retry later");
			resp.status = 503;
			resp.retry_after_s = 1;
			resp.close = 1;
			return send_resp(h, conn, &resp, NULL);
		}
	}
	if (!path_known) {
		rkd_resp_error(&resp, RK_ENOTFOUND, "", "%s: no such resource", url);
		return reply(h, conn, &resp, NULL, anonymous);
	}
	if (!hit) {
		rkd_resp_error(&resp, RK_EINVAL, "", "%s does not allow %s (allowed: %s)", url,
		               method, allow);
		resp.status = 405;
		return reply(h, conn, &resp, allow, anonymous);
	}
	if (up->too_big) {
		rkd_resp_error(&resp, RK_ERANGE, "", "body: larger than the %zu-byte limit",
		               h->cfg.max_body);
		resp.status = 413;
		return reply(h, conn, &resp, NULL, anonymous);
	}
	/* Every request names a known token, but reports (any bearer, checked by the
	 * handler) and /metrics when metrics_public = yes. */
	int public_metrics = hit->auth == RKD_AUTH_METRICS && h->cfg.metrics_public;
	int ok = hit->auth == RKD_AUTH_NONE     ? 1
	         : public_metrics               ? a >= 0
	         : hit->auth == RKD_AUTH_BEARER ? a >= 0 && req.who.bearer
	                                        : a == 0 && req.who.authed;
	if (!ok) {
		rkd_resp_error(&resp, RK_EPERM, "",
		               a ? "Authorization: unknown or malformed bearer token"
		                 : "Authorization: this request needs a bearer token");
		resp.status = 401;
		return reply(h, conn, &resp, NULL, anonymous);
	}
	if (bad_id) {
		rkd_resp_error(&resp, RK_EINVAL, "id",
		               "id: '%s' is not a job id (a positive integer)",
		               url + strlen("/v1/jobs/"));
		return reply(h, conn, &resp, NULL, anonymous);
	}
	/*
	 * The handler may block: suspend the connection and hand it to a worker.
	 * The admin's requests and job reports go first and to the reserved
	 * workers too, so tenants' blocked listings never starve them.
	 */
	pthread_mutex_lock(&h->stop_mu);
	if (h->stopping) {
		pthread_mutex_unlock(&h->stop_mu);
		rkd_resp_error(&resp, RK_EUNAVAIL, "", "rubickd is stopping");
		resp.status = 503;
		resp.close = 1;
		return send_resp(h, conn, &resp, NULL);
	}
	up->h = h;
	up->conn = conn;
	up->hit = hit;
	up->req = req;
	up->anonymous = anonymous;
	up->queued = 1;
	up->item.run = run_handler;
	MHD_suspend_connection(conn);
	rkd_pool_push(h->pool, &up->item, (a == 0 && req.who.admin) || hit->auth == RKD_AUTH_BEARER);
	pthread_mutex_unlock(&h->stop_mu);
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **con_cls)
{
	(void)version;
	struct rkd_http *h = cls;
	struct upload *up = *con_cls;
	if (!up) {
		up = calloc(1, sizeof(*up));
		if (!up)
			return MHD_NO;
		*con_cls = up;
		const char *cl =
		    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
		if (cl && strtoull(cl, NULL, 10) > h->cfg.max_body)
			up->too_big = 1;
		rkd_guard_headers_done(h->guard, guard_ctx(conn));
		return MHD_YES;
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		if (up->too_big || up->len + n > h->cfg.max_body) {
			up->too_big = 1;
			return MHD_YES;
		}
		if (up->len + n + 1 > up->cap) {
			size_t ncap = up->cap ? up->cap : 1024;
			while (ncap < up->len + n + 1)
				ncap *= 2;
			char *b = realloc(up->buf, ncap);
			if (!b)
				return MHD_NO;
			up->buf = b;
			up->cap = ncap;
		}
		memcpy(up->buf + up->len, upload_data, n);
		up->len += n;
		up->buf[up->len] = '\0';
		return MHD_YES;
	}
	if (up->queued) {
		if (!up->ready)
			return MHD_YES; /* resumed before the worker was done: cannot happen */
		up->queued = 0;
		return reply(h, conn, &up->resp, NULL, up->anonymous);
	}
	rkd_guard_busy(h->guard, guard_ctx(conn));
	return dispatch(h, conn, url, method, up);
}

static void on_done(void *cls, struct MHD_Connection *conn, void **con_cls,
                    enum MHD_RequestTerminationCode toe)
{
	(void)toe;
	struct rkd_http *h = cls;
	rkd_guard_idle(h->guard, guard_ctx(conn)); /* the next request's headers are due */
	struct upload *up = *con_cls;
	if (up) {
		free(up->resp.body); /* a reply the connection closed before sending */
		free(up->buf);
		free(up);
		*con_cls = NULL;
	}
}

static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct rkd_http *h = cls;
	return rkd_guard_accept(h->guard, addr, len) ? MHD_YES : MHD_NO;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
	struct rkd_http *h = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ad =
		    MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		rkd_guard_started(h->guard, fd ? fd->connect_fd : -1, ad ? ad->client_addr : NULL,
		                  socket_context);
	} else {
		rkd_guard_closed(h->guard, socket_context);
	}
}

/*
 * Inactivity timeout of MHD itself (s): it bounds a response sent to a
 * client that stops reading; the guard's header and body deadlines are
 * the tighter bounds on requests.
 */
#define SEND_TIMEOUT_S 30u

static int listen_unix(struct rkd_http *h, const char *path, int *fd_out, struct rk_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path))
		return rk_error_set(err, RK_ERANGE,
		                    "--listen: unix socket path is longer than %zu bytes",
		                    sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return rk_error_set(err, RK_EEXIST,
			                    "--listen: %s exists and is not a socket", path);
		unlink(path); /* a stale socket of an earlier rubickd */
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return rk_error_set(err, RK_EIO, "--listen: socket: %s", strerror(errno));
	/* Owner-only: the socket is the daemon's front door. */
	mode_t old = umask(0177);
	int rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc || listen(fd, 512)) {
		rk_error_set(err, RK_EIO, "--listen: %s: %s", path, strerror(errno));
		close(fd);
		return RK_EIO;
	}
	snprintf(h->unix_path, sizeof(h->unix_path), "%s", path);
	*fd_out = fd;
	return 0;
}

static int parse_inet(const char *listen, struct sockaddr_in *sa, struct rk_error *err)
{
	const char *colon = strrchr(listen, ':');
	if (!colon || colon == listen)
		return rk_error_set(err, RK_EINVAL, "--listen: '%s' is not HOST:PORT or unix:PATH",
		                    listen);
	char host[64];
	size_t hl = (size_t)(colon - listen);
	if (hl >= sizeof(host))
		return rk_error_set(err, RK_EINVAL, "--listen: host '%.*s' is too long", (int)hl,
		                    listen);
	memcpy(host, listen, hl);
	host[hl] = '\0';
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port < 0 || port > 65535)
		return rk_error_set(err, RK_ERANGE, "--listen: port '%s' is not 0..65535",
		                    colon + 1);
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof(host), "127.0.0.1");
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return rk_error_set(err, RK_EINVAL, "--listen: '%s' is not an IPv4 address", host);
	return 0;
}

int rkd_http_start(struct rkd_http **out, const struct rkd_http_config *cfg, struct rk_error *err)
{
	struct rkd_http *h = calloc(1, sizeof(*h));
	if (!h)
		return rk_error_set(err, RK_ENOMEM, "out of memory");
	h->cfg = *cfg;
	h->tokens = calloc((size_t)(cfg->n_tokens ? cfg->n_tokens : 1), sizeof(*h->tokens));
	if (!h->tokens) {
		free(h);
		return rk_error_set(err, RK_ENOMEM, "out of memory");
	}
	memcpy(h->tokens, cfg->tokens, (size_t)cfg->n_tokens * sizeof(*h->tokens));
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
	unsigned threads = (unsigned)(cfg->threads > 0 ? cfg->threads : 4);
	int workers = cfg->workers > 0 ? cfg->workers : 64;
	pthread_mutex_init(&h->stop_mu, NULL);
	int fd = -1;
	struct sockaddr_in sa;
	int ret;
	if (!strncmp(cfg->listen, "unix:", 5))
		ret = listen_unix(h, cfg->listen + 5, &fd, err);
	else
		ret = parse_inet(cfg->listen, &sa, err);
	if (ret)
		goto fail;
	unsigned limit = (unsigned)(cfg->max_connections > 0 ? cfg->max_connections : 1024);
	struct rkd_guard_config gc = {
	    .max_connections = (int)limit,
	    .soft_connections = (int)(limit - limit / 8),
	    .per_addr = cfg->max_connections_per_addr > 0 ? cfg->max_connections_per_addr
	                                                  : (int)(limit / 4 > 4 ? limit / 4 : 4),
	    .header_timeout_ms = 1000 * (cfg->header_timeout_s > 0 ? cfg->header_timeout_s : 5),
	    .body_timeout_ms = 1000 * (cfg->body_timeout_s > 0 ? cfg->body_timeout_s : 10),
	    .reserved_per_addr = cfg->reserved_per_addr > 0   ? cfg->reserved_per_addr
	                         : cfg->reserved_per_addr < 0 ? 0
	                                                      : 16,
	    .send_timeout_ms = 1000 * (cfg->send_timeout_s > 0 ? cfg->send_timeout_s : 10),
	    .send_min_bytes_per_s =
	        cfg->send_min_bytes_per_s > 0 ? cfg->send_min_bytes_per_s : 65536,
	};
	ret = rkd_guard_create(&h->guard, &gc, err);
	if (!ret)
		ret = rkd_pool_create(&h->pool, workers, workers / 8 > 1 ? workers / 8 : 1, err);
	if (ret) {
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	if (fd >= 0)
		h->d = MHD_start_daemon(
		    flags, 0, on_accept, h, on_request, h, MHD_OPTION_LISTEN_SOCKET, fd,
		    MHD_OPTION_NOTIFY_COMPLETED, on_done, h, MHD_OPTION_NOTIFY_CONNECTION,
		    on_connection, h, MHD_OPTION_CONNECTION_LIMIT, limit,
		    MHD_OPTION_CONNECTION_TIMEOUT, SEND_TIMEOUT_S, MHD_OPTION_THREAD_POOL_SIZE,
		    threads, MHD_OPTION_END);
	else
		h->d = MHD_start_daemon(
		    flags, ntohs(sa.sin_port), on_accept, h, on_request, h, MHD_OPTION_SOCK_ADDR,
		    (struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED, on_done, h,
		    MHD_OPTION_NOTIFY_CONNECTION, on_connection, h, MHD_OPTION_CONNECTION_LIMIT,
		    limit, MHD_OPTION_CONNECTION_TIMEOUT, SEND_TIMEOUT_S,
		    MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_END);
	if (!h->d) {
		ret = rk_error_set(err, RK_EIO, "--listen %s: cannot start the HTTP server (%s)",
		                   cfg->listen, errno ? strerror(errno) : "address in use?");
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	*out = h;
	return 0;
fail:
	if (h->unix_path[0])
		unlink(h->unix_path);
	rkd_pool_destroy(h->pool);
	rkd_guard_destroy(h->guard);
	pthread_mutex_destroy(&h->stop_mu);
	free(h->tokens);
	free(h);
	return ret;
}

/* The TCP port actually bound (for --listen HOST:0), or 0 for a unix socket. */
int rkd_http_port(const struct rkd_http *h)
{
	if (h->unix_path[0])
		return 0;
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	return i ? (int)i->port : 0;
}

void rkd_http_stop(struct rkd_http *h)
{
	if (!h)
		return;
	/*
	 * MHD must find no connection suspended when it stops (it aborts):
	 * refuse new hand-offs, let the workers finish and resume what they
	 * hold, then stop the daemon.
	 */
	pthread_mutex_lock(&h->stop_mu);
	h->stopping = 1;
	pthread_mutex_unlock(&h->stop_mu);
	rkd_pool_destroy(h->pool);
	MHD_stop_daemon(h->d);
	rkd_guard_destroy(h->guard); /* after the daemon: every connection is closed */
	pthread_mutex_destroy(&h->stop_mu);
	if (h->unix_path[0])
		unlink(h->unix_path);
	free(h->tokens);
	free(h);
}
