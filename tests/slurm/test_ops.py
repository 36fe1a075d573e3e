"""Issue 13: rubickd --engine slurm under what operators and users do, on the emulated
4 x 8-GPU cluster (tests/slurm/run.sh):
- drain: a node drained under a running job keeps that job, gets no new placement, and
  another job still starts elsewhere at once; `rubick nodes` shows the drain; once the
  job ends the node's capacity leaves rubick's view;
- scancel: a job cancelled in Slurm (it checkpoints on the SIGTERM and exits 75) ends
  cancelled in rubick, with Slurm's state in its reason, and is not relaunched."""
import os
import subprocess
import sys
import time

HERE = os.path.abspath(os.path.dirname(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
from rkd import Daemon  # noqa: E402
from test_engine import check, job_dir, node_names, slurm_id, squeue, wait_lines  # noqa: E402

JOB_SH = os.path.join(HERE, "..", "daemon", "job.sh")


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


def main():
    d = Daemon(cluster="4x8:a800,cpus=16", extra=["--engine", "slurm"], grace_ms=3000)
    d.start()
    lat = {}
    try:
        drain(d, lat)
        print("drain ok")
        scancel(d, lat)
        print("scancel ok")
        for k, v in lat.items():
            print("measured %s: %.3g" % (k, v))
        return 0
    finally:
        d.stop()


if __name__ == "__main__":
    sys.exit(main())
