"""A rubickd's own history replayed (docs/replay.md): real `rubick history --csv` and
`--json` from a local-engine daemon that ran a zoo-model job, a job described by its
launch command (no zoo model) and a job cancelled before it started, read back by
`rubick trace` and replayed by `rubick sim` under several policies.
- --json: the zoo-model job is a white box (its model, batch, iterations done), the
  launch job a black box, the cancelled one counted as never run; names are the ids;
  the run time at the request is GPU-hours / GPUs;
- --csv names no model: both jobs are black boxes, the same run times;
- the replay completes both jobs under fifo, sjf and rubick and reports the black-box
  share on stderr and in summary.json."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from rkd import Daemon, BUILD, TOKEN  # noqa: E402

RUBICK = os.path.join(BUILD, "src", "cli", "rubick")
JOB_SH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "job.sh")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    p = subprocess.run([RUBICK] + list(args), capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def main():
    d = Daemon(cluster="1x4").start()
    tmp = tempfile.mkdtemp(prefix="rk-hist-")
    try:
        st, a = d.call("POST", "/v1/jobs", {"name": "bert-ft", "model": "bert", "iterations": 100,
                                            "global_batch": 32, "gpus": 2, "command": "sh " + JOB_SH})
        check(st == 201, "zoo-model job: %s" % a)
        launch = ("python pretrain_gpt.py --num-layers 4 --hidden-size 256 --num-attention-heads 4 "
                  "--seq-length 128 --micro-batch-size 2 --global-batch-size 8")
        st, b = d.call("POST", "/v1/jobs", {"name": "gpt-mine", "launch": launch, "iterations": 100,
                                            "gpus": 1, "command": "sh " + JOB_SH})
        check(st == 201, "launch job: %s" % b)
        # 100 iterations of job.sh (20 ms each): at least 2 s, so that neither job's elapsed
        # time rounds to the 0 s a replay drops as never run (30 did, on a quiet machine)
        st, c = d.call("POST", "/v1/jobs", {"name": "never", "model": "vit", "iterations": 5,
                                            "gpus": 1, "command": "true", "hold": True})
        check(st == 201, "held job: %s" % c)
        for j in (a, b):
            got = d.wait_state(j["id"], ["done", "failed", "cancelled"], timeout=60)
            check(got["state"] == "done", "job %s: %s" % (j["name"], got))
        st, r = d.call("DELETE", "/v1/jobs/%d" % c["id"])
        check(st in (200, 202), "cancel the held job: %s" % r)
        d.wait_state(c["id"], ["cancelled"], timeout=30)
        env = dict(os.environ, RUBICK_URL=d.url, RUBICK_TOKEN_FILE=os.path.join(d.dir, "admin.token"))
        files = {}
        for form in ("csv", "json"):
            p = subprocess.run([RUBICK, "history", "--" + form], env=env, capture_output=True,
                               text=True, timeout=60)
            check(p.returncode == 0, "history --%s: %s" % (form, p.stderr))
            files[form] = os.path.join(tmp, "history." + form)
            with open(files[form], "w") as f:
                f.write(p.stdout)
        hist = {x["id"]: x for x in json.load(open(files["json"]))["jobs"]}
        check(set(hist) == {a["id"], b["id"], c["id"]}, "history lists the three: %s" % list(hist))

        for form in ("csv", "json"):
            rc, out, err = run("trace", files[form], "--json")
            check(rc == 0, "trace %s: %s" % (form, err))
            t = json.loads(out) if rc == 0 else {}
            check(t.get("format") == "history" and t.get("jobs") == 2 and t.get("unstarted") == 1,
                  "%s: 2 jobs, the cancelled one never ran: %s" % (form, t))
            want_bb = 2 if form == "csv" else 1
            check(t.get("black_box_jobs") == want_bb and t.get("mapped") == want_bb,
                  "%s: %d black box(es): %s" % (form, want_bb, t))
            rc, out, err = run("trace", files[form], "--native")
            rows = [l.split(",") for l in out.splitlines() if l and not l.startswith("#")]
            hdr = rows[0]
            recs = {r[hdr.index("name")]: dict(zip(hdr, r)) for r in rows[1:]}
            for j in (a, b):
                h, r = hist[j["id"]], recs.get(str(j["id"]), {})
                want = h["gpu_hours"] * 3600 / h["gpus"]
                # the CSV prints GPU-hours to 4 decimals: 0.18 s of a GPU either way
                tol = 0.18 / h["gpus"] + 0.001 if form == "csv" else 0.01
                check(r and abs(float(r["duration_s"]) - want) < tol and r["job_type"] == j["name"],
                      "%s: job %d run time %s, want GPU-hours/GPUs %.3f: %s" % (form, j["id"], r.get("duration_s"), want, r))
            ra = recs.get(str(a["id"]), {})
            if form == "json":
                check(ra.get("model") == "bert" and ra.get("global_batch") == "32" and
                      ra.get("iters") == str(int(hist[a["id"]]["iters_done"])) and int(ra.get("iters", 0)) == 100,
                      "json: the zoo-model job replays as bert, its batch and 100 iterations: %s" % ra)
            else:
                check(ra.get("iters") == "0", "csv: no iterations, a black box: %s" % ra)

        out_dir = os.path.join(tmp, "replay")
        rc, out, err = run("sim", "--trace", files["json"], "--cluster", "1x4", "--policy",
                           "fifo,sjf,rubick", "--no-timing", "--out", out_dir)
        check(rc == 0, "replay: %s" % err)
        rows = [l.split() for l in out.splitlines() if l.split()[:1] in (["fifo"], ["sjf"], ["rubick"])]
        check(len(rows) == 3 and all("2/2" in r for r in rows), "three policies, 2/2 each: %s" % out)
        check("black boxes: 1 of 2 job(s)" in err and "1 that never ran" in err,
              "the black-box share and the dropped job on stderr: %s" % err)
        s = json.load(open(os.path.join(out_dir, "summary.json"))) if rc == 0 else {}
        text = json.dumps(s)
        check('"black_box_jobs": "1"' in text and '"trace_jobs": "2"' in text,
              "summary.json says the black-box share")
    finally:
        d.stop()
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("history replay ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
