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
# A DeepSpeed launch command reads into the zoo model and the requested plan (docs/launch.md).
launch_out=$(./build-ci/src/cli/rubick launch --gpus 8 -- deepspeed --num_gpus 8 train.py \
	--model_name_or_path meta-llama/Llama-2-7b-hf --per_device_train_batch_size 1 \
	--gradient_checkpointing)
grep -q '^plan  *dp=8,tp=1,pp=1,mb=1,ga=1,gc=1,zero=0,offload=0$' <<<"$launch_out"
# Trace readers through the CLI: the Rubick base trace written as native CSV reads back
# with the same 406 jobs (docs/trace-format.md).
if [ -d ../shared/traces ]; then
	./build-ci/src/cli/rubick trace ../shared/traces/rubick/workloads/workload-base.csv --native \
		>build-ci/trace-native.csv
	./build-ci/src/cli/rubick trace build-ci/trace-native.csv --json | grep -q '"jobs": 406,'
fi
# The README main job's first half (the curves) runs on the bundled zoo.
./build-ci/src/cli/rubick demo >/dev/null
