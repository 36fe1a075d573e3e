#!/usr/bin/env python3
"""Write a contended native-format trace for the quiet-round tests.

usage: contended_trace.py OUT SEED JOBS GAP_MIN GAP_SPAN [GUARANTEED_EVERY]

JOBS jobs of five zoo models, 1-8 GPUs, 2,000-252,000 s long, arriving
GAP_MIN + (0..GAP_SPAN-1) s apart: far more GPUs asked for than a 2x8 cluster
has, so nearly every round is constrained. A fixed linear congruential
sequence from SEED makes the same trace on every run. With GUARANTEED_EVERY K
(K > 3), job i is guaranteed when i % K == 3 and jobs alternate between
tenants 'b' and 'a'; without it no job is guaranteed and none names a tenant.
"""
import sys

if len(sys.argv) not in (6, 7):
    sys.exit(__doc__)
names = ["SEED", "JOBS", "GAP_MIN", "GAP_SPAN", "GUARANTEED_EVERY"]
try:
    nums = [int(a) for a in sys.argv[2:]]
except ValueError:
    sys.exit("contended_trace.py: %s must be integers, got %s" % (
        ", ".join(names[:len(sys.argv) - 2]), " ".join(sys.argv[2:])))
if nums[2] < 0 or nums[3] < 1 or (len(nums) == 5 and nums[4] < 4):
    sys.exit("contended_trace.py: need GAP_MIN >= 0, GAP_SPAN >= 1 and GUARANTEED_EVERY >= 4")
out, (seed, jobs, gap_min, gap_span) = sys.argv[1], nums[:4]
every = nums[4] if len(nums) == 5 else 0
models = [("bert", 32), ("gpt2", 32), ("vit", 64), ("roberta", 32), ("t5", 32)]
head = ("name,submit_s,duration_s,model,job_type,gpus,gpu_milli,cpus,mem_mb,net_gbps,"
        "global_batch,plan,iters,guaranteed,tenant,min_gpus,max_gpus")
x = seed


def nxt():
    global x
    x = (x * 1103515245 + 12345) % 2**31
    return x


with open(out, "w") as f:
    print(head, file=f)
    t = 0.0
    for i in range(jobs):
        t += gap_min + nxt() % gap_span
        m, b = models[nxt() % len(models)]
        g = [1, 1, 2, 2, 4, 8][nxt() % 6]
        dur = 2000 + (nxt() % 1000) ** 2 / 4
        if every:
            gu = 1 if i % every == 3 else 0
            print(f"{m}-{i},{t:.3f},{dur:.1f},{m},{m},{g},1000,{4 * g},0,0,{b},,0,{gu},"
                  f"{'a' if i % 2 else 'b'},,", file=f)
        else:
            print(f"{m}-{i},{t:.3f},{dur:.1f},{m},{m},{g},1000,{4 * g},0,0,{b},,0,0,,,", file=f)
