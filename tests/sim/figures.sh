#!/usr/bin/env bash
# The figures of `rubick sim --out` print and render (docs/sim.md, "--out"): Sia's
# heterogeneous recipe (Saturn workload-1 on 6x4 T4 + 2x8 A100 + 3x8 RTX 2080 Ti)
# under sia and rubick over --seeds 1-3, where rubick's makespan interval reaches
# below 0 - the case whose whisker used to run out of the plot and through the
# labels. figures_check.py then renders every fig-*.pdf (pdftoppm), the page
# (headless chromium, when installed) and parses every SVG.
# usage: figures.sh RUBICK
set -euo pipefail
rubick=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
shared=${RK_SHARED_DIR:-$here/../../../shared}
sia=$shared/traces/sia-artifacts
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$rubick" sim --trace "$sia/workloads/saturn/workload-1.csv" \
	--cluster 6x4:t4+2x8:a100+3x8:2080ti --policy sia,rubick --interval 60 \
	--oracle "measured=$sia/profiles" --job-length sia-target --no-timing --seeds 1-3 \
	--out "$tmp/out" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
grep -q "wrote .* and fig-NAME.svg, fig-NAME.pdf for NAME in bars, jct-cdf, gpu-util, queue, gpu-hours, reconfigs to $tmp/out" "$tmp/err" \
	|| { echo "FAIL: no 'wrote' line naming the figures:" >&2; cat "$tmp/err" >&2; exit 1; }
# The case this test is for: some policy's 95% interval runs below 0.
python3 - "$tmp/out/summary.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
low = [(r["policy"], k, r["seeds"][k]["ci95_lo"]) for r in res
       for k in ("avg_jct_s", "p99_jct_s", "makespan_s") if r["seeds"][k]["ci95_lo"] < 0]
print("intervals below 0:", low)
sys.exit(0 if low else "FAIL: no interval reaches below 0: the clipping case is not exercised")
PY
python3 "$here/figures_check.py" "$tmp/out"
