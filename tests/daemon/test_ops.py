"""Operator views (issue 13): GET /v1/jobs/{id}/log and /events, `rubick logs
[--follow]` and `rubick events`, and GET /healthz. A tenant reads its own jobs'
logs and events, another tenant's read as missing (404), the admin reads all."""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
import urllib.error

sys.path.insert(0, os.path.dirname(__file__))
from rkd import Daemon, BUILD, TOKEN, ALICE, BOB  # noqa: E402

RUBICK = os.path.join(BUILD, "src", "cli", "rubick")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def get_raw(d, path, token):
    req = urllib.request.Request(d.url + path)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


def lint_metrics(text):
    """The exposition-format naming rules promtool's `check metrics` applies (and
    more): a counter ends in _total, nothing else does; one HELP and TYPE per
    family, before its samples; samples belong to a declared family."""
    problems, types, helps = [], {}, set()
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helps.add(line.split()[2])
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            if name in types:
                problems.append("%s: TYPE twice" % name)
            types[name] = kind
            if name not in helps:
                problems.append("%s: TYPE without HELP first" % name)
            if not re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]*", name):
                problems.append("%s: not a metric name" % name)
            if (kind == "counter") != name.endswith("_total"):
                problems.append("%s: a %s %s in _total" % (name, kind, "not ending" if kind == "counter" else "ending"))
            if re.search(r"(latency|duration|time)", name) and not name.endswith(("_seconds", "_seconds_total")):
                problems.append("%s: a time not in seconds" % name)
        elif line and not line.startswith("#"):
            sample = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)", line).group(1)
            fam = re.sub(r"_(bucket|sum|count)$", "", sample)
            if sample not in types and not (fam in types and types[fam] == "histogram"):
                problems.append("%s: sample of no declared family" % sample)
    return problems


