"""rubickd runs the rubick policy with its composition options (issue 15):
sharing=on and placement=contention parse, apply (a job starts under them)
and are kept by GET/PUT /v1/policy; a bad value is refused naming it."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from rkd import Daemon  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def main():
    d = Daemon(cluster="2x4", extra=["--policy", "rubick", "--policy-options",
                                     "sharing=on,placement=contention"]).start()
    try:
        st, p = d.call("GET", "/v1/policy")
        check(st == 200 and p["name"] == "rubick" and p["options"] == "sharing=on,placement=contention",
              "policy with options: %s" % p)
        st, j = d.call("POST", "/v1/jobs", {"name": "c1", "model": "bert", "iterations": 5, "gpus": 2,
                                            "command": "sleep 30"})
        check(st == 201, "submit: %s" % j)
        j = d.wait_state(j["id"], ["running"])
        check(j["state"] == "running", "runs under rubick sharing=on,placement=contention: %s" % j)
        st, e = d.call("PUT", "/v1/policy", {"name": "rubick", "options": "sharing=maybe"})
        check(st == 400 and e["error"]["field"] == "options" and "sharing=maybe" in e["error"]["message"],
              "bad option refused: %d %s" % (st, e))
        st, e = d.call("PUT", "/v1/policy", {"name": "rubick", "options": "placement=ring"})
        check(st == 400 and "placement=ring" in e["error"]["message"], "bad placement refused: %s" % e)
        st, p = d.call("PUT", "/v1/policy", {"name": "rubick", "options": "placement=contention"})
        check(st == 200 and p["options"] == "placement=contention", "options changed: %s" % p)
    finally:
        d.stop()
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
