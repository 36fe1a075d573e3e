#!/usr/bin/env bash
# `rubick sim` never silently runs on nothing or on a typo (docs/sim.md, "Exit
# codes"): a trace without jobs fails, an empty item anywhere in a comma list
# is a usage error naming the option and the position, --out makes its
# parents and says where the files went, and the exit codes follow the table
# (1 input, 2 command line).
# Usage: test_cli_sim_input.sh PATH/TO/rubick   (RK_DATA_DIR gives the zoo)
set -uo pipefail
R=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
d=$work
printf 'name,submit_s,gpus,duration_s\na,0,1,100\nb,10,2,200\n' >"$d/t.csv"
sim=(sim --trace "$d/t.csv" --cluster 2x8 --oracle model --no-timing)

# --- a trace without jobs ------------------------------------------------------
printf 'name,submit_s,gpus,duration_s\n' >"$d/empty.csv"
check header-only 1 "$d/empty.csv: no jobs to replay" -- \
	sim --trace "$d/empty.csv" --cluster 2x8 --oracle model --policy fifo
[ -s "$out" ] && fail "header-only printed a result: $(cat "$out")"

# --- empty items: the same rule at every position of every comma list ----------
check pol-trailing 2 "--policy: 'fifo,': item 2 is empty" -- "${sim[@]}" --policy fifo,
check pol-leading 2 "--policy: ',fifo': item 1 is empty" -- "${sim[@]}" --policy ,fifo
check pol-middle 2 "--policy: 'fifo,,sjf': item 2 is empty" -- "${sim[@]}" --policy fifo,,sjf
check pol-bracket 2 "option 2 inside '[...]' is empty" -- "${sim[@]}" --policy 'fifo[placement=spread,]'
check popt-trailing 2 "--policy-options: 'placement=spread,': item 2 is empty" -- \
	"${sim[@]}" --policy fifo --policy-options placement=spread,
check restart-trailing 2 "--restart-cost: '260,': item 2 is empty" -- \
	"${sim[@]}" --policy fifo --restart-cost 260,
check restart-middle 2 "--restart-cost: '260,,bert=10': item 2 is empty" -- \
	"${sim[@]}" --policy fifo --restart-cost 260,,bert=10
check cluster-trailing 1 "--cluster:1:5: empty item after ','" -- \
	sim --trace "$d/t.csv" --cluster 2x8, --oracle model --policy fifo
check cluster-middle 1 "--cluster:1:5: empty item after ','" -- \
	sim --trace "$d/t.csv" --cluster 2x8,,cpus=96 --oracle model --policy fifo
check diurnal-trailing 1 "--inference: item 2 is empty" -- \
	sim --trace "$d/t.csv" --cluster 2x8+1x8,pool=loaned --oracle model --policy aryl \
	--inference diurnal:servers=1,
check good-lists 0 "" -- "${sim[@]}" --policy 'fifo,sjf[placement=spread]' \
	--policy-options placement=consolidated --restart-cost 260,bert=10

# --- --out: parents made, the place said -----------------------------------------
check out-parents 0 "wrote jobs.csv, samples.csv, plans.csv, summary.json, report.html and fig-NAME.svg, fig-NAME.pdf for NAME in bars, jct-cdf, gpu-util, queue, gpu-hours, reconfigs to $d/res/run1/a" -- \
	"${sim[@]}" --policy fifo --out "$d/res/run1/a"
for f in jobs.csv samples.csv summary.json report.html; do
	[ -s "$d/res/run1/a/$f" ] || fail "out-parents: no $f"
done
for n in bars jct-cdf gpu-util queue gpu-hours reconfigs; do
	[ -s "$d/res/run1/a/fig-$n.svg" ] && [ -s "$d/res/run1/a/fig-$n.pdf" ] || fail "out-parents: no fig-$n"
done
grep -q "wrote" "$out" && fail "out-parents: the location went to stdout"
# a figure that cannot be written: its path and the reason, exit 1
mkdir -p "$d/res/figdir/fig-bars.svg"
check out-figure 1 "--out: $d/res/figdir/fig-bars.svg: cannot create: Is a directory" -- \
	"${sim[@]}" --policy fifo --out "$d/res/figdir"
touch "$d/plain"
check out-under-file 1 "--out: cannot create '$d/plain/x/y': '$d/plain' is not a directory" -- \
	"${sim[@]}" --policy fifo --out "$d/plain/x/y"

# --- exit codes: 2 for the command line, 1 for what it names ----------------------
check unknown-policy 2 "unknown policy 'nope'" -- "${sim[@]}" --policy nope
check missing-trace 1 "--trace: $d/none.csv" -- \
	sim --trace "$d/none.csv" --cluster 2x8 --oracle model --policy fifo
"$R" --help >"$out" 2>&1
grep -q "^exit status" "$out" || fail "rubick --help has no exit status table"
"$R" sim --help >"$out" 2>&1
grep -q '^exit status (every command, `rubick --help`): 0 success, 1 ' "$out" ||
	fail "rubick sim --help has no exit status"

[ "$fails" -eq 0 ] || exit 1
echo "cli_sim_input: ok"
