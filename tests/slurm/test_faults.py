"""Issue 13, the rest of the Slurm side, on the emulated 4 x 8-GPU cluster (tests/slurm/run.sh),
one rubickd for all phases:
- a decision that fails in a round is dropped alone: under tiresias a new job preempts a job
  (examples/train.py, the real job, where torch is installed) on a node drained under it; that
  placement is a new run on a draining node, so it is dropped with a `decision-dropped` event
  naming the job and the node, while the same round's other decisions apply and another new
  job starts elsewhere; once the node is resumed the dropped job starts there;
- put-back: a job rubick places on a node whose GPUs a foreign sbatch job takes at the moment
  the job is requeued for a reconfiguration (Slurm starts the waiting foreign job at once) is
  left PENDING by Slurm; rubick puts it back (`put-back` event) and re-places it elsewhere,
  where Slurm runs it: a job rubick shows running is RUNNING in Slurm;
- reservations: an active one (scontrol create reservation) and one that starts later both
  take their node out of rubick's view (Slurm would leave a job without time limit pending
  there); an 8-GPU job waits and starts there once the reservation is deleted;
- Slurm options per submission: slurm_partition, slurm_account, slurm_time_limit override the
  tenant's and reach sbatch (squeue %P %a %l); the tenant's allow-lists and time limit refuse
  others with a 403 naming the field; a bad name is a 400;
- min/max GPUs kept by every policy in POLICIES: a fixed job and an elastic one (min 1, max 4)
  run within their ranges, in rubick and in Slurm, and a forced PUT to 4 GPUs is honoured
  (rubick and sia keep every job's range: docs/policies.md "GPU ranges");
- hold, release, requeue (docs/api.md) through Slurm: a requeue checkpoints the run (the Slurm
  job ends COMPLETED, its Comment says rubick's checkpoint note) and run 2 resumes from the
  checkpoint in the same Slurm job; `requeue --hold` leaves nothing active in Slurm and the job
  Held; release runs it again, no iteration lost or repeated. A held pending job is never
  submitted to Slurm; its owner cannot release the admin's hold (403); with every node drained
  it is Infeasible, and it runs once the nodes are resumed."""
import os
import re
import subprocess
import sys
import time

