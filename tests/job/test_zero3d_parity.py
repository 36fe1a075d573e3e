"""ZeRO inside tp and pp plans, and CPU offload, through examples/train.py (issue 22, item 2):
a run stops after step STOP (--stop-after: checkpoint, exit 75) and the next resumes
under another plan from the plan-independent checkpoint (the dp shards' optimizer state
gathered from their owners, tp slices gathered, stages merged); every step's loss must
follow a never-reconfigured one-process run within 1e-4 relative. Pairs: zero=2 dp2 ->
tp2; dp2 tp2 pp2 zero=1 (3D, 8 processes) -> dp2; zero=2 dp2 pp2 (4) -> zero=1 dp4 tp2
(8); offload=0 -> offload=1 (with tp2). Model: 4 blocks, global batch 8, 5 steps; ~33 s
on 2 cores (total time printed)."""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_util as pu  # noqa: E402

ITERS, STOP = 5, 2
REF = "dp=1,mb=8"
PAIRS = [("dp=2,mb=4,zero=2", "tp=2,mb=8"),
         ("dp=2,tp=2,pp=2,mb=2,ga=2,zero=1", "dp=2,mb=4"),
         ("dp=2,pp=2,mb=2,ga=2,zero=2", "dp=4,tp=2,mb=2,zero=1"),
         ("dp=2,mb=4,offload=0", "dp=2,tp=2,mb=4,offload=1")]


def run(d, plan, run_id, stop=0):
    extra = ["--layers", "4", "--threads", "2"] + (["--stop-after", stop] if stop else [])
    pu.run_script("train.py", d, plan, 75 if stop else 0, ITERS, 8, *extra, run_id=run_id)


def main():
    if not pu.have_torch():
        print("SKIP: python3-torch not installed (scripts/install-deps.sh)")
        return 77
    t0 = time.time()
    with tempfile.TemporaryDirectory() as d:
        run(os.path.join(d, "ref"), REF, 1)
        want = pu.losses(os.path.join(d, "ref"), ITERS)
        if abs(want[-1] - want[0]) < 1e-3:
            print("FAIL: reference losses not moving: %s" % want)
            return 1
        bad = 0
        for n, (a, b) in enumerate(PAIRS):
            c = os.path.join(d, "pair%d" % n)
            run(c, a, 1, STOP)
            run(c, b, 2)
            try:
                got = pu.losses(c, ITERS)
            except AssertionError as e:
                print("FAIL: %s -> %s: %s" % (a, b, e))
                bad = 1
                continue
            worst = pu.worst_rel(got, want)
            print("%-16s -> %-26s largest relative loss difference %.3g over %d steps" % (a, b, worst, ITERS))
            if not worst <= 1e-4:
                print("FAIL: %s -> %s does not follow the never-reconfigured run: %s vs %s" % (a, b, got, want))
                bad = 1
    print("%d pairs in %.1f s" % (len(PAIRS), time.time() - t0))
    return bad


if __name__ == "__main__":
    sys.exit(main())
