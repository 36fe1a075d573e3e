#!/usr/bin/env bash
# `rubick model validate` / `rubick model fit`: every documented command-line
# error (exit code and the flag or file named in the message) and the output
# contracts (--json keys, skipped rows with reasons, rubick profile format).
# Usage: test_cli_model.sh PATH/TO/rubick   (RK_DATA_DIR: zoo, RK_SHARED_DIR: traces)
set -uo pipefail
R=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
T=${RK_SHARED_DIR:?}/traces/rubick
tmp=$work

M=$T/placements/bert/placements.csv
P=$T/perf_model_profile/bert
# ---- errors ---------------------------------------------------------------
check no-sub 2 "usage" -- model
check bad-sub 2 "unknown subcommand 'frob'" -- model frob
check no-measured 2 "give --measured FILE" -- model validate --profile "$P"
check no-profile 2 "--profile: needed unless --train-fraction" -- model validate --measured "$M"
check traces-and-measured 2 "--traces DIR alone" -- model validate --traces "$T" --measured "$M"
check unknown-flag 2 "unknown option '--frob'" -- model validate --traces "$T" --frob 1
check missing-value 2 "--traces: missing value" -- model validate --traces
check bad-fraction 2 "--train-fraction: '1' must be a number in (0, 1)" -- model validate --traces "$T" --train-fraction 1
check bad-fraction-text 2 "--train-fraction: 'x'" -- model validate --traces "$T" --train-fraction x
check bad-seed 2 "--seed: '-1'" -- model validate --traces "$T" --seed -1
check bad-cpus 2 "--cpus-per-gpu: '0'" -- model validate --traces "$T" --cpus-per-gpu 0
check bad-overlap 2 "--overlap: 'max' must be pnorm or additive" -- model validate --traces "$T" --overlap max
check bad-env-key 2 "--env: unknown key 'speed'" -- model validate --traces "$T" --env speed=1
check bad-env-form 2 "--env: 'net_gbps' is not key=value" -- model validate --traces "$T" --env net_gbps
check bad-env-value 2 "--env: '0'" -- model validate --traces "$T" --env net_gbps=0
check bad-env-range 2 "tp_eff" -- model validate --traces "$T" --env tp_eff=2
check no-traces 1 "--traces: /nonexistent: No such file or directory" -- model validate --traces /nonexistent
check unknown-model 4 "model 'nope' is not in the zoo" -- model validate --measured "$M" --profile "$P" --model nope
check missing-measured 1 "$tmp/none.csv" -- model validate --measured "$tmp/none.csv" --profile "$P" --model bert
printf 'exec_plan,placement,iter_time\nga,1x,1\n' >"$tmp/bad.csv"
check bad-measured 1 "$tmp/bad.csv:2:5: placement: 'x'" -- model validate --measured "$tmp/bad.csv" --profile "$P" --model bert
mkdir -p "$tmp/prof"
printf 'nodes,gpus\n1,1\n' >"$tmp/prof/config.csv"
printf 'forward_time,Tcc,Topt,iter_time,strategy\n1,1,1,1,1100\n' >"$tmp/prof/data.csv"
check bad-profile 1 "$tmp/prof/config.csv:1:1: missing column" -- model validate --measured "$M" --profile "$tmp/prof" --model bert
check fit-no-profile 2 "give --profile DIR" -- model fit
check fit-unknown-model 4 "--model: 'nope' is not in the zoo" -- model fit --profile "$P" --model nope

# ---- output -----------------------------------------------------------------
check validate-json 0 "" -- model validate --traces "$T" --json
for key in '"rows":539' '"predicted":535' '"skipped":4' '"mape":' '"median_ape":' '"max_ape":' \
	'"within_10pct":' '"within_20pct":' '"dp-multi-node":' '"skipped_rows":[' 'failed run'; do
	grep -qF -- "$key" "$out" || { echo "FAIL validate-json: no $key"; fails=$((fails + 1)); }
done
check validate-text 0 "" -- model validate --measured "$M" --profile "$P"
for key in "per model:" "per plan family:" "overall:" "perf_k_bwd = "; do
	grep -qF -- "$key" "$out" || { echo "FAIL validate-text: no '$key'"; fails=$((fails + 1)); }
done
cat >"$tmp/bert.prof" <<'PROF'
model = bert
global_batch = 32
dp=8,tp=1,pp=1,mb=4,ga=1,gc=0,zero=0,offload=0 8 1 40 83 25 157
dp=4,tp=1,pp=1,mb=8,ga=1,gc=0,zero=0,offload=0 4 1 65 130 24 225
dp=4,tp=1,pp=1,mb=8,ga=1,gc=0,zero=2,offload=1 4 4 63 158 148 376
PROF
check fit-native 0 "" -- model fit --profile "$tmp/bert.prof" --model bert
grep -q "perf_fwd_fixed_ms = " "$out" || { echo "FAIL fit-native output"; fails=$((fails + 1)); }
printf 'global_batch = 32\ndp=8 8 1 40 83 25 157\n' >"$tmp/bad.prof"
check fit-native-bad 1 "$tmp/bad.prof:2" -- model fit --profile "$tmp/bad.prof" --model bert
check train 0 "" -- model validate --traces "$T" --train-fraction 0.3 --seed 3 --json
grep -qF '"rows":378' "$out" || { echo "FAIL train: scored rows"; fails=$((fails + 1)); }
# --calibrate-internode loo (issue 22 item 6): the option is checked, runs,
# and prints before/after MAPE; a model is never calibrated on its own rows.
check calib-bad 2 "--calibrate-internode: 'all' must be loo" -- model validate --traces "$T" --calibrate-internode all
check calib-missing 2 "--calibrate-internode: missing value" -- model validate --traces "$T" --calibrate-internode
check calib-train 2 "--calibrate-internode: only for validate under the strict protocol" -- model validate --traces "$T" --train-fraction 0.3 --calibrate-internode loo
check calib-fit 2 "--calibrate-internode: only for validate" -- model fit --profile "$P" --calibrate-internode loo
check calib-text 0 "" -- model validate --traces "$T" --calibrate-internode loo
for key in "inter-node calibration (leave one model out" "B_eff" "after" "  vit "; do
	grep -qF -- "$key" "$out" || fail "calib-text: no '$key'"
done
check calib-json 0 "" -- model validate --traces "$T" --calibrate-internode loo --json
for key in '"calibration":{"mode":"loo"' '"mape_after":' '"multi_node_mape_after":' '"vit":{"gbps":'; do
	grep -qF -- "$key" "$out" || fail "calib-json: no $key"
done
# One table alone: no other model's multi-node row, so nothing is fitted
# (its own rows are never used) and the predictions stay as they were.
check calib-alone 0 "" -- model validate --measured "$M" --profile "$P" --calibrate-internode loo --json
grep -qF '"bert":{"gbps":null,"rows_used":0' "$out" || fail "calib-alone: bert calibrated on its own rows"

echo "cli_model: $fails failed"
[ "$fails" -eq 0 ]
