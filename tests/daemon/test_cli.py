"""The `rubick` client subcommands against a real rubickd on a unix socket:
tables, --json, and the exit codes of commands.h (2 usage, 3 server, 4 not found)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from rkd import Daemon, BUILD  # noqa: E402

RUBICK = os.path.join(BUILD, "src", "cli", "rubick")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def main():
    d = Daemon(cluster="2x4")
    sock = os.path.join(d.dir, "rubickd.sock")
    d.args[d.args.index("127.0.0.1:0")] = "unix:" + sock
    d.start()
    env = dict(os.environ, RUBICK_URL="unix:" + sock,
               RUBICK_TOKEN_FILE=os.path.join(d.dir, "admin.token"))

    def rk(*args, env_=None):
        p = subprocess.run([RUBICK] + list(args), env=env_ or env, capture_output=True, text=True,
                           timeout=60)
        return p.returncode, p.stdout, p.stderr

    try:
        rc, out, err = rk("submit", "--model", "bert", "--gpus", "2", "--iterations", "10",
                          "--command", "sleep 20", "--name", "cli-a")
        check(rc == 0 and out.startswith("submitted job 1"), "submit flags: %d %s %s" % (rc, out, err))
        spec = os.path.join(d.dir, "job.json")
        with open(spec, "w") as f:
            json.dump({"name": "cli-b", "model": "gpt2", "iterations": 5, "gpus": 1,
                       "command": "sleep 20"}, f)
        rc, out, err = rk("submit", spec, "--json")
        check(rc == 0 and json.loads(out)["id"] == 2, "submit file --json: %d %s %s" % (rc, out, err))
        rc, out, err = rk("queue")
        check(rc == 0 and "cli-a" in out and "cli-b" in out and "STATE" in out, "queue: %s" % out)
        rc, out, err = rk("queue", "--state", "done", "--json")
        check(rc == 0 and json.loads(out)["count"] == 0, "queue --state --json: %s" % out)
        rc, out, err = rk("show", "1")
        check(rc == 0 and "job 1  cli-a" in out and "history" in out, "show: %s" % out)
        rc, out, err = rk("nodes")
        check(rc == 0 and out.count("a800") == 2, "nodes: %s" % out)
        rc, out, err = rk("policy", "--json")
        check(rc == 0 and json.loads(out)["name"] == "fifo", "policy: %s" % out)
        rc, out, err = rk("policy", "srtf")
        check(rc == 0 and out.startswith("policy srtf"), "policy change: %s %s" % (out, err))
        rc, out, err = rk("cancel", "1", "2")
        check(rc == 0 and "cancelled job 2" in out, "cancel: %s %s" % (out, err))
        # exit codes
        rc, out, err = rk("show", "77")
        check(rc == 4 and "does not exist" in err, "show missing -> 4: %d %s" % (rc, err))
        rc, out, err = rk("cancel", "1")
        check(rc == 1 and "already ended" in err, "cancel ended -> 1: %d %s" % (rc, err))
        rc, out, err = rk("show", "x")
        check(rc == 2, "bad id -> 2: %d" % rc)
        rc, out, err = rk("queue", "--bogus")
        check(rc == 2, "bad flag -> 2: %d" % rc)
        rc, out, err = rk("submit", "--model", "bert", "--gpus", "two")
        check(rc == 2, "bad integer -> 2: %d" % rc)
        rc, out, err = rk("submit", "--model", "bert", "--gpus", "2", "--iterations", "1",
                          "--command", "true", "--plan", "dp=9")
        check(rc == 1 and "plan" in err, "invalid plan -> 1: %d %s" % (rc, err))
        rc, out, err = rk("queue", env_=dict(env, RUBICK_URL="unix:" + d.dir + "/nothing"))
        check(rc == 3 and "cannot reach" in err, "unreachable -> 3: %d %s" % (rc, err))
        rc, out, err = rk("submit", spec, env_=dict(env, RUBICK_TOKEN_FILE=os.path.join(d.dir, "job.json")))
        check(rc == 2 and "token" in err, "bad token -> 2: %d %s" % (rc, err))
    finally:
        d.stop()
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
