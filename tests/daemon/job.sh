#!/bin/sh
# A small reconfigurable training job for the end-to-end test (the job
# protocol of rubickd(8)): it checks that RUBICK_PLAN runs the global batch on
# the GPUs it was given, resumes from its checkpoint, runs one iteration at a
# time, reports progress, and on SIGUSR1 finishes the current iteration,
# checkpoints and exits 75. Every completed iteration is logged once, so the
# test can check that none is lost or repeated across reconfigurations.
set -u
dir=$RUBICK_CKPT_DIR
done_iters=0
[ -f "$dir/iter" ] && done_iters=$(cat "$dir/iter")
stop=0
trap 'stop=1' USR1

# The plan must keep the global batch and use exactly the GPUs given.
plan=$(cat "$RUBICK_PLAN_FILE")
[ "$plan" = "$RUBICK_PLAN" ] || { echo "plan file '$plan' != RUBICK_PLAN '$RUBICK_PLAN'"; exit 3; }
get() { echo "$RUBICK_PLAN" | tr ',' '\n' | sed -n "s/^$1=//p"; }
dp=$(get dp); tp=$(get tp); pp=$(get pp); mb=$(get mb); ga=$(get ga)
[ $((mb * ga * dp)) -eq "$RUBICK_GLOBAL_BATCH" ] || { echo "mb*ga*dp != global batch"; exit 3; }
[ $((dp * tp * pp)) -eq "$RUBICK_GPUS" ] || { echo "dp*tp*pp != GPUs"; exit 3; }
ngpu=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
[ "$ngpu" -eq "$RUBICK_GPUS" ] || { echo "CUDA_VISIBLE_DEVICES has $ngpu ids"; exit 3; }
echo "run $RUBICK_RUN resumes at $done_iters with $RUBICK_PLAN on GPUs $CUDA_VISIBLE_DEVICES"

while [ "$done_iters" -lt "$RUBICK_ITERS" ]; do
	sleep 0.02 # one training iteration
	done_iters=$((done_iters + 1))
	echo "$done_iters $RUBICK_RUN $RUBICK_GPUS" >>"$dir/iters.log"
	echo "$done_iters" >"$dir/iter.tmp" && mv "$dir/iter.tmp" "$dir/iter"
	if [ $((done_iters % 10)) -eq 0 ]; then
		curl -s -o /dev/null -X POST -H "Authorization: Bearer $RUBICK_JOB_TOKEN" \
			-d "{\"iters_done\": $done_iters, \"throughput_sps\": 1600, \"run\": $RUBICK_RUN}" \
			"$RUBICK_URL/v1/jobs/$RUBICK_JOB_ID/report"
	fi
	if [ "$stop" = 1 ]; then
		echo "checkpointed at $done_iters"
		exit 75
	fi
done
echo "finished $done_iters iterations"
exit 0
