"""Pending reasons and hold / release / requeue (issue 13, docs/api.md "Pending
reasons" and "Hold, release, requeue"), through the API and the CLI, on the local
engine: why a pending job waits (Resources, Priority, Quota, Held) as the scheduler
computed it, in GET /v1/jobs[/ID], `rubick queue` (REASON) and `rubick show`; holds by
the owner and the admin (the owner cannot release the admin's), another tenant's job
404, every refusal naming the job and why with its exit code; a hold survives a
restart of rubickd and keeps the job off idle GPUs; requeue checkpoints a running
job and it resumes from its checkpoint (tests/daemon/job.sh), no iteration lost or
repeated."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from rkd import Daemon, BUILD, ALICE, BOB  # noqa: E402

HERE = os.path.abspath(os.path.dirname(__file__))
RUBICK = os.path.join(BUILD, "src", "cli", "rubick")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def cli(d):
    tok = {name: os.path.join(d.dir, name + ".token") for name in ("admin", "alice", "bob")}

    def rk(who, *args):
        env = dict(os.environ, RUBICK_URL=d.url, RUBICK_TOKEN_FILE=tok[who])
        p = subprocess.run([RUBICK] + list(args), env=env, capture_output=True, text=True,
                           timeout=60)
        return p.returncode, p.stdout, p.stderr
    return rk


def job(d, jid, token=None):
    st, j = d.call("GET", "/v1/jobs/%d" % jid, **({"token": token} if token else {}))
    return j if st == 200 else {}


def wait_reason(d, jid, want, timeout=10):
    """The job's pending_reason once a round has looked at it (it is "None" before)."""
    end = time.time() + timeout
    j = {}
    while time.time() < end:
        j = job(d, jid)
        if j.get("pending_reason") == want:
            return j
        time.sleep(0.05)
    check(False, "job %d: pending_reason %s, want %s: %s" % (jid, j.get("pending_reason"), want, j))
    return j


def err_of(resp):
    st, body = resp
    return st, (body.get("error", {}) if isinstance(body, dict) else {})


