#!/usr/bin/env bash
# Issue 5 evaluation, capacity loaning + elastic scaling (Aryl/Lyra,
# docs/aryl.md): a 15-day window of Pollux's philly.csv (2017-10-09 ..
# 2017-10-23, 28,193 jobs), half of them (seeded) elastic, on a training
# cluster of 64x8 GPUs plus an inference cluster of the same size whose load
# follows the built-in diurnal series (trough 30 %, peak 90 % of its servers,
# one-day period, 5 % noise), 10-minute reclaim deadline.
# Policies: aryl vs aryl-noloan (no loaning, no elastic scaling: the paper's
# baseline), plus rubick with loaning. Prints a markdown table (average
# queueing time, average JCT, usage over the 15 days, reclaim preemptions per
# reclaimed server) and the simulation's wall time per policy (budget 10 s).
#   usage: scripts/eval-aryl.sh [BUILD_DIR] [SEED]   (default build, 1)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
seed=${2:-1}
rubick="$here/$build/src/cli/rubick"
shared=${RK_SHARED_DIR:-$here/../shared}
[ -x "$rubick" ] || { echo "eval-aryl: $rubick not built (meson setup $build && ninja -C $build)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The window: timestamps are "YYYY-MM-DD hh:mm:ss", so string order is time order.
awk -F, 'NR == 1 || ($1 >= "2017-10-09" && $1 < "2017-10-24")' \
	"$shared/traces/pollux-osdi21/philly.csv" >"$tmp/window.csv"
cluster="64x8:v100+64x8:v100,pool=loaned"
load="diurnal:peak=0.9,trough=0.3,period=86400,noise=0.05,seed=$seed"
args=(--trace "$tmp/window.csv" --cluster "$cluster" --inference "$load"
	--reclaim-deadline 600 --elastic-share 0.5 --seed "$seed")
echo "jobs: $(($(wc -l <"$tmp/window.csv") - 1)), cluster $cluster, --inference $load, --reclaim-deadline 600, --elastic-share 0.5, seed $seed"
echo
echo "| policy | avg queueing (h) | avg JCT (h) | training usage (of training+lent) | cluster usage (training+inference) | reclaim preemptions / reclaimed server | sim wall (s) |"
echo "|---|---|---|---|---|---|---|"
for p in aryl aryl-noloan rubick; do
	"$rubick" sim "${args[@]}" --policy "$p" 2>/dev/null >"$tmp/$p.txt"
	awk -v p="$p" '
		$1 == p { jct = $2; queue = $6; wall = $11 }
		$1 == "loan" && $2 == p {
			for (i = 1; i <= NF; i++) {
				if ($i == "server),") per = substr($(i - 3), 2)
				if ($i == "training" && $(i + 1) == "usage") tu = $(i + 2)
				if ($i == "cluster" && $(i + 1) == "usage") cu = $(i + 2)
			}
		}
		END { printf "| %s | %.2f | %.2f | %s | %s | %s | %.1f |\n", p, queue / 3600, jct / 3600, tu, cu, per, wall }
	' "$tmp/$p.txt"
done
