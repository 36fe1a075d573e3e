#!/usr/bin/env bash
# The daemon tests under ThreadSanitizer (the scheduler thread, the HTTP
# threads and their message queue): builds build-tsan and runs the `daemon`
# suite with halt_on_error, so any data race fails a test (rubickd must exit 0).
# usage: bash tests/daemon/tsan.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -d build-tsan ] || meson setup build-tsan --buildtype=debug -Db_sanitize=thread -Db_lundef=false >/dev/null
ninja -C build-tsan >/dev/null
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" RK_TEST_TIME_SCALE=5 \
	meson test -C build-tsan --suite daemon --print-errorlogs --timeout-multiplier 4
