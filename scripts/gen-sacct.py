#!/usr/bin/env python3
"""Write a realistic Slurm accounting export (`sacct -P`) from a slice of a public trace.

A site's sacct file is what docs/replay.md replays; no site's own file can be shipped,
so this makes one from Pollux's philly.csv (Microsoft Philly jobs, CC-BY-4.0 via the
Pollux artifact, Apache-2.0: ../shared/traces/pollux-osdi21/README.md): each Philly
job's submission, run time and GPU count, in the shape `sacct -P -o
JobID,JobName,User,Account,Partition,Submit,Start,End,Elapsed,State,ExitCode,AllocTRES,ReqTRES`
prints it, with what real exports hold besides finished GPU jobs, drawn from --seed:
  - every job's .batch and .extern steps, and a .0 step for a third of them;
  - array tasks (JobID 1234_5) for one job in 20;
  - states: COMPLETED, then FAILED (8%), TIMEOUT (2%), CANCELLED after start (4%);
  - jobs not to replay: PENDING (3%: Start and End Unknown), RUNNING at export (2%:
    End Unknown), CANCELLED before start (2%: Start None), CPU-only jobs (5%: no gres/gpu);
  - a queue wait (Start - Submit) of a few minutes, longer for bigger jobs (Philly's own
    waits are not in philly.csv: the replay recomputes every wait anyway).
Philly's virtual cluster becomes the Account, a user is drawn per account. --bad N
adds N malformed rows (to exercise --skip-bad). The counts go to stderr as one JSON
line (`--counts FILE` writes them to FILE), so a test can check what rubick reads.

usage: gen-sacct.py PHILLY_CSV [--jobs N] [--start ROW] [--max-gpus G] [--seed S]
                    [--cpus-per-gpu C] [--mem-per-gpu GIB] [--bad N] [--counts FILE]
                    > accounting.txt
"""
import argparse
import csv
import datetime as dt
import json
import random
import sys

FIELDS = ("JobID|JobName|User|Account|Partition|Submit|Start|End|Elapsed|State|ExitCode|"
          "AllocTRES|ReqTRES")
NAMES = ["bert-finetune", "resnet50-imagenet", "gpt-lm", "t5-translate", "vit-train",
         "llama-sft", "train", "eval", "sweep", "notebook"]


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S")


