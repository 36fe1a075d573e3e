"""rubickd takes orders only from files that are its own (docs/rubickd.8,
SECURITY): as root, a config or token file another user owns (mode 0600 and
all), or a config in a folder others may write without the sticky bit, is
refused at start-up with a message naming the file, its owner and the owner
expected. The same holds for the database, its WAL, shared-memory and lock files and the
state folder, and none of them may be a link. A new database over an earlier one's job
folders moves them aside rather than hand job N's files to the new job N. The files are
created by a throwaway user, as an attacker would."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from rkd import Daemon  # noqa: E402
from secusers import Users  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def as_user(pw, path, text):
    """Write `path` as that user, mode 0600."""
    subprocess.run(["sh", "-c", 'umask 077; cat > "$1"', "sh", path], input=text, text=True,
                   user=pw.pw_uid, group=pw.pw_gid, check=True)


def refused(d, want, what):
    try:
        d.start()
    except RuntimeError as e:
        check(want in str(e), "%s: the refusal does not say %r: %s" % (what, want, e))
        print("%s: refused: %s" % (what, str(e).strip().splitlines()[-1]))
        return
    d.stop()
    check(False, "%s: rubickd started" % what)


def with_config(d, path):
    d.args[d.args.index("--config") + 1] = path


def main():
    if os.geteuid() != 0:
        print("SKIP: the trust test creates a user and needs root")
        return 77
    users = Users(["t"])
    pw = users.pw("t")
    owner = "owned by %s (uid %d), expected rubickd's user root (uid 0)" % (pw.pw_name, pw.pw_uid)
    tmp = tempfile.mkdtemp(prefix="rkd-trust-")
    try:
        os.chmod(tmp, 0o755)
        mine = os.path.join(tmp, "mine")  # the user's own folder, where it writes its files
        os.mkdir(mine, 0o755)
        os.chown(mine, pw.pw_uid, pw.pw_gid)

        # a config the user wrote (0600, allow_root = yes): not rubickd's to obey
        d = Daemon()
        conf = os.path.join(mine, "rubickd.conf")
        as_user(pw, conf, open(d.conf).read())
        with_config(d, conf)
        refused(d, "--config %s: %s" % (conf, owner), "a config owned by another user")

        # rubickd's config naming an admin token the user wrote
        d = Daemon()
        tok = os.path.join(mine, "admin.token")
        as_user(pw, tok, "attacker-token-0123456789abcdef\n")
        text = open(d.conf).read().replace(os.path.join(d.dir, "admin.token"), tok)
        with open(d.conf, "w") as f:
            f.write(text)
        refused(d, "admin_token_file %s: %s" % (tok, owner), "an admin token owned by another user")

        # ... or a tenant's token the user wrote
        d = Daemon()
        tok = os.path.join(mine, "alice.token")
        as_user(pw, tok, "attacker-alice-0123456789abcdef\n")
        text = open(d.conf).read().replace(os.path.join(d.dir, "alice.token"), tok)
        with open(d.conf, "w") as f:
            f.write(text)
        refused(d, "tenant alice token_file %s: %s" % (tok, owner),
                "a tenant token owned by another user")

        # rubickd's own config in a folder anyone may write (no sticky bit): anyone could swap it
        for mode, ok in ((0o777, False), (0o1777, True)):
            d = Daemon()
            shared = os.path.join(tmp, "shared-%o" % mode)
            os.mkdir(shared)
            os.chmod(shared, mode)
            conf = os.path.join(shared, "rubickd.conf")
            shutil.copy(d.conf, conf)
            os.chmod(conf, 0o600)
            with_config(d, conf)
            if ok:  # sticky: only the owner may rename or remove it
                d.start()
                d.stop()
            else:
                refused(d, "--config %s: its folder %s is writable by others without the sticky"
                        " bit" % (conf, shared), "a config in a folder others may write")

        # the database and its state folder, pre-created by the user where --db points
        def db_in(d, path):
            d.args[d.args.index("--db") + 1] = path
        d = Daemon()
        db = os.path.join(mine, "planted.db")
        as_user(pw, db, "")
        db_in(d, db)
        refused(d, "--db %s: %s" % (db, owner), "a database owned by another user")
        os.unlink(db)
        d = Daemon()
        db = os.path.join(mine, "jobs.db")
        subprocess.run(["mkdir", "-m", "755", db + ".jobs"], user=pw.pw_uid, group=pw.pw_gid, check=True)
        db_in(d, db)
        refused(d, "--state-dir %s.jobs: %s" % (db, owner), "a state folder owned by another user")
        d = Daemon()
        db = os.path.join(mine, "wal.db")
        subprocess.run(["ln", "-s", "/etc/cron.d/planted", db + "-wal"], user=pw.pw_uid,
                       group=pw.pw_gid, check=True)
        db_in(d, db)
        refused(d, "--db %s-wal: is a symbolic link" % db, "a database WAL that is a link")
        check(not os.path.exists("/etc/cron.d/planted"), "nothing written through the link")

        # a new database over an earlier one's job folders: they are moved aside, never inherited
        d = Daemon().start()
        st, j = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 5, "gpus": 1,
                                            "command": "echo old-secret"})
        d.wait_state(j["id"], ["done", "failed"])
        d.stop()
        db = d.args[d.args.index("--db") + 1]
        old_log = os.path.join(db + ".jobs", "job-%d" % j["id"], "log")
        check(os.path.exists(old_log), "the first database's job wrote %s" % old_log)
        for side in ("", "-wal", "-shm"):
            if os.path.exists(db + side):
                os.rename(db + side, db + side + ".corrupt")  # as rubickd(8) advises
        d.start()
        st, j2 = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 5, "gpus": 1,
                                             "command": "sleep 30"})
        d.stop()
        err = open(os.path.join(d.dir, "rubickd.err")).read()
        aside = [n for n in os.listdir(os.path.dirname(db))
                 if n.startswith(os.path.basename(db) + ".jobs.before-")]
        check(j2["id"] == j["id"], "the new database starts at job %d again: %s" % (j["id"], j2))
        check(len(aside) == 1 and "moved" in err and aside[0] in err,
              "the old job folders moved aside, and said so: %s / %s" % (aside, err.strip()[-300:]))
        new_log = os.path.join(db + ".jobs", "job-%d" % j2["id"], "log")
        check(not os.path.exists(new_log) or "old-secret" not in open(new_log).read(),
              "the new job %d does not inherit the old one's log" % j2["id"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        users.remove()
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("trust ok: files another user owns or may replace are refused; a new database's"
          " job folders start empty")
    return 0


if __name__ == "__main__":
    sys.exit(main())
