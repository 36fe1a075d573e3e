#!/usr/bin/env python3
"""docs/dev/write-a-policy.md works as written, on a copy of the repository.

    test_write_a_policy.py SOURCE_DIR [--keep]

Reads the guide's marked code blocks:
  ```LANG file=PATH            a new file, exactly the block (must not exist yet)
  ```LANG edit=PATH            lines appended to PATH
  ```LANG edit=PATH after=TEXT lines inserted after the one line of PATH equal to TEXT
  ```sh run                    commands run from the copy's root, `rubick` on PATH
  ```text output               what the run block prints, byte for byte
then copies the source tree (git's files when SOURCE_DIR is a git checkout, else the
tree without build folders) to a temporary folder, applies the blocks, builds
`rubick` and the unit tests that iterate the registry in the copy, and checks:
  - the example policy is not registered in the real tree;
  - `rubick sim --help` lists it with the summary its vtable gives;
  - the run block prints the output block, every job completes under both policies
    and the example starts jobs in another order than fifo;
  - policy_decisions and policy_ranges pass with the example registered;
  - the example in --check mode twice with the same seed prints the same bytes
    (sim_property's check, on the golden trace).
--keep leaves the copy for inspection.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

GUIDE = os.path.join("docs", "dev", "write-a-policy.md")
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def die(msg):
    print("FAIL " + msg, flush=True)
    sys.exit(1)


def blocks(text):
    """(info string, body) of every fenced block, in order."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\S.*)?$", lines[i])
        if m and m.group(1):
            info = m.group(1)
            body = []
            i += 1
            while i < len(lines) and lines[i] != "```":
                body.append(lines[i])
                i += 1
            if i == len(lines):
                die(f"{GUIDE}: block '{info}' is never closed")
            out.append((info, "\n".join(body) + "\n"))
        elif m:
            i += 1
            while i < len(lines) and lines[i] != "```":
                i += 1
        i += 1
    return out


def parse_info(info):
    """LANG then key=value marks; after= takes the rest of the line."""
    words = {}
    head, _, rest = info.partition(" ")
    after = None
    if " after=" in " " + rest:
        rest, _, after = (" " + rest).partition(" after=")
    for w in rest.split():
        k, eq, v = w.partition("=")
        words[k] = v if eq else True
    if after is not None:
        words["after"] = after
    return head, words


