#!/usr/bin/env bash
# Checks beyond the unit tests: the README's main command runs, formatting is
# mechanical. Counted as one test by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
./build-ci/src/cli/rubick --help >/dev/null
# Every parser's libFuzzer harness, briefly (scripts/fuzz.sh; longer runs by hand).
bash scripts/fuzz.sh 10
# Every bundled zoo file parses through the CLI (docs/zoo.md).
./build-ci/src/cli/rubick zoo check data/zoo/*.model >/dev/null
