#!/usr/bin/env bash
# Issue 6 evaluation, GPU sharing: average JCT and makespan of sjf-bsbf vs
# sjf-ffs (both preemption-free, --sharing on) vs the preemptive tiresias and
# srtf (and plain sjf for reference) on Philly-derived traces:
#   - Gavel's Philly VC traces (job types = the interference table's keys,
#     exact lookups on V100) on 8x8 V100;
#   - Muri's trace3 (Philly-derived, SJF-BSBF's own trace family) on 8x8 V100
#     and 4x8 A800 (a bare NxG cluster is A800 80 GiB);
#   - held out (not looked at while the benefit test was developed, issue 15):
#     Muri trace1 and trace4, Gavel VCs 103959 and 11cb48, on both clusters.
# Besides sjf (consolidated, the baselines' default) the table has
# "sjf placement=spread": sjf with sjf-bsbf's own exclusive placement (one
# node best fit, else the nodes with most free GPUs), the like-for-like
# non-sharing reference.
# Rubick composed with sharing (issue 15): plain rubick (reconfiguration,
# never shares) and rubick:sharing=on (a best-effort job with no exclusive
# room may share when sjf-bsbf's group test says it pays). Its combination
# with placement=contention is measured by scripts/eval-contention.sh (both
# physics at once).
# Prints one markdown table per case (docs/eval-sharing.md keeps the figures).
# A trace with a seeded part (its native form differs between workload seeds 1
# and 2: the zoo model mapping of Muri's and Gavel's traces) runs once per seed
# of RK_SEEDS (default 1-5; `--seed S`, the workload and policy seed, as
# `rubick sim --seeds` sets them for each repetition): average and median JCT
# and makespan are the mean over the seeds ± the half-width of their 95%
# Student t interval, "vs sjf-bsbf" the mean of each seed's difference to
# sjf-bsbf on the same seed (paired) ± its half-width, the guarantee columns the
# first seed's. One run per seed rather than `--seeds`: the median JCT is not in
# --seeds' "seeds" block. Needs python3 (reads rubick sim --json).
#   usage: scripts/eval-sharing.sh [BUILD_DIR [JOBS]]   (default build, 1)
# JOBS cases run at once (rubick's runs on the Gavel VCs take the longest);
# the tables come out in the same order whatever JOBS is.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$here/scripts${PYTHONPATH:+:$PYTHONPATH}"  # seedstats.py
build=${1:-build}
jobs=${2:-1}
seeds=${RK_SEEDS:-1-5}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "eval-sharing: JOBS=$jobs: must be a positive integer" >&2; exit 2; }
rubick="$here/$build/src/cli/rubick"
shared=${RK_SHARED_DIR:-$here/../shared}
[ -x "$rubick" ] || { echo "eval-sharing: $rubick not built (meson setup $build && ninja -C $build)" >&2; exit 1; }
policies=sjf-bsbf,sjf-ffs,tiresias,srtf,sjf
rubicks='rubick,rubick:sharing=on'

run_case() { # label trace cluster
	local label=$1 trace=$2 cluster=$3 list=(0) s
	if ! cmp -s <("$rubick" trace "$trace" --workload-seed 1 --native 2>/dev/null) \
		<("$rubick" trace "$trace" --workload-seed 2 --native 2>/dev/null); then
		if [[ "$seeds" =~ ^([0-9]+)-([0-9]+)$ ]]; then
			mapfile -t list < <(seq "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}")
		else
			list=("$seeds")
		fi
	fi
	echo
	echo "### $label — \`--cluster $cluster --sharing on --oracle model\`"
	echo
	[ "${list[*]}" = 0 ] || { echo "Seeded workload: mean ± 95% half-width over workload seeds $seeds; guarantees: seed ${list[0]}."; echo; }
	echo "| policy | avg JCT (h) | median JCT (h) | makespan (h) | avg JCT vs sjf-bsbf | guarantees missed | guaranteed preempted |"
	echo "|---|---|---|---|---|---|---|"
	# Three runs per seed, one JSON document per line: the policies, sjf with
	# placement=spread, the rubicks.
	for s in "${list[@]}"; do
		"$rubick" sim --trace "$trace" --cluster "$cluster" --policy "$policies" --oracle model \
			--sharing on --no-timing --skip-bad --seed "$s" --json 2>/dev/null
		echo
		"$rubick" sim --trace "$trace" --cluster "$cluster" --policy sjf --oracle model \
			--policy-options placement=spread --sharing on --no-timing --skip-bad --seed "$s" --json 2>/dev/null
		echo
		"$rubick" sim --trace "$trace" --cluster "$cluster" --policy "$rubicks" --oracle model \
			--sharing on --no-timing --skip-bad --seed "$s" --json 2>/dev/null
		echo
	done | python3 -c '
import json, math, sys
from seedstats import fig, stat  # scripts/seedstats.py: the statistics rubick reports print
docs = [json.loads(l) for l in sys.stdin if l.strip()]
per, first = {}, {}  # policy -> figure -> values in seed order; policy -> first seed result
for i, d in enumerate(docs):
    for r in d["results"]:
        p = r["policy"]
        if i % 3 == 1:
            p = "sjf placement=spread"
        p = p.replace("[", " ").replace("]", "").replace(",", " ")
        f = per.setdefault(p, {})
        first.setdefault(p, r)
        for k in ("avg_jct_s", "median_jct_s", "makespan_s"):
            f.setdefault(k, []).append(r[k])
ref = per["sjf-bsbf"]["avg_jct_s"]
for p, f in per.items():
    r = first[p]
    h = lambda k: fig([x / 3600 for x in f[k]], "%.1f")
    vs = fig([(x - y) / y * 100 for x, y in zip(f["avg_jct_s"], ref)], "%+.1f%%", "%.1f%%")
    print("| %s | %s | %s | %s | %s | %d/%d | %d/%d |" % (p, h("avg_jct_s"), h("median_jct_s"), h("makespan_s"),
        vs, r["sla_violations"], r["guaranteed"], r["sla_preempted"], r["guaranteed"]))
'
}

# Each case into its own file, at most $jobs at once, printed in order.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
n_case=0
case_bg() { # as run_case
	n_case=$((n_case + 1))
	run_case "$@" >"$out/$(printf %03d $n_case)" &
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
}

case_bg "Gavel Philly VC 6214e9 (2,000 jobs)" "$shared/traces/gavel/msr/seed0/6214e9.trace" "8x8:v100"
case_bg "Gavel Philly VC 0e4a51 (1,181 jobs)" "$shared/traces/gavel/msr/seed0/0e4a51.trace" "8x8:v100"
case_bg "Muri trace3 (992 jobs)" "$shared/traces/muri/trace-data/trace3.csv" "8x8:v100"
case_bg "Muri trace3 (992 jobs), A800 80 GiB" "$shared/traces/muri/trace-data/trace3.csv" "4x8"
for c in 8x8:v100 4x8; do
	case_bg "Held out: Muri trace1 (1,494 jobs)" "$shared/traces/muri/trace-data/trace1.csv" "$c"
	case_bg "Held out: Muri trace4 (2,638 jobs)" "$shared/traces/muri/trace-data/trace4.csv" "$c"
	case_bg "Held out: Gavel Philly VC 103959 (986 jobs)" "$shared/traces/gavel/msr/seed0/103959.trace" "$c"
	case_bg "Held out: Gavel Philly VC 11cb48 (2,000 jobs)" "$shared/traces/gavel/msr/seed0/11cb48.trace" "$c"
done
for p in $(jobs -rp); do wait "$p"; done # a failed case fails the script (set -e)
cat "$out"/*
