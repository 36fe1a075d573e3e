/*
 * The HTTP client of the `rubick` daemon subcommands (client.c is the only
 * file that includes curl/curl.h). URLs are "http://HOST:PORT" or
 * "unix:PATH" (a rubickd unix socket).
 */
#ifndef RUBICKD_CLIENT_H
#define RUBICKD_CLIENT_H

#include "rubick/error.h"

#include <stddef.h>

/* The daemon URL: `flag` if set, else $RUBICK_URL, else http://127.0.0.1:8642. */
const char *rk_client_url(const char *flag);

/*
 * The bearer token: the first line of `file` (or of $RUBICK_TOKEN_FILE), else
 * $RUBICK_TOKEN, else none ("" in buf). RK_EIO naming the file on failure.
 */
int rk_client_token(const char *file, char *buf, size_t cap, struct rk_error *err);

/*
 * One request. body may be NULL. OUT: *status (HTTP) and *reply (malloc'd,
 * NUL-terminated, caller frees). RK_EUNAVAIL when the daemon cannot be reached.
 */
int rk_client_request(const char *url, const char *token, const char *method, const char *path,
		      const char *body, int *status, char **reply, struct rk_error *err);

#endif
