"""Crash recovery: submit jobs from concurrent clients while rubickd is killed
with SIGKILL at random points (KILLS times) and restarted. Then every
acknowledged submission must be present exactly once with its own spec, every
job must finish, and every job must have been launched exactly once (a job's
command appends its id to a file: a duplicate line is a double launch)."""
import os
import random
import sqlite3
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from rkd import Daemon  # noqa: E402

KILLS = int(os.environ.get("RK_CRASH_KILLS", "50"))
THREADS = 4


def main():
    rng = random.Random(int(os.environ.get("RK_CRASH_SEED", "7")))
    d = Daemon(cluster="1x8", round_ms=50, grace_ms=1000)
    launches = os.path.join(d.dir, "launches")
    d.start()
    acked = {}  # name -> id
    lock = threading.Lock()
    stop = threading.Event()
    url_box = [d.url]

    def client(t):
        i = 0
        while not stop.is_set():
            name = "c%d-%d" % (t, i)
            i += 1  # every name is submitted once: an unacknowledged one is never retried
            d.url = url_box[0]
            try:
                st, j = d.call("POST", "/v1/jobs", {
                    "name": name, "model": "bert", "iterations": 1, "gpus": 1,
                    "command": "echo $RUBICK_JOB_ID >> %s" % launches})
            except OSError:
                time.sleep(0.01)
                continue
            if st == 201:
                with lock:
                    assert name not in acked
                    acked[name] = j["id"]
            time.sleep(0.005)

    threads = [threading.Thread(target=client, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    t0 = time.time()
    try:
        for k in range(KILLS):
            time.sleep(rng.uniform(0.02, 0.25))
            d.kill9()
            d.start()  # raises when the restart fails: the clients must stop then too
            url_box[0] = d.url
    finally:
        stop.set()
        for th in threads:
            th.join()
    # let every job finish
    end = time.time() + 90
    while time.time() < end:
        st, l = d.call("GET", "/v1/jobs?state=pending&limit=1")
        st2, l2 = d.call("GET", "/v1/jobs?state=running&limit=1")
        if l["count"] == 0 and l2["count"] == 0:
            break
        time.sleep(0.2)
    d.stop()
    db = sqlite3.connect(os.path.join(d.dir, "state.db"))
    rows = db.execute("SELECT id, name, state, run, exit_status FROM jobs").fetchall()
    by_name = {}
    for r in rows:
        by_name.setdefault(r[1], []).append(r)
    errors = []
    for name, jid in acked.items():
        got = by_name.get(name, [])
        if len(got) != 1 or got[0][0] != jid:
            errors.append("acknowledged %s (id %d) stored as %s" % (name, jid, got))
    for name, got in by_name.items():
        if len(got) > 1:
            errors.append("%s stored %d times" % (name, len(got)))
    bad = [r for r in rows if r[2] != "done" or r[4] != 0]
    if bad:
        errors.append("%d jobs did not finish cleanly, e.g. %s" % (len(bad), bad[:3]))
    counts = {}
    for line in open(launches).read().split():
        counts[int(line)] = counts.get(int(line), 0) + 1
    twice = {k: v for k, v in counts.items() if v > 1}
    if twice:
        errors.append("launched more than once: %s" % list(twice.items())[:5])
    never = [r[0] for r in rows if r[0] not in counts]
    if never:
        errors.append("never launched: %s" % never[:5])
    print("%d kills in %.1f s, %d acknowledged, %d stored, %d launches" % (
        KILLS, time.time() - t0, len(acked), len(rows), sum(counts.values())))
    for e in errors[:20]:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
