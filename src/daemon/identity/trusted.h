/*
 * Whether a file rubickd takes orders from (the config, a token file) is
 * its own: the config says who jobs run as (allow_root) and which tokens
 * count, so whoever may change it or its folder is as good as root.
 */
#ifndef RUBICKD_TRUSTED_H
#define RUBICKD_TRUSTED_H

#include "rubick/error.h"

/*
 * Refuse the file open on fd (named `path`, `what` in messages: "--config",
 * "admin_token_file"): owned by a user other than rubickd's effective one
 * or root, writable by group or others, or in a folder others may write
 * without the sticky bit. 0, or RK_EPERM (RK_EIO when it cannot tell) with a
 * message naming the file, the owner found and the owner expected.
 */
int rkd_file_trusted(int fd, const char *path, const char *what, struct rk_error *err);

/*
 * The files rubickd writes as root and the jobs' folders hang from: the
 * database `db`, its -wal, -shm and .lock files, and the state folder, where
 * they exist. Each must be what rubickd would have made - a regular file (the
 * state: a folder), never a symbolic link - and trusted as above: a local user
 * who pre-creates them (a database they own, DB.jobs/job-N/run-1 a link into a
 * root-only folder) would have root write where they choose. 0, or RK_EPERM
 * naming the file and what is wrong with it.
 */
int rkd_db_files_trusted(const char *db, const char *state_dir, struct rk_error *err);

#endif
