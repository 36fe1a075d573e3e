"""Helpers for the end-to-end parity tests (tests/daemon/test_e2e_policy.py, the Slurm
one in tests/slurm): what examples/train.py ran under rubickd, and its loss compared
step by step with a never-reconfigured run of the same global batch and seed."""
import os
import subprocess
import time

HERE = os.path.abspath(os.path.dirname(__file__))
TRAIN = os.path.abspath(os.path.join(HERE, "..", "..", "examples", "train.py"))
PY = "/usr/bin/python3"
RTOL = 1e-4  # relative loss difference per step; float32 summation order alone is ~1e-7


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def have_torch():
    return subprocess.run([PY, "-c", "import torch"], capture_output=True).returncode == 0


def job_dir(d, jid):
    return os.path.join(d.dir, "state.db.jobs", "job-%d" % jid)


def train_command(args=""):
    return "%s %s --threads 1 --report-every 2 %s" % (PY, TRAIN, args)


def wait_steps(d, jid, n, timeout=120):
    """Wait until the job's loss.log has n steps."""
    path = os.path.join(job_dir(d, jid), "ckpt", "loss.log")
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(path) and len(open(path).readlines()) >= n:
            return
        st, j = d.call("GET", "/v1/jobs/%d" % jid)
        check(j["state"] not in ("failed", "cancelled"), "job %d ended early: %s\n%s" % (jid, j, joblog(d, jid)))
        time.sleep(0.1)
    raise AssertionError("%s: fewer than %d steps in %d s" % (path, n, timeout))


def wait_plan_change(d, jid, before, timeout=60):
    """Wait until the policy has given the job a plan other than `before` and the new run
    is running; returns the job."""
    end = time.time() + timeout
    while time.time() < end:
        st, j = d.call("GET", "/v1/jobs/%d" % jid)
        if j["state"] == "running" and j["plan"] and j["plan"] != before:
            return j
        check(j["state"] not in ("done", "failed", "cancelled"),
              "job %d ended before the policy changed its plan %s: %s\n%s" % (jid, before, j, joblog(d, jid)))
        time.sleep(0.05)
    raise AssertionError("the policy never changed job %d's plan %s in %d s: %s" % (jid, before, timeout, j))


def joblog(d, jid):
    try:
        return open(os.path.join(job_dir(d, jid), "log")).read()[-4000:]
    except OSError:
        return "(no log)"


def plans_run(d, jid):
    """The (reason, GPUs, plan) of every allocation rubickd gave the job, from its history."""
    st, full = d.call("GET", "/v1/jobs/%d" % jid)
    check(st == 200, full)
    return [(h["reason"], sum(a["gpus"] for a in h["alloc"]), h["plan"]) for h in full["history"] if h["plan"]]


def losses(d, jid, iters):
    """Loss per step from the job's loss.log (rows "step loss run dp ga pp"); a step
    logged twice (a run lost after it, resumed from an earlier checkpoint) counts as
    the last run's."""
    rows = [l.split() for l in open(os.path.join(job_dir(d, jid), "ckpt", "loss.log")) if l.strip()]
    by_step = {}
    for r in rows:
        by_step[int(r[0])] = (float(r[1]), int(r[2]), int(r[3]), int(r[5]))
    check(sorted(by_step) == list(range(1, iters + 1)), "steps lost: %s" % sorted(by_step))
    if len(rows) > iters:
        print("%d steps run twice (a run lost after them resumed from an earlier checkpoint)"
              % (len(rows) - iters))
    return [by_step[s] for s in range(1, iters + 1)]


def baseline(workdir, gb, iters, extra=()):
    """examples/train.py in one process, never reconfigured, same global batch and seed."""
    ck = os.path.join(workdir, "baseline-gb%d-%d" % (gb, iters))
    r = subprocess.run([PY, TRAIN, "--plan", "dp=1,mb=%d,ga=1" % gb, "--global-batch", str(gb),
                        "--iters", str(iters), "--ckpt-dir", ck, "--threads", "1"] + list(extra),
                       env={k: v for k, v in os.environ.items() if not k.startswith("RUBICK_")},
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "baseline: %s%s" % (r.stdout, r.stderr))
    return [float(l.split()[1]) for l in open(os.path.join(ck, "loss.log")) if l.strip()]


def compare(name, d, jid, iters, gb, extra=()):
    """Check the job ran to the end under at least two different plans rubick chose, and
    that its loss follows the baseline at every step. Prints the plans and the largest
    relative difference; returns it."""
    st, j = d.call("GET", "/v1/jobs/%d" % jid)
    check(j["state"] == "done", "%s: job %d: %s\n%s" % (name, jid, j, joblog(d, jid)))
    plans = plans_run(d, jid)
    distinct = []
    for _, g, p in plans:
        if (g, p) not in distinct:
            distinct.append((g, p))
    check(j["restarts"] >= 1 and len(distinct) >= 2,
          "%s: no reconfiguration with a new plan: restarts %d, plans %s" % (name, j["restarts"], plans))
    rows = losses(d, jid, iters)
    ran = []
    for _, run, dp, pp in rows:
        if not ran or ran[-1][0] != run:
            ran.append((run, dp, pp))
    check(len(ran) >= 2, "%s: loss.log shows one run only: %s" % (name, ran))
    base = baseline(d.dir, gb, iters, extra)
    worst = max(abs(a - b[0]) / abs(a) for a, b in zip(base, rows))
    for reason, g, p in plans:
        print("%s: %-11s %d GPUs  %s" % (name, reason, g, p))
    print("%s: runs (run, dp, pp) in loss.log: %s" % (name, ran))
    print("%s: %d steps, loss %.4f -> %.4f, largest relative difference to the never-reconfigured"
          " run %.2e (tolerance %.0e)" % (name, iters, base[0], base[-1], worst, RTOL))
    check(worst <= RTOL, "%s: loss diverges from the baseline: %s vs %s" % (name, base, [r[0] for r in rows]))
    return worst
