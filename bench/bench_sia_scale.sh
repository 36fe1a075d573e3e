#!/bin/bash
# bench_sia_scale.sh BUILD [SHARED_DIR] — Sia at scale (issue 15, "Speed").
#
# CPU seconds (user + sys of `rubick sim`; a loaded machine inflates them
# little) of the sia policy, with budgets:
#   - Pollux's philly.csv, 82,247 jobs, on 256x8 GPUs           budget 60 s
#   - Gavel's contended VC trace msr/seed0/0e4a51 on 8x8 (its
#     own throughputs, --throughputs auto)                      budget 30 s
#   - the longest round (bench_rounds, thread CPU of each schedule call) on
#     all of philly.csv on 256x8 = 2,048 GPUs                   budget 1 s
# then how the cost grows with jobs (the first 1k, 5k, 20k and all jobs of
# philly.csv by submit time, 256x8) and with the cluster (all of philly.csv
# on 64x8, 128x8, 256x8), each with its rounds' mean and max. The load
# average is printed with every row. A run is stopped after
# BENCH_SIA_TIMEOUT x its budget of wall time (default 10: the shared
# development VM runs at load ~20); BENCH_SIA_QUICK=1 skips the growth tables.
# BENCH_POLICIES (default sia) names other policies to hold to the same
# budgets, in turn (bench_gavel_scale.sh does so for Gavel's). Exit status 1
# if a budget is missed. Not a test: speed lives here, with budgets (docs:
# bench/README.md, "bench_sia_scale.sh").
set -u
build=${1:?usage: bench_sia_scale.sh BUILD [SHARED_DIR]}
shared=${2:-${RK_SHARED_DIR:-$(dirname "$0")/../../shared}}
rubick=$build/src/cli/rubick
rounds=$build/bench/bench_rounds
philly=$shared/traces/pollux-osdi21/philly.csv
gavel=$shared/traces/gavel/msr/seed0/0e4a51.trace
for f in "$rubick" "$rounds" "$philly" "$gavel"; do
	[ -e "$f" ] || { echo "bench_sia_scale: $f: not found" >&2; exit 2; }
done
factor=${BENCH_SIA_TIMEOUT:-10}
policies=${BENCH_POLICIES:-sia}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

load() { cut -d' ' -f1 /proc/loadavg; }

# sim POLICY TRACE CLUSTER LIMIT_S -> "cpu_s status" (status: done:COMPLETED, stopped, failed:...)
sim() {
	local policy=$1 trace=$2 cluster=$3 limit=$4 rc
	local TIMEFORMAT='%U %S'
	{ time timeout "$limit" "$rubick" sim --trace "$trace" --cluster "$cluster" \
		--policy "$policy" --no-timing >"$tmp/out" 2>"$tmp/err"; } 2>"$tmp/time"
	rc=$?
	read -r u s <"$tmp/time"
	local cpu
	cpu=$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u + s}')
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "$cpu stopped"
	elif [ "$rc" -ne 0 ]; then
		echo "$cpu failed:$(head -c 200 "$tmp/err" | tr '\n' ' ')"
	else
		echo "$cpu done:$(awk -v p="$policy" '$1 == p {print $10}' "$tmp/out")"
	fi
}

# round_stats POLICY TRACE CLUSTER LIMIT_S -> "rounds mean_ms max_ms" (or "- - stopped")
round_stats() {
	timeout "$4" "$rounds" "$2" "$3" "$1" 0 1000000 >"$tmp/rounds" 2>&1 ||
		{ [ $? -ge 124 ] && { echo "- - stopped"; return; }; }
	sed -n 's/.* \([0-9]*\) rounds, policy [0-9]* ms, mean \([0-9.]*\) p99 [0-9.]* max \([0-9.]*\) ms.*/\1 \2 \3/p' \
		"$tmp/rounds"
}

over() { awk -v c="$1" -v b="$2" 'BEGIN{exit !(c > b)}'; }

missed=0
echo "## Budgets"
echo
echo "| policy | case | cpu s | budget | completed | load avg |"
echo "|---|---|---:|---|---|---:|"
for p in $policies; do
	l=$(load)
	r=$(sim "$p" "$philly" 256x8 $((60 * factor)))
	v=ok
	{ [ "${r#* }" = "${r#* done}" ] || over "${r%% *}" 60; } && { v=MISSED; missed=1; }
	echo "| $p | philly.csv (82,247 jobs), 256x8 | ${r%% *} | 60 s: $v | ${r#*:} | $l |"
	l=$(load)
	r=$(sim "$p" "$gavel" 8x8 $((30 * factor)))
	v=ok
	{ [ "${r#* }" = "${r#* done}" ] || over "${r%% *}" 30; } && { v=MISSED; missed=1; }
	echo "| $p | Gavel VC 0e4a51 (1,181 jobs), 8x8 | ${r%% *} | 30 s: $v | ${r#*:} | $l |"
	l=$(load)
	read -r n mean max <<<"$(round_stats "$p" "$philly" 256x8 $((60 * factor)))"
	v=ok
	{ [ "$max" = stopped ] || [ -z "$max" ] || over "$max" 1000; } && { v=MISSED; missed=1; }
	echo "| $p | longest round, philly.csv on 256x8 ($n rounds, mean $mean ms) | max $max ms | 1 s: $v | | $l |"
done
echo

if [ "${BENCH_SIA_QUICK:-0}" != 1 ]; then
	# The first N jobs by submit time (philly.csv is not sorted; ties keep file order).
	for n in 1000 5000 20000; do
		{ head -1 "$philly"; tail -n +2 "$philly" | sort -s -t, -k1,1 | head -"$n"; } >"$tmp/philly-$n.csv"
	done
	limit=$((60 * factor))
	echo "## Growth (philly.csv): cpu s of rubick sim; rounds, mean / max ms of bench_rounds"
	echo
	echo "| policy | jobs | cluster | cpu s | rounds | mean ms | max ms | load avg |"
	echo "|---|---:|---|---:|---:|---:|---:|---:|"
	for p in $policies; do
		for t in 1000 5000 20000 all; do
			f=$tmp/philly-$t.csv
			[ "$t" = all ] && f=$philly
			l=$(load)
			r=$(sim "$p" "$f" 256x8 $limit)
			read -r n mean max <<<"$(round_stats "$p" "$f" 256x8 $limit)"
			echo "| $p | $t | 256x8 | ${r%% *}$([ "${r#* }" = stopped ] && echo ' (stopped)') | $n | $mean | $max | $l |"
		done
		for c in 64x8 128x8; do
			l=$(load)
			r=$(sim "$p" "$philly" $c $limit)
			read -r n mean max <<<"$(round_stats "$p" "$philly" $c $limit)"
			echo "| $p | all | $c | ${r%% *}$([ "${r#* }" = stopped ] && echo ' (stopped)') | $n | $mean | $max | $l |"
		done
	done
	echo
fi
exit $missed
