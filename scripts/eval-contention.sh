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
#   usage: scripts/eval-contention.sh [BUILD_DIR]   (default build)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
rubick="$here/$build/src/cli/rubick"
shared=${RK_SHARED_DIR:-$here/../shared}
[ -x "$rubick" ] || { echo "eval-contention: $rubick not built (meson setup $build && ninja -C $build)" >&2; exit 1; }
policies=sjf-bco,sjf-ff,sjf-bf,sjf-random,rubick,rubick:placement=contention

run_case() { # label trace [nodes, default 8x8]
	local label=$1 trace=$2 nodes=${3:-8x8}
	echo
	echo "### $label — \`--cluster $nodes,net=B --contention on --oracle model\`"
	echo
	echo "| NIC | policy | makespan (h) | avg JCT (h) | makespan vs sjf-bco | avg JCT vs sjf-bco |"
	echo "|---|---|---|---|---|---|"
	for nic in "100 12.5" "25 3.125" "10 1.25"; do
		set -- $nic
		"$rubick" sim --trace "$trace" --cluster "$nodes,net=$2" --policy "$policies" --oracle model \
			--contention on --no-timing --skip-bad 2>/dev/null |
			awk -v nic="$1 Gb/s" '$1 ~ /^(sjf-(bco|ff|bf|random)|rubick(\[.*\])?)$/ { n++; p[n]=$1; a[n]=$2; k[n]=$5;
				if (p[n] ~ /^rubick\[/) { sub(/^rubick\[/, "rubick ", p[n]); sub(/\]$/, "", p[n]) }
				if ($1 == "sjf-bco") { ra=$2; rk=$5 } }
			     END { for (i=1; i<=n; i++)
				printf "| %s | %s | %.1f | %.1f | %+.1f%% | %+.1f%% |\n", nic, p[i], k[i]/3600,
					a[i]/3600, (k[i]-rk)/rk*100, (a[i]-ra)/ra*100 }'
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
	local label=$1 trace=$2 cluster=$3
	echo
	echo "### $label — \`--cluster $cluster --sharing on --contention on --oracle model\`"
	echo
	echo "| policy | avg JCT (h) | makespan (h) | avg JCT vs sjf-bsbf | avg JCT vs sjf-bco | guarantees missed | guaranteed preempted |"
	echo "|---|---|---|---|---|---|---|"
	"$rubick" sim --trace "$trace" --cluster "$cluster" --oracle model --sharing on --contention on \
		--policy 'sjf-bsbf,sjf-bco,sjf,rubick,rubick:sharing=on,rubick:placement=contention,rubick[sharing=on,placement=contention]' \
		--no-timing --skip-bad 2>/dev/null |
		awk '$1 ~ /^(sjf|sjf-bsbf|sjf-bco|rubick(\[.*\])?)$/ { n++; p[n]=$1; a[n]=$2; k[n]=$5; v[n]=$12; q[n]=$14;
			if (p[n] ~ /^rubick\[/) { sub(/^rubick\[/, "rubick ", p[n]); sub(/\]$/, "", p[n]); gsub(/,/, " ", p[n]) }
			if ($1 == "sjf-bsbf") rs=$2; if ($1 == "sjf-bco") rc=$2 }
		     END { for (i=1; i<=n; i++)
			printf "| %s | %.1f | %.1f | %+.1f%% | %+.1f%% | %s | %s |\n", p[i], a[i]/3600, k[i]/3600,
				(a[i]-rs)/rs*100, (a[i]-rc)/rc*100, v[i], q[i] }'
}

echo
echo "## Both physics: GPU sharing and NIC contention at 25 Gb/s"
# 8x8 A800 (light: jobs run faster than their V100 trace lengths) and nodes
# of 6 V100s (loaded, and multi-node jobs split: both options have choices).
for c in 8x8,net=3.125 11x6:v100,net=3.125; do
	both_case "Muri trace3 (992 jobs)" "$shared/traces/muri/trace-data/trace3.csv" "$c"
	both_case "Muri testbed trace (400 jobs, 1-32 GPUs)" "$shared/traces/muri/testbed/cluster_trace.csv" "$c"
done
