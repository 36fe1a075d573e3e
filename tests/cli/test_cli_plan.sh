#!/usr/bin/env bash
# `rubick plan`, `rubick curve`, `rubick demo`: output contracts and every
# documented command-line error (exit code and the flag named in the message).
# Usage: test_cli_plan.sh PATH/TO/rubick   (RK_DATA_DIR gives the zoo)
set -uo pipefail
R=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# ---- errors ---------------------------------------------------------------
check plan-no-model 2 "--model is required" -- plan --placement 8
check plan-no-placement 2 "--placement is required" -- plan --model bert
check plan-bad-placement 2 "--placement:1:3: a node with 0 GPUs" -- plan --model bert --placement 880
check plan-bad-char 2 "--placement:1:2: unexpected character 'x'" -- plan --model bert --placement 8x
check plan-unknown-model 4 "--model: 'nope' is not in the zoo" -- plan --model nope --placement 8
check plan-bad-batch 2 "--global-batch: 'abc' must be an integer" -- plan --model bert --placement 8 --global-batch abc
check plan-zero-batch 2 "--global-batch: '0' must be an integer in 1..65536" -- plan --model bert --placement 8 --global-batch 0
check plan-bad-cpus 2 "--cpus-per-gpu: '0'" -- plan --model bert --placement 8 --cpus-per-gpu 0
check plan-bad-mem 2 "--gpu-mem-mb: '-5'" -- plan --model bert --placement 8 --gpu-mem-mb -5
check plan-unknown-flag 2 "unknown option '--frob'" -- plan --model bert --placement 8 --frob 1
check plan-missing-value 2 "--placement: missing value" -- plan --model bert --placement
check plan-bad-zoo 1 "/nonexistent" -- plan --model bert --placement 8 --zoo /nonexistent
check plan-infeasible 1 "" -- plan --model bert --placement 8 --gpu-mem-mb 1000
grep -q "no feasible plan" "$out" || { echo "FAIL plan-infeasible output"; fails=$((fails + 1)); }
check plan-bad-space 2 "--space:1:1: unknown item 'tq'" -- plan --model t5_3b --placement 2 --space tq=1
check plan-space-range 2 "--space:1:7: 'zero' bound 9 out of range" -- plan --model t5_3b --placement 2 --space 'zero<=9'
check plan-space-infeasible 1 "" -- plan --model llama30 --placement 2 --space dp
grep -q "no feasible plan in plan space tp=1,pp=1,zero=0,offload=no" "$out" ||
	{ echo "FAIL plan-space-infeasible output: $(cat "$out")"; fails=$((fails + 1)); }
check curve-bad-space 2 "--space:1:1: 'gc' must be 'gc=yes' or 'gc=no'" -- curve --model bert --space 'gc=maybe'
# --space keeps to the declared plans: T5-3B's best plan on two GPUs is tp=2, and
# inside tp=1 no tensor-parallel plan is listed (by plan or by curve).
check plan-space 0 "" -- plan --model t5_3b --placement 2
sed -n 3p "$out" | grep -q "tp=2" || { echo "FAIL plan-space: tp=2 is not first: $(sed -n 3p "$out")"; fails=$((fails + 1)); }
check plan-space-tp1 0 "" -- plan --model t5_3b --placement 2 --space tp=1 --json
python3 - "$out" <<'PY' || { echo "FAIL plan-space-tp1 json"; fails=$((fails + 1)); }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["space"] == "tp=1", d.get("space")
assert d["plans"] and all(",tp=1," in p["plan"] for p in d["plans"]), d["plans"][:3]
PY
check curve-space-tp1 0 "" -- curve --model t5_3b --gpus 1-8 --space 'tp=1,zero<=1'
grep -q "plan space tp=1,zero<=1" "$out" && ! grep -qE "tp=[2-9]|zero=[23]" "$out" ||
	{ echo "FAIL curve-space-tp1: $(cat "$out")"; fails=$((fails + 1)); }
