"""Issue 13: the README's Slurm block runs as written, on its own (no token or
variable from the block before it): extracted from README.md, run by bash -e from
the source root, with only its lab folder and port made unique to this run (two
builds' tests may overlap) and, before its last line, a wait for job 1 to end. Job 1
(examples/train.py under Slurm) must end done, and rubick nodes must show Slurm's
node states."""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.abspath(os.path.dirname(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.path.abspath(os.environ.get("RK_BUILD_DIR", os.path.join(ROOT, "build")))


def block():
    text = open(os.path.join(ROOT, "README.md")).read()
    sec = text[text.index("### On a Slurm cluster"):]
    m = re.search(r"```sh\n(.*?)```", sec, re.S)
    if not m:
        raise AssertionError("README.md: no sh block under 'On a Slurm cluster'")
    return m.group(1)


def main():
    for b in ("slurmctld", "slurmd", "munged"):
        if subprocess.run(["sh", "-c", "command -v " + b], capture_output=True).returncode:
            print("SKIP: %s not installed" % b)
            return 77
    if os.geteuid() != 0:
        print("SKIP: the emulated Slurm cluster needs root")
        return 77
    src = block()
    lab = tempfile.mkdtemp(prefix="rk-readme-lab-")
    os.rmdir(lab)  # slurm-up.sh makes it
    port = 30000 + os.getpid() % 2700  # below the ephemeral range, apart from the Slurm ports
    src = src.replace("/tmp/lab", lab).replace("8643", str(port)).replace("./build/", BUILD + "/")
    lines = src.rstrip("\n").split("\n")
    # The README's job trains 40 iterations of the example on CPU: about 60 s on an idle
    # 2-core machine, over 260 s at load 20 (measured: 4.8 samples/s, batch 32).
    check_done = ("for i in $(seq 360); do %s/src/cli/rubick show 1 --json | grep -q '\"state\": \"\\(done\\|failed\\)\"'"
                  " && break; sleep 1; done; %s/src/cli/rubick show 1 --json > %s/job1.json" % (BUILD, BUILD, lab))
    script = "\n".join(lines[:-1] + [check_done, "trap 'rc=$?; kill $rkd 2>/dev/null || true; [ -d %s/run ] && bash scripts/slurm-down.sh %s >/dev/null 2>&1; exit $rc' EXIT"
                                     % (lab, lab),
                                     lines[-1]]) + "\n"
    env = dict(os.environ, RK_SLURM_PORT=str(10000 + os.getpid() % 15000))
    env.pop("SLURM_CONF", None)
    env.pop("RUBICK_URL", None)
    env.pop("RUBICK_TOKEN_FILE", None)
    r = subprocess.run(["bash", "-e"] + (["-x"] if os.environ.get("RK_README_TRACE") else []) + ["-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    print(r.stdout[-3000:], r.stderr[-3000:])
    if r.returncode != 0:
        raise AssertionError("the README's Slurm block failed (%d)" % r.returncode)
    job = open(os.path.join(lab, "job1.json")).read()
    if '"state": "done"' not in job:
        raise AssertionError("job 1 did not end done: %s" % job[-2000:])
    if "STATE" not in r.stdout or "idle" not in r.stdout:
        raise AssertionError("rubick nodes without Slurm's states: %s" % r.stdout)
    # no --cluster: the nodes are Slurm's (slurm-up.sh: 16 CPUs, RealMemory=64000 each)
    if not re.search(r"^\s+3 a800\s+8\s+\d+\s+\d+\s+\d+/16 ", r.stdout, re.M):
        raise AssertionError("rubick nodes are not Slurm's 4 x 8 GPUs, 16 CPUs: %s" % r.stdout)
    print("README Slurm block ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
