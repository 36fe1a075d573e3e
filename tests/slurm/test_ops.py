"""Issue 13: rubickd --engine slurm under what operators and users do, on the emulated
4 x 8-GPU cluster (tests/slurm/run.sh):
- the cluster from Slurm: the nodes' GPUs, CPUs and memory are Slurm's (RealMemory), a
  --cluster that disagrees is reported on stderr, an unknown --partition is refused;
- drain: a node drained under a running job keeps that job, gets no new placement, and
  another job still starts elsewhere at once; `rubick nodes` shows the drain; once the
  job ends the node's capacity leaves rubick's view;
- scancel: a job cancelled in Slurm (it checkpoints on the SIGTERM and exits 75) ends
  cancelled in rubick, with Slurm's state in its reason, and is not relaunched;
- node loss with the PyTorch job (examples/train.py): reconfigured once (decision ->
  RUNNING and decision -> first step after resume measured), then its node's slurmd is
  killed -9 (its slurmstepd and the training process live on) and the node marked down: the
  next run starts only after the fence, the stale copy stops at its next step, no steps of
  two runs interleave in the loss log, and the new run resumes from the last published
  checkpoint (ckpt/run-N, `latest`);
- holds and outside jobs: an unprivileged throwaway user's sbatch job is held by the submit
  plugin and its owner cannot release it (scontrol release fails); released by root it runs
  outside rubick, and rubick's placements avoid its GPUs: 8-GPU jobs go to the other nodes,
  one more waits (pending in rubick, not "running" while Slurm keeps it pending), and
  starts once the outside job is cancelled;
- a time limit: tenant carol's jobs get Slurm account `research` and a 1-minute time
  limit from her [tenant] section; her job, timed out by Slurm, ends cancelled with "time limit" in its reason;
- the launcher killed: the PyTorch job on 2 GPUs (a launcher and 2 forked workers) has its
  launcher killed -9; the job fails and no process of it is left (its process group)."""
import os
import subprocess
import sys
import time

