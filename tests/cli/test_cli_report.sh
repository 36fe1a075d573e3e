#!/usr/bin/env bash
# `rubick report DIR...` (docs/sim.md, "Sweeps"): three loads x --seeds 1-3 x
# two policies of `rubick sim --out`, combined; every mean and 95% interval
# recomputed here from the per-dir summaries; the x of each rule (load,
# measured and --poisson arrival rates, cluster GPUs) and --x auto's choice;
# jobs.csv's rows of every seed pooled for the CDF; sweep.csv and sweep.json;
# every documented error names the dir or file and the problem.
# Usage: test_cli_report.sh PATH/TO/rubick   (RK_DATA_DIR gives the zoo)
set -uo pipefail
R=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
d=$work

# 40 jobs without a model: the seeded mapping picks it, so seeds differ.
python3 - >"$d/trace.csv" <<'P'
import random
r = random.Random(5)
print("name,submit_s,gpus,iters,job_type")
for i in range(40):
    print(f"j{i},{i * 120},{r.choice([1, 2, 4, 8])},{r.randint(200, 3000)},")
P
sim=(sim --trace "$d/trace.csv" --oracle model --no-timing --seeds 1-3)
pols='fifo,sia[p=1,lambda_n=0.5]' # a name with a comma: quoted in every CSV
for l in 0.5 1 2; do
	check "sim load $l" 0 "" -- "${sim[@]}" --cluster 2x8 --policy "$pols" --load $l \
		--out "$d/runs/load-$l"
done
runs=("$d/runs/load-0.5" "$d/runs/load-1" "$d/runs/load-2")

# --- every seed's jobs in jobs.csv --------------------------------------------
python3 - "$d/runs/load-1" <<'P' || fail "jobs.csv of every seed"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/jobs.csv")))
assert list(rows[0].keys())[-1] == "seed", list(rows[0].keys())
seen = {}
for r in rows:
    seen[(r["policy"], r["seed"])] = seen.get((r["policy"], r["seed"]), 0) + 1
want = {(p, s): 40 for p in ("fifo", "sia[p=1,lambda_n=0.5]") for s in ("1", "2", "3")}
assert seen == want, seen
# seed 2's jobs differ from seed 1's (the seeded model mapping)
m = {s: [r["model"] for r in rows if r["seed"] == s and r["policy"] == "fifo"] for s in "12"}
assert m["1"] != m["2"], "seed 2 replays seed 1"
P

# --- the sweep against the summaries -----------------------------------------
check report-json 0 "" -- report --json "${runs[@]}"
cp "$out" "$d/sweep.json"
cat >"$d/verify.py" <<'P'
import csv, json, math, sys
sweep = json.load(open(sys.argv[1]))
dirs = sys.argv[2:]
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776}
KEYS = ["avg_jct_s", "p99_jct_s", "makespan_s", "gpu_util", "gpu_hours", "reconfigs"]
def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))
pts = {(p["policy"], p["dir"]): p for p in sweep["points"]}
assert len(pts) == len(sweep["points"]) == 2 * len(dirs), len(sweep["points"])
for d in dirs:
    summ = json.load(open(d + "/summary.json"))
    jobs = list(csv.DictReader(open(d + "/jobs.csv")))
    for res in summ["results"]:
        p = pts[(res["policy"], d)]
        assert p["x"] == float(summ["meta"]["options"]["load"]), (p["x"], d)
        n = res["seeds"]["n"]
        assert p["n"] == n == 3
        for k in KEYS:
            v = res["seeds"][k]["values"]
            assert p[k]["values"] == v, (k, d)
            mean = sum(v) / n
            sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1))
            half = T975[n - 1] * sd / math.sqrt(n)
            assert close(p[k]["mean"], mean), (k, p[k]["mean"], mean)
            assert close(p[k]["sd"], sd), (k, p[k]["sd"], sd)
            assert close(p[k]["ci95_lo"], mean - half) and close(p[k]["ci95_hi"], mean + half), k
        done = sum(1 for j in jobs if j["policy"] == res["policy"] and j["completed"] == "1")
        assert p["jobs_completed"] == done > 40, (p["jobs_completed"], done)
assert sweep["x"] == "load" and sweep["xs"] == [0.5, 1.0, 2.0], sweep["xs"]
assert sweep["policies"] == ["fifo", "sia[p=1,lambda_n=0.5]"], sweep["policies"]
assert sweep["cdf_x"] == 2.0 and sweep["cdf_seeds"] == "all"
# the figures differ between loads (or the sweep read one run three times)
a = [p["avg_jct_s"]["mean"] for p in sweep["points"] if p["policy"] == "fifo"]
assert len(set(a)) == 3, a
P
python3 "$d/verify.py" "$d/sweep.json" "${runs[@]}" || fail "report --json: $(head -c 2000 "$d/sweep.json")"

