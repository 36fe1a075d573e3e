"""Containment of local runs (src/daemon/engine/local/contain.h): whatever a job starts ends
with its run, however it left the job's process group, and the run's GPUs are free (the job
shown ended) only once nothing of it is left.

Each job starts two escapees before its real work: `setsid` of a sleep (a new session, out of
the group the engine kills) and a double fork whose sleep is orphaned at once. Before
containment both outlived a cancel, and rubick counted the job's GPUs free.
- cancel of the real example job (examples/train.py, where torch is installed; job.sh
  otherwise), in its own cgroup where cgroup v2 is writable;
- a job that finishes normally and leaves its escapees behind;
- a requeue (the checkpoint a preemption or reconfiguration asks for): run 1's escapees are
  gone before run 2 starts;
- the same cancel with run_cgroup = off: the supervisor as child subreaper alone;
- a supervisor killed -9: the engine kills what is left in the run's recorded cgroup."""
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from rkd import Daemon  # noqa: E402

JOB_SH = os.path.join(HERE, "job.sh")
TRAIN = os.path.abspath(os.path.join(HERE, "..", "..", "examples", "train.py"))


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def have_torch():
    return subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode == 0


def sleeps(mark):
    """The escapees' sleep arguments for mark, unique to this test process (sh has no exec -a)."""
    return ["%d.%d" % (mark + k, os.getpid()) for k in (0, 1)]


def escaping(mark, work):
    """A command that starts two escapees (one setsid, one orphaned at once), then work."""
    s, o = sleeps(mark)
    return ("setsid sleep %s </dev/null >/dev/null 2>&1 & "
            "(sleep %s </dev/null >/dev/null 2>&1 &); %s" % (s, o, work))