HERE = os.path.abspath(os.path.dirname(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
from rkd import Daemon  # noqa: E402
from test_engine import check, job_dir, node_names, slurm_id, squeue, wait_lines  # noqa: E402

JOB_SH = os.path.join(HERE, "..", "daemon", "job.sh")
TRAIN = os.path.abspath(os.path.join(HERE, "..", "..", "examples", "train.py"))


def rows(path):
    return [l.split() for l in open(path) if l.strip()] if os.path.exists(path) else []


def first_step_of(path, run, timeout=120):
    """Wall time at which the loss log first shows a step of `run` (polled)."""
    end = time.time() + timeout
    while time.time() < end:
        if any(r[2] == str(run) for r in rows(path)):
            return time.time()
        time.sleep(0.05)
    raise AssertionError("%s: no step of run %d" % (path, run))


def wait_run(d, jid, after, timeout=90):
    end = time.time() + timeout
    while time.time() < end:
        st, j = d.call("GET", "/v1/jobs/%d" % jid)
        if j["run"] > after and j["state"] == "running":
            return j
        if j["state"] in ("done", "failed", "cancelled"):
            break
        time.sleep(0.05)
    raise AssertionError("no run after %d: %s" % (after, j))


def as_user(name, cmd):
    return subprocess.run(["runuser", "-u", name, "--", "env", "SLURM_CONF=" + os.environ["SLURM_CONF"]] + cmd,
                          capture_output=True, text=True, timeout=20)


def outside_job(d):
    from secusers import Users
    users = Users(["o"])
    script = os.path.join(d.dir, "outside.sh")
    ids = []
    sid = None
    try:
        with open(script, "w") as f:
            f.write("#!/bin/sh\nsleep 600\n")
        os.chmod(script, 0o755)
        os.chmod(d.dir, 0o755)
        name = users.pw("o").pw_name
        r = as_user(name, ["sbatch", "--parsable", "-N1", "--gres=gpu:8", "--output=/dev/null", script])
        check(r.returncode == 0, "sbatch as %s: %s" % (name, r.stderr))
        sid = r.stdout.strip().split(";")[0]
        check(squeue(sid, "%T") == "PENDING" and "Held" in squeue(sid, "%r"), "not held: %s" % squeue(sid, "%T %r"))
        r = as_user(name, ["scontrol", "release", sid])
        check(r.returncode != 0, "the owner released the plugin's hold: %s" % r.stdout)
        time.sleep(1)
        check(squeue(sid, "%T") == "PENDING", "released by its owner: %s" % squeue(sid, "%T %r"))
        subprocess.run(["scontrol", "release", sid], check=True, timeout=10)  # the operator's choice
        end = time.time() + 30
        while time.time() < end and squeue(sid, "%T") != "RUNNING":
            time.sleep(0.2)
        check(squeue(sid, "%T") == "RUNNING", "the outside job did not start: %s" % squeue(sid, "%T %r"))
        taken = node_names().index(squeue(sid, "%N"))
        for i in range(3):
            ids.append(submit(d, "beside%d" % i, 8))
        for x in ids:
            j = d.wait_state(x, ["running"], timeout=30)
            check(all(s["node"] != taken for s in j["alloc"]), "placed on the outside job's node: %s" % j)
            sid_x = slurm_id(d, x, j["run"])
            end = time.time() + 10  # release -> RUNNING: 0.4-2.7 s (docs/slurm.md, Slurm facts)
            while time.time() < end and squeue(sid_x, "%T") != "RUNNING":
                time.sleep(0.1)
            check(squeue(sid_x, "%T") == "RUNNING", "job %d shown running, Slurm: %s" % (x, squeue(sid_x, "%T %r")))
        last = submit(d, "waits-outside", 8)
        ids.append(last)
        time.sleep(2)
        st, j = d.call("GET", "/v1/jobs/%d" % last)
        check(j["state"] == "pending", "placed on GPUs an outside job holds: %s" % j)
        subprocess.run(["scancel", sid], check=True, timeout=10)
        j = d.wait_state(last, ["running"], timeout=60)
        check(j["alloc"][0]["node"] == taken, j)
    finally:
        for x in ids:
            d.call("DELETE", "/v1/jobs/%d" % x)
        for x in ids:
            d.wait_state(x, ["cancelled", "done", "failed"], timeout=60)
        if sid:
            subprocess.run(["scancel", sid], timeout=10)
        uid = users.pw("o").pw_uid
        end = time.time() + 20  # userdel refuses while the user's job still runs
        while time.time() < end and subprocess.run(["pgrep", "-u", str(uid)], capture_output=True).returncode == 0:
            time.sleep(0.2)
        users.remove()


def job_pids(ckpt):
    """Live processes (not zombies) whose environment names this job's checkpoint folder."""
    want = ("RUBICK_CKPT_DIR=" + ckpt).encode()
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            env = open("/proc/%s/environ" % p, "rb").read().split(b"\0")
            state = [l for l in open("/proc/%s/status" % p) if l.startswith("State:")][0]
            comm = open("/proc/%s/comm" % p).read().strip()
            ppid = int([l for l in open("/proc/%s/status" % p) if l.startswith("PPid:")][0].split()[1])
        except (OSError, IndexError):
            continue
        if want in env and "Z" not in state.split()[1]:
            out.append((int(p), ppid, comm))
    return out


def launcher_killed(d):
    jid = submit(d, "torch-orphans", 2, iters=100000,
                 command="/usr/bin/python3 %s --threads 1 --report-every 5" % TRAIN)
    d.wait_state(jid, ["running"], timeout=60)
    ckpt = os.path.join(job_dir(d, jid), "ckpt")
    wait_lines(os.path.join(ckpt, "loss.log"), 3, timeout=120)
    procs = job_pids(ckpt)
    pys = [p for p in procs if p[2].startswith("python")]
    pids = set(p[0] for p in pys)
    launcher = [p for p in pys if p[1] not in pids]
    workers = [p for p in pys if p[1] in pids]
    check(len(launcher) == 1 and len(workers) == 2, "launcher and workers: %s" % procs)
    os.kill(launcher[0][0], 9)
    j = d.wait_state(jid, ["failed", "cancelled", "done"], timeout=60)
    check(j["state"] == "failed", "the launcher killed: %s" % j)
    end = time.time() + 15
    while time.time() < end and job_pids(ckpt):
        time.sleep(0.2)
    check(not job_pids(ckpt), "processes of job %d left after its launcher died: %s" % (jid, job_pids(ckpt)))


def node_lost(d, lat):
    from test_engine import stamp
    iters = 400
    jid = submit(d, "torch-fence", 1, iters=iters,
                 command="/usr/bin/python3 %s --threads 1 --report-every 5 --ckpt-every 5" % TRAIN)
    j = d.wait_state(jid, ["running"], timeout=60)
    run1 = j["run"]
    loss = os.path.join(job_dir(d, jid), "ckpt", "loss.log")
    wait_lines(loss, 8, timeout=120)
    st, r = d.call("PUT", "/v1/jobs/%d" % jid, {"gpus": 2})
    check(st == 200, r)
    j = wait_run(d, jid, run1)
    run2 = j["run"]
    t_first = first_step_of(loss, run2)
    t_stop = stamp(d, jid, run1, "stop_ms")
    lat["reconfig decision->RUNNING (s)"] = stamp(d, jid, run2, "running_ms") - t_stop
    lat["reconfig decision->first step after resume (s)"] = t_first - t_stop
    n_before = len(rows(loss))
    wait_lines(loss, n_before + 12, timeout=120)  # a checkpoint of run 2 is published
    names = node_names()
    node = names[j["alloc"][0]["node"]]
    lab = os.environ["RK_SLURM_LAB"]
    pid = int(open(os.path.join(lab, "run", "slurmd-%s.pid" % node)).read())
    os.kill(pid, 9)  # slurmstepd and the job's processes live on (slurm.md, teardown)
    t_kill = time.time()
    subprocess.run(["scontrol", "update", "nodename=" + node, "state=down", "reason=rubick-fence-test"],
                   check=True, timeout=10)
    j = wait_run(d, jid, run2)
    run3 = j["run"]
    t3 = first_step_of(loss, run3)
    lat["node down->first step of the next run (s)"] = t3 - t_kill
    # a few steps of the new run are enough (the whole job is long on a loaded machine)
    n3 = len(rows(loss))
    wait_lines(loss, n3 + 8, timeout=120)
    st, j = d.call("GET", "/v1/jobs/%d" % jid)
    check(j["state"] == "running" and j["run"] == run3, "after the node loss: %s" % j)
    d.call("DELETE", "/v1/jobs/%d" % jid)
    d.wait_state(jid, ["cancelled"], timeout=60)
    joblog = open(os.path.join(job_dir(d, jid), "log")).read()
    rs = rows(loss)
    runs = [int(r[2]) for r in rs]
    check(runs == sorted(runs), "steps of two runs interleave: %s" % runs)
    check(set(runs) == {run1, run2, run3}, "runs: %s" % sorted(set(runs)))
    # each run resumes from the newest published checkpoint: a multiple of --ckpt-every,
    # at most the last step its predecessor logged; the steps from there on are contiguous
    def edges(prev, cur):
        return (max(int(r[0]) for r in rs if int(r[2]) == prev),
                min(int(r[0]) for r in rs if int(r[2]) == cur) - 1)
    last1, resume2 = edges(run1, run2)
    check(resume2 == last1, "run %d resumed at %d, run %d checkpointed at %d" % (run2, resume2, run1, last1))
    last2, resume3 = edges(run2, run3)
    check(resume3 % 5 == 0 and resume2 < resume3 <= last2,
          "run %d resumed at %d, not run %d's last published checkpoint (every 5 steps, last step %d)"
          % (run3, resume3, run2, last2))
    tail = [int(r[0]) for r in rs if int(r[2]) == run3]
    check(tail == list(range(tail[0], tail[0] + len(tail))), "run %d's steps: %s" % (run3, tail))
    check("run %d rank 0 fenced" % run2 in joblog, "the stale copy never saw the fence:\n%s" % joblog[-3000:])
    latest = open(os.path.join(job_dir(d, jid), "ckpt", "latest")).read().strip()
    check(latest == "run-%d" % run3, "latest names %s" % latest)
    subprocess.Popen(["setsid", "slurmd", "-D", "-N", node], stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    end = time.time() + 30
    while time.time() < end:
        subprocess.run(["scontrol", "update", "nodename=" + node, "state=resume"], capture_output=True,
                       timeout=10)
        if node_view(d, names.index(node))["up"]:
            break
        time.sleep(0.5)


def submit(d, name, gpus, iters=100000, command=None):
    st, j = d.call("POST", "/v1/jobs", {"name": name, "model": "bert", "iterations": iters, "gpus": gpus,
                                       "command": command or "sh " + JOB_SH})
    check(st == 201, j)
    return j["id"]


def node_view(d, idx):
    st, nodes = d.call("GET", "/v1/nodes")
    check(st == 200, nodes)
    return [n for n in nodes["nodes"] if n["id"] == idx][0]


def events(d, jid):
    st, j = d.call("GET", "/v1/jobs/%d" % jid)
    return j


def cluster_from_slurm(d):
    st, nodes = d.call("GET", "/v1/nodes")
    check([(n["gpus"], n["cpus"], n["mem_mb"]) for n in nodes["nodes"]] == [(8, 16, 64000)] * 4,
          "not Slurm's nodes: %s" % nodes)
    err = open(os.path.join(d.dir, "rubickd.err")).read()
    check("does not match the slurm engine" in err and "64000 MiB" in err, "no mismatch report: %s" % err)
    r = subprocess.run(d.args[:1] + ["--engine", "slurm", "--listen", "127.0.0.1:0", "--db",
                                     os.path.join(d.dir, "other.db"), "--partition", "nosuch",
                                     "--config", d.conf], capture_output=True, text=True, timeout=30)
    check(r.returncode != 0 and "nosuch" in r.stderr and "gpu" in r.stderr, "--partition nosuch: %s" % r.stderr)


def drain(d, lat):
    a = submit(d, "drained", 2)
    j = d.wait_state(a, ["running"], timeout=60)
    run = j["run"]
    wait_lines(os.path.join(job_dir(d, a), "ckpt", "iters.log"), 5)
    names = node_names()
    idx = j["alloc"][0]["node"]
    node = names[idx]
    subprocess.run(["scontrol", "update", "nodename=" + node, "state=drain", "reason=rubick-maint"],
                   check=True, timeout=10)
    end = time.time() + 30
    while time.time() < end and "drain" not in node_view(d, idx)["state"]:
        time.sleep(0.2)
    check("drain" in node_view(d, idx)["state"], "rubick nodes does not show the drain: %s" % node_view(d, idx))
    out = subprocess.run([os.path.join(os.environ.get("RK_BUILD_DIR", "build"), "src", "cli", "rubick"), "nodes",
                          "--url", d.url, "--token-file", os.path.join(d.dir, "admin.token")],
                         capture_output=True, text=True, timeout=10)
    check("drain" in out.stdout, "rubick nodes: %s %s" % (out.stdout, out.stderr))
    # another job starts elsewhere while the drained node keeps its job
    t0 = time.time()
    b = submit(d, "elsewhere", 8)
    jb = d.wait_state(b, ["running"], timeout=30)
    lat["drain: submit->running beside a drained node (s)"] = time.time() - t0
    check(all(s["node"] != idx for s in jb["alloc"]), "placed on the drained node: %s" % jb)
    st, ja = d.call("GET", "/v1/jobs/%d" % a)
    check(ja["state"] == "running" and ja["run"] == run, "the drained node's job was disturbed: %s" % ja)
    check(squeue(slurm_id(d, a, run), "%T") == "RUNNING", "job %d not running in Slurm" % a)
    # the other two nodes fill up; a job that would fit only in the drained node's free GPUs waits
    others = [submit(d, "fill%d" % i, 8) for i in range(2)]
    for c in others:
        jc = d.wait_state(c, ["running"], timeout=30)
        check(all(s["node"] != idx for s in jc["alloc"]), "placed on the drained node: %s" % jc)
    e = submit(d, "no-room", 4)
    time.sleep(2)
    st, je = d.call("GET", "/v1/jobs/%d" % e)
    check(je["state"] == "pending", "placed on the drained node's free GPUs: %s" % je)
    # the drained node's job ends: its capacity leaves rubick's view; nothing starts there
    d.call("DELETE", "/v1/jobs/%d" % a)
    d.wait_state(a, ["cancelled"], timeout=60)
    end = time.time() + 20
    while time.time() < end and node_view(d, idx)["up"]:
        time.sleep(0.2)
    check(not node_view(d, idx)["up"], "the drained node is still in rubick's view: %s" % node_view(d, idx))
    st, je = d.call("GET", "/v1/jobs/%d" % e)
    check(je["state"] == "pending", "placed on the drained node: %s" % je)
    subprocess.run(["scontrol", "update", "nodename=" + node, "state=resume"], check=True, timeout=10)
    je = d.wait_state(e, ["running"], timeout=60)
    for x in [b, e] + others:
        d.call("DELETE", "/v1/jobs/%d" % x)
    for x in [b, e] + others:
        d.wait_state(x, ["cancelled"], timeout=60)


def scancel(d, lat):
    a = submit(d, "scancelled", 2)
    j = d.wait_state(a, ["running"], timeout=60)
    run = j["run"]
    log = os.path.join(job_dir(d, a), "ckpt", "iters.log")
    wait_lines(log, 5)
    sid = slurm_id(d, a, run)
    # job.sh checkpoints on USR1 only; TERM kills it. Make it checkpoint on TERM too:
    # what examples/train.py does (exit 75 after a SIGTERM nobody in rubick asked for).
    subprocess.run(["scancel", "--batch", "--signal=USR1", str(sid)], check=True, timeout=10)
    j = d.wait_state(a, ["cancelled", "failed", "done", "pending"], timeout=30)
    time.sleep(1)
    st, j = d.call("GET", "/v1/jobs/%d" % a)
    check(j["state"] == "cancelled" and j["run"] == run, "a checkpoint nobody in rubick asked for: %s" % j)
    check("outside rubick" in (j.get("reason") or ""), "no reason: %s" % j)
    b = submit(d, "scancel-term", 2)
    j = d.wait_state(b, ["running"], timeout=60)
    run = j["run"]
    wait_lines(os.path.join(job_dir(d, b), "ckpt", "iters.log"), 5)
    sid = slurm_id(d, b, run)
    subprocess.run(["scancel", str(sid)], check=True, timeout=10)
    j = d.wait_state(b, ["cancelled", "failed", "done"], timeout=30)
    time.sleep(1)
    st, j = d.call("GET", "/v1/jobs/%d" % b)
    check(j["state"] == "cancelled" and j["run"] == run and "CANCELLED" in (j.get("reason") or ""),
          "scancel: %s" % j)
    check(squeue(sid, "%T") in ("", "CANCELLED"), "relaunched in Slurm: %s" % squeue(sid, "%T"))


CAROL = "carol-token-0123456789abcdef"


def time_limit_start(d):
    st, j = d.call("POST", "/v1/jobs", {"name": "limited", "model": "bert", "iterations": 100000, "gpus": 1,
                                       "command": "sh " + JOB_SH}, token=CAROL)
    check(st == 201, j)
    j = d.wait_state(j["id"], ["running"], timeout=60)
    sid = slurm_id(d, j["id"], j["run"])
    end = time.time() + 10
    while time.time() < end and squeue(sid, "%T") != "RUNNING":
        time.sleep(0.1)
    check(squeue(sid, "%a %l") == "research 1:00", "account, time limit: %s" % squeue(sid, "%a %l"))
    return j["id"], j["run"]


def time_limit_end(d, jid, run):
    j = d.wait_state(jid, ["cancelled", "failed", "done"], timeout=180)
    time.sleep(1)
    st, j = d.call("GET", "/v1/jobs/%d" % jid)
    # (its node may have been the one node_lost killed: then it was relaunched once, run > `run`)
    check(j["state"] == "cancelled" and j["run"] >= run and "time limit" in (j.get("reason") or "")
          and j["history"][-1]["reason"] == "cancel", "the Slurm time limit: %s" % j)


def main():
    d = Daemon(cluster="4x8:a800,cpus=16", extra=["--engine", "slurm"], grace_ms=3000)
    p = os.path.join(d.dir, "carol.token")
    with open(p, "w") as f:
        f.write(CAROL + "\n")
    os.chmod(p, 0o600)
    with open(d.conf, "a") as f:
        f.write("[tenant carol]\ntoken_file = %s/carol.token\nslurm_account = research\n"
                "slurm_time_limit = 1\n" % d.dir)
    d.start()
    lat = {}
    try:
        cluster_from_slurm(d)
        print("cluster from Slurm ok")
        drain(d, lat)
        print("drain ok")
        scancel(d, lat)
        print("scancel ok")
        outside_job(d)
        print("holds users cannot lift, outside jobs avoided ok")
        if os.environ.get("RK_SLURM_NO_TORCH"):
            print("pytorch phases left to the plain build (RK_SLURM_NO_TORCH)")
        else:
            limited = time_limit_start(d)
            launcher_killed(d)
            print("launcher killed: no process of the job left")
            node_lost(d, lat)
            print("node lost: fenced, resumed from the last published checkpoint")
            time_limit_end(d, *limited)
            print("a Slurm time limit is a cancel ok")
        for k, v in lat.items():
            print("measured %s: %.3g" % (k, v))
        return 0
    finally:
        d.stop()


if __name__ == "__main__":
    sys.exit(main())
