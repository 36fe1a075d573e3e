#!/usr/bin/python3
"""`rubick model profile` on the real CNN example (docs/perf-model.md, "Profiling your own
job"), reduced: the seven profiling runs and three validation configurations at a small
batch and few iterations (~15 s on 2 cores). Checks the output's format, that the fitted
parameters are finite and positive, that every validation row has its errors computed,
and that a job failing or logging nothing is refused naming the configuration and its log.
The error figures themselves are not checked: this machine is shared and noisy
(scripts/profile-real.sh runs the full validation; docs give its table)."""
import math
import os
import re
import subprocess
import sys
import tempfile

PY = "/usr/bin/python3"  # Debian's python3-torch: the jobs run on it, this script need not
if subprocess.run([PY, "-c", "import torch"], capture_output=True).returncode:
    print("SKIP: %s cannot import torch" % PY)
    sys.exit(77)

SRC = os.environ.get("RK_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
RUBICK = os.path.join(os.environ["RK_BUILD_DIR"], "src", "cli", "rubick")
SPEC = "name=cnn;layers=3;hidden=32;heads=1;seq_len=1;vocab=0;params=8052;global_batch=32"
JOB = "%s %s" % (PY, os.path.join(SRC, "examples", "train_cnn.py"))
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL", what)


def profile(job, out, *extra):
    args = [RUBICK, "model", "profile", "--job", job, "--model-spec", SPEC, "--global-batch", "32",
            "--out", out, "--iters", "6", "--warmup", "2", "--observe", "3", "--holdout", "2"]
    return subprocess.run(args + list(extra), capture_output=True, text=True, timeout=300)


with tempfile.TemporaryDirectory() as tmp:
    configs = os.path.join(tmp, "configs")
    with open(configs, "w") as f:
        f.write("# reduced validation set\n"
                "dp=4,tp=1,pp=1,mb=8,ga=1,gc=0,zero=0,offload=0\n"
                "dp=2,tp=1,pp=1,mb=8,ga=2,gc=1,zero=0,offload=0 cpus=2\n"
                "dp=2,tp=1,pp=1,mb=16,ga=1,gc=0,zero=2,offload=0\n")
    out = os.path.join(tmp, "cnn")
    r = profile(JOB, out, "--validate", configs)
    check(r.returncode == 0, "profile exits 0 (rc %d): %s" % (r.returncode, r.stderr[-2000:]))
    text = r.stdout
    # the profile table: seven rows, iteration time a positive number
    rows = re.findall(r"^  (dp=\S+) +(\d+) +(\d+) +(\S+) +(\S+) +(\S+) +([\d.]+)$", text, re.M)
    check(len(rows) == 7, "7 profile rows, got %d:\n%s" % (len(rows), text))
    check(all(float(x[6]) > 0 for x in rows), "profile iteration times > 0")
    # the written profile reads back as rubick's format (rubick model fit parses it)
    path = os.path.join(out, "profile.txt")
    check(os.path.exists(path), "profile.txt written")
    zoo = os.path.join(tmp, "zoo")
    os.mkdir(zoo)
    with open(os.path.join(zoo, "cnn.model"), "w") as f:
        f.write(SPEC.replace(";", "\n") + "\n")
    fit = subprocess.run([RUBICK, "model", "fit", "--profile", path, "--model", "cnn", "--zoo", zoo],
                         capture_output=True, text=True)
    check(fit.returncode == 0, "rubick model fit reads profile.txt: %s" % fit.stderr)
    # fitted parameters: all nine printed, finite; the 7 and the forward time > 0 (the
    # batch-independent forward part may be 0: its lower bound)
    params = dict(re.findall(r"^  (perf_\w+|fwd_ms) = (\S+)$", text, re.M))
    check(len(params) == 9, "9 fitted values printed, got %s" % sorted(params))
    for k, v in params.items():
        low = 0 if k == "perf_fwd_fixed_ms" else 1e-300
        check(math.isfinite(float(v)) and float(v) >= low, "%s = %s finite and >= %g" % (k, v, low))
    # validation rows: family, plan, procs, cpus, measured, predicted, APE, held, refit, APE
    val = re.findall(r"^  (dp|gc|zero|tp|pp|3d) +(dp=\S+) +(\d+) +(\d+) +([\d.]+) +([\d.]+) +([\d.]+)% "
                     r"+([\d.]+) +([\d.]+) +([\d.]+)%$", text, re.M)
    check(len(val) == 3, "3 validation rows, got %d:\n%s" % (len(val), text))
    check([v[0] for v in val] == ["dp", "gc", "zero"], "families dp, gc, zero: %s" % [v[0] for v in val])
    check(val and val[1][3] == "2", "cpus=2 is the second row's CPUs")
    for v in val:
        meas, pred, ape = float(v[4]), float(v[5]), float(v[6])
        check(abs(100 * abs(pred - meas) / meas - ape) < 0.1 + 0.01 * ape, "APE is |pred-meas|/meas: %s" % (v,))
    for fam in ("all", "dp", "gc", "zero"):
        check(re.search(r"^  %s +\d+ +[\d.]+%% +[\d.]+%%$" % fam, text, re.M) is not None,
              "MAPE row '%s': %s" % (fam, text[-800:]))
    check(re.search(r"^  all +3 ", text, re.M) is not None, "MAPE 'all' counts the 3 rows")
    split = re.findall(r"^  (own-core|shared) +(\d+) ", text, re.M)
    check(sum(int(c) for _, c in split) == 3, "own-core + shared rows count the 3 rows: %s" % split)
    # each run's folder has what the local engine gives a run, and its log
    run1 = os.path.join(out, "profile-01")
    check(all(os.path.exists(os.path.join(run1, f)) for f in ("plan", "log", "times", "ckpt")),
          "profile-01 has plan, log, times, ckpt")

    # bad input: a job that fails, one that logs nothing, a bad configuration line
    r = profile("exit 3", os.path.join(tmp, "bad"))
    check(r.returncode == 1 and "configuration dp=1,tp=1,pp=1,mb=32" in r.stderr and
          "exit status 3" in r.stderr and "profile-01/log" in r.stderr, "failing job refused: %s" % r.stderr)
    r = profile("true", os.path.join(tmp, "quiet"))
    check(r.returncode == 1 and "reported 0 of 6 iterations" in r.stderr and "log " in r.stderr,
          "silent job refused: %s" % r.stderr)
    with open(configs, "w") as f:
        f.write("dp=3,tp=1,pp=1,mb=8,ga=1,gc=0,zero=0,offload=0\n")
    r = profile(JOB, os.path.join(tmp, "badcfg"), "--validate", configs)
    check(r.returncode == 1 and (configs + ":1") in r.stderr, "batch mismatch names FILE:LINE: %s" % r.stderr)

sys.exit(1 if fails else 0)