def reasons():
    """Resources, Priority, Quota and Held, each where the scheduler has the facts for it."""
    # Resources: 4 GPUs held, a 2-GPU job waits for them; listed and shown with its reason
    d = Daemon(cluster="1x4", extra=["--policy", "fifo"]).start()
    rk = cli(d)
    try:
        st, a = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 10 ** 8, "gpus": 4,
                                            "command": "sleep 120", "name": "big"})
        d.wait_state(a["id"], ["running"])
        st, b = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 10 ** 8, "gpus": 2,
                                            "command": "sleep 120", "name": "waits"}, token=ALICE)
        check(st == 201 and b["pending_reason"] in ("None", "Resources") and b["hold"] is None,
              "a new job: pending_reason None until a round, no hold: %s" % b)
        wait_reason(d, b["id"], "Resources")
        check(job(d, a["id"]).get("pending_reason", "x") is None, "a running job has no pending reason")
        st, l = d.call("GET", "/v1/jobs?state=pending")
        check(st == 200 and [(x["id"], x["pending_reason"]) for x in l["jobs"]] == [(b["id"], "Resources")],
              "listing carries the reason: %s" % l)
        rc, out, err = rk("admin", "queue")
        lines = out.splitlines()
        row = [x for x in lines[1:] if x.split()[0] == str(b["id"])]
        big = [x for x in lines[1:] if x.split()[0] == str(a["id"])]
        check(rc == 0 and lines[0].split()[-1] == "NODELIST(REASON)" and row
              and row[0].split()[-1] == "(Resources)" and big and big[0].split()[-1].startswith("n"),
              "queue NODELIST(REASON) column: %d %s %s" % (rc, out, err))
        rc, out, err = rk("alice", "show", str(b["id"]))
        check(rc == 0 and "waiting    Resources" in out, "show: the reason: %s %s" % (out, err))
        rc, out, err = rk("alice", "queue", "--json")
        q = json.loads(out) if rc == 0 else {"jobs": []}
        check([x.get("pending_reason") for x in q["jobs"]] == ["Resources"], "queue --json: %s" % out)
        # Held: the owner's hold, then listed as Slurm's JobHeldUser
        rc, out, err = rk("alice", "hold", str(b["id"]))
        check(rc == 0 and "held job %d" % b["id"] in out, "alice holds her job: %d %s %s" % (rc, out, err))
        j = job(d, b["id"])
        check(j.get("pending_reason") == "Held" and j.get("hold") == "user", "held: %s" % j)
        rc, out, err = rk("admin", "queue")
        row = [x for x in out.splitlines()[1:] if x.split()[0] == str(b["id"])]
        check(row and row[0].split()[-1] == "(JobHeldUser)", "queue shows (JobHeldUser): %s" % out)
        # a round does not overwrite Held (the job is out of every round)
        time.sleep(0.5)
        check(job(d, b["id"]).get("pending_reason") == "Held", "Held stays across rounds")
        rc, out, err = rk("alice", "release", str(b["id"]))
        check(rc == 0 and "released job %d" % b["id"] in out, "alice releases: %d %s %s" % (rc, out, err))
        wait_reason(d, b["id"], "Resources")
        # the GPUs free up: it starts, and the reason goes
        d.call("DELETE", "/v1/jobs/%d" % a["id"])
        j = d.wait_state(b["id"], ["running"])
        check(j["pending_reason"] is None and j["hold"] is None, "running: no reason, no hold: %s" % j)
    finally:
        d.stop()

    # Priority: a guaranteed job keeps 3 of 4 GPUs (rubick never resizes it); an
    # elastic job (4 GPUs, at least 1) could start on the free one, but the policy
    # does not start a job on a quarter of its request (RUBICK_MIN_START_FRACTION)
    d = Daemon(cluster="1x4", extra=["--policy", "rubick"]).start()
    try:
        st, a = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 10 ** 8, "gpus": 3,
                                            "global_batch": 48, "guaranteed": True,
                                            "command": "sleep 120"})
        d.wait_state(a["id"], ["running"])
        st, b = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 10 ** 8, "gpus": 4,
                                            "min_gpus": 1, "command": "sleep 120"})
        j = wait_reason(d, b["id"], "Priority")
        check(j.get("state") == "pending" and sum(x["gpus"] for x in job(d, a["id"])["alloc"]) == 3,
              "room for its smallest gang but not started: %s" % j)
        st, l = d.call("GET", "/v1/jobs?state=pending")
        check(st == 200 and [x["pending_reason"] for x in l["jobs"]] == ["Priority"], "listing: %s" % l)
    finally:
        d.stop()

    # Quota: tenant erin may hold 3 GPUs; an elastic job grows into them, and the
    # policy's decision to start a second one is dropped over gpu_quota
    d = Daemon(cluster="1x8", extra=["--policy", "rubick"])
    with open(d.conf, "a") as f:
        f.write("[tenant erin]\ngpu_quota = 3\n")
    d.start()
    try:
        spec = {"model": "bert", "iterations": 10 ** 8, "gpus": 1, "max_gpus": 8, "min_gpus": 1,
                "command": "sleep 120", "tenant": "erin"}
        st, a = d.call("POST", "/v1/jobs", dict(spec, name="e1"))
        d.wait_state(a["id"], ["running"])
        time.sleep(0.5)
        st, b = d.call("POST", "/v1/jobs", dict(spec, name="e2"))
        j = wait_reason(d, b["id"], "Quota")
        held = sum(x["gpus"] for x in job(d, a["id"])["alloc"])
        check(j.get("state") == "pending" and 1 <= held <= 3,
              "e2 waits on erin's quota while e1 holds %d GPUs of 8 free: %s" % (held, j))
    finally:
        d.stop()