# the table: a row per policy and load, mean +- half-width as sweep.json has them
check report-table 0 "" -- report "${runs[@]}"
python3 - "$out" "$d/sweep.json" <<'P' || fail "report table: $(cat "$out")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines[0].startswith("sweep over load factor (3 values, 2 policies)"), lines[0]
assert lines[1].split()[:3] == ["policy", "load", "n"], lines[1]
sweep = json.load(open(sys.argv[2]))
rows = lines[2:]
assert len(rows) == 6, rows
for row, p in zip(rows, sweep["points"]):
    f = row.split()
    assert f[0] == p["policy"] and float(f[1]) == p["x"] and int(f[2]) == p["n"], row
    m, h = float(f[3]), float(f[5])
    assert f[4] == "+-" and abs(m - p["avg_jct_s"]["mean"]) <= 0.05, row
    assert abs(h - p["avg_jct_s"]["half95"]) <= 0.05, row
    assert abs(float(f[12]) - p["gpu_util"]["mean"]) <= 5e-4, row
P

# --out: the tidy CSV and the JSON, and where they went
check report-out 0 "wrote sweep.csv, sweep.json" -- report "${runs[@]}" --out "$d/sw/deeper"
grep -qF -- "$d/sw/deeper" "$err" || fail "report --out does not say where: $(cat "$err")"
python3 - "$d/sw/deeper" "$d/sweep.json" <<'P' || fail "sweep.csv / sweep.json"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1] + "/sweep.csv")))
assert list(rows[0].keys()) == ["policy", "x", "metric", "n", "mean", "sd", "ci95_lo", "ci95_hi"]
assert len(rows) == 2 * 3 * 6, len(rows)
sweep = json.load(open(sys.argv[2]))
assert json.load(open(sys.argv[1] + "/sweep.json"))["points"] == sweep["points"]
for r in rows:
    p = next(p for p in sweep["points"] if p["policy"] == r["policy"] and p["x"] == float(r["x"]))
    s = p[r["metric"]]
    for k in ("mean", "sd", "ci95_lo", "ci95_hi"):
        assert abs(float(r[k]) - s[k]) <= 1e-9 * max(1, abs(s[k])), (r, k, s[k])
    assert int(r["n"]) == 3
P

# the figures: each as SVG (XML, the svg namespace) and PDF (rendered, not blank),
# and index.html inlining them with nothing outside it
figs="avg-jct p99-jct makespan gpu-util jct-cdf gpu-hours reconfigs"
grep -qF "7 figures (fig-*.svg, fig-*.pdf) and index.html" "$err" || fail "report --out: $(cat "$err")"
for f in $figs; do
	for e in svg pdf; do
		[ -s "$d/sw/deeper/fig-$f.$e" ] || fail "no fig-$f.$e"
	done
	python3 - "$d/sw/deeper/fig-$f.svg" <<'P' || fail "fig-$f.svg is not an SVG document"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
P
	[ "$(head -c 4 "$d/sw/deeper/fig-$f.pdf")" = "%PDF" ] || fail "fig-$f.pdf does not start with %PDF"
	pdftoppm -r 40 -gray -singlefile "$d/sw/deeper/fig-$f.pdf" "$d/fig-$f" 2>"$d/pdftoppm.err" ||
		fail "pdftoppm fig-$f.pdf: $(cat "$d/pdftoppm.err")"
	python3 - "$d/fig-$f.pgm" <<'P' || fail "fig-$f.pdf renders blank"
import sys
data = open(sys.argv[1], "rb").read()
# binary PGM: "P5\n<w> <h>\n255\n" then one byte per pixel
head = data.split(b"\n", 3)
assert head[0] == b"P5", head[0]
px = head[3]
dark = sum(1 for b in px if b < 128)
assert dark > 0.002 * len(px), (dark, len(px))
P
done
python3 - "$d/sw/deeper/index.html" $figs <<'P' || fail "index.html"
import re, sys
html = open(sys.argv[1]).read()
assert "<script" not in html.lower(), "a script"
assert not re.search(r"""(src|href)\s*=\s*["'](?!#)""", html), "a link outside the page"
assert "@import" not in html and "url(" not in html.replace("url(#", ""), "an outside resource"
assert html.count("<svg") == 7, html.count("<svg")
for f in sys.argv[2:]:
    assert 'id="%s"' % f in html and "fig-%s.pdf" % f in html, f
assert "sia[p=1,lambda_n=0.5]" in html and "&plusmn;" in html
P

# --- the other x rules -------------------------------------------------------
# --x arrival without --poisson: jobs/h measured from every seed's submits
check report-arrival 0 "" -- report --x arrival --json "${runs[@]}"
python3 - "$out" "${runs[@]}" <<'P' || fail "--x arrival: $(head -c 1500 "$out")"
import csv, json, sys
sweep = json.load(open(sys.argv[1]))
assert sweep["x"] == "arrival" and sweep["x_label"] == "arrival rate (jobs/h)"
for d in sys.argv[2:]:
    jobs = [j for j in csv.DictReader(open(d + "/jobs.csv")) if j["policy"] == "fifo"]
    rates = []
    for s in "123":
        t = [float(j["submit_s"]) for j in jobs if j["seed"] == s]
        rates.append((len(t) - 1) * 3600 / (max(t) - min(t)))
    want = sum(rates) / len(rates)
    got = next(p["x"] for p in sweep["points"] if p["dir"] == d and p["policy"] == "fifo")
    assert abs(got - want) < 1e-6 * want, (d, got, want)
