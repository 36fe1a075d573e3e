#!/usr/bin/env python3
"""Copy the guarantees (is_sla) of one Rubick-format trace onto another with the
same job names: e.g. the multi-tenant trace's guaranteed jobs on the best-plan
trace (bp) make a second multi-tenant workload, the same jobs and guarantees
with bp's plans (docs/policies.md, guaranteed jobs).
    usage: scripts/trace-guarantees.py FROM.csv ONTO.csv OUT.csv
"""
import csv
import sys


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    src, onto, out = argv[1:]
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or "is_sla" not in rows[0]:
        sys.stderr.write("trace-guarantees: %s: no is_sla column\n" % src)
        return 1
    sla = {r["name"]: r["is_sla"] for r in rows}
    with open(onto, newline="") as f:
        rd = csv.DictReader(f)
        fields = rd.fieldnames
        rows = list(rd)
    if "is_sla" not in (fields or []):
        sys.stderr.write("trace-guarantees: %s: no is_sla column\n" % onto)
        return 1
    missing = [r["name"] for r in rows if r["name"] not in sla]
    if missing:
        sys.stderr.write("trace-guarantees: %s: job %s is not in %s\n" % (onto, missing[0], src))
        return 1
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            r["is_sla"] = sla[r["name"]]
            w.writerow(r)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
