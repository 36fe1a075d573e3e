#!/bin/bash
# bench_pollux_scale.sh BUILD [SHARED_DIR] — the Pollux policy at scale (issue 23, "Keep
# the simulator's speed"): pollux (default greedy search) held to Sia's budgets by
# bench_sia_scale.sh (Pollux's philly.csv, 82,247 jobs, on 256x8 in 60 s CPU; Gavel's VC
# trace 0e4a51 on 8x8 in 30 s; the longest round at 2,048 GPUs in 1 s, with the rounds'
# count and mean). BENCH_POLLUX_TIMEOUT (default 10) x a budget of wall time stops a run.
# Exit status 1 if a budget is missed. Not a test (docs: bench/README.md,
# "bench_pollux_scale.sh").
BENCH_POLICIES="pollux" BENCH_SIA_QUICK=1 BENCH_SIA_TIMEOUT=${BENCH_POLLUX_TIMEOUT:-10} \
	exec bash "$(dirname "$0")/bench_sia_scale.sh" "$@"
