"""Helpers for the rubickd tests: start a real daemon on loopback, call its API."""
import atexit
import json
import os
import re
import signal
import subprocess
import tempfile
import time
import urllib.request
import urllib.error

BUILD = os.environ.get("RK_BUILD_DIR", "build")
RUBICKD = os.path.join(BUILD, "src", "daemon", "rubickd")
TOKEN = "admin-token-0123456789abcdef"
ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdefgh"


class Daemon:
    def __init__(self, workdir=None, cluster="1x4", extra=(), round_ms=100, grace_ms=2000,
                 conf_extra=""):
        self.dir = workdir or tempfile.mkdtemp(prefix="rkd-")
        for name, tok in (("admin.token", TOKEN), ("alice.token", ALICE), ("bob.token", BOB)):
            p = os.path.join(self.dir, name)
            with open(p, "w") as f:
                f.write(tok + "\n")
            os.chmod(p, 0o600)
        self.conf = os.path.join(self.dir, "rubickd.conf")
        with open(self.conf, "w") as f:
            # allow_root: CI runs as root; tenants' users are tested in test_security.py
            f.write("admin_token_file = %s/admin.token\nallow_root = yes\n[tenant alice]\ntoken_file = %s/alice.token\n"
                    "gpu_quota = 3\nguaranteed_gpu_quota = 2\n[tenant bob]\ntoken_file = %s/bob.token\n" % ((self.dir,) * 3))
        if conf_extra:  # top-level keys: before the first [tenant] section
            with open(self.conf) as f:
                text = f.read()
            with open(self.conf, "w") as f:
                f.write(conf_extra + text)
        os.chmod(self.conf, 0o600)  # rubickd refuses a config others may read or change
        self.args = [RUBICKD, "--config", self.conf, "--listen", "127.0.0.1:0", "--db",
                     os.path.join(self.dir, "state.db"), "--cluster", cluster,
                     "--round-ms", str(round_ms), "--grace-ms", str(grace_ms)] + list(extra)
        self.proc = None
        self.url = None
        atexit.register(self.reap)

    def reap(self):
        """At the test's exit: kill every process its jobs left, found by this daemon's
        folder in their command line or working directory. Job supervisors outlive
        rubickd by design (a restarted daemon adopts them), so a test that ends with
        jobs running would leave them running on the machine."""
        prefix = os.path.realpath(self.dir) + "/"
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
                cwd = os.readlink("/proc/%s/cwd" % pid) + "/"
            except OSError:
                continue
            if prefix in cmd or cwd.startswith(prefix):
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass

    def start(self):
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=open(
            os.path.join(self.dir, "rubickd.err"), "a"), text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"listening on (\S+)", line)
        if not m:
            self.proc.wait(10)
            raise RuntimeError("rubickd did not start: " + open(os.path.join(self.dir, "rubickd.err")).read())
        self.url = m.group(1)
        return self

    def kill9(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        """SIGTERM and wait: a clean exit (status 0) is part of every test, so
        sanitizer reports (leaks at exit, errors) fail it."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            rc = self.proc.wait(60)
            self.proc = None
            if rc != 0:
                raise AssertionError("rubickd exited with %d: %s" % (
                    rc, open(os.path.join(self.dir, "rubickd.err")).read()[-4000:]))

    def call(self, method, path, body=None, token=TOKEN, raw=None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if token:
            req.add_header("Authorization", "Bearer " + token)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                text = r.read().decode()
                status = r.status
        except urllib.error.HTTPError as e:
            text = e.read().decode()
            status = e.code
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def cancel_all(self, timeout=30):
        """Cancel every job still active and wait for it to end, so that no job's
        supervisor outlives the test (supervisors survive rubickd by design)."""
        st, l = self.call("GET", "/v1/jobs")
        jobs = l.get("jobs", []) if st == 200 and isinstance(l, dict) else []
        live = [j["id"] for j in jobs if j.get("state") not in ("done", "failed", "cancelled")]
        for jid in live:
            self.call("DELETE", "/v1/jobs/%d" % jid)
        for jid in live:
            self.wait_state(jid, ["cancelled", "done", "failed"], timeout)

    def wait_state(self, job_id, states, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            st, j = self.call("GET", "/v1/jobs/%d" % job_id)
            if st == 200 and j["state"] in states:
                return j
            time.sleep(0.05)
        raise AssertionError("job %d never reached %s: %s" % (job_id, states, j))