def holds():
    """Who may hold and release, every refusal, and a hold across a restart."""
    d = Daemon(cluster="1x4", extra=["--policy", "fifo"]).start()
    rk = cli(d)
    try:
        st, a = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 10 ** 8, "gpus": 4,
                                            "command": "sleep 300"})
        d.wait_state(a["id"], ["running"])
        st, b = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 10 ** 8, "gpus": 2,
                                            "command": "sleep 300"}, token=ALICE)
        bid, aid = b["id"], a["id"]
        path = "/v1/jobs/%d/" % bid
        # another tenant: the job does not exist, for every operation, API and CLI
        for op in ("hold", "release", "requeue"):
            st, e = err_of(d.call("POST", path + op, token=BOB))
            check(st == 404 and e.get("message") == "job %d does not exist" % bid,
                  "bob %s alice's job: %d %s" % (op, st, e))
            rc, out, err = rk("bob", op, str(bid))
            check(rc == 4 and "does not exist" in err, "rubick %s as bob -> 4: %d %s" % (op, rc, err))
        # bad input: unknown job, bad id, unknown body field, a running job, a pending one
        st, e = err_of(d.call("POST", "/v1/jobs/999/hold"))
        check(st == 404 and e.get("field") == "id" and "999" in e.get("message", ""), "unknown id: %d %s" % (st, e))
        st, e = err_of(d.call("POST", "/v1/jobs/x1/hold"))
        check(st == 400 and e.get("field") == "id", "bad id: %d %s" % (st, e))
        st, e = err_of(d.call("POST", path + "hold", {"hold": True}))
        check(st == 400 and e.get("field") == "hold", "hold takes no field: %d %s" % (st, e))
        st, e = err_of(d.call("POST", "/v1/jobs/%d/requeue" % aid, {"hold": "yes"}))
        check(st == 400 and e.get("field") == "hold", "requeue hold must be a boolean: %d %s" % (st, e))
        st, e = err_of(d.call("POST", "/v1/jobs/%d/requeue" % aid, {"colour": 1}))
        check(st == 400 and e.get("field") == "colour", "requeue unknown field: %d %s" % (st, e))
        st, e = err_of(d.call("POST", "/v1/jobs/%d/hold" % aid))
        check(st == 409 and "only a pending job can be held" in e.get("message", "") and
              "requeue --hold %d" % aid in e.get("message", ""), "hold a running job: %d %s" % (st, e))
        st, e = err_of(d.call("POST", path + "requeue", token=ALICE))
        check(st == 409 and "is pending: only a running job can be requeued" in e.get("message", ""),
              "requeue a pending job: %d %s" % (st, e))
        st, e = err_of(d.call("POST", path + "release", token=ALICE))
        check(st == 409 and e.get("message") == "job %d is not held" % bid, "release unheld: %d %s" % (st, e))
        rc, out, err = rk("alice", "release", str(bid))
        check(rc == 1 and "is not held" in err, "rubick release unheld -> 1: %d %s" % (rc, err))
        rc, out, err = rk("alice", "hold")
        check(rc == 2, "rubick hold without a job -> 2: %d %s" % (rc, err))
        rc, out, err = rk("alice", "hold", "--hold", str(bid))
        check(rc == 2 and "--hold" in err, "--hold is requeue's: %d %s" % (rc, err))
        rc, out, err = rk("alice", "hold", "abc")
        check(rc == 2, "rubick hold abc -> 2: %d %s" % (rc, err))
        # the owner's hold: twice is a conflict; the admin turns it into an admin hold
        st, j = d.call("POST", path + "hold", token=ALICE)
        check(st == 200 and j["hold"] == "user" and j["pending_reason"] == "Held", "user hold: %s" % j)
        st, e = err_of(d.call("POST", path + "hold", token=ALICE))
        check(st == 409 and e.get("message") == "job %d is already held (user hold)" % bid,
              "held twice: %d %s" % (st, e))
        st, j = d.call("POST", path + "hold")
        check(st == 200 and j["hold"] == "admin", "the admin over a user hold: %s" % j)
        st, e = err_of(d.call("POST", path + "hold"))
        check(st == 409 and "already held (admin hold)" in e.get("message", ""), "admin twice: %d %s" % (st, e))
        # the owner cannot release the admin's hold (nor hold it again)
        st, e = err_of(d.call("POST", path + "release", token=ALICE))
        check(st == 403 and e.get("message") == "job %d is held by the admin: only the admin can "
              "release it" % bid, "alice releases the admin hold: %d %s" % (st, e))
        rc, out, err = rk("alice", "release", str(bid))
        check(rc == 1 and "only the admin" in err, "rubick release admin hold as owner -> 1: %d %s" % (rc, err))
        # a restart keeps the hold; with every GPU free the held job still waits
        d.stop()
        d.start()
        rk = cli(d)
        j = job(d, bid)
        check(j.get("hold") == "admin" and j.get("pending_reason") == "Held", "after a restart: %s" % j)
        d.call("DELETE", "/v1/jobs/%d" % aid)
        d.wait_state(aid, ["cancelled"])
        time.sleep(1.0)
        j = job(d, bid)
        check(j.get("state") == "pending" and j.get("pending_reason") == "Held",
              "held on an idle cluster, after a restart: %s" % j)
        st, metrics = d.call("GET", "/metrics")
        check(st == 200 and "\nrubick_jobs_held 1\n" in metrics, "rubick_jobs_held 1: %s" % metrics)
        rc, out, err = rk("admin", "release", str(bid), "--json")
        check(rc == 0 and json.loads(out).get("hold") is None, "admin releases: %d %s %s" % (rc, out, err))
        d.wait_state(bid, ["running"])
        st, ev = d.call("GET", "/v1/jobs/%d/events" % bid, token=ALICE)
        kinds = [(e["kind"], e["detail"]) for e in ev["events"] if e["kind"] in ("hold", "release")]
        check(kinds == [("hold", "user hold by alice"), ("hold", "admin hold by admin (was a user hold)"),
                        ("release", "admin hold released by admin")], "hold events: %s" % kinds)
        # the owner may release its own hold
        d.call("POST", "/v1/jobs/%d/requeue" % bid, {"hold": True}, token=ALICE)
        j = job(d, bid)
        check(j.get("state") == "pending" and j.get("hold") == "user", "alice requeue-holds: %s" % j)
        st, j = d.call("POST", path + "release", token=ALICE)
        check(st == 200 and j["hold"] is None, "alice releases her own: %d %s" % (st, j))
        d.wait_state(bid, ["running"])
        # an ended job: 409 naming its state
        d.call("DELETE", "/v1/jobs/%d" % bid)
        st, e = err_of(d.call("POST", path + "hold", token=ALICE))
        check(st == 409 and "has already ended (cancelled)" in e.get("message", ""), "ended: %d %s" % (st, e))
    finally:
        d.stop()


