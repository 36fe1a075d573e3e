"""Guaranteed-GPU quotas of rubickd (docs/references.md §1.7, docs/api.md): a tenant's
guaranteed_gpu_quota caps the GPUs its active guaranteed jobs request together; a
guaranteed submission (or an update making a job guaranteed or bigger) over it gets
403 naming the tenant, the quota, what is held and what is requested; best-effort jobs
neither count nor are refused; the quota is stored, and a database from before the
column existed still opens."""
import os
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from rkd import Daemon  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def refused(resp, held, requested):
    st, body = resp
    err = body.get("error", {}) if isinstance(body, dict) else {}
    want = ("tenant 'carol' guaranteed quota is 4 GPUs; %d held by active guaranteed jobs, "
            "%d requested" % (held, requested))
    check(st == 403 and err.get("code") == "forbidden" and err.get("field") == "gpus" and
          want in err.get("message", ""), "want 403 '%s', got %d %s" % (want, st, body))


def held(d, tenant):
    st, l = d.call("GET", "/v1/jobs?tenant=%s&limit=100" % tenant)
    return {j["id"]: sum(a["gpus"] for a in (j["alloc"] or [])) for j in l["jobs"]
            if j["state"] in ("running", "restarting", "pending")}


def elastic(policy):
    """gpu_quota bounds what a tenant's jobs hold, whatever the policy grows them to:
    elastic jobs of 1 GPU with max_gpus 8 in a tenant with gpu_quota 3 never hold
    more than 3 together; a PUT over the quota is 403 naming it."""
    d = Daemon(cluster="1x8", extra=["--policy", policy])
    with open(d.conf, "a") as f:
        f.write("[tenant erin]\ngpu_quota = 3\n")
    d.start()
    try:
        job = {"model": "bert", "iterations": 100000000, "gpus": 1, "max_gpus": 8, "min_gpus": 1,
               "command": "sleep 120", "tenant": "erin"}
        st, a = d.call("POST", "/v1/jobs", dict(job, name="e1"))
        check(st == 201 and a["spec"]["max_gpus"] == 8, "%s: elastic submit: %d %s" % (policy, st, a))
        worst, ran = {}, False
        end = time.time() + 3
        while time.time() < end:
            h = held(d, "erin")
            worst = {k: max(worst.get(k, 0), v) for k, v in h.items()} if worst else h
            ran = ran or any(v > 0 for v in h.values())
            check(sum(h.values()) <= 3, "%s: one elastic job holds %s > gpu_quota 3" % (policy, h))
            time.sleep(0.05)
        check(ran, "%s: the elastic job runs" % policy)
        st, b = d.call("POST", "/v1/jobs", dict(job, name="e2"))
        check(st == 201, "%s: second elastic job: %d %s" % (policy, st, b))
        end = time.time() + 3
        while time.time() < end:
            h = held(d, "erin")
            check(sum(h.values()) <= 3, "%s: two elastic jobs hold %s > gpu_quota 3" % (policy, h))
            time.sleep(0.05)
        # updates over the quota: gpus (and min_gpus) that could never be held
        st, body = d.call("PUT", "/v1/jobs/%d" % a["id"], {"gpus": 8, "min_gpus": 8})
        err = body.get("error", {}) if isinstance(body, dict) else {}
        check(st == 403 and err.get("field") == "gpus" and "gpu_quota" in err.get("message", "") and
              "is 3 GPUs" in err.get("message", ""), "%s: PUT over quota: %d %s" % (policy, st, body))
        st, body = d.call("PUT", "/v1/jobs/%d" % a["id"], {"max_gpus": 8})
        check(st == 200, "%s: raising max_gpus is accepted (held stays bounded): %d %s" % (policy, st, body))
        end = time.time() + 2
        while time.time() < end:
            h = held(d, "erin")
            check(sum(h.values()) <= 3, "%s: after the PUT %s > gpu_quota 3" % (policy, h))
            time.sleep(0.05)
        st, m = d.call("GET", "/metrics")
        d.stop()
        db = sqlite3.connect(os.path.join(d.dir, "state.db"))
        ev = db.execute("SELECT job_id, detail FROM events WHERE kind='quota'").fetchall()
        db.close()
        for jid, detail in ev:
            check(("job %d" % jid) in detail and "gpu_quota is 3 GPUs" in detail,
                  "%s: the quota event names the job and the quota: %s" % (policy, detail))
        print("%s: held at most %s; %d quota events" % (policy, worst, len(ev)))
    finally:
        d.stop()


