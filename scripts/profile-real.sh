#!/usr/bin/env bash
# The performance model on real runs (docs/perf-model.md, "Profiling your own job";
# issue 22 item 5): for each example job, `rubick model profile` runs its seven
# profiling configurations on this machine, fits the model, then runs and predicts
# the configurations of bench/profile-real/<model>.configs (20+ each) and prints the
# strict and refit MAPE per plan family. A "GPU" is one process with one CPU thread;
# gradients meet over loopback gloo; memory is host memory. On a machine with fewer
# cores than processes the runs share cores, and that is in the figures.
#   usage: scripts/profile-real.sh [BUILD_DIR] [lm|cnn|both]   (default: build both)
# Takes about 6 minutes on 2 cores. Work folders: ${RK_PROFILE_OUT:-/tmp/rk-profile-real}.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
which=${2:-both}
case $build in
/*) rubick="$build/src/cli/rubick" ;;
*) rubick="$here/$build/src/cli/rubick" ;;
esac
[ -x "$rubick" ] || { echo "profile-real.sh: $rubick: not built (meson setup $build && ninja -C $build)" >&2; exit 1; }
py=/usr/bin/python3
out=${RK_PROFILE_OUT:-/tmp/rk-profile-real}
cd "$here"
# the parameter count the model description needs, from the example's own model
params() {
	$py -c "import sys; sys.path[:0] = ['examples', 'python']; import $1 as m; \
print(sum(p.numel() for p in $2.parameters()))"
}
run() { # name spec job batch configs
	echo "== $1: $3, global batch $4"
	rm -rf "$out/$1"
	"$rubick" model profile --job "$3" --model-spec "$2" --global-batch "$4" \
		--out "$out/$1" --validate "$5" --iters 10 --warmup 3 --observe 20 --holdout 7 \
		2>"$out/$1.progress" || { cat "$out/$1.progress" >&2; exit 1; }
}
mkdir -p "$out"
if [ "$which" != cnn ]; then
	n=$(params train "m.TinyLM(layers=4)")
	run tinylm "name=tinylm;layers=4;hidden=64;heads=4;seq_len=32;vocab=64;params=$n;global_batch=16;allow_3d=1" \
		"$py examples/train.py --layers 4" 16 bench/profile-real/tinylm.configs
fi
if [ "$which" != lm ]; then
	n=$(params train_cnn "m.SmallCNN()")
	# not a transformer: the structure only sizes gradients (params); the forward time is measured
	run cnn "name=cnn;layers=3;hidden=32;heads=1;seq_len=1;vocab=0;params=$n;global_batch=192" \
		"$py examples/train_cnn.py" 192 bench/profile-real/cnn.configs
fi
