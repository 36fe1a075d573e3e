#!/usr/bin/env bash
# summary.json's and report.html's provenance (docs/sim.md "Provenance"): the
# source commit (git rev-parse HEAD in a checkout), the build, the sha256 of
# every input (files as sha256sum, folders by the documented manifest,
# recomputed here), the UTC time from SOURCE_DATE_EPOCH, the host (uname -n),
# every repetition's seeds, options.workload_seed under --seeds, and what the
# workload seed draws, which differs between a trace with a seeded part and
# one without. stdout's --json carries none of it.
# Usage: test_cli_sim_provenance.sh PATH/TO/rubick   (RK_DATA_DIR gives the zoo)
set -uo pipefail
R=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
d=$work
src=$(dirname "${BASH_SOURCE[0]}")
export SOURCE_DATE_EPOCH=1764651662 # 2025-12-02T05:01:02Z

# Every job names its zoo model and run time: nothing of it is seeded.
cat >"$d/given.csv" <<'T'
name,submit_s,gpus,duration_s,model
a,0,1,600,bert
b,60,2,900,gpt2
c,120,4,300,vit
d,180,1,1200,roberta
T
# Sia/Pollux rows: the seeded mapping picks each model, the reader draws each run time.
cat >"$d/sia.csv" <<'T'
name,time,application,num_replicas,batch_size
s0,0,cifar10,1,128
s1,30,bert,2,12
s2,90,deepspeech2,1,20
s3,200,cifar10,2,256
T
# A --cluster file: an input like the trace.
echo "1x8:a800" >"$d/cluster.txt"
oracle=$RK_DATA_DIR/measured/rubick

sim=(sim --cluster "$d/cluster.txt" --policy fifo --oracle "measured=$oracle" --no-timing)
check given 0 "" -- "${sim[@]}" --trace "$d/given.csv" --out "$d/g" --json
grep -q '"meta"' "$out" && fail "--json on stdout carries meta"
grep -qF "$(uname -n)" "$out" && fail "--json on stdout carries the host name"
check sia 0 "" -- "${sim[@]}" --trace "$d/sia.csv" --seeds 1-3 --out "$d/s"
check pinned 0 "" -- "${sim[@]}" --trace "$d/sia.csv" --seeds 4-5 --policy-seed 9 \
	--sharing on --poisson 20 --elastic-share 0.5 --out "$d/p"

commit=""
if git -C "$src" rev-parse HEAD >/dev/null 2>&1; then
	commit=$(git -C "$src" rev-parse HEAD)
	git -C "$src" diff-index --quiet HEAD -- && dirty=false || dirty=true
else
	echo "cli_sim_provenance: not a git checkout: the commit check is skipped"
fi

python3 - "$d" "$oracle" "$RUBICK_ZOO" "$(uname -n)" "$commit" "${dirty:-}" \
	"$(sha256sum "$d/sia.csv" | cut -d' ' -f1)" \
	"$(sha256sum "$d/given.csv" | cut -d' ' -f1)" \
	"$(sha256sum "$d/cluster.txt" | cut -d' ' -f1)" \
	"$(sha256sum "$RK_DATA_DIR/interference/gavel_simulation_throughputs.json" | cut -d' ' -f1)" \
	<<'P' || fail "provenance"
import hashlib, json, os, stat, sys

d, oracle, zoo, host, commit, dirty, sia_sha, given_sha, cluster_sha, xi_sha = sys.argv[1:]
bad = []

def want(cond, what):
    if not cond:
        bad.append(what)

def dir_sha(top):
    """docs/sim.md "Provenance": regular files (after links; links to folders not entered),
    relative paths sorted bytewise, manifest lines '<sha256>  <path>\\n', sha256 of it."""
    rel = []
    for root, dirs, files in os.walk(top):
        for f in files:
            p = os.path.join(root, f)
            if os.path.isfile(p):
                rel.append(os.fsencode(os.path.relpath(p, top)))
    man = b""
    for r in sorted(rel):
        with open(os.path.join(os.fsencode(top), r), "rb") as fh:
            man += hashlib.sha256(fh.read()).hexdigest().encode() + b"  " + r + b"\n"
    return hashlib.sha256(man).hexdigest()

def meta(run):
    return json.load(open(f"{d}/{run}/summary.json"))["meta"]

def inputs(m):
    return {x["role"]: x for x in m["inputs"]}

