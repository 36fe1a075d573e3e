/*
 * rubick error codes: one table that yields the code, its message and the HTTP
 * status an API answers with. Every library function returns 0 on success or a
 * negative RK_E* code; parsers also fill an optional struct rk_error with the
 * file, line, column or flag at fault.
 */
#ifndef RUBICK_ERROR_H
#define RUBICK_ERROR_H

#include <stddef.h>

enum rk_errcode {
	RK_OK = 0,
	RK_EINVAL = -1,    /* invalid argument or malformed input */
	RK_ENOMEM = -2,    /* allocation failed */
	RK_ERANGE = -3,    /* value out of its allowed range */
	RK_ENOTFOUND = -4, /* named object does not exist */
	RK_EEXIST = -5,    /* object already exists */
	RK_EINFEASIBLE = -6, /* plan or allocation cannot run (memory, capacity) */
	RK_EIO = -7,       /* file or device I/O failed (drivers only; the core does no I/O) */
	RK_EPERM = -8,     /* caller may not do this (auth, tenant, quota) */
	RK_ECONFLICT = -9, /* request contradicts current state */
	RK_ENOCONV = -10,  /* numerical method did not converge */
	RK_EINTERNAL = -11, /* broken invariant: a bug in rubick */
	RK_EUNAVAIL = -12, /* service or engine not available */
};

/* Number of distinct codes, RK_OK included. */
#define RK_ERRCODE_COUNT 13

/* Detailed error report filled by parsers and validators. */
struct rk_error {
	int code;        /* the RK_E* code returned */
	char msg[512];   /* "FILE:LINE:COL: what is wrong" or "--flag: what is wrong" */
};

/* Short static description of `code` ("invalid argument"); never NULL. */
const char *rk_strerror(int code);

/* HTTP status an API answers `code` with (400, 404, 409, 500, ...). */
int rk_error_http_status(int code);

/*
 * Fill `err` (may be NULL) with `code` and a printf-style message and return
 * `code`, so callers write `return rk_error_set(err, RK_EINVAL, "...")`.
 */
int rk_error_set(struct rk_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Prefix the message already in `err` with "PREFIX: " (e.g. a file name once
 * the caller knows it). Returns err->code, or RK_OK when err is NULL.
 */
int rk_error_prefix(struct rk_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Reset `err` to RK_OK with an empty message. */
void rk_error_clear(struct rk_error *err);

#endif
