#!/usr/bin/env bash
# `rubick sim` capacity loaning options (issue 5, docs/aryl.md): every bad
# inference-load input is rejected naming the file, line and reason or the
# flag; a small loaning run prints its loan line and is deterministic.
# Usage: test_cli_aryl.sh PATH/TO/rubick   (RK_DATA_DIR gives the zoo)
set -uo pipefail
R=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
d=$work

cat >"$d/trace.csv" <<'T'
timestamp,duration,num_gpus,gpu_time,cluster
2017-10-09 00:00:00,3600.0,4,14400.0,a
2017-10-09 00:10:00,7200.0,8,57600.0,a
2017-10-09 00:20:00,1800.0,2,3600.0,a
2017-10-09 01:00:00,600.0,1,600.0,a
T
printf '0,1\n600,2\n1200,-1\n' >"$d/neg.csv"
printf '0,1\n600,2\n300,1\n' >"$d/order.csv"
printf '0,1\n600,2\n1800,1\n' >"$d/gap.csv"
printf '0,0\n1800,1\n3600,2\n' >"$d/ok.csv"
base=(sim --trace "$d/trace.csv" --cluster "1x8+2x8,pool=loaned" --no-timing)

check negative 1 "neg.csv:3:6: servers_needed must be an integer" -- "${base[@]}" --policy aryl --inference "$d/neg.csv"
check order 1 "order.csv:3:1: time 300 s out of order" -- "${base[@]}" --policy aryl --inference "$d/order.csv"
check gap 1 "gap.csv:3:1: gap: 1200 s after the previous sample" -- "${base[@]}" --policy aryl --inference "$d/gap.csv"
check missing 1 "--inference" -- "${base[@]}" --policy aryl --inference "$d/none.csv"
check diurnal-key 1 "--inference: unknown key 'peek'" -- "${base[@]}" --policy aryl --inference diurnal:peek=1
check diurnal-range 1 "--inference: trough 0.9 is above peak 0.5" -- "${base[@]}" --policy aryl --inference diurnal:peak=0.5,trough=0.9
check share 2 "--elastic-share: expected a number in 0..1" -- "${base[@]}" --policy aryl --elastic-share 2
check deadline 2 "--reclaim-deadline: expected a number" -- "${base[@]}" --policy aryl --reclaim-deadline -5
check no-pool 1 "pool=loaned" -- sim --trace "$d/trace.csv" --cluster "3x8" --policy aryl --inference "$d/ok.csv"

# A run: every policy kind finishes every job, with a loan line each.
check run 0 "" -- "${base[@]}" --policy aryl,aryl-noloan,rubick,fifo --inference "$d/ok.csv" --elastic-share 0.5 --check
cp "$out" "$d/first"
for p in aryl aryl-noloan rubick fifo; do
	grep -q "^loan $p " "$d/first" || { echo "FAIL run: no loan line for $p"; fails=$((fails + 1)); }
	grep -qE "^$p +.* 4/4 " "$d/first" || { echo "FAIL run: $p did not finish 4/4"; fails=$((fails + 1)); }
done
check rerun 0 "" -- "${base[@]}" --policy aryl,aryl-noloan,rubick,fifo --inference "$d/ok.csv" --elastic-share 0.5 --check
cmp -s "$out" "$d/first" || { echo "FAIL rerun: output differs"; fails=$((fails + 1)); }
check diurnal 0 "" -- "${base[@]}" --policy aryl --inference diurnal:seed=3 --reclaim-deadline 0

# --json and --out's summary.json carry the loan line's figures, per run.
loan_keys='"loan":{"servers_lent":[0-9]+,"servers_reclaimed":[0-9]+,"reclaim_preemptions":[0-9]+,"reclaim_scale_ins":[0-9]+,"preemptions_per_reclaimed_server":[0-9.e+-]+,"lent_gpu_hours":[0-9.e+-]+,"window_days":[0-9.e+-]+,"training_usage":[0-9.e+-]+,"cluster_usage":[0-9.e+-]+,"cluster_gpus":24}'
check json 0 "" -- "${base[@]}" --policy aryl,rubick --inference "$d/ok.csv" --elastic-share 0.5 --json --out "$d/o"
for p in aryl rubick; do
	lent=$(sed -n "s/^loan $p  *servers lent \([0-9]*\),.*/\1/p" "$d/first")
	grep -qE "\"policy\":\"$p\",.*$loan_keys" "$out" ||
		{ echo "FAIL json: no loan object for $p: $(cat "$out")"; fails=$((fails + 1)); }
	grep -qE "\"policy\":\"$p\",[^]]*\"loan\":\{\"servers_lent\":$lent," "$out" ||
		{ echo "FAIL json: $p servers_lent is not the table's $lent"; fails=$((fails + 1)); }
done
[ "$(tr -d ' \n' <"$d/o/summary.json" | grep -oE "$loan_keys" | wc -l)" -eq 2 ] ||
	{ echo "FAIL json: summary.json lacks the loan objects"; fails=$((fails + 1)); }
grep -q "^loan " "$out" && { echo "FAIL json: a loan line in --json output"; fails=$((fails + 1)); }
check json-noloan 0 "" -- "${base[@]}" --policy aryl --json
grep -q '"loan"' "$out" && { echo "FAIL json-noloan: a loan object without --inference"; fails=$((fails + 1)); }

if [ "$fails" -gt 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "all passed"
