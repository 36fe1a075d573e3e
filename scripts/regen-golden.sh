#!/usr/bin/env bash
# Regenerate the expected outputs of the golden simulator cases (tests/sim/golden/*)
# from the current build, then show what changed: review the diff before committing.
# usage: scripts/regen-golden.sh [BUILD_DIR]   (default build-ci)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-ci}
ninja -C "$build" src/cli/rubick >/dev/null
for c in tests/sim/golden/*/; do
	bash tests/sim/run_golden.sh "$build/src/cli/rubick" "$c" --regen
	echo "regenerated $c"
done
git diff --stat -- tests/sim/golden || true
