#!/usr/bin/env bash
# Baselines place as their authors' simulators do (docs/policies.md, "Placement"):
# FIFO, SJF, SRTF, Tiresias and AntMan default to yarn's consolidated placement
# (a job that fits one node waits for one node); placement=spread splits it
# over the nodes with room; Synergy defaults to its least-free rule; unknown
# values are rejected with the list.
# On 2x4 GPUs, a and b (3 GPUs each) leave one GPU per node; c (2 GPUs,
# submitted at 1 s) either waits for a to finish or starts at once on 1+1.
# usage: placement.sh RUBICK
set -euo pipefail
rubick=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/t.csv" <<'CSV'
name,submit_s,model,gpus,plan,iters
a,0,gpt2,3,ga,100
b,0,gpt2,3,ga,300
c,1,gpt2,2,ga,10
CSV
status=0
# first_start_s of job c and the finish of a, from jobs.csv (columns by header name).
starts() { # POLICY [OPTIONS]
	local out="$tmp/out_$1_${2:-none}"
	"$rubick" sim --trace "$tmp/t.csv" --cluster 2x4 --policy "$1" ${2:+--policy-options "$2"} \
		--no-timing --out "$out" >/dev/null 2>"$tmp/err"
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["name"] == "a" { fa = $c["finish_s"] } $c["name"] == "c" { sc = $c["first_start_s"] }
		END { print sc, fa }' "$out/jobs.csv"
}
expect() { # WHAT WANT POLICY [OPTIONS]
	local what=$1 want=$2
	shift 2
	read -r sc fa < <(starts "$@")
	local got=split
	[ "$sc" = "1.000" ] || got=waited
	if [ "$got" = waited ] && [ "$sc" != "$fa" ]; then
		got="started at $sc, not at a's finish $fa"
	fi
	if [ "$got" != "$want" ]; then
		echo "FAIL $what: c $got, want $want" >&2
		status=1
	else
		echo "ok $what: c $got"
	fi
}
for p in fifo sjf srtf tiresias antman; do
	expect "$p default" waited "$p"
	expect "$p placement=consolidated" waited "$p" placement=consolidated
	expect "$p placement=spread" split "$p" placement=spread
done
expect "tiresias queues + spread" split tiresias queues_gpu_s=3250:7200,placement=spread
for p in synergy-fifo synergy-srtf; do
	expect "$p default (least-free)" split "$p"
	expect "$p placement=consolidated" waited "$p" placement=consolidated
done
for p in fifo tiresias antman synergy-fifo; do
	if "$rubick" sim --trace "$tmp/t.csv" --cluster 2x4 --policy "$p" \
		--policy-options placement=yarn >/dev/null 2>"$tmp/err"; then
		echo "FAIL $p: placement=yarn accepted" >&2
		status=1
	elif ! grep -q "placement=yarn: unknown placement (known: consolidated, spread, least-free)" "$tmp/err"; then
		echo "FAIL $p: placement=yarn error was: $(cat "$tmp/err")" >&2
		status=1
	fi
done
if "$rubick" sim --trace "$tmp/t.csv" --cluster 2x4 --policy tiresias \
	--policy-options queues_gpu_s=7200:3250 >/dev/null 2>"$tmp/err" ||
	! grep -q "ascending GPU-second splits" "$tmp/err"; then
	echo "FAIL tiresias: descending queues_gpu_s not rejected: $(cat "$tmp/err")" >&2
	status=1
fi
# Every documented option error, with the message it must give.
while IFS='|' read -r p o msg; do
	if "$rubick" sim --trace "$tmp/t.csv" --cluster 2x4 --policy "$p" --policy-options "$o" \
		>/dev/null 2>"$tmp/err" || ! grep -qF "$msg" "$tmp/err"; then
		echo "FAIL $p $o: want '$msg', got: $(cat "$tmp/err")" >&2
		status=1
	fi
done <<'ERRORS'
srtf|by=size|policy srtf: by=size: must be 'time' or 'gpu-time'
srtf|repack=yes|policy srtf: repack=yes: must be 'on' or 'off'
srtf|order=fifo|policy srtf: unknown option 'order' (known: placement, by, repack)
fifo|by=gpu-time|policy fifo: unknown option 'by' (known: placement)
sjf|placement|policy sjf: option 'placement' is not key=value
tiresias|queue_order=lifo|policy tiresias: queue_order=lifo: must be 'arrival' or 'running-first'
tiresias|queues_gpu_s=|expected 1 to 7 ascending GPU-second splits
tiresias|threshold_gpu_h=-1|expected threshold_gpu_h=H with H > 0 GPU-hours
antman|placement=packed|policy antman: placement=packed: unknown placement (known: consolidated, spread, least-free)
synergy-srtf|cpus=2|policy synergy-srtf: unknown option 'cpus' (known: placement)
ERRORS
# Every non-default variant keeps the simulator's invariants (--check) on a real trace
# and is deterministic (the defaults are covered by property.sh).
shared=${RK_SHARED_DIR:-$(cd "$(dirname "$0")" && pwd)/../../../shared}
trace=$shared/traces/muri/trace-data/trace1.csv
if [ -f "$trace" ]; then
	for v in "fifo placement=spread" "sjf placement=least-free" "srtf placement=spread,by=gpu-time" "srtf repack=on" \
		"tiresias queues_gpu_s=3250:7200,queue_order=running-first" \
		"tiresias placement=least-free,queue_order=running-first" "antman placement=spread" \
		"synergy-srtf placement=consolidated"; do
		read -r p o <<<"$v"
		for k in 1 2; do
			"$rubick" sim --trace "$trace" --cluster 8x8 --policy "$p" --policy-options "$o" \
				--skip-bad --horizon 2000000 --check --json --no-timing >"$tmp/v$k.json" 2>"$tmp/err" ||
				{ echo "FAIL $p $o on trace1: $(tail -1 "$tmp/err")" >&2; status=1; }
		done
		cmp -s "$tmp/v1.json" "$tmp/v2.json" || { echo "FAIL $p $o: not deterministic" >&2; status=1; }
	done
else
	echo "missing trace $trace" >&2
	status=1
fi
exit $status