HERE = os.path.abspath(os.path.dirname(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
from rkd import ALICE, BUILD, Daemon  # noqa: E402
from test_engine import check, job_dir, node_names, slurm_id, squeue, wait_lines  # noqa: E402

JOB_SH = os.path.join(HERE, "..", "daemon", "job.sh")
TRAIN = os.path.abspath(os.path.join(HERE, "..", "..", "examples", "train.py"))
DAVE = "dave-token-0123456789abcdefgh"
# Policies (and options) whose min/max GPUs the test checks. Before every policy kept the
# range, sia's range=plan and rubick ignored it (a fixed 2-GPU job ran on 16 GPUs here).
POLICIES = [("fifo", None), ("sjf", None), ("tiresias", None), ("sia", None), ("rubick", None)]


def submit(d, name, gpus, iters=100000, command=None, token=None, **extra):
    body = {"name": name, "model": "bert", "iterations": iters, "gpus": gpus, "command": command or "sh " + JOB_SH}
    body.update(extra)
    st, j = d.call("POST", "/v1/jobs", body, **({"token": token} if token else {}))
    check(st == 201, (st, j))
    return j["id"]


def get(d, jid):
    st, j = d.call("GET", "/v1/jobs/%d" % jid)
    check(st == 200, j)
    return j


def events(d, jid):
    st, ev = d.call("GET", "/v1/jobs/%d/events" % jid)
    check(st == 200, ev)
    return ev["events"] if isinstance(ev, dict) else ev


def slurm_running(sid, timeout=15):
    end = time.time() + timeout
    while time.time() < end and squeue(sid, "%T") != "RUNNING":
        time.sleep(0.1)
    return squeue(sid, "%T") == "RUNNING"


def cancel_all(d, ids):
    for x in ids:
        d.call("DELETE", "/v1/jobs/%d" % x)
    for x in ids:
        d.wait_state(x, ["cancelled", "done", "failed"], timeout=60)


def outside(nodes, gpus, partition="gpu"):
    """A root sbatch job outside rubick on `nodes` (the submit plugin holds it; root releases)."""
    r = subprocess.run(["sbatch", "--parsable", "-N1", "-p", partition, "-w", nodes, "--gres=gpu:%d" % gpus,
                        "--output=/dev/null", "--wrap", "sleep 600"], capture_output=True, text=True, timeout=20)
    check(r.returncode == 0, "sbatch: %s" % r.stderr)
    sid = r.stdout.strip().split(";")[0]
    subprocess.run(["scontrol", "release", sid], check=True, timeout=10)
    return sid


def set_policy(d, name, options=None):
    body = {"name": name}
    if options:
        body["options"] = options
    st, r = d.call("PUT", "/v1/policy", body)
    check(st == 200, (name, r))


def dropped_alone(d):
    """tiresias: a preemption for a placement on a draining node; that placement alone is dropped."""
    names = node_names()
    torch = not os.environ.get("RK_SLURM_NO_TORCH")
    cmd = "/usr/bin/python3 %s --threads 1 --report-every 5" % TRAIN if torch else None
    # queue 0 until 40 GPU-seconds: A (8 GPUs) drops to queue 1 after 5 s, new jobs stay in queue 0
    set_policy(d, "tiresias", "queues_gpu_s=40")
    fg = [outside(names[k], 8) for k in (2, 3)]  # two nodes are someone else's
    ids = []
    try:
        for s in fg:
            check(slurm_running(s, 30), "outside job %s: %s" % (s, squeue(s, "%T %r")))
        a = submit(d, "drained-victim", 8, command=cmd)
        ids.append(a)
        ja = d.wait_state(a, ["running"], timeout=60)
        x = ja["alloc"][0]["node"]
        check(x in (0, 1), "placed on an outside job's node: %s" % ja)
        y = 1 - x
        if torch:
            wait_lines(os.path.join(job_dir(d, a), "ckpt", "loss.log"), 2, timeout=120)
        time.sleep(7)  # 8 GPUs x 7 s of attained service: queue 1 (the API's figure lags: stored state)
        subprocess.run(["scontrol", "update", "nodename=" + names[x], "state=drain", "reason=rubick-drop-test"],
                       check=True, timeout=10)
        end = time.time() + 20
        while time.time() < end and "drain" not in node_state(d, x):
            time.sleep(0.2)
        check("drain" in node_state(d, x), "drain not seen: %s" % node_state(d, x))
        b = submit(d, "new-b", 8)
        c = submit(d, "new-c", 8)
        ids += [b, c]
        # one of them gets the free node; the other's placement (A's GPUs on the drained node) is dropped
        end = time.time() + 60
        dropped = None
        while time.time() < end and dropped is None:
            for z in (b, c):
                if any(e["kind"] == "decision-dropped" for e in events(d, z)):
                    dropped = z
            time.sleep(0.2)
        check(dropped is not None, "no decision-dropped event: %s %s" % (events(d, b), events(d, c)))
        other = c if dropped == b else b
        ev = [e for e in events(d, dropped) if e["kind"] == "decision-dropped"][0]
        check(("job %d" % dropped) in ev["detail"] and ("node %d" % x) in ev["detail"] and "drain" in ev["detail"],
              "the event must name the job, the node and why: %s" % ev)
        jo = d.wait_state(other, ["running"], timeout=60)
        check(jo["alloc"][0]["node"] == y, "the other job: %s" % jo)
        check(slurm_running(slurm_id(d, other, jo["run"])), "the other job is not running in Slurm")
        time.sleep(1)
        jd = get(d, dropped)
        check(jd["state"] == "pending", "the dropped job: %s" % jd)
        print("decision-dropped: %s" % ev["detail"])
        # the node back in service: the dropped job (queue 0) starts there, before A (queue 1)
        subprocess.run(["scontrol", "update", "nodename=" + names[x], "state=resume"], check=True, timeout=10)
        jd = d.wait_state(dropped, ["running"], timeout=60)
        check(jd["alloc"][0]["node"] == x, jd)
        check(slurm_running(slurm_id(d, dropped, jd["run"])), "not running in Slurm")
    finally:
        cancel_all(d, ids)
        for s in fg:
            subprocess.run(["scancel", s], timeout=10)
        subprocess.run(["scontrol", "update", "nodename=" + names[x if "x" in dir() else 0], "state=resume"],
                       capture_output=True, timeout=10)
        set_policy(d, "fifo")


def node_state(d, idx):
    st, nodes = d.call("GET", "/v1/nodes")
    return [n for n in nodes["nodes"] if n["id"] == idx][0]["state"]


def put_back(d):
    """A foreign job takes the node at the requeue of a reconfiguration: Slurm leaves the
    re-placed run PENDING; rubick puts it back and places it where Slurm runs it."""
    names = node_names()
    fill = []
    a = submit(d, "put-back", 4)
    ids = [a]
    sid_f = None
    try:
        ja = d.wait_state(a, ["running"], timeout=60)
        z = ja["alloc"][0]["node"]
        sa = slurm_id(d, a, ja["run"])
        check(slurm_running(sa), "not running in Slurm")
        # the other nodes full (rubick's own jobs), so rubick re-places A on z
        for k in range(3):
            fill.append(submit(d, "fill%d" % k, 8))
        ids += fill
        for f in fill:
            jf = d.wait_state(f, ["running"], timeout=60)
            check(jf["alloc"][0]["node"] != z, jf)
        wait_lines(os.path.join(job_dir(d, a), "ckpt", "iters.log"), 5)
        # an outside job wants all of z: released, it waits (Resources) behind A's 4 GPUs; in the
        # partition Slurm schedules first (PriorityTier), so that z is its own once A's run ends
        sid_f = outside(names[z], 8, partition="long")
        time.sleep(1)
        check(squeue(sid_f, "%T") == "PENDING", "the outside job: %s" % squeue(sid_f, "%T %r"))
        t0 = time.time()
        st, r = d.call("PUT", "/v1/jobs/%d" % a, {"gpus": 8})
        check(st == 200, r)
        # A's requeue frees z: Slurm starts the outside job at once; A's new run stays pending
        check(slurm_running(sid_f, 30), "the outside job did not take the node: %s" % squeue(sid_f, "%T %r"))
        ev = []
        end = time.time() + 90
        while time.time() < end and not any(e["kind"] == "put-back" for e in ev):
            ev = events(d, a)
            time.sleep(0.3)
        pb = [e for e in ev if e["kind"] == "put-back"]
        check(pb and "pending" in pb[0]["detail"], "no put-back: %s" % ev)
        print("put-back after %.1f s: %s" % (time.time() - t0, pb[0]["detail"]))
        # no room anywhere now (z is the outside job's): A waits in rubick, not "running"
        time.sleep(1)
        ja = get(d, a)
        check(ja["state"] == "pending", "shown running while Slurm cannot run it: %s" % ja)
        check(squeue(sa, "%T") == "PENDING" and float(squeue(sa, "%p")) == 0,
              "held again in Slurm: %s" % squeue(sa, "%T %r %p"))
        # a node freed: A is placed there and runs in Slurm
        d.call("DELETE", "/v1/jobs/%d" % fill[0])
        ja = d.wait_state(a, ["running"], timeout=60)
        check(ja["alloc"][0]["node"] != z, "re-placed on the outside job's node: %s" % ja)
        check(slurm_running(sa, 20), "shown running, Slurm: %s" % squeue(sa, "%T %r"))
    finally:
        cancel_all(d, ids)
        if sid_f:
            subprocess.run(["scancel", sid_f], timeout=10)


def reservations(d):
    names = node_names()
    ids = []
    made = []
    try:
        for name, start, node in (("rk-now", "now", 0), ("rk-later", "now+600", 1)):
            r = subprocess.run(["scontrol", "create", "reservation", "reservationname=" + name, "starttime=" + start,
                                "duration=30", "nodes=" + names[node], "users=root", "flags=maint,ignore_jobs"],
                               capture_output=True, text=True, timeout=10)
            check(r.returncode == 0, "scontrol create reservation: %s %s" % (r.stdout, r.stderr))
            made.append(name)
        time.sleep(1)
        for k in range(3):
            ids.append(submit(d, "resv%d" % k, 8))
        placed = []
        for x in ids[:2]:
            j = d.wait_state(x, ["running"], timeout=60)
            placed.append(j["alloc"][0]["node"])
            check(slurm_running(slurm_id(d, x, j["run"])), "not running in Slurm")
        check(sorted(placed) == [2, 3], "placed on reserved nodes: %s" % placed)
        time.sleep(2)
        check(get(d, ids[2])["state"] == "pending", "placed on a reserved node: %s" % get(d, ids[2]))
        subprocess.run(["scontrol", "delete", "reservationname=rk-later"], check=True, timeout=10)
        made.remove("rk-later")
        j = d.wait_state(ids[2], ["running"], timeout=60)
        check(j["alloc"][0]["node"] == 1, "not on the freed node: %s" % j)
        check(slurm_running(slurm_id(d, ids[2], j["run"])), "not running in Slurm")
    finally:
        for name in made:
            subprocess.run(["scontrol", "delete", "reservationname=" + name], timeout=10)
        cancel_all(d, ids)


def slurm_options(d):
    a = submit(d, "opts", 1, token=DAVE, slurm_partition="long", slurm_account="physics", slurm_time_limit=7)
    j = d.wait_state(a, ["running"], timeout=60)
    sid = slurm_id(d, a, j["run"])
    check(slurm_running(sid), "not running in Slurm")
    got = squeue(sid, "%P %a %l")
    check(got == "long physics 7:00", "the submission's partition, account, time limit: %s" % got)
    b = submit(d, "opts-default", 1, token=DAVE)
    jb = d.wait_state(b, ["running"], timeout=60)
    sb = slurm_id(d, b, jb["run"])
    check(squeue(sb, "%P %a %l") == "gpu research 30:00", "the tenant's defaults: %s" % squeue(sb, "%P %a %l"))
    for field, value, status in (("slurm_account", "evil", 403), ("slurm_partition", "debug", 403),
                                 ("slurm_time_limit", 31, 403), ("slurm_qos", "a b", 400)):
        body = {"name": "bad", "model": "bert", "iterations": 10, "gpus": 1, "command": "true", field: value}
        st, r = d.call("POST", "/v1/jobs", body, token=DAVE)
        check(st == status and field in str(r), "%s=%s: %s %s" % (field, value, st, r))
    cancel_all(d, [a, b])


def alloc_gpus(j):
    return sum(s["gpus"] for s in j["alloc"])


def slurm_gpus(sid):
    """GPUs Slurm gives a job: squeue's %b is per node (gres:gpu:N) for even shares; an
    uneven one asks per job (%b N/A): then from the job's TRES in scontrol show job."""
    b, n = squeue(sid, "%b"), squeue(sid, "%D")
    if "gpu:" in b:
        return int(b.split(":")[-1]) * int(n)
    out = subprocess.run(["scontrol", "show", "job", str(sid)], capture_output=True, text=True, timeout=10).stdout
    for w in out.split():
        if w.startswith("TresPerJob="):
            return int(w.split(":")[-1])
    return -1


def min_max(d, lat):
    for pol, opts in POLICIES:
        t0 = time.time()
        set_policy(d, pol, opts)
        fixed = submit(d, "fixed-" + pol, 2)
        elastic = submit(d, "elastic-" + pol, 2, min_gpus=1, max_gpus=4)
        try:
            for x, lo, hi in ((fixed, 2, 2), (elastic, 1, 4)):
                j = d.wait_state(x, ["running"], timeout=60)
                g = alloc_gpus(j)
                check(lo <= g <= hi, "%s: job %d holds %d GPUs, range [%d, %d]: %s" % (pol, x, g, lo, hi, j))
                sid = slurm_id(d, x, j["run"])
                check(slurm_running(sid), "%s: not running in Slurm" % pol)
                check(slurm_gpus(sid) == g, "%s: Slurm's GPUs %s, rubick's %d" % (pol, squeue(sid, "%b %D"), g))
            run = get(d, fixed)["run"]
            st, r = d.call("PUT", "/v1/jobs/%d" % fixed, {"gpus": 4, "min_gpus": 4, "max_gpus": 4})
            check(st == 200, r)
            end = time.time() + 60
            while time.time() < end:
                j = get(d, fixed)
                if j["run"] > run and j["state"] == "running":
                    break
                time.sleep(0.1)
            check(j["run"] > run and alloc_gpus(j) == 4, "%s: the forced PUT to 4 GPUs: %s" % (pol, j))
            sid = slurm_id(d, fixed, j["run"])
            check(slurm_running(sid) and slurm_gpus(sid) == 4, "%s: Slurm: %s" % (pol, squeue(sid, "%T %b %D")))
            time.sleep(1)  # a few more rounds: the ranges still hold
            for x, lo, hi in ((fixed, 4, 4), (elastic, 1, 4)):
                g = alloc_gpus(get(d, x))
                check(lo <= g <= hi, "%s: job %d drifted to %d GPUs" % (pol, x, g))
        finally:
            cancel_all(d, [fixed, elastic])
        lat["min/max phase, %s (s)" % pol] = time.time() - t0
    set_policy(d, "fifo")


def rubick(d, *args):
    env = dict(os.environ, RUBICK_URL=d.url, RUBICK_TOKEN_FILE=os.path.join(d.dir, "admin.token"))
    p = subprocess.run([os.path.join(BUILD, "src", "cli", "rubick")] + list(args), env=env,
                       capture_output=True, text=True, timeout=30)
    return p.returncode, p.stdout, p.stderr


def queue_reason(d, jid):
    rc, out, err = rubick(d, "queue")
    row = [x.split() for x in out.splitlines()[1:] if x.split() and x.split()[0] == str(jid)]
    return row[0][-1] if rc == 0 and row else "(rc %d: %s %s)" % (rc, out, err)


def wait_reason(d, jid, want, timeout=20):
    end = time.time() + timeout
    while time.time() < end and get(d, jid).get("pending_reason") != want:
        time.sleep(0.1)
    j = get(d, jid)
    check(j.get("pending_reason") == want, "job %d: pending_reason %s, want %s: %s" %
          (jid, j.get("pending_reason"), want, j))
    return j


def slurm_active():
    """Slurm job ids squeue lists by default (pending, running, completing...)."""
    return subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True, timeout=10).stdout.split()


def wait_run(d, jid, run, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        j = get(d, jid)
        if j["run"] >= run and j["state"] == "running":
            return j
        time.sleep(0.1)
    raise AssertionError("job %d: never running as run %d: %s" % (jid, run, get(d, jid)))


def requeue_phase(d):
    """Requeue, then requeue --hold and release, of a job running in Slurm (job.sh)."""
    iters = 300
    a = submit(d, "requeue", 2, iters=iters)
    try:
        ja = d.wait_state(a, ["running"], timeout=60)
        sid = slurm_id(d, a, ja["run"])
        check(slurm_running(sid), "not running in Slurm: %s" % squeue(sid, "%T %r"))
        log = os.path.join(job_dir(d, a), "ckpt", "iters.log")
        wait_lines(log, 20)
        st, r = d.call("POST", "/v1/jobs/%d/requeue" % a)
        check(st == 200 and r["state"] == "pending" and r["hold"] is None, "requeue: %d %s" % (st, r))
        ja = wait_run(d, a, 2)
        check(slurm_id(d, a, 2) == sid and slurm_running(sid), "run 2 is not Slurm job %s running: %s" %
              (sid, squeue(sid, "%T %r")))
        exit1 = open(os.path.join(job_dir(d, a), "ckpt", ".exit-run-1")).read().strip()
        check(exit1 == "75", "run 1 did not end on its checkpoint (exit 75): %s" % exit1)
        n1 = len(open(log).readlines())
        wait_lines(log, n1 + 20)
        # requeue --hold: run 2 checkpoints, the Slurm job ends, nothing active stays in Slurm
        rc, out, err = rubick(d, "requeue", "--hold", str(a))
        check(rc == 0 and "requeued job %d and held it" % a in out, "requeue --hold: %d %s %s" % (rc, out, err))
        end = time.time() + 30
        while time.time() < end and (get(d, a)["alloc"] or squeue(sid, "%T") in ("RUNNING", "COMPLETING")):
            time.sleep(0.1)
        n2 = len(open(log).readlines())
        time.sleep(1.5)  # a few rounds: the held job stays out of them and out of Slurm
        j = get(d, a)
        check(j["state"] == "pending" and j["hold"] == "admin" and j["pending_reason"] == "Held" and j["run"] == 2,
              "requeued and held: %s" % j)
        check(len(open(log).readlines()) == n2, "iterations after the requeue --hold")
        check(str(sid) not in slurm_active(), "Slurm job %s still active: %s" % (sid, squeue(sid, "%T %r")))
        note = subprocess.run(["squeue", "-h", "-t", "all", "-j", str(sid), "-o", "%T|%k"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        check(note.startswith("COMPLETED|") and "rubick: checkpoint" in note and "(job %d run 2)" % a in note,
              "Slurm's record of the checkpointed run: %s" % note)
        check(queue_reason(d, a) == "(JobHeldAdmin)", "rubick queue: %s" % queue_reason(d, a))
        rc, out, err = rubick(d, "release", str(a))
        check(rc == 0, "release: %d %s %s" % (rc, out, err))
        ja = wait_run(d, a, 3)
        check(slurm_id(d, a, 3) == sid and slurm_running(sid), "run 3 in Slurm: %s" % squeue(sid, "%T %r"))
        j = d.wait_state(a, ["done", "failed"], timeout=120)
        joblog = open(os.path.join(job_dir(d, a), "log")).read()
        check(j["state"] == "done", "the requeued job: %s %s" % (j, joblog))
        done = [int(x.split()[0]) for x in open(log).read().split("\n") if x]
        check(done == list(range(1, iters + 1)), "iterations lost or repeated: %s" % done)
        # Where each run resumed is what the run before checkpointed (the job's own log):
        # counting iterations once run 2 is seen running races with run 2's first steps.
        cks = [int(x) for x in re.findall(r"checkpointed at (\d+)", joblog)]
        check(len(cks) == 2 and cks[0] >= 20 and cks[1] >= cks[0] + 20 and cks[1] == n2,
              "two checkpoints, at the requeue (>= 20) and at the requeue --hold (%d): %s" % (n2, cks))
        for run, n in zip((2, 3), cks):
            check("run %d resumes at %d" % (run, n) in joblog,
                  "run %d resumes from the checkpoint at %d: %s" % (run, n, joblog))
        print("requeue: checkpoints at %s, Slurm: %s" % (cks, note))
    finally:
        cancel_all(d, [a])


def hold_infeasible_phase(d):
    """A held pending job stays out of Slurm; drained nodes make it Infeasible; resumed, it runs."""
    names = node_names()
    before = set(slurm_active())
    b = submit(d, "held", 2, token=ALICE, hold=True)
    drained = False
    try:
        check(get(d, b)["hold"] == "user", "submitted held: %s" % get(d, b))
        st, r = d.call("POST", "/v1/jobs/%d/hold" % b)
        check(st == 200 and r["hold"] == "admin", "the admin's hold: %d %s" % (st, r))
        st, r = d.call("POST", "/v1/jobs/%d/release" % b, token=ALICE)
        check(st == 403 and "only the admin" in str(r), "the owner releases the admin's hold: %d %s" % (st, r))
        time.sleep(1.5)  # rounds on an idle cluster: a held job is not submitted to Slurm
        j = get(d, b)
        check(j["state"] == "pending" and j["run"] == 0 and j["pending_reason"] == "Held", "held: %s" % j)
        check(not os.path.exists(os.path.join(job_dir(d, b), "slurm_id")), "a held job has a Slurm job")
        check(set(slurm_active()) == before, "Slurm jobs while held: %s, before %s" % (slurm_active(), before))
        check(queue_reason(d, b) == "(JobHeldAdmin)", "rubick queue: %s" % queue_reason(d, b))
        # every node drained: nothing up could ever fit it
        for n in names:
            subprocess.run(["scontrol", "update", "nodename=" + n, "state=drain", "reason=rubick-hold-test"],
                           check=True, timeout=10)
        drained = True
        end = time.time() + 20
        while time.time() < end and not all("drain" in node_state(d, k) for k in range(len(names))):
            time.sleep(0.2)
        st, r = d.call("POST", "/v1/jobs/%d/release" % b)
        check(st == 200 and r["hold"] is None, "the admin releases: %d %s" % (st, r))
        wait_reason(d, b, "Infeasible")
        check(queue_reason(d, b) == "(Infeasible)", "rubick queue: %s" % queue_reason(d, b))
        check(set(slurm_active()) == before, "Slurm jobs while infeasible: %s" % slurm_active())
        for n in names:
            subprocess.run(["scontrol", "update", "nodename=" + n, "state=resume"], check=True, timeout=10)
        drained = False
        j = d.wait_state(b, ["running"], timeout=60)
        check(j["pending_reason"] is None and slurm_running(slurm_id(d, b, j["run"])), "resumed: %s" % j)
    finally:
        cancel_all(d, [b])
        if drained:
            for n in names:
                subprocess.run(["scontrol", "update", "nodename=" + n, "state=resume"], capture_output=True,
                               timeout=10)


def main():
    d = Daemon(cluster="4x8:a800,cpus=16", extra=["--engine", "slurm"], grace_ms=2000)
    p = os.path.join(d.dir, "dave.token")
    with open(p, "w") as f:
        f.write(DAVE + "\n")
    os.chmod(p, 0o600)
    with open(d.conf, "a") as f:
        f.write("[tenant dave]\ntoken_file = %s\nslurm_account = research\nslurm_time_limit = 30\n"
                "slurm_allowed_accounts = research, physics\nslurm_allowed_partitions = gpu,long\n" % p)
    d.start()
    lat = {}
    try:
        for name, phase in (("slurm options per submission", slurm_options), ("reservations", reservations),
                            ("decision dropped alone", dropped_alone), ("put-back", put_back),
                            ("requeue", requeue_phase), ("hold and infeasible", hold_infeasible_phase)):
            t0 = time.time()
            phase(d)
            lat["%s phase (s)" % name] = time.time() - t0
            print("%s ok" % name)
        if os.environ.get("RK_SLURM_NO_TORCH"):
            # the sanitizer build: policies' ranges are the plain build's check (CI time)
            print("min/max phase left to the plain build (RK_SLURM_NO_TORCH)")
        else:
            min_max(d, lat)
            print("min/max kept by %s ok" % ", ".join(p if not o else "%s (%s)" % (p, o) for p, o in POLICIES))
        for k, v in lat.items():
            print("measured %s: %.1f" % (k, v))
        return 0
    finally:
        d.stop()


if __name__ == "__main__":
    sys.exit(main())
