#!/usr/bin/env bash
# Sia's heterogeneous experiment (Sia SOSP'23 Table 3; ../shared/research/peer_results.md):
# 6 nodes x 4 T4 + 2 x 8 A100 + 3 x 8 RTX 2080 Ti, 60 s rounds, every workload of Sia's
# Philly (8) and Saturn (10) sets, Sia's per-type profiles as the oracle and its
# validation targets as job lengths. Prints one row per (set, policy): the mean over the
# workloads of average JCT and makespan, and for sia the peer's figure and the ratio.
# usage: scripts/sia-hetero.sh [BUILD] [POLICIES]   (default build, fifo,tiresias,sia)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
policies=${2:-fifo,tiresias,sia}
rubick=$build/src/cli/rubick
shared=${RK_SHARED_DIR:-$root/../shared}
sia=$shared/traces/sia-artifacts
cluster=6x4:t4+2x8:a100+3x8:2080ti
[ -x "$rubick" ] || { echo "sia-hetero.sh: no $rubick (build first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| workloads | policy | avg JCT (h) | makespan (h) | peer sia (h) | ratio JCT / makespan |"
echo "|---|---|---|---|---|---|"
for set in philly saturn; do
	case $set in philly) peer="0.86 16.0" ;; saturn) peer="0.99 17.1" ;; esac
	for w in "$sia/workloads/$set"/workload-*.csv; do
		"$rubick" sim --trace "$w" --cluster "$cluster" --policy "$policies" --interval 60 \
			--oracle "measured=$sia/profiles" --job-length sia-target --no-timing --json \
			2>/dev/null >>"$tmp/$set.jsonl"
		echo >>"$tmp/$set.jsonl"
	done
	python3 - "$tmp/$set.jsonl" "$set" $peer <<'PY'
import json, sys
path, name, pj, pm = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
runs = [json.loads(l) for l in open(path) if l.strip()]
acc = {}
for r in runs:
    for x in r["results"]:
        acc.setdefault(x["policy"], []).append((x["avg_jct_s"], x["makespan_s"]))
for p, v in acc.items():
    j = sum(a for a, _ in v) / len(v) / 3600
    m = sum(b for _, b in v) / len(v) / 3600
    peer = f"{pj:.2f} / {pm:.1f}" if p == "sia" else ""
    ratio = f"{j / pj:.2f} / {m / pm:.2f}" if p == "sia" else ""
    print(f"| {name}/ ({len(v)} x 160) | {p} | {j:.2f} | {m:.1f} | {peer} | {ratio} |")
PY
done