def main():
    d = Daemon(cluster="1x4").start()
    tok = {name: os.path.join(d.dir, name + ".token") for name in ("admin", "alice", "bob")}

    def rk(who, *args, timeout=60):
        env = dict(os.environ, RUBICK_URL=d.url, RUBICK_TOKEN_FILE=tok[who])
        p = subprocess.run([RUBICK] + list(args), env=env, capture_output=True, text=True,
                           timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    try:
        # a job that writes 3 lines over about a second, then ends
        cmd = "for i in 1 2 3; do echo line-$i; sleep 0.4; done; echo to-stderr >&2"
        st, a = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 5, "gpus": 1,
                                            "command": cmd, "name": "logger"}, token=ALICE)
        check(st == 201, "alice submits: %s" % a)
        jid = a["id"]
        # --follow from the start: prints every line, returns once the job ended
        t0 = time.time()
        rc, out, err = rk("alice", "logs", str(jid), "--follow", "--interval", "0.1", timeout=60)
        check(rc == 0 and [l for l in out.splitlines() if l.startswith("line-")] ==
              ["line-1", "line-2", "line-3"] and "to-stderr" in out,
              "logs --follow as the owner: %d %r %s" % (rc, out, err))
        j = d.wait_state(jid, ("done", "failed"), timeout=30)
        check(j["state"] in ("done", "failed"), "the job ended (%s) after %.1f s" % (j["state"], time.time() - t0))
        # the API: text/plain, from an offset, the same bytes for the owner and the admin
        st, ctype, body = get_raw(d, "/v1/jobs/%d/log" % jid, ALICE)
        check(st == 200 and ctype.startswith("text/plain") and b"line-2\n" in body,
              "GET log as the owner: %d %s %r" % (st, ctype, body))
        st, _, body_admin = get_raw(d, "/v1/jobs/%d/log" % jid, TOKEN)
        check(st == 200 and body_admin == body, "GET log as the admin: %d %r" % (st, body_admin))
        off = body.index(b"line-2")
        st, _, tail = get_raw(d, "/v1/jobs/%d/log?offset=%d" % (jid, off), ALICE)
        check(st == 200 and tail == body[off:], "GET log from offset %d: %r" % (off, tail))
        st, _, past = get_raw(d, "/v1/jobs/%d/log?offset=%d" % (jid, len(body) + 100), ALICE)
        check(st == 200 and past == b"", "GET log past the end: %d %r" % (st, past))
        for q in ("offset=-1", "offset=abc", "from=3"):
            st, _, e = get_raw(d, "/v1/jobs/%d/log?%s" % (jid, q), ALICE)
            err_j = json.loads(e)
            check(st in (400, 422) and err_j["error"]["field"] in ("offset", "from"),
                  "bad %s: %d %s" % (q, st, e))
        # another tenant: 404, worded like a missing job, for the log and the events
        for path in ("/v1/jobs/%d/log" % jid, "/v1/jobs/%d/events" % jid):
            st, _, e = get_raw(d, path, BOB)
            check(st == 404 and b"does not exist" in e and b"line-" not in e,
                  "bob reads %s: %d %r" % (path, st, e))
            st, _, e = get_raw(d, path, None)
            check(st == 401, "%s without a token: %d" % (path, st))
        st, _, e = get_raw(d, "/v1/jobs/9999/log", TOKEN)
        check(st == 404, "log of a missing job: %d" % st)
        rc, out, err = rk("bob", "logs", str(jid))
        check(rc == 4 and "does not exist" in err and "line-" not in out,
              "rubick logs as another tenant -> 4: %d %r %s" % (rc, out, err))
        rc, out, err = rk("admin", "logs", str(jid), "--json")
        chunk = json.loads(out.splitlines()[0]) if rc == 0 else {}
        check(rc == 0 and chunk.get("offset") == 0 and "line-3" in chunk.get("text", "") and
              chunk.get("next_offset") == len(body), "logs --json as the admin: %d %s %s" % (rc, out, err))
        rc, out, err = rk("alice", "logs", "x1")
        check(rc == 2 and "'x1' is not a job id" in err, "logs x1 -> 2: %d %s" % (rc, err))
        rc, out, err = rk("alice", "logs", str(jid), "--interval", "0")
        check(rc == 2 and "--interval" in err, "logs --interval 0 -> 2: %d %s" % (rc, err))
        # a pending job has no log yet: empty, not an error
        st, b = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 5, "gpus": 4,
                                            "command": "sleep 30"}, token=BOB)
        st2, b2 = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 5, "gpus": 4,
                                              "command": "sleep 30"}, token=BOB)
        st, _, e = get_raw(d, "/v1/jobs/%d/log" % b2["id"], BOB)
        check(st == 200 and e == b"", "log of a pending job: %d %r" % (st, e))
        # events: the owner and the admin see the same list, oldest first
        st, ev = d.call("GET", "/v1/jobs/%d/events" % jid, token=ALICE)
        kinds = [x["kind"] for x in ev.get("events", [])] if st == 200 else []
        check(st == 200 and ev["count"] == len(kinds) >= 2 and ev["job_id"] == jid,
              "events as the owner: %d %s" % (st, ev))
        ids = [x["id"] for x in ev.get("events", [])]
        check(ids == sorted(ids) and all(x["t_ms"] > 0 for x in ev.get("events", [])),
              "events oldest first, with times: %s" % ev)
        st, ev_admin = d.call("GET", "/v1/jobs/%d/events" % jid)
        check(st == 200 and ev_admin == ev, "events as the admin: %d %s" % (st, ev_admin))
        if len(ids) >= 2:
            st, page = d.call("GET", "/v1/jobs/%d/events?limit=1" % jid, token=ALICE)
            check(st == 200 and page["count"] == 1 and page["next_after"] == ids[0],
                  "events page 1: %s" % page)
            st, page = d.call("GET", "/v1/jobs/%d/events?after=%d" % (jid, ids[0]), token=ALICE)
            check(st == 200 and [x["id"] for x in page["events"]] == ids[1:], "events after: %s" % page)
        st, e = d.call("GET", "/v1/jobs/%d/events?limit=0" % jid, token=ALICE)
        check(st in (400, 422) and e["error"]["field"] == "limit", "events limit=0: %d %s" % (st, e))
        rc, out, err = rk("alice", "events", str(jid))
        check(rc == 0 and "KIND" in out and len(out.splitlines()) == 1 + len(kinds) and "T" in out
              and "Z " in out, "rubick events: %d %s %s" % (rc, out, err))
        rc, out, err = rk("alice", "events", str(jid), "--json")
        check(rc == 0 and json.loads(out)["events"] == ev["events"], "rubick events --json: %s" % out)
        rc, out, err = rk("bob", "events", str(jid))
        check(rc == 4 and "does not exist" in err, "rubick events as bob -> 4: %d %s" % (rc, err))
        rc, out, err = rk("alice", "show", str(jid))
        check(rc == 0 and "submitted 20" in out and "Z, started 20" in out and "ended 20" in out,
              "show prints dates: %s %s" % (out, err))
        # history (sacct): ended jobs only, a tenant's own, dates, CSV and JSON
        st, c = d.call("DELETE", "/v1/jobs/%d" % b2["id"], token=BOB)
        check(st == 200, "bob cancels his pending job: %s" % c)
        rc, out, err = rk("alice", "history", "--json")
        h = json.loads(out) if rc == 0 else {"jobs": []}
        hj = {x["id"]: x for x in h["jobs"]}
        check(rc == 0 and list(hj) == [jid] and h["truncated"] is False, "history as alice: %d %s %s" % (rc, out, err))
        if jid in hj:
            x = hj[jid]
            check(x["elapsed_s"] is not None and x["elapsed_s"] >= 1.0 and x["wait_s"] >= 0 and
                  x["gpu_hours"] >= 0 and x["end_ms"] >= x["first_start_ms"] >= x["submit_ms"],
                  "history figures: %s" % x)
        rc, out, err = rk("bob", "history", "--json")
        ids = [x["id"] for x in json.loads(out)["jobs"]] if rc == 0 else None
        check(ids == [b2["id"]], "history as bob: his cancelled job only: %s %s" % (out, err))
        rc, out, err = rk("bob", "history", "--tenant", "alice", "--json")
        check(rc == 0 and json.loads(out)["count"] == 0, "bob asking for alice's history: %s" % out)
        rc, out, err = rk("admin", "history")
        lines = out.splitlines()
        check(rc == 0 and lines[0].split()[:5] == ["ID", "NAME", "TENANT", "STATE", "EXIT"] and
              len(lines) == 3 and "cancelled" in out and "logger" in out and ":" in lines[1],
              "history as the admin: %d %s %s" % (rc, out, err))
        rc, out, err = rk("admin", "history", "--csv")
        rows = out.splitlines()
        check(rc == 0 and rows[0].startswith("id,name,tenant,state,exit,submit,start,end,elapsed,wait,gpu_hours")
              and len(rows) == 3 and all(len(r.split(",")) == 12 for r in rows), "history --csv: %s" % out)
        rc, out, err = rk("admin", "history", "--max", "1", "--json")
        check(rc == 0 and json.loads(out)["truncated"] is True and "cut after 1" in err,
              "history --max 1 says it cut: %s %s" % (out, err))
        tomorrow = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 86400))
        yesterday = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - 86400))
        rc, out, err = rk("admin", "history", "--since", tomorrow, "--json")
        check(rc == 0 and json.loads(out)["count"] == 0, "history --since tomorrow: %s %s" % (out, err))
        rc, out, err = rk("admin", "history", "--since", yesterday, "--until", tomorrow, "--json")
        check(rc == 0 and json.loads(out)["count"] == 2, "history over today: %s %s" % (out, err))
        for bad, word in ((("--since", "2026-13-01"), "--since"), (("--until", "yesterday"), "--until"),
                          (("--max", "0"), "--max"), (("--csv", "--json"), "choose one"),
                          (("--since", tomorrow, "--until", tomorrow), "--until")):
            rc, out, err = rk("admin", "history", *bad)
            # under --json the error is the JSON object on stdout
            check(rc == 2 and word in err + out, "history %s -> 2: %d %s" % (bad, rc, err))
        # queue: active jobs by default, with what each holds; --all pages and says when it cut
        bj = d.wait_state(b["id"], ("running",), timeout=30)
        rc, out, err = rk("admin", "queue")
        lines = out.splitlines()
        row = [l for l in lines[1:] if l.split()[0] == str(b["id"])]
        check(rc == 0 and "ALLOC_GPUS" in lines[0] and len(lines) == 2 and row and
              row[0].split()[3] == "R" and row[0].split()[5:8] == ["1", "4", "4"]
              and row[0].split()[-1] == "n0",
              "queue as the admin: active only, 4 GPUs held on node n0: %s %s" % (out, err))
        rc, out, err = rk("admin", "queue", "--json")
        q = json.loads(out) if rc == 0 else {}
        check(rc == 0 and [x["id"] for x in q["jobs"]] == [b["id"]] and q["truncated"] is False,
              "queue --json: %s" % out)
        rc, out, err = rk("alice", "queue", "--json")
        check(rc == 0 and json.loads(out)["count"] == 0, "alice has no active job: %s" % out)
        rc, out, err = rk("admin", "queue", "--all", "--json")
        q = json.loads(out) if rc == 0 else {"jobs": []}
        check(rc == 0 and sorted(x["id"] for x in q["jobs"]) == sorted([jid, b["id"], b2["id"]]) and
              not q["truncated"], "queue --all: %s" % out)
        rc, out, err = rk("admin", "queue", "--all", "--limit", "2")
        check(rc == 0 and len(out.splitlines()) == 3 and "more with --limit" in err,
              "queue --all --limit 2 says it cut: %s %s" % (out, err))
        rc, out, err = rk("admin", "queue", "--all", "--state", "done")
        check(rc == 2 and "choose one" in err, "queue --all --state -> 2: %d %s" % (rc, err))
        rc, out, err = rk("admin", "queue", "--limit", "x")
        check(rc == 2 and "--limit" in err, "queue --limit x -> 2: %d %s" % (rc, err))
        # update (scontrol update): the owner or the admin; 404 for others
        rc, out, err = rk("alice", "update", str(b["id"]), "--gpus", "2")
        check(rc == 4 and "does not exist" in err, "alice updates bob's job -> 4: %d %s" % (rc, err))
        rc, out, err = rk("bob", "update", str(b["id"]), "--gpus", "2", "--json")
        u = json.loads(out) if rc == 0 else {}
        check(rc == 0 and u.get("gpus") == 2, "bob updates his job to 2 GPUs: %d %s %s" % (rc, out, err))
        rc, out, err = rk("admin", "update", str(b["id"]), "--max-gpus", "3")
        check(rc == 0 and "elastic 2..3" in out, "the admin widens it: %d %s %s" % (rc, out, err))
        rc, out, err = rk("admin", "update", str(b["id"]), "--plan", "dp=9,tp=1,pp=1,mb=16,ga=1,gc=0,zero=0,offload=0")
        check(rc == 1 and "plan" in err, "an impossible plan -> 1 naming plan: %d %s" % (rc, err))
        for bad in (("--gpus", "0"), ("--guaranteed", "maybe"), ()):
            rc, out, err = rk("admin", "update", str(b["id"]), *bad)
            check(rc == 2, "update %s -> 2: %d %s" % (bad, rc, err))
        # impossible CPU or memory requests are refused at submission, naming the field
        st, nodes = d.call("GET", "/v1/nodes")
        ns = nodes.get("nodes", nodes) if isinstance(nodes, dict) else nodes
        cpus = sum(n["cpus"] for n in ns)
        mem = sum(n["mem_mb"] for n in ns)
        for field, val in (("cpus", cpus + 1), ("mem_mb", mem + 1)):
            st, e = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 5, "gpus": 1,
                                                "command": "true", field: val}, token=ALICE)
            check(st == 422 and e["error"]["field"] == field and "never" in e["error"]["message"],
                  "%s=%d on a cluster of %d: %d %s" % (field, val, cpus if field == "cpus" else mem, st, e))
            # the scheduler thread's path (an idempotency key) refuses it the same way
            st, e = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 5, "gpus": 1, "idempotency_key": "k-" + field,
                                                "command": "true", field: val}, token=BOB)
            check(st == 422 and e["error"]["field"] == field, "%s with a key: %d %s" % (field, st, e))
        st, e = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 5, "gpus": 1,
                                            "command": "true", "cpus": cpus, "mem_mb": mem}, token=ALICE)
        check(st == 201, "the whole cluster's CPUs and memory are accepted: %d %s" % (st, e))
        # health: no token needed, nothing beyond status and version
        st, ctype, h = get_raw(d, "/healthz", None)
        hj = json.loads(h) if st == 200 else {}
        check(st == 200 and hj.get("status") == "ok" and set(hj) == {"status", "version"},
              "healthz: %d %r" % (st, h))
        st, _, h = get_raw(d, "/healthz", "not-a-known-token-0123456789")
        check(st == 200, "healthz ignores tokens: %d" % st)
        # /metrics keeps Prometheus' naming rules (issue 13: rubick_gpus_total was a gauge)
        st, _, m = get_raw(d, "/metrics", TOKEN)
        text = m.decode()
        check(st == 200 and "rubick_gpus " in text and "rubick_gpus_total" not in text,
              "metrics: rubick_gpus is the GPU gauge: %d" % st)
        problems = lint_metrics(text)
        check(not problems, "metrics naming: %s" % problems)
        check(lint_metrics("# HELP a_total x\n# TYPE a_total gauge\na_total 1\n"),
              "the naming check catches a gauge ending in _total")
        promtool = shutil.which("promtool")
        if promtool:  # Debian's prometheus package; optional (about 100 MB)
            p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                               text=True, timeout=60)
            check(p.returncode == 0, "promtool check metrics: %d %s %s" % (p.returncode, p.stdout, p.stderr))
        else:
            print("promtool not installed: the Python naming check alone ran")
    finally:
        d.stop()
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
