#!/usr/bin/env bash
# Trace-native speeds (issue 14, docs/oracle.md "Trace-native speeds"): a
# Gavel job runs its steps at its throughput file's speed for its GPU type
# and GPU count (hand-computed from data/interference/*.json), a Shockwave
# job keeps its run time on v100 and scales by the file on other types, a
# Synergy job keeps Synergy's length, jobs that still run a stand-in's steps
# are warned about with their count, and `rubick trace` prints the work at
# the request in GPU-hours.
# Usage: test_cli_native.sh PATH/TO/rubick   (RK_DATA_DIR gives the zoo)
set -uo pipefail
R=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
d=$work
tab=$'\t'

# jct_s of job NAME in DIR/jobs.csv is WANT within 2 ms (completions round up to the ms).
jct_is() {
	local what=$1 dir=$2 name=$3 want=$4
	local got
	got=$(awk -F, -v n="$name" 'NR > 1 && $3 == n { print $9 }' "$dir/jobs.csv")
	awk -v g="$got" -v w="$want" 'BEGIN { d = g - w; exit !(g != "" && d < 0.002 && d > -0.002) }' ||
		fail "$what: $name jct '$got', want $want"
}

sim() { # NAME CLUSTER TRACE [ARGS...]: rubick sim fifo into $d/NAME
	local name=$1 cl=$2 tr=$3
	shift 3
	"$R" sim --trace "$tr" --cluster "$cl" --policy fifo --no-timing --check \
		--out "$d/$name" "$@" >"$d/$name.txt" 2>"$d/$name.err" ||
		fail "$name: rc $?: $(cat "$d/$name.err")"
}

# Gavel (7 fields: job_type, command, num_steps_arg, needs_data_dir, total_steps,
# arrival, scale_factor). ResNet-50 (batch size 64) runs 4.394774823323071 steps/s on
# 1 v100, 0.6190282202246573 on 1 k80, 9.451949566394442 on 4 v100 (whatever the
# nodes); Recommendation (batch size 512) has no 2-GPU key: 2 x its 1-GPU 23.3176...
{
	echo "ResNet-50 (batch size 64)${tab}python3 main.py${tab}-n${tab}1${tab}43948${tab}0${tab}1"
	echo "ResNet-50 (batch size 64)${tab}python3 main.py${tab}-n${tab}1${tab}94520${tab}0${tab}4"
	echo "Recommendation (batch size 512)${tab}python3 train.py${tab}-n${tab}1${tab}20000${tab}0${tab}2"
} >"$d/g.trace"
sim gv100 2x4:v100 "$d/g.trace"
jct_is gavel-v100 "$d/gv100" gavel-1 10000.057
jct_is gavel-v100 "$d/gv100" gavel-2 10000.053
jct_is gavel-v100 "$d/gv100" gavel-3 428.860
grep -qF "trace-native speeds:" "$d/gv100.err" || fail "gavel: no trace-native line: $(cat "$d/gv100.err")"
grep -qF "warning:" "$d/gv100.err" && fail "gavel: warned although every type is known"
sim gk80 1x8:k80 "$d/g.trace"
jct_is gavel-k80 "$d/gk80" gavel-1 70995.148
# a type the file lacks runs at the reference type's (v100) speed
sim ga800 1x8:a800 "$d/g.trace"
jct_is gavel-a800 "$d/ga800" gavel-1 10000.057
grep -qF "warning: GPU type(s) a800 not in" "$d/ga800.err" || fail "gavel-a800: no type warning: $(cat "$d/ga800.err")"
grep -qF "warning: GPU type" "$d/gk80.err" && fail "gavel-k80: warned about a type the file has"

# Shockwave (12 fields): the run time is the length on v100 (LM (batch size 10) at
# 94.91094148 steps/s), and on k80 (24.737547489916363) it takes 1000 x 94.91/24.74.
echo "LM (batch size 10)${tab}python3 main.py${tab}lm${tab}--steps${tab}1${tab}5${tab}1${tab}gns${tab}1${tab}-1.000000${tab}1000${tab}0" >"$d/s.trace"
sim sv100 1x4:v100 "$d/s.trace"
jct_is shockwave-v100 "$d/sv100" gavel-1 1000
grep -qF "shockwave_tacc_throughputs.json" "$d/sv100.err" || fail "shockwave: not the tacc file: $(cat "$d/sv100.err")"
sim sk80 1x4:k80 "$d/s.trace"
jct_is shockwave-k80 "$d/sk80" gavel-1 3836.716

# Synergy: lstm 1.2 M iterations x 0.011 s = 13,200 s (not 1.2 M GPT-2 steps).
echo "0,lstm,0.0,1200000,1" >"$d/y.csv"
sim syn 1x8:v100,cpus=24,mem=500G "$d/y.csv"
jct_is synergy "$d/syn" lstm-0 13200

# Unknown models with only steps: a warning with the count, in sim and in trace.
{
	echo "MyNet (batch size 7)${tab}python3 a.py${tab}-n${tab}1${tab}1000${tab}0${tab}1"
	echo "OtherNet${tab}python3 b.py${tab}-n${tab}1${tab}1000${tab}0${tab}1"
	echo "ResNet-50 (batch size 64)${tab}python3 main.py${tab}-n${tab}1${tab}43948${tab}0${tab}1"
} >"$d/u.trace"
check sim-warning 0 "rubick sim: warning: 2 of 3 jobs name models the zoo lacks" -- \
	sim --trace "$d/u.trace" --cluster 1x8:v100 --policy fifo
grep -qF "MyNet (batch size 7) x 1, OtherNet x 1" "$err" || fail "sim-warning names: $(cat "$err")"
check trace-warning 0 "rubick trace: warning: 2 of 3 jobs name models the zoo lacks" -- trace "$d/u.trace"
check none-warning 0 "rubick sim: warning: 3 of 3 jobs" -- \
	sim --trace "$d/u.trace" --cluster 1x8:v100 --policy fifo --throughputs none

# Work at the request: Gavel steps x 1 / steps/s x GPUs on v100
# (10000.0573 + 4 x 10000.0534 + 2 x 428.8600) / 3600 = 14.1272 GPU-hours.
check trace-work 0 "" -- trace "$d/g.trace"
grep -qE "^work +14\.1 GPU-hours at the request \(0 jobs by run time 0\.0, 3 by throughput file steps 14\.1," "$out" ||
	fail "trace work: $(cat "$out")"
check trace-work-json 0 "" -- trace "$d/y.csv" --json
python3 -c "import json,sys; w=json.load(open(sys.argv[1]))['work_gpu_hours']; assert abs(w - 13200/3600) < 1e-9, w" "$out" ||
	fail "trace work json: $(cat "$out")"

# Bad --throughputs values.
check bad-file 1 "--throughputs: " -- sim --trace "$d/g.trace" --cluster 1x8:v100 --policy fifo --throughputs "$d/nope.json"
echo '{"v100": {"(bad key)": {"null": 1}}}' >"$d/bad.json"
check bad-key 1 "expected a key" -- sim --trace "$d/g.trace" --cluster 1x8:v100 --policy fifo --throughputs "$d/bad.json"
echo '{"p100": {"(\u0027A\u0027, 1)": {"null": 1}}}' >"$d/noref.json"
check no-ref 1 "reference GPU type 'v100' is not in the file" -- \
	trace "$d/g.trace" --throughputs "$d/noref.json"
check no-value 2 "--throughputs: needs" -- trace "$d/g.trace" --throughputs

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "ok"
