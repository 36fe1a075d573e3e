"""What the job library's parity tests share (issue 22): running an example script under a
plan with rubickd's variables cleared, reading its loss.log, and the largest relative
loss difference against a never-reconfigured run. A wrong exit code, a lost or repeated
step, or a mismatched length raises AssertionError naming the plan, so a test that uses
these still fails on divergence."""
import os
import subprocess
import sys
import tempfile
import time

PY = "/usr/bin/python3"  # Debian's interpreter, the one with python3-torch
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")


def have_torch():
    """Whether Debian's python3 imports torch (else the test prints SKIP and exits 77)."""
    try:
        return subprocess.run([PY, "-c", "import torch"], capture_output=True).returncode == 0
    except OSError:
        return False


def reexec_with_debian_python(have):
    """Under meson, python3 may be another interpreter than Debian's: restart under it."""
    if not have and os.path.realpath(sys.executable) != os.path.realpath(PY) and os.path.exists(PY):
        os.execv(PY, [PY] + sys.argv)


def clean_env(**extra):
    """The environment without rubickd's RUBICK_* variables (a test gives --plan etc.)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUBICK_")}
    env.update(extra)
    return env


def script_cmd(script, ckpt, plan, iters, global_batch, *extra):
    return [PY, os.path.join(EXAMPLES, script), "--plan", plan, "--global-batch", str(global_batch),
            "--iters", str(iters), "--ckpt-dir", ckpt] + [str(a) for a in extra]


def run_script(script, ckpt, plan, want_rc, iters, global_batch, *extra, run_id=None, timeout=240):
    """Run examples/`script` under `plan`; its stdout, or AssertionError when it exits
    other than `want_rc`."""
    env = clean_env(**({"RUBICK_RUN": str(run_id)} if run_id is not None else {}))
    r = subprocess.run(script_cmd(script, ckpt, plan, iters, global_batch, *extra), env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    if r.returncode != want_rc:
        raise AssertionError("%s under %s: exit %d, wanted %d:\n%s" % (script, plan, r.returncode, want_rc, r.stdout))
    return r.stdout


def log_rows(ckpt):
    """loss.log's rows, split (step loss run dp ga pp); [] when there is none yet."""
    try:
        with open(os.path.join(ckpt, "loss.log")) as f:
            return [l.split() for l in f if l.strip()]
    except OSError:
        return []


def losses(ckpt, steps=None):
    """The logged losses in step order; with `steps`, AssertionError unless the log holds
    exactly steps 1..steps once each."""
    rows = log_rows(ckpt)
    if steps is not None:
        assert [int(r[0]) for r in rows] == list(range(1, steps + 1)), "steps lost or repeated: %s" % rows
    return [float(r[1]) for r in rows]


def worst_rel(got, want):
    """Largest |got - want| / |want| over the steps; AssertionError on lengths that differ."""
    got, want = list(got), list(want)
    assert len(got) == len(want), "%d losses, the reference has %d" % (len(got), len(want))
    return max(abs(x - y) / abs(y) for x, y in zip(got, want))


def train_pairs(pairs, ref="dp=1,mb=8", iters=5, stop=2, script="train.py", args=("--layers", "4")):
    """examples/`script` (train.py: 4 blocks, `args`; global batch 8) stopped after step
    `stop` under plan A and resumed under plan B, for each (A, B) of `pairs`; every step's
    loss must follow a never-reconfigured run of `ref` within 1e-4 relative. Prints each
    pair's largest difference and returns the exit code: 0, 1 on any failure, 77 without
    torch."""
    def run(d, plan, run_id, stop_after=0):
        extra = list(args) + ["--threads", "2"] + (["--stop-after", stop_after] if stop_after else [])
        run_script(script, d, plan, 75 if stop_after else 0, iters, 8, *extra, run_id=run_id)

    if not have_torch():
        print("SKIP: python3-torch not installed (scripts/install-deps.sh)")
        return 77
    t0 = time.time()
    with tempfile.TemporaryDirectory() as d:
        run(os.path.join(d, "ref"), ref, 1)
        want = losses(os.path.join(d, "ref"), iters)
        if abs(want[-1] - want[0]) < 1e-3:
            print("FAIL: reference losses not moving: %s" % want)
            return 1
        bad = 0
        for n, (a, b) in enumerate(pairs):
            c = os.path.join(d, "pair%d" % n)
            run(c, a, 1, stop)
            run(c, b, 2)
            try:
                got = losses(c, iters)
            except AssertionError as e:
                print("FAIL: %s -> %s: %s" % (a, b, e))
                bad = 1
                continue
            worst = worst_rel(got, want)
            print("%-16s -> %-26s largest relative loss difference %.3g over %d steps" % (a, b, worst, iters))
            if not worst <= 1e-4:
                print("FAIL: %s -> %s does not follow the never-reconfigured run: %s vs %s" % (a, b, got, want))
                bad = 1
    print("%d pairs in %.1f s" % (len(pairs), time.time() - t0))
    return bad
