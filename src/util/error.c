/* The one table of rubick error codes, messages and HTTP statuses. */
#include "rubick/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
	int code;
	const char *msg;
	int http;
} error_table[RK_ERRCODE_COUNT] = {
	{RK_OK, "success", 200},
	{RK_EINVAL, "invalid argument", 400},
	{RK_ENOMEM, "out of memory", 503},
	{RK_ERANGE, "value out of range", 400},
	{RK_ENOTFOUND, "not found", 404},
	{RK_EEXIST, "already exists", 409},
	{RK_EINFEASIBLE, "infeasible", 422},
	{RK_EIO, "input/output error", 500},
	{RK_EPERM, "permission denied", 403},
	{RK_ECONFLICT, "conflict with current state", 409},
	{RK_ENOCONV, "did not converge", 500},
	{RK_EINTERNAL, "internal error", 500},
	{RK_EUNAVAIL, "service unavailable", 503},
};

static int table_index(int code)
{
	for (int i = 0; i < RK_ERRCODE_COUNT; i++)
		if (error_table[i].code == code)
			return i;
	return -1;
}

const char *rk_strerror(int code)
{
	int i = table_index(code);
	return i < 0 ? "unknown error" : error_table[i].msg;
}

int rk_error_http_status(int code)
{
	int i = table_index(code);
	return i < 0 ? 500 : error_table[i].http;
}

int rk_error_set(struct rk_error *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err->code = code;
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

int rk_error_prefix(struct rk_error *err, const char *fmt, ...)
{
	if (!err)
		return RK_OK;
	char prefix[256];
	char old[sizeof(err->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	/* Concatenate by hand: a message cut at sizeof(msg) is still the best report. */
	size_t cap = sizeof(err->msg) - 1;
	size_t len = strlen(prefix);
	if (len > cap)
		len = cap;
	memcpy(err->msg, prefix, len);
	const char *tail[2] = {": ", old};
	for (int i = 0; i < 2; i++) {
		size_t n = strlen(tail[i]);
		if (n > cap - len)
			n = cap - len;
		memcpy(err->msg + len, tail[i], n);
		len += n;
	}
	err->msg[len] = '\0';
	return err->code;
}

void rk_error_clear(struct rk_error *err)
{
	if (err) {
		err->code = RK_OK;
		err->msg[0] = '\0';
	}
}
