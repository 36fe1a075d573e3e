#!/usr/bin/env bash
# `rubick sim --quota` (docs/references.md §1.7): on a native trace with two
# tenants, the guaranteed submissions over tenant a's quota are rejected at
# arrival (jobs.csv says why, summary.json counts them), every other job
# still completes, and bad quota texts are usage errors naming the flag.
# Usage: test_cli_quota.sh PATH/TO/rubick   (RK_DATA_DIR gives the zoo)
set -uo pipefail
R=$1
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
d=$work

# a: 4 held by a1, a2 asks 8 more (12 > 8: rejected), a3 best effort (not
# counted), a4 asks 4 (4 + 4 <= 8); b has no quota; a5 arrives after a1 and a4
# ended (0 held) and asks 8.
cat >"$d/trace.csv" <<'T'
name,submit_s,gpus,duration_s,model,guaranteed,tenant
a1,0,4,600,gpt2,1,a
a2,10,8,600,gpt2,1,a
a3,20,8,600,gpt2,0,a
a4,30,4,600,gpt2,1,a
b1,40,8,600,gpt2,1,b
a5,100000,8,600,gpt2,1,a
T
for p in fifo rubick; do
	if ! "$R" sim --trace "$d/trace.csv" --cluster 4x8 --policy "$p" --oracle model \
		--quota a:8/b:64 --no-timing --check --out "$d/$p" >"$d/$p.txt" 2>"$d/$p.err"; then
		fail "$p: rc $?: $(cat "$d/$p.err")"
		continue
	fi
	# rejected,reason are the last two columns of jobs.csv
	got=$(awk -F, 'NR > 1 && $17 == 1 { print $3 }' "$d/$p/jobs.csv" | tr '\n' ' ')
	[ "$got" = "a2 " ] || fail "$p: rejected '$got', want 'a2 '"
	grep -qF "a2,gpt2,8,10.000,,,,,0,0,0,0.000,1,0.000,1,\"tenant 'a' guaranteed quota is 8 GPUs; 4 held by active guaranteed jobs, 8 requested\"" \
		"$d/$p/jobs.csv" || fail "$p: a2's reason: $(grep a2 "$d/$p/jobs.csv")"
	done_n=$(awk -F, 'NR > 1 && $13 == 1' "$d/$p/jobs.csv" | wc -l)
	[ "$done_n" -eq 5 ] || fail "$p: $done_n jobs completed, want 5"
	python3 - "$d/$p/summary.json" <<'PY' || fail "$p: summary.json"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["rejected"] == 1 and r["completed"] == 5 and r["guaranteed"] == 5, r
assert r["unfinished"] == 0 and r["never_started"] == 0, r
PY
	# the table's last columns are `rejected` and `sla_preempt` (none preempted here)
	[ "$(awk 'NR == 3 { print $(NF - 1), $NF }' "$d/$p.txt")" = "1 0/5" ] || fail "$p: table: $(cat "$d/$p.txt")"
done

for bad in "a" "a:x" ":3" "a:1/a:2" "a:-1" "a:1/"; do
	"$R" sim --trace "$d/trace.csv" --cluster 4x8 --policy fifo --oracle model \
		--quota "$bad" >/dev/null 2>"$d/err"
	rc=$?
	[ "$rc" -eq 2 ] && grep -qF -- "--quota" "$d/err" || fail "--quota '$bad': rc $rc, $(cat "$d/err")"
done
[ "$fails" -eq 0 ] && echo "ok" || exit 1
