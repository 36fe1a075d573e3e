"""rubickd on a shared machine, local engine (issue 12; docs/rubickd.8, SECURITY):
as root, with two throwaway users, a tenant's job runs as its user, cannot read
the admin token, the config, the database, its key or another tenant's folder,
cannot forge its own run records, sees none of rubickd's environment; the
database holds no plaintext job token and its files are private whatever the
umask; a tenant without user is refused, allow_root = yes runs as root; an old
database's plaintext tokens are hashed by the migration."""
import hashlib
import os
import re
import shutil
import sqlite3
import stat
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from rkd import ALICE, BOB, TOKEN, Daemon  # noqa: E402
from secusers import Users  # noqa: E402

CAROL = "carol-token-0123456789abcdef"
DAVE = "dave-token-0123456789abcdefg"
MARKER = "rkd-secret-marker-%d" % os.getpid()

# What a job tries, as its user; one line per attempt: "<ok|denied> <what>".
PROBE = r"""#!/bin/sh
out=$RUBICK_CKPT_DIR/probe.out
{
echo "uid $(id -u)"
echo "gid $(id -g)"
echo "groups $(id -G)"
echo "pwd $(pwd)"
try() { what=$1; shift; if "$@" >/dev/null 2>&1; then echo "ok $what"; else echo "denied $what"; fi; }
try admin_token cat "$1"
try config cat "$2"
try db cat "$3"
try db_wal cat "$3-wal"
try db_key cat "$3.key"
try other_ckpt ls "$4/ckpt"
try other_secret cat "$4/ckpt/secret"
try other_log cat "$4/log"
try other_plan cat "$4/plan"
try other_write touch "$4/ckpt/x"
try own_record_write sh -c "echo exit 0 > $5/run-1/exit"
try own_record_dir touch "$5/run-1/forged"
try state_list ls "$6"
try daemon_environ cat "/proc/$7/environ"
try own_ckpt_write touch "$RUBICK_CKPT_DIR/mine"
try own_work_write touch ./mine
try own_plan cat "$RUBICK_PLAN_FILE"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $RUBICK_JOB_TOKEN" \
	-d '{"iters_done": 1, "throughput_sps": 10}' "$RUBICK_URL/v1/jobs/$RUBICK_JOB_ID/report")
echo "report $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer x$RUBICK_JOB_TOKEN" \
	-d '{"iters_done": 1}' "$RUBICK_URL/v1/jobs/$RUBICK_JOB_ID/report")
echo "forged_report $code"
echo "token $RUBICK_JOB_TOKEN"
} >"$out.tmp" 2>&1
env >"$RUBICK_CKPT_DIR/env.out"
mv "$out.tmp" "$out"
"""


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def mode(p):
    return stat.S_IMODE(os.lstat(p).st_mode)


def write_conf(d, users, extra=""):
    toks = {"alice": ALICE, "bob": BOB, "carol": CAROL, "dave": DAVE}
    for name, tok in toks.items():
        p = os.path.join(d.dir, name + ".token")
        with open(p, "w") as f:
            f.write(tok + "\n")
        os.chmod(p, 0o600)
    with open(d.conf, "w") as f:
        f.write("admin_token_file = %s/admin.token\n%s" % (d.dir, extra))
        f.write("[tenant alice]\ntoken_file = %s/alice.token\nuser = %s\n" % (d.dir, users.names["a"]))
        f.write("[tenant bob]\ntoken_file = %s/bob.token\nuser = %s\n" % (d.dir, users.names["b"]))
        f.write("[tenant carol]\ntoken_file = %s/carol.token\n" % d.dir)
        f.write("[tenant dave]\ntoken_file = %s/dave.token\nallow_root = yes\n" % d.dir)
    os.chmod(d.conf, 0o600)


def submit(d, token, command, name, env=None):
    body = {"name": name, "model": "bert", "iterations": 10, "gpus": 1, "command": command}
    if env:
        body["env"] = env
    return d.call("POST", "/v1/jobs", body, token=token)


