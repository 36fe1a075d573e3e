#!/usr/bin/env bash
# --gpu-range free|request of `rubick sim` (docs/policies.md "GPU ranges"): every
# policy keeps a job within its min_gpus..max_gpus; a trace record without a range
# accepts 1..cluster GPUs by default (rubick grows a lone 2-GPU job on an idle node)
# and exactly its request with --gpu-range request (rubick then runs it on 2, as
# plan-only does); a record's own range is kept either way; `rubick trace --native`
# leaves an absent range empty, so the written trace replays the same.
set -uo pipefail
R=$1
. "$(dirname "$0")/lib.sh"
head='name,submit_s,duration_s,model,job_type,gpus,gpu_milli,cpus,mem_mb,net_gbps,global_batch,plan,iters,guaranteed,tenant,min_gpus,max_gpus'
printf '%s\nbert-0,0.000,3000.0,bert,bert,2,1000,16,0,0,32,,0,0,,,\n' "$head" >"$work/free.csv"
printf '%s\nbert-0,0.000,3000.0,bert,bert,2,1000,16,0,0,32,,0,0,,2,2\n' "$head" >"$work/rigid.csv"
gpu_h() { # TRACE POLICY [FLAGS...] -> GPU-hours of the run (GPUs held x time)
	local t=$1 p=$2
	shift 2
	"$R" sim --trace "$t" --cluster "1x8:a800,cpus=96,mem=1600G" --policy "$p" --no-timing \
		--json "$@" | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["results"][0]["gpu_hours"], 4))'
}
two=$(gpu_h "$work/rigid.csv" rubick-plan-only)
free=$(gpu_h "$work/free.csv" rubick)
req=$(gpu_h "$work/free.csv" rubick --gpu-range request)
rigid=$(gpu_h "$work/rigid.csv" rubick)
python3 -c "import sys; sys.exit(not ($free > $two))" ||
	fail "no range, --gpu-range free: rubick should grow the job ($free GPU-h vs $two on 2 GPUs)"
[ "$req" = "$two" ] || fail "--gpu-range request: $req GPU-h, want $two (2 GPUs throughout)"
[ "$rigid" = "$two" ] || fail "the record's range [2, 2]: $rigid GPU-h, want $two"
[ "$(gpu_h "$work/rigid.csv" rubick --gpu-range free)" = "$two" ] ||
	fail "--gpu-range free widened a record's own range"
check bad-value 2 "--gpu-range: expected free or request" -- sim --trace "$work/free.csv" \
	--cluster 1x8 --policy fifo --gpu-range any
check sia-range-plan 2 "range=plan: no longer supported" -- sim --trace "$work/free.csv" \
	--cluster 1x8 --policy 'sia[range=plan]'
# Written back as native CSV, the absent range stays absent (empty fields).
"$R" trace "$work/free.csv" --native >"$work/back.csv" 2>"$err" || fail "rubick trace --native: $(cat "$err")"
tail -1 "$work/back.csv" | grep -q ',,$' || fail "written range not empty: $(tail -1 "$work/back.csv")"
[ "$(gpu_h "$work/back.csv" rubick)" = "$free" ] || fail "the written trace replays differently"
[ "$fails" -eq 0 ] && echo "cli_gpu_range: ok"
exit "$fails"
