#!/usr/bin/env bash
# The fidelity table (docs/fidelity.md): every row of
# docs/references.md §8 that `rubick sim` can replay, run with the
# same trace, cluster, round length, restart cost and policy as the peer's own
# simulator, printed with the peer's figure, ours and the ratio (ours / peer)
# for average JCT and makespan. Rows that cannot be replayed yet are listed
# with what they need.
#   usage: scripts/fidelity.sh [BUILD_DIR] [--check] [FILTER]   (default build)
# FILTER keeps the rows whose "peer row" text contains it (e.g. 'trace3').
# --check exits 1 when a row marked `in` falls outside the band (±15 %).
# A row whose trace has a seeded part (its native form differs between workload
# seeds 1 and 2: the model mapping, duration draws) runs over RK_SEEDS (default 1-5,
# `rubick sim --seeds`): ours is the mean over the seeds of the row's mean over its
# files, ± the half-width of its 95% Student t interval; the band checks the mean.
# Needs python3 (reads rubick sim --json).
#
# A row is one line of the table below: peer | row | trace (glob under
# ../shared/traces; several files = mean over them, as the peer reports) |
# policy | policy options | peer avg JCT (s) | peer makespan (s, or -) |
# expect (in = inside the band; out = outside, the difference is named in
# docs/fidelity.md). Every row of one peer runs with that peer's settings
# (PEER_ARGS): no constant is set for one row.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
export PYTHONPATH="$here/scripts${PYTHONPATH:+:$PYTHONPATH}"  # seedstats.py
build=build
check=0
filter=
for a in "$@"; do
	if [ "$a" = --check ]; then
		check=1
	elif [ "$build" = build ] && [ -z "$filter" ] && { [ -x "$a/src/cli/rubick" ] || [ -x "$here/$a/src/cli/rubick" ]; }; then
		build=$a
	else
		filter=$a
	fi
