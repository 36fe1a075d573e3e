/*
 * Small file helpers the engines share (engine_local.c, engine_slurm*.c):
 * bounded path formatting, mkdir -p, atomic small-file writes and reads, and
 * the guarded read of a file the job itself can write.
 */
#ifndef RUBICKD_FILES_H
#define RUBICKD_FILES_H

#include <stddef.h>
#include <sys/types.h>

/* snprintf into buf; RK_ERANGE when it does not fit. */
int rkd_path_fmt(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* mkdir -p with mode 0700; 0 or -1 (errno set). */
int rkd_mkdir_p(const char *path);
/* Write `text` to `path` atomically (temp file, fsync, rename): a job or a
 * restarted daemon may read it at any moment. 0 or -1. */
int rkd_write_atomic(const char *path, const char *text);
/* rkd_write_atomic, the file owned by uid:gid ((uid_t)-1: rubickd's), mode 0600. */
int rkd_write_atomic_owned(const char *path, const char *text, uid_t uid, gid_t gid);
/*
 * Make `path` a folder (created when absent) with `mode`, owned by uid:gid
 * ((uid_t)-1: left as is), whatever the umask; never through a symlink.
 * 0 or -1 (errno set; ENOTDIR for a non-folder).
 */
int rkd_dir_ensure(const char *path, mode_t mode, uid_t uid, gid_t gid);
/* The same for a regular file (created empty when absent): a log a job appends to. */
int rkd_file_ensure(const char *path, mode_t mode, uid_t uid, gid_t gid);
/* Read at most cap - 1 bytes of `path` into buf, NUL-terminated. 0 or -1. */
int rkd_read_small(const char *path, char *buf, size_t cap);
/*
 * Read a small file a job can write (its ckpt/ folder), as rubickd (often
 * root) on the scheduler thread: never through a symlink (root would read
 * any file), never blocking (a FIFO would stall every round), only a regular
 * file of at most cap - 1 bytes. 0 with buf NUL-terminated; RK_ENOTFOUND
 * when absent (why = ""); otherwise a negative RK_E* code, `why` naming the
 * path and the problem and buf "".
 */
int rkd_read_job_file(const char *path, char *buf, size_t cap, char *why, size_t why_cap);

#endif
