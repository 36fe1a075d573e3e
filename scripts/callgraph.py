#!/usr/bin/env python3
"""Calls go one way in every folder of the source tree: checked from the objects a build made.

    scripts/callgraph.py BUILD_DIR SOURCE_DIR/src [--apart FOLDER:A,B,...]...
    scripts/callgraph.py BUILD_DIR SOURCE_DIR/src --show src/policy/sia

The developers' guide wants one direction inside each folder: a core that
calls its parts, parts that never call back (docs/dev/house.md). This reads
the build's compile_commands.json to find the object of every source file
under SOURCE_DIR/src, and `nm` to find which symbols each object defines and
uses, so it sees calls and data references alike (not inline functions, which
is why a shared predicate may live in a header). Then, for every folder, it
looks at the folder's *members* -- the files directly in it and each
subfolder taken as one unit -- and fails on any circle among them:

  - two files of one folder that reach each other, directly or around a ring;
  - two sibling folders that do (src/policy/common calling into a family);
  - a file and a sibling folder that do (registry.c -> sia/ -> registry.c).

`--apart src/policy:classic,sia` adds that the named members of one folder
never reference each other at all, in either direction (the policy
families; `--apart src:sim,daemon` for the two drivers).
`--show FOLDER` prints the member graph of one folder (`a.c -> b.c sub/`).
Exits 1 naming each circle or crossing, 2 on a usage or build problem.
"""
import argparse
import collections
import json
import os
import subprocess
import sys


def objects_by_source(build_dir, src_dir):
    """{source path relative to src_dir: object path}, one object per source.

    A source may be compiled into several targets (src/cli/util.c into the
    CLI, the benchmarks and some tests): the object of a target under src/ is
    preferred, so the graph is the one the shipped binaries link."""
    db_path = os.path.join(build_dir, "compile_commands.json")
    try:
        with open(db_path, encoding="utf-8") as f:
            db = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"callgraph.py: {db_path}: {e} (configure the build first)")
    src_dir = os.path.realpath(src_dir)
    found = {}
    for entry in db:
        directory = entry.get("directory", build_dir)
        source = os.path.realpath(os.path.join(directory, entry["file"]))
        if not source.startswith(src_dir + os.sep) or "output" not in entry:
            continue
        obj = os.path.join(directory, entry["output"])
        rel = os.path.relpath(source, src_dir)
        in_src_target = entry["output"].startswith("src" + os.sep)
        if rel not in found or (in_src_target and not found[rel][1]):
            found[rel] = (obj, in_src_target)
    return {rel: obj for rel, (obj, _) in found.items()}


def file_graph(objs):
    """{file: set of files it uses a symbol of}, from nm's defined (T D B R)
    and undefined (U) symbols. A symbol defined by two files (each program's
    main) tells nothing about direction and is left out."""
    definers, uses = collections.defaultdict(set), collections.defaultdict(set)
    for rel, obj in sorted(objs.items()):
        if not os.path.exists(obj):
            sys.exit(f"callgraph.py: {obj} (the object of {rel}) is missing: build first")
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBR":
                definers[p[2]].add(rel)
            elif len(p) == 2 and p[0] == "U":
                uses[rel].add(p[1])
    edges = collections.defaultdict(set)
    for rel, syms in uses.items():
        for s in syms:
            owners = definers.get(s, ())
            if len(owners) == 1:
                (owner,) = owners
                if owner != rel:
                    edges[rel].add(owner)
    return edges


def member(folder, path):
    """The member of `folder` that path lies in: a file name, or `sub/` for a
    subfolder; None when path is not under folder."""
    rel = path if folder == "" else (path[len(folder) + 1:] if path.startswith(folder + "/") else None)
    if rel is None:
        return None
    head, sep, _ = rel.partition("/")
    return head + "/" if sep else head


def member_graph(folder, edges):
    graph = collections.defaultdict(set)
    for a, targets in edges.items():
        ma = member(folder, a)
        if ma is None:
            continue
        for b in targets:
            mb = member(folder, b)
            if mb is not None and mb != ma:
                graph[ma].add(mb)
    return graph


def circles(graph):
    """Strongly connected components of more than one member (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def folders_of(files):
    out = {""}
    for f in files:
        parts = f.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            out.add("/".join(parts[:i]))
    return sorted(out)


def parse_apart(specs, src_dir):
    rules = []
    for spec in specs:
        folder, sep, names = spec.partition(":")
        members = [n.strip() for n in names.split(",") if n.strip()]
        if not sep or len(members) < 2:
            sys.exit(f"callgraph.py: --apart {spec!r}: want FOLDER:A,B[,...] (two members or more)")
        folder = folder.rstrip("/")
        folder = "" if folder == "src" else folder[4:] if folder.startswith("src/") else folder
        for m in members:
            if not os.path.isdir(os.path.join(src_dir, folder, m)):
                sys.exit(f"callgraph.py: --apart {spec!r}: {os.path.join('src', folder, m)} is not a folder")
        rules.append((folder, [m + "/" for m in members]))
    return rules


def label(folder):
    return "src" if folder == "" else "src/" + folder


def main():
    ap = argparse.ArgumentParser(description="Fail on any circle of calls among a folder's members.")
    ap.add_argument("build_dir")
    ap.add_argument("src_dir", help="the tree's src/ folder")
    ap.add_argument("--apart", action="append", default=[], metavar="FOLDER:A,B",
                    help="members of FOLDER that never reference each other")
    ap.add_argument("--show", metavar="FOLDER", help="print one folder's member graph")
    args = ap.parse_args()
    if not os.path.isdir(args.src_dir):
        sys.exit(f"callgraph.py: {args.src_dir} is not a folder")
    objs = objects_by_source(args.build_dir, args.src_dir)
    if not objs:
        sys.exit(f"callgraph.py: no object of a source under {args.src_dir} in {args.build_dir}")
    edges = file_graph(objs)
    if args.show is not None:
        folder = args.show.rstrip("/")
        folder = "" if folder == "src" else folder[4:] if folder.startswith("src/") else folder
        graph = member_graph(folder, edges)
        for a in sorted(graph):
            print(a, "->", " ".join(sorted(graph[a])))
        return 0
    bad = 0
    folders = folders_of(objs)
    for folder in folders:
        for comp in circles(member_graph(folder, edges)):
            print(f"circle in {label(folder)}: " + " ".join(comp))
            bad += 1
    for folder, members in parse_apart(args.apart, args.src_dir):
        graph = member_graph(folder, edges)
        for a in members:
            for b in sorted(graph.get(a, ())):
                if b in members:
                    print(f"crossing in {label(folder)}: {a} uses {b} (these folders stay apart)")
                    bad += 1
    print(f"callgraph.py: {len(objs)} files in {len(folders)} folders, {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