done
case $build in
/*) rubick="$build/src/cli/rubick" ;;
*) rubick="$here/$build/src/cli/rubick" ;;
esac
shared=${RK_SHARED_DIR:-$here/../shared}
seeds=${RK_SEEDS:-1-5}
[ -x "$rubick" ] || { echo "fidelity: $rubick not built (meson setup $build && ninja -C $build)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "fidelity: needs python3" >&2; exit 1; }

# The peers' settings (docs/references.md §8): cluster, round, restart cost.
#  muri:   Muri simulator, cluster_spec/n8g8.csv; event-driven (no round);
#          no restart delay (it charges a per-model start overhead per event,
#          not modelled: docs/fidelity.md).
#  rubick: the Rubick artifact's simulator.py flags (8 nodes x 8 GPUs, 96 CPUs,
#          1600 GB, 400/100 GB/s, --interval 60) and its 260 s restart delay.
#  pollux: adaptdl osdi21-artifact simulator, 16 nodes x 4 T4, 60 s rounds;
#          its jobs as Sia's (sia_jobs below: Sia's simulator descends from
#          Pollux's and shares its profiles and validation targets).
#  sia-paper: Sia paper Table 4 (homogeneous 64 T4, Philly workloads), the
#          same settings as pollux (Sia's simulator descends from Pollux's).
#  sia:    Sia artifact's multi_simulator.py on its heterogeneous cluster
#          (6x4 T4 + 2x8 A100 + 3x8 RTX 2080Ti), 60 s rounds; sia_jobs: Sia's
#          per-model restart penalties (docs/references.md: imagenet 250 s, bert
#          120 s, yolov3 45 s, deepspeech2 25 s, others 30 s), its per-type
#          profiles, jobs run to their validation target (--job-length
#          sia-target, docs/oracle.md "GPU types").
#  synergy: Synergy's runner.py, 4 servers x 8 V100, 24 CPUs, 500 GB each;
#          jobs keep Synergy's own lengths (docs/trace-format.md).
#  shockwave: Shockwave's pickled results, 32 V100 (8x4), 120 s rounds, its
#          TACC throughput file (--throughputs auto picks it).
#  shockwave-gavel: the same with no restart cost, as Gavel's simulator (which
#          Shockwave's extends) advances a scheduled job for the whole round.
sia_restart="30,imagenet=250,bert=120,yolov3=45,deepspeech2=25"
sia_jobs="--restart-cost $sia_restart --oracle measured=$shared/traces/sia-artifacts/profiles --job-length sia-target"
declare -A PEER_ARGS=(
	[pollux]="--cluster 16x4:t4 --interval 60 $sia_jobs"
	[sia-paper]="--cluster 16x4:t4 --interval 60 $sia_jobs"
	[muri]="--cluster 8x8:v100 --restart-cost 0"
	[sia]="--cluster 6x4:t4+2x8:a100+3x8:2080ti --interval 60 $sia_jobs"
	[synergy]="--cluster 4x8:v100,cpus=24,mem=500G"
	[shockwave]="--cluster 8x4:v100 --interval 120"
	[shockwave-gavel]="--cluster 8x4:v100 --interval 120 --restart-cost 0"
	[rubick]="--cluster 8x8:a800,cpus=96,mem=1600G,nvlink=400,net=100 --interval 60 --restart-cost 260"
)
# Muri's Tiresias (dlas-gpu): 3 queues split at 3,250 and 7,200 GPU-seconds,
# its queue discipline; its SRTF (shortest) and SRSF (shortest-gpu, by
# remaining GPU-time) re-place every job at every event (repack=on).
muri_tiresias="queues_gpu_s=3250:7200,queue_order=running-first"
muri_srtf="repack=on"
muri_srsf="by=gpu-time,repack=on"
rows=$(cat <<ROWS
muri|trace1 SRTF|muri/trace-data/trace1.csv|srtf|$muri_srtf|1370603|26045466|in
muri|trace1 SRSF|muri/trace-data/trace1.csv|srtf|$muri_srsf|980141|26065759|in
muri|trace1 Tiresias|muri/trace-data/trace1.csv|tiresias|$muri_tiresias|3330371|23556410|in
muri|trace2 SRTF|muri/trace-data/trace2.csv|srtf|$muri_srtf|2670000|48800000|in
muri|trace2 SRSF|muri/trace-data/trace2.csv|srtf|$muri_srsf|2210000|49000000|in
muri|trace2 Tiresias|muri/trace-data/trace2.csv|tiresias|$muri_tiresias|7400000|48100000|in
muri|trace3 SRTF|muri/trace-data/trace3.csv|srtf|$muri_srtf|193082|8170000|in
muri|trace3 SRSF|muri/trace-data/trace3.csv|srtf|$muri_srsf|185022|8170000|in
muri|trace3 Tiresias|muri/trace-data/trace3.csv|tiresias|$muri_tiresias|347213|8170000|in
rubick|base Rubick|rubick/workloads/workload-base.csv|rubick||3638.3|58680|out
rubick|bp Rubick|rubick/workloads/workload-bp.csv|rubick||3638.3|58680|out
rubick|mt Rubick|rubick/workloads/workload-mt.csv|rubick||4017.3|60780|out
rubick|base AntMan|rubick/workloads/workload-base.csv|antman||8448|72480|out
rubick|mt AntMan|rubick/workloads/workload-mt.csv|antman||8644|71940|out
rubick|base Synergy|rubick/workloads/workload-base.csv|synergy-fifo||6104|80700|out
rubick|mt Synergy|rubick/workloads/workload-mt.csv|synergy-fifo||6104|80700|out
pollux|load 1.0 Tiresias, mean of 8|pollux-osdi21/workloads/workload-*.csv|tiresias||4032|87120|out
pollux|load 0.5 Tiresias, mean of 8|pollux-osdi21/workloads-0.5/workload-*.csv|tiresias||2088|-|out
pollux|load 1.5 Tiresias, mean of 8|pollux-osdi21/workloads-1.5/workload-*.csv|tiresias||6192|-|out
pollux|load 2.0 Tiresias, mean of 8|pollux-osdi21/workloads-2.0/workload-*.csv|tiresias||10044|-|out
pollux|load 1.0 Pollux, mean of 8|pollux-osdi21/workloads/workload-*.csv|pollux||2736|60480|out
pollux|load 0.5 Pollux, mean of 8|pollux-osdi21/workloads-0.5/workload-*.csv|pollux||1548|-|out
pollux|load 1.5 Pollux, mean of 8|pollux-osdi21/workloads-1.5/workload-*.csv|pollux||3672|-|in
pollux|load 2.0 Pollux, mean of 8|pollux-osdi21/workloads-2.0/workload-*.csv|pollux||5292|-|in
sia-paper|philly/ Pollux on 64 T4, mean of 8|sia-artifacts/workloads/philly/workload-*.csv|pollux||7200|78120|out
sia-paper|philly/ Sia on 64 T4, mean of 8|sia-artifacts/workloads/philly/workload-*.csv|sia||6840|77040|out
sia|philly/ Sia, heterogeneous, mean of 8|sia-artifacts/workloads/philly/workload-*.csv|sia||3096|57600|out
sia|saturn/ Sia, heterogeneous, mean of 10|sia-artifacts/workloads/saturn/workload-*.csv|sia||3564|61560|out
synergy|static_100job FIFO (FIFO-fair)|synergy/static_100job_6_3_1100.0.csv|fifo||20268|-|in
shockwave|120 jobs, Gavel LAS (max_min_fairness) vs Tiresias|shockwave/traces/120_*.trace|tiresias||11274|33208|in
shockwave-gavel|120 jobs, Gavel LAS (max_min_fairness), no restart cost|shockwave/traces/120_*.trace|gavel|round_s=120|11274|33208|out
shockwave-gavel|120 jobs, Themis (finish_time_fairness) vs gavel-ftf, no restart cost|shockwave/traces/120_*.trace|gavel-ftf|round_s=120|11302|31929|in
shockwave-gavel|120 jobs, max_sum_throughput_perf vs gavel-tput, no restart cost|shockwave/traces/120_*.trace|gavel-tput|round_s=120|9655|31909|in
shockwave-gavel|120 jobs, OSSP (min_total_duration) vs gavel-makespan, no restart cost|shockwave/traces/120_*.trace|gavel-makespan|round_s=120|19807|24205|in
sia|saturn/ Gavel (max_sum_throughput_perf, 360 s rounds), heterogeneous, mean of 10|sia-artifacts/workloads/saturn/workload-*.csv|gavel-tput|round_s=360|6588|101520|out
sia-paper|philly/ Gavel+TunedJobs on 64 T4, mean of 8|sia-artifacts/workloads/philly/workload-*.csv|gavel-tput|round_s=360|15480|159480|out
ROWS
)
# Rows not replayable today, and what they need.
pending=$(cat <<'PENDING'
synergy|FIFO-tune, TETRIS, FTF|not replayable: Synergy's CPU/memory tuning (synergy-fifo/-srtf replay its allocator on our measured speeds, not on its profiles)
shockwave|Shockwave, AlloX, Gandiva-Fair, OSSP|not replayable: no such policies (Themis is Gavel's finish_time_fairness: the gavel-ftf row)
muri|trace3 Muri-S|not replayable: no Muri (multi-resource interleaving) policy
pollux|Optimus+Oracle|not replayable: no Optimus policy
PENDING
)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| peer | row | our policy | peer avg JCT (s) | ours | ratio | peer makespan (s) | ours | ratio | ±15 % |"
echo "|---|---|---|---|---|---|---|---|---|---|"
fail=0
while IFS='|' read -r peer row glob policy opts pjct pmk expect; do
	[ -n "$peer" ] || continue
	[ -z "$filter" ] || [[ "$peer $row" == *"$filter"* ]] || continue
	files=("$shared"/traces/$glob)
	[ -f "${files[0]}" ] || { echo "fidelity: no trace $shared/traces/$glob" >&2; exit 1; }
	seeded=()
	if ! cmp -s <("$rubick" trace "${files[0]}" --workload-seed 1 --native 2>/dev/null) \
		<("$rubick" trace "${files[0]}" --workload-seed 2 --native 2>/dev/null); then
		seeded=(--seeds "$seeds")
	fi
	for f in "${files[@]}"; do
		# shellcheck disable=SC2086
		"$rubick" sim --trace "$f" ${PEER_ARGS[$peer]} --policy "$policy" \
			${opts:+--policy-options "$opts"} --no-timing --json "${seeded[@]}" 2>/dev/null
	done >"$tmp/out.json"
	line=$(python3 - "$tmp/out.json" "$pjct" "$pmk" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
dec, i, runs = json.JSONDecoder(), 0, []
while i < len(text):
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    obj, i = dec.raw_decode(text, i)
    runs.append(obj["results"][0])
# per seed (one without --seeds): the mean over the row's files; then over the seeds
from seedstats import t975  # scripts/seedstats.py: the statistics rubick reports print
def per_seed(r, k):
    return r["seeds"][k]["values"] if "seeds" in r else [r[k]]
def stat(k):
    n = len(per_seed(runs[0], k))
    v = [sum(per_seed(r, k)[s] for r in runs) / len(runs) for s in range(n)]
    m = sum(v) / n
    if n < 2:
        return m, None
    sd = (sum((x - m) ** 2 for x in v) / (n - 1)) ** 0.5
    return m, t975(n - 1) * sd / n ** 0.5
jct, jh = stat("avg_jct_s")
mk, mh = stat("makespan_s")
pj = float(sys.argv[2])
pm = None if sys.argv[3] == "-" else float(sys.argv[3])
rj = jct / pj
rm = None if pm is None else mk / pm
inside = abs(rj - 1) <= 0.15 and (rm is None or abs(rm - 1) <= 0.15)
fmt = lambda x: f"{x:,.0f}"
pm_ = lambda x, h: fmt(x) if h is None else f"{x:,.0f} ± {h:,.0f}"
print("|".join([fmt(pj), pm_(jct, jh), f"{rj:.2f}", "-" if pm is None else fmt(pm), pm_(mk, mh),
                "-" if rm is None else f"{rm:.2f}", "yes" if inside else "no"]))
PY
)
	IFS='|' read -r a b rj c d rm inside <<<"$line"
	pol=$policy${opts:+ ($opts)}
	echo "| $peer | $row | \`$pol\` | $a | $b | $rj | $c | $d | $rm | $inside |"
	if [ "$check" = 1 ] && [ "$expect" = in ] && [ "$inside" != yes ]; then
		echo "fidelity: $peer $row: ratio $rj / $rm outside ±15 %" >&2
		fail=1
	fi
done <<<"$rows"
echo
while IFS='|' read -r peer row why; do
	[ -z "$filter" ] || [[ "$peer $row" == *"$filter"* ]] || continue
	echo "- $peer, $row: $why"
done <<<"$pending"
exit $fail
