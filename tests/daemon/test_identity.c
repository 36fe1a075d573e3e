/*
 * Tenants to Unix users (identity.c) and job tokens (secrets.c): every
 * documented refusal, the order user > job_user > rubickd's own user (when
 * unprivileged) > root (allow_root), the clean environment, token derivation
 * against Python's hmac/hashlib, constant-time comparison, the key file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/identity/config.h"
#include "daemon/identity/identity.h"
#include "daemon/identity/secrets.h"

static void conf(struct rkd_config *c, const char *text)
{
	struct rk_error e;
	rkd_config_defaults(c);
	assert_int_equal(rkd_config_parse(c, text, "t.conf", &e), 0);
}

static void idmap_order(void **state)
{
	(void)state;
	static struct rkd_config c;
	struct rkd_idmap m;
	struct rk_error e;
	const struct rkd_ident *id;
	int root = geteuid() == 0;
	conf(&c, "[tenant a]\n[tenant b]\nallow_root = yes\n");
	assert_int_equal(rkd_idmap_init(&m, &c, &e), 0);
	assert_int_equal(m.privileged, root);
	if (root) {
		/* as root, a tenant without user is refused, naming it; allow_root runs as root */
		assert_int_equal(rkd_idmap_find(&m, "a", &id, &e), RK_EPERM);
		assert_non_null(strstr(e.msg, "tenant 'a' names no Unix user"));
		assert_int_equal(rkd_idmap_find(&m, "nosuch", &id, &e), RK_EPERM);
		assert_int_equal(rkd_idmap_find(&m, "b", &id, &e), 0);
		assert_int_equal(id->uid, 0);
	} else {
		/* unprivileged: every job runs as rubickd's user */
		assert_int_equal(rkd_idmap_find(&m, "a", &id, &e), 0);
		assert_int_equal(id->uid, geteuid());
		assert_int_equal(rkd_idmap_find(&m, "b", &id, &e), 0);
		assert_int_equal(id->uid, geteuid());
	}
	rkd_idmap_fini(&m);
	if (!root)
		return;
	/* a user beats job_user, which beats allow_root */
	conf(&c, "job_user = nobody\n[tenant a]\nuser = root\nallow_root = yes\n[tenant b]\n"
		 "allow_root = yes\n");
	assert_int_equal(rkd_idmap_init(&m, &c, &e), 0);
	assert_int_equal(rkd_idmap_find(&m, "a", &id, &e), 0);
	assert_int_equal(id->uid, 0);
	assert_string_equal(id->user, "root");
	assert_int_equal(rkd_idmap_find(&m, "b", &id, &e), 0);
	assert_string_equal(id->user, "nobody");
	assert_int_equal(rkd_idmap_find(&m, "default", &id, &e), 0);
	assert_string_equal(id->user, "nobody");
	rkd_idmap_fini(&m);
	/* group sets the primary gid */
	conf(&c, "[tenant a]\nuser = nobody\ngroup = root\n");
	assert_int_equal(rkd_idmap_init(&m, &c, &e), 0);
	assert_int_equal(rkd_idmap_find(&m, "a", &id, &e), 0);
	assert_int_equal(id->gid, 0);
	assert_string_equal(id->home, "/nonexistent");
	rkd_idmap_fini(&m);
}

static void idmap_errors(void **state)
{
	(void)state;
	static struct rkd_config c;
	struct rkd_idmap m;
	struct rk_error e;
	static const struct {
		const char *text, *msg;
		int root_only;
	} cases[] = {
		{"[tenant a]\nuser = no-such-user-rk\n", "tenant a: user: user 'no-such-user-rk' does"
							  " not exist", 0},
		{"[tenant a]\nuser = nobody\ngroup = no-such-group-rk\n",
		 "tenant a: user: group 'no-such-group-rk' does not exist", 0},
		{"[tenant a]\ngroup = root\n", "tenant a: group: needs user", 0},
		{"job_group = root\n", "job_group: needs job_user", 0},
		{"[tenant a]\nuser = root\n", "user 'root' is root; jobs run as root only with allow_root",
		 1},
		{"job_user = root\n", "job_user: user 'root' is root", 1},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].root_only && geteuid() != 0)
			continue;
		conf(&c, cases[i].text);
		int rc = rkd_idmap_init(&m, &c, &e);
		if (rc == 0)
			fail_msg("accepted: %s", cases[i].text);
		if (!strstr(e.msg, cases[i].msg))
			fail_msg("%s: got '%s', want '%s'", cases[i].text, e.msg, cases[i].msg);
	}
	if (geteuid() != 0) { /* unprivileged: no other user */
		conf(&c, "[tenant a]\nuser = root\nallow_root = yes\n");
		assert_int_not_equal(rkd_idmap_init(&m, &c, &e), 0);
		assert_non_null(strstr(e.msg, "cannot run jobs as another user"));
	}
}