def alive(mark):
    """Pids of mark's escapees that are still running (not zombies)."""
    want = set(sleeps(mark))
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
            with open("/proc/%s/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if len(argv) >= 2 and argv[0] == "sleep" and argv[1] in want and state != "Z":
            found.append(int(pid))
    return found


def supervisors(run):
    """Pids of the supervisors of the run in folder run.  A process may exit
    between listing /proc and reading its cmdline (CI once lost a sibling
    there): such a pid is skipped, it cannot be the live supervisor."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if b"--supervise" in cmd and run.encode() in cmd:
            found.append(int(pid))
    return found


def wait_alive(mark, n, timeout=60):
    end = time.time() + timeout
    while time.time() < end and len(alive(mark)) < n:
        time.sleep(0.05)
    check(len(alive(mark)) >= n, "%d: the job's escapees never started" % mark)


def run_dir(d, jid, run):
    return os.path.join(d.dir, "state.db.jobs", "job-%d" % jid, "run-%d" % run)


def submit(d, name, cmd, iters=10 ** 6, gpus=1):
    st, j = d.call("POST", "/v1/jobs", {"name": name, "model": "bert", "iterations": iters,
                                        "gpus": gpus, "command": cmd})
    check(st == 201, "submit %s: %d %s" % (name, st, j))
    return j["id"]


def recorded_cgroup(d, jid, run):
    with open(os.path.join(run_dir(d, jid, run), "cgroup")) as f:
        return f.readline().strip()


def cancel_case(d, mark, work, want_cgroup):
    jid = submit(d, "c%d" % mark, escaping(mark, work))
    d.wait_state(jid, ["running"])
    wait_alive(mark, 2)
    cg = recorded_cgroup(d, jid, 1)
    if want_cgroup:
        check(os.path.basename(cg).startswith("rubick-run-") and os.path.isdir(cg),
              "%d: the run has a cgroup of its own: %r" % (mark, cg))
    else:
        check(cg == "", "%d: run_cgroup = off, but the run has cgroup %r" % (mark, cg))
    st, _ = d.call("DELETE", "/v1/jobs/%d" % jid)
    check(st == 200, "cancel %s: %d" % (mark, st))
    d.wait_state(jid, ["cancelled"], timeout=60)
    # the job's GPU ids go once the engine saw the run end: its GPUs are free, nothing may be left
    end = time.time() + 60
    while time.time() < end and d.call("GET", "/v1/jobs/%d" % jid)[1].get("gpu_ids"):
        time.sleep(0.02)
    left = alive(mark)
    check(not d.call("GET", "/v1/jobs/%d" % jid)[1].get("gpu_ids"), "%d: the run never ended" % mark)
    check(not left, "%d: escapees %s outlived the cancel, and its GPUs count free" % (mark, left))
    if cg:
        check(not os.path.exists(cg), "%d: cgroup %s left behind" % (mark, cg))
    return jid


def settle(d):
    """Cancel every job and wait until each run ended (its GPU ids gone): the test's exit
    kills the supervisors of runs still ending, which would leave their cgroups."""
    d.cancel_all()
    end = time.time() + 60
    while time.time() < end and any(j.get("gpu_ids") for j in d.call("GET", "/v1/jobs")[1]["jobs"]):
        time.sleep(0.05)


def can_cgroup():
    """Whether this machine lets a process make a cgroup v2 beside its own (as rubickd would)."""
    point = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            if " - cgroup2 " in line:
                point = line.split()[4]
    if not point:
        return False
    own = [l[3:].strip() for l in open("/proc/self/cgroup") if l.startswith("0::")]
    probe = os.path.join(point + (own[0] if own and own[0] != "/" else ""), "rubick-probe-%d" % os.getpid())
    try:
        os.mkdir(probe)
        os.rmdir(probe)
        return True
    except OSError:
        return False


def main():
    cg_ok = can_cgroup()
    if not cg_ok:
        print("note: no writable cgroup v2 here; the runs are contained by the subreaper alone")
    d = Daemon(cluster="1x4", grace_ms=3000, extra=["--policy", "fifo"]).start()
    try:
        work = ("/usr/bin/python3 %s --threads 1 --report-every 2" % TRAIN if have_torch()
                else "sh " + JOB_SH)
        if not have_torch():
            print("note: torch not installed; the cancel case runs job.sh instead of train.py")
        cancel_case(d, 100, work, cg_ok)

        # a job that ends by itself leaves its escapees: they end with the run
        mark = 110
        jid = submit(d, "c%d" % mark, escaping(mark, "sleep 1.5; sh " + JOB_SH), iters=20)
        wait_alive(mark, 2)
        j = d.wait_state(jid, ["done", "failed"], timeout=60)
        check(j["state"] == "done", "%d: finished: %s" % (mark, j))
        check(not alive(mark), "%d: escapees %s outlived a finished job" % (mark, alive(mark)))

        # requeue: run 1 checkpoints (SIGUSR1, exit 75); its escapees end before run 2 starts
        mark = 120
        jid = submit(d, "c%d" % mark, escaping(mark, "sh " + JOB_SH))
        d.wait_state(jid, ["running"])
        wait_alive(mark, 2)
        first = set(alive(mark))
        st, _ = d.call("POST", "/v1/jobs/%d/requeue" % jid)
        check(st == 200, "requeue: %d" % st)
        end = time.time() + 30
        while time.time() < end and not os.path.exists(os.path.join(run_dir(d, jid, 1), "exit")):
            time.sleep(0.02)
        check(os.path.exists(os.path.join(run_dir(d, jid, 1), "exit")), "%d: run 1 never ended" % mark)
        check(not (first & set(alive(mark))), "%d: run 1's escapees %s outlived its checkpoint" %
              (mark, sorted(first & set(alive(mark)))))
        settle(d)

        # supervisor killed -9: no exit record; the engine kills the recorded cgroup
        if cg_ok:
            mark = 130
            jid = submit(d, "c%d" % mark, escaping(mark, "sleep 1000"))
            d.wait_state(jid, ["running"])
            wait_alive(mark, 2)
            cg = recorded_cgroup(d, jid, 1)
            with open(os.path.join(cg, "cgroup.procs")) as f:
                inside = {int(x) for x in f.read().split()}
            check(set(alive(mark)) <= inside, "%d: escapees %s not in cgroup %s (%s)" %
                  (mark, alive(mark), cg, sorted(inside)))
            sup = supervisors(run_dir(d, jid, 1))
            check(len(sup) == 1, "%d: the run's supervisor: %s" % (mark, sup))
            first = set(alive(mark))
            os.kill(sup[0], signal.SIGKILL)
            # the run is lost and launched again (run 2, escapees of its own): run 1's must go
            end = time.time() + 30
            while time.time() < end and (first & set(alive(mark)) or os.path.exists(cg)):
                time.sleep(0.05)
            check(not (first & set(alive(mark))), "%d: escapees %s outlived their dead supervisor" %
                  (mark, sorted(first & set(alive(mark)))))
            check(not os.path.exists(cg), "%d: the dead run's cgroup %s is left" % (mark, cg))
            settle(d)
    finally:
        settle(d)
        d.stop()

    # run_cgroup = off: the subreaper alone still ends both escapees
    d = Daemon(cluster="1x4", grace_ms=3000, extra=["--policy", "fifo"],
               conf_extra="run_cgroup = off\n").start()
    try:
        cancel_case(d, 140, "sh " + JOB_SH, False)
    finally:
        settle(d)
        d.stop()
    print("ok")


if __name__ == "__main__":
    main()
