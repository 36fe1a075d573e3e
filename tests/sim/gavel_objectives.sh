#!/usr/bin/env bash
# Gavel's objectives do what they say on Shockwave's 120-job trace (8x4 V100, 120 s rounds,
# no restart cost, as the fidelity rows run them): every job completes under each policy;
# gavel-makespan (min_total_duration) gives the smallest makespan of the four and
# gavel-tput (max_sum_throughput_perf) a smaller average JCT than gavel-makespan; a bad
# option is refused naming it; a job a GPU type cannot hold (Gavel's throughput file
# measures 0 for it there) ends the run with a message naming the job and the type, never
# an abort (docs/policies.md "Gavel").
# usage: gavel_objectives.sh RUBICK
set -euo pipefail
rubick=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
shared=${RK_SHARED_DIR:-$here/../../../shared}
trace=$(ls "$shared"/traces/shockwave/traces/120_*.trace)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for p in gavel gavel-ftf gavel-tput gavel-makespan; do
	"$rubick" sim --trace "$trace" --cluster 8x4:v100 --interval 120 --restart-cost 0 \
		--policy "$p" --policy-options round_s=120 --no-timing --json \
		>"$tmp/$p.json" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
done
python3 - "$tmp" <<'PY'
import json, sys
r = {p: json.load(open(f"{sys.argv[1]}/{p}.json"))["results"][0]
     for p in ["gavel", "gavel-ftf", "gavel-tput", "gavel-makespan"]}
bad = []
for p, x in r.items():
    print(f"{p}: avg JCT {x['avg_jct_s']:.0f} s, makespan {x['makespan_s']:.0f} s")
    if x["completed"] != 120:
        bad.append(f"{p} completed {x['completed']} of 120 jobs")
mk = r["gavel-makespan"]["makespan_s"]
for p in ["gavel", "gavel-ftf", "gavel-tput"]:
    if not mk < r[p]["makespan_s"]:
        bad.append(f"gavel-makespan's makespan {mk:.0f} s is not below {p}'s {r[p]['makespan_s']:.0f} s")
if not r["gavel-tput"]["avg_jct_s"] < r["gavel-makespan"]["avg_jct_s"]:
    bad.append("gavel-tput's average JCT is not below gavel-makespan's")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
# A bad option: refused, naming the policy and the option.
if "$rubick" sim --trace "$trace" --cluster 8x4:v100 --policy gavel-tput \
	--policy-options rounds=5 --no-timing >/dev/null 2>"$tmp/err"; then
	echo "FAIL: gavel-tput accepted rounds=5" >&2; exit 1
fi
grep -q "gavel-tput: unknown option 'rounds'" "$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
# A type with no throughput for a job: a clear refusal (exit 1), not an abort.
rc=0
"$rubick" sim --trace "$shared/traces/gavel/physical_cluster/max_min_fairness.trace" \
	--cluster 2x8:v100+2x8:p100+2x8:k80 --policy gavel --no-timing >/dev/null 2>"$tmp/err" || rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
	echo "FAIL: gavel on a type without throughput exited $rc (an abort?)" >&2; cat "$tmp/err" >&2; exit 1
fi
if [ "$rc" -eq 1 ] && ! grep -q "measures no throughput on .* k80 GPUs" "$tmp/err"; then
	echo "FAIL: the refusal does not name the type" >&2; cat "$tmp/err" >&2; exit 1
fi
echo ok
