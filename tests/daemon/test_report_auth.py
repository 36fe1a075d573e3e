"""The report route says nothing about a job to a caller without its token
(docs/api.md, "Report progress"): a wrong token, another job's token, an ended
job and a job that never existed all get the same 404, status and body byte for
byte, so that such a caller cannot tell which ids exist or have ended. The
job's own token, its tenant's and the admin's keep their answers (200, 409 for
an ended job, 404 naming a missing one)."""
import json
import os
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from rkd import ALICE, Daemon  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def report(d, job_id, token):
    """POST a report; (status, the body's raw bytes)."""
    req = urllib.request.Request("%s/v1/jobs/%d/report" % (d.url, job_id),
                                 data=b'{"iters_done": 1}', method="POST")
    req.add_header("Authorization", "Bearer " + token)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def token_of(path, timeout=30):
    """The RUBICK_JOB_TOKEN a job wrote to path."""
    end = time.time() + timeout
    while time.time() < end:
        if os.path.exists(path):
            with open(path) as f:
                tok = f.read().strip()
            if len(tok) == 64:
                return tok
        time.sleep(0.05)
    raise AssertionError("no job token in %s" % path)


def main():
    d = Daemon().start()
    try:
        def submit(name, command):
            st, j = d.call("POST", "/v1/jobs", {"model": "bert", "iterations": 5, "gpus": 1,
                                                "name": name, "command": command}, token=ALICE)
            check(st == 201, "submit %s: %s" % (name, j))
            return j["id"]

        tok = {}
        ids = {}
        for name, tail in (("running", "sleep 60"), ("other", "sleep 60"), ("ended", "true")):
            path = os.path.join(d.dir, name + ".tok")
            ids[name] = submit(name, 'echo "$RUBICK_JOB_TOKEN" > %s.tmp && mv %s.tmp %s && %s'
                               % (path, path, path, tail))
            tok[name] = token_of(path)
        d.wait_state(ids["running"], ["running"])
        d.wait_state(ids["ended"], ["done"])
        missing = max(ids.values()) + 100
        wrong = "0" * 64
        cases = [("a wrong token", ids["running"], wrong),
                 ("another job's token", ids["running"], tok["other"]),
                 ("an ended job", ids["ended"], wrong),
                 ("a job that does not exist", missing, wrong)]
        answers = [(what,) + report(d, jid, t) for what, jid, t in cases]
        for what, st, body in answers:
            print("%s: %d %s" % (what, st, body.decode()))
            check(st == 404, "%s: %d, not 404" % (what, st))
            check(body == answers[0][2], "%s: %r differs from %s's %r" % (
                what, body, answers[0][0], answers[0][2]))
        err = json.loads(answers[0][2])["error"]
        check(err["code"] == "not_found" and err["field"] == "id", "the 404's shape: %s" % err)
        check(str(ids["running"]) not in err["message"], "no job id in the 404: %s" % err)

        # the job's own token keeps today's answers: 200 while it runs, 409 once it ended
        st, body = report(d, ids["running"], tok["running"])
        check(st == 200, "the job's own token: %d %s" % (st, body))
        st, body = report(d, ids["ended"], tok["ended"])
        check(st == 409 and json.loads(body)["error"]["code"] == "conflict",
              "an ended job's own token: %d %s" % (st, body))
        # ... and so do its tenant's token and the admin's
        st, body = report(d, ids["ended"], ALICE)
        check(st == 409, "the tenant on its ended job: %d %s" % (st, body))
        st, body = report(d, missing, ALICE)
        check(st == 404 and ("job %d does not exist" % missing) in body.decode(),
              "the tenant on a missing job: %d %s" % (st, body))
        d.cancel_all()
    finally:
        d.stop()
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("report auth ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
