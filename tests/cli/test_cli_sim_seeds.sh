#!/usr/bin/env bash
# Issue 14's `rubick sim` and `rubick trace` options (docs/sim.md, "Seeds and
# repetitions", "Load sweeps"): the workload seed moves the workload and not
# the policies' draws, the policy seed moves only a randomised policy,
# --seed is both; --seeds reports sane intervals; --load halves and doubles
# the span of arrivals and --poisson is seeded; a bad --out fails before the
# run; per-policy options give differently named rows and unknown keys fail
# naming the policy and key; summary.json records version, command, options
# and seeds.
# Usage: test_cli_sim_seeds.sh PATH/TO/rubick   (RK_DATA_DIR gives the zoo)
set -uo pipefail
R=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
d=$work

# 40 jobs without a model: the seeded mapping picks it, and the iterations
# make its speed matter (a duration would be kept whatever the model).
python3 - >"$d/trace.csv" <<'P'
import random
r = random.Random(5)
print("name,submit_s,gpus,iters,job_type")
for i in range(40):
    print(f"j{i},{i * 120},{r.choice([1, 2, 4, 8])},{r.randint(200, 3000)},")
P
table=(sim --trace "$d/trace.csv" --cluster 2x8 --oracle model --no-timing)
sim=("${table[@]}" --json)
# POLICY -> avg_jct_s of that policy from $out
avg() { python3 -c "import json,sys; print(next(r['avg_jct_s'] for r in json.load(open(sys.argv[1]))['results'] if r['policy'] == sys.argv[2]))" "$out" "$1"; }
run() { # NAME ARGS... -> stores "fifo-avg sjf-random-avg" in $got
	check "$1" 0 "" -- "${sim[@]}" --policy fifo,sjf-random "${@:2}"
	got="$(avg fifo) $(avg sjf-random)"
}

# --- seeds -------------------------------------------------------------------
run base --workload-seed 1 --policy-seed 1
base=$got
run policy-seed --workload-seed 1 --policy-seed 2
[ "${got%% *}" = "${base%% *}" ] || fail "policy seed changed fifo: $base -> $got"
[ "${got#* }" != "${base#* }" ] || fail "policy seed did not change sjf-random: $base"
run workload-seed --workload-seed 2 --policy-seed 1
[ "${got%% *}" != "${base%% *}" ] || fail "workload seed did not change fifo: $base"
check seed-both 0 "" -- "${sim[@]}" --policy fifo,sjf-random --seed 1
cp "$out" "$d/seed1.json"
check seed-split 0 "" -- "${sim[@]}" --policy fifo,sjf-random --workload-seed 1 --policy-seed 1
cmp -s "$out" "$d/seed1.json" || fail "--seed 1 differs from --workload-seed 1 --policy-seed 1"
"$R" trace "$d/trace.csv" --seed 1 --native >"$d/w1.csv" 2>/dev/null
"$R" trace "$d/trace.csv" --workload-seed 2 --native >"$d/w2.csv" 2>/dev/null
cmp -s "$d/w1.csv" "$d/w2.csv" && fail "trace --workload-seed 2 maps the models of seed 1"

# --seeds: a mean inside the values, an interval around it, one value per seed
check seeds 0 "" -- "${sim[@]}" --policy fifo,sjf-random --seeds 3-7
python3 - "$out" <<'P' || fail "--seeds JSON: $(cat "$out")"
import json, sys, statistics
d = json.load(open(sys.argv[1]))
assert d["seeds"] == {"first": 3, "last": 7, "n": 5, "vary": "workload+policy"}, d["seeds"]
for r in d["results"]:
    s = r["seeds"]
    assert s["n"] == 5
    for k in ("avg_jct_s", "p99_jct_s", "makespan_s"):
        f = s[k]
        v = f["values"]
        assert len(v) == 5
        assert abs(f["mean"] - statistics.mean(v)) < 1e-6 * max(1, f["mean"])
        assert abs(f["sd"] - statistics.stdev(v)) < 1e-6 * max(1, f["sd"])
        # t(0.975, 4) = 2.776
        assert abs(f["half95"] - 2.776 * f["sd"] / 5 ** 0.5) < 1e-6 * max(1, f["half95"])
        assert f["ci95_lo"] <= f["mean"] <= f["ci95_hi"]
        assert f["ci95_hi"] - f["ci95_lo"] > 0, (r["policy"], k, v)  # the seeds differ
    # the run's own figures are those of the first seed
    assert r["avg_jct_s"] == s["avg_jct_s"]["values"][0]
