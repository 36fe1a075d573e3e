#!/usr/bin/env bash
# Sia's quiet rounds (src/policy/sia/sia_quiet.c): after a constrained round that
# decided nothing, the rounds proven to repeat it are not run, which must
# leave every decision as it was. Contended traces (many more GPUs asked for
# than there are, so nearly every round is constrained, and jobs that run
# long enough for the restart factor to make moves worth their restart)
# replayed with quiet=on (the default) and quiet=off give byte-identical
# jobs.csv and samples.csv; the same with --first-start paid, a short restart
# penalty (restart_s=30: factors cross often) and p > 0; and two shared
# traces (below).
set -uo pipefail
R=$1
. "$(dirname "$0")/lib.sh"
python3 "$(dirname "$0")/contended_trace.py" "$work/contended.csv" 4242 120 30 600 ||
	fail "could not write the trace"
trace=$work/contended.csv cluster=2x8:v100
quiet_same sia sia
quiet_same paid sia --first-start paid
quiet_same request sia --gpu-range request
quiet_same short 'sia[restart_s=30]'
quiet_same p1 'sia[p=1]'
cluster=1x8:v100
quiet_same small sia
# Muri's trace3 on 8x8 V100 (as scripts/eval-rubick.sh runs it): restarts that
# end between grid rounds the quiet ones stood for, whose rounds must come at
# the grid round they would have waited for (rk_decisions.quiet_until_ms;
# without it jobs.csv differs from 6.5e6 s on). Gavel VC 0e4a51 at the
# stand-ins' zoo speeds, the stress case of bench/bench_scale.sh, to 2e6 s.
shared=${RK_SHARED_DIR:?}
trace=$shared/traces/muri/trace-data/trace3.csv cluster=8x8:v100
quiet_same trace3 sia --oracle "measured=${RK_DATA_DIR:?}/measured/rubick" --interval 60 --skip-bad
trace=$shared/traces/gavel/msr/seed0/0e4a51.trace
quiet_same stress sia --throughputs none --horizon 2000000
# The case is contended (else nothing was skipped) and Sia moved running jobs
# (else the restart factor never decided anything).
python3 - "$work/sia-on.json" <<'PY' || fail "the trace is not contended"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["completed"] == 120, r["completed"]
assert r["max_queue_len"] >= 30, r["max_queue_len"]
assert r["reconfigs"] > 0.2, r["reconfigs"]
PY
[ "$fails" -eq 0 ] && echo "cli_sia_quiet: ok"
exit "$fails"