check curve-no-model 2 "--model is required" -- curve
check curve-bad-range 2 "--gpus: '4-2' must be N or LO-HI" -- curve --model bert --gpus 4-2
check curve-zero-range 2 "--gpus: '0'" -- curve --model bert --gpus 0
check curve-junk-range 2 "--gpus: '1-8x'" -- curve --model bert --gpus 1-8x
check curve-big-range 2 "--gpus: '1-999'" -- curve --model bert --gpus 1-999
check curve-node 2 "--node-gpus: '65'" -- curve --model bert --node-gpus 65
check curve-too-many-nodes 2 "--gpus: 200 GPUs need more than 64 nodes of 2" -- curve --model bert --node-gpus 2 --gpus 200
check curve-unknown-model 4 "'nope' is not in the zoo" -- curve --model nope
check curve-unknown-flag 2 "unknown option '--x'" -- curve --model bert --x 1
check demo-unknown-flag 2 "--x: unknown option" -- demo --x
check demo-missing-zoo 2 "--zoo: missing value" -- demo --zoo

# ---- output contracts -----------------------------------------------------
if ! "$R" plan --model gpt2 --placement 8888 --json >"$out" 2>"$err"; then
	echo "FAIL plan-json: $(cat "$err")"
	fails=$((fails + 1))
elif ! python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["model"] == "gpt2" and d["gpus"] == 32 and d["placement"] == "8888", d
p = d["plans"]
assert len(p) > 0
t = [x["iter_ms"] for x in p]
assert t == sorted(t), "not best first"
for x in p:
    kv = dict(f.split("=") for f in x["plan"].split(","))
    assert list(kv) == ["dp", "tp", "pp", "mb", "ga", "gc", "zero", "offload"], x
    k = {a: int(b) for a, b in kv.items()}
    assert k["dp"] * k["tp"] * k["pp"] == 32 and k["mb"] * k["ga"] * k["dp"] == 16, x
    assert 0 < x["gpu_mem_mb"] <= 81920, x
    assert abs(x["tput_sps"] - 16 / (x["iter_ms"] / 1000)) < 1e-6 * x["tput_sps"], x
PY
then
	echo "FAIL plan-json contract"
	fails=$((fails + 1))
fi
# Text and JSON list the same plans in the same order.
"$R" plan --model gpt2 --placement 8888 | awk 'NR > 2 { print $2 }' >"$err"
python3 -c 'import json,sys; [print(p["plan"]) for p in json.load(open(sys.argv[1]))["plans"]]' \
	"$out" | diff -q - "$err" >/dev/null || {
	echo "FAIL plan text and json differ"
	fails=$((fails + 1))
}
if ! "$R" curve --model llama7 --gpus 1-16 --json >"$out" 2>"$err"; then
	echo "FAIL curve-json: $(cat "$err")"
	fails=$((fails + 1))
elif ! python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
levels = d["cpus_per_gpu_levels"]
pts = d["points"]
assert len(pts) == 16 * len(levels)
by = {(p["gpus"], p["cpus_per_gpu"]): p for p in pts}
for (g, c), p in by.items():
    if p["feasible"]:
        assert p["min_gpus"] <= g and p["min_cpus_per_gpu"] <= c, p
        src = by[(p["min_gpus"], p["min_cpus_per_gpu"])]
        assert src["plan"] == p["min_plan"], (p, src)
    if g > 1:
        assert p["min_tput_sps"] * 1.0304 >= by[(g - 1, c)]["min_tput_sps"], p
assert d["max"]["gpus"] <= 16
PY
then
	echo "FAIL curve-json contract"
	fails=$((fails + 1))
fi
n=$("$R" curve --model bert --gpus 3-9 | grep -cE '^ +[0-9]+ ')
[ "$n" -eq 7 ] || { echo "FAIL curve text rows: $n"; fails=$((fails + 1)); }
"$R" demo >"$out" 2>"$err" || { echo "FAIL demo: $(cat "$err")"; fails=$((fails + 1)); }
for m in bert gpt2 llama30 llama7 roberta t5 t5_3b vit; do
	grep -q "^$m " "$out" || { echo "FAIL demo lacks $m"; fails=$((fails + 1)); }
done
[ "$(wc -l <"$out")" -le 30 ] || { echo "FAIL demo longer than 30 lines"; fails=$((fails + 1)); }

echo "$fails failures"
[ "$fails" -eq 0 ]
