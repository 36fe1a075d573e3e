#!/usr/bin/env bash
# Pollux replays a few jobs of Pollux's own workload (the first 24 of
# pollux-osdi21/workloads/workload-1.csv) on 16x4 T4 with 60 s rounds, with the
# Sia-family job settings of scripts/fidelity.sh: it runs, every job ends, some
# job is resized (Pollux is elastic) and the run is the same twice.
# usage: pollux.sh RUBICK
set -euo pipefail
rubick=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
shared=${RK_SHARED_DIR:-$here/../../../shared}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -25 "$shared/traces/pollux-osdi21/workloads/workload-1.csv" >"$tmp/w.csv"
for k in 1 2; do
	"$rubick" sim --trace "$tmp/w.csv" --cluster 16x4:t4 --policy pollux --interval 60 \
		--restart-cost 30,imagenet=250,bert=120,yolov3=45,deepspeech2=25 \
		--oracle "measured=$shared/traces/sia-artifacts/profiles" --job-length sia-target \
		--no-timing --out "$tmp/out$k" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
done
python3 - "$tmp/out1/summary.json" "$tmp/out2/summary.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["results"][0]
b = json.load(open(sys.argv[2]))["results"][0]
print(f"pollux on 24 jobs: avg JCT {a['avg_jct_s']:.1f} s, makespan {a['makespan_s']:.0f} s, "
      f"completed {a['completed']}, reconfigs {a.get('reconfigs')}")
bad = []
if a["completed"] != 24: bad.append(f"{a['completed']} of 24 jobs completed")
if not a.get("reconfigs"): bad.append("no job was ever resized or moved")
if (a["avg_jct_s"], a["makespan_s"]) != (b["avg_jct_s"], b["makespan_s"]): bad.append("two runs differ")
for x in bad: print("FAIL:", x)
sys.exit(1 if bad else 0)
PY
