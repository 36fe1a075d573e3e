/* Job tokens and the files that must stay private (secrets.h). Nettle: Debian nettle-dev. */
#include "daemon/identity/secrets.h"

#include <errno.h>
#include <fcntl.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static void hex(const uint8_t *d, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[2 * n] = '\0';
}

int rkd_secret_load(const char *path, unsigned char key[RKD_KEY_BYTES], struct rk_error *err)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		unsigned char k[RKD_KEY_BYTES];
		if (getrandom(k, sizeof(k), 0) != (ssize_t)sizeof(k))
			return rk_error_set(err, RK_EIO, "%s: no random bytes: %s", path,
			                    strerror(errno));
		char tmp[4200];
		if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
			return rk_error_set(err, RK_ERANGE, "%s: path too long", path);
		int w = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		int ok = w >= 0 && fchmod(w, 0600) == 0 &&
		         write(w, k, sizeof(k)) == (ssize_t)sizeof(k) && fsync(w) == 0;
		if (w >= 0)
			ok = close(w) == 0 && ok;
		/* link, not rename: a second rubickd racing us keeps the first key */
		if (!ok || (link(tmp, path) && errno != EEXIST)) {
			int e = errno;
			unlink(tmp);
			return rk_error_set(err, RK_EIO, "%s: cannot create the token key: %s",
			                    path, strerror(e));
		}
		unlink(tmp);
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return rk_error_set(err, RK_EIO, "%s: %s", path, strerror(errno));
	struct stat st;
	int ret = 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
		ret = rk_error_set(err, RK_EPERM, "%s: not a file of rubickd's user (uid %u)", path,
		                   (unsigned)geteuid());
	else if ((st.st_mode & 077) && fchmod(fd, 0600))
		ret = rk_error_set(err, RK_EPERM, "%s: mode %03o and cannot chmod 600: %s", path,
		                   (unsigned)(st.st_mode & 0777), strerror(errno));
	else if (read(fd, key, RKD_KEY_BYTES) != RKD_KEY_BYTES)
		ret = rk_error_set(err, RK_EIO,
		                   "%s: not a %d-byte key (remove it to make a new one;"
		                   " running jobs then report with their old tokens only)",
		                   path, RKD_KEY_BYTES);
	close(fd);
	return ret;
}

void rkd_token_derive(const unsigned char key[RKD_KEY_BYTES], int64_t job_id,
                      char out[RKD_TOKEN_HEX])
{
	char msg[64];
	int n = snprintf(msg, sizeof(msg), "rubick-job-token:%lld", (long long)job_id);
	struct hmac_sha256_ctx ctx;
	uint8_t d[SHA256_DIGEST_SIZE];
	hmac_sha256_set_key(&ctx, RKD_KEY_BYTES, key);
	hmac_sha256_update(&ctx, (size_t)n, (const uint8_t *)msg);
	hmac_sha256_digest(&ctx, sizeof(d), d);
	hex(d, sizeof(d), out);
}

void rkd_token_hash(const char *text, char out[RKD_TOKEN_HEX])
{
	struct sha256_ctx ctx;
	uint8_t d[SHA256_DIGEST_SIZE];
	sha256_init(&ctx);
	sha256_update(&ctx, strlen(text), (const uint8_t *)text);
	sha256_digest(&ctx, sizeof(d), d);
	hex(d, sizeof(d), out);
}

int rkd_token_eq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	/* the lengths are no secret (every token and hash has 64 digits) */
	return la == lb && memeql_sec(a, b, la);
}

int rkd_secret_db_files(const char *db, struct rk_error *err)
{
	static const char *const ext[] = {"", "-wal", "-shm", ".key"};
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		char path[4200];
		if ((size_t)snprintf(path, sizeof(path), "%s%s", db, ext[i]) >= sizeof(path))
			return rk_error_set(err, RK_ERANGE, "%s: path too long", db);
		struct stat st;
		if (lstat(path, &st))
			continue; /* -wal and -shm come and go */
		if (S_ISREG(st.st_mode) && (st.st_mode & 077) && chmod(path, 0600))
			return rk_error_set(err, RK_EIO,
			                    "%s: cannot make it private (chmod 600): %s", path,
			                    strerror(errno));
	}
	return 0;
}
