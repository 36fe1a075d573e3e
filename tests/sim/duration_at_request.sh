#!/usr/bin/env bash
# A job that a trace gives a run time at its request, run alone at that request,
# must take that run time (docs/oracle.md, "Job length"). The zoo model a job is
# mapped onto only decides how its speed changes when a policy gives it other
# resources; at the request the simulator must reproduce the trace.
#
# Each trace is replayed with FIFO on a cluster far larger than it needs, made
# of the trace's own GPU type (the type its run times were measured on,
# rk_sim_trace_gpu_type), so every job starts at its submission on a
# consolidated placement of its requested GPUs, the placement and type its
# length was priced on. On other types the same work takes longer or shorter
# (tests/sim/gpu_types.sh). Jobs whose length
# comes from the trace's own iteration count (iters > 0 in the native dump:
# Rubick traces, whose steps belong to the exact zoo model named) are not
# checked here. Synergy's lengths (its iterations x its fair-share iteration
# times) and Shockwave's run times (priced by its own throughput file, at its
# v100 reference type on any other type) must hold too. Tolerance: 1 ms + 1e-9 x the run time (the engine keeps times
# in whole milliseconds; jobs.csv prints 3 decimals).
# usage: duration_at_request.sh RUBICK
set -euo pipefail
rubick=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
shared=${RK_SHARED_DIR:-$here/../../../shared}
# trace and its own GPU type
traces=(
	"$shared/traces/muri/trace-data/trace1.csv" v100
	"$shared/traces/muri/trace-data/trace2.csv" v100
	"$shared/traces/muri/testbed/cluster_trace.csv" v100
	"$shared/traces/tiresias/60_job.csv" p100
	"$shared/traces/sia-artifacts/workloads/philly/workload-1.csv" t4
	"$shared/traces/pollux-osdi21/philly.csv" v100
	"$shared/traces/synergy/static_100job_6_3_1100.0.csv" v100
	"$shared/traces/synergy/dynamic_srtf.log" v100
	"$shared/traces/shockwave/traces/900_0.2_5_1000_5_15_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace" v100
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for ((k = 0; k < ${#traces[@]}; k += 2)); do
	trace=${traces[k]} gpu=${traces[k + 1]}
	[ -f "$trace" ] || { echo "missing trace $trace" >&2; status=1; continue; }
	"$rubick" trace "$trace" --native --skip-bad >"$tmp/native.csv"
	"$rubick" sim --trace "$trace" --cluster "1024x8:$gpu" --policy fifo --skip-bad --no-timing \
		--out "$tmp/out" >/dev/null 2>&1
	# Join by job name; columns are found by header name in both files.
	if ! awk -F, -v trace="$trace" '
		FNR == 1 { file++ }
		/^#/ { next }
		file == 1 && !hn { for (i = 1; i <= NF; i++) nc[$i] = i; hn = 1; next }
		file == 1 { if ($nc["iters"] + 0 == 0 && $nc["duration_s"] + 0 > 0)
				dur[$nc["name"]] = $nc["duration_s"] + 0; next }
		file == 2 && !hj { for (i = 1; i <= NF; i++) jc[$i] = i; hj = 1; next }
		file == 2 {
			name = $jc["name"]
			if (!(name in dur)) next
			if ($jc["completed"] != 1) { printf "%s: %s did not complete\n", trace, name; bad++; next }
			run = $jc["finish_s"] - $jc["first_start_s"]
			d = run - dur[name]; if (d < 0) d = -d
			checked++
			if (d > 0.001 + 1e-9 * dur[name]) {
				if (bad++ < 10)
					printf "%s: %s (%s) ran %.3f s alone at its request, trace says %.3f s\n",
						trace, name, $jc["model"], run, dur[name]
			}
		}
		END {
			if (checked == 0) { printf "%s: no job checked\n", trace; exit 1 }
			printf "%s: %d jobs, %d off their trace run time\n", trace, checked, bad + 0
			exit bad > 0
		}' "$tmp/native.csv" "$tmp/out/jobs.csv"; then
		status=1
	fi
	rm -rf "$tmp/out"
done
exit $status