g, s, p = meta("g"), meta("s"), meta("p")
for name, m in (("given", g), ("sia", s), ("pinned", p)):
    want(m.get("timestamp") == "2025-12-02T05:01:02Z", f"{name}: timestamp {m.get('timestamp')}")
    want(m.get("host") == host, f"{name}: host {m.get('host')} != {host}")
    src = m.get("source", {})
    if commit:
        want(src == {"from": "git", "commit": commit, "dirty": dirty == "true"},
             f"{name}: source {src}, want commit {commit} dirty {dirty}")
    else:
        want(src.get("from") == "release" and src.get("dirty") is None, f"{name}: {src}")
    b = m.get("build", {})
    want(b.get("type") and b.get("sanitize"), f"{name}: build {b}")
    i = inputs(m)
    want(i["oracle"]["kind"] == "dir" and i["oracle"]["sha256"] == dir_sha(oracle),
         f"{name}: oracle {i['oracle']} != {dir_sha(oracle)}")
    want(i["zoo"]["sha256"] == dir_sha(zoo), f"{name}: zoo {i['zoo']}")
    want(i["cluster"]["sha256"] == cluster_sha, f"{name}: cluster {i['cluster']}")

want(inputs(g)["trace"]["sha256"] == given_sha, f"given: trace {inputs(g)['trace']}")
want(inputs(s)["trace"]["sha256"] == sia_sha, f"sia: trace {inputs(s)['trace']}")
want("interference" not in inputs(s), "sia: an interference file without --sharing on")
xi = inputs(p).get("interference", {})
want(xi.get("sha256") == xi_sha and xi.get("path", "").endswith("gavel_simulation_throughputs.json"),
     f"pinned: interference {xi}")

# Every seed: one repetition without --seeds, three under 1-3, the pinned policy seed kept.
want(g["repetitions"] == [{"run": 1, "workload_seed": 0, "policy_seed": 0}], g["repetitions"])
want([(r["workload_seed"], r["policy_seed"]) for r in s["repetitions"]] == [(1, 1), (2, 2), (3, 3)],
     f"sia: {s['repetitions']}")
want(s["options"]["workload_seed"] == "1-3" and s["options"]["policy_seed"] == "1-3",
     f"sia: options seeds {s['options']['workload_seed']} {s['options']['policy_seed']}")
want(s["workload_seed"] == 1 == s["repetitions"][0]["workload_seed"], "sia: meta.workload_seed")
want([(r["workload_seed"], r["policy_seed"]) for r in p["repetitions"]] == [(4, 9), (5, 9)],
     f"pinned: {p['repetitions']}")
want(p["options"]["workload_seed"] == "4-5" and p["options"]["policy_seed"] == "9",
     f"pinned: options {p['options']['workload_seed']} {p['options']['policy_seed']}")
want(p["workload_seed"] == 4 and p["policy_seed"] == 9, "pinned: meta seeds")
want(g["options"]["workload_seed"] == "0" and g["workload_seed"] == 0, "given: seeds")

# What the workload seed draws, from this trace and these options.
gd, sd, pd = g["workload_seed_draws"], s["workload_seed_draws"], p["workload_seed_draws"]
want(gd.startswith("nothing: this native trace has no seeded part"), f"given: {gd}")
want("model mapping of 4 of 4 sia job(s)" in sd and "run-time draws of 4 sia job(s)" in sd
     and "Poisson" not in sd, f"sia: {sd}")
want("Poisson arrival times of all 4 job(s) (--poisson 20)" in pd and
     "--elastic-share 0.5:" in pd and "at workload seed 4" in pd, f"pinned: {pd}")
want(gd != sd, "the statement is the same with and without a seeded part")

html = open(f"{d}/s/report.html").read()
for part in (sd, host, "2025-12-02T05:01:02Z", sia_sha, commit or "release"):
    want(part.replace("'", "&#39;") in html, f"report.html lacks {part!r}")
want("seeds of every run" in html, "report.html: no seeds table")
if bad:
    print("\n".join(bad))
    sys.exit(1)
P

# Two identical runs give identical bytes: the clock is pinned (one --out path: the command
# line is recorded too).
for k in 1 2; do
	check again-$k 0 "" -- "${sim[@]}" --trace "$d/sia.csv" --seeds 1-3 --out "$d/x"
	mv "$d/x" "$d/x$k"
done
for f in summary.json report.html; do
	cmp -s "$d/x1/$f" "$d/x2/$f" || fail "$f differs between two identical runs"
done
# A malformed SOURCE_DATE_EPOCH is named, before the run.
SOURCE_DATE_EPOCH=soon check bad-epoch 1 "SOURCE_DATE_EPOCH: 'soon' is not a non-negative integer" \
	-- "${sim[@]}" --trace "$d/given.csv" --out "$d/e"
[ -e "$d/e/summary.json" ] && fail "bad-epoch: still wrote a summary"
# An input that goes away is named: the trace must exist to be hashed (checked by the run).
check no-trace 1 "$d/nope.csv" -- "${sim[@]}" --trace "$d/nope.csv" --out "$d/n"

[ "$fails" -eq 0 ] && echo "cli_sim_provenance: all passed"
exit $((fails > 0))
