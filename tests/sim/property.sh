#!/usr/bin/env bash
# Property check over every registered policy and a few real traces: each run in check
# mode (no node over-allocated, every job in exactly one state, time monotone, global
# batch unchanged) must succeed, and two runs with the same seed must print the same bytes.
# A policy whose answer depends on wall-clock time (e.g. a MIP solver's time limit) fails
# the byte-identity check under load: bound such searches by iterations or nodes instead.
# usage: property.sh RUBICK   (traces from $RK_SHARED_DIR/traces and the golden cases)
set -euo pipefail
rubick=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
shared=${RK_SHARED_DIR:-$here/../../../shared}
policies=$("$rubick" sim --help | sed -n '/^policies:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
[ -n "$policies" ] || { echo "no policies listed by rubick sim --help" >&2; exit 1; }
# trace|cluster|extra flags
cases=(
	"$here/golden/fifo_srtf/trace.csv|2x2|--oracle measured=$here/golden/fifo_srtf/oracle"
	"$shared/traces/rubick/workloads/naive.csv|1x8:a800,cpus=96,mem=1600G|--skip-bad"
	"$shared/traces/rubick/workloads/workload-base.csv|4x8:a800,cpus=96,mem=1600G|--skip-bad --restart-cost 100,llama30=600"
	"$shared/traces/rubick/workloads/workload-mt.csv|8x8:a800,cpus=96,mem=1600G|--interval 300"
	"$shared/traces/muri/trace-data/trace1.csv|8x8|--skip-bad --horizon 2000000"
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for c in "${cases[@]}"; do
	IFS='|' read -r trace cluster extra <<<"$c"
	[ -f "$trace" ] || { echo "missing trace $trace" >&2; status=1; continue; }
	for p in $policies; do
		# shellcheck disable=SC2086
		for k in 1 2; do
			if ! "$rubick" sim --trace "$trace" --cluster "$cluster" --policy "$p" --seed 7 \
				--check --json --no-timing $extra >"$tmp/$k.json" 2>"$tmp/$k.err"; then
				echo "FAIL $p on $(basename "$trace") ($cluster): $(tail -1 "$tmp/$k.err")" >&2
				status=1
				continue 2
			fi
		done
		cmp -s "$tmp/1.json" "$tmp/2.json" ||
			{ echo "FAIL $p on $(basename "$trace"): same seed, different output" >&2; status=1; }
	done
done
exit $status
