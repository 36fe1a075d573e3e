#!/usr/bin/env bash
# GPU types are a modelled resource (docs/gpus.md, docs/oracle.md "GPU types"):
#  1. a uniform cluster's type matters: the same trace under FIFO is slower on
#     6x8:t4 than on 6x8:a800;
#  2. faster GPUs never make FIFO slower: along k80 -> p100 -> v100 -> a800 ->
#     h100 (every figure of the GPU table grows) average JCT and makespan never
#     grow, and replacing a cluster's 2080 Ti nodes by A100s never slows it
#     (it did before job lengths were fixed on the trace's own type:
#     13,195 -> 18,439 s);
#  3. an unknown type is rejected, with the list, by rubick sim --cluster,
#     --trace-gpu and rubickd --cluster.
# usage: gpu_types.sh RUBICK RUBICKD
set -euo pipefail
rubick=$(realpath "$1")
rubickd=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
shared=${RK_SHARED_DIR:-$here/../../../shared}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

# "avg_jct makespan completed" of FIFO on cluster $2 for trace $1
fifo() {
	"$rubick" sim --trace "$1" --cluster "$2" --policy fifo --skip-bad --no-timing --json \
		2>/dev/null | awk '
		{ while (match($0, /"(avg_jct_s|makespan_s|completed)":[0-9.e+-]+/)) {
			kv = substr($0, RSTART, RLENGTH); $0 = substr($0, RSTART + RLENGTH)
			split(kv, p, ":"); gsub(/"/, "", p[1]); v[p[1]] = p[2] } }
		END { printf "%.3f %.3f %d\n", v["avg_jct_s"], v["makespan_s"], v["completed"] }'
}

for trace in "$shared/traces/sia-artifacts/workloads/philly/workload-1.csv" \
	"$shared/traces/tiresias/60_job.csv"; do
	[ -f "$trace" ] || { fail "missing trace $trace"; continue; }
	name=$(basename "$trace")
	read -r t4_jct _ _ < <(fifo "$trace" 6x8:t4)
	read -r a800_jct _ _ < <(fifo "$trace" 6x8:a800)
	awk -v a="$t4_jct" -v b="$a800_jct" 'BEGIN { exit !(a > b) }' ||
		fail "$name: 6x8:t4 (avg JCT $t4_jct s) is not slower than 6x8:a800 ($a800_jct s)"
	prev="" prev_c=""
	for c in 6x8:k80 6x8:p100 6x8:v100 6x8:a800 6x8:h100; do
		read -r jct mk done < <(fifo "$trace" "$c")
		echo "$name $c: avg JCT $jct s, makespan $mk s, $done completed"
		if [ -n "$prev" ]; then
			awk -v j="$jct" -v m="$mk" -v pj="${prev% *}" -v pm="${prev#* }" \
				'BEGIN { exit !(j <= pj * (1 + 1e-9) && m <= pm * (1 + 1e-9)) }' ||
				fail "$name: $c is slower than $prev_c ($jct/$mk s vs $prev)"
		fi
		prev="$jct $mk" prev_c=$c
	done
	read -r slow_j slow_m _ < <(fifo "$trace" "2x8:a800+3x8:2080ti")
	read -r fast_j fast_m _ < <(fifo "$trace" "2x8:a800+3x8:a100")
	echo "$name 2080ti -> a100: avg JCT $slow_j -> $fast_j s, makespan $slow_m -> $fast_m s"
	awk -v a="$fast_j" -v b="$slow_j" -v c="$fast_m" -v d="$slow_m" \
		'BEGIN { exit !(a <= b * (1 + 1e-9) && c <= d * (1 + 1e-9)) }' ||
		fail "$name: replacing the 2080 Ti nodes by A100s made FIFO slower"
done

# 3. unknown types
trace="$here/golden/sjf/trace.csv"
if "$rubick" sim --trace "$trace" --cluster 8x8:foo --policy fifo >/dev/null 2>"$tmp/err"; then
	fail "rubick sim accepted --cluster 8x8:foo"
fi
grep -q "unknown GPU type 'foo' (known: a800, a100, .*t4, 2080ti" "$tmp/err" ||
	fail "rubick sim --cluster 8x8:foo: $(cat "$tmp/err")"
if "$rubick" sim --trace "$trace" --cluster 1x4 --policy fifo --trace-gpu foo >/dev/null \
	2>"$tmp/err"; then
	fail "rubick sim accepted --trace-gpu foo"
fi
grep -q "trace-gpu: unknown GPU type 'foo'" "$tmp/err" || fail "--trace-gpu foo: $(cat "$tmp/err")"
printf '0123456789abcdef0123\n' >"$tmp/token"
chmod 600 "$tmp/token"
rc=0
timeout 10 "$rubickd" --cluster 2x4:t4+1x8:fooo --token-file "$tmp/token" \
	--state-dir "$tmp/state" >/dev/null 2>"$tmp/err" || rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "rubickd accepted --cluster 2x4:t4+1x8:fooo (rc $rc)"
grep -q "unknown GPU type 'fooo' (known:" "$tmp/err" || fail "rubickd: $(cat "$tmp/err")"
exit $status
