"""End to end through the local engine: tests/daemon/job.sh runs, is forced to
reconfigure from 2 to 4 GPUs (PUT /v1/jobs/{id}), checkpoints on SIGUSR1,
resumes with the new plan, and completes exactly its iterations."""
import os
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from rkd import Daemon  # noqa: E402

HERE = os.path.abspath(os.path.dirname(__file__))
ITERS = 120


def main():
    d = Daemon(cluster="1x4", grace_ms=5000).start()
    try:
        st, j = d.call("POST", "/v1/jobs", {"name": "e2e", "model": "bert", "iterations": ITERS,
                                           "gpus": 2, "command": "sh " + os.path.join(HERE, "job.sh")})
        assert st == 201, j
        jid = j["id"]
        d.wait_state(jid, ["running"])
        log = os.path.join(d.dir, "state.db.jobs", "job-%d" % jid, "ckpt", "iters.log")
        end = time.time() + 30
        while time.time() < end and (not os.path.exists(log) or len(open(log).readlines()) < 25):
            time.sleep(0.05)
        st, j = d.call("PUT", "/v1/jobs/%d" % jid, {"gpus": 4})
        assert st == 200, j
        j = d.wait_state(jid, ["done", "failed"], timeout=60)
        joblog = open(os.path.join(d.dir, "state.db.jobs", "job-%d" % jid, "log")).read()
        assert j["state"] == "done", (j, joblog)
        lines = [l.split() for l in open(log).read().split("\n") if l]
        iters = [int(l[0]) for l in lines]
        assert iters == list(range(1, ITERS + 1)), "iterations lost or repeated: %s" % iters
        runs = sorted(set((int(l[1]), int(l[2])) for l in lines))
        assert runs == [(1, 2), (2, 4)], "expected run 1 on 2 GPUs then run 2 on 4: %s" % runs
        assert "checkpointed at" in joblog and "resumes at 0" in joblog, joblog
        assert j["iters_done"] == ITERS and j["run"] == 2 and j["restarts"] == 1, j
        st, full = d.call("GET", "/v1/jobs/%d" % jid)
        reasons = [h["reason"] for h in full["history"]]
        assert reasons == ["start", "request changed", "start"], reasons
        plans = [h["plan"] for h in full["history"] if h["plan"]]
        assert plans[0].startswith("dp=2,") and plans[1].startswith("dp=4,"), plans
        db = sqlite3.connect(os.path.join(d.dir, "state.db"))
        n = db.execute("SELECT COUNT(*) FROM samples WHERE job_id=?", (jid,)).fetchone()[0]
        assert n >= ITERS // 10 - 2, "throughput reports stored: %d" % n
        print("e2e ok: %d iterations exact across a 2 -> 4 GPU reconfiguration" % ITERS)
        return 0
    finally:
        d.stop()


if __name__ == "__main__":
    sys.exit(main())
