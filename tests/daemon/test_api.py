"""API tests against a real rubickd on loopback: every endpoint, every documented
error, and every request/response example of docs/api.md."""
import os
import re
import json
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from rkd import Daemon, TOKEN, ALICE, BOB  # noqa: E402

SRC = os.environ.get("RK_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def err_is(resp, status, code, field):
    st, body = resp
    ok = (st == status and isinstance(body, dict) and body.get("error", {}).get("code") == code
          and body["error"].get("field") == field and body["error"].get("message"))
    check(ok, "expected %d %s field=%s, got %d %s" % (status, code, field, st, body))


def subset(expected, actual):
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and subset(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) <= len(actual) and all(
            subset(e, a) for e, a in zip(expected, actual))
    return expected == actual


def run_doc_examples(d):
    """docs/api.md: each ```request block (METHOD PATH [TOKEN] + body) is followed by a
    ```response block (STATUS + a JSON object the reply must contain)."""
    text = open(os.path.join(SRC, "docs", "api.md")).read()
    blocks = re.findall(r"```(request|response)\n(.*?)```", text, re.S)
    check(len(blocks) >= 10, "docs/api.md holds request/response examples")
    tokens = {"admin": TOKEN, "alice": ALICE, "bob": BOB, "none": None}
    for i in range(0, len(blocks) - 1, 2):
        (k1, req), (k2, resp) = blocks[i], blocks[i + 1]
        check(k1 == "request" and k2 == "response", "example %d pairs request/response" % i)
        first, _, body = req.partition("\n")
        parts = first.split()
        method, path = parts[0], parts[1]
        token = tokens[parts[2]] if len(parts) > 2 else TOKEN
        status_line, _, expect = resp.partition("\n")
        st, got = d.call(method, path, raw=body.strip().encode() if body.strip() else None, token=token)
        exp = json.loads(expect) if expect.strip() else None
        check(st == int(status_line) and (exp is None or subset(exp, got)),
              "docs example %s %s: want %s %s, got %d %s" % (method, path, status_line, exp, st, got))


def main():
    d = Daemon().start()
    try:
        job = {"name": "t1", "model": "bert", "iterations": 5, "gpus": 2,
               "command": "sleep 30"}
        st, j = d.call("POST", "/v1/jobs", job)
        check(st == 201 and j["id"] == 1 and j["state"] == "pending" and j["tenant"] == "default", "submit: %s" % j)
        j = d.wait_state(1, ["running"])
        end = time.time() + 10  # reads show the committed decision, then the launch's commit
        while j["gpu_ids"] is None and time.time() < end:
            time.sleep(0.02)
            j = d.call("GET", "/v1/jobs/1")[1]
        check(j["plan"].startswith("dp=2,") and j["gpu_ids"] == "0,1", "running with a plan: %s" % j)
        st, j = d.call("GET", "/v1/jobs/1")
        check(st == 200 and j["history"][0]["reason"] == "start", "history: %s" % j)
        # lists and filters
        st, l = d.call("GET", "/v1/jobs?state=running&limit=5")
        check(st == 200 and l["count"] == 1 and l["jobs"][0]["id"] == 1, "list filter: %s" % l)
        st, l = d.call("GET", "/v1/jobs?tenant=nobody")
        check(st == 200 and l["count"] == 0, "tenant filter")
        err_is(d.call("GET", "/v1/jobs?state=bogus"), 400, "invalid", "state")
        err_is(d.call("GET", "/v1/jobs?limit=0"), 400, "out_of_range", "limit")
        err_is(d.call("GET", "/v1/jobs?colour=red"), 400, "invalid", "colour")
        # validation of submissions
        err_is(d.call("POST", "/v1/jobs", dict(job, extra=1)), 400, "invalid", "extra")
        err_is(d.call("POST", "/v1/jobs", dict(job, gpus="2")), 400, "invalid", "gpus")
        err_is(d.call("POST", "/v1/jobs", dict(job, gpus=0)), 400, "out_of_range", "gpus")
        err_is(d.call("POST", "/v1/jobs", dict(job, gpus=99)), 422, "infeasible", "gpus")
        err_is(d.call("POST", "/v1/jobs", {k: v for k, v in job.items() if k != "iterations"}), 400,
               "invalid", "iterations")
        err_is(d.call("POST", "/v1/jobs", dict(job, model="nosuch")), 404, "not_found", "model")
        err_is(d.call("POST", "/v1/jobs", dict(job, plan="dp=3")), 400, "invalid", "plan")
        err_is(d.call("POST", "/v1/jobs", dict(job, min_gpus=3)), 400, "out_of_range", "min_gpus")
        err_is(d.call("POST", "/v1/jobs", dict(job, name="a b")), 400, "invalid", "name")
        err_is(d.call("POST", "/v1/jobs", raw=b"{not json"), 400, "invalid", None)
        err_is(d.call("POST", "/v1/jobs", raw=b"[1]"), 400, "invalid", None)
        err_is(d.call("POST", "/v1/jobs", raw=b'{"a":1,"a":2}'), 400, "invalid", None)
        big = json.dumps(dict(job, command="x" * 70000)).encode()
        err_is(d.call("POST", "/v1/jobs", raw=big), 413, "body_too_large", None)
        # auth
        err_is(d.call("POST", "/v1/jobs", job, token=None), 401, "unauthorized", None)
        err_is(d.call("POST", "/v1/jobs", job, token="wrong-token-0123456789"), 401, "unauthorized", None)
        err_is(d.call("POST", "/v1/jobs", dict(job, tenant="bob"), token=ALICE), 403, "forbidden", "tenant")
        # an unknown tenant is refused, even to the admin (a typo would escape its quotas), with
        # or without an idempotency key; to a tenant the answer stays 403, never which names exist
        for extra in ({}, {"idempotency_key": "k-typo"}):
            st, body = d.call("POST", "/v1/jobs", dict(job, tenant="nosuchtenant", **extra))
            err_is((st, body), 400, "invalid", "tenant")
            check("nosuchtenant" in body["error"]["message"], "names the tenant: %s" % body)
        err_is(d.call("POST", "/v1/jobs", dict(job, tenant="nosuchtenant"), token=ALICE), 403, "forbidden", "tenant")
        st, listed = d.call("GET", "/v1/jobs?tenant=nosuchtenant")
        check(st == 200 and listed["jobs"] == [], "nothing was created for it: %s" % listed)
        st, a = d.call("POST", "/v1/jobs", dict(job, name="alice1"), token=ALICE)
        check(st == 201 and a["tenant"] == "alice", "tenant submit: %s" % a)
        err_is(d.call("DELETE", "/v1/jobs/%d" % a["id"], token=BOB), 404, "not_found", "id")
        err_is(d.call("POST", "/v1/jobs", dict(job, name="alice2"), token=ALICE), 403, "forbidden", "gpus")
        # idempotency
        st1, k1 = d.call("POST", "/v1/jobs", dict(job, idempotency_key="k-1"))
        st2, k2 = d.call("POST", "/v1/jobs", dict(job, idempotency_key="k-1"))
        check(st1 == 201 and st2 == 200 and k1["id"] == k2["id"], "idempotent resubmission")
        # unknown paths, methods, ids
        err_is(d.call("GET", "/v2/jobs"), 404, "not_found", None)
        err_is(d.call("PATCH", "/v1/jobs/1", {}), 405, "method_not_allowed", None)
        err_is(d.call("GET", "/v1/jobs/abc"), 400, "invalid", "id")
        err_is(d.call("GET", "/v1/jobs/999"), 404, "not_found", "id")
        # reports
        st, r = d.call("POST", "/v1/jobs/1/report", {"iters_done": 2, "throughput_sps": 10.5})
        check(st == 200 and r["iters_done"] == 2 and r["throughput_sps"] == 10.5, "report: %s" % r)
        err_is(d.call("POST", "/v1/jobs/1/report", {"iters_done": 99}), 400, "out_of_range", "iters_done")
        err_is(d.call("POST", "/v1/jobs/1/report", {"iters_done": 1, "run": 7}), 409, "conflict", "run")
        err_is(d.call("POST", "/v1/jobs/1/report", {"iters": 1}), 400, "invalid", "iters")
        err_is(d.call("POST", "/v1/jobs/1/report", {"iters_done": 1}, token=None), 401, "unauthorized", None)
        # update validation
        err_is(d.call("PUT", "/v1/jobs/1", {}), 400, "invalid", None)
        err_is(d.call("PUT", "/v1/jobs/1", {"gpus": 3, "max_gpus": 2}), 400, "out_of_range", "max_gpus")
        # cluster, nodes, policy, metrics
        st, c = d.call("GET", "/v1/cluster")
        check(st == 200 and c["gpus"] == 4 and c["policy"] == "fifo" and len(c["nodes"]) == 1, "cluster: %s" % c)
        st, n = d.call("GET", "/v1/nodes")
        check(st == 200 and n["nodes"][0]["gpus_allocated"] >= 2, "nodes: %s" % n)
        st, p = d.call("GET", "/v1/policy")
        check(st == 200 and p["name"] == "fifo" and "sjf" in p["available"], "policy: %s" % p)
        err_is(d.call("PUT", "/v1/policy", {"name": "nosuch"}), 404, "not_found", "name")
        err_is(d.call("PUT", "/v1/policy", {"name": "sjf"}, token=ALICE), 403, "forbidden", None)
        err_is(d.call("PUT", "/v1/policy", {"name": "sjf", "x": 1}), 400, "invalid", "x")
        st, p = d.call("PUT", "/v1/policy", {"name": "sjf"})
        check(st == 200 and p["name"] == "sjf", "policy change: %s" % p)
        err_is(d.call("GET", "/metrics", token=None), 401, "unauthorized", None)
        mreq = urllib.request.Request(d.url + "/metrics", headers={"Authorization": "Bearer " + BOB})
        with urllib.request.urlopen(mreq) as r:
            m = r.read().decode()
            check("text/plain" in r.headers["Content-Type"], "metrics content type")
        for name in ("rubick_queue_length", "rubick_jobs_running", "rubick_gpus_allocated",
                     "rubick_round_latency_seconds_bucket", "rubick_reconfigurations_total"):
            check(name in m, "metric " + name)
        # cancel
        st, c = d.call("DELETE", "/v1/jobs/1")
        check(st == 200 and c["state"] == "cancelled", "cancel: %s" % c)
        err_is(d.call("DELETE", "/v1/jobs/1"), 409, "conflict", "id")
        # the cancelled run gets SIGTERM, exits (128 + 15), and gives its GPUs back
        end = time.time() + 20
        while time.time() < end:
            st, j = d.call("GET", "/v1/jobs/1")
            if j["exit_status"] is not None:
                break
            time.sleep(0.05)
        check(j["exit_status"] == 143 and j["gpu_ids"] is None, "cancelled run's exit: %s" % j)
        err_is(d.call("DELETE", "/v1/jobs/12345"), 404, "not_found", "id")
        # the policy choice and every job survive a restart
        d.stop()
        d.start()
        st, p = d.call("GET", "/v1/policy")
        check(p["name"] == "sjf", "policy persisted")
        st, j = d.call("GET", "/v1/jobs/1")
        check(j["state"] == "cancelled", "cancelled job persisted")
        d.stop()
        # documented examples run on a fresh daemon
        d2 = Daemon().start()
        try:
            run_doc_examples(d2)
        finally:
            d2.call("DELETE", "/v1/jobs/1")
            d2.stop()
    finally:
        d.stop()
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