def requeue():
    """Requeue checkpoints the run (SIGUSR1, exit 75): the job resumes where it stopped."""
    iters = 150
    d = Daemon(cluster="1x4", grace_ms=5000, extra=["--policy", "fifo"]).start()
    rk = cli(d)
    try:
        # submitted held (sbatch --hold): waits on an idle cluster until released
        rc, out, err = rk("alice", "submit", "--model", "bert", "--gpus", "1", "--iterations", "5",
                          "--command", "true", "--hold", "--json")
        h = json.loads(out) if rc == 0 else {}
        check(rc == 0 and h.get("hold") == "user" and h.get("pending_reason") == "Held",
              "submit --hold: %d %s %s" % (rc, out, err))
        st, e = err_of(d.call("POST", "/v1/jobs", {"model": "bert", "gpus": 1, "iterations": 5,
                                                   "command": "true", "hold": 1}))
        check(st == 400 and e.get("field") == "hold", "hold must be a boolean: %d %s" % (st, e))
        time.sleep(0.6)
        j = job(d, h.get("id", 0))
        check(j.get("state") == "pending" and j.get("run") == 0, "held at submission: %s" % j)
        rc, out, err = rk("alice", "release", str(h.get("id", 0)))
        check(rc == 0 and d.wait_state(h["id"], ["done"])["state"] == "done", "released, it runs: %s" % err)
        st, j = d.call("POST", "/v1/jobs", {"name": "rq", "model": "bert", "iterations": iters, "gpus": 2,
                                           "command": "sh " + os.path.join(HERE, "job.sh")}, token=ALICE)
        jid = j["id"]
        d.wait_state(jid, ["running"])
        log = os.path.join(d.dir, "state.db.jobs", "job-%d" % jid, "ckpt", "iters.log")
        end = time.time() + 30
        while time.time() < end and (not os.path.exists(log) or len(open(log).readlines()) < 30):
            time.sleep(0.05)
        rc, out, err = rk("alice", "requeue", "--hold", str(jid))
        check(rc == 0 and "requeued job %d and held it" % jid in out, "requeue --hold: %d %s %s" % (rc, out, err))
        # the run checkpoints and exits; held, the job stays pending on idle GPUs
        end = time.time() + 20
        while time.time() < end and job(d, jid).get("gpu_ids"):
            time.sleep(0.05)
        n_stop = len(open(log).readlines())
        time.sleep(1.0)
        j = job(d, jid)
        check(j.get("state") == "pending" and j.get("hold") == "user" and j.get("run") == 1 and
              len(open(log).readlines()) == n_stop, "stopped and held: %s" % j)
        rc, out, err = rk("alice", "release", str(jid))
        check(rc == 0, "release: %d %s" % (rc, err))
        j = d.wait_state(jid, ["done", "failed"], timeout=60)
        joblog = open(os.path.join(d.dir, "state.db.jobs", "job-%d" % jid, "log")).read()
        check(j["state"] == "done", "the requeued job finishes: %s %s" % (j, joblog))
        done = [int(x.split()[0]) for x in open(log).read().split("\n") if x]
        check(done == list(range(1, iters + 1)), "iterations lost or repeated: %s" % done)
        check("checkpointed at %d" % n_stop in joblog and "run 2 resumes at %d" % n_stop in joblog,
              "run 2 resumes from run 1's checkpoint at %d: %s" % (n_stop, joblog))
        st, full = d.call("GET", "/v1/jobs/%d" % jid)
        check([h["reason"] for h in full["history"]] == ["start", "requeue", "start"] and
              full["restarts"] == 1, "history: %s" % full.get("history"))
        # a plain requeue (no hold): back to pending, and the policy starts it again
        st, j2 = d.call("POST", "/v1/jobs", {"name": "rq2", "model": "bert", "iterations": 10 ** 6,
                                            "gpus": 1, "command": "sh " + os.path.join(HERE, "job.sh")})
        d.wait_state(j2["id"], ["running"])
        st, r = d.call("POST", "/v1/jobs/%d/requeue" % j2["id"])
        check(st == 200 and r["state"] == "pending" and r["hold"] is None, "requeue: %d %s" % (st, r))
        end = time.time() + 20
        while time.time() < end and job(d, j2["id"]).get("run") != 2:
            time.sleep(0.05)
        check(job(d, j2["id"]).get("run") == 2, "requeued without hold: relaunched as run 2")
        st, ev = d.call("GET", "/v1/jobs/%d/events" % j2["id"])
        check(any(e["kind"] == "requeue" and e["detail"].startswith("requeued by admin: run 1")
                  for e in ev["events"]), "requeue event: %s" % ev)
    finally:
        d.stop()


