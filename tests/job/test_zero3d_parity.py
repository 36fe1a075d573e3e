"""ZeRO inside tp and pp plans, and CPU offload, through examples/train.py (issue 22, item 2):
a run stops after step STOP (--stop-after: checkpoint, exit 75) and the next resumes
under another plan from the plan-independent checkpoint (the dp shards' optimizer state
gathered from their owners, tp slices gathered, stages merged); every step's loss must
follow a never-reconfigured one-process run within 1e-4 relative. Pairs: zero=2 dp2 ->
tp2; dp2 tp2 pp2 zero=1 (3D, 8 processes) -> dp2; zero=2 dp2 pp2 (4) -> zero=1 dp4 tp2
(8); offload=0 -> offload=1 (with tp2). Model: 4 blocks, global batch 8, 5 steps; ~33 s
on 2 cores (total time printed)."""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "..", "..", "examples", "train.py")
ITERS, STOP = 5, 2
REF = "dp=1,mb=8"
PAIRS = [("dp=2,mb=4,zero=2", "tp=2,mb=8"),
         ("dp=2,tp=2,pp=2,mb=2,ga=2,zero=1", "dp=2,mb=4"),
         ("dp=2,pp=2,mb=2,ga=2,zero=2", "dp=4,tp=2,mb=2,zero=1"),
         ("dp=2,mb=4,offload=0", "dp=2,tp=2,mb=4,offload=1")]


def run(d, plan, run_id, stop=0):
    env = dict(os.environ, RUBICK_RUN=str(run_id))
    for k in ("RUBICK_PLAN", "RUBICK_PLAN_FILE", "RUBICK_GLOBAL_BATCH", "RUBICK_URL", "RUBICK_FENCE_FILE"):
        env.pop(k, None)
    cmd = ["/usr/bin/python3", TRAIN, "--plan", plan, "--iters", str(ITERS), "--layers", "4",
           "--ckpt-dir", d, "--threads", "2", "--global-batch", "8"]
    if stop:
        cmd += ["--stop-after", str(stop)]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=240)
    want = 75 if stop else 0
    if p.returncode != want:
        raise SystemExit("FAIL: %s under %s exited %d, expected %d:\n%s" % (TRAIN, plan, p.returncode, want, p.stdout))


def losses(d):
    """step -> loss of the last run that logged the step (a resumed run logs from STOP+1)."""
    out = {}
    with open(os.path.join(d, "loss.log")) as f:
        for line in f:
            step, loss = line.split()[:2]
            out[int(step)] = float(loss)
    return out


def main():
    try:
        subprocess.run(["/usr/bin/python3", "-c", "import torch"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        print("SKIP: python3-torch not installed (scripts/install-deps.sh)")
        return 77
    t0 = time.time()
    with tempfile.TemporaryDirectory() as d:
        run(os.path.join(d, "ref"), REF, 1)
        want = losses(os.path.join(d, "ref"))
        if sorted(want) != list(range(1, ITERS + 1)) or abs(want[ITERS] - want[1]) < 1e-3:
            print("FAIL: reference losses missing or not moving: %s" % want)
            return 1
        bad = 0
        for n, (a, b) in enumerate(PAIRS):
            c = os.path.join(d, "pair%d" % n)
            run(c, a, 1, STOP)
            run(c, b, 2)
            got = losses(c)
            if sorted(got) != sorted(want):
                print("FAIL: %s -> %s logged steps %s" % (a, b, sorted(got)))
                bad = 1
                continue
            worst = max(abs(got[s] - want[s]) / abs(want[s]) for s in want)
            print("%-16s -> %-26s largest relative loss difference %.3g over %d steps" % (a, b, worst, ITERS))
            if not worst <= 1e-4:
                print("FAIL: %s -> %s does not follow the never-reconfigured run: %s vs %s" % (a, b, got, want))
                bad = 1
    print("%d pairs in %.1f s" % (len(PAIRS), time.time() - t0))
    return bad


if __name__ == "__main__":
    sys.exit(main())
