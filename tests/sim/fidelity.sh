#!/usr/bin/env bash
# The quick subset of the fidelity table (docs/fidelity.md): Muri's trace3
# under SRTF, SRSF and Tiresias, replayed with Muri's settings, must stay
# within ±15 % of the average JCT and makespan Muri's own simulator reports;
# so must the Gavel rows marked `in` on Shockwave's 120 jobs (shockwave-gavel).
# usage: fidelity.sh RUBICK SCRIPT
set -euo pipefail
rubick=$(realpath "$1")
script=$(realpath "$2")
build=$(dirname "$(dirname "$(dirname "$rubick")")")
out=$(bash "$script" "$build" --check "muri trace3")
echo "$out"
rows=$(grep -c '^| muri | trace3' <<<"$out" || true)
[ "$rows" -eq 3 ] || { echo "FAIL: expected 3 trace3 rows, got $rows" >&2; exit 1; }
gout=$(bash "$script" "$build" --check "shockwave-gavel")
echo "$gout"
grows=$(grep -c '^| shockwave-gavel |' <<<"$gout" || true)
[ "$grows" -eq 4 ] || { echo "FAIL: expected 4 shockwave-gavel rows, got $grows" >&2; exit 1; }
