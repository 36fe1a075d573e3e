#!/usr/bin/env bash
# Sia's heterogeneous experiment (Sia SOSP'23 Table 3; docs/references.md §8):
# 6 nodes x 4 T4 + 2 x 8 A100 + 3 x 8 RTX 2080 Ti, 60 s rounds, every workload of Sia's
# Philly (8) and Saturn (10) sets, Sia's per-type profiles as the oracle and its
# validation targets as job lengths. Each workload runs over RK_SEEDS (default 1-5:
# `rubick sim --seeds`, workload and policy seeds). Prints one row per (set, policy): the
# mean over the seeds of the set's mean over its workloads of average JCT and makespan,
# ± the half-width of its 95% Student t interval over the seeds, and for sia the peer's
# figure and the ratio of the means.
# usage: scripts/sia-hetero.sh [BUILD] [POLICIES]   (default build, fifo,tiresias,sia)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$root/scripts${PYTHONPATH:+:$PYTHONPATH}"  # seedstats.py
build=${1:-$root/build}
policies=${2:-fifo,tiresias,sia}
seeds=${RK_SEEDS:-1-5}
rubick=$build/src/cli/rubick
shared=${RK_SHARED_DIR:-$root/../shared}
sia=$shared/traces/sia-artifacts
cluster=6x4:t4+2x8:a100+3x8:2080ti
[ -x "$rubick" ] || { echo "sia-hetero.sh: no $rubick (build first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| workloads | policy | avg JCT (h) ± 95% | makespan (h) ± 95% | peer sia (h) | ratio JCT / makespan |"
echo "|---|---|---|---|---|---|"
for set in philly saturn; do
	case $set in philly) peer="0.86 16.0" ;; saturn) peer="0.99 17.1" ;; esac
	for w in "$sia/workloads/$set"/workload-*.csv; do
		"$rubick" sim --trace "$w" --cluster "$cluster" --policy "$policies" --interval 60 \
			--oracle "measured=$sia/profiles" --job-length sia-target --no-timing --json \
			--seeds "$seeds" \
			2>/dev/null >>"$tmp/$set.jsonl"
		echo >>"$tmp/$set.jsonl"
	done
	python3 - "$tmp/$set.jsonl" "$set" $peer <<'PY'
import json, math, sys
path, name, pj, pm = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
runs = [json.loads(l) for l in open(path) if l.strip()]
from seedstats import stat  # scripts/seedstats.py: the statistics rubick reports print
acc = {}  # policy -> one (avg JCT values per seed, makespan values per seed) per workload
for r in runs:
    for x in r["results"]:
        s = x["seeds"]
        acc.setdefault(x["policy"], []).append((s["avg_jct_s"]["values"], s["makespan_s"]["values"]))
for p, v in acc.items():
    n = len(v[0][0])
    # the set's mean over its workloads at each seed, then over the seeds
    j, jh = stat([sum(w[0][k] for w in v) / len(v) / 3600 for k in range(n)])
    m, mh = stat([sum(w[1][k] for w in v) / len(v) / 3600 for k in range(n)])
    jh, mh = jh or 0.0, mh or 0.0  # one seed: no interval
    peer = f"{pj:.2f} / {pm:.1f}" if p == "sia" else ""
    ratio = f"{j / pj:.2f} / {m / pm:.2f}" if p == "sia" else ""
    print(f"| {name}/ ({len(v)} x 160, {n} seeds) | {p} | {j:.2f} ± {jh:.2f} | {m:.1f} ± {mh:.1f} | {peer} | {ratio} |")
PY
done
