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
/*
 * Open (creating what is absent, with `mode`) the folder `rel` ("job-3/run-2")
 * below the folder `base`, one component at a time from a descriptor: never
 * through a symlink, and only through folders rubickd's effective user owns
 * and no one else can write, so that no other user can plant or swap a
 * component under rubickd (often root). `base` itself is checked the same
 * way. The folder's descriptor (O_CLOEXEC), or -1 with errno set (EPERM:
 * owned by another user or writable by group or others; ELOOP: a symlink;
 * ENOTDIR: not a folder).
 */
int rkd_dir_below(const char *base, const char *rel, mode_t mode);
/* rkd_write_atomic of `name` in the folder `dirfd` (openat, renameat, no symlink followed). */
int rkd_write_atomic_at(int dirfd, const char *name, const char *text);
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
