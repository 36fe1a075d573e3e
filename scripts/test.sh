#!/usr/bin/env bash
# The whole test suite: installs what it needs, builds warning-free twice (plain
# and with AddressSanitizer + UndefinedBehaviorSanitizer), runs every test in
# both builds and ends with one line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh || { echo "0 passed, 1 failed"; exit 1; }

passed=0
failed=0
skipped=0
run_build() { # NAME MESON-ARGS...
	local dir=$1
	shift
	if ! { meson setup "$dir" --wipe --werror "$@" >"$dir.setup.log" 2>&1 ||
		meson setup "$dir" --werror "$@" >"$dir.setup.log" 2>&1; } ||
		! ninja -C "$dir" >"$dir.build.log" 2>&1; then
		cat "$dir.setup.log" "$dir.build.log" 2>/dev/null | tail -50
		echo "build $dir FAILED"
		failed=$((failed + 1))
		return
	fi
	meson test -C "$dir" --print-errorlogs --num-processes 2 --timeout-multiplier 3 || true
	local counts
	counts=$(python3 - "$dir/meson-logs/testlog.json" <<'PY'
import json, sys
ok = bad = skip = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("result") in ("OK", "EXPECTEDFAIL"):
        ok += 1
    elif r.get("result") == "SKIP":
        skip += 1
    else:
        bad += 1
print(ok, bad, skip)
PY
	)
	read -r ok bad skip <<<"$counts"
	passed=$((passed + ok))
	failed=$((failed + bad))
	skipped=$((skipped + skip))
}

run_build build-ci --buildtype=debugoptimized
run_build build-san --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false
bash scripts/ci-extra.sh && passed=$((passed + 1)) || failed=$((failed + 1))
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
