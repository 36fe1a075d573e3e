#!/usr/bin/env python3
"""scripts/doclinks.py catches what it is for, on a copy of the real docs.

    test_doclinks.py SOURCE_DIR

It passes on the tree as it is, and fails, naming the file and line, on each
planted problem: a path into ../shared, a citation of algorithms.md, of
peer_results.md, of shared/research, or of the Slurm note by section; a
relative link resolving outside the repository; a link to a file that does not
exist; a docs/NAME.md path in running text that does not exist. It also fails
on a doc missing from docs/README.md and on a missing docs/README.md. Plants go
into a temporary copy of README.md, docs/ and the files the docs link (the
whole git tree); the tree itself is never touched.
"""
import os
import shutil
import subprocess
import sys
import tempfile

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(script, root):
    p = subprocess.run([sys.executable, script, root], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def copy_tree(src, dst):
    try:
        out = subprocess.run(["git", "-C", src, "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, check=True).stdout
        files = [f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = ["README.md"]
        for dirpath, _dirs, names in os.walk(os.path.join(src, "docs")):
            files += [os.path.relpath(os.path.join(dirpath, n), src) for n in names]
    for rel in files:
        s = os.path.join(src, rel)
        if os.path.isfile(s):
            d = os.path.join(dst, rel)
            os.makedirs(os.path.dirname(d), exist_ok=True)
            shutil.copy2(s, d)


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        raise SystemExit("usage: test_doclinks.py SOURCE_DIR")
    src = os.path.abspath(sys.argv[1])
    script = os.path.join(src, "scripts", "doclinks.py")
    rc, out = run(script, src)
    check(rc == 0, "doclinks.py passes on the tree as it is" + ("" if rc == 0 else ":\n" + out))

    # (file, line to append, what the report must name)
    plants = [
        ("docs/sim.md", "See ../shared/traces/muri for the trace.", "points into ../shared"),
        ("docs/oracle.md", "The equation is in algorithms.md §1.4.", "cites algorithms.md"),
        ("docs/fidelity.md", "Targets: peer_results.md.", "cites peer_results.md"),
        ("docs/dev/house.md", "Notes: `shared/research/`.", "cites the research notes"),
        ("docs/slurm.md", "Timings as in slurm.md §3.", "Slurm research note"),
        ("README.md", "Open /work/shared/seeds to read it.", "absolute path"),
        ("docs/plans.md", "[up](../../outside.md)", "resolves outside the repository"),
        ("docs/dev/house.md", "[gone](../no-such-doc.md)", "names a file that does not exist"),
        ("README.md", "[gone](docs/nope.md#x)", "names a file that does not exist"),
        ("docs/rubickd.8", "see docs/nope.md", "'docs/nope.md' does not exist"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "base")
        copy_tree(src, base)
        for k, (rel, line, want) in enumerate(plants):
            root = os.path.join(tmp, f"p{k}")
            shutil.copytree(base, root)
            path = os.path.join(root, rel)
            with open(path, encoding="utf-8") as f:
                n = len(f.read().split("\n"))
            with open(path, "a", encoding="utf-8") as f:
                f.write(line + "\n")
            rc, out = run(script, root)
            where = f"{rel}:{n}:"
            check(rc == 1 and where in out and want in out,
                  f"fails on '{line}' in {rel}, naming {where} and '{want}'" +
                  ("" if rc == 1 and where in out and want in out else ":\n" + out))
            shutil.rmtree(root)

        root = os.path.join(tmp, "unlisted")
        shutil.copytree(base, root)
        with open(os.path.join(root, "docs", "dev", "new-doc.md"), "w") as f:
            f.write("# A doc nobody indexed\n")
        rc, out = run(script, root)
        check(rc == 1 and "docs/README.md: does not list docs/dev/new-doc.md" in out,
              "fails on a doc docs/README.md does not list" + ("" if rc == 1 else ":\n" + out))

        os.remove(os.path.join(root, "docs", "README.md"))
        rc, out = run(script, root)
        check(rc == 1 and "docs/README.md: missing" in out, "fails without docs/README.md")
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)


if __name__ == "__main__":
    main()
