#!/usr/bin/env bash
# --first-start free|paid of `rubick sim` (docs/fidelity.md): a job alone on an
# empty cluster takes its trace length when its first start is free, and that
# plus one restart delay when it is paid (as Pollux's and Sia's simulators
# charge every allocation); a paid first start is not counted as a restart.
set -uo pipefail
R=$1
. "$(dirname "$0")/lib.sh"
cat >"$work/one.csv" <<'CSV'
name,submit_s,duration_s,model,job_type,gpus,gpu_milli,cpus,mem_mb,net_gbps,global_batch,plan,iters,guaranteed,tenant,min_gpus,max_gpus
vit-0,0.000,1000.0,vit,vit,2,1000,16,0,0,,zero-dp,0,0,,2,2
CSV
jct() { # FIRST-START -> "avg_jct reconfigs"
	"$R" sim --trace "$work/one.csv" --cluster 8x8 --policy fifo --restart-cost 100 \
		--first-start "$1" --no-timing --json |
		python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(round(r["avg_jct_s"], 3), r["reconfigs"])'
}
[ "$(jct free)" = "1000.0 0.0" ] || fail "free first start: $(jct free), want 1000.0 0.0"
[ "$(jct paid)" = "1100.0 0.0" ] || fail "paid first start: $(jct paid), want 1100.0 0.0"
check bad-value 2 "--first-start: expected free or paid" -- sim --trace "$work/one.csv" \
	--cluster 8x8 --policy fifo --first-start sometimes
[ "$fails" -eq 0 ] && echo "cli_first_start: ok"
exit "$fails"
