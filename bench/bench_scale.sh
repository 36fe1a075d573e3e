#!/bin/bash
# bench_scale.sh BUILD [SHARED_DIR] — every policy at scale (issue 15, "Speed").
#
# CPU seconds (user + sys of `rubick sim`, so a loaded machine inflates them
# little) of every registered policy on
#   - Pollux's philly.csv, 82,247 jobs, on 256x8 GPUs     budget 60 s
#   - Gavel's contended VC trace msr/seed0/0e4a51 on 8x8  budget 30 s
# then how the cost grows with jobs (the first 1k, 5k, 20k and all jobs of
# philly.csv by submit time, 256x8) and with the cluster (all of philly.csv on
# 64x8, 128x8, 256x8) for BENCH_SCALE_GROWTH (default: fifo srtf rubick sia).
# The load average is printed with every row. A run is stopped after
# BENCH_SCALE_TIMEOUT x its budget (default 3); BENCH_SCALE_POLICIES overrides
# the policy list; BENCH_SCALE_QUICK=1 skips the growth tables,
# BENCH_SCALE_GROWTH_ONLY=1 the budget tables. sjf-bsbf and
# sjf-ffs run with --sharing on (they need it). Exit status 1 if a budget is
# missed. Not a test: speed lives here, with budgets (docs: bench/README.md).
set -u
build=${1:?usage: bench_scale.sh BUILD [SHARED_DIR]}
shared=${2:-${RK_SHARED_DIR:-$(dirname "$0")/../../shared}}
rubick=$build/src/cli/rubick
philly=$shared/traces/pollux-osdi21/philly.csv
gavel=$shared/traces/gavel/msr/seed0/0e4a51.trace
for f in "$rubick" "$philly" "$gavel"; do
	[ -e "$f" ] || { echo "bench_scale: $f: not found" >&2; exit 2; }
done
factor=${BENCH_SCALE_TIMEOUT:-3}
policies=${BENCH_SCALE_POLICIES:-$("$rubick" sim --help 2>&1 |
	awk '/^policies:/{p=1; next} p && /^$/{exit} p && /^  [a-z]/{print $1}')}
growth=${BENCH_SCALE_GROWTH:-fifo srtf rubick sia}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

load() { cut -d' ' -f1 /proc/loadavg; }

# run POLICY TRACE CLUSTER LIMIT_S -> "cpu_s status" on stdout
run() {
	local p=$1 trace=$2 cluster=$3 limit=$4 extra=() rc
	case $p in sjf-bsbf | sjf-ffs) extra=(--sharing on) ;; esac
	local TIMEFORMAT='%U %S'
	{ time timeout "$limit" "$rubick" sim --trace "$trace" --cluster "$cluster" --policy "$p" \
		--no-timing "${extra[@]}" >"$tmp/out" 2>"$tmp/err"; } 2>"$tmp/time"
	rc=$?
	read -r u s <"$tmp/time"
	local cpu
	cpu=$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u + s}')
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "$cpu stopped"
	elif [ "$rc" -ne 0 ]; then
		echo "$cpu failed:$(head -c 200 "$tmp/err" | tr '\n' ' ')"
	else
		echo "$cpu done:$(awk -v p="$p" '$1 == p {print $10}' "$tmp/out")"
	fi
}

missed=0
budget_table() {
	local label=$1 trace=$2 cluster=$3 budget=$4
	echo "## $label on $cluster, budget ${budget} s CPU (stopped at $((budget * factor)) s wall)"
	echo
	echo "| policy | cpu s | budget | completed | load avg |"
	echo "|---|---:|---|---|---:|"
	for p in $policies; do
		local l r cpu st verdict
		l=$(load)
		r=$(run "$p" "$trace" "$cluster" $((budget * factor)))
		cpu=${r%% *}
		st=${r#* }
		verdict=ok
		if [ "${st%%:*}" != done ] || awk -v c="$cpu" -v b="$budget" 'BEGIN{exit !(c > b)}'; then
			verdict=MISSED
			missed=1
		fi
		echo "| $p | $cpu | $budget s: $verdict | ${st#*:} | $l |"
	done
	echo
}

if [ "${BENCH_SCALE_GROWTH_ONLY:-0}" != 1 ]; then
	budget_table "philly.csv (82,247 jobs)" "$philly" 256x8 60
	budget_table "Gavel VC 0e4a51 (1,181 jobs)" "$gavel" 8x8 30
fi

if [ "${BENCH_SCALE_QUICK:-0}" != 1 ]; then
	# The first N jobs by submit time (philly.csv is not sorted; ties keep file order).
	for n in 1000 5000 20000; do
		{ head -1 "$philly"; tail -n +2 "$philly" | sort -s -t, -k1,1 | head -"$n"; } >"$tmp/philly-$n.csv"
	done
	limit=$((60 * factor))
	echo "## Growth with jobs (philly.csv, first N by submit time, 256x8): cpu s (load avg)"
	echo
	echo "| policy | 1,000 | 5,000 | 20,000 | 82,247 |"
	echo "|---|---:|---:|---:|---:|"
	for p in $growth; do
		row="| $p"
		for t in "$tmp/philly-1000.csv" "$tmp/philly-5000.csv" "$tmp/philly-20000.csv" "$philly"; do
			l=$(load)
			r=$(run "$p" "$t" 256x8 $limit)
			row="$row | ${r%% *}$([ "${r#* }" = stopped ] && echo ' (stopped)') ($l)"
		done
		echo "$row |"
	done
	echo
	echo "## Growth with the cluster (all of philly.csv): cpu s (load avg)"
	echo
	echo "| policy | 64x8 | 128x8 | 256x8 |"
	echo "|---|---:|---:|---:|"
	for p in $growth; do
		row="| $p"
		for c in 64x8 128x8 256x8; do
			l=$(load)
			r=$(run "$p" "$philly" $c $limit)
			row="$row | ${r%% *}$([ "${r#* }" = stopped ] && echo ' (stopped)') ($l)"
		done
		echo "$row |"
	done
	echo
fi
exit $missed
