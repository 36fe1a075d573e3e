#!/usr/bin/env bash
# Issue 6 evaluation, contention-aware placement: makespan and average JCT of
# sjf-bco vs sjf-ff / sjf-bf / sjf-random (same smallest-job-first order,
# preemption-free) with --contention on, on Muri's Philly-derived multi-GPU
# traces on 8x8 GPUs, and how the gap moves as the per-server NIC shrinks
# from 100 to 25 to 10 Gb/s (12.5, 3.125, 1.25 GB/s; the oracle's NIC follows).
#   usage: scripts/eval-contention.sh [BUILD_DIR]   (default build)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
rubick="$here/$build/src/cli/rubick"
shared=${RK_SHARED_DIR:-$here/../shared}
[ -x "$rubick" ] || { echo "eval-contention: $rubick not built (meson setup $build && ninja -C $build)" >&2; exit 1; }
policies=sjf-bco,sjf-ff,sjf-bf,sjf-random

run_case() { # label trace
	local label=$1 trace=$2
	echo
	echo "### $label — \`--cluster 8x8,net=B --contention on --oracle model\`"
	echo
	echo "| NIC | policy | makespan (h) | avg JCT (h) | makespan vs sjf-bco | avg JCT vs sjf-bco |"
	echo "|---|---|---|---|---|---|"
	for nic in "100 12.5" "25 3.125" "10 1.25"; do
		set -- $nic
		"$rubick" sim --trace "$trace" --cluster "8x8,net=$2" --policy "$policies" --oracle model \
			--contention on --no-timing --skip-bad 2>/dev/null |
			awk -v nic="$1 Gb/s" '$1 ~ /^sjf-(bco|ff|bf|random)$/ { n++; p[n]=$1; a[n]=$2; k[n]=$5;
				if ($1 == "sjf-bco") { ra=$2; rk=$5 } }
			     END { for (i=1; i<=n; i++)
				printf "| %s | %s | %.1f | %.1f | %+.1f%% | %+.1f%% |\n", nic, p[i], k[i]/3600,
					a[i]/3600, (k[i]-rk)/rk*100, (a[i]-ra)/ra*100 }'
	done
}

run_case "Muri trace3 (992 jobs, arrivals over ~2,268 h)" "$shared/traces/muri/trace-data/trace3.csv"
run_case "Muri trace3_pr (the same jobs all queued at 0: makespan)" "$shared/traces/muri/trace-data/trace3_pr.csv"
run_case "Muri testbed trace (400 jobs, 1-32 GPUs)" "$shared/traces/muri/testbed/cluster_trace.csv"