def hms(s):
    s = int(round(s))
    d, r = divmod(s, 86400)
    text = "%02d:%02d:%02d" % (r // 3600, r % 3600 // 60, r % 60)
    return "%d-%s" % (d, text) if d else text


def tres(gpus, cpus, mem_g):
    nodes = max(1, (gpus + 7) // 8)
    t = "billing=%d,cpu=%d" % (cpus, cpus)
    if gpus:
        t += ",gres/gpu=%d,gres/gpu:v100=%d" % (gpus, gpus)
    return t + ",mem=%dG,node=%d" % (mem_g, nodes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("philly")
    ap.add_argument("--jobs", type=int, default=3000, help="jobs (lines without steps)")
    ap.add_argument("--start", type=int, default=20000, help="first Philly row (by time)")
    ap.add_argument("--max-gpus", type=int, default=32, help="skip Philly jobs above this")
    ap.add_argument("--cpus-per-gpu", type=int, default=2,
                    help="CPUs a job asks per GPU (the emulated lab's nodes: 16 CPUs, 8 GPUs)")
    ap.add_argument("--mem-per-gpu", type=int, default=7,
                    help="GiB a job asks per GPU (the lab's nodes: 64000 MB for 8 GPUs)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bad", type=int, default=0, help="malformed rows to add")
    ap.add_argument("--counts", help="write the counts here as JSON (default: stderr)")
    a = ap.parse_args()
    if a.jobs < 1 or a.start < 0 or a.max_gpus < 1 or a.bad < 0 or a.cpus_per_gpu < 1 \
            or a.mem_per_gpu < 1:
        ap.error("--jobs, --max-gpus, --cpus-per-gpu, --mem-per-gpu >= 1; --start, --bad >= 0")
    rng = random.Random(a.seed)
    with open(a.philly, newline="") as f:
        rows = [r for r in csv.DictReader(f)]
    rows.sort(key=lambda r: r["timestamp"])
    rows = [r for r in rows[a.start:] if 1 <= int(r["num_gpus"]) <= a.max_gpus
            and float(r["duration"]) >= 1][:a.jobs]
    if len(rows) < a.jobs:
        sys.exit("gen-sacct.py: %s: only %d usable rows from row %d" % (a.philly, len(rows), a.start))
    users = {}
    out = [FIELDS]
    counts = dict(lines=0, jobs=0, steps=0, unfinished=0, unstarted=0, no_gpu=0, bad=0,
                  gpu_hours=0.0)
    job_id = 1000
    export = max(dt.datetime.strptime(r["timestamp"], "%Y-%m-%d %H:%M:%S") for r in rows)
    for k, r in enumerate(rows):
        job_id += 1
        submit = dt.datetime.strptime(r["timestamp"], "%Y-%m-%d %H:%M:%S")
        dur = float(r["duration"])
        gpus = int(r["num_gpus"])
        acct = "vc-" + r["cluster"]
        user = users.setdefault(acct, "u%02d" % (len(users) % 40 + rng.randrange(3)))
        name = rng.choice(NAMES)
        jid = str(job_id) if k % 20 else "%d_%d" % (job_id, rng.randrange(1, 64))
        u = rng.random()
        kind = ("pending" if u < 0.03 else "running" if u < 0.05 else "unstarted" if u < 0.07
                else "cpu" if u < 0.12 else "ran")
        if kind == "cpu":
            gpus = 0
        cpus = a.cpus_per_gpu * gpus if gpus else rng.choice([1, 2, 4, 8])
        mem = a.mem_per_gpu * gpus if gpus else 4 * cpus
        req = tres(gpus, cpus, mem)
        wait = rng.expovariate(1.0 / (120 + 60 * gpus))
        start = submit + dt.timedelta(seconds=round(wait))
        end = start + dt.timedelta(seconds=round(dur))
        if kind == "pending":
            line = [jid, name, user, acct, "gpu", iso(submit), "Unknown", "Unknown",
                    "00:00:00", "PENDING", "0:0", "", req]
            counts["unfinished"] += 1
        elif kind == "running":
            line = [jid, name, user, acct, "gpu", iso(submit), iso(start), "Unknown",
                    hms(min(dur, (export - start).total_seconds() if export > start else 1)),
                    "RUNNING", "0:0", req, req]
            counts["unfinished"] += 1
        elif kind == "unstarted":
            line = [jid, name, user, acct, "gpu", iso(submit), "None", iso(start), "00:00:00",
                    "CANCELLED by %d" % (1000 + rng.randrange(40)), "0:0", "", req]
            counts["unstarted"] += 1
        else:
            v = rng.random()
            state, code = (("FAILED", "1:0") if v < 0.08 else ("TIMEOUT", "0:0") if v < 0.10
                           else ("CANCELLED by 0", "0:15") if v < 0.14 else ("COMPLETED", "0:0"))
            line = [jid, name, user, acct, "gpu", iso(submit), iso(start), iso(end),
                    hms(dur), state, code, req, req]
            if kind == "cpu":
                counts["no_gpu"] += 1
            else:
                counts["jobs"] += 1
                counts["gpu_hours"] += round(dur) * gpus / 3600.0
        out.append("|".join(line))
        counts["lines"] += 1
        if kind in ("ran", "cpu", "running"):
            steps = ["batch", "extern"] + (["0"] if rng.random() < 1 / 3 else [])
            for s in steps:
                st = [jid + "." + s, s if s != "0" else "python", "", acct, "", iso(start),
                      iso(start), line[7], line[8], line[9].split(" ")[0], line[10],
                      req.replace("billing=%d," % cpus, ""), ""]
                out.append("|".join(st))
                counts["steps"] += 1
                counts["lines"] += 1
    bad = ["%d|broken|u00|vc-bad|gpu|not-a-date|Unknown|Unknown|00:00:00|COMPLETED|0:0||",
           "%d|broken|u00|vc-bad|gpu|2017-10-01T00:00:00|2017-10-01T00:00:10|2017-10-01T00:00:20|"
           "soon|COMPLETED|0:0|gres/gpu=1|gres/gpu=1",
           "%d|broken|u00|vc-bad|gpu|2017-10-01T00:00:00|2017-10-01T00:00:10|2017-10-01T00:00:20|"
           "00:00:10|COMPLETED|0:0|gres/gpu=two|"]
    for i in range(a.bad):
        job_id += 1
        pos = 1 + rng.randrange(len(out) - 1)
        out.insert(pos, bad[i % len(bad)] % job_id)
        counts["bad"] += 1
        counts["lines"] += 1
    sys.stdout.write("\n".join(out) + "\n")
    counts["gpu_hours"] = round(counts["gpu_hours"], 3)
    text = json.dumps(counts, sort_keys=True)
    if a.counts:
        with open(a.counts, "w") as f:
            f.write(text + "\n")
    else:
        print(text, file=sys.stderr)


if __name__ == "__main__":
    main()
