"""The README's "From a trace to a figure" block runs as written: extracted from
README.md and run by bash -e in a fresh folder holding only `build` (the build under
test) and `data` (the checkout's), as they sit in a checkout. Then: the run's report
and every seed's jobs are in fig/, each load's run in runs/, and the sweep's table,
tidy CSV, JSON, page and every figure (SVG and PDF) in sweep/, with three loads of
three policies over five seeds."""
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.abspath(os.path.dirname(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.path.abspath(os.environ.get("RK_BUILD_DIR", os.path.join(ROOT, "build")))


def block():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    if "### From a trace to a figure" not in text:
        raise AssertionError("README.md: no 'From a trace to a figure' section")
    sec = text[text.index("### From a trace to a figure"):]
    m = re.search(r"```sh\n(.*?)```", sec, re.S)
    if not m:
        raise AssertionError("README.md: no sh block under 'From a trace to a figure'")
    return m.group(1)


def need(run, *names):
    for n in names:
        p = os.path.join(run, n)
        if not os.path.isfile(p) or os.path.getsize(p) == 0:
            raise AssertionError("the block did not write %s" % n)


def main():
    script = block()
    with tempfile.TemporaryDirectory(prefix="rk-readme-sweep-") as run:
        os.symlink(BUILD, os.path.join(run, "build"))
        os.symlink(os.path.join(ROOT, "data"), os.path.join(run, "data"))
        env = dict(os.environ)
        env.pop("RUBICK_ZOO", None)  # as a reader runs it: the build's own data folder
        try:
            r = subprocess.run(["bash", "-e", "-c", script], cwd=run, env=env,
                               capture_output=True, text=True, timeout=150)
        except subprocess.TimeoutExpired:
            raise AssertionError("the README's figure block did not end in 150 s")
        print(r.stdout[-3000:], r.stderr[-3000:])
        if r.returncode != 0:
            raise AssertionError("the README's figure block failed (%d)" % r.returncode)
        need(run, "fig/report.html", "fig/summary.json", "fig/jobs.csv")
        figs = sorted(n for n in os.listdir(os.path.join(run, "fig")) if n.startswith("fig-"))
        if not any(n.endswith(".svg") for n in figs) or \
                sorted(n[:-4] for n in figs if n.endswith(".svg")) != \
                sorted(n[:-4] for n in figs if n.endswith(".pdf")):
            raise AssertionError("fig/: want each fig-NAME as .svg and .pdf, got %s" % figs)
        seeds = {row["seed"] for row in csv.DictReader(open(os.path.join(run, "fig/jobs.csv")))}
        if seeds != {"1", "2", "3"}:
            raise AssertionError("fig/jobs.csv: seeds %s, want 1-3" % sorted(seeds))
        for load in ("0.5", "1", "2"):
            need(run, "runs/load-%s/summary.json" % load, "runs/load-%s/jobs.csv" % load)
        need(run, "sweep/sweep.csv", "sweep/sweep.json", "sweep/index.html")
        for f in ("avg-jct", "p99-jct", "makespan", "gpu-util", "jct-cdf", "gpu-hours",
                  "reconfigs"):
            need(run, "sweep/fig-%s.svg" % f, "sweep/fig-%s.pdf" % f)
            if not open(os.path.join(run, "sweep/fig-%s.pdf" % f), "rb").read(4) == b"%PDF":
                raise AssertionError("sweep/fig-%s.pdf is not a PDF" % f)
        sweep = json.load(open(os.path.join(run, "sweep/sweep.json")))
        if sweep["x"] != "load" or sweep["xs"] != [0.5, 1.0, 2.0]:
            raise AssertionError("sweep.json: x %s at %s" % (sweep["x"], sweep["xs"]))
        if sweep["policies"] != ["rubick", "sia", "fifo"]:
            raise AssertionError("sweep.json: policies %s" % sweep["policies"])
        if any(p["n"] != 5 for p in sweep["points"]) or len(sweep["points"]) != 9:
            raise AssertionError("sweep.json: want 9 points of 5 seeds each")
        # Poisson arrivals differ per seed: a band, not a line
        if not any(p["avg_jct_s"]["half95"] > 0 for p in sweep["points"]):
            raise AssertionError("sweep.json: every interval is empty (do the seeds differ?)")
        if not re.search(r"^sweep over load factor \(3 values, 3 policies\)", r.stdout, re.M):
            raise AssertionError("rubick report printed no table: %s" % r.stdout[-1500:])
    print("README figure block ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
