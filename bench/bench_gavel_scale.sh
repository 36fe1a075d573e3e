#!/bin/bash
# bench_gavel_scale.sh BUILD [SHARED_DIR] — Gavel's policies at scale (issue 23, "Keep
# the simulator's speed"): gavel (max-min fairness), gavel-ftf (finish-time
# fairness), gavel-tput (max-sum throughput) and gavel-makespan held to Sia's
# budgets by bench_sia_scale.sh (philly.csv on 256x8 in 60 s CPU, Gavel's VC
# trace 0e4a51 on 8x8 in 30 s, the longest round at 2,048 GPUs in 1 s, with the
# rounds' count and mean). BENCH_GAVEL_TIMEOUT (default
# 10) x a budget of wall time stops a run; BENCH_GAVEL_POLICIES picks some of the
# four. Exit status 1 if a budget is missed.
# Not a test (docs: bench/README.md, "bench_gavel_scale.sh").
BENCH_POLICIES=${BENCH_GAVEL_POLICIES:-"gavel gavel-ftf gavel-tput gavel-makespan"} BENCH_SIA_QUICK=1 BENCH_SIA_TIMEOUT=${BENCH_GAVEL_TIMEOUT:-10} \
	exec bash "$(dirname "$0")/bench_sia_scale.sh" "$@"
