/*
 * rubickd's secrets (docs/rubickd.8, SECURITY): a job's report token is
 * HMAC-SHA256(K, "rubick-job-token:" ID) under a key K that only rubickd's
 * user can read (the file DB.key, 0600), so the database keeps nothing a
 * reader could report with: only SHA-256 of each token, compared in
 * constant time. A relaunch derives the same token again.
 */
#ifndef RUBICKD_SECRETS_H
#define RUBICKD_SECRETS_H

#include "rubick/error.h"

#include <stddef.h>
#include <stdint.h>

#define RKD_KEY_BYTES 32
#define RKD_TOKEN_HEX 65 /* 64 hex digits and the NUL */

/*
 * Read the key from `path`, creating it (0600, random) when absent. Refuses
 * a file other users can read or that rubickd's user does not own.
 */
int rkd_secret_load(const char *path, unsigned char key[RKD_KEY_BYTES], struct rk_error *err);
/* The report token of job `job_id` (hex). */
void rkd_token_derive(const unsigned char key[RKD_KEY_BYTES], int64_t job_id,
                      char out[RKD_TOKEN_HEX]);
/* SHA-256 of `text` in hex: what the database keeps of a token. */
void rkd_token_hash(const char *text, char out[RKD_TOKEN_HEX]);
/* 1 when a and b are equal; time independent of where they differ. */
int rkd_token_eq(const char *a, const char *b);
/*
 * Make the database files (DB, DB-wal, DB-shm, DB.key) 0600 whatever the
 * umask they were created under. 0 or RK_EIO naming the file.
 */
int rkd_secret_db_files(const char *db, struct rk_error *err);

#endif