static void clean_env(void **state)
{
	(void)state;
	struct rkd_ident id = {.uid = 1234, .gid = 1234, .user = "alice", .home = "/home/alice"};
	char *env[16];
	setenv("SLURM_CONF", "/etc/slurm/x.conf", 1);
	int n = rkd_ident_env(&id, 0, NULL, 0, env, 16);
	assert_int_equal(n, 5);
	const char *want[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/alice", "USER=alice",
			      "LOGNAME=alice", "LANG=C.UTF-8"};
	for (int i = 0; i < n; i++) {
		assert_string_equal(env[i], want[i]);
		free(env[i]);
	}
	assert_null(env[n]);
	n = rkd_ident_env(&id, 1, NULL, 0, env, 16);
	assert_int_equal(n, 6);
	assert_string_equal(env[5], "SLURM_CONF=/etc/slurm/x.conf");
	for (int i = 0; i < n; i++)
		free(env[i]);
	/* the submission's variables come last and replace a default of the same name */
	char *extra[] = {"LANG=fr_FR.UTF-8", "NCCL_DEBUG=INFO"};
	n = rkd_ident_env(&id, 0, extra, 2, env, 16);
	assert_int_equal(n, 6);
	assert_string_equal(env[3], "LOGNAME=alice");
	assert_string_equal(env[4], "LANG=fr_FR.UTF-8");
	assert_string_equal(env[5], "NCCL_DEBUG=INFO");
	for (int i = 0; i < n; i++)
		free(env[i]);
	assert_int_equal(rkd_ident_env(&id, 0, extra, 2, env, 8), RK_ERANGE);
	unsetenv("SLURM_CONF");
}

static void tokens(void **state)
{
	(void)state;
	unsigned char key[RKD_KEY_BYTES];
	for (int i = 0; i < RKD_KEY_BYTES; i++)
		key[i] = (unsigned char)i;
	char t[RKD_TOKEN_HEX], u[RKD_TOKEN_HEX], h[RKD_TOKEN_HEX];
	/* python3: hmac.new(bytes(range(32)), b'rubick-job-token:7', hashlib.sha256).hexdigest() */
	rkd_token_derive(key, 7, t);
	assert_string_equal(t, "defdeb9305413ba125d3538db88c3d6525973152b5a76f6ccb628cca27248522");
	rkd_token_derive(key, 8, u);
	assert_string_not_equal(t, u);
	key[0] ^= 1;
	rkd_token_derive(key, 7, u);
	assert_string_not_equal(t, u);
	rkd_token_hash("abc", h); /* FIPS 180-2 example */
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_true(rkd_token_eq(t, t));
	assert_false(rkd_token_eq(t, u));
	assert_false(rkd_token_eq("abc", "abcd"));
	assert_false(rkd_token_eq("", "a"));
}

static void key_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/rk-secrets-XXXXXX", path[128], db[128], p[160];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/db.key", dir);
	unsigned char a[RKD_KEY_BYTES], b[RKD_KEY_BYTES];
	struct rk_error e;
	mode_t old = umask(0);
	assert_int_equal(rkd_secret_load(path, a, &e), 0); /* created, private despite umask 0 */
	umask(old);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_size, RKD_KEY_BYTES);
	chmod(path, 0644);
	assert_int_equal(rkd_secret_load(path, b, &e), 0); /* the same key, made private again */
	assert_memory_equal(a, b, sizeof(a));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* a short key is refused, naming the file */
	snprintf(p, sizeof(p), "%s/short.key", dir);
	int fd = open(p, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0 && write(fd, "x", 1) == 1);
	close(fd);
	assert_int_not_equal(rkd_secret_load(p, b, &e), 0);
	assert_non_null(strstr(e.msg, "short.key: not a 32-byte key"));
	unlink(p);
	/* never through a symlink */
	snprintf(p, sizeof(p), "%s/link.key", dir);
	assert_int_equal(symlink(path, p), 0);
	assert_int_not_equal(rkd_secret_load(p, b, &e), 0);
	unlink(p);
	/* database files made 0600 */
	snprintf(db, sizeof(db), "%s/state.db", dir);
	const char *ext[] = {"", "-wal", "-shm"};
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", db, ext[i]);
		fd = open(p, O_WRONLY | O_CREAT, 0644);
		fchmod(fd, 0644);
		close(fd);
	}
	assert_int_equal(rkd_secret_db_files(db, &e), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", db, ext[i]);
		assert_int_equal(stat(p, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0600);
		unlink(p);
	}
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(idmap_order), cmocka_unit_test(idmap_errors),
		cmocka_unit_test(clean_env),   cmocka_unit_test(tokens),
		cmocka_unit_test(key_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
