"""The README's rubickd block runs as written: extracted from README.md and run by
bash -e in a fresh folder (its files, admin.token and rubickd.db*, land there, as
they would in the checkout), with only its port made unique to this run and its
first line, `ninja -C build`, left out (meson test has built everything). Then:
the submitted job was listed, the block left none of its files behind, and
neither rubickd nor the job's processes outlived it."""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.abspath(os.path.dirname(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.path.abspath(os.environ.get("RK_BUILD_DIR", os.path.join(ROOT, "build")))


def block():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    sec = text[text.index("## The scheduler as a service: rubickd"):]
    m = re.search(r"```sh\n(.*?)```", sec, re.S)
    if not m:
        raise AssertionError("README.md: no sh block under 'The scheduler as a service'")
    return m.group(1)


def leftovers(*patterns):
    """Processes whose command line names this run's folder (the job, its supervisor) or
    its listen address (rubickd)."""
    found = []
    for pattern in patterns:
        r = subprocess.run(["pgrep", "-af", pattern], capture_output=True, text=True)
        found += [l for l in r.stdout.splitlines() if "pgrep" not in l and l not in found]
    return found


def main():
    src = block()
    lines = src.rstrip("\n").split("\n")
    if lines[0].strip() != "ninja -C build":
        raise AssertionError("README.md: the rubickd block no longer starts with 'ninja -C build': "
                             "update this test")
    port = str(31000 + os.getpid() % 2500)  # below the ephemeral range, apart from Slurm's
    script = "\n".join(lines[1:]).replace("8642", port).replace("./build/", BUILD + "/") + "\n"
    with tempfile.TemporaryDirectory(prefix="rk-readme-daemon-") as run:
        os.symlink(os.path.join(ROOT, "tests"), os.path.join(run, "tests"))
        env = dict(os.environ)
        for k in ("RUBICK_URL", "RUBICK_TOKEN_FILE", "RUBICK_TENANT"):
            env.pop(k, None)
        try:
            r = subprocess.run(["bash", "-e", "-c", script], cwd=run, env=env,
                               capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            raise AssertionError("the README's rubickd block did not end in 120 s "
                                 "(does it stop the daemon it started?)")
        finally:
            stray = leftovers(run, "127.0.0.1:" + port)
            for line in stray:  # never leave a daemon or a job behind a failed check
                subprocess.run(["kill", "-9", line.split()[0]], capture_output=True)
        print(r.stdout[-3000:], r.stderr[-3000:])
        if r.returncode != 0:
            raise AssertionError("the README's rubickd block failed (%d)" % r.returncode)
        if not re.search(r"^\s*1\s", r.stdout, re.M):
            raise AssertionError("rubick queue did not list job 1: %s" % r.stdout[-2000:])
        left = sorted(n for n in os.listdir(run) if n != "tests")
        if left:
            raise AssertionError("the block left files behind: %s" % left)
        if stray:
            raise AssertionError("processes outlived the block: %s" % stray)
    print("README rubickd block ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