def flood():
    """A tenant flooding hold/release is rate-limited (429 with Retry-After, naming the
    tenant), the admin is not, and a job's events stay bounded: its first and its
    newest, RKD_EVENTS_PER_JOB = 1000 in all."""
    d = Daemon(cluster="1x4", extra=["--policy", "fifo"]).start()
    try:
        st, a = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 10 ** 8, "gpus": 4,
                                            "command": "sleep 300"})
        d.wait_state(a["id"], ["running"])
        st, b = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 10 ** 8, "gpus": 2,
                                            "command": "sleep 300"}, token=ALICE)
        path = "/v1/jobs/%d/" % b["id"]
        t0 = time.time()
        codes = []
        for i in range(200):
            st, body = d.call("POST", path + ("hold" if i % 2 == 0 else "release"), token=ALICE)
            codes.append(st)
            if st == 429:
                check("alice" in body["error"]["message"] and "retry" in body["error"]["message"],
                      "the 429 names the tenant and says when: %s" % body)
        dt = time.time() - t0
        ok = len(codes) - codes.count(429)  # 409 too: a release after a refused hold
        check(codes.count(429) > 0 and set(codes) <= {200, 409, 429},
              "alice's flood meets 429s: %s" % sorted(set(codes)))
        check(60 <= ok <= 60 + 5 * dt + 2,
              "alice gets her burst of 60 and 5/s after it: %d of 200 in %.1f s" % (ok, dt))
        import urllib.request
        req = urllib.request.Request(d.url + path + "hold", data=b"", method="POST",
                                     headers={"Authorization": "Bearer " + ALICE})
        try:
            urllib.request.urlopen(req, timeout=10)
            check(False, "alice's next hold is 429 too")
        except urllib.error.HTTPError as e:
            check(e.code == 429 and e.headers.get("Retry-After") == "1",
                  "429 carries Retry-After: 1: %s %s" % (e.code, e.headers.get("Retry-After")))
        # the admin is not limited; 1,100 changes leave the job 1,000 events, the first kept
        st, _ = d.call("POST", path + "release")  # whatever alice left: start released
        st, ev = d.call("GET", path + "events")
        first = ev["events"][0]
        bad = 0
        for i in range(1100):
            st, _ = d.call("POST", path + ("hold" if i % 2 == 0 else "release"))
            bad += st != 200
        check(bad == 0, "the admin's 1,100 holds and releases all answered 200: %d not" % bad)
        st, ev = d.call("GET", path + "events?limit=10000")
        evs = ev["events"]
        check(len(evs) == 1000, "events bounded at 1,000: %d" % len(evs))
        check(evs and evs[0] == first, "the job's first event kept: %s, was %s" % (evs[:1], first))
        check(evs and evs[-1]["kind"] == "release", "the newest kept: %s" % evs[-1:])
        print("alice: %d of 200 hold/release in %.1f s answered, the rest 429; job events: %d"
              % (ok, dt, len(evs)))
    finally:
        d.stop()


def main():
    reasons()
    holds()
    requeue()
    flood()
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
