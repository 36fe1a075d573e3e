#!/usr/bin/env bash
# Build the libFuzzer harnesses with clang in build-fuzz and run each for N
# seconds (default 20) from its seed corpus tests/fuzz/corpus/<name>/.
# New inputs go to build-fuzz/corpus/<name>/, crashes to build-fuzz/crash-<name>-*;
# the seed corpus in the tree is never written. Exit status 1 if any harness
# finds a crash, leak or sanitizer error.
#   bash scripts/fuzz.sh [SECONDS] [HARNESS...]
# Harnesses default to every tests/fuzz/fuzz_<name>.c (zoo, launch, plan, ...).
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
shift || true
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
	for f in tests/fuzz/fuzz_*.c; do
		h=${f#tests/fuzz/fuzz_}
		harnesses+=("${h%.c}")
	done
fi
case $secs in '' | *[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, not '$secs'" >&2; exit 2 ;; esac

if ! command -v clang >/dev/null; then
	echo "fuzz.sh: clang not found (scripts/install-deps.sh installs it)" >&2
	exit 1
fi
# No --werror here: the fuzz build recompiles the whole core with clang, whose
# warnings differ from gcc's; the gcc builds of scripts/test.sh enforce -Werror.
if [ ! -f build-fuzz/build.ninja ]; then
	mkdir -p build-fuzz
	CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=true --buildtype=debugoptimized \
		>build-fuzz/setup.log 2>&1 || { cat build-fuzz/setup.log; rm -rf build-fuzz; exit 1; }
fi
targets=()
for h in "${harnesses[@]}"; do targets+=("tests/fuzz/fuzz_$h"); done
ninja -C build-fuzz "${targets[@]}" >build-fuzz/build.log 2>&1 ||
	{ tail -40 build-fuzz/build.log; exit 1; }

status=0
for h in "${harnesses[@]}"; do
	mkdir -p "build-fuzz/corpus/$h"
	seeds=
	[ -d "tests/fuzz/corpus/$h" ] && seeds="tests/fuzz/corpus/$h"
	log="build-fuzz/fuzz_$h.log"
	if ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		"./build-fuzz/tests/fuzz/fuzz_$h" "build-fuzz/corpus/$h" $seeds \
		-max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="build-fuzz/crash-$h-" -print_final_stats=1 >"$log" 2>&1; then
		runs=$(grep -ao 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
		echo "fuzz_$h: ok, ${runs:-?} runs in ${secs}s"
	else
		echo "fuzz_$h: FAILED (see $log)"
		grep -aE 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -10
		status=1
	fi
done
exit $status
