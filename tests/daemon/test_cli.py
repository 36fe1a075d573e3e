"""The `rubick` client subcommands against a real rubickd on a unix socket:
tables, --json, and the exit codes of commands.h (2 usage, 3 server, 4 not found); `rubick
queue` as squeue (-h, -o, -t, -u, node names, TIME, JobHeld reasons) and errors under --json."""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from rkd import Daemon, BUILD  # noqa: E402

RUBICK = os.path.join(BUILD, "src", "cli", "rubick")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def wait_running(rk, ids, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        rc, out, err = rk("queue", "-h", "-t", "R", "-o", "%i")
        if rc == 0 and set(int(x) for x in out.split()) >= set(ids):
            return True
        time.sleep(0.2)
    return False


def squeue_cases(d, rk):
    """rubick queue as squeue: jobs 1 (2 GPUs) and 2 (1 GPU) run on n0 of 2x4."""
    check(wait_running(rk, [1, 2]), "jobs 1 and 2 run")
    rc, out, err = rk("queue")
    lines = out.splitlines()
    check(rc == 0 and lines[0].split() == ["JOBID", "NAME", "USER", "ST", "TIME", "NODES", "GPUS",
                                           "ALLOC_GPUS", "PLAN", "NODELIST(REASON)"],
          "queue: squeue's default columns: %s" % out)
    plans = {j["id"]: j["plan"] for j in json.loads(rk("queue", "--json")[1])["jobs"]}
    row = [x.split() for x in lines[1:] if x.split()[0] == "1"]
    check(row and row[0][3] == "R" and row[0][5] == "1" and row[0][8] == plans[1]
          and row[0][9] == "n0", "queue: job 1's row (R, 1 node, the full plan, n0): %s" % out)
    check(row and re.match(r"^\d+:\d\d$", row[0][4]), "queue: TIME as M:SS: %s" % out)
    # -h: no header; -o with several fields, the plan whole, node names
    rc, out, err = rk("queue", "-h", "-o", "%i|%j|%u|%T|%t|%D|%N|%b|%{alloc_gpus}|%{plan}|%R")
    check(rc == 0 and out.splitlines() == [
        "2|cli-b|default|RUNNING|R|1|n0|1|1|%s|n0" % plans[2],
        "1|cli-a|default|RUNNING|R|1|n0|2|2|%s|n0" % plans[1]], "queue -h -o: %s %s" % (out, err))
    rc, out, err = rk("queue", "--noheader", "--format", "%.6i:%-7j:")
    check(rc == 0 and out.splitlines() == ["     2:cli-b  :", "     1:cli-a  :"],
          "queue widths: %r" % out)
    rc, out, err = rk("nodes", "--json")
    check(rc == 0 and [n.get("name") for n in json.loads(out)["nodes"]] == ["n0", "n1"],
          "nodes --json: names: %s" % out)
    # a pending job: TIME 0:00 however long it waits, its reason in NODELIST(REASON)
    rc, out, err = rk("submit", "--model", "bert", "--gpus", "8", "--iterations", "10",
                      "--command", "sleep 20", "--name", "cli-big")
    check(rc == 0 and out.startswith("submitted job 3"), "submit job 3: %s %s" % (out, err))
    time.sleep(1.5)
    rc, out, err = rk("queue", "-h", "-t", "PD", "-o", "%i %t %M %D %R")
    check(rc == 0 and re.match(r"^3 PD 0:00 0 \((Resources|Priority|None)\)$", out.strip()),
          "queue -t PD: pending job 3: %r %s" % (out, err))
    rc, out, err = rk("hold", "3")
    check(rc == 0, "hold 3: %s %s" % (out, err))
    rc, out, err = rk("queue", "-h", "-t", "pending", "-o", "%i %r %R")
    check(rc == 0 and out.strip() == "3 JobHeldAdmin (JobHeldAdmin)", "held reason: %r %s" % (out, err))
    rc, out, err = rk("queue", "-h", "-t", "PENDING,r", "-o", "%i")
    check(rc == 0 and out.split() == ["3", "2", "1"], "queue -t PENDING,r: %r" % out)
    rc, out, err = rk("queue", "-h", "-t", "CD,CA", "-o", "%i")
    check(rc == 0 and out == "", "queue -t CD,CA: %r" % out)
    rc, out, err = rk("queue", "-h", "-t", "all", "-u", "default", "-o", "%i")
    check(rc == 0 and out.split() == ["3", "2", "1"], "queue -t all -u default: %r %s" % (out, err))
    rc, out, err = rk("queue", "-h", "-u", "nobody,other", "-o", "%i")
    check(rc == 0 and out == "", "queue -u nobody,other: %r %s" % (out, err))
    rc, out, err = rk("queue", "-h", "--tenant", "default", "-o", "%i")
    check(rc == 0 and out.split() == ["3", "2", "1"], "queue --tenant: %r %s" % (out, err))
    rc, out, err = rk("release", "3")
    check(rc == 0, "release 3: %s %s" % (out, err))
    # bad input: named, exit 2
    rc, out, err = rk("queue", "-t", "R,bogus")
    check(rc == 2 and "'bogus'" in err and "not a state" in err, "queue -t bogus: %d %s" % (rc, err))
    rc, out, err = rk("queue", "-o", "%i %Q")
    check(rc == 2 and "'%Q'" in err and "not a field" in err, "queue -o %%Q: %d %s" % (rc, err))
    rc, out, err = rk("queue", "-o", "%{nope}")
    check(rc == 2 and "%{nope}" in err, "queue -o %%{nope}: %d %s" % (rc, err))
    rc, out, err = rk("queue", "-u", "a b")
    check(rc == 2 and "'a b'" in err, "queue -u 'a b': %d %s" % (rc, err))
    rc, out, err = rk("queue", "--help")
    check(rc == 0 and "--noheader" in out and "%{plan}" in out, "queue --help: %d %s" % (rc, out))


def json_errors(d, rk, env):
    """Under --json an error is {"error": {...}} on stdout, with the exit code it has without."""
    def err_of(out):
        try:
            return json.loads(out)["error"]
        except (ValueError, KeyError, TypeError):
            return {}
    rc, out, err = rk("show", "77", "--json")
    e = err_of(out)
    check(rc == 4 and e.get("code") == "not_found" and "does not exist" in e.get("message", "")
          and e.get("exit") == 4, "show 77 --json: %d %r" % (rc, out))
    rc, out, err = rk("queue", "--json", "-t", "bogus")
    e = err_of(out)
    check(rc == 2 and e.get("code") == "invalid" and "bogus" in e.get("message", ""),
          "queue --json -t bogus: %d %r" % (rc, out))
    rc, out, err = rk("queue", "-o", "%Q", "--json")
    check(rc == 2 and err_of(out).get("field") == "format", "queue -o %%Q --json: %d %r" % (rc, out))
    rc, out, err = rk("queue", "--json", env_=dict(env, RUBICK_URL="unix:" + d.dir + "/nothing"))
    e = err_of(out)
    check(rc == 3 and e.get("code") == "unavailable" and "cannot reach" in e.get("message", ""),
          "queue --json unreachable: %d %r" % (rc, out))
    rc, out, err = rk("show", "x", "--json")
    check(rc == 2 and err_of(out).get("code") == "invalid", "show x --json: %d %r" % (rc, out))
    rc, out, err = rk("hold", "77", "--json")
    check(rc == 4 and err_of(out).get("code") == "not_found", "hold 77 --json: %d %r" % (rc, out))
    rc, out, err = rk("submit", "--json", "--model", "bert", "--gpus", "2", "--iterations", "1",
                      "--command", "true", "--plan", "dp=9")
    e = err_of(out)
    check(rc == 1 and e.get("field") == "plan" and e.get("status") == 400,
          "submit --json invalid plan: %d %r" % (rc, out))
    for args in (["history", "--bogus"], ["logs", "77"], ["update", "77", "--gpus", "2"],
                 ["nodes", "--bogus"], ["cancel", "77"], ["release", "x"], ["policy", "nope"]):
        rc0 = rk(*args)[0]
        rc, out, err = rk(*(args + ["--json"]))
        check(rc == rc0 and rc != 0 and err_of(out).get("exit") == rc,
              "%s --json: %d (%d without) %r" % (" ".join(args), rc, rc0, out))


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
        check(rc == 0 and "cli-a" in out and "cli-b" in out and "STATE" not in out, "queue: %s" % out)
        rc, out, err = rk("queue", "--state", "done", "--json")
        check(rc == 0 and json.loads(out)["count"] == 0, "queue --state --json: %s" % out)
        squeue_cases(d, rk)
        json_errors(d, rk, env)
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
        # job 3 (8 GPUs) now starts on both nodes: n[0-1]
        check(wait_running(rk, [3]), "job 3 runs")
        rc, out, err = rk("queue", "-h", "-o", "%i %D %N %R")
        check(rc == 0 and out.strip() == "3 2 n[0-1] n[0-1]", "queue: n[0-1]: %r %s" % (out, err))
        rc, out, err = rk("cancel", "3")
        check(rc == 0, "cancel 3: %s %s" % (out, err))
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
