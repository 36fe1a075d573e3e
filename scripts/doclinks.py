#!/usr/bin/env python3
"""The docs stay inside the repository: what a clone reads, a clone has.

    doclinks.py SOURCE_DIR

Reads README.md, every file under docs/ (docs/rubickd.8 included) and fails,
naming file:line, on
  - a reference to notes outside the repository: `../shared`, `/work/`,
    `shared/research`, `algorithms.md`, `peer_results.md`, the Slurm research
    note cited by section (`slurm.md §3`, where no `docs/` precedes it);
  - a relative markdown link `[text](path)` that resolves outside the
    repository root, or to a file or folder that does not exist;
  - a path written as `docs/NAME.md` (or `docs/dev/...`, a man page `docs/NAME.N`) in
    running text that does not exist;
  - a file under docs/ that docs/README.md (the index) does not link.
Links with a scheme (https:, mailto:) and pure #anchors are not checked.
Exit 0 when clean, 1 with one line per problem otherwise.
"""
import os
import re
import sys

FORBIDDEN = [
    ("../shared", "points into ../shared, which a clone does not have"),
    ("/work/", "an absolute path of one machine"),
    ("shared/research", "cites the research notes outside the repository"),
    ("algorithms.md", "cites algorithms.md, a note outside the repository"),
    ("peer_results.md", "cites peer_results.md, a note outside the repository"),
]
# The research note on Slurm (not docs/slurm.md) was cited by section: "slurm.md §3".
RESEARCH_SLURM = re.compile(r"(?<![\w/])slurm\.md\s*§")
MD_LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
DOCS_PATH = re.compile(r"(?<![\w./-])(docs/[\w./-]*\w\.(?:md|[1-8]))\b")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def doc_files(root):
    files = []
    if os.path.isfile(os.path.join(root, "README.md")):
        files.append("README.md")
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, "docs")):
        dirnames.sort()
        for name in sorted(filenames):
            files.append(os.path.relpath(os.path.join(dirpath, name), root))
    return files


def inside(root, path):
    root = os.path.realpath(root)
    path = os.path.realpath(path)
    return path == root or path.startswith(root + os.sep)


def check_file(root, rel, problems):
    path = os.path.join(root, rel)
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except (OSError, UnicodeDecodeError) as e:
        problems.append(f"{rel}: cannot read: {e}")
        return set()
    base = os.path.dirname(path)
    targets = set()
    for no, line in enumerate(lines, 1):
        for needle, why in FORBIDDEN:
            if needle in line:
                problems.append(f"{rel}:{no}: {why}: {line.strip()}")
        if RESEARCH_SLURM.search(line):
            problems.append(f"{rel}:{no}: cites the Slurm research note outside the repository "
                            f"by section: {line.strip()}")
        if rel.endswith(".md"):
            for m in MD_LINK.finditer(line):
                link = m.group(1)
                if SCHEME.match(link) or link.startswith("#"):
                    continue
                target = link.split("#", 1)[0]
                full = os.path.normpath(os.path.join(base, target))
                if not inside(root, full):
                    problems.append(f"{rel}:{no}: link '{link}' resolves outside the repository")
                elif not os.path.exists(full):
                    problems.append(f"{rel}:{no}: link '{link}' names a file that does not exist")
                else:
                    targets.add(os.path.relpath(os.path.realpath(full), os.path.realpath(root)))
        for m in DOCS_PATH.finditer(line):
            if not os.path.exists(os.path.join(root, m.group(1))):
                problems.append(f"{rel}:{no}: '{m.group(1)}' does not exist")
    return targets


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: doclinks.py SOURCE_DIR (the repository root)", file=sys.stderr)
        return 2
    root = argv[1]
    problems = []
    linked = {}
    files = doc_files(root)
    for rel in files:
        linked[rel] = check_file(root, rel, problems)
    index = os.path.join("docs", "README.md")
    if index not in linked:
        problems.append("docs/README.md: missing: the docs need an index of every doc")
    else:
        for rel in files:
            if rel.startswith("docs" + os.sep) and rel != index and rel not in linked[index]:
                problems.append(f"docs/README.md: does not list {rel}")
    problems = list(dict.fromkeys(problems))  # a path both linked and written: once
    for p in problems:
        print(p)
    if problems:
        print(f"doclinks: {len(problems)} problem(s) in {len(files)} docs")
        return 1
    print(f"doclinks: {len(files)} docs, no link leaves the repository or dangles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
