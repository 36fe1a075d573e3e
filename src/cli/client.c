/* libcurl client for rubickd (see client.h). */
#include "cli/client.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rk_client_url(const char *flag)
{
	if (flag && *flag)
		return flag;
	const char *e = getenv("RUBICK_URL");
	return e && *e ? e : "http://127.0.0.1:8642";
}

int rk_client_token(const char *file, char *buf, size_t cap, struct rk_error *err)
{
	buf[0] = '\0';
	if (!file || !*file)
		file = getenv("RUBICK_TOKEN_FILE");
	if (file && *file) {
		FILE *f = fopen(file, "re");
		if (!f)
			return rk_error_set(err, RK_EIO, "%s: %s", file, strerror(errno));
		if (!fgets(buf, (int)cap, f))
			buf[0] = '\0';
		fclose(f);
		buf[strcspn(buf, "\r\n")] = '\0';
		return 0;
	}
	const char *t = getenv("RUBICK_TOKEN");
	if (t)
		snprintf(buf, cap, "%s", t);
	return 0;
}

struct sink {
	char *p;
	size_t len;
	int oom;
};

static size_t on_data(char *data, size_t size, size_t n, void *ctx)
{
	struct sink *s = ctx;
	size_t add = size * n;
	char *np = realloc(s->p, s->len + add + 1);
	if (!np) {
		s->oom = 1;
		return 0;
	}
	memcpy(np + s->len, data, add);
	s->p = np;
	s->len += add;
	s->p[s->len] = '\0';
	return add;
}

int rk_client_request(const char *url, const char *token, const char *method, const char *path,
		      const char *body, int *status, char **reply, struct rk_error *err)
{
	CURL *c = curl_easy_init();
	if (!c)
		return rk_error_set(err, RK_ENOMEM, "curl: cannot initialise");
	char full[2048], auth[300];
	struct curl_slist *hdr = NULL;
	struct sink sink = {0};
	if (!strncmp(url, "unix:", 5)) {
		curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, url + 5);
		snprintf(full, sizeof(full), "http://localhost%s", path);
	} else {
		size_t n = strlen(url);
		snprintf(full, sizeof(full), "%.*s%s", (int)(n && url[n - 1] == '/' ? n - 1 : n), url,
			 path);
	}
	curl_easy_setopt(c, CURLOPT_URL, full);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	if (token && *token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		hdr = curl_slist_append(hdr, auth);
	}
	if (body) {
		hdr = curl_slist_append(hdr, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	CURLcode rc = curl_easy_perform(c);
	long code = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(hdr);
	curl_easy_cleanup(c);
	if (rc != CURLE_OK || sink.oom) {
		free(sink.p);
		return rk_error_set(err, RK_EUNAVAIL, "%s: %s", url,
				    sink.oom ? "out of memory" : curl_easy_strerror(rc));
	}
	*status = (int)code;
	*reply = sink.p ? sink.p : strdup("");
	return *reply ? 0 : rk_error_set(err, RK_ENOMEM, "out of memory");
}
