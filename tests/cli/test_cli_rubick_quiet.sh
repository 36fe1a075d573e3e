#!/usr/bin/env bash
# Rubick's quiet rounds (src/policy/rubick/rubick_quiet.c): rounds that provably
# decide nothing are answered without being run, which must leave every
# decision as it was. A contended trace (many more GPUs asked for than the
# 16 there are, some jobs guaranteed, waits long enough that jobs turn
# starving) replayed with quiet=on (the default) and quiet=off gives
# byte-identical jobs.csv and samples.csv for rubick, its two ablations,
# order=fifo and guaranteed=reconfigure with --refit.
set -uo pipefail
R=$1
. "$(dirname "$0")/lib.sh"
python3 "$(dirname "$0")/contended_trace.py" "$work/contended.csv" 12345 160 60 900 7 ||
	fail "could not write the trace"
# Two cases where a round with nothing in the change feed must still act:
# B waits behind the shorter A until B turns starving (age > 200,000 s, A
# younger) and then takes GPUs from A; D waits while A, which gave C one of
# its three nodes, pays its restart on the other two (a job restarting on
# several nodes is no victim, rubick_shrink.c may_lose_now), and takes a node
# of A's once that restart ends (no job arrives or finishes then).
head=$(head -1 "$work/contended.csv")
printf '%s\nX,0,1000,bert,bert,8,1000,32,0,0,32,,0,0,,,\nB,10,5000000,bert,bert,4,1000,16,0,0,32,,0,0,,,\nA,500,1000000,bert,bert,8,1000,32,0,0,32,,0,0,,,\n' \
	"$head" >"$work/starve.csv"
printf '%s\nA,0,1000000,bert,bert,24,1000,96,0,0,96,,0,0,,,\nC,1000,2000,bert,bert,8,1000,32,0,0,32,,0,0,,,\nD,1100,50000,vit,vit,8,1000,32,0,0,64,,0,0,,,\n' \
	"$head" >"$work/restart.csv"
trace=$work/contended.csv cluster=2x8:v100
quiet_same rubick rubick
quiet_same plan-only rubick-plan-only
quiet_same res-only rubick-res-only
quiet_same fifo 'rubick[order=fifo]'
quiet_same reconfigure 'rubick[guaranteed=reconfigure]' --refit
trace=$work/starve.csv cluster=1x8:v100
quiet_same starve rubick
trace=$work/restart.csv cluster=3x8:v100
quiet_same restart rubick
start_s() { awk -F, -v n="$2" '$3 == n {print $7}' "$work/$1-on/jobs.csv"; }
[ "$(start_s starve B)" = 200040.000 ] || fail "starve: B started at $(start_s starve B), want 200040.000"
[ "$(start_s restart D)" = 1260.000 ] || fail "restart: D started at $(start_s restart D), want 1260.000"
# The case is contended (else nothing was skipped): jobs queued, some for longer
# than rubick's starvation age (200,000 s).
python3 - "$work/rubick-on.json" "$work/rubick-on/jobs.csv" <<'PY' || fail "the trace is not contended"
import csv, json, sys
r = json.load(open(sys.argv[1]))["results"][0]
rows = list(csv.DictReader(open(sys.argv[2])))
waits = [float(x["first_start_s"]) - float(x["submit_s"]) for x in rows]
assert r["completed"] == 160, r["completed"]
assert r["max_queue_len"] >= 40, r["max_queue_len"]
assert max(waits) > 200000, max(waits)
PY
[ "$fails" -eq 0 ] && echo "cli_rubick_quiet: ok"
exit "$fails"
