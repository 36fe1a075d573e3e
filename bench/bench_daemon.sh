#!/usr/bin/env bash
# rubickd benchmarks (issue 7), figures from one run:
#  1. sustained durable submissions over HTTP: a real rubickd (SQLite FULL sync,
#     group commit) on loopback, bench_daemon_load posting jobs for SECONDS from
#     CONNS keep-alive connections; target >= 2,000/s with p99 <= 20 ms, checked
#     again at a paced 2,000/s;
#     then the closed loop again while two clients list limit=10000 in a loop
#     (authenticated reads, served off the scheduler thread; since issue 25 a
#     reply is one page of at most 500 jobs);
#  2. one scheduling round with 1,000 queued jobs (bench_daemon_round), target <= 20 ms.
# usage: bash bench/bench_daemon.sh [BUILD_DIR] [SECONDS] [CONNS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
seconds=${2:-10}
conns=${3:-32}
for f in "$build/src/daemon/rubickd" "$build/bench/bench_daemon_load" "$build/bench/bench_daemon_round"; do
	[ -x "$f" ] || { echo "bench_daemon: $f missing (ninja -C $build)" >&2; exit 2; }
done
dir=$(mktemp -d /tmp/rubick-bench-daemon-XXXXXX)
readers=()
trap 'kill "${readers[@]}" "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
token=bench-token-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
printf '%s\n' "$token" >"$dir/token"
chmod 600 "$dir/token"
echo "machine: $(nproc) CPUs, $(uname -r), database on $(df -P "$dir" | awk 'NR==2 {print $1}')"
"$build/src/daemon/rubickd" --listen 127.0.0.1:0 --db "$dir/state.db" --token-file "$dir/token" \
	--allow-root yes --cluster 1x8 --grace-ms 1000 --sync "${RUBICKD_SYNC:-full}" >"$dir/out" 2>"$dir/err" &
pid=$!
for _ in $(seq 100); do grep -q listening "$dir/out" && break; sleep 0.05; done
url=$(sed -n 's/.*listening on //p' "$dir/out")
# Where the daemon's time went: its rounds (/metrics) and CPU seconds, whole and
# of the scheduler thread (rkd-sched), since it started.
daemon_cpu() {
	local hz sched=0 t
	hz=$(getconf CLK_TCK)
	for t in /proc/"$pid"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = rkd-sched ] && sched=$(awk '{print $14 + $15}' "$t/stat")
	done
	awk -v hz="$hz" -v s="$sched" '{printf "rubickd CPU %.1f s, scheduler thread %.1f s\n", ($14 + $15) / hz, s / hz}' \
		/proc/"$pid"/stat
	curl -s -H "Authorization: Bearer $token" "$url/metrics" | grep -E '^rubick_(round_latency_seconds_(sum|count)|rounds_incremental_total|queue_length) ' |
		tr '\n' ' '
	echo
}
echo "== durable submissions, closed loop, $conns connections, ${seconds}s"
"$build/bench/bench_daemon_load" --url "$url" --token "$token" --threads "$conns" --seconds "$seconds"
daemon_cpu
echo "== durable submissions, closed loop, $conns connections, ${seconds}s, 2 clients listing limit=10000 (pages of 500)"
lister() { # one line in $dir/listed per listing answered
	while :; do
		curl -s -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $token" \
			"$url/v1/jobs?limit=10000" >>"$dir/listed"
	done
}
lister &
readers+=($!)
lister &
readers+=($!)
"$build/bench/bench_daemon_load" --url "$url" --token "$token" --threads "$conns" --seconds "$seconds"
kill "${readers[@]}" 2>/dev/null
wait "${readers[@]}" 2>/dev/null || true
readers=()
echo "listings (limit=10000, a page of 500 jobs) answered: $(grep -c '^200' "$dir/listed" || true) in ${seconds}s"
daemon_cpu
echo "== durable submissions, paced at 2000/s, $conns connections, ${seconds}s"
"$build/bench/bench_daemon_load" --url "$url" --token "$token" --threads "$conns" --seconds "$seconds" --rate 2000
daemon_cpu
echo "== one scheduling round, 1,000 queued jobs"
"$build/bench/bench_daemon_round" --jobs 1000 --cluster 16x8 fifo sjf tiresias
if [ -n "${BENCH_DAEMON_LONG:-}" ]; then # rounds over a queue as long as the load runs leave
	echo "== one scheduling round, 20,000 queued jobs, with and without the change feed"
	"$build/bench/bench_daemon_round" --jobs 20000 --cluster 16x8 fifo srtf tiresias
	"$build/bench/bench_daemon_round" --jobs 20000 --cluster 16x8 --full fifo srtf tiresias
fi
