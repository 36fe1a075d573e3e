#!/usr/bin/env bash
# Sia's heterogeneous experiment on one workload (the full table: scripts/sia-hetero.sh,
# docs/oracle.md "Sia's heterogeneous experiment"): Saturn workload-1 on 6x4 T4 + 2x8 A100
# + 3x8 RTX 2080 Ti, 60 s rounds, Sia's profiles and validation targets. The peer's own
# simulator gives Sia 2,942.8 s average JCT and 15.96 h makespan on it
# (docs/references.md §8); ours must be within 15% of both, and every lookup
# must come from a profile measured on the node's own type (all three types have one:
# nothing type-scaled, nothing failed).
# usage: sia_hetero.sh RUBICK
set -euo pipefail
rubick=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
shared=${RK_SHARED_DIR:-$here/../../../shared}
sia=$shared/traces/sia-artifacts
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$rubick" sim --trace "$sia/workloads/saturn/workload-1.csv" \
	--cluster 6x4:t4+2x8:a100+3x8:2080ti --policy sia --interval 60 \
	--oracle "measured=$sia/profiles" --job-length sia-target --no-timing \
	--out "$tmp/out" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
python3 - "$tmp/out/summary.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
jct, mk = r["avg_jct_s"], r["makespan_s"] / 3600
print(f"sia on saturn/workload-1: avg JCT {jct:.1f} s (peer 2942.8), makespan {mk:.2f} h (peer 15.96)")
bad = []
if abs(jct / 2942.8 - 1) > 0.15: bad.append(f"avg JCT {jct:.1f} s is not within 15% of 2942.8 s")
if abs(mk / 15.96 - 1) > 0.15: bad.append(f"makespan {mk:.2f} h is not within 15% of 15.96 h")
st = r["oracle_lookups"]
types = st["by_gpu_type"]
if sorted(types) != ["2080ti", "a100", "t4"]: bad.append(f"lookups by type: {sorted(types)}")
if st["type-scaled"] or st["failed"] or st["model"]: bad.append(f"lookups not from the type's own profile: {st}")
if r["completed"] != 160: bad.append(f"{r['completed']} of 160 jobs completed")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
