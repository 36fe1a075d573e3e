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
#   usage: scripts/eval-sharing.sh [BUILD_DIR [JOBS]]   (default build, 1)
# JOBS cases run at once (rubick's runs on the Gavel VCs take the longest);
# the tables come out in the same order whatever JOBS is.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
jobs=${2:-1}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "eval-sharing: JOBS=$jobs: must be a positive integer" >&2; exit 2; }
rubick="$here/$build/src/cli/rubick"
shared=${RK_SHARED_DIR:-$here/../shared}
[ -x "$rubick" ] || { echo "eval-sharing: $rubick not built (meson setup $build && ninja -C $build)" >&2; exit 1; }
policies=sjf-bsbf,sjf-ffs,tiresias,srtf,sjf
rubicks='rubick,rubick:sharing=on'

run_case() { # label trace cluster
	local label=$1 trace=$2 cluster=$3
	echo
	echo "### $label — \`--cluster $cluster --sharing on --oracle model\`"
	echo
	echo "| policy | avg JCT (h) | median JCT (h) | makespan (h) | avg JCT vs sjf-bsbf | guarantees missed | guaranteed preempted |"
	echo "|---|---|---|---|---|---|---|"
	{
		"$rubick" sim --trace "$trace" --cluster "$cluster" --policy "$policies" --oracle model \
			--sharing on --no-timing --skip-bad 2>/dev/null
		"$rubick" sim --trace "$trace" --cluster "$cluster" --policy sjf --oracle model \
			--policy-options placement=spread --sharing on --no-timing --skip-bad 2>/dev/null |
			awk '$1 == "sjf" { $1 = "sjf_placement=spread" } { print }'
		"$rubick" sim --trace "$trace" --cluster "$cluster" --policy "$rubicks" --oracle model \
			--sharing on --no-timing --skip-bad 2>/dev/null
	} |
		awk '$1 ~ /^(sjf|sjf-bsbf|sjf-ffs|tiresias|srtf|sjf_placement=spread|rubick(\[.*\])?)$/ { n++; p[n]=$1; a[n]=$2; m[n]=$3; k[n]=$5; v[n]=$12; q[n]=$14;
			if (p[n] == "sjf_placement=spread") p[n] = "sjf placement=spread";
			if (p[n] ~ /^rubick\[/) { sub(/^rubick\[/, "rubick ", p[n]); sub(/\]$/, "", p[n]); gsub(/,/, " ", p[n]) }
			if ($1 == "sjf-bsbf") ref=$2 }
		     END { for (i=1; i<=n; i++)
			printf "| %s | %.1f | %.1f | %.1f | %+.1f%% | %s | %s |\n", p[i], a[i]/3600, m[i]/3600, k[i]/3600,
				(a[i]-ref)/ref*100, v[i], q[i] }'
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