P
check seeds-table 0 "" -- "${table[@]}" --policy fifo --seeds 3-4 --policy-seed 9
grep -q "^seeds 3-4 (2 runs per policy, workload seed varied)" "$out" ||
	fail "--seeds table: $(cat "$out")"
grep -qE "^fifo +[0-9.]+ \+- +[0-9.]+ " "$out" || fail "--seeds table row: $(cat "$out")"
check seeds-bad 2 "--seeds: expected A-B" -- "${sim[@]}" --policy fifo --seeds 3
check seeds-one 2 "needs A < B" -- "${sim[@]}" --policy fifo --seeds 3-3
check seeds-and-seed 2 "cannot be combined with --seed" -- "${sim[@]}" --policy fifo \
	--seeds 1-2 --seed 4
check seeds-nothing 2 "varies nothing" -- "${sim[@]}" --policy fifo --seeds 1-2 \
	--workload-seed 1 --policy-seed 1

# --- load sweeps -------------------------------------------------------------
span() { "$R" trace "$d/trace.csv" --json "$@" | python3 -c "import json,sys; print(json.load(sys.stdin)['span_s'])"; }
s1=$(span)
s2=$(span --load 2)
sh=$(span --load 0.5)
[ "$s1" = 4680.0 ] || fail "span of the trace: $s1"
[ "$s2" = 2340.0 ] || fail "--load 2 span $s2, want half of $s1"
[ "$sh" = 9360.0 ] || fail "--load 0.5 span $sh, want twice $s1"
p1=$(span --poisson 60 --seed 1)
p1b=$(span --poisson 60 --seed 1)
p2=$(span --poisson 60 --seed 2)
pm=$(span --poisson mean --seed 1 --load 2)
[ "$p1" = "$p1b" ] || fail "--poisson not deterministic: $p1 $p1b"
[ "$p1" != "$p2" ] || fail "--poisson seed 2 gives the arrivals of seed 1"
# 39 gaps of mean 1 min: the span is near 39 min (2340 s); well inside 1000..4000
python3 -c "import sys; assert 1000 < float(sys.argv[1]) < 4000, sys.argv[1]" "$p1" ||
	fail "--poisson 60/h span $p1"
python3 -c "import sys; assert 800 < float(sys.argv[1]) < 4000, sys.argv[1]" "$pm" ||
	fail "--poisson mean --load 2 span $pm"
"$R" trace "$d/trace.csv" --load 2 --native >"$d/l2.csv" 2>"$err" || fail "--load --native: $(cat "$err")"
head -1 "$d/l2.csv" | grep -q "^# arrivals: load factor 2" || fail "--native note: $(head -1 "$d/l2.csv")"
# `rubick sim --load 2` replays what `rubick trace --load 2 --native` wrote
check l2-sim 0 "" -- sim --trace "$d/l2.csv" --cluster 2x8 --oracle model --policy fifo \
	--no-timing --json
python3 -c "import json,sys; print(json.dumps(json.load(open(sys.argv[1]))['results']))" "$out" >"$d/l2.res"
check sim-load 0 "" -- "${sim[@]}" --policy fifo --load 2 --out "$d/sl"
python3 -c "import json,sys; print(json.dumps(json.load(open(sys.argv[1]))['results']))" "$out" >"$d/sl.res"
cmp -s "$d/l2.res" "$d/sl.res" || fail "sim --load 2 differs from the trace --load 2 file"
grep -q '"load": "2"' "$d/sl/summary.json" || fail "summary.json lacks load 2"
check sim-load-bad 2 "rubick sim: --load: expected a number" -- "${sim[@]}" --policy fifo --load -1
check load-bad 2 "--load: expected a number" -- trace "$d/trace.csv" --load 0
check poisson-bad 2 "--poisson: expected a number" -- trace "$d/trace.csv" --poisson fast

# --- --out is checked before the run -----------------------------------------
: >"$d/file"
check out-under-file 1 "--out: cannot create '$d/file/o'" -- "${sim[@]}" --policy fifo \
	--out "$d/file/o"
[ -s "$out" ] && fail "--out under a file still ran: $(cat "$out")"
check out-is-file 1 "--out: '$d/file' is not a directory" -- "${sim[@]}" --policy fifo \
	--out "$d/file"
[ -s "$out" ] && fail "--out a file still ran"

# --- per-policy options --------------------------------------------------------
check variants 0 "" -- "${sim[@]}" --policy 'tiresias:threshold_gpu_h=0.01,tiresias[threshold_gpu_h=100]' \
	--out "$d/o"
