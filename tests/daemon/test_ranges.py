"""rubickd --policy rubick keeps every job within its min_gpus..max_gpus and a forced
PUT sticks (issue 13; docs/policies.md "GPU ranges"). Reported by an operator: a job
submitted with --gpus 2 ran on 8 GPUs of an idle node, and PUT {"gpus": 4} then
{"gpus": 1} each cost a checkpoint and a restart and were undone by the next round.
Here, through the local engine with tests/daemon/job.sh: --gpus 2 alone on an idle
1x8 node holds 2, round after round; PUT gpus 4 holds 4 and stays; PUT gpus 1 holds 1
and stays (one restart per PUT, none by the policy); an elastic submission
(min 2, max 4) beside it stays within 2..4."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from rkd import Daemon  # noqa: E402

HERE = os.path.abspath(os.path.dirname(__file__))
ROUND_MS = 100
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def gpus_of(j):
    return sum(a["gpus"] for a in (j.get("alloc") or []))


def job(d, jid):
    st, j = d.call("GET", "/v1/jobs/%d" % jid)
    assert st == 200, j
    return j


def wait_holding(d, jid, gpus, timeout=30):
    """Until the job runs on `gpus` GPUs; returns it."""
    end = time.time() + timeout
    j = None
    while time.time() < end:
        j = job(d, jid)
        if j["state"] == "running" and gpus_of(j) == gpus:
            return j
        if j["state"] in ("done", "failed", "cancelled"):
            break
        time.sleep(0.05)
    raise AssertionError("job %d never ran on %d GPUs: %s" % (jid, gpus, j))


def stays(d, jid, lo, hi, what, seconds=2.0):
    """Over `seconds` (20 rounds) the job keeps running on lo..hi GPUs without a restart."""
    first = job(d, jid)
    seen = set()
    end = time.time() + seconds
    while time.time() < end:
        j = job(d, jid)
        g = gpus_of(j)
        seen.add(g)
        check(j["state"] == "running" and lo <= g <= hi,
              "%s: job %d %s on %d GPUs, range %d..%d" % (what, jid, j["state"], g, lo, hi))
        check(j["restarts"] == first["restarts"],
              "%s: job %d restarted by the policy (%d -> %d)" % (what, jid, first["restarts"],
                                                               j["restarts"]))
        time.sleep(0.05)
    return seen


def main():
    d = Daemon(cluster="1x8", extra=["--policy", "rubick"], round_ms=ROUND_MS,
               grace_ms=5000).start()
    try:
        cmd = "sh " + os.path.join(HERE, "job.sh")
        st, a = d.call("POST", "/v1/jobs", {"name": "rigid", "model": "bert",
                                            "iterations": 10000000, "gpus": 2, "command": cmd})
        check(st == 201 and a["spec"]["min_gpus"] == 2 and a["spec"]["max_gpus"] == 2,
              "--gpus 2 alone is rigid (min = max = 2): %d %s" % (st, a))
        aid = a["id"]
        wait_holding(d, aid, 2)
        stays(d, aid, 2, 2, "gpus 2 on an idle 1x8")

        for want in (4, 1):
            before = job(d, aid)["restarts"]
            st, u = d.call("PUT", "/v1/jobs/%d" % aid, {"gpus": want})
            check(st == 200 and u["spec"]["min_gpus"] == want and u["spec"]["max_gpus"] == want,
                  "PUT gpus %d pins the range: %d %s" % (want, st, u))
            j = wait_holding(d, aid, want)
            check(j["restarts"] == before + 1,
                  "PUT gpus %d: one restart (%d -> %d)" % (want, before, j["restarts"]))
            stays(d, aid, want, want, "after PUT gpus %d" % want)

        st, b = d.call("POST", "/v1/jobs", {"name": "elastic", "model": "bert",
                                            "iterations": 10000000, "gpus": 2, "min_gpus": 2,
                                            "max_gpus": 4, "command": cmd})
        check(st == 201, "elastic submit: %d %s" % (st, b))
        bid = b["id"]
        end = time.time() + 30
        while time.time() < end and job(d, bid)["state"] != "running":
            time.sleep(0.05)
        seen = stays(d, bid, 2, 4, "elastic 2..4 beside a 1-GPU job")
        stays(d, aid, 1, 1, "the 1-GPU job beside the elastic one", seconds=0.5)
        print("rigid job held 2, then 4, then 1 GPUs; elastic 2..4 job held %s" % sorted(seen))
        # Raising max_gpus without a new request is no forced reconfiguration of
        # its GPUs: the held allocation stays within the new, wider range.
        st, u = d.call("PUT", "/v1/jobs/%d" % aid, {"max_gpus": 3})
        check(st == 200 and u["spec"]["min_gpus"] == 1 and u["spec"]["max_gpus"] == 3,
              "PUT max_gpus 3: %d %s" % (st, u))
        end = time.time() + 30
        while time.time() < end and job(d, aid)["state"] != "running":
            time.sleep(0.05)
        stays(d, aid, 1, 3, "after PUT max_gpus 3")
    finally:
        try:
            d.cancel_all()
        finally:
            d.stop()
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ranges ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