def copy_tree(src, dst):
    try:
        out = subprocess.run(["git", "-C", src, "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, check=True).stdout
        files = [f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for dirpath, dirnames, filenames in os.walk(src):
            dirnames[:] = [d for d in dirnames if d != ".git" and not
                           os.path.exists(os.path.join(dirpath, d, "meson-private"))]
            for name in filenames:
                files.append(os.path.relpath(os.path.join(dirpath, name), src))
    for rel in files:
        s = os.path.join(src, rel)
        if not os.path.isfile(s):
            continue  # deleted in the work tree but still in the index
        d = os.path.join(dst, rel)
        os.makedirs(os.path.dirname(d), exist_ok=True)
        shutil.copy2(s, d)
    return len(files)


def apply(root, guide_blocks):
    """Apply the file= and edit= blocks; returns (policy name, summary, run, output)."""
    name = summary = run = output = None
    for info, body in guide_blocks:
        lang, marks = parse_info(info)
        if "file" in marks:
            path = os.path.join(root, marks["file"])
            if os.path.exists(path):
                die(f"{GUIDE}: file={marks['file']} already exists in the tree")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(body)
            m = re.search(r'\.name = "([^"]+)"', body)
            s = re.search(r'\.summary = "([^"]+)"', body)
            if m:
                name, summary = m.group(1), s.group(1) if s else None
        elif "edit" in marks:
            path = os.path.join(root, marks["edit"])
            if not os.path.isfile(path):
                die(f"{GUIDE}: edit={marks['edit']}: no such file")
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            if "after" in marks:
                hits = [i for i, line in enumerate(lines) if line == marks["after"]]
                if len(hits) != 1:
                    die(f"{GUIDE}: edit={marks['edit']} after='{marks['after']}': "
                        f"{len(hits)} lines match, want exactly 1")
                at = hits[0] + 1
            else:
                at = len(lines) - 1 if lines and lines[-1] == "" else len(lines)
            lines[at:at] = body.rstrip("\n").split("\n")
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))
        elif "run" in marks:
            run = body
        elif "output" in marks:
            output = body
    return name, summary, run, output


def sh(args, cwd, what, env=None, timeout=900):
    p = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode:
        print(p.stdout[-4000:] + p.stderr[-4000:])
    check(p.returncode == 0, what)
    return p


def start_orders(csv_text):
    """policy -> (job names by first start then name, all completed)."""
    rows = [line.split(",") for line in csv_text.strip().split("\n")[1:]]
    per = {}
    for pol, job, start, _finish, done in rows:
        per.setdefault(pol, []).append((float(start), job, done == "1"))
    return {p: ([j for _, j, _ in sorted(v)], all(d for _, _, d in v)) for p, v in per.items()}


def main():
    if len(sys.argv) < 2 or not os.path.isdir(sys.argv[1]):
        die("usage: test_write_a_policy.py SOURCE_DIR [--keep]")
    src = os.path.abspath(sys.argv[1])
    keep = "--keep" in sys.argv[2:]
    with open(os.path.join(src, GUIDE), encoding="utf-8") as f:
        guide_blocks = blocks(f.read())

    tmp = tempfile.mkdtemp(prefix="rk-write-a-policy-")
    try:
        root = os.path.join(tmp, "src")
        n = copy_tree(src, root)
        print(f"copied {n} files to {root}", flush=True)
        name, summary, run, output = apply(root, guide_blocks)
        if not (name and summary and run and output):
            die(f"{GUIDE}: needs a file= block defining .name and .summary, a 'run' and an "
                "'output' block")
        with open(os.path.join(src, "src", "policy", "registry.c"), encoding="utf-8") as f:
            check(f"rk_policy_{name.replace('-', '_')}" not in f.read(),
                  f"the example '{name}' is not in the real tree's registry")

        build = os.path.join(tmp, "build")
        sh(["meson", "setup", "--buildtype=plain", "-Dwerror=true", build, root], tmp,
           "meson setup of the copy")
        sh(["ninja", "-C", build, "src/cli/rubick",
            "tests/unit/policy/test_policy_decisions", "tests/unit/policy/test_policy_ranges"],
           tmp, "the guide's code builds warning-free (rubick and the registry tests)")
        rubick = os.path.join(build, "src", "cli", "rubick")
        if failures:
            sys.exit(1)

        help_text = subprocess.run([rubick, "sim", "--help"], capture_output=True,
                                   text=True).stdout + ""
        listed = re.search(r"^  " + re.escape(name) + r"\s+(.*)$", help_text, re.M)
        check(listed is not None and listed.group(1).strip() == summary,
              f"rubick sim --help lists '{name}' with its summary")

        env = dict(os.environ, PATH=os.path.dirname(rubick) + os.pathsep + os.environ["PATH"])
        p = subprocess.run(["bash", "-euo", "pipefail", "-c", run], cwd=root, env=env,
                           capture_output=True, text=True, timeout=300)
        check(p.returncode == 0, "the guide's run block succeeds" +
              ("" if p.returncode == 0 else ": " + p.stderr[-2000:]))
        check(p.stdout == output, "the run block prints the guide's output block" +
              ("" if p.stdout == output else ":\n--- printed\n" + p.stdout + "--- guide\n" +
               output))
        orders = start_orders(p.stdout) if p.returncode == 0 else {}
        ok = "fifo" in orders and name in orders
        check(ok and orders["fifo"][1] and orders[name][1],
              "every job completes under fifo and the example")
        check(ok and orders["fifo"][0] != orders[name][0],
              f"the example starts jobs in another order than fifo ({orders.get(name, [''])[0]} "
              f"vs {orders.get('fifo', [''])[0]})")

        for t in ("test_policy_decisions", "test_policy_ranges"):
            sh([os.path.join(build, "tests", "unit", "policy", t)], root,
               f"{t} passes with '{name}' registered",
               env=dict(os.environ, RK_DATA_DIR=os.path.join(root, "data"),
                        RK_SOURCE_DIR=root, RK_BUILD_DIR=build))

        golden = os.path.join(root, "tests", "sim", "golden", "fifo_srtf")
        outs = []
        for k in (1, 2):
            q = subprocess.run([rubick, "sim", "--trace", os.path.join(golden, "trace.csv"),
                                "--cluster", "2x2", "--oracle",
                                "measured=" + os.path.join(golden, "oracle"), "--policy", name,
                                "--seed", "7", "--check", "--json", "--no-timing"],
                               capture_output=True, text=True)
            check(q.returncode == 0, f"'{name}' in check mode on the golden trace, run {k}" +
                  ("" if q.returncode == 0 else ": " + q.stderr[-1000:]))
            outs.append(q.stdout)
        check(outs[0] == outs[1] and outs[0] != "", "same seed, same bytes")
    finally:
        if keep:
            print("kept " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("the guide works as written")


if __name__ == "__main__":
    main()
