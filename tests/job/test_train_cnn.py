"""examples/train_cnn.py, the job library's second architecture (issue 22), on CPU: a run
stopped by a real SIGUSR1 checkpoints and exits 75, resumes under another plan (dp=2 ->
dp=1 with ga=2 and gc -> dp=2 with ga=2 and ZeRO-1), and its loss follows a never-
reconfigured dp=1 run step for step: relative difference <= 1e-4 at every step (the runs
differ only in float32 summation order, measured ~1e-7). About 15 s on 2 cores."""
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_util as pu  # noqa: E402

STEPS, GLOBAL, RTOL = 24, 8, 1e-4


def cmd(ckpt, plan, *extra):
    return pu.script_cmd("train_cnn.py", ckpt, plan, STEPS, GLOBAL, "--threads", "1", *extra)


def run(ckpt, plan, want_rc, *extra):
    return pu.run_script("train_cnn.py", ckpt, plan, want_rc, STEPS, GLOBAL, "--threads", "1", *extra,
                         timeout=120)


def lines(path):
    return pu.log_rows(os.path.dirname(path))


def signalled(ckpt, plan):
    """Run `plan` and send it SIGUSR1 once it has logged 3 steps; returns (rc, stdout)."""
    p = subprocess.Popen(cmd(ckpt, plan, "--step-ms", "100"), env=pu.clean_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 60
    while len(lines(os.path.join(ckpt, "loss.log"))) < 3 and time.time() < deadline and p.poll() is None:
        time.sleep(0.05)
    p.send_signal(signal.SIGUSR1)
    out, _ = p.communicate(timeout=60)
    return p.returncode, out


def main():
    if not pu.have_torch():
        print("SKIP: python3-torch not installed (scripts/install-deps.sh)")
        return 77
    tmp = tempfile.mkdtemp(prefix="rk-cnn-")
    base, reconf = os.path.join(tmp, "base"), os.path.join(tmp, "reconf")
    run(base, "dp=1,mb=8", 0)
    rc, out = signalled(reconf, "dp=2,mb=4")
    assert rc == 75, "SIGUSR1: exit %d, wanted 75:\n%s" % (rc, out)
    stop = len(lines(os.path.join(reconf, "loss.log")))
    assert "checkpointed at %d" % stop in out and 3 <= stop < 12, (stop, out)
    out = run(reconf, "dp=1,mb=4,ga=2,gc=1", 75, "--stop-after", "14")
    assert "resumes at %d with dp=1" % stop in out, out
    out = run(reconf, "dp=2,mb=2,ga=2,zero=1", 0)
    assert "resumes at 14 with dp=2" in out, out
    a, b = lines(os.path.join(base, "loss.log")), lines(os.path.join(reconf, "loss.log"))
    assert [int(r[0]) for r in b] == list(range(1, STEPS + 1)), "steps lost or repeated: %s" % b
    plans = [(int(r[3]), int(r[4])) for r in b]
    assert plans == [(2, 1)] * stop + [(1, 2)] * (14 - stop) + [(2, 2)] * (STEPS - 14), plans
    worst = 0.0
    for x, y in zip(a, b):
        la, lb = float(x[1]), float(y[1])
        worst = max(worst, abs(la - lb) / abs(la))
        print("step %2s  loss %.7f  reconfigured %.7f" % (x[0], la, lb))
    print("stopped by SIGUSR1 at %d; max relative loss difference %.2e (tolerance %.0e)" % (stop, worst, RTOL))
    first, last = sum(float(r[1]) for r in a[:4]) / 4, sum(float(r[1]) for r in a[-4:]) / 4
    assert last < first / 2, "the CNN does not learn: %.3f -> %.3f" % (first, last)
    assert worst <= RTOL, "reconfigured run diverges from the baseline"
    return 0


if __name__ == "__main__":
    sys.exit(main())