def wait_file(path, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(path):
            return open(path).read()
        time.sleep(0.05)
    raise AssertionError("%s never appeared" % path)


# The documented job environment (docs/rubickd.8, SECURITY), and what the shell adds.
ENV_LOCAL = r"PATH|HOME|USER|LOGNAME|LANG|CUDA_VISIBLE_DEVICES|RUBICK_\w+|PWD|SHLVL|OLDPWD|_|RKD_JOB_VAR"
JOB_ENV = {"RKD_JOB_VAR": "asked for, with = and spaces", "LANG": "C"}  # the submission's env


def tenants_and_files(d, users, env_allowed=ENV_LOCAL, on_job=None):
    """Bob's job leaves a secret; alice's job probes (PROBE). on_job(job) checks more."""
    state = os.path.join(d.dir, "state.db.jobs")
    a, b = users.pw("a"), users.pw("b")
    # bob's job leaves a secret in its folder
    st, jb = submit(d, BOB, "echo bob-secret > \"$RUBICK_CKPT_DIR/secret\"; id -u > \"$RUBICK_CKPT_DIR/uid\"",
                    "bob")
    check(st == 201, "bob's submission: %s %s" % (st, jb))
    jb = d.wait_state(jb["id"], ["done", "failed"])
    check(jb["state"] == "done", "bob's job: %s %s" % (jb, d.call("GET", "/v1/jobs/%d" % jb["id"])))
    bob_dir = os.path.join(state, "job-%d" % jb["id"])
    check(open(os.path.join(bob_dir, "ckpt", "uid")).read().strip() == str(b.pw_uid),
          "bob's job ran as bob")
    probe = os.path.join(d.dir, "probe.sh")
    with open(probe, "w") as f:
        f.write(PROBE)
    os.chmod(probe, 0o755)
    # alice's id is the next one: her folder is job-(bob + 1)
    alice_dir = os.path.join(state, "job-%d" % (jb["id"] + 1))
    cmd = "sh %s %s %s %s %s %s %s %d" % (probe, os.path.join(d.dir, "admin.token"), d.conf,
                                          os.path.join(d.dir, "state.db"), bob_dir, alice_dir,
                                          state, d.proc.pid)
    st, ja = submit(d, ALICE, cmd, "alice", env=JOB_ENV)
    check(st == 201 and ja["id"] == jb["id"] + 1, "alice's submission: %s %s" % (st, ja))
    ja = d.wait_state(ja["id"], ["done", "failed"])
    log = open(os.path.join(alice_dir, "log")).read()
    check(ja["state"] == "done", "alice's job: %s\n%s" % (ja, log))
    out = wait_file(os.path.join(alice_dir, "ckpt", "probe.out"))
    if on_job:
        on_job(ja)
    got = {}
    for line in out.splitlines():
        k, _, v = line.partition(" ")
        if k in ("ok", "denied"):
            got[v] = k
        else:
            got[k] = v
    check(got.get("uid") == str(a.pw_uid), "alice's job runs as uid %s, not %s:\n%s" % (
        got.get("uid"), a.pw_uid, out))
    check(got.get("gid") == str(a.pw_gid) and got.get("groups") == str(a.pw_gid),
          "alice's job has gid %s groups %s, want only %s" % (got.get("gid"), got.get("groups"), a.pw_gid))
    check(got.get("pwd") == os.path.join(alice_dir, "work"), "working folder: %s" % got.get("pwd"))
    for what in ("admin_token", "config", "db", "db_wal", "db_key", "other_ckpt", "other_secret",
                 "other_log", "other_plan", "other_write", "own_record_write", "own_record_dir",
                 "state_list", "daemon_environ"):
        check(got.get(what) == "denied", "alice's job could: %s (%s)\n%s" % (what, got.get(what), out))
    for what in ("own_ckpt_write", "own_work_write", "own_plan"):
        check(got.get(what) == "ok", "alice's job could not: %s\n%s" % (what, out))
    check(got.get("report") == "200", "a report with the job's token: %s" % got.get("report"))
    check(got.get("forged_report") == "404", "a forged token: %s" % got.get("forged_report"))
    # the environment: the documented set, nothing of rubickd's
    env = dict(l.split("=", 1) for l in open(os.path.join(alice_dir, "ckpt", "env.out")).read().splitlines()
               if "=" in l)
    check(MARKER not in open(os.path.join(alice_dir, "ckpt", "env.out")).read(),
          "rubickd's environment leaked into the job: %s" % env)
    check(env.get("HOME") == a.pw_dir and env.get("USER") == a.pw_name and env.get("LOGNAME") == a.pw_name,
          "HOME/USER/LOGNAME: %s" % env)
    check(env.get("PATH") == "/usr/local/bin:/usr/bin:/bin", "PATH: %s" % env.get("PATH"))
    check(env.get("RKD_JOB_VAR") == JOB_ENV["RKD_JOB_VAR"] and env.get("LANG") == "C",
          "the submission's env: %s" % env)
    allowed = re.compile(r"^(%s)$" % env_allowed)
    extra = sorted(k for k in env if not allowed.match(k))
    print("job environment: %s" % " ".join(sorted(env)))
    check(not extra, "variables outside the documented set: %s" % extra)
    # folder ownership and modes
    check(mode(state) == 0o711 and os.stat(state).st_uid == 0, "state folder %o" % mode(state))
    check(mode(alice_dir) == 0o711 and os.stat(alice_dir).st_uid == 0, "job folder %o" % mode(alice_dir))
    for sub, m in (("ckpt", 0o700), ("work", 0o700), ("log", 0o600), ("plan", 0o600)):
        p = os.path.join(alice_dir, sub)
        check(os.stat(p).st_uid == a.pw_uid and mode(p) == m,
              "%s: uid %d mode %o" % (p, os.stat(p).st_uid, mode(p)))
    run1 = os.path.join(alice_dir, "run-1")
    check(os.stat(run1).st_uid == 0 and mode(run1) == 0o700, "run records: %o" % mode(run1))
    return got["token"].strip(), ja["id"]


def no_plaintext_tokens(d, token, jid):
    db = os.path.join(d.dir, "state.db")
    for ext in ("", "-wal", "-shm", ".key"):
        if os.path.exists(db + ext):
            check(mode(db + ext) == 0o600, "%s%s has mode %o" % (db, ext, mode(db + ext)))
            check(token.encode() not in open(db + ext, "rb").read(), "plaintext token in %s%s" % (db, ext))
    con = sqlite3.connect(db)
    rows = con.execute("SELECT id, job_token FROM jobs").fetchall()
    con.close()
    check(rows and all(re.fullmatch(r"[0-9a-f]{64}", t) for _, t in rows), "stored tokens: %s" % rows)
    stored = dict(rows)[jid]
    check(stored == hashlib.sha256(token.encode()).hexdigest(), "stored = SHA-256 of the job's token")


def supervisor_env(d, users):
    """The submission's env reaches the job only, never the root supervisor (LD_PRELOAD!)."""
    st, j = submit(d, ALICE, "sleep 30", "sleeper", env={"RKD_JOB_VAR": "x", "LD_PRELOAD": ""})
    check(st == 201, "sleeper: %s %s" % (st, j))
    d.wait_state(j["id"], ["running"])
    run = os.path.join(d.dir, "state.db.jobs", "job-%d" % j["id"], "run-1")
    leader = int(wait_file(os.path.join(run, "pid")).split()[0])
    sup = [l.split()[1] for l in open("/proc/%d/status" % leader) if l.startswith("PPid:")][0]
    end = time.time() + 10  # the pid is recorded before the exec: wait for it
    while True:
        job_env = open("/proc/%d/environ" % leader, "rb").read().split(b"\0")
        if b"RKD_JOB_VAR=x" in job_env or time.time() > end:
            break
        time.sleep(0.05)
    sup_env = open("/proc/%s/environ" % sup, "rb").read().split(b"\0")
    check(b"RKD_JOB_VAR=x" in job_env and b"LD_PRELOAD=" in job_env, "job env: %s" % job_env)
    check(not any(e.startswith((b"RKD_JOB_VAR", b"LD_PRELOAD", b"RUBICK_JOB_TOKEN")) for e in sup_env),
          "the supervisor (uid 0) got the job's variables: %s" % sup_env)
    check(os.stat("/proc/%s" % sup).st_uid == 0 and os.stat("/proc/%d" % leader).st_uid == users.pw("a").pw_uid,
          "supervisor as root, job as alice")
    check(mode(os.path.join(run, "env")) == 0o600, "run-1/env is rubickd's")
    st, _ = d.call("DELETE", "/v1/jobs/%d" % j["id"], token=ALICE)
    check(st == 200, "cancel: %s" % st)
    d.wait_state(j["id"], ["cancelled"])
    for bad in ("RUBICK_URL", "SLURM_CONF", "CUDA_VISIBLE_DEVICES", "A-B"):
        st, r = submit(d, ALICE, "true", "bad", env={bad: "x"})
        check(st == 400 and r["error"]["field"] == "env" and bad in r["error"]["message"],
              "env %s: %s %s" % (bad, st, r))


def refusals(d, users):
    st, j = submit(d, CAROL, "true", "carol")
    check(st == 403 and "carol" in str(j) and "user" in str(j), "carol (no user, as root): %s %s" % (st, j))
    st, j = submit(d, TOKEN, "true", "admin")
    check(st == 403 and "default" in str(j), "admin's job with no tenant and no job_user: %s %s" % (st, j))
    st, j = submit(d, DAVE, "id -u > \"$RUBICK_CKPT_DIR/uid\"", "dave")
    check(st == 201, "dave (allow_root = yes): %s %s" % (st, j))
    j = d.wait_state(j["id"], ["done", "failed"])
    check(j["state"] == "done", "dave's job: %s" % j)
    uid = open(os.path.join(d.dir, "state.db.jobs", "job-%d" % j["id"], "ckpt", "uid")).read().strip()
    check(uid == "0", "allow_root = yes ran as uid %s" % uid)
    # the admin may submit for a tenant: it runs as that tenant's user
    st, j = d.call("POST", "/v1/jobs", {"name": "for-bob", "model": "bert", "iterations": 10, "gpus": 1,
                                        "tenant": "bob", "command": "id -u > \"$RUBICK_CKPT_DIR/uid\""})
    check(st == 201, "admin for bob: %s %s" % (st, j))
    j = d.wait_state(j["id"], ["done", "failed"])
    uid = open(os.path.join(d.dir, "state.db.jobs", "job-%d" % j["id"], "ckpt", "uid")).read().strip()
    check(uid == str(users.pw("b").pw_uid), "the admin's job for bob ran as uid %s" % uid)


def startup_checks(users):
    """Config mistakes are refused at start-up with a message naming the key."""
    for extra, conf_mode, want in (
            ("[tenant eve]\nuser = no-such-user-%d\n" % os.getpid(), 0o600, "does not exist"),
            ("[tenant eve]\nuser = root\n", 0o600, "allow_root"),
            ("[tenant eve]\ngroup = root\n", 0o600, "needs user"),
            ("", 0o644, "chmod 600")):
        d = Daemon()
        text = open(d.conf).read().replace("allow_root = yes\n", "")
        with open(d.conf, "w") as f:
            f.write(text + extra)
        os.chmod(d.conf, conf_mode)
        try:
            d.start()
            d.stop()
            raise AssertionError("rubickd started with %r (mode %o)" % (extra, conf_mode))
        except RuntimeError as e:
            check(want in str(e), "start-up refusal for %r: %s" % (extra, e))


def migration(users):
    """A schema-3 database with a plaintext token: the migration keeps only its hash."""
    d = Daemon()
    d.start()
    st, j = d.call("POST", "/v1/jobs", {"name": "old", "model": "bert", "iterations": 10, "gpus": 1,
                                        "command": "true"})
    check(st == 201, "submission: %s %s" % (st, j))
    d.wait_state(j["id"], ["done", "failed"])
    d.stop()
    db = os.path.join(d.dir, "state.db")
    con = sqlite3.connect(db)
    old = "0123456789abcdef0123456789abcdef"
    con.execute("UPDATE jobs SET job_token=? WHERE id=?", (old, j["id"]))
    con.execute("ALTER TABLE jobs DROP COLUMN hold")  # schema 5's column
    con.execute("PRAGMA user_version=3")
    con.commit()
    con.close()
    d.start()
    d.stop()
    con = sqlite3.connect(db)
    (t,) = con.execute("SELECT job_token FROM jobs WHERE id=?", (j["id"],)).fetchone()
    (v,) = con.execute("PRAGMA user_version").fetchone()
    con.close()
    check(v >= 4 and t == hashlib.sha256(old.encode()).hexdigest(), "migrated token: %s (v%d)" % (t, v))


def main():
    if os.geteuid() != 0:
        print("SKIP: the security test creates users and needs root")
        return 77
    users = Users(["a", "b"])
    old_umask = os.umask(0)  # rubickd's files must be private whatever the umask it starts with
    d = None
    work = tempfile.mkdtemp(prefix="rkd-sec-")
    try:
        os.chmod(work, 0o711)  # the jobs' users reach their folders under it, list nothing
        d = Daemon(workdir=work)
        write_conf(d, users)
        os.environ["RKD_TEST_MARKER"] = MARKER
        os.environ["PATH"] = "/" + MARKER + ":" + os.environ.get("PATH", "/usr/bin:/bin")
        d.start()
        os.umask(old_umask)
        token, jid = tenants_and_files(d, users)
        no_plaintext_tokens(d, token, jid)
        supervisor_env(d, users)
        refusals(d, users)
        d.stop()
        startup_checks(users)
        migration(users)
        print("security ok: jobs run as their tenants' users, read none of rubickd's or other"
              " tenants' files, get a clean environment; tokens only hashed")
        return 0
    finally:
        os.umask(old_umask)
        if d:
            d.stop()
        users.remove()
        shutil.rmtree(work, ignore_errors=True)  # files of users that no longer exist


if __name__ == "__main__":
    sys.exit(main())