# 39 gaps of 120 s at load 1: 30 jobs/h
assert abs(sweep["xs"][1] - 30.0) < 1e-9, sweep["xs"]
P
# --poisson RATE: the rate itself (times the load); auto finds it
for r in 30 60; do
	check "sim poisson $r" 0 "" -- "${sim[@]}" --cluster 2x8 --policy fifo --poisson $r \
		--out "$d/pois-$r"
done
check report-poisson 0 "" -- report --json "$d/pois-30" "$d/pois-60"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['x'] == 'arrival' and d['xs'] == [30.0, 60.0], d['xs']" "$out" ||
	fail "--poisson sweep: $(head -c 600 "$out")"
# cluster size: the GPUs of --cluster, a spec or a file; auto finds it; the CDF at the smallest
echo "3x8" >"$d/c24.txt"
check "sim 2x8" 0 "" -- "${sim[@]}" --cluster 2x8 --policy fifo --out "$d/c16"
check "sim c24" 0 "" -- "${sim[@]}" --cluster "$d/c24.txt" --policy fifo --out "$d/c24"
check report-gpus 0 "" -- report --json "$d/c24" "$d/c16"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['x'] == 'gpus' and d['xs'] == [16.0, 24.0] and d['cdf_x'] == 16.0, d" "$out" ||
	fail "--x gpus: $(head -c 600 "$out")"

# --- errors ------------------------------------------------------------------
check no-dir 2 "no DIR given" -- report
check one-run 2 "one run only" -- report "${runs[0]}"
check bad-x 2 "--x: expected load, arrival, gpus or auto, got 'size'" -- report --x size "${runs[@]}"
check bad-opt 2 "--bogus: unknown option" -- report --bogus "${runs[@]}"
check missing-dir 1 "$d/nope: No such file or directory" -- report "${runs[0]}" "$d/nope"
check not-a-dir 1 "$d/trace.csv: not a directory" -- report "${runs[0]}" "$d/trace.csv"
mkdir -p "$d/empty"
check no-summary 1 "$d/empty: no summary.json here" -- report "${runs[0]}" "$d/empty"
cp -r "${runs[1]}" "$d/nojobs" && rm "$d/nojobs/jobs.csv"
check no-jobs 1 "$d/nojobs: no jobs.csv here" -- report "${runs[0]}" "$d/nojobs"
cp -r "${runs[1]}" "$d/badjson" && echo '{"results": [' >"$d/badjson/summary.json"
check bad-json 1 "$d/badjson/summary.json:2:" -- report "${runs[0]}" "$d/badjson"
grep -qF "not valid JSON" "$err" || fail "bad-json: $(cat "$err")"
cp -r "${runs[1]}" "$d/old" && python3 - "$d/old/summary.json" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    del r["seeds"]["gpu_util"]
json.dump(d, open(sys.argv[1], "w"))
P
check old-summary 1 "no 'gpu_util' values (written by an older rubick sim" -- report "${runs[0]}" "$d/old"
cp "$d/trace.csv" "$d/other.csv"
check "sim other trace" 0 "" -- "${sim[@]}" --trace "$d/other.csv" --cluster 2x8 --policy fifo \
	--load 3 --out "$d/other"
check other-trace 1 "the runs differ in 'trace'" -- report "${runs[0]}" "$d/other"
grep -qF "${runs[0]}: $d/trace.csv; $d/other: $d/other.csv" "$err" || fail "other-trace: $(cat "$err")"
check two-vary 1 "several options differ between the runs (load, cluster)" -- report "$d/c24" "${runs[0]}"
check same-x 1 "none of load, poisson, cluster differs" -- report "$d/c16" "$d/c16"
check same-x-load 1 "both run fifo at load 1" -- report --x load "${runs[1]}" "${runs[1]}" "${runs[0]}"
check x-load-mismatch 1 "the runs differ in 'cluster'" -- report --x load "$d/c24" "${runs[0]}"

# runs without --seeds: one value per point, no interval
for l in 1 2; do
	check "sim plain $l" 0 "" -- sim --trace "$d/trace.csv" --oracle model --no-timing --cluster 2x8 \
		--policy fifo --load $l --out "$d/plain-$l"
done
check report-plain 0 "" -- report --json "$d/plain-1" "$d/plain-2"
python3 - "$out" "$d/plain-2/summary.json" <<'P' || fail "plain runs: $(head -c 600 "$out")"
import json, sys
d = json.load(open(sys.argv[1]))
s = json.load(open(sys.argv[2]))["results"][0]
p = d["points"][1]
assert p["n"] == 1 and p["avg_jct_s"]["values"] == [s["avg_jct_s"]] and p["avg_jct_s"]["half95"] == 0
assert p["gpu_hours"]["mean"] == s["gpu_hours"]
P

[ "$fails" -eq 0 ] && echo "cli_report: all passed"
exit $((fails > 0))