def main():
    for policy in ("rubick", "sia", "aryl"):
        elastic(policy)
    d = Daemon(cluster="1x8")
    with open(d.conf, "a") as f:
        f.write("[tenant carol]\nguaranteed_gpu_quota = 4\n[tenant dave]\n")
    d.start()
    try:
        job = {"name": "g", "model": "bert", "iterations": 1000000, "gpus": 2,
               "command": "sleep 60", "tenant": "carol", "guaranteed": True}
        st, g1 = d.call("POST", "/v1/jobs", job)
        check(st == 201 and g1.get("spec", {}).get("guaranteed") is True, "guaranteed under quota: %d %s" % (st, g1))
        refused(d.call("POST", "/v1/jobs", dict(job, name="g2", gpus=4)), 2, 4)
        st, be = d.call("POST", "/v1/jobs", dict(job, name="be", gpus=4, guaranteed=False))
        check(st == 201, "best effort is not counted: %d %s" % (st, be))
        st, g3 = d.call("POST", "/v1/jobs", dict(job, name="g3", gpus=2))
        check(st == 201, "guaranteed exactly at quota (2 + 2 <= 4): %d %s" % (st, g3))
        # another tenant has no guaranteed quota
        st, o = d.call("POST", "/v1/jobs", dict(job, name="other", tenant="dave", gpus=4))
        check(st == 201, "tenant without a guaranteed quota: %d %s" % (st, o))
        # updates: a best-effort job turning guaranteed, a guaranteed one growing
        refused(d.call("PUT", "/v1/jobs/%d" % be["id"], {"guaranteed": True}), 4, 4)
        refused(d.call("PUT", "/v1/jobs/%d" % g3["id"], {"gpus": 4}), 2, 4)
        # a finished (cancelled) guaranteed job no longer counts
        st, _ = d.call("DELETE", "/v1/jobs/%d" % g1["id"])
        check(st == 200, "cancel: %d" % st)
        d.wait_state(g1["id"], ["cancelled"])
        st, g4 = d.call("POST", "/v1/jobs", dict(job, name="g4", gpus=2))
        check(st == 201, "after the cancel 2 + 2 <= 4: %d %s" % (st, g4))
        d.stop()
        db = sqlite3.connect(os.path.join(d.dir, "state.db"))
        row = db.execute("SELECT gpu_quota, guaranteed_gpu_quota FROM tenants WHERE name='carol'"
                         ).fetchone()
        check(row == (-1, 4), "stored quotas: %s" % (row,))
        # a database from before the column: schema version 1, no guaranteed_gpu_quota
        # and none of the later steps' tables
        db.execute("ALTER TABLE tenants DROP COLUMN guaranteed_gpu_quota")
        db.execute("DROP TABLE IF EXISTS job_fits")
        db.execute("ALTER TABLE jobs DROP COLUMN hold")  # schema 5
        db.execute("PRAGMA user_version=1")
        db.commit()
        db.close()
        d.start()
        st, j = d.call("GET", "/v1/jobs/%d" % g4["id"])
        check(st == 200 and j["name"] == "g4", "old database opens with its jobs: %d %s" % (st, j))
        refused(d.call("POST", "/v1/jobs", dict(job, name="g5", gpus=2)), 4, 2)
        d.stop()
        db = sqlite3.connect(os.path.join(d.dir, "state.db"))
        row = db.execute("SELECT guaranteed_gpu_quota FROM tenants WHERE name='carol'").fetchone()
        ver = db.execute("PRAGMA user_version").fetchone()[0]
        db.close()
        check(row == (4,) and ver >= 2, "migrated: %s, version %d" % (row, ver))
    finally:
        d.stop()
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
