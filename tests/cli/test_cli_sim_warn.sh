#!/usr/bin/env bash
# `rubick sim` says on stderr when a policy cannot act as named on its input
# (docs/sim.md, "Warnings"): sjf-bsbf/sjf-ffs without --sharing on, antman on
# a trace without guaranteed jobs, a Sia/Pollux workload without
# --job-length sia-target. One line each, once per run (not per seed), never
# on stdout, and none where the policy can act.
# Usage: test_cli_sim_warn.sh PATH/TO/rubick   (RK_DATA_DIR gives the zoo)
set -uo pipefail
R=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
d=$work
python3 - "$d" <<'P'
import sys
d = sys.argv[1]
with open(f"{d}/t.csv", "w") as f:
    print("name,submit_s,gpus,duration_s", file=f)
    for i in range(12):
        print(f"j{i},{i * 30},{[1, 2, 4][i % 3]},{300 + 50 * i}", file=f)
with open(f"{d}/g.csv", "w") as f:
    print("name,submit_s,gpus,duration_s,guaranteed", file=f)
    for i in range(12):
        print(f"j{i},{i * 30},{[1, 2, 4][i % 3]},{300 + 50 * i},{i % 2}", file=f)
with open(f"{d}/sia.csv", "w") as f:
    print("name,time,application,num_replicas,batch_size", file=f)
    for i in range(4):
        print(f"cifar10-{i},{i * 60}.0,cifar10,1,128", file=f)
P
sim=(sim --cluster 2x8 --oracle model --no-timing)
# NAME PHRASE: $err has PHRASE on exactly one line, $out none of it
once() {
	local n
	n=$(grep -cF -- "$2" "$err")
	[ "$n" -eq 1 ] || fail "$1: '$2' on $n stderr lines: $(cat "$err")"
	grep -qF -- "warning" "$out" && fail "$1: a warning on stdout"
}
# NAME: no warning at all
none() { grep -q "warning" "$err" && fail "$1: unexpected warning: $(cat "$err")"; }

check bsbf 0 "" -- "${sim[@]}" --trace "$d/t.csv" --policy sjf,sjf-bsbf,sjf-ffs
once bsbf "warning: sjf-bsbf without --sharing on never shares a GPU"
once ffs "warning: sjf-ffs without --sharing on never shares a GPU"
grep -qF "never shares a GPU: it runs as shortest-job-first without sharing (add --sharing on)" "$err" || fail "bsbf: no fix named"
grep -q "warning: sjf " "$err" && fail "bsbf: sjf warned about"
check bsbf-sharing 0 "" -- "${sim[@]}" --trace "$d/t.csv" --policy sjf-bsbf --sharing on
none bsbf-sharing

check antman 0 "" -- "${sim[@]}" --trace "$d/t.csv" --policy antman,fifo
once antman "warning: antman acts only on guaranteed jobs and $d/t.csv has none: it runs as fifo"
check antman-guaranteed 0 "" -- "${sim[@]}" --trace "$d/g.csv" --policy antman
none antman-guaranteed

# once per run, not per seed
check seeds 0 "" -- "${sim[@]}" --trace "$d/t.csv" --policy antman,sjf-bsbf --seeds 1-3
once seeds-antman "warning: antman acts only on guaranteed jobs"
once seeds-bsbf "warning: sjf-bsbf without --sharing on"

check sia 0 "" -- "${sim[@]}" --trace "$d/sia.csv" --policy fifo
once sia "give no run time and run the reader's estimate"
once sia-fix "(add --job-length sia-target"
check plain 0 "" -- "${sim[@]}" --trace "$d/t.csv" --policy fifo,sjf
none plain

[ "$fails" -eq 0 ] || exit 1
echo "cli_sim_warn: ok"
