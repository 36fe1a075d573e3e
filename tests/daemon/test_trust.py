"""rubickd takes orders only from files that are its own (docs/rubickd.8,
SECURITY): as root, a config or token file another user owns (mode 0600 and
all), or a config in a folder others may write without the sticky bit, is
refused at start-up with a message naming the file, its owner and the owner
expected. The files are created by a throwaway user, as an attacker would."""
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
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        users.remove()
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("trust ok: files another user owns or may replace are refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
