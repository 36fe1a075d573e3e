#!/usr/bin/env python3
"""A workload like SJF-BSBF's (IWQoS 2024, docs/references.md §3.5) from the shared Gavel data.

Issue 15 asks for the paper's comparison against preemptive schedulers on "small models whose
pairs fit one GPU, with Gavel's measured co-location throughputs". This derives such a workload,
nothing invented:

  jobs   every 1-GPU job of Gavel's 15 Philly VC traces (gavel/msr/seed0/*.trace, Philly-derived,
         Gavel job types and step counts) whose job type has an isolated V100 throughput in
         gavel/simulation_throughputs.json: 26 types of ResNet-18/50, Transformer, LM,
         Recommendation, A3C and CycleGAN at their batch sizes. Gavel measured co-location only
         for 1-GPU jobs (every 2-8 GPU pair in the file is 0), so these are exactly the jobs for
         which every pair's slowdown is a measurement: 636 of the 676 ordered pairs on V100 ran
         co-located on one GPU, 40 could not (0 steps/s; the simulator never shares those).
  sizes  the trace's total_steps (its length alone = steps / the file's V100 steps/s, as
         `rubick sim` runs Gavel job types: docs/oracle.md "Trace-native speeds").
  sample --jobs N drawn without replacement from that pool with --seed S; --max-hours H keeps
         only jobs at most H hours long alone (default: no bound; the Philly tail runs to 3,149 h
         and its mean, 40 h, is 19x its median). The variant the evaluation runs beside the full
         tail, H = 48, is the longest job of SJF-BSBF's own published trace
         (Lai-JX/Scheduler trace-data/trace_data_new.csv: 174,542 s).
  arrivals Poisson at --load L: rate = L x GPUS / (mean length of the sample), i.e. offered
         GPU-seconds per second = L x the cluster's GPUs.

Writes the trace (Gavel's 7-field layout, arrival times replaced, rows in arrival order) to
stdout, and to stderr one line `rate_per_h=R jobs=N mean_len_h=M` (R = the Poisson rate in jobs
per hour, for `rubick sim --poisson R --seeds A-B`, which redraws the arrivals per seed).

  usage: scripts/gen-share-workload.py [--gavel DIR] [--jobs N] [--seed S] [--load L]
                                       [--gpus G] [--max-hours H] > workload.trace
"""
import argparse
import glob
import json
import os
import random
import sys


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gavel", default=os.path.join(here, "..", "..", "shared", "traces", "gavel"),
                    help="Gavel trace folder (msr/seed0/*.trace, simulation_throughputs.json)")
    ap.add_argument("--jobs", type=int, default=500, help="jobs to draw (default 500)")
    ap.add_argument("--seed", type=int, default=0, help="sampling and arrival seed (default 0)")
    ap.add_argument("--load", type=float, default=1.0,
                    help="offered GPU-seconds per second / cluster GPUs (default 1.0)")
    ap.add_argument("--gpus", type=int, default=32,
                    help="cluster GPUs the load refers to (default 32: 4x8, SJF-BSBF's n4g8)")
    ap.add_argument("--max-hours", type=float, default=0,
                    help="keep only jobs at most this long alone (default 0 = no bound)")
    a = ap.parse_args()
    if a.jobs < 1 or not a.load > 0 or a.gpus < 1 or a.max_hours < 0:
        sys.exit("gen-share-workload: --jobs, --load and --gpus must be positive, --max-hours >= 0")
    tput_file = os.path.join(a.gavel, "simulation_throughputs.json")
    traces = sorted(glob.glob(os.path.join(a.gavel, "msr", "seed0", "*.trace")))
    if not traces:
        sys.exit(f"gen-share-workload: no traces under {a.gavel}/msr/seed0")
    with open(tput_file) as f:
        v100 = json.load(f)["v100"]
    pool = []
    for path in traces:
        with open(path) as f:
            for ln, line in enumerate(f, 1):
                t = line.rstrip("\n").split("\t")
                if len(t) != 7:
                    sys.exit(f"gen-share-workload: {path}:{ln}: expected 7 tab-separated fields")
                if int(t[6]) != 1:
                    continue
                iso = v100.get(f"('{t[0]}', 1)", {}).get("null", 0.0)
                if iso <= 0:
                    continue
                length = float(t[4]) / iso
                if a.max_hours > 0 and length > a.max_hours * 3600:
                    continue
                pool.append((t, length))
    if a.jobs > len(pool):
        sys.exit(f"gen-share-workload: --jobs {a.jobs} > the {len(pool)} 1-GPU jobs of the pool")
    rng = random.Random(a.seed)
    sample = rng.sample(pool, a.jobs)
    mean_len = sum(s for _, s in sample) / len(sample)
    rate = a.load * a.gpus / mean_len  # jobs per second
    t = 0.0
    out = []
    for fields, _ in sample:
        row = list(fields)
        row[5] = f"{t:.6f}"
        out.append("\t".join(row))
        t += rng.expovariate(rate)
    sys.stdout.write("\n".join(out) + "\n")
    print(f"rate_per_h={rate * 3600:.6f} jobs={a.jobs} mean_len_h={mean_len / 3600:.3f} "
          f"pool={len(pool)}", file=sys.stderr)


if __name__ == "__main__":
    main()