python3 - "$out" "$d/o/summary.json" <<'P' || fail "variants: $(cat "$out")"
import json, sys
d = json.load(open(sys.argv[1]))
names = [r["policy"] for r in d["results"]]
assert names == ["tiresias[threshold_gpu_h=0.01]", "tiresias[threshold_gpu_h=100]"], names
m = json.load(open(sys.argv[2]))["meta"]
assert m["options"]["options[tiresias[threshold_gpu_h=0.01]]"] == "threshold_gpu_h=0.01", m
P
grep -q '^tiresias\[threshold_gpu_h=100\],' "$d/o/jobs.csv" || fail "jobs.csv variant name"
check unknown-key 2 "foo" -- "${sim[@]}" --policy 'fifo,tiresias:foo=1'
grep -q "tiresias\[foo=1\]" "$err" || fail "unknown key: the policy is not named: $(cat "$err")"
[ -s "$out" ] && fail "an unknown key still ran"
check twice 2 "listed twice" -- "${sim[@]}" --policy fifo,fifo
check unbalanced 2 "unbalanced" -- "${sim[@]}" --policy 'sia[p=1'
check normalize-bad 2 "--normalize: not one of the --policy names" -- "${sim[@]}" \
	--policy fifo --normalize sjf
# --policy-options stays the default of every policy; an item's keys win
check defaults 0 "" -- "${sim[@]}" --policy 'tiresias,tiresias:threshold_gpu_h=100' \
	--policy-options threshold_gpu_h=0.01 --out "$d/o2"
python3 - "$d/o2/summary.json" <<'P' || fail "defaults: $(cat "$d/o2/summary.json")"
import json, sys
o = json.load(open(sys.argv[1]))["meta"]["options"]
assert o["options[tiresias]"] == "threshold_gpu_h=0.01", o
assert o["options[tiresias[threshold_gpu_h=100]]"] == "threshold_gpu_h=100", o
P

# --- summary.json and the report record the invocation -------------------------
check meta 0 "" -- "${sim[@]}" --policy fifo,sjf-random --seeds 1-3 --normalize sjf-random \
	--out "$d/m"
version=$("$R" --version | cut -d' ' -f2)
python3 - "$d/m/summary.json" "$version" <<'P' || fail "meta: $(cat "$d/m/summary.json")"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["meta"]
assert m["version"] == sys.argv[2], m["version"]
assert m["command"].startswith("rubick sim --trace ") and "--seeds 1-3" in m["command"], m
o = m["options"]
for k in ("trace", "cluster", "policy", "oracle", "interval_s", "restart_cost_s",
          "workload_seed", "policy_seed", "seeds", "normalize", "sharing", "inference"):
    assert k in o, k
assert o["seeds"] == "1-3" and o["normalize"] == "sjf-random", o
assert m["workload_seed"] == 1 and m["policy_seed"] == 1, m
assert d["seeds"]["n"] == 3
P
grep -q "Average JCT, p99 JCT and makespan relative to sjf-random" "$d/m/report.html" \
	|| fail "report: no normalised bars"
grep -q "rubick $version" "$d/m/report.html" || fail "report: no version"
grep -q "Over seeds 1-3" "$d/m/report.html" || fail "report: no seeds table"
# the JCT CDF pools every seed's jobs (jobs.csv has them all) and says so; the
# time series and the first table are seed 1's run and say that
grep -q "<figcaption>fig-jct-cdf: Fraction of each policy&#39;s completed jobs finished within a JCT[^<]*; all 3 seeds pooled (1-3)</figcaption>" \
	"$d/m/report.html" || fail "report: the JCT CDF caption does not say the 3 seeds are pooled"
grep -q "<figcaption>fig-gpu-util: .* of seed 1 (the first of seeds 1-3; repetitions keep no samples)" \
	"$d/m/report.html" || fail "report: the GPU utilisation caption does not name seed 1"
grep -q "<p>Seed 1's run (the first of seeds 1-3;" "$d/m/report.html" ||
	fail "report: the summary table is not labelled as seed 1's run"
grep -q "pooled" "$d/o/report.html" && fail "report without --seeds: the CDF says seeds are pooled"
# stdout stays free of paths and versions (golden cases compare it)
grep -q '"meta"' "$out" && fail "--json on stdout carries meta"

[ "$fails" -eq 0 ] && echo "cli_sim_seeds: all passed"
exit $((fails > 0))
