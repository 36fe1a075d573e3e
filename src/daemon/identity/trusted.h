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

#endif
