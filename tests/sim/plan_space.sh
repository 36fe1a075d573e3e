#!/usr/bin/env bash
# Declared plan spaces in the simulator (docs/plans.md "Declared plan spaces"):
# T5-3B alone on one node of two 80 GB GPUs, where rubick's best plan is tensor
# parallel (`rubick plan --model t5_3b --placement 2`: tp=2 at 9.62 samples/s
# against 9.40 for dp=2 with ZeRO-1). Without a space rubick runs tp=2 (so the
# test can fail); with `space` tp=1 no plan in plans.csv has tp>1 and the job
# still takes both GPUs, data parallel; with tp=1,zero=0 neither tp nor ZeRO
# appears. Sia scales the requested plan only (it never chooses tp, pp or
# ZeRO), so it keeps to any space its request lies in: checked the same way.
# Every run is in check mode, which fails on a held plan outside its job's
# space. Last, a trace whose requested plan (an artifact plan, resolved on its
# placement) lies outside its own space is refused, naming the job.
# usage: plan_space.sh RUBICK   (about 1 s)
set -euo pipefail
rubick=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() {
	echo "plan_space: $*" >&2
	status=1
}
trace() { # FILE SPACE: two T5-3B jobs one after the other, each alone on the node
	printf 'name,submit_s,model,gpus,iters,space\nj1,0,t5_3b,1,20000,%s\nj2,20000,t5_3b,1,20000,%s\n' \
		"$2" "$2" >"$1"
}
# The plans of every start and reconfiguration of POLICY on TRACE: "GPUS PLAN" lines.
plans() { # TRACE POLICY
	local out="$tmp/out.$RANDOM"
	"$rubick" sim --trace "$1" --cluster 1x2:a800 --policy "$2" --oracle model --check \
		--no-timing --out "$out" >/dev/null 2>"$tmp/err" ||
		{ fail "$2 on $1: rubick sim failed: $(cat "$tmp/err")"; return 0; }
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ print $c["gpus"], $0 }' "$out/plans.csv"
}
count() { grep -c -- "$1" || true; }
trace "$tmp/all.csv" ""
trace "$tmp/tp1.csv" "tp=1"
trace "$tmp/tp1z0.csv" '"tp=1,zero=0"'

p=$(plans "$tmp/all.csv" rubick)
[ "$(count 'tp=2' <<<"$p")" -ge 1 ] || fail "rubick without a space ran no tp=2 plan: $p"
for pol in rubick 'rubick[guaranteed=reconfigure]' rubick-res-only sia; do
	p=$(plans "$tmp/tp1.csv" "$pol")
	[ -n "$p" ] || fail "$pol with tp=1: no plan ran"
	[ "$(count 'tp=[2-9]' <<<"$p")" -eq 0 ] || fail "$pol ran tp>1 inside space tp=1: $p"
	[ "$(count '^2 ' <<<"$p")" -ge 1 ] || fail "$pol with tp=1 never took both GPUs: $p"
	p=$(plans "$tmp/tp1z0.csv" "$pol")
	[ "$(count 'tp=[2-9]\|zero=[1-3]' <<<"$p")" -eq 0 ] ||
		fail "$pol ran tp or ZeRO inside space tp=1,zero=0: $p"
done

# A requested plan outside the job's own space is the trace's contradiction: refused.
printf 'name,submit_s,model,gpus,plan,iters,space\nbig,0,t5_3b,2,tp+ga,100,tp=1\n' >"$tmp/bad.csv"
if "$rubick" sim --trace "$tmp/bad.csv" --cluster 1x2:a800 --policy rubick --oracle model \
	>/dev/null 2>"$tmp/err"; then
	fail "a plan outside its own space was accepted"
elif ! grep -q "bad.csv:2: job big: plan 'tp+ga' is outside the job's own space" "$tmp/err"; then
	fail "unexpected refusal: $(cat "$tmp/err")"
fi
[ "$status" -eq 0 ] && echo "plan_space: ok"
exit "$status"
