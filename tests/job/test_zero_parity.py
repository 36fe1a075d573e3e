"""ZeRO-2/3 in the real Job (issue 22): examples/train_cnn.py stopped with --stop-after
under plan A and resumed under plan B follows a never-reconfigured run (dp=1, mb=8) step
for step, relative loss difference <= 1e-4, for zero=0 dp2 -> zero=3 dp2, zero=3 dp2 ->
zero=0 dp1 (mb doubled), zero=1 dp2 -> zero=2 dp4 (mb/ga adjusted), and zero=2 gc=0 ->
zero=2 gc=1. The checkpoint between them is the full model and optimizer state (AdamW's
moments gathered from the shards), so a wrong re-sharding shows at the first resumed step.
Prints the largest difference per pair."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_util as pu  # noqa: E402

STEPS, STOP, GLOBAL, RTOL = 12, 5, 8, 1e-4
PAIRS = [("dp=2,mb=4,zero=0", "dp=2,mb=4,zero=3"),
         ("dp=2,mb=4,zero=3", "dp=1,mb=8,zero=0"),
         ("dp=2,mb=2,ga=2,zero=1", "dp=4,mb=2,ga=1,zero=2"),
         ("dp=2,mb=4,zero=2,gc=0", "dp=2,mb=2,ga=2,zero=2,gc=1")]


def run(ckpt, plan, want_rc, *extra):
    return pu.run_script("train_cnn.py", ckpt, plan, want_rc, STEPS, GLOBAL, "--threads", "1", *extra,
                         timeout=120)


def losses(ckpt):
    return pu.losses(ckpt, STEPS)


def main():
    if not pu.have_torch():
        print("SKIP: python3-torch not installed (scripts/install-deps.sh)")
        return 77
    tmp = tempfile.mkdtemp(prefix="rk-zero-")
    base = os.path.join(tmp, "base")
    run(base, "dp=1,mb=8", 0)
    ref = losses(base)
    bad = []
    for n, (a, b) in enumerate(PAIRS):
        d = os.path.join(tmp, "pair%d" % n)
        run(d, a, 75, "--stop-after", str(STOP))
        out = run(d, b, 0)
        assert "resumes at %d" % STOP in out, out
        got = losses(d)
        worst = pu.worst_rel(got, ref)
        print("%-24s -> %-28s max relative loss difference %.2e" % (a, b, worst))
        if worst > RTOL:
            bad.append((a, b, worst))
    assert ref[-1] < ref[0], "the CNN does not learn: %s" % ref
    assert not bad, "diverged from the never-reconfigured run: %s" % bad
    return 0


if __name__ == "__main__":
    sys.exit(main())
