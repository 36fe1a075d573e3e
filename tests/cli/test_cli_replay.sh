#!/usr/bin/env bash
# Replaying a site's accounting (docs/replay.md) on a realistic file: 1,000 Philly
# jobs (3,200 rows) as `sacct -P` prints them (scripts/gen-sacct.py, made here, not committed:
# steps, array tasks, pending, running, cancelled-before-start and CPU jobs, three
# malformed rows), on a cluster read from `scontrol show nodes -o` output
# (scripts/slurm-cluster.sh).
# - `rubick trace` reads exactly the generator's counts (jobs, steps, unfinished,
#   never ran, CPU jobs, GPU-hours) and, without --skip-bad, stops at the first bad
#   row with FILE:LINE:COL;
# - `rubick sim --policy fifo,sjf,rubick` completes every job under each policy and
#   says the black-box share on stderr and in summary.json.
# Usage: test_cli_replay.sh PATH/TO/rubick   (RK_SHARED_DIR gives the traces)
set -uo pipefail
R=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
src=${RK_SOURCE_DIR:?}
philly=${RK_SHARED_DIR:?}/traces/pollux-osdi21/philly.csv
[ -r "$philly" ] || { echo "SKIP: $philly not here"; exit 77; }
acct=$work/accounting.txt

python3 "$src/scripts/gen-sacct.py" "$philly" --jobs 1000 --bad 3 --seed 1 \
	--counts "$work/counts.json" >"$acct" || fail "gen-sacct.py: rc $?"
want() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$work/counts.json" "$1"; }
lines=$(($(wc -l <"$acct") - 1))
[ "$lines" = "$(want lines)" ] || fail "generator: $lines lines, its counts say $(want lines)"

# Every count as the generator made it.
"$R" trace "$acct" --skip-bad --json >"$out" 2>"$err" || fail "trace: rc $?: $(cat "$err")"
got() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$out" "$1"; }
for k in jobs:jobs steps:steps unfinished:unfinished unstarted:unstarted no_gpu:no_gpu \
	skipped:bad lines:lines black_box_jobs:jobs; do
	[ "$(got "${k%%:*}")" = "$(want "${k#*:}")" ] ||
		fail "trace: ${k%%:*} $(got "${k%%:*}"), the generator made $(want "${k#*:}")"
done
[ "$(got format)" = sacct ] || fail "trace: format $(got format)"
python3 -c "import sys; sys.exit(abs(float(sys.argv[1]) - float(sys.argv[2])) > 0.01)" \
	"$(got work_gpu_hours)" "$(want gpu_hours)" ||
	fail "trace: $(got work_gpu_hours) GPU-hours, the generator made $(want gpu_hours)"

# Without --skip-bad the first bad row stops the read, named by file, line and column.
first_bad=$(grep -n '|broken|' "$acct" | head -1 | cut -d: -f1)
check "bad row" 1 "$acct:$first_bad:" -- trace "$acct"
grep -qE "column '(Submit|Elapsed|AllocTRES)'" "$err" || fail "bad row: no column named: $(cat "$err")"

# The site's nodes: the emulated lab's shape (4 x 8 GPUs, 16 CPUs, 64000 MB) times four.
for n in $(seq 1 16); do
	echo "NodeName=n$n Arch=x86_64 CPUAlloc=0 CPUTot=16 CPULoad=0.00 Gres=gpu:v100:8(S:0-1) NodeAddr=127.0.0.1 RealMemory=64000 State=IDLE Partitions=gpu"
done >"$work/nodes.txt"
echo "NodeName=login CPUTot=8 Gres=(null) RealMemory=16000 State=IDLE" >>"$work/nodes.txt"
bash "$src/scripts/slurm-cluster.sh" "$work/nodes.txt" >"$work/cluster.txt" 2>"$err" ||
	fail "slurm-cluster.sh: $(cat "$err")"
grep -qx '16x8:v100,cpus=16,mem=64000' "$work/cluster.txt" || fail "cluster file: $(cat "$work/cluster.txt")"
grep -q 'left out, no GPU: login' "$work/cluster.txt" || fail "cluster file hides the CPU node"

jobs=$(want jobs)
"$R" sim --trace "$acct" --skip-bad --cluster "$work/cluster.txt" --policy fifo,sjf,rubick \
	--no-timing --out "$work/replay" >"$out" 2>"$err" || fail "replay: rc $?: $(cat "$err")"
for p in fifo sjf rubick; do
	grep -qE "^$p +.* $jobs/$jobs " "$out" || fail "replay: $p did not complete $jobs/$jobs: $(cat "$out")"
done
grep -qF "black boxes: $jobs of $jobs job(s), 100.0% of" "$err" || fail "replay: no black-box line: $(cat "$err")"
grep -qF "not replayed: $(want unfinished) unfinished job(s)" "$err" || fail "replay: unfinished not said: $(cat "$err")"
grep -q "\"black_box_jobs\": \"$jobs\"" "$work/replay/summary.json" || fail "summary.json: no black_box_jobs"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "replay of $jobs sacct jobs under fifo, sjf, rubick: ok"
