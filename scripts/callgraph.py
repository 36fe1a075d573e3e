#!/usr/bin/env python3
"""Who calls whom among a folder's files, from the objects a build made.

    scripts/callgraph.py build/src/daemon/librubickd.a.p 'sched*.o'
    scripts/callgraph.py build/src/librubick_sim.a.p 'sim_engine_*.o'

Prints one line per file (`a.c -> b.c c.c`: a uses a symbol b or c defines)
and exits 1 when the files call each other in a circle, naming each circle.
The developers' guide wants one direction: a core that calls its parts, parts
that do not call back (see the graph in src/daemon/sched/sched_internal.h). It
reads `nm` output only, so it sees calls and data references alike, and not
inline functions (which is why a shared predicate may live in a header).
"""
import collections
import glob
import os
import subprocess
import sys


def graph(objs):
    defs, uses = {}, collections.defaultdict(set)
    for o in objs:
        name = os.path.basename(o)[:-2]
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBR":
                defs[p[2]] = name
            elif len(p) == 2 and p[0] == "U":
                uses[name].add(p[1])
    edges = collections.defaultdict(set)
    for name, syms in uses.items():
        for s in syms:
            if s in defs and defs[s] != name:
                edges[name].add(defs[s])
    return edges


def circles(edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: callgraph.py OBJECT_FOLDER 'GLOB'")
    objs = sorted(glob.glob(os.path.join(sys.argv[1], sys.argv[2])))
    if not objs:
        sys.exit(f"callgraph.py: no object matches {sys.argv[2]} in {sys.argv[1]}")
    edges = graph(objs)
    for a in sorted(edges):
        print(a, "->", " ".join(sorted(edges[a])))
    bad = circles(edges)
    for c in bad:
        print("circle:", " ".join(c))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
