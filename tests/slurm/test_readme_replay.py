"""The README's replay block ("Would rubick help your cluster?") runs as written: extracted
from README.md and run by bash -e from the source root on its own emulated cluster with
slurmdbd (only its lab folder and ports made unique to this run). The emulated cluster's
own sacct history must replay under fifo, sjf and rubick with every GPU job completed,
the cluster read from scontrol, and the run must say what it did not replay (the CPU job,
the steps folded) and the black-box share.
Checked apart from the block: sacct's rows, read here in Python, give the same jobs and
run times as `rubick trace` reads."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.abspath(os.path.dirname(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.path.abspath(os.environ.get("RK_BUILD_DIR", os.path.join(ROOT, "build")))
RUBICK = os.path.join(BUILD, "src", "cli", "rubick")


def block():
    text = open(os.path.join(ROOT, "README.md")).read()
    sec = text[text.index("### Would rubick help your cluster?"):]
    m = re.search(r"```sh\n(.*?)```", sec, re.S)
    if not m:
        raise AssertionError("README.md: no sh block under 'Would rubick help your cluster?'")
    return m.group(1)


def hms(s):
    d, _, t = s.rpartition("-")
    h, m, sec = (int(x) for x in t.split(":"))
    return (int(d) if d else 0) * 86400 + h * 3600 + m * 60 + sec


def main():
    for b in ("slurmctld", "slurmd", "munged", "slurmdbd", "mariadbd", "sacct"):
        if subprocess.run(["sh", "-c", "command -v " + b], capture_output=True).returncode:
            print("SKIP: %s not installed" % b)
            return 77
    if os.geteuid() != 0:
        print("SKIP: the emulated Slurm cluster needs root")
        return 77
    lab = tempfile.mkdtemp(prefix="rk-replay-lab-")
    os.rmdir(lab)  # slurm-up.sh makes it
    src = block().replace("/tmp/acct", lab).replace("./build/", BUILD + "/")
    lines = src.rstrip("\n").split("\n")
    # keep the lab's files for the checks below: the block's last line tears it down
    keep = "cp %s/accounting.txt %s/cluster.txt %s.out/" % (lab, lab, lab)
    script = "\n".join(["mkdir -p %s.out" % lab,
                        "trap 'rc=$?; [ -d %s/run ] && bash scripts/slurm-down.sh %s >/dev/null 2>&1; exit $rc' EXIT"
                        % (lab, lab)] + lines[:-1] + [keep, lines[-1]]) + "\n"
    env = dict(os.environ, RK_SLURM_PORT=str(10000 + os.getpid() % 15000))
    for k in ("SLURM_CONF", "RUBICK_URL", "RUBICK_TOKEN_FILE"):
        env.pop(k, None)
    before = set(glob.glob(os.path.join(ROOT, "slurm-*.out")))
    r = subprocess.run(["bash", "-e", "-c", script], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
    print(r.stdout[-3000:], r.stderr[-3000:])
    if r.returncode != 0:
        raise AssertionError("the README's replay block failed (%d)" % r.returncode)
    # a reader runs the block from a checkout: sbatch's default output is the cwd
    litter = sorted(set(glob.glob(os.path.join(ROOT, "slurm-*.out"))) - before)
    if litter:
        raise AssertionError("the block left job output in the source root: %s" % litter)
    out_dir = lab + ".out"
    cluster = open(os.path.join(out_dir, "cluster.txt")).read()
    if not re.search(r"^4x8:a800,cpus=16,mem=64000$", cluster, re.M):
        raise AssertionError("the cluster file is not the lab's 4 x 8 GPUs, 16 CPUs: %s" % cluster)
    # sacct's own rows, read apart: jobs (no '.') that started, with a GPU
    rows = [l.split("|") for l in open(os.path.join(out_dir, "accounting.txt")).read().splitlines()]
    hdr, rows = rows[0], rows[1:]
    col = {n: i for i, n in enumerate(hdr)}
    jobs = {r[col["JobID"]]: hms(r[col["Elapsed"]]) for r in rows
            if "." not in r[col["JobID"]] and r[col["Start"]] not in ("None", "Unknown")
            and "gres/gpu=" in r[col["AllocTRES"]] and hms(r[col["Elapsed"]]) > 0}
    steps = sum("." in r[col["JobID"]] for r in rows)
    if len(jobs) != 6 or steps < 6:
        raise AssertionError("sacct: %d GPU jobs that ran (want the block's 6), %d steps: %s"
                             % (len(jobs), steps, rows))
    t = subprocess.run([RUBICK, "trace", os.path.join(out_dir, "accounting.txt"), "--native"],
                       capture_output=True, text=True, timeout=60)
    recs = [l.split(",") for l in t.stdout.splitlines() if l and not l.startswith("#")]
    got = {x[recs[0].index("name")]: float(x[recs[0].index("duration_s")]) for x in recs[1:]}
    if got != {k: float(v) for k, v in jobs.items()}:
        raise AssertionError("rubick trace read %s, sacct says %s" % (got, jobs))
    for p in ("fifo", "sjf", "rubick"):
        if not re.search(r"^%s\s.*\s6/6\s" % p, r.stdout, re.M):
            raise AssertionError("%s did not complete the 6 jobs: %s" % (p, r.stdout))
    for want in ("black boxes: 6 of 6 job(s), 100.0% of", "dropped 1 job(s) that request no GPU",
                 "job step(s) folded into their jobs"):
        if want not in r.stderr:
            raise AssertionError("the replay does not say '%s': %s" % (want, r.stderr))
    print("README replay block ok: %d jobs, %d steps folded" % (len(jobs), steps))
    shutil.rmtree(out_dir, ignore_errors=True)
    shutil.rmtree(lab, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
