"""rubickd --engine slurm against the emulated 4 x 8-GPU cluster (tests/slurm/run.sh):
placement as decided, reconfiguration with a new GPU count and plan, rubickd killed
and restarted mid-job (adopted, not relaunched), a node taken down mid-job, and a
burst of 200 submissions. Prints the decision -> RUNNING latencies it measured."""
import os
import subprocess
import sys
import time

HERE = os.path.abspath(os.path.dirname(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
from rkd import Daemon  # noqa: E402

JOB_SH = os.path.join(HERE, "..", "daemon", "job.sh")
TRAIN = os.path.abspath(os.path.join(HERE, "..", "..", "examples", "train.py"))
RTOL = 1e-4  # loss per step, reconfigured vs never reconfigured (float32 summation order only)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def squeue(sid, fmt):
    return subprocess.run(["squeue", "-h", "-j", str(sid), "-o", fmt], capture_output=True, text=True,
                          timeout=10).stdout.strip()


def job_dir(d, jid):
    return os.path.join(d.dir, "state.db.jobs", "job-%d" % jid)


def stamp(d, jid, run, what, timeout=30):
    p = os.path.join(job_dir(d, jid), "run-%d" % run, what)
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(p):
            return int(open(p).read()) / 1000.0
        time.sleep(0.05)
    raise AssertionError("%s never written" % p)


def slurm_id(d, jid, run, timeout=10):
    """The Slurm job id of run `run`. The engine writes the file after the run's
    state is stored, so a reader that saw "running" may have to wait for it."""
    p = os.path.join(job_dir(d, jid), "run-%d" % run, "slurm_id")
    end = time.time() + timeout
    while time.time() < end:
        try:
            text = open(p).read()
            if text.strip():
                return int(text)
        except FileNotFoundError:
            pass
        time.sleep(0.05)
    raise AssertionError("%s never written" % p)


def wait_lines(path, n, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(path) and len(open(path).readlines()) >= n:
            return
        time.sleep(0.05)
    raise AssertionError("%s: fewer than %d lines" % (path, n))


def node_names():
    out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N"], capture_output=True, text=True, timeout=10).stdout
    return sorted(set(out.split()), key=lambda n: (len(n), n))


def placement_and_reconfig(d, lat):
    iters = 200
    st, j = d.call("POST", "/v1/jobs", {"name": "slurm-e2e", "model": "bert", "iterations": iters,
                                       "gpus": 4, "command": "sh " + JOB_SH})
    check(st == 201, j)
    jid = j["id"]
    j = d.wait_state(jid, ["running"])
    run1 = j["run"]
    t_run = stamp(d, jid, run1, "running_ms")
    lat["decision->running"] = t_run - stamp(d, jid, run1, "launch_ms")
    sid = slurm_id(d, jid, run1)
    # placement as decided: the node rubick chose, 4 GPUs there, the plan in the Comment
    st, full = d.call("GET", "/v1/jobs/%d" % jid)
    shares = full["alloc"]
    check(len(shares) == 1 and shares[0]["gpus"] == 4, "alloc: %s" % shares)
    names = node_names()
    want = names[shares[0]["node"]]
    check(squeue(sid, "%N") == want, "slurm runs job %d on %s, rubick chose %s" % (sid, squeue(sid, "%N"), want))
    check("gpu:4" in squeue(sid, "%b"), "gres: %s" % squeue(sid, "%b"))
    check(squeue(sid, "%k") == full["plan"], "comment %s != plan %s" % (squeue(sid, "%k"), full["plan"]))
    log = os.path.join(job_dir(d, jid), "ckpt", "iters.log")
    wait_lines(log, 30)
    # reconfiguration: 4 -> 8 GPUs and a new plan, through requeue-hold and re-placement
    st, j = d.call("PUT", "/v1/jobs/%d" % jid, {"gpus": 8})
    check(st == 200, j)
    end = time.time() + 60
    while time.time() < end:
        st, j = d.call("GET", "/v1/jobs/%d" % jid)
        if j["run"] > run1 and j["state"] == "running":
            break
        time.sleep(0.05)
    run2 = j["run"]
    t_stop = stamp(d, jid, run1, "stop_ms")
    t_run2 = stamp(d, jid, run2, "running_ms")
    lat["reconfig decision->running"] = t_run2 - t_stop
    check(slurm_id(d, jid, run2) == sid, "the same Slurm job is requeued, not a new one")
    check("gpu:8" in squeue(sid, "%b"), "gres after reconfiguration: %s" % squeue(sid, "%b"))
    j = d.wait_state(jid, ["done", "failed"], timeout=120)
    joblog = open(os.path.join(job_dir(d, jid), "log")).read()
    check(j["state"] == "done", (j, joblog))
    lines = [l.split() for l in open(log).read().split("\n") if l]
    check([int(l[0]) for l in lines] == list(range(1, iters + 1)), "iterations lost or repeated")
    runs = sorted(set((int(l[1]), int(l[2])) for l in lines))
    check(runs == [(run1, 4), (run2, 8)], "runs: %s" % runs)
    check("checkpointed at" in joblog, joblog)
    # the new plan reached the requeued job (its environment is frozen at submit)
    plans = [h["plan"] for h in full["history"] if h["plan"]]
    st, full = d.call("GET", "/v1/jobs/%d" % jid)
    plans = [h["plan"] for h in full["history"] if h["plan"]]
    check(plans[0].startswith("dp=4,") and plans[-1].startswith("dp=8,"), plans)
    check("with %s on" % plans[-1] in joblog, "run 2 did not see plan %s: %s" % (plans[-1], joblog))


def pytorch_reconfig(d, lat):
    """The real PyTorch job under Slurm: 2 -> 4 data-parallel processes mid-run; its loss
    follows a never-reconfigured run step for step; its reports refit its model."""
    iters = 30
    st, j = d.call("POST", "/v1/jobs", {"name": "torch", "model": "bert", "iterations": iters, "gpus": 2,
                                       "command": "/usr/bin/python3 %s --threads 1 --report-every 2" % TRAIN})
    check(st == 201, j)
    jid = j["id"]
    j = d.wait_state(jid, ["running"])
    run1 = j["run"]
    loss_log = os.path.join(job_dir(d, jid), "ckpt", "loss.log")
    wait_lines(loss_log, 8, timeout=180)
    # the reports so far (every 2 steps) refitted the job's model; visible while it is active
    end = time.time() + 30
    while time.time() < end:
        st, full = d.call("GET", "/v1/jobs/%d" % jid)
        fit = full.get("fit")
        if fit and fit["refits"] >= 2:
            break
        time.sleep(0.2)
    check(fit and fit["samples"] >= 2 and fit["refits"] >= 1 and "k_bwd" in fit["params"]
          and fit["iter_rmse_log"] >= 0, "no online refit from the reports: %s" % fit)
    st, j = d.call("PUT", "/v1/jobs/%d" % jid, {"gpus": 4})
    check(st == 200, j)
    j = d.wait_state(jid, ["done", "failed"], timeout=300)
    joblog = open(os.path.join(job_dir(d, jid), "log")).read()
    check(j["state"] == "done" and j["run"] > run1, (j, joblog))
    t_stop = stamp(d, jid, run1, "stop_ms")
    lat["torch reconfig decision->running"] = stamp(d, jid, j["run"], "running_ms") - t_stop
    rows = [l.split() for l in open(loss_log) if l.strip()]
    check([int(r[0]) for r in rows] == list(range(1, iters + 1)), "steps lost or repeated: %s" % rows)
    dps = sorted(set(int(r[3]) for r in rows))
    check(len(dps) == 2, "expected two data-parallel degrees: %s" % dps)
    gb = j["spec"]["global_batch"]
    base = os.path.join(d.dir, "torch-base")
    r = subprocess.run(["/usr/bin/python3", TRAIN, "--plan", "dp=1,mb=%d,ga=1" % gb, "--global-batch", str(gb),
                        "--iters", str(iters), "--ckpt-dir", base, "--threads", "1"],
                       env={k: v for k, v in os.environ.items() if not k.startswith("RUBICK_")},
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, r.stderr)
    a = [float(l.split()[1]) for l in open(os.path.join(base, "loss.log")) if l.strip()]
    b = [float(x[1]) for x in rows]
    worst = max(abs(x - y) / abs(x) for x, y in zip(a, b))
    lat["torch max relative loss difference"] = worst
    check(worst <= RTOL, "loss diverges after reconfiguration: %s vs %s" % (a, b))
    print("torch: dp %s, loss %.4f -> %.4f, max rel diff %.1e; fit %s" % (dps, a[0], a[-1], worst, fit))


def torch_baseline(d, gb, iters, name):
    """examples/train.py in one process, outside Slurm: the loss every plan must follow."""
    base = os.path.join(d.dir, name)
    r = subprocess.run(["/usr/bin/python3", TRAIN, "--plan", "dp=1,mb=%d,ga=1" % gb, "--global-batch", str(gb),
                        "--iters", str(iters), "--ckpt-dir", base, "--threads", "1"],
                       env={k: v for k, v in os.environ.items() if not k.startswith("RUBICK_")},
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, r.stderr)
    return [float(l.split()[1]) for l in open(os.path.join(base, "loss.log")) if l.strip()]


def pytorch_multinode(d, lat):
    """A job placed on 2 nodes x 2 GPUs runs 4 gloo ranks, 2 on each node (srun, one task a
    node, rendezvous from the allocation); reconfigured mid-run to a 2-stage pipeline plan on
    8 GPUs of one node (the checkpoint signal reaches every node through srun), its loss
    follows a 1-process run."""
    blockers = []
    for g in (8, 8, 6, 6):  # leaves 2 GPUs free on each of two nodes only
        st, j = d.call("POST", "/v1/jobs", {"name": "block%d" % len(blockers), "model": "bert",
                                           "iterations": 1000, "gpus": g, "global_batch": 48,
                                           "command": "sleep 600"})
        check(st == 201, j)
        blockers.append(j["id"])
    for b in blockers:
        d.wait_state(b, ["running"], timeout=60)
    iters = 20
    st, j = d.call("POST", "/v1/jobs", {"name": "torch-2x2", "model": "bert", "iterations": iters, "gpus": 4,
                                       "command": "/usr/bin/python3 %s --threads 1 --report-every 2" % TRAIN})
    check(st == 201, j)
    jid = j["id"]
    j = d.wait_state(jid, ["running", "done", "failed"], timeout=60)
    shares = j["alloc"]
    check(sorted(s["gpus"] for s in shares) == [2, 2], "not placed 2 x 2: %s" % shares)
    names = node_names()
    chosen = [names[s["node"]] for s in shares]
    loss_log = os.path.join(job_dir(d, jid), "ckpt", "loss.log")
    wait_lines(loss_log, 6, timeout=180)
    d.call("DELETE", "/v1/jobs/%d" % blockers[0])  # frees a whole node
    d.wait_state(blockers[0], ["cancelled"], timeout=60)
    gb = j["spec"]["global_batch"]
    pp_plan = "dp=4,tp=1,pp=2,mb=%d,ga=2,gc=0,zero=0,offload=0" % (gb // 8)
    st, r = d.call("PUT", "/v1/jobs/%d" % jid, {"gpus": 8, "plan": pp_plan})
    check(st == 200, r)
    j = d.wait_state(jid, ["done", "failed"], timeout=300)
    joblog = open(os.path.join(job_dir(d, jid), "log")).read()
    check(j["state"] == "done" and "checkpointed at" in joblog, (j, joblog))
    for b in blockers[1:]:
        d.call("DELETE", "/v1/jobs/%d" % b)
    ranks = {}
    for line in joblog.splitlines():
        w = line.split()
        if len(w) == 6 and w[0] == "rank" and w[2:4] == ["on", "node"]:
            ranks[int(w[1].split("/")[0])] = (int(w[4]), w[5])
    check(sorted(ranks) == [0, 1, 2, 3], "ranks: %s\n%s" % (ranks, joblog))
    per_node = {}
    for r, (nr, host) in ranks.items():
        per_node.setdefault((nr, host), []).append(r)
    check(sorted(per_node) == [(0, chosen[0]), (1, chosen[1])] and
          all(len(v) == 2 for v in per_node.values()), "ranks per node: %s, nodes %s" % (per_node, chosen))
    rows = [l.split() for l in open(loss_log) if l.strip()]
    check([int(r[0]) for r in rows] == list(range(1, iters + 1)), "steps lost or repeated: %s" % rows)
    plans = [(int(r[3]), int(r[5])) for r in rows]  # (dp, pp)
    check(plans[0] == (4, 1) and plans[-1] == (4, 2) and plans == sorted(plans), "dp, pp: %s" % plans)
    a = torch_baseline(d, gb, iters, "torch-base-2x2")
    worst = max(abs(x - float(y[1])) / abs(x) for x, y in zip(a, rows))
    lat["torch 2x2 nodes max relative loss difference"] = worst
    check(worst <= RTOL, "2-node loss diverges from 1 process: %s vs %s" % (a, rows))
    for b in blockers:
        d.wait_state(b, ["cancelled"], timeout=60)
    print("torch 2 nodes x 2: ranks %s, max rel diff %.1e" % (per_node, worst))


def restart_mid_job(d, lat):
    st, j = d.call("POST", "/v1/jobs", {"name": "adopt", "model": "bert", "iterations": 150,
                                       "gpus": 2, "command": "sh " + JOB_SH})
    check(st == 201, j)
    jid = j["id"]
    j = d.wait_state(jid, ["running"])
    run = j["run"]
    log = os.path.join(job_dir(d, jid), "ckpt", "iters.log")
    wait_lines(log, 20)
    sid = slurm_id(d, jid, run)
    d.kill9()
    time.sleep(0.5)
    check(squeue(sid, "%T") == "RUNNING", "the Slurm job kept running without rubickd")
    d.start()
    j = d.wait_state(jid, ["done", "failed"], timeout=120)
    check(j["state"] == "done" and j["run"] == run and j["restarts"] == 0,
          "adopted without a relaunch: %s" % j)
    iters = [int(l.split()[0]) for l in open(log) if l.strip()]
    check(iters == list(range(1, 151)), "iterations lost or repeated across the restart")


def node_down(d):
    """A node fails mid-job: its slurmd is killed and Slurm marks it down (with
    ReturnToService=2 a responding slurmd would bring it straight back). rubick sees
    the capacity change and relaunches the job elsewhere; the node comes back later."""
    st, j = d.call("POST", "/v1/jobs", {"name": "nodefail", "model": "bert", "iterations": 150,
                                       "gpus": 2, "command": "sh " + JOB_SH})
    check(st == 201, j)
    jid = j["id"]
    j = d.wait_state(jid, ["running"])
    run = j["run"]
    wait_lines(os.path.join(job_dir(d, jid), "ckpt", "iters.log"), 20)
    names = node_names()
    node = names[j["alloc"][0]["node"]]
    lab = os.environ["RK_SLURM_LAB"]
    pid = int(open(os.path.join(lab, "run", "slurmd-%s.pid" % node)).read())
    os.kill(pid, 9)
    subprocess.run(["scontrol", "update", "nodename=" + node, "state=down", "reason=rubick-test"],
                   check=True, timeout=10)
    end = time.time() + 60
    while time.time() < end:
        st, j = d.call("GET", "/v1/jobs/%d" % jid)
        if j["run"] > run and j["state"] == "running":
            break
        time.sleep(0.1)
    check(j["run"] > run and j["state"] == "running", "no new run after node %s went down: %s" % (node, j))
    down_idx = names.index(node)
    check(all(sh["node"] != down_idx for sh in j["alloc"]), "relaunched on the down node %s: %s" % (node, j))
    st, nodes = d.call("GET", "/v1/nodes")
    check(st == 200 and not [n for n in nodes["nodes"] if n["id"] == down_idx][0]["up"],
          "node %s still up for rubick: %s" % (node, nodes))
    # the node returns: a new slurmd (it also ends the old run's orphaned step), then resume
    subprocess.Popen(["setsid", "slurmd", "-D", "-N", node], stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    end = time.time() + 30
    while time.time() < end:
        subprocess.run(["scontrol", "update", "nodename=" + node, "state=resume"], capture_output=True, timeout=10)
        st, nodes = d.call("GET", "/v1/nodes")
        if [n for n in nodes["nodes"] if n["id"] == down_idx][0]["up"]:
            break
        time.sleep(0.5)
    check([n for n in nodes["nodes"] if n["id"] == down_idx][0]["up"], "node %s never back: %s" % (node, nodes))
    j = d.wait_state(jid, ["done", "failed"], timeout=120)
    check(j["state"] == "done", "after the node failure: %s" % j)


def burst(d, n=200):
    ids = []
    for i in range(n):
        st, j = d.call("POST", "/v1/jobs", {"name": "b%d" % i, "model": "bert", "iterations": 1,
                                           "gpus": 1, "command": "true"})
        check(st == 201, j)
        ids.append(j["id"])
    end = time.time() + 240
    left = set(ids)
    while left and time.time() < end:
        jobs, before = [], 0
        for _ in range(100):  # every page: one reply holds at most 500 jobs (docs/api.md)
            st, lst = d.call("GET", "/v1/jobs?limit=1000" + ("&before=%d" % before if before else ""))
            jobs += lst["jobs"]
            before = lst.get("next_before_id", 0)
            if not before:
                break
        for j in jobs:
            if j["id"] in left and j["state"] in ("done", "failed"):
                check(j["state"] == "done", "burst job failed: %s" % j)
                left.discard(j["id"])
        time.sleep(0.5)
    check(not left, "%d of %d burst jobs unfinished" % (len(left), n))


def main():
    # placement=spread: the multi-node case needs FIFO to split a 4-GPU job 2 + 2 (its
    # default, Tiresias'/Muri's consolidated placement, would wait for one node).
    d = Daemon(cluster="4x8:a800,cpus=16", extra=["--engine", "slurm", "--policy-options",
                                                  "placement=spread"], grace_ms=5000)
    d.start()
    lat = {}
    try:
        placement_and_reconfig(d, lat)
        print("placement and reconfiguration ok")
        if os.environ.get("RK_SLURM_NO_TORCH"):
            print("pytorch phase left to the plain build (RK_SLURM_NO_TORCH)")
        else:
            pytorch_reconfig(d, lat)
            print("pytorch reconfiguration ok")
            pytorch_multinode(d, lat)
            print("pytorch on 2 nodes ok")
        restart_mid_job(d, lat)
        print("restart mid-job ok")
        node_down(d)
        print("node down mid-job ok")
        t0 = time.time()
        burst(d)
        print("burst of 200 ok in %.1f s" % (time.time() - t0))
        for k, v in lat.items():
            print("measured %s: %.3g" % (k, v))
        return 0
    finally:
        try:
            d.stop()
        except AssertionError as e:
            print(e)
            raise


if __name__ == "__main__":
    sys.exit(main())
