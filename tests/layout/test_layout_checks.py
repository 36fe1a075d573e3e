#!/usr/bin/env python3
"""The two layout checks catch what they are for, on a copy of the real tree.

    test_layout_checks.py SOURCE_DIR BUILD_DIR

  - scripts/layers.py passes on the tree as it is, and fails, naming the line,
    on a planted back-include (a policy file including the simulator's header),
    a private header reached across layers, a public header that includes a
    higher one, and one policy family including another's private header;
  - scripts/callgraph.py passes on the build as it is, and fails on a planted
    circle between two files of one folder, on a planted call from a folder
    back into a sibling folder that already calls it, and on a one-way call
    between two policy families kept --apart.

Plants go into a temporary copy (sources) and a temporary compile database
(objects of the real build plus the planted ones): the tree is never touched.
"""
import importlib.util
import json
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


def run(args):
    p = subprocess.run([sys.executable] + args, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def plant_line(path, line):
    with open(path, "a", encoding="utf-8") as f:
        f.write("\n" + line + "\n")


def first_file(root, sub, ext):
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, sub)):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(ext):
                return os.path.join(dirpath, name)
    raise SystemExit(f"no {ext} file under {sub}")


def test_layers(source, tmp):
    layers = os.path.join(source, "scripts", "layers.py")
    rc, out = run([layers, source])
    check(rc == 0, "layers.py passes on the tree as it is" + ("" if rc == 0 else ":\n" + out))

    cases = [
        ("src/policy", '#include "rubick/sim.h"', "a policy file includes a sim header"),
        ("src/sim", '#include "daemon/sched/sched.h"', "a sim file reaches into daemon's private header"),
        ("src/cli", '#include "model/launch_internal.h"', "a cli file reaches into model's private header"),
        ("include/rubick/plan.h", '#include "rubick/policy.h"', "a model header includes a policy header"),
        ("src/policy/classic", '#include "policy/sia/sia_internal.h"', "a policy family includes another's header"),
    ]
    for n, (where, line, why) in enumerate(cases):
        copy = os.path.join(tmp, f"layers-{n}")
        shutil.copytree(os.path.join(source, "src"), os.path.join(copy, "src"))
        shutil.copytree(os.path.join(source, "include"), os.path.join(copy, "include"))
        target = os.path.join(copy, where)
        if os.path.isdir(target):
            target = first_file(copy, where, ".c")
        plant_line(target, line)
        rc, out = run([layers, copy])
        rel = os.path.relpath(target, copy)
        check(rc == 1 and rel in out and line.split('"')[1] in out,
              f"layers.py fails on {why} ({rel})" + ("" if rc == 1 else ":\n" + out))


def load_callgraph(source):
    spec = importlib.util.spec_from_file_location("callgraph", os.path.join(source, "scripts", "callgraph.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def defined_function(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] == "T":
            return p[2]
    return None


def compile_plant(tmp, src_copy, rel, body, db):
    """Writes src_copy/rel, compiles it into tmp and adds it to the database."""
    path = os.path.join(src_copy, rel)
    with open(path, "w", encoding="utf-8") as f:
        f.write(body)
    obj = os.path.join(tmp, rel.replace("/", "_") + ".o")
    subprocess.run(["cc", "-c", "-o", obj, path], check=True)
    db.append({"directory": tmp, "file": path, "output": os.path.relpath(obj, tmp)})


def test_callgraph(source, build, tmp):
    callgraph = os.path.join(source, "scripts", "callgraph.py")
    src = os.path.join(source, "src")
    rc, out = run([callgraph, build, src])
    check(rc == 0, "callgraph.py passes on the build as it is" + ("" if rc == 0 else ":\n" + out))

    cg = load_callgraph(source)
    objs = cg.objects_by_source(build, src)
    edges = cg.file_graph(objs)
    # A folder whose subfolder A calls its sibling B: plant a call from B back into A.
    # The policy folder first when it has such a pair (a family calling common/: the
    # plant is common/ calling back into the family).
    pairs = []
    for folder in cg.folders_of(objs):
        graph = cg.member_graph(folder, edges)
        for a in sorted(graph):
            for b in sorted(graph[a]):
                if a.endswith("/") and b.endswith("/"):
                    pairs.append((folder, a, b))
    pairs.sort(key=lambda p: p[0] != "policy")
    pair = pairs[0] if pairs else None
    check(pair is not None, "the tree has two sibling folders where one calls the other")
    if pair is None:
        return
    folder, a, b = pair
    prefix = folder + "/" if folder else ""
    a_files = sorted(f for f in objs if f.startswith(prefix + a))
    symbol = next((s for s in (defined_function(objs[f]) for f in a_files) if s), None)
    check(symbol is not None, f"src/{prefix}{a} defines a function")
    if symbol is None:
        return

    cases = ["files", "folders"]
    others = sorted(d + "/" for d in os.listdir(os.path.join(src, folder))
                    if os.path.isdir(os.path.join(src, folder, d)) and d + "/" not in (a, b))
    if folder == "policy" and others:
        cases.append("apart")  # a one-way call from one family into another
    for case in cases:
        src_copy = os.path.join(tmp, f"cg-{case}", "src")
        shutil.copytree(src, src_copy)
        with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
            db = json.load(f)
        for e in db:  # the real objects, their sources seen in the copy
            directory = e.get("directory", build)
            real = os.path.realpath(os.path.join(directory, e["file"]))
            e["directory"] = directory
            if real.startswith(os.path.realpath(src) + os.sep):
                e["file"] = os.path.join(src_copy, os.path.relpath(real, os.path.realpath(src)))
        planted = os.path.join(tmp, f"cg-{case}", "build")
        os.makedirs(planted)
        if case == "files":
            where = prefix + b
            compile_plant(planted, src_copy, where + "planted_x.c",
                          "void planted_y(void);\nvoid planted_x(void) { planted_y(); }\n", db)
            compile_plant(planted, src_copy, where + "planted_y.c",
                          "void planted_x(void);\nvoid planted_y(void) { planted_x(); }\n", db)
            want = f"circle in src/{where.rstrip('/')}: planted_x.c planted_y.c"
        elif case == "folders":
            compile_plant(planted, src_copy, prefix + b + "planted_back.c",
                          f"void {symbol}(void);\nvoid planted_back(void) {{ {symbol}(); }}\n", db)
            want = f"circle in src/{folder}" if folder else "circle in src:"
        else:
            other = others[0]
            compile_plant(planted, src_copy, prefix + other + "planted_cross.c",
                          f"void {symbol}(void);\nvoid planted_cross(void) {{ {symbol}(); }}\n", db)
            want = f"crossing in src/{folder}: {other} uses {a}"
        with open(os.path.join(planted, "compile_commands.json"), "w", encoding="utf-8") as f:
            json.dump(db, f)
        apart = ["--apart", f"{folder}:{a.rstrip('/')},{others[0].rstrip('/')}"] if case == "apart" else []
        rc, out = run([callgraph, planted, src_copy] + apart)
        check(rc == 1 and want in out and (case != "folders" or (a in out and b in out)),
              f"callgraph.py fails on a planted {'crossing' if case == 'apart' else 'circle'} of {case} in src/{prefix}"
              + (others[0] if case == "apart" else b)
              + ("" if rc == 1 and want in out else f" (wanted '{want}'):\n" + out))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: test_layout_checks.py SOURCE_DIR BUILD_DIR")
    source, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        test_layers(source, tmp)
        test_callgraph(source, build, tmp)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
