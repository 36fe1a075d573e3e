#!/usr/bin/env python3
"""No lower layer includes a higher one: checked over the sources' #include lines.

    scripts/layers.py SOURCE_DIR

The floors, bottom up (docs/dev/house.md):

    util  <  model  <  policy  <  sim | daemon  <  cli

sim and daemon stand side by side and never include each other. A file under
src/LAYER/ may include:

  - a header of its own layer by its path from src/ ("policy/sia/sia_internal.h"),
    or one beside it ("sjf_queue.h" in the same folder);
  - a public header, include/rubick/H.h, whose layer (the table below) is
    its own or a lower one.

The policy families (APART) never include each other's private headers.
A private header of another layer ("daemon/sched/sched.h" from src/sim) is never a
way across, not even downwards: what a layer offers the others is its
include/rubick/ face. A public header may include public headers of its own
layer or lower ones, and nothing else of the tree. A new public header must be
given its layer here, so that the question is asked once.
Exits 1 naming each offending line, 2 on a usage problem.
"""
import os
import re
import sys

LAYERS = {"util": 0, "model": 1, "policy": 2, "sim": 3, "daemon": 3, "cli": 4}

# The layer of each public header: the floor whose src/ folder implements it.
PUBLIC = {
    "util": "error.h idtab.h runsort.h",
    "model": "model.h plan.h zoo.h launch.h memory.h perf.h fit.h measured.h profile.h "
             "refit.h curve.h csvline.h netcal.h goodput.h",
    "policy": "cluster.h job.h gpu.h placement.h policy.h lp.h mckp.h sharing.h aryl.h",
    "sim": "sim.h trace.h oracle.h metrics.h report.h interference.h loadseries.h figure.h",
}
LAYER_OF_PUBLIC = {h: layer for layer, names in PUBLIC.items() for h in names.split()}

# Folders of one layer that never include each other's private headers: the policy
# families (what two of them need lives in policy/common/ or policy/sharing/).
APART = {"policy": {"aryl", "classic", "rubick", "sia", "sjf", "synergy"}}

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def may_use(user, used):
    """Whether a file of layer `user` may include a header of layer `used`."""
    return used == user or LAYERS[used] < LAYERS[user]


def check_file(path, rel, layer, problems):
    """rel: path from the tree's root (src/policy/sia/sia.c or include/rubick/sim.h);
    layer: the file's floor."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1)
            where = f"{rel}:{n}: #include \"{target}\""
            head, sep, rest = target.partition("/")
            if sep and head == "rubick":
                used = LAYER_OF_PUBLIC.get(rest)
                if used is None:
                    problems.append(f"{where}: include/rubick/{rest} has no layer: "
                                    "give it one in scripts/layers.py (PUBLIC)")
                    continue
                if not may_use(layer, used):
                    problems.append(f"{where}: a {layer} file includes a {used} header "
                                    f"({'layers side by side' if LAYERS[used] == LAYERS[layer] else 'a higher layer'})")
            elif sep and head in LAYERS:
                if rel.startswith("include/"):
                    problems.append(f"{where}: a public header includes a private one")
                elif head != layer:
                    problems.append(f"{where}: a {layer} file reaches into {head}'s private "
                                    f"header; cross through include/rubick/ instead")
                else:
                    mine, theirs = rel.split("/")[2], rest.split("/")[0]
                    apart = APART.get(layer, ())
                    if mine in apart and theirs in apart and mine != theirs:
                        problems.append(f"{where}: {layer}/{mine} includes a private header of "
                                        f"{layer}/{theirs}; move what both need to a shared folder")
            # A bare name ("classic.h") is a header beside the file: same folder, same layer.


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: layers.py SOURCE_DIR")
    root = sys.argv[1]
    src, pub = os.path.join(root, "src"), os.path.join(root, "include", "rubick")
    if not os.path.isdir(src) or not os.path.isdir(pub):
        sys.exit(f"layers.py: {root} has no src/ and include/rubick/")
    problems, n_files = [], 0
    for name in sorted(os.listdir(pub)):
        if name.endswith(".h"):
            n_files += 1
            layer = LAYER_OF_PUBLIC.get(name)
            if layer is None:
                problems.append(f"include/rubick/{name}: has no layer: give it one in scripts/layers.py (PUBLIC)")
                continue
            check_file(os.path.join(pub, name), f"include/rubick/{name}", layer, problems)
    for layer_dir in sorted(os.listdir(src)):
        top = os.path.join(src, layer_dir)
        if not os.path.isdir(top):
            continue
        if layer_dir not in LAYERS:
            problems.append(f"src/{layer_dir}/: a folder that is no layer (known: {', '.join(LAYERS)})")
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith((".c", ".h")):
                    n_files += 1
                    path = os.path.join(dirpath, name)
                    check_file(path, os.path.relpath(path, root), layer_dir, problems)
    for p in problems:
        print(p)
    print(f"layers.py: {n_files} files, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
