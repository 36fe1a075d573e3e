#!/usr/bin/env bash
# Install, build and run rubick's main job on the bundled defaults: the sensitivity
# curves of the bundled models (`rubick demo`), then the simulator replaying the Rubick
# base trace (data/traces/rubick-base.csv, 406 jobs) on the Rubick testbed
# (data/clusters/rubick-testbed.txt, 8x8 A800) under every registered policy, with the
# measured A800 tables as ground truth, printing the comparison table. It also installs
# rubick(1), rubickd(8) and the bash and zsh completion (scripts/install-completion.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
[ -d build ] || meson setup build --buildtype=release
ninja -C build
bash scripts/install-completion.sh # rubick(1), rubickd(8), bash and zsh completion
./build/src/cli/rubick demo
echo
./build/src/cli/rubick sim --trace data/traces/rubick-base.csv \
	--cluster data/clusters/rubick-testbed.txt --policy all
