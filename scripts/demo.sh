#!/usr/bin/env bash
# Install, build and run rubick's main job on the bundled default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
[ -d build ] || meson setup build --buildtype=release
ninja -C build
./build/src/cli/rubick demo
