#!/usr/bin/env bash
# Issue 5 evaluation, capacity loaning + elastic scaling (Aryl/Lyra,
# docs/aryl.md): a 15-day window of Pollux's philly.csv (2017-10-09 ..
# 2017-10-23, 28,193 jobs), half of them (seeded) elastic, on a training
# cluster of 64x8 GPUs plus an inference cluster of the same size whose load
# follows the built-in diurnal series (trough 30 %, peak 90 % of its servers,
# one-day period, 5 % noise), 10-minute reclaim deadline.
# Policies: aryl vs aryl-noloan (no loaning, no elastic scaling: the paper's
# baseline), plus rubick with loaning. Prints a markdown table (average
# queueing time, average JCT, usage over the 15 days, reclaim preemptions per
# reclaimed server, the simulation's wall time per policy: budget 10 s) and
# the paper's ratios.
# Seeds: the workload has seeded parts (which jobs are elastic, the trace's
# model mapping) and so does the load series (its noise), so the run repeats
# over SEEDS (default RK_SEEDS, else 1-5; a range A-B or one seed N): seed s
# runs `--seed s` with the diurnal series' seed=s, as one seed's run always
# did. Each figure is the mean over the seeds ± the half-width of its 95%
# Student t interval; each ratio is the mean over the seeds of that seed's
# ratio (both policies on the same seed) ± its half-width. `rubick sim
# --seeds` is not used: it would keep the load series' seed fixed, and its
# "seeds" block has no queueing or loan figures. Needs python3.
#   usage: scripts/eval-aryl.sh [BUILD_DIR] [SEEDS]   (default build, RK_SEEDS or 1-5)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$here/scripts${PYTHONPATH:+:$PYTHONPATH}"  # seedstats.py
build=${1:-build}
seeds=${2:-${RK_SEEDS:-1-5}}
rubick="$here/$build/src/cli/rubick"
shared=${RK_SHARED_DIR:-$here/../shared}
[ -x "$rubick" ] || { echo "eval-aryl: $rubick not built (meson setup $build && ninja -C $build)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "eval-aryl: needs python3" >&2; exit 1; }
if [[ "$seeds" =~ ^([0-9]+)-([0-9]+)$ ]]; then
	first=${BASH_REMATCH[1]} last=${BASH_REMATCH[2]}
elif [[ "$seeds" =~ ^[0-9]+$ ]]; then
	first=$seeds last=$seeds
else
	echo "eval-aryl: SEEDS=$seeds: want A-B or N" >&2
	exit 2
fi
[ "$first" -le "$last" ] || { echo "eval-aryl: SEEDS=$seeds: empty range" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The window: timestamps are "YYYY-MM-DD hh:mm:ss", so string order is time order.
awk -F, 'NR == 1 || ($1 >= "2017-10-09" && $1 < "2017-10-24")' \
	"$shared/traces/pollux-osdi21/philly.csv" >"$tmp/window.csv"
cluster="64x8:v100+64x8:v100,pool=loaned"
load="diurnal:peak=0.9,trough=0.3,period=86400,noise=0.05,seed=S"
echo "jobs: $(($(wc -l <"$tmp/window.csv") - 1)), cluster $cluster, --inference $load, --reclaim-deadline 600, --elastic-share 0.5, --seed S, S = $seeds"
echo
for ((s = first; s <= last; s++)); do
	"$rubick" sim --trace "$tmp/window.csv" --cluster "$cluster" --inference "${load%=S}=$s" \
		--reclaim-deadline 600 --elastic-share 0.5 --seed "$s" --policy aryl,aryl-noloan,rubick \
		--json 2>/dev/null
	echo
done >"$tmp/runs.jsonl"
python3 - "$tmp/runs.jsonl" <<'PY'
import json, math, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
from seedstats import fig, stat  # scripts/seedstats.py: the statistics rubick reports print
# policy -> figure -> one value per seed, in seed order
per = {}
for d in runs:
    for r in d["results"]:
        l = r["loan"]
        f = per.setdefault(r["policy"], {})
        for k, v in (("queue", r["avg_queue_s"]), ("jct", r["avg_jct_s"]),
                     ("tu", l["training_usage"]), ("cu", l["cluster_usage"]),
                     ("per", l["preemptions_per_reclaimed_server"]), ("wall", r["wall_s"])):
            f.setdefault(k, []).append(v)
print("| policy | avg queueing (h) | avg JCT (h) | training usage (of training+lent) | cluster usage (training+inference) | reclaim preemptions / reclaimed server | sim wall (s) |")
print("|---|---|---|---|---|---|---|")
for p, f in per.items():
    print("| %s | %s | %s | %s | %s | %s | %s |" % (p, fig([x / 3600 for x in f["queue"]], "%.2f"),
        fig([x / 3600 for x in f["jct"]], "%.2f"), fig([x * 100 for x in f["tu"]], "%.1f", unit="%"),
        fig([x * 100 for x in f["cu"]], "%.1f", unit="%"), fig(f["per"], "%.3f"), fig(f["wall"], "%.1f")))
def ratio(a, b, k):  # b's figure over a's, seed by seed
    return fig([y / x for x, y in zip(per[a][k], per[b][k])], "%.2f", unit="x")
print()
print("%d seeds; ratios: mean over the seeds of each seed's ratio ± 95%% half-width" % len(runs))
print("aryl vs aryl-noloan: queueing %s lower, avg JCT %s lower, cluster usage %s points" % (
    ratio("aryl", "aryl-noloan", "queue"), ratio("aryl", "aryl-noloan", "jct"),
    fig([(x - y) * 100 for x, y in zip(per["aryl"]["cu"], per["aryl-noloan"]["cu"])], "%+.1f", "%.1f")))
print("rubick: avg JCT %s lower than aryl-noloan, %s lower than aryl" % (
    ratio("rubick", "aryl-noloan", "jct"), ratio("rubick", "aryl", "jct")))
PY
