#!/usr/bin/env bash
# Issue 6 evaluation, contention-aware placement: makespan and average JCT of
# sjf-bco vs sjf-ff / sjf-bf / sjf-random (same smallest-job-first order,
# preemption-free) with --contention on, on Muri's Philly-derived multi-GPU
# traces on 8x8 GPUs, and how the gap moves as the per-server NIC shrinks
# from 100 to 25 to 10 Gb/s (12.5, 3.125, 1.25 GB/s; the oracle's NIC follows).
# Rubick composed with contention-aware placement (issue 15): rubick and
# rubick:placement=contention (SJF-BCO's node choice, rk_contention_choose,
# for jobs on several nodes) in every case; then both physics at once
# (--sharing on --contention on, 25 Gb/s) with rubick:sharing=on and both
# options against sjf-bsbf, sjf-bco and sjf.
# A trace with a seeded part (its native form differs between workload seeds 1
# and 2: the zoo model mapping of Muri's traces) runs over RK_SEEDS (default 1-5,
# `rubick sim --seeds`, workload and policy seeds): makespan and average JCT are
# the mean over the seeds ± the half-width of their 95% Student t interval, the
# "vs" columns the mean over the seeds of each seed's difference to the reference
# policy on that seed (paired) ± its half-width, and the guarantee columns seed
# 1's (the first of RK_SEEDS). `rubick report` is not used: its x (load, arrival
# rate, GPUs) cannot tell the NIC sweep's runs apart.
# Needs python3 (reads rubick sim --json).
#   usage: scripts/eval-contention.sh [BUILD_DIR]   (default build)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$here/scripts${PYTHONPATH:+:$PYTHONPATH}"  # seedstats.py
build=${1:-build}
rubick="$here/$build/src/cli/rubick"
shared=${RK_SHARED_DIR:-$here/../shared}
seeds=${RK_SEEDS:-1-5}
[ -x "$rubick" ] || { echo "eval-contention: $rubick not built (meson setup $build && ninja -C $build)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "eval-contention: needs python3" >&2; exit 1; }
policies=sjf-bco,sjf-ff,sjf-bf,sjf-random,rubick,rubick:placement=contention

# Rows of one run's --json (stdin): ROW=nic prints the NIC table's rows,
# ROW=both the both-physics table's. LABEL is the NIC column.
rows() {
	python3 -c '
import json, math, os, sys
from seedstats import fig, stat  # scripts/seedstats.py: the statistics rubick reports print
def name(p):  # rubick[a=b,c=d] -> rubick a=b c=d
    return p.replace("[", " ").replace("]", "").replace(",", " ")
d = json.load(sys.stdin)
vals = {}
for r in d["results"]:
    s = r.get("seeds")
    vals[r["policy"]] = {k: (s[k]["values"] if s else [r[k]]) for k in ("avg_jct_s", "makespan_s")}
def vs(p, ref, k):  # each seed against the reference on the same seed, in %
    a, b = vals[p][k], vals[ref][k]
    return fig([(x - y) / y * 100 for x, y in zip(a, b)], "%+.1f%%", "%.1f%%")
hours = lambda p, k: fig([x / 3600 for x in vals[p][k]], "%.1f")
for r in d["results"]:
    p = r["policy"]
    if os.environ["ROW"] == "nic":
        print("| %s | %s | %s | %s | %s | %s |" % (os.environ["LABEL"], name(p), hours(p, "makespan_s"),
            hours(p, "avg_jct_s"), vs(p, "sjf-bco", "makespan_s"), vs(p, "sjf-bco", "avg_jct_s")))
    else:
        print("| %s | %s | %s | %s | %s | %d/%d | %d/%d |" % (name(p), hours(p, "avg_jct_s"),
            hours(p, "makespan_s"), vs(p, "sjf-bsbf", "avg_jct_s"), vs(p, "sjf-bco", "avg_jct_s"),
            r["sla_violations"], r["guaranteed"], r["sla_preempted"], r["guaranteed"]))
'
}

# --seeds RK_SEEDS for a trace whose native form depends on the workload seed.
seeded_args() { # trace
	if ! cmp -s <("$rubick" trace "$1" --workload-seed 1 --native 2>/dev/null) \
		<("$rubick" trace "$1" --workload-seed 2 --native 2>/dev/null); then
		echo "--seeds $seeds"
	fi
}

seed_note() { # seeded args
	[ -z "$1" ] || { echo "Seeded workload: mean ± 95% half-width over workload seeds $seeds${2:+; guarantees: seed ${seeds%%-*}}."; echo; }
}

run_case() { # label trace [nodes, default 8x8]
	local label=$1 trace=$2 nodes=${3:-8x8} sa
	sa=$(seeded_args "$trace")
	echo
	echo "### $label — \`--cluster $nodes,net=B --contention on --oracle model\`"
	echo
	seed_note "$sa"
	echo "| NIC | policy | makespan (h) | avg JCT (h) | makespan vs sjf-bco | avg JCT vs sjf-bco |"
	echo "|---|---|---|---|---|---|"
	for nic in "100 12.5" "25 3.125" "10 1.25"; do
		set -- $nic
		# shellcheck disable=SC2086
		"$rubick" sim --trace "$trace" --cluster "$nodes,net=$2" --policy "$policies" --oracle model \
			--contention on --no-timing --skip-bad --json $sa 2>/dev/null |
			ROW=nic LABEL="$1 Gb/s" rows
	done
}
run_case "Muri trace3 (992 jobs, arrivals over ~2,268 h)" "$shared/traces/muri/trace-data/trace3.csv"
run_case "Muri trace3_pr (the same jobs all queued at 0: makespan)" "$shared/traces/muri/trace-data/trace3_pr.csv"
run_case "Muri testbed trace (400 jobs, 1-32 GPUs)" "$shared/traces/muri/testbed/cluster_trace.csv"
# Every multi-node job of Muri's traces asks for 16 or 32 GPUs, whole 8-GPU
# nodes, so on 8x8 no placement has a choice of partly used nodes. Nodes of
# 6 GPUs (66 GPUs in all) split them (8 = 6 + 2, 16 = 6 + 6 + 4): where
# contention-aware node choice can matter.
run_case "Muri testbed trace on nodes of 6 GPUs" "$shared/traces/muri/testbed/cluster_trace.csv" 11x6
run_case "Muri trace3 on nodes of 6 GPUs" "$shared/traces/muri/trace-data/trace3.csv" 11x6

both_case() { # label trace cluster
	local label=$1 trace=$2 cluster=$3 sa
	sa=$(seeded_args "$trace")
	echo
	echo "### $label — \`--cluster $cluster --sharing on --contention on --oracle model\`"
	echo
	seed_note "$sa" guarantees
	echo "| policy | avg JCT (h) | makespan (h) | avg JCT vs sjf-bsbf | avg JCT vs sjf-bco | guarantees missed | guaranteed preempted |"
	echo "|---|---|---|---|---|---|---|"
	# shellcheck disable=SC2086
	"$rubick" sim --trace "$trace" --cluster "$cluster" --oracle model --sharing on --contention on \
		--policy 'sjf-bsbf,sjf-bco,sjf,rubick,rubick:sharing=on,rubick:placement=contention,rubick[sharing=on,placement=contention]' \
		--no-timing --skip-bad --json $sa 2>/dev/null | ROW=both rows
}

echo
echo "## Both physics: GPU sharing and NIC contention at 25 Gb/s"
# 8x8 A800 (light: jobs run faster than their V100 trace lengths) and nodes
# of 6 V100s (loaded, and multi-node jobs split: both options have choices).
for c in 8x8,net=3.125 11x6:v100,net=3.125; do
	both_case "Muri trace3 (992 jobs)" "$shared/traces/muri/trace-data/trace3.csv" "$c"
	both_case "Muri testbed trace (400 jobs, 1-32 GPUs)" "$shared/traces/muri/testbed/cluster_trace.csv" "$c"
done
