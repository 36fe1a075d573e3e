#!/usr/bin/env bash
# Issue 4 evaluation: regenerates the comparison table of rubick, its two
# ablations and the baselines it must beat (sia, synergy, antman, fifo,
# tiresias) on the Rubick traces (base, best-plan, multi-tenant) and on
# other shared traces (Sia's Philly workloads 1 and 2),
# 8 nodes x 8 A800 (96 CPUs, 1600 GB, NVLink 400 GB/s, 100 GB/s network),
# 60 s rounds, 260 s restart cost, the measured oracle.
#   usage: scripts/eval-rubick.sh [BUILD_DIR] [TRACE...]   (default build)
# Prints one markdown table per trace and a ratio line: best of
# sia/synergy/antman average JCT over rubick's.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
shift || true
rubick="$here/$build/src/cli/rubick"
shared=${RK_SHARED_DIR:-$here/../shared}
[ -x "$rubick" ] || { echo "eval-rubick: $rubick not built (meson setup $build && ninja -C $build)" >&2; exit 1; }
cluster="8x8:a800,cpus=96,mem=1600G,nvlink=400,net=100"
policies=rubick,rubick-plan-only,rubick-res-only,sia,synergy-fifo,synergy-srtf,antman,fifo,tiresias
traces=("$@")
if [ "${#traces[@]}" -eq 0 ]; then
	traces=(
		"$shared/traces/rubick/workloads/workload-base.csv"
		"$shared/traces/rubick/workloads/workload-bp.csv"
		"$shared/traces/rubick/workloads/workload-mt.csv"
		"$shared/traces/sia-artifacts/workloads/philly/workload-1.csv"
		"$shared/traces/sia-artifacts/workloads/philly/workload-2.csv"
	)
fi

for trace in "${traces[@]}"; do
	[ -f "$trace" ] || { echo "eval-rubick: missing trace $trace" >&2; exit 1; }
	echo
	echo "### $(basename "$(dirname "$trace")")/$(basename "$trace")"
	echo
	echo "| policy | avg JCT (s) | p99 JCT (s) | makespan (s) | reconfigs/job | GPU util | completed |"
	echo "|---|---|---|---|---|---|---|"
	"$rubick" sim --trace "$trace" --cluster "$cluster" --policy "$policies" \
		--oracle "measured=$here/data/measured/rubick" --interval 60 --restart-cost 260 \
		--skip-bad --no-timing 2>/dev/null |
		awk 'NR > 2 && NF >= 11 {
			printf "| %s | %.0f | %.0f | %.0f | %.3f | %.3f | %s |\n", $1, $2, $4, $5, $9, $7, $10
			jct[$1] = $2
		}
		END {
			best = ""; for (p in jct) if (p ~ /^(sia|synergy-fifo|synergy-srtf|antman)$/ &&
				(best == "" || jct[p] < jct[best])) best = p
			if (best != "" && jct["rubick"] > 0)
				printf "\nbest baseline %s: %.0f s; rubick %.0f s; ratio %.2fx\n",
					best, jct[best], jct["rubick"], jct[best] / jct["rubick"]
		}'
done
