#!/usr/bin/env bash
# One golden simulator case: run `rubick sim` on CASE/trace.csv (native format) with the
# flags in CASE/args and the measured tables in CASE/oracle, in check mode, and compare
# the JSON summary, the table, jobs.csv and samples.csv byte for byte with CASE/expected.*.
# Also runs the case twice and requires identical bytes (report.html and the six
# fig-*.svg and fig-*.pdf included).
# usage: run_golden.sh RUBICK CASE_DIR [--regen]   (--regen rewrites CASE/expected.*)
set -euo pipefail
rubick=$(realpath "$1")
case_dir=$2
regen=${3:-}
cd "$case_dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
read -r -a args <args
# summary.json and report.html carry the run's UTC time, the PDFs their creation date
# (figure.h): pinned (reproducible-builds' convention), so two runs give the same bytes.
export SOURCE_DATE_EPOCH=1700000000
run() { # OUTDIR (both runs write to one --out path, moved after: summary.json and
	# report.html record the command line, which must not differ between them)
	"$rubick" sim --trace trace.csv --oracle measured=oracle "${args[@]}" --no-timing --check \
		--json --out "$tmp/out" >"$1.json"
	mv "$tmp/out" "$1"
	"$rubick" sim --trace trace.csv --oracle measured=oracle "${args[@]}" --no-timing \
		>"$1.table"
}
run "$tmp/a"
run "$tmp/b"
figs=()
for fig in "$tmp"/a/fig-*.svg "$tmp"/a/fig-*.pdf; do figs+=("/${fig##*/}"); done
[ "${#figs[@]}" -eq 12 ] || { echo "$case_dir: ${#figs[@]} fig-* files written, not 12" >&2; exit 1; }
for f in .json .table /jobs.csv /samples.csv /summary.json /report.html "${figs[@]}"; do
	cmp -s "$tmp/a$f" "$tmp/b$f" || {
		echo "$case_dir: a$f differs between two identical runs" >&2
		exit 1
	}
done
declare -A expected=([expected.json]=a.json [expected_table.txt]=a.table
	[expected_jobs.csv]=a/jobs.csv [expected_samples.csv]=a/samples.csv)
status=0
for want in expected.json expected_table.txt expected_jobs.csv expected_samples.csv; do
	got=$tmp/${expected[$want]}
	if [ "$regen" = --regen ]; then
		cp "$got" "$want"
	elif ! cmp -s "$got" "$want"; then
		echo "$case_dir: output differs from $want:" >&2
		diff -u "$want" "$got" >&2 || true
		status=1
	fi
done
exit $status
