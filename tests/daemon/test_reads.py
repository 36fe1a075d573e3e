"""Reads are authenticated (issue 12): every GET needs a token (401 without), a tenant
sees its own jobs only (another tenant's is 404, worded as a missing one, and never
listed), the admin sees all; /metrics needs a token unless metrics_public = yes, and
shows cluster-level figures only (no command, tenant or token)."""
import os
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from rkd import Daemon, TOKEN, ALICE, BOB  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def metrics(d, token):
    req = urllib.request.Request(d.url + "/metrics")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def pages(d, query, token):
    """Every page of GET /v1/jobs?QUERY, following next_before_id: (pages, jobs)."""
    got, before = [], 0
    for _ in range(100):  # bounded: far more pages than the jobs make
        st, l = d.call("GET", "/v1/jobs?%s%s" % (query, "&before=%d" % before if before else ""),
                       token=token)
        check(st == 200 and l["count"] == len(l["jobs"]), "a page of %s: %s" % (query, st))
        got.append(l)
        before = l.get("next_before_id", 0)
        if not before:
            break
    return got, [j for page in got for j in page["jobs"]]


def paging():
    """Listings are paged (issue 25): one reply holds at most 500 jobs and about 512 KiB
    of JSON whatever limit asks, with next_before_id only when more jobs follow, so that
    256 slow readers of limit=10000 cannot make rubickd hold 256 whole listings; following
    the cursor lists every job exactly once, newest first."""
    import threading
    d = Daemon(extra=["--sync", "normal"]).start()
    try:
        # 1,200 jobs of bob, each with a 1.5 KB command: 500 of them are ~1 MB of JSON
        pad = " # " + "p" * 1500
        job = {"model": "bert", "iterations": 10 ** 8, "gpus": 1, "command": "sleep 300" + pad}
        ids = [[] for _ in range(8)]

        def submit(k):
            for i in range(k, 1200, 8):
                st, j = d.call("POST", "/v1/jobs", dict(job, name="p%d" % i), token=BOB)
                if st == 201:
                    ids[k].append(j["id"])
        ts = [threading.Thread(target=submit, args=(k,)) for k in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        ids = sorted((i for v in ids for i in v), reverse=True)
        check(len(ids) == 1200, "bob's 1,200 jobs submitted: %d" % len(ids))
        import urllib.request
        req = urllib.request.Request(d.url + "/v1/jobs?limit=10000")
        req.add_header("Authorization", "Bearer " + BOB)
        with urllib.request.urlopen(req, timeout=60) as r:
            raw = r.read()
        import json
        first = json.loads(raw)
        check(len(raw) <= 512 * 1024 + 4096 and 0 < first["count"] < 500 and
              first.get("next_before_id") == first["jobs"][-1]["id"],
              "limit=10000 of 1.5 KB jobs: one page of at most 512 KiB with a cursor: "
              "%d bytes, %d jobs, next %s" % (len(raw), first["count"], first.get("next_before_id")))
        got, jobs = pages(d, "limit=10000", BOB)
        listed = [j["id"] for j in jobs]
        check(listed == ids, "following the cursor lists each of the 1,200 jobs once, newest "
              "first: %d listed, %d distinct, %d pages" % (len(listed), len(set(listed)), len(got)))
        check(len(got) >= 3 and "next_before_id" not in got[-1],
              "the last page has no cursor: %d pages, last %s" % (len(got), sorted(got[-1])))
        # short jobs: at most 500 a page however many are asked for
        small = {"model": "bert", "iterations": 10 ** 8, "gpus": 1, "command": "sleep 300"}
        for i in range(20):
            d.call("POST", "/v1/jobs", dict(small, name="s%d" % i))
        got, jobs = pages(d, "limit=10000", TOKEN)
        listed = [j["id"] for j in jobs]
        check(len(listed) == 1220 and len(set(listed)) == 1220 and listed == sorted(listed, reverse=True),
              "the admin's pages list all 1,220 jobs once: %d (%d distinct)" % (len(listed), len(set(listed))))
        check(all(p["count"] <= 500 for p in got), "no page over 500 jobs: %s" % [p["count"] for p in got])
        # a page that is exactly full, with nothing after it, gives no cursor
        st, l = d.call("GET", "/v1/jobs?limit=5&before=%d" % (ids[-5] + 1), token=BOB)
        check(st == 200 and [j["id"] for j in l["jobs"]] == ids[-5:] and "next_before_id" not in l,
              "the oldest 5 jobs in a page of 5: no cursor: %s" % sorted(l))
        st, l = d.call("GET", "/v1/jobs?limit=5&before=%d" % (ids[-6] + 1), token=BOB)
        check(st == 200 and l.get("next_before_id") == ids[-2],
              "5 of 6 jobs left: a cursor: %s" % l.get("next_before_id"))
    finally:
        d.stop()


def listing_flood():
    """16 threads of one tenant listing limit=10000 (a page of 500 of its 1,500 jobs) in a
    loop: beyond its 2 listings
    running or waiting, it is told 429 with Retry-After, while the admin's and another
    tenant's listings are all answered (the admin's on a lister of its own; its
    latency is printed, the bound lives in bench/)."""
    import threading
    import time
    d = Daemon(extra=["--sync", "normal"]).start()
    try:
        job = {"model": "bert", "iterations": 10 ** 8, "gpus": 1, "command": "sleep 300"}

        def submit(k):
            for i in range(k, 1500, 8):
                d.call("POST", "/v1/jobs", dict(job, name="j%d" % i), token=BOB)
        ts = [threading.Thread(target=submit, args=(k,)) for k in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        _, jobs = pages(d, "limit=10000", BOB)
        check(len(jobs) >= 1500, "bob's 1,500 jobs: %d" % len(jobs))
        codes, stop = [], [False]

        def flood():
            while not stop[0]:
                st, body = d.call("GET", "/v1/jobs?limit=10000", token=BOB)
                codes.append(st)
                if st == 429:
                    check("bob" in body["error"]["message"], "the 429 names the tenant: %s" % body)
        ts = [threading.Thread(target=flood) for _ in range(16)]
        for t in ts:
            t.start()
        admin, other = [], []
        end = time.time() + 4
        while time.time() < end:  # bounded: 4 s of flood
            t0 = time.time()
            st, _ = d.call("GET", "/v1/jobs?limit=10000")
            admin.append((st, time.time() - t0))
            st, _ = d.call("GET", "/v1/jobs?limit=10000", token=ALICE)
            other.append(st)
        stop[0] = True
        for t in ts:
            t.join()
        check(codes.count(429) > 0 and set(codes) <= {200, 429},
              "bob's flood meets 429s: %d of %d (%s)" % (codes.count(429), len(codes), sorted(set(codes))))
        check(codes.count(200) > 0, "bob is still served in her line: %d" % codes.count(200))
        check(admin and all(st == 200 for st, _ in admin), "the admin's listings: %s" % sorted(set(a for a, _ in admin)))
        check(other and all(st == 200 for st in other), "alice's listings: %s" % sorted(set(other)))
        lat = sorted(dt for _, dt in admin)
        print("16 threads of bob: %d listings served, %d told 429; admin listing (a page of 500): "
              "median %.3f s, worst %.3f s over %d" % (codes.count(200), codes.count(429),
                                                     lat[len(lat) // 2], lat[-1], len(lat)))
    finally:
        d.stop()


def main():
    d = Daemon().start()
    try:
        job = {"model": "bert", "iterations": 5, "gpus": 1, "command": "sleep 30 # SECRET-CMD"}
        st, a = d.call("POST", "/v1/jobs", dict(job, name="alice-job"), token=ALICE)
        check(st == 201, "alice submits: %s" % a)
        st, b = d.call("POST", "/v1/jobs", dict(job, name="bob-job"), token=BOB)
        check(st == 201, "bob submits: %s" % b)
        for path in ("/v1/jobs", "/v1/jobs/%d" % a["id"], "/v1/nodes", "/v1/cluster", "/v1/policy",
                     "/metrics", "/v1/jobs?tenant=alice"):
            st, body = d.call("GET", path, token=None)
            check(st == 401 and body["error"]["code"] == "unauthorized", "GET %s without a token: %d %s" % (path, st, body))
            st, body = d.call("GET", path, token="not-a-known-token-0123456789")
            check(st == 401, "GET %s with an unknown token: %d" % (path, st))
        # a tenant sees its own job, and another tenant's reads exactly like a missing one
        st, j = d.call("GET", "/v1/jobs/%d" % a["id"], token=ALICE)
        check(st == 200 and j["name"] == "alice-job", "alice reads her job: %d %s" % (st, j))
        st_other, other = d.call("GET", "/v1/jobs/%d" % a["id"], token=BOB)
        st_none, none = d.call("GET", "/v1/jobs/9999", token=BOB)
        check(st_other == 404 and st_none == 404 and other["error"]["field"] == "id",
              "bob reading alice's job: %d %s" % (st_other, other))
        check(other["error"]["message"].replace(str(a["id"]), "N") ==
              none["error"]["message"].replace("9999", "N"),
              "the same words for another tenant's job and a missing one: %s / %s" % (other, none))
        check("SECRET-CMD" not in str(other), "no command leaks")
        # writes on another tenant's job: 404 too
        for method, path, body in (("DELETE", "/v1/jobs/%d" % a["id"], None),
                                   ("PUT", "/v1/jobs/%d" % a["id"], {"gpus": 1})):
            st, r = d.call(method, path, body, token=BOB)
            check(st == 404 and r["error"]["code"] == "not_found", "%s by bob: %d %s" % (method, st, r))
        # listings
        st, l = d.call("GET", "/v1/jobs", token=BOB)
        check(st == 200 and [x["name"] for x in l["jobs"]] == ["bob-job"], "bob lists his only: %s" % l)
        st, l = d.call("GET", "/v1/jobs?tenant=alice", token=BOB)
        check(st == 200 and l["count"] == 0 and l["jobs"] == [], "bob asking for alice's: %s" % l)
        st, l = d.call("GET", "/v1/jobs?state=pending&limit=5", token=ALICE)
        check(st == 200 and all(x["tenant"] == "alice" for x in l["jobs"]), "alice's filter: %s" % l)
        st, l = d.call("GET", "/v1/jobs")
        check(st == 200 and {"alice-job", "bob-job"} <= {x["name"] for x in l["jobs"]}, "admin lists all: %s" % l)
        # /metrics: any known token; cluster-level figures only
        st, m = metrics(d, BOB)
        check(st == 200 and "rubick_queue_length" in m, "metrics with a tenant token: %d" % st)
        for secret in ("SECRET-CMD", "alice", "bob-job", ALICE, BOB, TOKEN):
            check(secret not in m, "metrics hold no '%s'" % secret)
        st, m = metrics(d, None)
        check(st == 401, "metrics without a token: %d" % st)
    finally:
        d.stop()
    # metrics_public = yes: /metrics without a token, everything else still needs one
    d = Daemon(conf_extra="metrics_public = yes\n").start()
    try:
        st, m = metrics(d, None)
        check(st == 200 and "rubick_gpus " in m, "public metrics: %d" % st)
        st, _ = d.call("GET", "/v1/jobs", token=None)
        check(st == 401, "jobs still need a token with public metrics: %d" % st)
    finally:
        d.stop()
    paging()
    listing_flood()
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
